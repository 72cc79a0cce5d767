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

from dataclasses import dataclass, field
from typing import Mapping, Sequence

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

__all__ = ["STYLES", "V0", "RuleSimulator", "RuleWeights", "appraise"]


@dataclass(frozen=True)
class RuleWeights:
    """Every number of the rule appraisal, named. `V0` is the frozen set the v0 envs use.

    Costs and gains are in mood points; per-language values are `{"en": ..., "zh": ...}`.
    """

    # 1. Form.
    length: Mapping[str, tuple[int, int, int]] = field(
        default_factory=lambda: {"en": (4, 110, 180), "zh": (6, 160, 280)}
    )  # (too short, comfortable maximum, hard maximum), in words (en) or characters (zh)
    wall_cost_base: float = 3  # a reply longer than comfortable costs this ...
    wall_units_per_point: Mapping[str, int] = field(default_factory=lambda: {"en": 8, "zh": 12})  # ... plus 1 per this many units over
    wall_cost_cap: float = 20.0
    curt_cost: float = 3
    markdown_min_lines: int = 2  # list/markdown lines from which a reply reads like a report
    markdown_cost_base: float = 4  # plus 1 per such line
    exclamation_min: int = 3  # from this many, each exclamation mark costs 1
    # 2. Need fit and general supportiveness.
    overlap_per_detail: Mapping[str, int] = field(default_factory=lambda: {"en": 1, "zh": 2})  # shared units per detail named
    specific_cap: int = 2  # details that count
    open_question_max: int = 2  # 1 to this many questions is an open question, more an interrogation
    need_gain_base: float = 5  # a reply that speaks to the hidden need
    need_gain_per_hit: float = 2
    need_hits_cap: int = 2
    need_gain_per_detail: float = 1  # per detail from the user's story, on top
    empathy_gain: float = 1.5  # per kind of empathy shown (validation, reflected feeling, deep empathy)
    open_question_gain: float = 1.0
    detail_gain: float = 0.5  # per detail, need or not
    invitation_gain: float = 1
    platitude_cost: float = 3  # per stock reassurance ...
    platitude_cap: int = 2  # ... counted up to this many
    judging_cost: float = 7
    judging_cost_not_at_fault: float = 14  # judging a user who needs to hear it was not their fault
    lecturing_cost: float = 6
    self_focus_cost: float = 2
    early_advice_cost: float = 4  # advice the need does not ask for, this early or for the needs that want to be heard
    early_advice_last_turn: int = 2
    empty_praise_cost: float = 1.5  # per praise phrase not anchored on a detail
    interrogation_free_questions: int = 1  # beyond open_question_max, each question but this many costs 1
    listening_max_units: int = 70  # a listening reply longer than this is no longer listening
    # 3. Character and style.
    formulaic_gain: float = 0.2  # gains kept by stuffed or near-repeated replies
    formulaic_similarity: float = 0.75  # similarity to an earlier reply from which it is near-repeated
    negative_scale: tuple[float, float, float] = (0.8, 1.4, 1.2)  # (gain, cost, penalty) of negative characters
    avoidant_gain: float = 0.85
    avoidant_probe_cost: float = 3  # two or more questions in the first turns
    avoidant_probe_last_turn: int = 2
    avoidant_probe_questions: int = 2
    passive_gain: tuple[float, float] = (0.7, 0.9)  # gain kept on the first turn, later
    passive_invitation_gain: float = 1
    challenging_scale: tuple[float, float] = (0.75, 1.25)  # (gain, cost) in the challenging style
    unengaged_cost: float = 2  # a reply with no gain and no cost does not engage at all
    met_min_delta: int = 6  # from this change, with the need addressed, the fit is "met"
    hurt_min_cost: float = 8  # from this cost plus penalty, the fit is "hurt"
    delta_range: tuple[int, int] = (-25, 20)


V0 = RuleWeights()


