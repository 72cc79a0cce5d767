"""Attacks on recorded dialogues (SAGE files): does the judge read the conversation, and does
it treat length as the recorded judge did?

- `context_swap`: every sampled recorded reply is scored in its own dialogue and in a
  foreign one (another dialogue, the same turn); a judge that reads the conversation scores
  it higher at home.
- `length_curve`: the mean change by reply length, recorded and re-scored, both measured
  within each agent model (the model's mean removed), because in SAGE length and author are
  confounded: the shortest replies are mostly one model's, and that model is rated low.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dialog_gym.redteam.play import Judged, appraised_changes
from dialog_gym.simulators import Simulator
from dialog_gym.simulators.judge_fit import JudgeSample

LENGTH_BINS = ((0, 50), (50, 100), (100, 150), (150, 200), (200, 300), (300, 500), (500, None))


def words(text: str) -> float:
    """Length in English-word equivalents (a Chinese character is 1 / 1.7 of a word)."""
    return len(re.findall(r"[\u3400-\u9fff]", text)) / 1.7 + len(re.findall(r"[A-Za-z]+(?:'[a-z]+)?", text))


@dataclass(frozen=True)
class SwapResult:
    own: np.ndarray
    foreign: np.ndarray

    @property
    def share_higher_at_home(self) -> float:
        """Share of replies scored higher in their own dialogue (ties count half)."""
        return float(np.mean((self.own > self.foreign) + 0.5 * (self.own == self.foreign)))

    @property
    def mean_difference(self) -> float:
        return float(np.mean(self.own - self.foreign))


def context_swap(samples: Sequence[JudgeSample], simulator: Simulator, *, rng: np.random.Generator, n: int = 600) -> SwapResult:
    """Score `n` recorded replies (drawn with `rng`) in their own and in a foreign dialogue."""
    by_turn: dict[int, list[int]] = defaultdict(list)
    turns = [sum(1 for m in s.history if m["role"] == "assistant") for s in samples]
    for i, t in enumerate(turns):
        by_turn[t].append(i)
    own, foreign = [], []
    for i in rng.choice(len(samples), size=min(n, len(samples)), replace=False):
        s = samples[int(i)]
        hosts = [j for j in by_turn[turns[int(i)]] if samples[j].dialogue != s.dialogue or samples[j].group != s.group]
        host = samples[hosts[int(rng.integers(len(hosts)))]]
        own.append(Judged(s.persona, s.history, s.reply))
        foreign.append(Judged(host.persona, host.history, s.reply))
    changes = appraised_changes(own + foreign, simulator, precise=True)
    return SwapResult(changes[: len(own)], changes[len(own) :])


@dataclass(frozen=True)
class LengthCurve:
    """Mean change per `LENGTH_BINS` bin (within-model), recorded and judged, and counts."""

    recorded: tuple[float, ...]
    judged: tuple[float, ...]
    counts: tuple[int, ...]

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(f"{lo}-{hi}" if hi else f"{lo}+" for lo, hi in LENGTH_BINS)


def length_curve(samples: Sequence[JudgeSample], simulator: Simulator) -> LengthCurve:
    judged = appraised_changes([Judged(s.persona, s.history, s.reply) for s in samples], simulator, precise=True)
    recorded = np.array([s.change for s in samples], dtype=float)
    groups = np.array([s.group for s in samples])
    for values in (recorded, judged):
        for g in set(groups):
            values[groups == g] -= values[groups == g].mean()
    length = np.array([words(s.reply) for s in samples])
    rows: tuple[list[float], list[float], list[int]] = ([], [], [])
    for lo, hi in LENGTH_BINS:
        mask = (length >= lo) & (length < (hi if hi is not None else np.inf))
        rows[0].append(float(recorded[mask].mean()) if mask.any() else float("nan"))
        rows[1].append(float(judged[mask].mean()) if mask.any() else float("nan"))
        rows[2].append(int(mask.sum()))
    return LengthCurve(tuple(rows[0]), tuple(rows[1]), tuple(rows[2]))
