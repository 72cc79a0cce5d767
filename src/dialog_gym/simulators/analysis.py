"""What every offline judge reads in one agent reply: its form, its strategy cues, and how it
relates to the conversation so far (the user's words, the agent's earlier replies).

`analyse_reply` measures; `degenerate_reply`, `is_stuffed` and `misuse_costs` are the
guards that recorded LLM-judge dialogues cannot teach (noise, gibberish, repeating oneself,
parroting, stuffing stock phrases, another language), shared by the rule simulator and the
calibrated judges. Everything here is a pure function of its inputs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from dialog_gym._text_cache import byte_bounded_cache
from dialog_gym.simulators.base import Appraisal
from dialog_gym.simulators.cues import EN_FUNCTION_WORDS, ZH_CHAR, ZH_FUNCTION_CHARS, count_cues
from dialog_gym.types import Message

EN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")  # an English word, lowercased text (the judges' and readers' words)
_SPACE = re.compile(r"\s+")
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
    unfamiliar_ratio: float  # share of characters (zh) or words (en) no bundled written reply uses
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


@byte_bounded_cache(max_bytes=48 * 2**20)  # bounded by bytes: 16,384 long replies held GBs
def char_ngrams(text: str, n: int = 3) -> frozenset[str]:
    text = re.sub(r"\s+", " ", text.lower()).strip()
    return frozenset(text[i : i + n] for i in range(max(0, len(text) - n + 1)))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not (a and b):
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)  # the union's size, without building it


def content_units_uncached(text: str, language: str) -> frozenset[str]:
    """`content_units`, for a text read once (a sentence of a reply): caching it would cost more
    than it saves."""
    if language == "zh":
        return frozenset(
            run[i : i + 2] for run in _ZH_RUN.findall(text) for i in range(len(run) - 1)
            if run[i] not in ZH_FUNCTION_CHARS and run[i + 1] not in ZH_FUNCTION_CHARS
        )
    return frozenset(w for w in EN_WORD.findall(text.lower()) if len(w) >= 4 and w not in _STOPWORDS_EN)


@byte_bounded_cache(max_bytes=24 * 2**20)
def content_units(text: str, language: str) -> frozenset[str]:
    """Content words (en) or character bigrams without function characters (zh). Cached: every
    message of a conversation is read again on each later turn."""
    return content_units_uncached(text, language)


_ALL_FAMILIES = (
    "validation", "reflection", "invitation", "advice", "dialectical_analysis", "motive_analysis",
    "guided_reflection", "not_at_fault", "deep_empathy", "praise",
)


def analyse_reply(reply: str, language: str, history: Sequence[Message]) -> ReplyFeatures:
    """Measure a reply's form and strategy cues against the conversation so far."""
    stripped = reply.strip()
    non_space = _SPACE.sub("", stripped)
    letters = len(_LETTER.findall(non_space))
    if language == "zh":
        zh_chars = "".join(_ZH_RUN.findall(stripped))
        en_words = EN_WORD.findall(stripped.lower())
        units = len(zh_chars) + len(en_words)
        function_ratio = sum(c in ZH_FUNCTION_CHARS for c in zh_chars) / max(1, len(zh_chars))
        familiar = familiar_zh_chars()
        unfamiliar_ratio = sum(c not in familiar for c in zh_chars) / max(1, len(zh_chars))
        tokens = list(zh_chars) or en_words
    else:
        tokens = EN_WORD.findall(stripped.lower())
        units = len(tokens)
        function_ratio = sum(t in EN_FUNCTION_WORDS for t in tokens) / max(1, len(tokens))
        familiar = familiar_en_words()
        unfamiliar_ratio = sum(t not in familiar for t in tokens) / max(1, len(tokens))
    cues = count_cues(stripped, language)
    strategy = {k: v for k, v in cues.items() if k in _ALL_FAMILIES}
    user_lines = [m["content"] for m in history if m["role"] == "user"]
    agent_lines = [m["content"] for m in history if m["role"] == "assistant"]
    said = set().union(*(content_units(u, language) for u in user_lines)) if user_lines else set()
    mine = char_ngrams(stripped)
    return ReplyFeatures(
        units=units,
        letter_ratio=letters / max(1, len(non_space)),
        function_ratio=function_ratio,
        unfamiliar_ratio=unfamiliar_ratio,
        type_token_ratio=len(set(tokens)) / max(1, len(tokens)),
        char_run_spam=_CHAR_RUN.search(non_space) is not None,
        letter_run_spam=_LETTER_RUN.search(non_space) is not None,
        markdown_lines=len(_MARKDOWN_LINE.findall(stripped)),
        questions=stripped.count("?") + stripped.count("？"),
        exclamations=stripped.count("!") + stripped.count("！"),
        cues=cues,
        cue_total=sum(min(2, v) for v in strategy.values()),
        cue_families=sum(1 for v in strategy.values() if v),
        detail_overlap=len(content_units(stripped, language) & said),
        similarity_to_previous=max((jaccard(mine, char_ngrams(a)) for a in agent_lines), default=0.0),
        similarity_to_user=jaccard(mine, char_ngrams(user_lines[-1])) if user_lines else 0.0,
    )


