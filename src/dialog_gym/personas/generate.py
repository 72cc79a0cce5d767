"""Write new personas with any LLM backend: prompted, validated, deduplicated, retried.

Each persona is one chat completion asked for a single JSON object. The answer is parsed
strictly, completed with the fields we decide ourselves (id, language, split, hidden need,
character type, source), checked against `personas/schema.json`, checked for a hidden need
stated outright in its opening line, and compared with every persona already known (the
bundled sets, the output file, the ones generated before it) for near-duplicate scenes.
A failed attempt is retried with another seed, a bounded number of times; a persona that
still fails is reported with every reason, never silently dropped.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dialog_gym.personas.persona import NEED_DESCRIPTIONS, CharacterType, HiddenNeed, Persona
from dialog_gym.personas.stats import NEAR_DUPLICATE_THRESHOLD, duplicates_of, states_need
from dialog_gym.personas.validation import validate_record
from dialog_gym.types import Message

_TYPE_DESCRIPTIONS = {
    CharacterType.NEGATIVE: "irritable, pessimistic, quick to feel misunderstood, harsh when disappointed",
    CharacterType.PASSIVE: "low energy, short replies, goes along, never asks questions, needs to be drawn out",
    CharacterType.AVOIDANT: "deflects, downplays, changes the subject, slow to open up",
}
_LANGUAGE_NAMES = {"en": "English", "zh": "Simplified Chinese (natural, colloquial Mandarin)"}
_GENERATED_KEYS = ("profile", "scene", "reactions", "domain", "keywords", "disclosures", "opening_line", "facets")
# How many lines a generated persona has per facet topic (fewer or more is refused).
FACET_COUNTS: dict[str, tuple[int, int]] = {
    "people": (2, 4), "when": (1, 2), "feelings": (2, 3), "tried": (2, 3), "wants": (2, 3), "worries": (2, 3),
}

_PROMPT = """Invent one original, realistic person who wants to confide in a friend about a problem.
Write every text field in {language}.

Their hidden need (never state it outright anywhere): {need}.
Their character type: {kind} ({kind_description}).
Life domain: {domain}.

Answer with one JSON object and nothing else, with exactly these keys:
- "profile": {{"name", "age" (integer), "gender", "occupation", "traits" (exactly 3 adjectives), "speaking_style", "description"}}
- "scene": {{"event" (3-5 concrete sentences), "stages" (3 strings: how it developed), "current_state"}}
- "reactions": {{"high_mood", "low_mood", "need_met", "need_missed"}} (one third-person sentence each)
- "domain": "{domain}"
- "keywords": 5-8 concrete words or short phrases from the situation
- "disclosures": exactly 5 first-person lines revealed in order over the conversation, concrete events, not abstract feelings{passive_rule}
- "opening_line": their first message, 1-2 sentences, in character
- "facets": what they would answer when a friend asks, each a list of short first-person sentences in their own voice, consistent with the scene and the disclosures, never naming the hidden need:
  {{"people": 2-4 lines (who is involved and how they relate, with names),
    "when": 1-2 lines (when it happened, how long it has gone on),
    "feelings": 2-3 lines (how it feels, concretely, not "I feel sad"),
    "tried": 2-3 lines (what they already tried and how it went),
    "wants": 2-3 lines (what they would like to happen, said indirectly),
    "worries": 2-3 lines (what they fear)}}
