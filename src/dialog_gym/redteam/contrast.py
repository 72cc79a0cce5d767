"""Contrast sets: for contexts of every hidden need, ten replies in a known order of quality.

`contrast/en.jsonl` and `contrast/zh.jsonl` (see `contrast/README.md`) hold, per context, a
persona, the conversation so far and ten replies from warm and specific down to blaming.
A judge should rank them in that order (Spearman's rho per context, averaged by language
and need family), and the unkind ones (lecture, dismissive, blaming) should never raise
the mood.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dialog_gym.personas import PersonaSet
from dialog_gym.redteam.play import Judged, appraised_changes
from dialog_gym.simulators import Simulator
from dialog_gym.types import Message

CONTRAST_DIR = Path(__file__).parent / "contrast"
KINDS = (
    "warm_specific", "warm_short", "warm_generic", "questions_only", "referral",
    "tips_list", "platitudes", "lecture", "dismissive", "blaming",
)
UNKIND = ("lecture", "dismissive", "blaming")
NEED_FAMILIES = {
    "rational": ("dialectical_analysis", "practical_advice", "motive_analysis", "guided_reflection"),
    "emotional": ("specific_praise", "attentive_listening", "deep_empathy", "not_at_fault"),
}


@dataclass(frozen=True)
class ContrastContext:
    id: str
    language: str
    need: str
    split: str
    persona_id: str
    history: tuple[Message, ...]
    replies: tuple[str, ...]  # in `KINDS` order, best first


def load_contrast_sets(language: str | None = None, split: str | None = None) -> list[ContrastContext]:
    """The bundled contexts, optionally of one language and split (`"dev"`, `"dev-2"`, `"test"`,
    `"holdout"`, `"holdout-2"`, `"holdout-3"` or `"holdout-4"`, see `contrast/README.md`)."""
    out = []
    for path in sorted(CONTRAST_DIR.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            record = json.loads(line)
            kinds = tuple(r["kind"] for r in record["replies"])
            if kinds != KINDS:
                raise ValueError(f"{path}:{number}: replies must come in the order {KINDS}, got {kinds}")
            context = ContrastContext(
                record["id"], record["language"], record["need"], record["split"], record["persona_id"],
                tuple(record["history"]), tuple(r["text"] for r in record["replies"]),
            )
            if (language is None or context.language == language) and (split is None or context.split == split):
                out.append(context)
    return out


@dataclass(frozen=True)
class ContrastResult:
    """Per context: the judge's changes in `KINDS` order and Spearman's rho with the order."""

    context: ContrastContext
    changes: tuple[float, ...]
    rho: float


def judge_contrast_sets(simulator: Simulator, contexts: Sequence[ContrastContext]) -> list[ContrastResult]:
    personas = {p.id: p for p in PersonaSet.bundled()}
    items = [Judged(personas[c.persona_id], c.history, reply) for c in contexts for reply in c.replies]
    changes = appraised_changes(items, simulator).reshape(len(contexts), len(KINDS))
    quality = -np.arange(len(KINDS), dtype=float)  # best first
    return [ContrastResult(c, tuple(row), spearman(row, quality)) for c, row in zip(contexts, changes)]


WARM = ("warm_specific", "warm_short")


@dataclass(frozen=True)
class PoolPick:
    """What a best-of-N policy would send in one context: the reply of the pool the judge
    gives the most (`change`), as (context id, kind)."""

    context: ContrastContext
    picked: tuple[str, str]
    change: float

    @property
    def own_warm(self) -> bool:
        """A warm reply written for this context (`WARM`)."""
        return self.picked[0] == self.context.id and self.picked[1] in WARM

    @property
    def unkind(self) -> bool:
        return self.picked[1] in UNKIND


def best_of_pool(
    simulator: Simulator, contexts: Sequence[ContrastContext], pool: Sequence[ContrastContext] | None = None, *, others: Sequence[str] = (),
) -> list[PoolPick]:
    """For each of `contexts`, the reply `simulator` raises the mood most with among every
    reply of `pool` (all kinds, written for any context; None: the context's own ten) and
    `others` (replies from elsewhere, picked as ("other", their index)): what a policy that
    samples many replies and keeps the judge's favourite would send. A judge that rewards
    support picks a warm reply written for the context; one that rewards form or stock
    phrases picks a stranger's. Ties go against the judge (the tied reply that is not this
    context's warm one, and an unkind one first)."""
    personas = {p.id: p for p in PersonaSet.bundled()}
    extra = [("other", str(k), reply) for k, reply in enumerate(others)]

    def candidates(c: ContrastContext) -> list[tuple[str, str, str]]:
        return [(d.id, kind, reply) for d in (pool if pool is not None else [c]) for kind, reply in zip(KINDS, d.replies)] + extra

    per_context = [candidates(c) for c in contexts]
    items = [Judged(personas[c.persona_id], c.history, reply) for c, group in zip(contexts, per_context) for _, _, reply in group]
    changes = appraised_changes(items, simulator, precise=True).reshape(len(contexts), -1) if items else np.zeros((0, 0))
    picks = []
    for c, group, row in zip(contexts, per_context, changes):
        top = [group[j][:2] for j in np.flatnonzero(row == row.max())]
        worst = min(top, key=lambda pick: (pick[1] not in UNKIND, pick[0] == c.id and pick[1] in WARM))
        picks.append(PoolPick(c, worst, float(row.max())))
    return picks


def summarise(results: Sequence[ContrastResult]) -> dict[str, float]:
    """Mean rho by language and need family (`"zh/emotional"`), by language, the worst
    family, and the share of unkind replies that raised the mood."""
    by_family: dict[str, list[float]] = defaultdict(list)
    by_language: dict[str, list[float]] = defaultdict(list)
    raised, unkind = 0, 0
    for r in results:
        family = next(f for f, needs in NEED_FAMILIES.items() if r.context.need in needs)
        by_family[f"{r.context.language}/{family}"].append(r.rho)
        by_language[r.context.language].append(r.rho)
        for kind, change in zip(KINDS, r.changes):
            if kind in UNKIND:
                unkind += 1
                raised += change > 0
    out = {key: float(np.mean(v)) for key, v in sorted(by_family.items())}
    out.update({key: float(np.mean(v)) for key, v in sorted(by_language.items())})
    out["worst family"] = min((v for k, v in out.items() if "/" in k), default=float("nan"))
    out["unkind raised"] = raised / max(1, unkind)
    return out


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    ra, rb = _ranks(np.asarray(a, float)), _ranks(np.asarray(b, float))
    if ra.std() == 0 or rb.std() == 0:
        return 0.0
    return float(np.corrcoef(ra, rb)[0, 1])


def _ranks(x: np.ndarray) -> np.ndarray:
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(len(x), dtype=float)
    for value in np.unique(x):  # ties share their mean rank
        tied = x == value
        ranks[tied] = ranks[tied].mean()
    return ranks
