"""Multi-agent (PettingZoo) dialogue: the supporter and the seeker as two agents.

    from dialog_gym.multiagent import empathy_v0
    env = empathy_v0.env()               # AEC API
    par = empathy_v0.parallel_env()      # parallel API (turn-based)

Requires `pettingzoo` (`pip install dialog-gym[multiagent]`).
"""

from dialog_gym.multiagent import empathy_v0
from dialog_gym.multiagent.duet import ROLES, SEEKER_REWARDS, Duet, SeekerView
from dialog_gym.multiagent.empathy_v0 import ParallelEmpathyEnv, env, parallel_env, raw_env
from dialog_gym.multiagent.prompts import persona_card, seeker_system_prompt
from dialog_gym.multiagent.voice import SeekerVoice

__all__ = [
    "ROLES",
    "SEEKER_REWARDS",
    "Duet",
    "ParallelEmpathyEnv",
    "SeekerView",
    "SeekerVoice",
    "empathy_v0",
    "env",
    "parallel_env",
    "persona_card",
    "raw_env",
    "seeker_system_prompt",
]
