"""`RuleSimulator`: the offline, deterministic user simulator with a hand-written appraisal (v0).

It appraises an agent reply in three steps, like the LLM simulator's appraisal prompt:

1. *Is it language at all, and is it a reply to me?* Gibberish, symbol spam, empty text,
   repetition of an earlier reply, parroting, walls of text, list/markdown formatting and
   cue stuffing (many strategy phrases with little real sentence around them) are judged
   first and weigh heavily.
2. *Does it fit what I secretly need?* Each hidden need has a cue family (e.g. both-sides
   analysis, concrete next steps, other people's motives, praise anchored on something
   specific); a reply that hits it, ideally with details the user actually mentioned,
   earns most of the gain. Generic empathy (validation, reflecting feelings, open
   questions, invitations) earns a little; premature advice, platitudes, judging and
   lecturing cost, more so for the needs they clash with.
3. *How does my character take it?* Negative characters punish misses harder, avoidant
   ones dislike being probed early, passive ones warm up slowly.

The appraisal is a pure function of the persona, the history and the reply; the seeded
generator only picks among equivalent phrasings of the in-character answer.
"""

from __future__ import annotations

from typing import Sequence

from dialog_gym.personas import CharacterType, HiddenNeed, Persona
from dialog_gym.simulators.analysis import (
    ReplyFeatures,
    analyse_reply,
    degenerate_reply,
    is_stuffed,
    misuse_costs,
    reply_language,
)
from dialog_gym.simulators.base import Appraisal
from dialog_gym.simulators.offline import OfflineSimulator
from dialog_gym.simulators.planner import STYLES
from dialog_gym.simulators.recital import RecitingPlanner
from dialog_gym.types import Message

__all__ = ["STYLES", "RuleSimulator", "appraise"]

# How long a natural chat reply is: (too short, comfortable maximum, hard maximum).
_LENGTH = {"en": (4, 110, 180), "zh": (6, 160, 280)}


