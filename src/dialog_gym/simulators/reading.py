"""How the offline user reads the agent's reply: what it asks, suggests, guesses and names.

`read_reply` splits a reply into sentences and finds, in English or Chinese:

- its *questions* and what each asks about: the people involved, what happened, when, how it
  feels, what was already tried, what the user wants, what worries them, or their opinion;
- *advice* (a suggestion, in a statement or a "have you tried ...?" question);
- a *guess at a feeling* ("you must be furious", "你一定很委屈"), to confirm or correct;
- *details* from the persona's story it names (a keyword, a person);
- whether it *dismisses* (platitudes, lecturing, judging) or talks *off topic*.

The appraisal (the judge) decides how the reply lands; this only says what it contains, so
that the response planner can answer it. Pure functions, compiled patterns, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from collections.abc import Sequence
from functools import lru_cache

from dialog_gym.simulators.analysis import EN_WORD, content_units
from dialog_gym.simulators.cues import CUES, ZH_CHAR

# What a question can ask about: the persona's facet topics, the story ("what"), the user's
# own view ("opinion"), and anything else ("other").
QUESTION_TOPICS = ("people", "when", "feelings", "tried", "wants", "worries", "what", "opinion", "other")

_EN_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
_ZH_SENTENCE = re.compile(r"[^。！？!?；;\n]+(?:[。！？!?；;]+|$)")

# Checked in this order; the first topic that matches a question is what it asks about.
_TOPIC_PATTERNS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (
        ("tried", r"\b(?:have|did|had) you (?:already |ever |even )?(?:tried|try|talked|spoken|asked|told|called|reached out|contacted|"
                  r"gone|been to|looked into|considered|thought about|done anything|raised)\b|\bwhat (?:have|did) you (?:already )?"
                  r"(?:try|tried|do|done)\b|\btried\b|\banything (?:you'?ve|you have) done\b|\b(?:done|tried) (?:so far|already)\b"),
        ("worries", r"\bworr(?:y|ied|ies|ying)\b|\bafraid\b|\bscared\b|\bfear\b|\bthe worst\b|\bwhat if\b|\bconcern|\bkeeps? you up\b"),
        ("wants", r"\bwhat (?:do|would) you (?:want|like|hope|wish|need)\b|\bwhat would (?:help|make (?:it|this|things) (?:better|easier))\b|"
                  r"\bhoping for\b|\bwhat are you hoping\b|\bideal(?:ly)?\b|\bwhat do you need\b|\bhow (?:would|do) you want\b|"
                  r"\bwhat would (?:feel|look) (?:right|good|like a good)\b|\bif you could change\b"),
        ("feelings", r"\bhow (?:are|have) you (?:been )?(?:holding up|doing|coping|feeling|managing)\b|\bhow (?:do|did|does|is|was) "
                     r"(?:you|it|that|this|all this) (?:feel|felt|make you feel|leave you|sit with you)\b|\bhow do you feel\b|"
                     r"\bwhat(?:'s| is| was) (?:that|it) like for you\b"),
        ("people", r"^\W*who\b|\bwho (?:else|is|was|are|were|did|does|do)\b|\babout your (?:\w+ )?(?:sister|brother|mum|mom|mother|dad|"
                   r"father|parents|partner|husband|wife|boss|manager|friends?|son|daughter|family|colleagues?|coworkers?|kids?|"
                   r"children|landlord|teacher|doctor|ex|girlfriend|boyfriend|neighbou?r|team|roommate|in-laws?)\b"),
        ("when", r"\bwhen\b|\bhow long\b|\bsince when\b|\bwhat time\b|\bhow often\b|\bhow many (?:times|days|weeks|months|years)\b"),
        ("people", r"\bwho\b|\bwhat(?:'s| is| are) (?:he|she|they) like\b|\babout (?:him|her|them)\b|\bget along\b|\brelationship\b|"
                   r"\bhow are things with\b|\bclose (?:to|with)\b|\bthe people\b|\banyone (?:else|around you)\b"),
        ("feelings", r"\bfeel(?:ing|s)?\b|\bhardest\b|\bemotion|\bheart\b|\bhurt(?:s|ing)? (?:the )?most\b"),
        ("opinion", r"\bwhat do you (?:think|make of)\b|\bwhy do you think\b|\bhow do you (?:see|weigh|read)\b|\bdo you think\b|"
                    r"\bwhat would you\b|\bwhat does (?:that|this|it) (?:tell|say)\b|\bwhy\b"),
        ("what", r"\bwhat happened\b|\bwhat (?:went|is going|'s going|was going) on\b|\btell me\b|\bhow did (?:it|that|this|things) "
                 r"(?:happen|start|go|come|end)\b|\bwhat (?:did|does|do) (?:he|she|they|it) (?:say|do|want)\b|\bwalk me through\b|"
                 r"\bsay more\b|\bwhat was it\b|\bgo on\b|\bafter that\b|\bthen what\b|\bwhat next\b|\bwhat(?:'s| is) going on\b|"
                 r"\bwhat (?:part|bit)\b|\bmore about\b"),
    ),
    "zh": (
        ("tried", r"试过|尝试|有没有(?:试|找|跟|和|去|问|说|打|想过)|做过什么|做了什么|怎么处理的|找过|问过|去过|想过办法|采取了|已经做了"),
        ("worries", r"担心|害怕|怕什么|怕的是|顾虑|最坏|忧虑|不安|最怕"),
        ("wants", r"想要|希望|想怎么|需要什么|理想|期待|想让|最想|你要的|怎样才(?:能|会)|需要的是"),
        ("feelings", r"(?:你|心里)(?:现在)?(?:的)?(?:感觉|感受)|心情|还好吗|怎么样了|撑得住|扛得住|什么滋味|你还好|过得怎么样"),
        ("when", r"什么时候|多久|多长时间|哪天|几天|几个月|几年|几次|从什么|持续|多少年|哪一年"),
        ("people", r"谁|哪个人|他是|她是|关系|你们之间|你们俩|(?:他|她|他们|她们)(?:平时|是个|为人)|什么样的人|身边的人"),
        ("feelings", r"感觉|感受|难受|最难|情绪|心里"),
        ("opinion", r"你觉得|你怎么看|你认为|为什么|你看呢|意味着什么"),
        ("what", r"发生了什么|怎么回事|然后呢|后来呢|说说|讲讲|多说|具体|怎么了|经过|什么事"),
    ),
}

# Requests that ask without a question mark ("Tell me more about your sister.").
_REQUEST = {
    "en": re.compile(r"^\s*(?:please |so |and )?(?:tell me|walk me through|say more|talk me through|go on)\b", re.IGNORECASE),
    "zh": re.compile(r"^\s*(?:那|你)?(?:跟我|和我)?(?:说说|讲讲|多说|聊聊)"),
}
_ZH_QUESTION_END = re.compile(r"(?:吗|呢|么)[。]?$")

# Feelings an agent may guess at, by family, and the words that name them (stems for
# English). A guess is confirmed when the persona's own words name the same family.
EMOTION_FAMILIES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {  # a trailing * marks a stem ("frustrat*": frustrated, frustrating)
        "anger": ("angry", "anger", "furious", "mad", "livid", "pissed", "enraged", "resent*", "fuming", "rage", "outraged", "indignant"),
        "sadness": ("sad", "heartbroken", "devastated", "depressed", "griev*", "grief", "miserable", "crushed", "gutted"),
        "fear": ("scared", "afraid", "anxi*", "terrified", "nervous", "panic*", "dread*", "frightened", "worr*"),
        "shame": ("ashamed", "embarrass*", "humiliat*", "guilt*", "stupid", "foolish", "silly", "shame*"),
        "hurt": ("hurt*", "betray*", "wounded", "rejected", "let down", "slighted", "stung"),
        "tired": ("tired", "exhaust*", "drained", "worn out", "burnt out", "burned out", "weary"),
        "lonely": ("lonely", "alone", "isolated", "invisible", "unseen", "unappreciated", "ignored", "overlooked"),
        "frustration": ("frustrat*", "stuck", "helpless", "powerless", "overwhelm*", "trapped", "cornered", "fed up"),
        "numb": ("numb", "empty", "hollow"),
    },
    "zh": {
        "anger": ("生气", "愤怒", "火大", "恼火", "气愤", "窝火", "气死", "冒火"),
        "sadness": ("难过", "伤心", "沮丧", "心碎", "失落", "悲伤", "难受"),
        "fear": ("害怕", "焦虑", "担心", "紧张", "慌", "恐惧", "不安"),
        "shame": ("丢人", "羞愧", "尴尬", "内疚", "自责", "丢脸", "惭愧", "没面子"),
        "hurt": ("委屈", "受伤", "心寒", "背叛", "寒心", "伤人"),
        "tired": ("累", "疲惫", "心累", "撑不住", "精疲力尽", "熬不住"),
        "lonely": ("孤单", "孤独", "没人理解", "没人看见", "冷落", "被忽视"),
        "frustration": ("无助", "无力", "憋屈", "崩溃", "烦", "压力", "走投无路", "憋"),
        "numb": ("麻木", "空空的", "空落落"),
    },
}
_EN_GUESS = re.compile(
    r"\b(?:sounds? like|seems? like|i bet|i guess|i imagine|you must|you might|you(?:'re| are)|you feel|you felt|you seem|"
    r"must be|must have (?:been|felt)|you probably|are you|were you|do you feel|feeling)\b((?:\s+\w+){1,4})"
)
# Plain text one piece of which every guess frame of _EN_GUESS / _ZH_GUESS contains.
_GUESS_FRAMES = {
    "en": ("sound", "seem", "bet", "guess", "imagine", "must", "might", "you're", "you are", "you feel", "you felt", "probably",
           "are you", "were you", "feeling"),
    "zh": ("你一定", "你肯定", "你应该", "听起来你", "看得出你", "你感到", "你觉得", "让你", "你是不是", "你很", "你挺", "你会觉得", "你心里"),
}
_ZH_GUESS = re.compile(r"(?:你一定|你肯定|你应该|听起来你|看得出你|你感到|你觉得|让你|你是不是|你很|你挺|你会觉得|你心里)([^，。？！,.?!]{1,8})")

_WH_QUESTION = {"en": re.compile(r"^\W*(?:what|how|why|when|who|which|where)\b.*\?\s*$"), "zh": re.compile(r"什么|怎么|为什么|哪|多少")}
_NEGATION = {"en": re.compile(r"\b(?:not|no|never|nothing)\b|n't\b"), "zh": re.compile(r"不|没|别")}
_SUPPORT_FAMILIES = ("validation", "reflection", "invitation", "deep_empathy", "not_at_fault", "praise", "motive_analysis",
                     "dialectical_analysis", "guided_reflection")
_DISMISSIVE_FAMILIES = ("platitude", "lecturing", "judging")
_ZH_RUN = re.compile(f"[{ZH_CHAR}]+")


@dataclass(frozen=True)
class Question:
    """One question of the reply: what it asks about, and its words."""

    topic: str
    text: str


class _lazy:
    """A property computed on first use and stored on the instance (like
    `functools.cached_property`, without its lock: a reading belongs to one call)."""

    def __init__(self, compute):  # type: ignore[no-untyped-def]
        self.compute, self.name = compute, compute.__name__

    def __get__(self, instance, owner=None):  # type: ignore[no-untyped-def]
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.compute(instance)
        return value


class ReplyReading:
    """What the agent's reply does, for the response planner. Each part is read when first
    asked for (a planner that stops at a dismissal never reads the questions).

    Attributes:
        questions: the questions (and requests such as "tell me more"), in order.
        advice: the sentences that suggest something to do ("" when none).
        guess: the feeling family the reply guesses the user feels, and the word it used.
        details: the persona's keywords the reply names.
        dismissive: platitudes, lecturing or judging.
        off_topic: changes the subject (asks about something else, or opens with "by the
            way") and touches nothing of the user's: none of their words or story, no
            feeling, no question about them, no support, advice or dismissal.
    """

    def __init__(self, reply: str, language: str, keywords: tuple[str, ...] = (), said: frozenset[str] = frozenset()):
        self.reply, self.language, self.keywords, self.said = reply, language, keywords, said
        self.lowered = reply.lower()

    def __repr__(self) -> str:
        parts = ("questions", "advice", "guess", "details", "dismissive", "off_topic")
        return "ReplyReading(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in parts) + ")"

    @_lazy
    def sentences(self) -> list[str]:
        return sentences(self.reply, self.language)

    @_lazy
    def questions(self) -> tuple[Question, ...]:
        return tuple(Question(question_topic(s, self.language), s) for s in self.sentences if is_question(s, self.language))

    @_lazy
    def advice(self) -> str:
        found = _families(self.language).sentences_with("advice", self.reply, self.lowered)
        return " ".join(s for s in found if _suggests_to_user(s, self.language))

    @_lazy
    def guess(self) -> tuple[str, str] | None:
        return _guess(self.lowered, self.language, [s.lower() for s in self.sentences])

    @_lazy
    def details(self) -> tuple[str, ...]:
        return tuple(k for k in self.keywords if _names(self.lowered, k, self.language))

    @_lazy
    def dismissive(self) -> bool:
        return is_dismissive(self.reply, self.language)

    @_lazy
    def off_topic(self) -> bool:
        lowered, language = self.lowered, self.language
        changes_subject = any(q.topic == "other" for q in self.questions) or bool(_CHANGES_SUBJECT[language].search(lowered))
        if not changes_subject:
            return False
        families = _families(language)
        engaged = (
            _shares_words(self.reply.strip(), self.said, language) or any(q.topic != "other" for q in self.questions)
            or self.dismissive or bool(self.advice) or self.guess is not None or families.any("emotion_word", lowered)
            or any(families.any(name, lowered) for name in _SUPPORT_FAMILIES) or bool(self.details)
        )
        return not engaged


# Words that open a change of subject.
_CHANGES_SUBJECT = {
    "en": re.compile(r"^\W*(?:by the way|anyway|anyways|speaking of|on another note|on a different note|random question|unrelated)\b"),
    "zh": re.compile(r"^\W*(?:对了|话说|换个话题|顺便|说起来|另外)"),
}


def sentences(text: str, language: str) -> list[str]:
    pattern = _ZH_SENTENCE if language == "zh" else _EN_SENTENCE
    return [s.strip() for s in pattern.findall(text) if s.strip()]


def question_topic(question: str, language: str) -> str:
    """What one question asks about (one of `QUESTION_TOPICS`)."""
    text = question.lower()
    for topic, pattern in _compiled_topics(language):
        if pattern.search(text):
            return topic
    return "other"


def is_question(sentence: str, language: str) -> bool:
    if sentence.endswith(("?", "？")):
        return True
    if _REQUEST[language].search(sentence):
        return True
    return language == "zh" and bool(_ZH_QUESTION_END.search(sentence))


def read_reply(reply: str, language: str, keywords: tuple[str, ...] = (), said: Sequence[str] = ()) -> ReplyReading:
    """Read `reply` (in the persona's `language`); `keywords` are the persona's story details,
    `said` the user's messages so far (to tell an on-topic reply from an off-topic one)."""
    return ReplyReading(reply, language, keywords, said_words(said, language))


def said_words(lines: Sequence[str], language: str) -> frozenset[str]:
    """The content words (English) or character pairs (Chinese) of the user's messages."""
    return frozenset().union(*(_line_words(line, language) for line in lines))


@lru_cache(maxsize=16384)
def _line_words(line: str, language: str) -> frozenset[str]:
    return content_units(line, language) - _COMMON[language]


@lru_cache(maxsize=4096)
def is_dismissive(reply: str, language: str) -> bool:
    """Whether a reply brushes the user off: platitudes, lecturing or judging."""
    families = _families(language)
    lowered = reply.lower()
    return any(families.any(name, lowered) for name in _DISMISSIVE_FAMILIES)


# A suggestion is made to the user ("you could...", "maybe call...", "试试..."), not the agent's
# own plan ("I want to first understand it"), and is no open question ("what have you tried?").
_TO_USER = {
    "en": re.compile(r"\byou|^\W*(?:maybe |perhaps |so |and )?(?:try|consider|how about|why not|what if|set|make|call|write|ask|talk|go|"
                     r"pick|start|take|get|tell|one option|it (?:might|may|could|would) help)\b"),
    "zh": re.compile(r"你|您|^\W*(?:那|也许|或许)?(?:试试|试着|不如|要不|不妨|建议|可以考虑|先去|最好|何不|给自己)"),
}
_OPEN_QUESTION = {"en": re.compile(r"^\W*(?:and |so )?(?:what|how|which|who|when|why|anything)\b"), "zh": re.compile(r"什么|哪些|怎么样|怎么处理|多久|谁")}


def is_open_question(sentence: str, language: str) -> bool:
    """A question that asks rather than suggests ("what have you tried?", not "have you tried X?")."""
    return is_question(sentence, language) and bool(_OPEN_QUESTION[language].search(sentence.lower()))


def _suggests_to_user(sentence: str, language: str) -> bool:
    return bool(_TO_USER[language].search(sentence.lower())) and not is_open_question(sentence, language)


def emotion_family(text: str, language: str) -> str | None:
    """The feeling family `text` names first, if any."""
    lowered = text.lower()
    best: tuple[int, str] | None = None
    for family, pattern in _emotion_patterns(language).items():
        match = pattern.search(lowered)
        if match and (best is None or match.start() < best[0]):
            best = (match.start(), family)
    return best[1] if best else None


def emotion_families(text: str, language: str) -> dict[str, int]:
    """How often each feeling family is named in `text`."""
    lowered = text.lower()
    return {family: len(pattern.findall(lowered)) for family, pattern in _emotion_patterns(language).items()}


def _guess(lowered: str, language: str, parts: Sequence[str]) -> tuple[str, str] | None:
    """The first feeling the reply attributes to the user ("you must be furious"), unless
    negated ("you're not alone") or asked about ("what are you most worried about?")."""
    if not any(frame in lowered for frame in _GUESS_FRAMES[language]):
        return None
    pattern = _ZH_GUESS if language == "zh" else _EN_GUESS
    emotion = _any_emotion(language)
    for sentence in parts:
        if _WH_QUESTION[language].search(sentence):
            continue
        for match in pattern.finditer(sentence):
            span = match.group(1)
            if not emotion.search(span):
                continue
            for family, words in _emotion_patterns(language).items():
                found = words.search(span)
                if found and not _NEGATION[language].search(span[: found.start()]):
                    return family, _whole_word(span, found, language)
    return None


def _whole_word(span: str, found: re.Match[str], language: str) -> str:
    if language == "zh":
        return found.group(0)
    start = span.rfind(" ", 0, found.start()) + 1
    end = found.end()
    while end < len(span) and span[end].isalpha():
        end += 1
    return span[start:end].strip()


def _names(lowered: str, keyword: str, language: str) -> bool:
    """Whether the reply names a story detail: one of its words of 4+ letters, at the start of
    a word (English: "hamid" in "Dr. Hamid's"), or the whole detail (Chinese, 2+ characters)."""
    for piece in _keyword_pieces(keyword, language):
        start = lowered.find(piece)
        while start != -1:
            if language == "zh" or start == 0 or not lowered[start - 1].isalnum():
                return True
            start = lowered.find(piece, start + 1)
    return False


@lru_cache(maxsize=4096)
def _keyword_pieces(keyword: str, language: str) -> tuple[str, ...]:
    key = keyword.lower().strip()
    if language == "zh":
        return (key,) if len(key) >= 2 else ()
    return tuple(w for w in EN_WORD.findall(key) if len(w) >= 4) or ((key,) if len(key) >= 3 else ())


# Words too common to show that a reply is about what the user said.
_COMMON = {
    "en": frozenset("great good nice fine sure right really little pretty night today yesterday morning week weekend thing things "
                    "stuff people time anyway honestly maybe actually something anything everything match game".split()),
    "zh": frozenset("昨晚 今天 时候 觉得 真的 一下 那个 这个 什么 怎么 可以 还是 就是 没有 知道 现在 比赛 精彩".split()),
}


def _shares_words(reply: str, said: frozenset[str], language: str) -> bool:
    """Whether the reply uses a word of the user's (a content word, or a pair of Chinese
    characters), common words aside."""
    return bool(said) and not said.isdisjoint(content_units(reply, language))


@lru_cache(maxsize=None)
def _compiled_topics(language: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((topic, re.compile(pattern)) for topic, pattern in _TOPIC_PATTERNS[language])


# Cue patterns of the judge's lexicon that the planner leaves out: "you must be exhausted" is
# no lecture, and a plan or "办法" named in passing ("hindsight finds better ways") no advice.
_LEFT_OUT = {
    "en": {"lecturing": {r"\byou must\b", r"\byou have to\b"}, "advice": {r"\bplan\b", r"\bfirst,? \w+", r"\bnext step\b"}},
    "zh": {"lecturing": {r"你必须"}, "advice": {r"办法", r"计划", r"第一步", r"先把"}},
}


_SPECIAL = set("\\()[]{}|?*+.^$")


def required_text(source: str) -> tuple[str, ...]:
    """Pieces of plain text one of which every match of the regular expression `source`
    contains: the longest plain run outside groups, or a group of plain alternatives
    ("(?:suggest|recommend)"), whichever is longer at its shortest; () when nothing is certain.
    Characters or groups that a quantifier makes optional do not count."""
    candidates: list[tuple[str, ...]] = []
    run, depth, i = "", 0, 0
    while i < len(source):
        c = source[i]
        if c == "\\":
            candidates.append((run,))
            run, i = "", i + 2
            continue
        if c == "[" or c == "{":  # a class, or a counted quantifier (the character before may be absent)
            candidates.append((run[:-1] if c == "{" else run,))
            run, i = "", source.index("]" if c == "[" else "}", i + 1) + 1
            continue
        if c == "(":
            candidates.append((run,))
            run = ""
            end, depth = i + 1, 1
            while depth:
                depth += {"(": 1, ")": -1}.get(source[end], 0)
                end += 1
            inner = source[i + 1 : end - 1]
            optional = end < len(source) and source[end] in "?*{"
            if inner.startswith("?:"):
                inner = inner[2:]
            alternatives = inner.split("|")
            if not optional and inner and all(a and not set(a) & _SPECIAL for a in alternatives):
                candidates.append(tuple(alternatives))
            i = end
            continue
        if c == "|":
            return ()  # an alternation at the top: nothing is certain
        if c in _SPECIAL:
            if c in "?*" and run:
                run = run[:-1]  # the quantified character may be absent
            candidates.append((run,))
            run = ""
        else:
            run += c
        i += 1
    candidates.append((run,))
    best = max(reversed(candidates), key=lambda choice: min(map(len, choice)))
    return best if min(map(len, best)) else ()


@dataclass(frozen=True)
class _Cue:
    """One cue pattern of `cues.py`, with the plain text one piece of which every match
    contains: substring tests rule most texts out before the pattern runs."""

    pattern: re.Pattern[str]
    required: tuple[str, ...]

    def possible_in(self, text: str) -> bool:
        for piece in self.required:
            if piece in text:
                return True
        return not self.required

    def found_in(self, text: str) -> bool:
        return self.possible_in(text) and self.pattern.search(text) is not None


# Suggestions the judge's advice cues do not list, that a user still hears as advice.
_MORE_ADVICE = {
    "en": (r"\bit (?:might|may|could|would) help\b", r"\byou might (?:want|try|consider)\b", r"\bwhy not\b", r"\bif i were you\b",
           r"\bi'?d (?:suggest|recommend|try)\b", r"\bmaybe (?:set|try|write|call|ask|talk|make|start|get|take|go|pick|tell)\b",
           r"\bit'?s worth\b", r"\bset yourself\b", r"\bmake a list\b"),
    "zh": (r"不妨", r"可以先", r"最好", r"先去", r"试一下", r"要不(?![是然])", r"何不", r"建议你", r"给自己定"),
}


class _Families:
    """The cue families of `cues.py`, searched cheaply."""

    def __init__(self, language: str):
        self.language = language
        self.cues: dict[str, tuple[_Cue, ...]] = {
            family: tuple(
                _Cue(re.compile(p), required_text(p)) for p in patterns if p not in _LEFT_OUT[language].get(family, ())
            )
            for family, patterns in CUES[language].items()
        }
        self.cues["advice"] += tuple(_Cue(re.compile(p), required_text(p)) for p in _MORE_ADVICE[language])

    def any(self, family: str, lowered: str) -> bool:
        for cue in self.cues[family]:
            if cue.found_in(lowered):
                return True
        return False

    def sentences_with(self, family: str, text: str, lowered: str) -> list[str]:
        """The sentences of `text` in which a cue of `family` occurs (each cue searched once)."""
        starts = []
        for cue in self.cues[family]:
            if cue.possible_in(lowered):
                starts += [m.start() for m in cue.pattern.finditer(lowered)]
        if not starts:
            return []
        if len(lowered) != len(text):  # lowercasing changed offsets (rare letters): sentence by sentence
            return [s for s in sentences(text, self.language) if self.any(family, s.lower())]
        pattern = _ZH_SENTENCE if self.language == "zh" else _EN_SENTENCE
        return [m.group().strip() for m in pattern.finditer(text) if m.group().strip() and any(m.start() <= i < m.end() for i in starts)]


@lru_cache(maxsize=None)
def _families(language: str) -> _Families:
    return _Families(language)


@lru_cache(maxsize=None)
def _any_emotion(language: str) -> re.Pattern[str]:
    return re.compile("|".join(p.pattern for p in _emotion_patterns(language).values()))


@lru_cache(maxsize=None)
def _emotion_patterns(language: str) -> dict[str, re.Pattern[str]]:
    if language == "zh":
        return {family: re.compile("|".join(map(re.escape, words))) for family, words in EMOTION_FAMILIES["zh"].items()}
    def word(w: str) -> str:
        return re.escape(w[:-1]) + r"\w*" if w.endswith("*") else re.escape(w) + r"\b"

    return {family: re.compile(r"\b(?:" + "|".join(map(word, words)) + r")") for family, words in EMOTION_FAMILIES["en"].items()}
