"""dialog-gym: multi-turn emotional-support dialogue as a reinforcement-learning environment.

Importing the package registers the environments with Gymnasium::

    import gymnasium as gym, dialog_gym
    env = gym.make("RLVER-Empathy-v0")
"""

from dialog_gym._version import __version__
from dialog_gym.envs import EmpathyDialogEnv, EmpathyVectorEnv, UnicodeText
from dialog_gym.envs.registration import register_envs
from dialog_gym.mood import PRESETS, RLVER, SAGE, MoodRules, mood_bucket
from dialog_gym.personas import CharacterType, HiddenNeed, Persona, PersonaSet
from dialog_gym.session import DialogConfig, DialogSession
from dialog_gym.simulators import Reaction, RuleSimulator, Simulator, SimulatorError, make_simulator

ENV_IDS: tuple[str, ...] = tuple(register_envs())

__all__ = [
    "ENV_IDS",
    "PRESETS",
    "RLVER",
    "SAGE",
    "CharacterType",
    "DialogConfig",
    "DialogSession",
    "EmpathyDialogEnv",
    "EmpathyVectorEnv",
    "HiddenNeed",
    "MoodRules",
    "Persona",
    "PersonaSet",
    "Reaction",
    "RuleSimulator",
    "Simulator",
    "SimulatorError",
    "UnicodeText",
    "__version__",
    "make_simulator",
    "mood_bucket",
]
