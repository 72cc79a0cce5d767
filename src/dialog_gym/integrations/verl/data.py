"""The rows of the parquet files verl's `RLHFDataset` reads (`examples/verl/prepare_data.py`)."""

from __future__ import annotations

from typing import Any

from dialog_gym.personas import Persona
from dialog_gym.session import agent_system_prompt

INTERACTION_NAME = "dialog_gym"
AGENT_LOOP_NAME = "dialog_gym"
DATA_SOURCE = "dialog_gym/empathy"


def dataset_row(
    persona: Persona,
    seed: int,
    opening: str,
    *,
    index: int,
    split: str,
    rules: str = "rlver",
    think: bool = False,
    system_prompt: str | None = None,
    agent_name: str = AGENT_LOOP_NAME,
    interaction_name: str = INTERACTION_NAME,
) -> dict[str, Any]:
    """One row of the parquet file verl's `RLHFDataset` reads.

    The prompt holds what the agent sees (system prompt, opening line); the hidden need
    never enters it. `agent_name` picks verl's agent loop: ``"dialog_gym"`` (verl 0.9.x,
    `DialogGymAgentLoop` as registered in ``examples/verl/agent_loop.yaml``) or
    ``"tool_agent"`` (verl 0.7, the loop that calls `DialogGymInteraction`).
    `reward_model.ground_truth` is the persona id (verl requires the key).
    """
    return {
        "data_source": DATA_SOURCE,
        "prompt": [
            {"role": "system", "content": system_prompt or agent_system_prompt(persona.language, think)},
            {"role": "user", "content": opening},
        ],
        "ability": "emotional_support",
        "agent_name": agent_name,
        "reward_model": {"style": "rule", "ground_truth": persona.id},
        "extra_info": {
            "split": split,
            "index": int(index),
            "interaction_kwargs": {
                "name": interaction_name,
                "persona_id": persona.id,
                "seed": int(seed),
                "rules": rules,
            },
        },
    }