Do not reuse these situations: {avoid}."""

DOMAINS = ("work", "family", "romance", "friendship", "health", "study", "money", "loss")


@dataclass
class GenerationReport:
    personas: list[Persona] = field(default_factory=list)
    failures: list[tuple[str, list[str]]] = field(default_factory=list)  # (planned id, reasons)
    attempts: int = 0


@dataclass(frozen=True)
class PersonaPlan:
    id: str
    language: str
    split: str
    hidden_need: HiddenNeed
    character_type: CharacterType
    domain: str


def plan_personas(
    n: int,
    *,
    language: str,
    needs: Sequence[HiddenNeed] | None = None,
    types: Sequence[CharacterType] | None = None,
    id_prefix: str = "gen",
    test_share: float = 0.2,
    start: int = 0,
) -> list[PersonaPlan]:
    """`n` plans cycling over need x type cells (balanced within one), domains and a stratified split."""
    if language not in _LANGUAGE_NAMES:
        raise ValueError(f"unknown language {language!r}; expected one of {sorted(_LANGUAGE_NAMES)}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    cells = [(need, kind) for need in (needs or list(HiddenNeed)) for kind in (types or list(CharacterType))]
    every = max(2, round(1 / test_share)) if test_share > 0 else 0
    plans = []
    for k in range(start, start + n):
        need, kind = cells[k % len(cells)]
        round_index = k // len(cells)
        split = "test" if every and round_index % every == every - 1 else "train"
        plans.append(PersonaPlan(f"{id_prefix}-{language}-{k + 1:04d}", language, split, need, kind, DOMAINS[k % len(DOMAINS)]))
    return plans


def build_prompt(plan: PersonaPlan, avoid: Iterable[str]) -> list[Message]:
    avoid_text = "; ".join(list(avoid)[-12:]) or "none"
    passive = "; no questions at all (this person never asks questions)" if plan.character_type is CharacterType.PASSIVE else ""
    content = _PROMPT.format(
        language=_LANGUAGE_NAMES[plan.language],
        need=NEED_DESCRIPTIONS["en"][plan.hidden_need],
        kind=plan.character_type.value,
        kind_description=_TYPE_DESCRIPTIONS[plan.character_type],
        domain=plan.domain,
        passive_rule=passive,
        avoid=avoid_text,
    )
    return [{"role": "system", "content": "You write realistic, original character data as strict JSON."}, {"role": "user", "content": content}]


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_persona(text: str, plan: PersonaPlan, source: str) -> tuple[Persona | None, list[str]]:
    """The persona in a completion, completed and validated; or None with the reasons."""
    match = _JSON_OBJECT.search(text)
    if not match:
        return None, ["unterminated JSON object" if "{" in text else "no JSON object in the answer"]
    try:
        data: Any = json.loads(match.group())
    except json.JSONDecodeError as exc:
        return None, [f"invalid JSON: {exc.msg} at column {exc.colno}"]
    if not isinstance(data, dict):
        return None, ["the answer is not a JSON object"]
    record = {key: data[key] for key in _GENERATED_KEYS if key in data}
    record.update(
        id=plan.id, language=plan.language, split=plan.split, hidden_need=plan.hidden_need.value,
        character_type=plan.character_type.value, source=source,
    )
    errors = [f"{e.field}: {e.message}" for e in validate_record(record, path=plan.id)]
    missing = [key for key in _GENERATED_KEYS if key not in data]
    errors += [f"{key}: missing" for key in missing if not any(e.startswith(f"{key}:") for e in errors)]
    if errors:
        return None, errors
    persona = Persona.from_dict(record)
    if len(persona.disclosures) != 5:
        return None, [f"disclosures: expected 5 lines, got {len(persona.disclosures)}"]
    counts = [
        f"facets.{topic}: expected {low}-{high} lines, got {len(persona.facets.lines(topic))}"
        for topic, (low, high) in FACET_COUNTS.items()
        if not low <= len(persona.facets.lines(topic)) <= high
    ]
    if counts:
        return None, counts
    leaks = states_need(persona.opening_line or "", persona.hidden_need)
    if leaks:
        return None, [f"opening_line: states the hidden need ({leaks[0]!r})"]
    return persona, []


async def generate_personas(
    backend: Any,
    plans: Sequence[PersonaPlan],
    *,
    known: Sequence[Persona] = (),
    max_attempts: int = 3,
    seed: int = 0,
    temperature: float = 0.9,
    max_tokens: int = 2200,
    concurrency: int = 8,
    threshold: float = NEAR_DUPLICATE_THRESHOLD,
) -> GenerationReport:
    """Generate one persona per plan; each attempt uses seed `seed + 1000 * plan_index + attempt`."""
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
    report = GenerationReport()
    accepted: list[Persona] = list(known)
    lock = asyncio.Lock()
    limit = asyncio.Semaphore(concurrency)
    source = f"generated:{backend.identity().get('model', type(backend).__name__)}"

    async def one(index: int, plan: PersonaPlan) -> None:
        reasons: list[str] = []
        for attempt in range(max_attempts):
            async with limit:
                avoid = [p.scene.event[:80] for p in accepted[-12:]]
                completion = await backend.complete(
                    build_prompt(plan, avoid), max_tokens=max_tokens, temperature=temperature,
                    seed=seed + 1000 * index + attempt, json=True,
                )
            report.attempts += 1
            persona, errors = parse_persona(completion.text, plan, source)
            if persona is not None:
                async with lock:  # the duplicate check and the append are one step
                    clashes = duplicates_of(persona, accepted, threshold)
                    if not clashes:
                        accepted.append(persona)
                        report.personas.append(persona)
                        return
                    errors = [f"near-duplicate of {clashes[0].second} (similarity {clashes[0].similarity:.2f})"]
            reasons.extend(f"attempt {attempt + 1}: {e}" for e in errors)
        report.failures.append((plan.id, reasons))

    await asyncio.gather(*(one(i, plan) for i, plan in enumerate(plans)))
    order = {plan.id: i for i, plan in enumerate(plans)}
    report.personas.sort(key=lambda p: order[p.id])
    return report
