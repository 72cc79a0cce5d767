"""Benchmark metrics over episode records, with bootstrap confidence intervals.

The SAGE ("Sentient") score is the mean final mood; a *success* ends at mood 100, a
*failure* below 10. Intervals are percentile bootstrap intervals that resample
**personas** (with all their episodes) rather than single episodes: with `--seeds K` the
K runs of one persona are correlated, and resampling them as a block keeps the interval
honest. With one episode per persona this is the ordinary bootstrap.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dialog_gym.episodes.record import Episode

SUCCESS_MOOD = 100
FAILURE_BELOW = 10
DEFAULT_RESAMPLES = 2000


def bootstrap_mean_ci(
    values: Sequence[float],
    clusters: Sequence[Any] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `values`.

    With `clusters` (one label per value), whole clusters are resampled and the mean is
    the ratio of resampled sums to resampled counts. Returns `(nan, nan)` for no values;
    a single cluster gives a zero-width interval.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (math.nan, math.nan)
    labels = list(range(len(x))) if clusters is None else list(clusters)
    if len(labels) != len(x):
        raise ValueError(f"{len(labels)} cluster labels for {len(x)} values")
    index = {label: i for i, label in enumerate(dict.fromkeys(labels))}
    codes = np.array([index[label] for label in labels])
    sums = np.bincount(codes, weights=x, minlength=len(index))
    counts = np.bincount(codes, minlength=len(index)).astype(float)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(index), size=(n_resamples, len(index)))
    means = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return (float(low), float(high))


def _stat(values: Sequence[float], clusters: Sequence[Any], **ci: Any) -> dict[str, Any]:
    mean = float(np.mean(values)) if len(values) else math.nan
    low, high = bootstrap_mean_ci(values, clusters, **ci)
    return {"mean": mean, "ci95": [low, high]}


def _group_summary(episodes: Sequence[Episode], **ci: Any) -> dict[str, Any]:
    moods = [float(ep.final_mood) for ep in episodes]
    personas = [ep.persona_id for ep in episodes]
    return {
        "n": len(episodes),
        "score": _stat(moods, personas, **ci),
        "success": sum(ep.final_mood >= SUCCESS_MOOD for ep in episodes),
        "failure": sum(ep.final_mood < FAILURE_BELOW for ep in episodes),
    }


def _by(episodes: Sequence[Episode], key: Callable[[Episode], str], **ci: Any) -> dict[str, Any]:
    groups: dict[str, list[Episode]] = defaultdict(list)
    for ep in episodes:
        groups[key(ep)].append(ep)
    return {name: _group_summary(groups[name], **ci) for name in sorted(groups)}


def summarize(
    episodes: Sequence[Episode],
    *,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Any]:
    """The benchmark summary of a run (what `summary.json` holds).

    Keys: `episodes`, `personas`, `score` (mean final mood, with `ci95`), `success` /
    `failure` (counts, `rate`, `rate_ci95`), `mean_turns`, `mean_reward`,
    `terminal_reasons`, `simulator_errors`, `by_hidden_need`, `by_character_type`,
    `by_language` (n, score, success, failure each), and `usage` (simulator tokens and
    calls; the agent's where the agent reports them).
    """
    ci = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
    moods = [float(ep.final_mood) for ep in episodes]
    personas = [ep.persona_id for ep in episodes]
    succ = [float(ep.final_mood >= SUCCESS_MOOD) for ep in episodes]
    fail = [float(ep.final_mood < FAILURE_BELOW) for ep in episodes]
    turns = [float(ep.num_turns) for ep in episodes]
    sim_usage: Counter[str] = Counter()
    agent_usage: Counter[str] = Counter()
    for ep in episodes:
        sim_usage.update({k: int(v) for k, v in ep.usage.items()})
        agent_usage.update({k: int(v) for k, v in (ep.agent.get("usage") or {}).items()})
    score = _stat(moods, personas, **ci)
    turn_stat = _stat(turns, personas, **ci)
    success_ci = bootstrap_mean_ci(succ, personas, **ci)
    failure_ci = bootstrap_mean_ci(fail, personas, **ci)
    return {
        "episodes": len(episodes),
        "personas": len(set(personas)),
        "confidence": confidence,
        "bootstrap": {"resamples": n_resamples, "unit": "persona", "seed": seed},
        "score": score,
        "success": {"count": int(sum(succ)), "rate": float(np.mean(succ)) if succ else math.nan, "rate_ci95": list(success_ci)},
        "failure": {"count": int(sum(fail)), "rate": float(np.mean(fail)) if fail else math.nan, "rate_ci95": list(failure_ci)},
        "mean_turns": turn_stat,
        "mean_reward": float(np.mean([ep.reward for ep in episodes])) if episodes else math.nan,
        "terminal_reasons": dict(sorted(Counter(str(ep.terminal_reason) for ep in episodes).items())),
        "simulator_errors": sum(ep.terminal_reason == "simulator_error" for ep in episodes),
        "by_hidden_need": _by(episodes, lambda ep: ep.hidden_need, **ci),
        "by_character_type": _by(episodes, lambda ep: ep.character_type, **ci),
        "by_language": _by(episodes, lambda ep: ep.language, **ci),
        "usage": {"simulator": dict(sim_usage), "agent": dict(agent_usage)},
    }
