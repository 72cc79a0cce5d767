"""dialog-gym: multi-turn emotional-support dialogue as a reinforcement-learning environment.

Importing the package registers the environments with Gymnasium::

    import gymnasium as gym, dialog_gym
    env = gym.make("RLVER-Empathy-v2")

What a user needs is exported here: the envs; `DialogConfig` (the set-up every entry point
takes) and `DialogSession` (the dialogue core); `rollout` (many episodes against an agent),
`evaluate` (a benchmark run), `Episode` records with `replay` and `rescore`; personas, mood
rules, the reply guard and the simulators. The rest lives in its module, the async twins
included (`dialog_gym.rollouts.arollout`, `dialog_gym.eval.aevaluate`,
`dialog_gym.episodes.replay.areplay`, `dialog_gym.episodes.rescore.arescore`), as do the
registries a new simulator, backend, preset or agent is added to (docs/concepts.md,
"Extending").

Layers, bottom-up: core (`types`, `mood`, ...), `personas`, `backends`; `simulators`;
`session`; `envs`; `episodes`; `rollouts`, `multiagent`, `integrations`; `eval`; `cli`.
This module is the one place that wires a higher layer into a lower one: it registers
the replay simulator (built from episode records) under the name `"replay"`.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from dialog_gym._version import __version__
from dialog_gym.envs import EmpathyDialogEnv, EmpathyVectorEnv
from dialog_gym.envs.registration import register_envs
from dialog_gym.episodes import Episode
from dialog_gym.episodes.replay import REPLAY_OPTIONS, ReplaySimulator, replay
from dialog_gym.episodes.rescore import rescore
from dialog_gym.eval import evaluate
from dialog_gym.mood import MoodRules
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.rollouts import AgentRequest, rollout
from dialog_gym.session import DialogConfig, DialogSession
from dialog_gym.simulators import CalibratedSimulator, RuleSimulator, Simulator, make_simulator, register_simulator
from dialog_gym.text_guard import ReplyGuard

register_simulator(
    "replay", ReplaySimulator.from_file, options=REPLAY_OPTIONS, settings={"path": "path"}, required=("path",),
    description="recorded reactions, byte for byte (a run folder or episodes file)",
)
ENV_IDS: tuple[str, ...] = tuple(register_envs())
del REPLAY_OPTIONS, ReplaySimulator, register_envs, register_simulator

__all__ = [
    "ENV_IDS",
    "AgentRequest",
    "CalibratedSimulator",
    "DialogConfig",
    "DialogSession",
    "EmpathyDialogEnv",
    "EmpathyVectorEnv",
    "Episode",
    "MoodRules",
    "Persona",
    "PersonaSet",
    "ReplyGuard",
    "RuleSimulator",
    "Simulator",
    "__version__",
    "evaluate",
    "make_simulator",
    "replay",
    "rescore",
    "rollout",
]

# Names this module exported before its surface was trimmed: still importable from here,
# with a DeprecationWarning that says where they live.
_MOVED = {
    "PRESETS": "dialog_gym.mood",
    "RLVER": "dialog_gym.mood",
    "SAGE": "dialog_gym.mood",
    "mood_bucket": "dialog_gym.mood",
    "Appraisal": "dialog_gym.simulators",
    "Response": "dialog_gym.simulators",
    "SimulatorError": "dialog_gym.simulators",
    "register_simulator": "dialog_gym.simulators",
    "CharacterType": "dialog_gym.personas",
    "HiddenNeed": "dialog_gym.personas",
    "ReplaySimulator": "dialog_gym.episodes.replay",
    "areplay": "dialog_gym.episodes.replay",
    "arescore": "dialog_gym.episodes.rescore",
    "aevaluate": "dialog_gym.eval",
    "arollout": "dialog_gym.rollouts",
    "UnicodeText": "dialog_gym.envs",
}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        module = _MOVED[name]
        warnings.warn(f"dialog_gym.{name} is deprecated: import it from {module}", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'dialog_gym' has no attribute {name!r}")