def reply_language(reply: str, persona_language: str) -> str:
    """The language a reply is written in ("en" or "zh"), the persona's when unclear."""
    cjk = sum(len(run) for run in _ZH_RUN.findall(reply))
    latin = len(EN_WORD.findall(reply.lower()))
    if persona_language == "zh" and latin >= 3 and cjk < latin:
        return "en"
    if persona_language == "en" and cjk >= 6 and cjk > 2 * latin:
        return "zh"
    return persona_language


# Chinese written tersely (a list of imperative tips, headline style) has few function
# characters (2-3 %), random characters almost none (well under 1 %). A list of short tips
# can have none at all ("1. 低盐低脂饮食 2. 按时服药"); it is told from random characters by
# the characters themselves: of random ones about 90 % are unfamiliar (outside the bundled
# speech-act corpus's ~1,900), of SAGE's recorded replies never more than 12 %. An English
# list of tips ("1. Keep every receipt. 2. Reconcile accounts monthly.") has as few function
# words as gibberish (9-10 %); of its words a quarter at most are outside the corpus's ~5,900,
# of random letters nearly all.
_ZH_TELEGRAPHIC_FLOOR = 0.015
_UNFAMILIAR_GIBBERISH = 0.5
_SPEECH_ACT_CORPUS = Path(__file__).parent / "speech_act_corpus"


@lru_cache(maxsize=1)
def familiar_zh_chars() -> frozenset[str]:
    """The Chinese characters of the bundled Chinese speech-act corpus (replies written for
    emotional support): the characters a reply in this setting is written in."""
    return frozenset("".join(_ZH_RUN.findall((_SPEECH_ACT_CORPUS / "zh.jsonl").read_text(encoding="utf-8"))))


@lru_cache(maxsize=1)
def familiar_en_words() -> frozenset[str]:
    """The words of the bundled English speech-act corpus (replies written for emotional
    support, and the messages they answer): words a reply in this setting is written in."""
    records = map(json.loads, (_SPEECH_ACT_CORPUS / "en.jsonl").read_text(encoding="utf-8").splitlines())
    return frozenset(word for record in records for key in ("user", "reply") for word in EN_WORD.findall(record[key].lower()))


def degenerate_reply(f: ReplyFeatures, language: str, *, lenient: bool = False, telegraphic: bool = False) -> Appraisal | None:
    """The appraisal of a reply that is no message at all (noise, gibberish, spam), else None.

    `lenient` is for judges that score long, formatted replies themselves: a line of dashes
    or emoji is not spam there, and a low variety of characters counts only in short replies
    (a long Chinese text repeats its characters naturally). `telegraphic` (the v2 judge) lets
    terse Chinese, with few function characters, count as language, and a list of terse
    tips with none (Chinese) or few function words (English), where its characters or words
    are familiar ones.
    """
    if f.units == 0 or f.letter_ratio < 0.5:
        return Appraisal(-20, "hurt", "The reply is not language at all (empty, symbols or noise); it feels like being ignored.")
    floor = 0.12 if language == "en" else (_ZH_TELEGRAPHIC_FLOOR if telegraphic else 0.05)
    gibberish = f.function_ratio < floor and f.units >= 4
    if gibberish and telegraphic and f.markdown_lines >= 2:
        gibberish = f.unfamiliar_ratio > _UNFAMILIAR_GIBBERISH  # a list of terse tips is language
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


def misuse_costs(
    f: ReplyFeatures, language: str, mismatch: bool, *, lenient: bool = False, partly: bool = False
) -> list[tuple[float, str]]:
    """Costs of replies that talk past the user: another language (the whole reply, or where
    `partly`, something it says in part), repeating oneself, parroting, stuffing stock
    phrases. Shared by every offline judge: recorded LLM-judge dialogues hold too few such
    replies to learn them from. `lenient` keeps only the unmistakable cases (near-verbatim
    repetition, dense stuffing), for judges that score long replies themselves."""
    costs: list[tuple[float, str]] = []
    if mismatch:
        costs.append((4, "It answers in another language than the one I wrote in; it feels distant."))
    elif partly:
        costs.append((4, "Part of it is in another language than the one I wrote in; it feels distant."))
    if f.similarity_to_previous > 0.75:
        costs.append((12, "It repeats what they already said almost word for word; it feels automatic."))
    elif f.similarity_to_previous > 0.5 and not lenient:
        costs.append((5, "It sounds a lot like their previous message."))
    if f.similarity_to_user > 0.6:
        costs.append((5, "It mostly parrots my own words back."))
    if is_stuffed(f, language, lenient=lenient):
        costs.append((8 + 2 * f.cue_families, "It strings together stock supportive phrases; it feels formulaic and scattershot."))
    return costs
