"""Gymnasium environments: the single-agent and vector dialogue envs and their text space."""

from dialog_gym.envs.empathy import EmpathyDialogEnv
from dialog_gym.envs.spaces import UnicodeText
from dialog_gym.envs.vector import EmpathyVectorEnv

__all__ = ["EmpathyDialogEnv", "EmpathyVectorEnv", "UnicodeText"]
