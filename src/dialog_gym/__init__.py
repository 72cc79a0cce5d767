"""dialog-gym: multi-turn emotional-support dialogue as a reinforcement-learning environment.

Importing the package registers the environments with Gymnasium::

    import gymnasium as gym, dialog_gym
    env = gym.make("RLVER-Empathy-v2")

The entry points are exported here: the envs, `DialogConfig` and `DialogSession` (the
dialogue core), `rollout` (many episodes against an agent), `evaluate` (a benchmark run),
`Episode` records with `replay` and `rescore`, personas, mood rules and simulators.
Layers, bottom-up: core (`types`, `mood`, ...), `personas`, `backends`; `simulators`;
`session`; `envs`; `episodes`, `rollouts`, `eval`, `cli`, `multiagent`, `integrations`.
This module is the one place that wires a higher layer into a lower one: it registers
the replay simulator (built from episode records) under the name `"replay"`.
"""

from dialog_gym._version import __version__
from dialog_gym.envs import EmpathyDialogEnv, EmpathyVectorEnv, UnicodeText
from dialog_gym.envs.registration import register_envs
from dialog_gym.episodes import Episode
from dialog_gym.episodes.replay import REPLAY_OPTIONS, ReplaySimulator, areplay, replay
from dialog_gym.episodes.rescore import arescore, rescore
from dialog_gym.eval import aevaluate, evaluate
from dialog_gym.mood import PRESETS, RLVER, SAGE, MoodRules, mood_bucket
from dialog_gym.personas import CharacterType, HiddenNeed, Persona, PersonaSet
from dialog_gym.rollouts import AgentRequest, arollout, rollout
from dialog_gym.session import DialogConfig, DialogSession
from dialog_gym.simulators import (
    Appraisal,
    Response,
    RuleSimulator,
    Simulator,
    SimulatorError,
    make_simulator,
    register_simulator,
)

register_simulator("replay", ReplaySimulator.from_file, options=REPLAY_OPTIONS)
ENV_IDS: tuple[str, ...] = tuple(register_envs())

__all__ = [
    "ENV_IDS",
    "PRESETS",
    "RLVER",
    "SAGE",
    "AgentRequest",
    "Appraisal",
    "CharacterType",
    "DialogConfig",
    "DialogSession",
    "EmpathyDialogEnv",
    "EmpathyVectorEnv",
    "Episode",
    "HiddenNeed",
    "MoodRules",
    "Persona",
    "PersonaSet",
    "ReplaySimulator",
    "Response",
    "RuleSimulator",
    "Simulator",
    "SimulatorError",
    "UnicodeText",
    "__version__",
    "aevaluate",
    "areplay",
    "arescore",
    "arollout",
    "evaluate",
    "make_simulator",
    "mood_bucket",
    "register_simulator",
    "replay",
    "rescore",
    "rollout",
]
