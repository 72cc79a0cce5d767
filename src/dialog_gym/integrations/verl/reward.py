"""The reward of a verl dialogue from its turn scores (no verl import needed)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from dialog_gym.mood import MoodRules, get_rules


def final_reward(turn_scores: Sequence[float], rules: str | MoodRules = "rlver") -> float:
    """Final mood / 100 from a dialogue's turn scores (applied deltas / 100).

    0.0 when a turn score is NaN (the simulator failed: no invented reward).
    """
    scores = [float(s) for s in turn_scores]
    if any(math.isnan(s) for s in scores):
        return 0.0
    rules = get_rules(rules)
    mood = rules.start + round(100 * sum(scores))
    return rules.reward(min(rules.cap, max(rules.floor, mood)))


def compute_score(
    data_source: str | None = None,
    solution_str: str | None = None,
    ground_truth: Any = None,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> float:
    """verl's custom reward function: the final mood / 100 of the dialogue.

    Reads ``extra_info["turn_scores"]`` (the agent loop's turn scores, which verl's reward
    manager merges into ``extra_info``) and the preset from
    ``extra_info["interaction_kwargs"]["rules"]`` (default rlver). Other keyword arguments
    verl passes are accepted and not used.
    """
    extra_info = extra_info or {}
    if "turn_scores" not in extra_info:
        raise KeyError(
            "extra_info has no 'turn_scores': roll out with the dialog_gym agent loop (verl 0.9.x: "
            "actor_rollout_ref.rollout.agent.agent_loop_config_path=examples/verl/agent_loop.yaml) or the "
            "dialog_gym interaction (verl 0.7: actor_rollout_ref.rollout.multi_turn.interaction_config_path=...)"
        )
    turn_scores = extra_info["turn_scores"]
    turn_scores = [] if turn_scores is None else list(turn_scores)
    rules = (extra_info.get("interaction_kwargs") or {}).get("rules", "rlver")
    return final_reward(turn_scores, rules)
