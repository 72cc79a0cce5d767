"""dialog-gym inside verl's multi-turn rollout: the simulated user of a verl training run.

verl (https://github.com/volcengine/verl; RLVER itself is a verl fork) trains on many
machines over Ray. Where a simulated user plugs into its rollout depends on the release:

- **verl 0.9.x (from 0.9.1): an agent loop.** verl 0.8 deleted its interaction API
  (`verl.interactions`); a multi-turn rollout is now an `AgentLoopBase` subclass, registered
  by name in the YAML file named by ``actor_rollout_ref.rollout.agent.agent_loop_config_path``
  and picked per dataset row by the row's ``agent_name``. `DialogGymAgentLoop`
  (`dialog_gym.integrations.verl.agent_loop`) plays a whole dialogue: the policy's turn
  comes from verl's LLM server (token in, token out), the simulated user's answer is
  appended as context tokens (response mask 0), and the final mood / 100 is the
  trajectory's ``reward_score``, which verl writes into ``rm_scores`` (no reward function
  needed). Every rollout of a worker runs concurrently on its event loop, so an LLM
  simulator's requests are concurrent too (bounded by its backend's ``max_concurrency``).
  verl 0.8.0 and 0.9.0 tokenize turns another way and are not supported.
- **verl 0.7.x: an interaction.** `DialogGymInteraction`
  (`dialog_gym.integrations.verl.interaction`) subclasses
  `verl.interactions.base.BaseInteraction`; verl's tool agent loop asks it for the user's
  answer after each policy turn and hands its turn scores to `compute_score`.

Both drive every dialogue through `DialogSession`, the core of the gym env, set up by the
same `VerlDialogs` (`dialog_gym.integrations.verl.dialogs`: a `DialogConfig` from the
adapter's config block, the personas, the dialogue of a dataset row), and read the episode
from the dataset row (`dataset_row`, written by ``examples/verl/prepare_data.py``):
``extra_info.interaction_kwargs = {"name": "dialog_gym", "persona_id": ..., "seed": ...,
"rules": "rlver"}``. The row's prompt already holds the agent system prompt and the
simulated user's opening line; the dialogue starts from it.

Turn scores: each turn's score is the applied emotion delta / 100 (after the preset's clamp
and the 0-100 bounds), so ``start / 100 + sum(turn_scores)`` is the final mood / 100, the
RLVER reward. `compute_score` (``reward.custom_reward_function.path=
pkg://dialog_gym.integrations.verl``, ``name=compute_score``) turns them into the reward
wherever verl hands them to a reward function as ``extra_info["turn_scores"]``. A simulator
failure ends the dialogue with a NaN turn score and a reward of 0.0, as
`DialogSession.reward` gives.

This package imports no verl: the reward, the dataset rows and the set-up work without it,
and the two adapter classes (whose modules import verl) load on first access.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from dialog_gym.integrations.verl.data import AGENT_LOOP_NAME, DATA_SOURCE, INTERACTION_NAME, dataset_row
from dialog_gym.integrations.verl.reward import compute_score, final_reward

if TYPE_CHECKING:
    from dialog_gym.integrations.verl.agent_loop import DialogGymAgentLoop
    from dialog_gym.integrations.verl.interaction import DialogGymInteraction

__all__ = [
    "AGENT_LOOP_NAME",
    "DATA_SOURCE",
    "INTERACTION_NAME",
    "DialogGymAgentLoop",
    "DialogGymInteraction",
    "compute_score",
    "dataset_row",
    "final_reward",
]

# The adapter classes and the modules that hold them (each imports verl).
_ADAPTERS = {
    "DialogGymAgentLoop": "dialog_gym.integrations.verl.agent_loop",
    "DialogGymInteraction": "dialog_gym.integrations.verl.interaction",
}


def __getattr__(name: str) -> Any:
    """`dialog_gym.integrations.verl.DialogGymAgentLoop` (the name verl configs use) imports
    its module, and verl with it, on first access."""
    if name in _ADAPTERS:
        return getattr(importlib.import_module(_ADAPTERS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
