"""Why a calibrated judge moved the mood: its prediction as shares of named feature groups,
in words a person would use ("Mood raised by deep empathy +1.6; lowered by headings -0.4.")."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np


@dataclass(frozen=True)
class Contribution:
    """One reason the mood moved: a feature group, its share of the change, and examples."""

    feature: str  # a group name, e.g. "length", "wording", "cue:advice"
    words: str  # the same, as a person would say it
    value: float  # in mood points (after the gain)
    examples: tuple[str, ...] = ()  # the n-grams that weighed most, for "wording"


@dataclass(frozen=True)
class JudgeScore:
    """A judge's verdict on one reply: the change (unrounded) and the feature groups that
    moved it most, largest first."""

    change: float
    language: str
    contributions: tuple[Contribution, ...]

    def top(self, k: int = 3) -> tuple[Contribution, ...]:
        """The `k` contributions that moved the mood most, largest first."""
        return tuple(sorted(self.contributions, key=lambda c: -abs(c.value))[:k])


_TEXT_GROUPS = {"reply": "wording", "opener": "opening", "user": "conversation", "earlier": "conversation"}
# The groups that say where the conversation is (the turn, what the user wrote), not what the
# reply does, and the texts whose n-grams are the user's. Not the persona: its share is an
# offset for every reply to that user, which whole would lift a short scripted reply as much
# as a long attentive one (`LinearModel.steady_context`).
CONTEXT_GROUPS = frozenset({"turn", "conversation"})
CONTEXT_TEXTS = frozenset(key for key, group in _TEXT_GROUPS.items() if group == "conversation")
_FAMILY_WORDS = {
    "validation": "validating my feelings", "reflection": "reflecting my feelings back", "emotion_word": "naming feelings",
    "invitation": "inviting me to go on", "advice": "advice", "platitude": "stock reassurance", "judging": "judging me",
    "lecturing": "lecturing", "praise": "praise", "specific_anchor": "pointing at what I actually did",
    "dialectical_analysis": "weighing both sides", "motive_analysis": "explaining the others' motives",
    "guided_reflection": "questions that make me reflect", "not_at_fault": "saying it is not my fault",
    "deep_empathy": "deep empathy", "self_focus": "talking about themselves",
}
_GROUP_WORDS = {
    "length": "its length", "paragraphs": "many paragraphs", "list_lines": "list formatting",
    "numbered_lines": "numbered steps", "bold": "bold text", "headers": "headings", "questions": "its questions",
    "exclamations": "exclamation marks", "exclamation_opener": "an exclamation to open with",
    "praise_opener": "opening with praise", "stock_opener": "a stock empathy opener",
    "stock_opener_again": "opening with a stock line again, as before",
    "referral": "sending me to a professional or a hotline", "stage_directions": "stage directions",
    "emoji": "emoji",
    "repeats_earlier_reply": "repeating an earlier reply", "echo": "picking up my own words", "turn": "how far into the talk we are",
    "conversation": "how the conversation has gone so far", "wording": "its wording", "opening": "how it opens",
    "specifics": "answering my request for something specific", "advice_refused": "advice after I said I did not want it",
    "persona": "who I am",
    # feature version 2
    "on_topic": "staying with what I told them", "uptake": "taking up what I said", "uptake_last": "picking up my last message",
    "takes_up_nothing": "saying nothing about what I told them", "answers_question": "answering my question",
    "ignores_question": "not answering my question", "praise_unanchored": "praise for things I never mentioned",
    "exclamation_opener_unwarranted": "an exclamation when I had no good news", "sentences": "how many sentences it has",
    "act:blame": "blaming me", "act:dismiss": "brushing my feelings off", "act:lecture": "lecturing me",
    "act:platitude": "stock reassurance", "act:referral": "sending me to a professional",
    "need": "speaking to what I need", "only_questions": "nothing but questions", "cold": "cold statements",
    "formatted": "report formatting", "generic": "lines that could be said to anyone", "generic_late": "lines that could be said to anyone", "curt": "being curt",
    "idle_sentences": "sentences that say nothing to me", "harsh_sentences": "sentences that read as harsh to me", "self_focus": "talking about themselves", "repeated_sentences": "saying the same sentence (or the same line with other words of mine) again",
    "wall_of_text": "a wall of text", "unkind": "words that read as unkind to me", "unkind_score": "how unkind it reads",
    "unread": "words in a language I cannot read",
}
# The same groups when the reply has less of them than the average recorded reply.
_LESS_WORDS = {
    "length": "its brevity", "paragraphs": "few paragraphs", "list_lines": "no lists", "numbered_lines": "no numbered steps",
    "bold": "no bold text", "headers": "no headings", "questions": "asking few questions", "exclamations": "few exclamation marks",
    "exclamation_opener": "a calm opening", "praise_opener": "no opening praise", "stock_opener": "no stock empathy opener",
    "stock_opener_again": "no stock opening said again",
    "referral": "no referral to a professional", "stage_directions": "no stage directions", "emoji": "no emoji",
    "repeats_earlier_reply": "saying something new", "echo": "not picking up my words", "turn": "how early in the talk we are",
    "on_topic": "drifting from what I told them", "uptake": "taking up little of what I said",
    "uptake_last": "not picking up my last message", "takes_up_nothing": "taking up something I said",
    "ignores_question": "not leaving my question hanging", "praise_unanchored": "no empty praise",
    "sentences": "few sentences",
}
_GROUP_OF = {
    "overlong": "length", "length_over_100": "length", "length_over_200": "length", "length_over_300": "length", "user_negative": "conversation", "user_positive": "conversation", "user_question": "conversation",
    "user_wants_specifics": "conversation", "user_refuses_advice": "conversation",
}


@lru_cache(maxsize=64)
def _grouping(names: tuple[str, ...]) -> tuple[tuple[str, ...], np.ndarray, tuple[int, ...]]:
    """The explanation groups of a model's features: their names, each feature's group, and
    each group's own feature (the one that says whether a reply has more or less of it than
    average; -1 when the group has none)."""
    of_feature = [feature_group(name) for name in names]
    groups = tuple(dict.fromkeys(of_feature))
    position = {group: k for k, group in enumerate(groups)}
    index = np.array([position[g] for g in of_feature], dtype=np.int64)
    own = {name: j for j, name in enumerate(names)}
    primary = tuple(own.get(group, -1) for group in groups)
    return groups, index, primary


def feature_group(name: str) -> str:
    """The group a named feature belongs to, for explanations (e.g. `"fit:x:advice"` -> `"cue:advice"`)."""
    if name in _GROUP_OF:
        return _GROUP_OF[name]
    head, _, tail = name.partition(":")
    if head in ("need", "type"):
        return "persona"
    if head in ("cue", "fit"):
        return "cue:" + tail.rpartition(":")[2]
    if head == "act":
        return name
    if head == "specifics_asked":
        return "specifics"
    if head == "advice_refused":
        return "advice_refused"
    if tail:  # "negative:length", "emotional:bold": the form feature itself
        return _GROUP_OF.get(tail, tail)
    return name


def is_context_feature(name: str) -> bool:
    """The named feature says what the conversation is, not what the reply does (`CONTEXT_GROUPS`)."""
    return feature_group(name) in CONTEXT_GROUPS


def describe_feature(group: str, *, above: bool = True) -> str:
    """A feature group in words (`"cue:advice"` -> `"advice"`); `above=False` says that the
    reply has less of it than the average recorded reply (`"length"` -> `"its brevity"`)."""
    if group.startswith("cue:"):
        words = _FAMILY_WORDS.get(group[4:], group[4:].replace("_", " "))
        return words if above else f"little {words}"
    if not above and group in _LESS_WORDS:
        return _LESS_WORDS[group]
    return _GROUP_WORDS.get(group, group.replace("_", " "))


def _readable(gram: str, language: str) -> bool:
    """An n-gram worth quoting: two or more characters of Chinese, or an English word."""
    letters = [ch for ch in gram if ch.isalpha()]
    return len(letters) >= (2 if language == "zh" else 1)


def describe_name(name: str) -> str:
    """A named feature in words, with its qualifier (`"negative:length"` -> `"its length (negative characters)"`)."""
    words = describe_feature(feature_group(name))
    head, _, tail = name.partition(":")
    if head == "fit":
        return f"{words} (when I need {tail.partition(':')[0].replace('_', ' ')})"
    if head in ("negative", "passive", "avoidant"):
        return f"{words} ({head} characters)"
    if head == "emotional":
        return f"{words} (emotional needs)"
    if name in _GROUP_OF and name != "overlong":
        return name.replace("_", " ").replace("user", "my last message:", 1)
    if name == "overlong":
        return "length beyond ~200 words"
    return words


def explain(score: JudgeScore, k: int = 3) -> str:
    """One sentence naming what moved the mood most: "raised by ...; lowered by ..."."""
    top = [c for c in score.top(k) if abs(c.value) >= 0.05]
    if not top:
        return "Nothing in the reply moved me much either way."

    def say(c: Contribution) -> str:
        examples = " (" + ", ".join(f"\u201c{g}\u201d" for g in c.examples) + ")" if c.examples else ""
        return f"{c.words}{examples} {c.value:+.1f}"

    raised = [say(c) for c in top if c.value > 0]
    lowered = [say(c) for c in top if c.value < 0]
    parts = ([f"raised by {', '.join(raised)}"] if raised else []) + ([f"lowered by {', '.join(lowered)}"] if lowered else [])
    return "Mood " + "; ".join(parts) + "."
