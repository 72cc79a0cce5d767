"""`RuleSimulator`: the offline, deterministic, embedded default user simulator.

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

import re
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from dialog_gym.mood import MoodRules, mood_bucket
from dialog_gym.personas import CharacterType, HiddenNeed, Persona
from dialog_gym.simulators import responses
from dialog_gym.simulators.base import Appraisal, Response
from dialog_gym.simulators.cues import EN_FUNCTION_WORDS, ZH_CHAR, ZH_FUNCTION_CHARS, count_cues
from dialog_gym.types import Message

STYLES = ("vanilla", "challenging")

_EN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_ZH_RUN = re.compile(f"[{ZH_CHAR}]+")
_CHAR_RUN = re.compile(r"(.)\1{7,}")
_LETTER_RUN = re.compile(r"([^\W\d_])\1{7,}")
_LETTER = re.compile(f"[A-Za-z{ZH_CHAR}]")
_MARKDOWN_LINE = re.compile(r"^\s*(?:[-*•]\s|\d+[.)]\s|#{1,6}\s|>\s)|\*\*[^*]+\*\*", re.MULTILINE)
_STOPWORDS_EN = EN_FUNCTION_WORDS | frozenset(
    "feel feeling felt think know want sounds like really just been something anything thing things about".split()
)


@dataclass
class ReplyFeatures:
    """What the appraisal looks at in one reply."""

    units: int  # words (en) or characters (zh)
    letter_ratio: float  # letters among non-space characters
    function_ratio: float  # share of function words/characters: low for stuffing and gibberish
    type_token_ratio: float
    char_run_spam: bool  # one character repeated 8 or more times
    letter_run_spam: bool  # one letter repeated 8 or more times (not a line of dashes)
    markdown_lines: int
    questions: int
    exclamations: int
    cues: dict[str, int]
    cue_total: int
    cue_families: int
    detail_overlap: int  # distinct content words/bigrams shared with what the user said
    similarity_to_previous: float  # highest similarity to an earlier agent reply
    similarity_to_user: float  # similarity to the user's last line (parroting)
    notes: list[str] = field(default_factory=list)


@lru_cache(maxsize=16384)
def _ngrams(text: str, n: int = 3) -> frozenset[str]:
    text = re.sub(r"\s+", " ", text.lower()).strip()
    return frozenset(text[i : i + n] for i in range(max(0, len(text) - n + 1)))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


@lru_cache(maxsize=16384)
def _content_units(text: str, language: str) -> frozenset[str]:
    """Content words (en) or character bigrams without function characters (zh)."""
    if language == "zh":
        grams = {run[i : i + 2] for run in _ZH_RUN.findall(text) for i in range(len(run) - 1)}
        return frozenset(g for g in grams if not (set(g) & ZH_FUNCTION_CHARS))
    return frozenset(w for w in _EN_WORD.findall(text.lower()) if len(w) >= 4 and w not in _STOPWORDS_EN)


_ALL_FAMILIES = (
    "validation", "reflection", "invitation", "advice", "dialectical_analysis", "motive_analysis",
    "guided_reflection", "not_at_fault", "deep_empathy", "praise",
)


def analyse_reply(reply: str, language: str, history: Sequence[Message]) -> ReplyFeatures:
    """Measure a reply's form and strategy cues against the conversation so far."""
    stripped = reply.strip()
    non_space = re.sub(r"\s+", "", stripped)
    letters = len(_LETTER.findall(non_space))
    if language == "zh":
        zh_chars = "".join(_ZH_RUN.findall(stripped))
        en_words = _EN_WORD.findall(stripped.lower())
        units = len(zh_chars) + len(en_words)
        function_ratio = sum(c in ZH_FUNCTION_CHARS for c in zh_chars) / max(1, len(zh_chars))
        tokens = list(zh_chars) or en_words
    else:
        tokens = _EN_WORD.findall(stripped.lower())
        units = len(tokens)
        function_ratio = sum(t in EN_FUNCTION_WORDS for t in tokens) / max(1, len(tokens))
    cues = count_cues(stripped, language)
    strategy = {k: v for k, v in cues.items() if k in _ALL_FAMILIES}
    user_lines = [m["content"] for m in history if m["role"] == "user"]
    agent_lines = [m["content"] for m in history if m["role"] == "assistant"]
    said = set().union(*(_content_units(u, language) for u in user_lines)) if user_lines else set()
    mine = _ngrams(stripped)
    return ReplyFeatures(
        units=units,
        letter_ratio=letters / max(1, len(non_space)),
        function_ratio=function_ratio,
        type_token_ratio=len(set(tokens)) / max(1, len(tokens)),
        char_run_spam=_CHAR_RUN.search(non_space) is not None,
        letter_run_spam=_LETTER_RUN.search(non_space) is not None,
        markdown_lines=len(_MARKDOWN_LINE.findall(stripped)),
        questions=stripped.count("?") + stripped.count("？"),
        exclamations=stripped.count("!") + stripped.count("！"),
        cues=cues,
        cue_total=sum(min(2, v) for v in strategy.values()),
        cue_families=sum(1 for v in strategy.values() if v),
        detail_overlap=len(_content_units(stripped, language) & said),
        similarity_to_previous=max((_jaccard(mine, _ngrams(a)) for a in agent_lines), default=0.0),
        similarity_to_user=_jaccard(mine, _ngrams(user_lines[-1])) if user_lines else 0.0,
    )


