"""Gymnasium environments: the single dialogue env, its session core and text spaces."""

from dialog_gym.envs.empathy import EmpathyDialogEnv
from dialog_gym.envs.session import DialogSession, StepOutcome, TurnRecord, parse_think
from dialog_gym.envs.spaces import UnicodeText

__all__ = ["DialogSession", "EmpathyDialogEnv", "StepOutcome", "TurnRecord", "UnicodeText", "parse_think"]
