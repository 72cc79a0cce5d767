"""Gymnasium environments: the single and vector dialogue envs, their session core, text spaces."""

from dialog_gym.envs.empathy import EmpathyDialogEnv
from dialog_gym.envs.session import DialogSession, StepOutcome, TurnRecord, parse_think
from dialog_gym.envs.spaces import UnicodeText
from dialog_gym.envs.vector import EmpathyVectorEnv

__all__ = ["DialogSession", "EmpathyDialogEnv", "EmpathyVectorEnv", "StepOutcome", "TurnRecord", "UnicodeText", "parse_think"]