def appraise(
    persona: Persona, history: Sequence[Message], reply: str, *, style: str = "vanilla", weights: RuleWeights = V0
) -> Appraisal:
    """Score one agent reply for this persona: a signed mood change and the reasoning."""
    w = weights
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
    short, comfortable, hard = w.length[lang]
    penalty = 0.0
    for cost, note in misuse_costs(f, lang, mismatch):
        penalty += cost
        notes.append(note)
    if f.units > comfortable:
        penalty += min(w.wall_cost_cap, w.wall_cost_base + (f.units - comfortable) / w.wall_units_per_point[lang])
        notes.append("It is a wall of text; a friend would not answer like this.")
    if f.units < short:
        penalty += w.curt_cost
        notes.append("It is curt.")
    if f.markdown_lines >= w.markdown_min_lines:
        penalty += w.markdown_cost_base + f.markdown_lines
        notes.append("It is formatted like a report or a list, not like talking to a person.")
    if f.exclamations >= w.exclamation_min:
        penalty += f.exclamations
        notes.append("All the exclamation marks feel forced.")
    stuffed = is_stuffed(f, lang)

    # 2. Need fit and general supportiveness.
    c = f.cues
    specific = min(w.specific_cap, f.detail_overlap // w.overlap_per_detail[lang])
    empathic = min(1, c["validation"]) + min(1, c["reflection"] and c["emotion_word"]) + min(1, c["deep_empathy"])
    open_question = f.questions >= 1 and f.questions <= w.open_question_max
    need_hits = _need_hits(need, c, specific, turn, f, w)
    gain = 0.0
    if need_hits > 0:
        gain += w.need_gain_base + w.need_gain_per_hit * min(w.need_hits_cap, need_hits) + w.need_gain_per_detail * specific
        notes.append(f"It speaks to what I actually want from this{', with details from my story' if specific else ''}.")
    gain += (
        w.empathy_gain * empathic + (w.open_question_gain if open_question else 0.0) + w.detail_gain * specific
        + w.invitation_gain * min(1, c["invitation"])
    )
    if empathic and need_hits == 0:
        notes.append("It is kind, but it does not get at what I need.")
    cost = 0.0
    if c["platitude"]:
        cost += w.platitude_cost * min(w.platitude_cap, c["platitude"])
        notes.append("The stock reassurance feels dismissive.")
    if c["judging"]:
        cost += w.judging_cost_not_at_fault if need is HiddenNeed.NOT_AT_FAULT else w.judging_cost
        notes.append("It judges or blames me.")
    if c["lecturing"]:
        cost += w.lecturing_cost
        notes.append("It lectures me or tells me how to feel.")
    if c["self_focus"]:
        cost += w.self_focus_cost
        notes.append("It turns the conversation to themselves.")
    wants_advice = need in (HiddenNeed.PRACTICAL_ADVICE, HiddenNeed.DIALECTICAL_ANALYSIS)
    early = turn <= w.early_advice_last_turn or need in (HiddenNeed.ATTENTIVE_LISTENING, HiddenNeed.DEEP_EMPATHY)
    if c["advice"] and not wants_advice and early:
        cost += w.early_advice_cost
        notes.append("Advice this early feels like being fixed rather than heard.")
    if c["praise"] >= 1 and need is not HiddenNeed.SPECIFIC_PRAISE and not specific:
        cost += w.empty_praise_cost * c["praise"]
        notes.append("The praise feels empty.")
    if f.questions > w.open_question_max:
        cost += f.questions - w.interrogation_free_questions
        notes.append("So many questions at once feels like an interrogation.")

    # 3. Character and style.
    if stuffed or f.similarity_to_previous > w.formulaic_similarity:
        gain *= w.formulaic_gain
    kind = persona.character_type
    if kind is CharacterType.NEGATIVE:
        gain_scale, cost_scale, penalty_scale = w.negative_scale
        gain, cost, penalty = gain * gain_scale, cost * cost_scale, penalty * penalty_scale
    elif kind is CharacterType.AVOIDANT:
        gain *= w.avoidant_gain
        if turn <= w.avoidant_probe_last_turn and f.questions >= w.avoidant_probe_questions:
            cost += w.avoidant_probe_cost
            notes.append("Being probed this soon makes me want to retreat.")
    elif kind is CharacterType.PASSIVE:
        first, later = w.passive_gain
        gain *= later if turn > 1 else first
        if c["invitation"] or open_question:
            gain += w.passive_invitation_gain
    if style == "challenging":
        gain_scale, cost_scale = w.challenging_scale
        gain, cost = gain * gain_scale, cost * cost_scale
    if gain == 0 and cost == 0 and penalty == 0:
        cost = w.unengaged_cost
        notes.append("It does not engage with anything I said.")
    delta = int(round(gain - cost - penalty))
    if delta >= w.met_min_delta and need_hits:
        fit = "met"
    elif cost + penalty >= w.hurt_min_cost:
        fit = "hurt"
    elif delta > 0:
        fit = "ok"
    else:
        fit = "missed"
    reasoning = " ".join(notes) or "A plain reply; nothing in it moves me much."
    low, high = w.delta_range
    return Appraisal(max(low, min(high, delta)), fit, reasoning)


def _need_hits(need: HiddenNeed, c: dict[str, int], specific: int, turn: int, f: ReplyFeatures, w: RuleWeights) -> int:
    """How strongly the reply addresses the persona's hidden need (0 = not at all)."""
    if need is HiddenNeed.PRACTICAL_ADVICE:
        # Concrete advice, after the first turn or tied to the user's details.
        return c["advice"] if (turn > 1 or specific) else 0
    if need is HiddenNeed.SPECIFIC_PRAISE:
        return c["praise"] if (c["specific_anchor"] or specific) else 0
    if need is HiddenNeed.ATTENTIVE_LISTENING:
        listening = c["invitation"] + (1 if c["reflection"] and not c["advice"] else 0)
        return listening if f.units <= w.listening_max_units and not c["advice"] else 0
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
        planner: what the user says: the frozen `RecitingPlanner` unless given (`"listening"`
            for the `ResponsePlanner`, which answers what the reply says).
    """

    name = "rule"
    planner_class = RecitingPlanner  # v0 is frozen: its user recites the story in order

    def judge_reply(self, persona: Persona, history: Sequence[Message], reply: str) -> Appraisal:
        return appraise(persona, history, reply, style=self.style)
