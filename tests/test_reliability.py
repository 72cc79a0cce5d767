"""Faults that used to get through (issue 23), one test each: every one failed before its fix.

Surrogates from servers and agents, a server that dribbles its body, a vector step that
half-applied, replies that slipped past the cap, hostile judge and episode files, deep
nesting, unbounded caches, resume without run.json, fence variants, the report's numbers,
copying envs, and the retries of a turn that gives up.
"""

from __future__ import annotations

import copy
import json
import pickle
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import dialog_gym  # noqa: F401  (registers the envs)
from dialog_gym.text_guard import UnencodableTextError


# -- 3: a vector step is all or nothing -----------------------------------------------------
def test_a_vector_step_with_one_bad_action_moves_no_sub_env():
    venv = gym.make_vec("RLVER-Empathy-v1", num_envs=4, vectorization_mode="vector_entry_point", language="en")
    venv.reset(seed=0)
    good = "That sounds exhausting. What happened?"
    with pytest.raises(UnencodableTextError, match=r"actions\[2\] \(sub-env 2\)"):
        venv.step([good, good, "half an emoji \ud83d", good])
    assert [s.turn for s in venv.unwrapped.sessions] == [0, 0, 0, 0]
    with pytest.raises(TypeError, match=r"actions\[3\] must be a str \(the reply of sub-env 3\)"):
        venv.step([good, good, good, 42])
    assert [s.turn for s in venv.unwrapped.sessions] == [0, 0, 0, 0]
    venv.step([good] * 4)
    assert [s.turn for s in venv.unwrapped.sessions] == [1, 1, 1, 1]
    venv.close()
