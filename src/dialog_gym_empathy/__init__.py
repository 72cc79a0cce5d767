"""The verifiers environment `dialog-gym-empathy`: dialog-gym's emotional-support dialogue.

verifiers finds an environment by importing its id as a module (``vf-eval dialog-gym-empathy``
imports ``dialog_gym_empathy``) and takes the taskset, env and harness classes it exports.
They live in `dialog_gym.integrations.verifiers`; see there for the options and rewards.
Needs ``pip install "dialog-gym[verifiers]"``.
"""

from dialog_gym.integrations.verifiers import (
    EmpathyData,
    EmpathyEnv,
    EmpathyEnvConfig,
    EmpathyTask,
    EmpathyTaskset,
    EmpathyTasksetConfig,
    SupporterChat,
    SupporterChatConfig,
    load_environment,
)

__all__ = [
    "EmpathyData",
    "EmpathyEnv",
    "EmpathyEnvConfig",
    "EmpathyTask",
    "EmpathyTaskset",
    "EmpathyTasksetConfig",
    "SupporterChat",
    "SupporterChatConfig",
    "load_environment",
]