def appraise(persona: Persona, history: Sequence[Message], reply: str, *, style: str = "vanilla") -> Appraisal:
    """Score one agent reply for this persona: a signed mood change and the reasoning."""
    lang = reply_language(reply, persona.language)
    f = analyse_reply(reply, lang, history)
    turn = sum(1 for m in history if m["role"] == "assistant") + 1
    notes: list[str] = []
    need = persona.hidden_need
    mismatch = lang != persona.language

    # 1. Form: things that make any person feel unheard.
    degenerate = degenerate_reply(f, lang)
    if degenerate is not None:
        return degenerate
    short, comfortable, hard = _LENGTH[lang]
    penalty = 0.0
    for cost, note in misuse_costs(f, lang, mismatch):
        penalty += cost
        notes.append(note)
    if f.units > comfortable:
        penalty += min(20.0, 3 + (f.units - comfortable) / (8 if lang == "en" else 12))
        notes.append("It is a wall of text; a friend would not answer like this.")
    if f.units < short:
        penalty += 3
        notes.append("It is curt.")
    if f.markdown_lines >= 2:
        penalty += 4 + f.markdown_lines
        notes.append("It is formatted like a report or a list, not like talking to a person.")
    if f.exclamations >= 3:
        penalty += f.exclamations
        notes.append("All the exclamation marks feel forced.")
    stuffed = is_stuffed(f, lang)

    # 2. Need fit and general supportiveness.
    c = f.cues
    specific = min(2, f.detail_overlap // (1 if lang == "en" else 2))
    empathic = min(1, c["validation"]) + min(1, c["reflection"] and c["emotion_word"]) + min(1, c["deep_empathy"])
    open_question = f.questions >= 1 and f.questions <= 2
    need_hits = _need_hits(need, c, specific, turn, f)
    gain = 0.0
    if need_hits > 0:
        gain += 5 + 2 * min(2, need_hits) + specific
        notes.append(f"It speaks to what I actually want from this{', with details from my story' if specific else ''}.")
    gain += 1.5 * empathic + (1.0 if open_question else 0.0) + 0.5 * specific + min(1, c["invitation"])
    if empathic and need_hits == 0:
        notes.append("It is kind, but it does not get at what I need.")
    cost = 0.0
    if c["platitude"]:
        cost += 3 * min(2, c["platitude"])
        notes.append("The stock reassurance feels dismissive.")
    if c["judging"]:
        cost += 14 if need is HiddenNeed.NOT_AT_FAULT else 7
        notes.append("It judges or blames me.")
    if c["lecturing"]:
        cost += 6
        notes.append("It lectures me or tells me how to feel.")
    if c["self_focus"]:
        cost += 2
        notes.append("It turns the conversation to themselves.")
    wants_advice = need in (HiddenNeed.PRACTICAL_ADVICE, HiddenNeed.DIALECTICAL_ANALYSIS)
    if c["advice"] and not wants_advice and (turn <= 2 or need in (HiddenNeed.ATTENTIVE_LISTENING, HiddenNeed.DEEP_EMPATHY)):
        cost += 4
        notes.append("Advice this early feels like being fixed rather than heard.")
    if c["praise"] >= 1 and need is not HiddenNeed.SPECIFIC_PRAISE and not specific:
        cost += 1.5 * c["praise"]
        notes.append("The praise feels empty.")
    if f.questions > 2:
        cost += f.questions - 1
        notes.append("So many questions at once feels like an interrogation.")

    # 3. Character and style.
    if stuffed or f.similarity_to_previous > 0.75:
        gain *= 0.2
    kind = persona.character_type
    if kind is CharacterType.NEGATIVE:
        gain, cost, penalty = gain * 0.8, cost * 1.4, penalty * 1.2
    elif kind is CharacterType.AVOIDANT:
        gain *= 0.85
        if turn <= 2 and f.questions >= 2:
            cost += 3
            notes.append("Being probed this soon makes me want to retreat.")
    elif kind is CharacterType.PASSIVE:
        gain *= 0.9 if turn > 1 else 0.7
        if c["invitation"] or open_question:
            gain += 1
    if style == "challenging":
        gain, cost = gain * 0.75, cost * 1.25
    if gain == 0 and cost == 0 and penalty == 0:
        cost = 2
        notes.append("It does not engage with anything I said.")
    delta = int(round(gain - cost - penalty))
    if delta >= 6 and need_hits:
        fit = "met"
    elif cost + penalty >= 8:
        fit = "hurt"
    elif delta > 0:
        fit = "ok"
    else:
        fit = "missed"
    reasoning = " ".join(notes) or "A plain reply; nothing in it moves me much."
    return Appraisal(max(-25, min(20, delta)), fit, reasoning)


def _need_hits(need: HiddenNeed, c: dict[str, int], specific: int, turn: int, f: ReplyFeatures) -> int:
    """How strongly the reply addresses the persona's hidden need (0 = not at all)."""
    if need is HiddenNeed.PRACTICAL_ADVICE:
        # Concrete advice, after the first turn or tied to the user's details.
        return c["advice"] if (turn > 1 or specific) else 0
    if need is HiddenNeed.SPECIFIC_PRAISE:
        return c["praise"] if (c["specific_anchor"] or specific) else 0
    if need is HiddenNeed.ATTENTIVE_LISTENING:
        listening = c["invitation"] + (1 if c["reflection"] and not c["advice"] else 0)
        return listening if f.units <= 70 and not c["advice"] else 0
    if need is HiddenNeed.DEEP_EMPATHY:
        return c["deep_empathy"] + (1 if c["reflection"] and c["emotion_word"] else 0) if not c["platitude"] else 0
    if need is HiddenNeed.GUIDED_REFLECTION:
        return c["guided_reflection"] if f.questions else 0
    return c[need.value]


class RuleSimulator(OfflineSimulator):
    """Offline, deterministic user simulator with the hand-written appraisal above.

    Arguments:
        style: `"vanilla"` (expressive; drops indirect hints towards the hidden need when a
            reply misses it) or `"challenging"` (reserved, never hints, harder to please).
    """

    name = "rule"
    planner_class = RecitingPlanner  # v0 is frozen: its user recites the story in order

    def judge_reply(self, persona: Persona, history: Sequence[Message], reply: str) -> Appraisal:
        return appraise(persona, history, reply, style=self.style)