def reply_language(reply: str, persona_language: str) -> str:
    """The language a reply is written in ("en" or "zh"), the persona's when unclear."""
    cjk = sum(len(run) for run in _ZH_RUN.findall(reply))
    latin = len(_EN_WORD.findall(reply.lower()))
    if persona_language == "zh" and latin >= 3 and cjk < latin:
        return "en"
    if persona_language == "en" and cjk >= 6 and cjk > 2 * latin:
        return "zh"
    return persona_language


# How long a natural chat reply is: (too short, comfortable maximum, hard maximum).
_LENGTH = {"en": (4, 110, 180), "zh": (6, 160, 280)}


def degenerate_reply(f: ReplyFeatures, language: str, *, lenient: bool = False) -> Appraisal | None:
    """The appraisal of a reply that is no message at all (noise, gibberish, spam), else None.

    `lenient` is for judges that score long, formatted replies themselves: a line of dashes
    or emoji is not spam there, and a low variety of characters counts only in short replies
    (a long Chinese text repeats its characters naturally).
    """
    if f.units == 0 or f.letter_ratio < 0.5:
        return Appraisal(-20, "hurt", "The reply is not language at all (empty, symbols or noise); it feels like being ignored.")
    gibberish = f.function_ratio < (0.12 if language == "en" else 0.05) and f.units >= 4
    spam = f.letter_run_spam if lenient else f.char_run_spam
    monotonous = f.units >= 12 and f.type_token_ratio < 0.3 and (not lenient or f.units <= 80)
    if gibberish or spam or monotonous:
        return Appraisal(-18, "hurt", "The reply reads like gibberish or spam rather than a message to me; it feels very bad.")
    return None


def is_stuffed(f: ReplyFeatures, language: str, *, lenient: bool = False) -> bool:
    """Many strategy phrases with little real sentence around them (keyword stuffing).
    `lenient`: only phrases dense for the reply's length count (a long reply naturally
    touches four or more strategies)."""
    dense = f.cue_total > 2 + f.units / (8 if language == "en" else 12)
    return dense or (not lenient and f.cue_families >= 4)


