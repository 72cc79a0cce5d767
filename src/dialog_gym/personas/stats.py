"""Balance and near-duplicate checks over persona sets."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from collections.abc import Iterable
from functools import lru_cache

from dialog_gym.personas.persona import FACET_TOPICS, NEED_DESCRIPTIONS, CharacterType, HiddenNeed, Persona

NEAR_DUPLICATE_THRESHOLD = 0.45  # character 3-gram Jaccard similarity of two scenes or openings


def balance(personas: list[Persona]) -> Counter:
    """Counts per (language, split, hidden need, character type)."""
    return Counter((p.language, p.split, p.hidden_need, p.character_type) for p in personas)


def cell_spread(personas: list[Persona], language: str) -> tuple[int, int]:
    """The smallest and largest number of personas of one language in a need x type cell."""
    counts = Counter((p.hidden_need, p.character_type) for p in personas if p.language == language)
    sizes = [counts[(n, t)] for n in HiddenNeed for t in CharacterType]
    return min(sizes), max(sizes)


@lru_cache(maxsize=65536)
def _shingles(text: str) -> frozenset[str]:
    text = re.sub(r"\s+", " ", text.lower())
    return frozenset(text[i : i + 3] for i in range(len(text) - 2))


@dataclass(frozen=True)
class NearDuplicate:
    first: str
    second: str
    similarity: float


def similarity(a: Persona, b: Persona) -> float:
    """The higher 3-gram Jaccard similarity of the two scenes and of the two opening lines."""
    best = 0.0
    for x, y in ((a.scene.event, b.scene.event), (a.opening_line or "", b.opening_line or "")):
        sx, sy = _shingles(x), _shingles(y)
        if sx and sy:
            best = max(best, len(sx & sy) / len(sx | sy))
    return best


def duplicates_of(persona: Persona, others: Iterable[Persona], threshold: float = NEAR_DUPLICATE_THRESHOLD) -> list[NearDuplicate]:
    """The personas of the same language in `others` that `persona` nearly duplicates."""
    found = []
    for other in others:
        if other.language == persona.language and other.id != persona.id:
            score = similarity(persona, other)
            if score >= threshold:
                found.append(NearDuplicate(persona.id, other.id, score))
    return found


def near_duplicates(personas: list[Persona], threshold: float = NEAR_DUPLICATE_THRESHOLD) -> list[NearDuplicate]:
    """Every pair of personas (same language) whose scenes or opening lines are nearly the same text."""
    return [dup for i, p in enumerate(personas) for dup in duplicates_of(p, personas[i + 1 :], threshold)]


def need_phrases(need: HiddenNeed) -> list[str]:
    """The phrases that state a hidden need outright: its name and its descriptions (lowercase)."""
    phrases = [need.value, need.value.replace("_", " ")]
    return phrases + [NEED_DESCRIPTIONS[lang][need].lower() for lang in NEED_DESCRIPTIONS]


def states_need(text: str, need: HiddenNeed) -> list[str]:
    """The phrases of `need_phrases(need)` that occur in `text`."""
    lowered = text.lower()
    return [p for p in need_phrases(need) if p in lowered]


def need_leaks(persona: Persona) -> list[str]:
    """Phrases that state the hidden need outright in the persona's opening line or facets."""
    texts = [persona.opening_line or "", *(line for topic in FACET_TOPICS for line in persona.facets.lines(topic))]
    return [p for text in texts for p in states_need(text, persona.hidden_need)]
