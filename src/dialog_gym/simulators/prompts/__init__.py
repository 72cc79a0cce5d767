"""Prompt templates of `LLMSimulator`, in English (`en`) and Chinese (`zh`).

Three calls, each a system message (role, persona, style, the task) and a user message
(the fenced conversation and what to write):

- `appraisal_messages`: what the supporter meant, how it fits the hidden need, the inner
  reaction, the feeling, then the signed mood change, as one JSON object;
- `response_messages`: the next in-character message, conditioned on the mood *bucket*
  and the appraisal (S thanks and says goodbye, F says goodbye and leaves);
- `opening_messages`: the first message when the persona has no fixed opening line.

Everything the agent wrote is fenced (`<conversation>`, `<agent_reply>`), and fence tags
inside agent text are neutralised, so a reply cannot close the fence and pose as
instructions. `request_kind` tells the three calls apart (the scripted test server uses it).
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import Literal, Sequence

from dialog_gym.mood import MoodBucket, MoodRules
from dialog_gym.personas import Persona
from dialog_gym.personas.persona import NEED_DESCRIPTIONS
from dialog_gym.simulators.prompts import en, zh
from dialog_gym.types import Message

LANGUAGES: dict[str, ModuleType] = {"en": en, "zh": zh}
STYLES = ("vanilla", "challenging")
RequestKind = Literal["appraise", "respond", "open"]
APPRAISAL_KEYS = ("intent", "need_fit", "inner_reaction", "feeling", "change")
# The range suggested to the model when the preset leaves the change unclamped (RLVER).
OPEN_RANGE = (-20, 20)

_FENCE_NAMES = ("agent_reply", "conversation")
# What a reader (or a tokenizer) may skip inside a tag: whitespace, and format characters
# such as zero-width spaces and joiners, word joiners, soft hyphens and bidi marks.
_INVISIBLE = "\\s\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
_SKIP = f"[{_INVISIBLE}]*"
# `<`, or a look-alike a model reads as one, then an optional `/` (or a look-alike), then a
# fence name, in ASCII or full-width letters, that invisible characters may split.
_OPEN_BRACKETS = "<\ufe64\u2039\u02c2\u1438"
_SLASHES = "/\u2044\u2215\u29f8\uff0f"
_FENCE_TAG = re.compile(
    f"[{_OPEN_BRACKETS}](?={_SKIP}(?:[{_SLASHES}]{_SKIP})?(?:"
    + "|".join(_SKIP.join(f"[{re.escape(ch)}{chr(ord(ch) + 0xFEE0)}]" for ch in name) for name in _FENCE_NAMES)
    + "))",
    re.IGNORECASE,
)


def texts(language: str) -> ModuleType:
    try:
        return LANGUAGES[language]
    except KeyError:
        raise ValueError(f"no simulator prompts for language {language!r}; expected one of {sorted(LANGUAGES)}") from None


def check_style(style: str) -> str:
    if style not in STYLES:
        raise ValueError(f"unknown simulator style {style!r}; expected one of {STYLES}")
    return style


def neutralise(text: str) -> str:
    """Agent text made safe to fence: every `<agent_reply>`-like tag loses its opening
    bracket (to a full-width `＜`), however it is spelled: any case, whitespace or line
    breaks between `<`, `/` and the name (`< /agent_reply>`, `<\\n/agent_reply>`), zero-width
    or other invisible characters anywhere in it, full-width letters, and look-alike
    brackets and slashes."""
    return _FENCE_TAG.sub("\uff1c", text)


def _bullets(items: Sequence[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


def persona_block(persona: Persona, language: str) -> str:
    t = texts(language)
    profile = persona.profile
    lines = []
    for key, label in t.PROFILE_FIELDS.items():
        value = getattr(profile, key)
        if value:
            value = ("、" if language == "zh" else ", ").join(value) if isinstance(value, tuple) else value
            lines.append(f"{label}: {value}" if language == "en" else f"{label}：{value}")
    scene = persona.scene
    reactions = [
        f"{label}: {getattr(persona.reactions, key)}" if language == "en" else f"{label}：{getattr(persona.reactions, key)}"
        for key, label in t.REACTION_LABELS.items()
        if getattr(persona.reactions, key)
    ]
    return t.PERSONA.format(
        name=profile.name,
        profile_lines="\n".join(lines),
        event=scene.event,
        stages=t.STAGES.format(items=_bullets(scene.stages)) if scene.stages else "",
        current_state=t.CURRENT_STATE.format(state=scene.current_state) if scene.current_state else "",
        need=NEED_DESCRIPTIONS[language][persona.hidden_need],
        character=t.CHARACTER_TYPES[persona.character_type.value],
        reactions=t.REACTIONS.format(items=_bullets(reactions)) if reactions else "",
        disclosures=t.DISCLOSURES.format(items=_bullets(persona.disclosures)) if persona.disclosures else "",
    )


def _system(persona: Persona, style: str, language: str, task: str) -> Message:
    t = texts(language)
    parts = [t.ROLE, persona_block(persona, language), t.STYLES[check_style(style)], t.FENCE_NOTE, task]
    return {"role": "system", "content": "\n\n".join(p.strip() for p in parts)}


def conversation_block(history: Sequence[Message], language: str) -> str:
    t = texts(language)
    lines = [f"{t.SPEAKERS.get(m['role'], m['role'])}: {neutralise(m['content'])}" for m in history if m["role"] != "system"]
    return t.CONVERSATION.format(lines="\n".join(lines)) if lines else t.NO_CONVERSATION


def range_hint(rules: MoodRules, language: str) -> str:
    t = texts(language)
    if rules.min_delta is not None and rules.max_delta is not None:
        return t.RANGE_BOUNDED.format(lo=rules.min_delta, hi=f"+{rules.max_delta}")
    lo = rules.min_delta if rules.min_delta is not None else OPEN_RANGE[0]
    hi = rules.max_delta if rules.max_delta is not None else OPEN_RANGE[1]
    return t.RANGE_OPEN.format(lo=lo, hi=f"+{hi}")


def appraisal_messages(
    persona: Persona, mood: int, history: Sequence[Message], reply: str, *, rules: MoodRules, style: str, language: str
) -> list[Message]:
    t = texts(language)
    task = t.APPRAISE.format(heading=t.HEADINGS["appraise"], mood=mood, range_hint=range_hint(rules, language))
    user = "\n\n".join([conversation_block(history, language), t.LATEST.format(reply=neutralise(reply)), t.ASK_APPRAISAL])
    return [_system(persona, style, language, task), {"role": "user", "content": user}]


def response_messages(
    persona: Persona,
    history: Sequence[Message],
    reply: str,
    *,
    bucket: MoodBucket,
    appraisal: str,
    style: str,
    language: str,
) -> list[Message]:
    t = texts(language)
    task = t.RESPOND.format(
        heading=t.HEADINGS["respond"],
        bucket=bucket,
        bucket_meaning=t.BUCKETS[bucket],
        appraisal=appraisal,
        passive=t.PASSIVE_NOTE if persona.character_type.value == "passive" else "",
        ending=t.ENDING_NOTES.get(bucket, ""),
    )
    user = "\n\n".join(
        [conversation_block(history, language), t.LATEST.format(reply=neutralise(reply)), t.ASK_RESPONSE.format(name=persona.name)]
    )
    return [_system(persona, style, language, task), {"role": "user", "content": user}]


def opening_messages(persona: Persona, *, style: str, language: str) -> list[Message]:
    t = texts(language)
    task = t.OPEN.format(heading=t.HEADINGS["open"])
    return [_system(persona, style, language, task), {"role": "user", "content": t.ASK_OPENING.format(name=persona.name)}]


def repair_message(problem: str, language: str) -> Message:
    return {"role": "user", "content": texts(language).REPAIR.format(problem=problem)}


def change_only_message(rules: MoodRules, language: str) -> Message:
    """The repair for an appraisal whose reasoning is there but whose change is missing."""
    return {"role": "user", "content": texts(language).CHANGE_ONLY.format(range_hint=range_hint(rules, language))}


def empty_reply_message(name: str, language: str) -> Message:
    return {"role": "user", "content": texts(language).EMPTY_REPLY.format(name=name)}


def request_kind(messages: Sequence[Message]) -> RequestKind | None:
    """Which simulator call a chat request is (by the task heading in its system message)."""
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    for module in LANGUAGES.values():
        for kind, heading in module.HEADINGS.items():
            if heading in system:
                return kind  # type: ignore[return-value]
    return None


__all__ = [
    "APPRAISAL_KEYS",
    "LANGUAGES",
    "STYLES",
    "appraisal_messages",
    "change_only_message",
    "check_style",
    "conversation_block",
    "empty_reply_message",
    "neutralise",
    "opening_messages",
    "persona_block",
    "repair_message",
    "request_kind",
    "response_messages",
]