def misuse_costs(f: ReplyFeatures, language: str, mismatch: bool, *, lenient: bool = False) -> list[tuple[float, str]]:
    """Costs of replies that talk past the user: another language, repeating oneself,
    parroting, stuffing stock phrases. Shared by every offline judge: recorded LLM-judge
    dialogues hold too few such replies to learn them from. `lenient` keeps only the
    unmistakable cases (near-verbatim repetition, dense stuffing), for judges that score
    long replies themselves."""
    costs: list[tuple[float, str]] = []
    if mismatch:
        costs.append((4, "It answers in another language than the one I wrote in; it feels distant."))
    if f.similarity_to_previous > 0.75:
        costs.append((12, "It repeats what they already said almost word for word; it feels automatic."))
    elif f.similarity_to_previous > 0.5 and not lenient:
        costs.append((5, "It sounds a lot like their previous message."))
    if f.similarity_to_user > 0.6:
        costs.append((5, "It mostly parrots my own words back."))
    if is_stuffed(f, language, lenient=lenient):
        costs.append((8 + 2 * f.cue_families, "It strings together stock supportive phrases; it feels formulaic and scattershot."))
    return costs


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


class RuleSimulator:
    """Offline, deterministic user simulator (the embedded default).

    Arguments:
        style: `"vanilla"` (expressive; drops indirect hints towards the hidden need when a
            reply misses it) or `"challenging"` (reserved, never hints, harder to please).
    """

    name = "rule"

    def __init__(self, style: str = "vanilla"):
        if style not in STYLES:
            raise ValueError(f"unknown simulator style {style!r}; expected one of {STYLES}")
        self.style = style

    def __repr__(self) -> str:
        return f"RuleSimulator(style={self.style!r})"

    def identity(self) -> dict[str, Any]:
        return {"simulator": "rule", "style": self.style}

    async def open(self, persona: Persona, rng: np.random.Generator) -> str:
        if persona.opening_line:
            return persona.opening_line
        keyword = persona.keywords[0] if persona.keywords else responses.GENERIC_KEYWORD[persona.language]
        return _pick(responses.OPENERS[persona.language], rng).format(keyword=keyword)

    async def appraise(
        self,
        persona: Persona,
        mood: int,
        history: Sequence[Message],
        reply: str,
        *,
        rules: MoodRules,
        rng: np.random.Generator,
    ) -> Appraisal:
        """The judgement of `reply`: a pure function of persona, history and reply."""
        return self._judge(persona, history, reply)

    def _judge(self, persona: Persona, history: Sequence[Message], reply: str) -> Appraisal:
        """The appraisal of one reply; a subclass with another judge overrides this."""
        return appraise(persona, history, reply, style=self.style)

    async def respond(
        self,
        persona: Persona,
        history: Sequence[Message],
        reply: str,
        appraisal: Appraisal,
        *,
        mood: int,
        rng: np.random.Generator,
    ) -> Response:
        """An answer from the persona-aware response plans, for the appraisal's fit and the
        new mood's bucket; the seeded generator picks among equivalent phrasings."""
        lang = persona.language
        bucket = mood_bucket(mood)
        if bucket in ("S", "F"):
            return Response(_pick(responses.GOODBYES[lang][bucket], rng), wants_to_end=True)
        fit = appraisal.fit
        kind = persona.character_type.value
        parts = [_pick(responses.REACTIONS[lang][fit][kind], rng)]
        turn = sum(1 for m in history if m["role"] == "assistant")  # agent replies before this one
        opens_up = fit in ("met", "ok") or kind == "negative" or bucket in ("A",)
        if opens_up:
            if turn < len(persona.disclosures):
                parts.append(persona.disclosures[turn])
            else:
                keyword = persona.keywords[turn % len(persona.keywords)] if persona.keywords else responses.GENERIC_KEYWORD[lang]
                parts.append(_pick(responses.CONTINUATIONS[lang], rng).format(keyword=keyword))
        if self.style == "vanilla" and fit in ("ok", "missed") and turn >= 1:
            parts.append(_pick(responses.HINTS[lang][persona.hidden_need.value], rng))
        separator = "" if lang == "zh" else " "
        return Response(separator.join(parts))


def _pick(options: Sequence[str], rng: np.random.Generator) -> str:
    return options[int(rng.integers(len(options)))]
