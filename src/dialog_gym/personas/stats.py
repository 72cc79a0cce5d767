"""Balance and near-duplicate checks over persona sets."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from itertools import combinations

from dialog_gym.personas.persona import NEED_DESCRIPTIONS, CharacterType, HiddenNeed, Persona

NEAR_DUPLICATE_THRESHOLD = 0.45  # character 3-gram Jaccard similarity of two scenes or openings


def balance(personas: list[Persona]) -> Counter:
    """Counts per (language, split, hidden need, character type)."""
    return Counter((p.language, p.split, p.hidden_need, p.character_type) for p in personas)


def cell_spread(personas: list[Persona], language: str) -> tuple[int, int]:
    """The smallest and largest number of personas of one language in a need x type cell."""
    counts = Counter((p.hidden_need, p.character_type) for p in personas if p.language == language)
    sizes = [counts[(n, t)] for n in HiddenNeed for t in CharacterType]
    return min(sizes), max(sizes)


def _shingles(text: str) -> frozenset[str]:
    text = re.sub(r"\s+", " ", text.lower())
    return frozenset(text[i : i + 3] for i in range(len(text) - 2))


@dataclass(frozen=True)
class NearDuplicate:
    first: str
    second: str
    similarity: float


def near_duplicates(personas: list[Persona], threshold: float = NEAR_DUPLICATE_THRESHOLD) -> list[NearDuplicate]:
    """Pairs of personas (same language) whose scenes or opening lines are nearly the same text."""
    found = []
    by_language: dict[str, list[Persona]] = {}
    for p in personas:
        by_language.setdefault(p.language, []).append(p)
    for group in by_language.values():
        shingles = [(p, _shingles(p.scene.event), _shingles(p.opening_line or "")) for p in group]
        for (a, sa, oa), (b, sb, ob) in combinations(shingles, 2):
            for x, y in ((sa, sb), (oa, ob)):
                if x and y:
                    similarity = len(x & y) / len(x | y)
                    if similarity >= threshold:
                        found.append(NearDuplicate(a.id, b.id, similarity))
                        break
    return found


def need_leaks(persona: Persona) -> list[str]:
    """Phrases that state the hidden need outright in the persona's opening line."""
    opening = (persona.opening_line or "").lower()
    phrases = [persona.hidden_need.value, persona.hidden_need.value.replace("_", " ")]
    phrases += [NEED_DESCRIPTIONS[lang][persona.hidden_need].lower() for lang in NEED_DESCRIPTIONS]
    return [p for p in phrases if p and p in opening]
