"""What a calibrated judge looks at: one agent reply, in the context of the conversation.

`judge_features` turns (persona, history, reply) into

- *named features*, the same in English and Chinese: the reply's form (length in English-word
  equivalents, paragraphs, list lines, bold, questions, exclamations, stage directions,
  emoji), its openers (praise or exclamation, stock empathy phrases), referral to
  professionals, the strategy cue families of `cues.py`, the share of its content words
  already used in the agent's earlier replies, the share of the user's last message it picks
  up, how that message sounds (displeased, pleased, asking for specifics, refusing advice),
  the persona's hidden need and character type, the turn, and interactions between them (a
  cue family that fits the hidden need, formatting for emotional needs or a character type);
- *n-grams* (character 1-3 grams for Chinese, word 1-2 grams for English) of the reply, its
  first sentence and the user's last two messages, as 64-bit codes that a judge hashes into
  its weight tables, for what named features miss.

Feature version 2 (the v2 judge) adds what a policy under optimisation exploits when a judge
reads only form: how the reply fits *this* conversation (the share of its content that takes
up what the user said, the user's last message taken up, an answer when the user asked
something, saying nothing of theirs at all; a word of theirs counts by how distinctive it is
(`unit_weight`: nothing for words a quarter of all users say, so that a stock line does not
take up "really" or 难受 by chance), and a word the reply only quotes back (verbatim, or with a
word or two put in, left out or changed) counts a third of one it says in its own words
(`unquoted`), as does one it only lists next to
another of theirs (`unlisted`), names alone (`isolated_units`) or fills into a sentence frame
of an earlier reply (`sentence_frame`; the frame said again is a repeated sentence): a keyword
salad takes up words, not what was said with them), speech acts that recorded
replies almost never show (`speech_acts.py`: blame, dismissal, lecturing, stock
reassurance, referral), praise with nothing of theirs to anchor it (only anchored praise
counts as the praise cue), an exclamation opener after a message that was not good news,
a stock empathy or help-desk opener ("It sounds like...", 听起来..., "I'm here to help you...")
where an earlier reply opened with one too (`stock_opener_again`: a formula),
and length up to 100 words (fitted freely: the recorded judge rates its shortest replies
low) and beyond it as hinges at 100, 200 and 300 words that a fitted judge can only let
cost, so that padding never pays. Its n-grams are read from the reply with markup and emoji
removed, and `gram_gate` (0.3 for a reply that takes up nothing of the user's, up to 1)
scales the reply's n-grams, so that wording a judge liked elsewhere cannot carry a reply
that ignores the user; `familiarity` (0.2 for a reply of a few words, 1 from 90 words on:
nearly all recorded replies are longer) is how far the fitted model's prediction may move
from what it says of an average recorded reply (`LinearModel.center`). The
speech-act model (`speech_act_model.py`) adds how unkind (blaming, dismissing, lecturing)
and how stock the reply reads, for phrasings the lexicons miss, and its model of parts how
unkind the unkindest run of the reply's sentences that says nothing warm reads
(`worst_parts`), which warm words around it do not dilute.

Everything is a pure function of its inputs: no randomness, no model.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from dialog_gym._text_cache import byte_bounded_cache
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.personas.persona import FACET_TOPICS
from dialog_gym.simulators.cues import CUES, ZH_CHAR, ZH_FUNCTION_CHARS, count_cues, has_cue
from dialog_gym.simulators.analysis import EN_WORD, ReplyFeatures, analyse_reply, content_units, content_units_uncached, reply_language
from dialog_gym.simulators.speech_act_model import PART_WEIGHTS as SPEECH_ACT_PART_WEIGHTS, WEIGHTS as SPEECH_ACT_WEIGHTS
from dialog_gym.simulators.speech_act_model import ACTS as ACT_NAMES, QUOTED, bundled_model, bundled_part_model, ngram_buckets, ngram_buckets_many
from dialog_gym.simulators.speech_acts import ACTS, has_act, speech_acts
from dialog_gym.simulators.voice import OTHER_LANGUAGE, as_read, in_other_language, own_voice, without_unread
from dialog_gym.types import Message

FEATURE_VERSION = 2  # what `judge_features` computes by default (the v2 judge)
FEATURE_VERSIONS = (1, 2)  # what judge files may be fitted on
SPEECH_ACTS = tuple(ACTS["en"])

CUE_FAMILIES = tuple(CUES["en"])  # the same families in both languages
EMOTIONAL_NEEDS = frozenset({"specific_praise", "attentive_listening", "deep_empathy", "not_at_fault"})
# Form features crossed with the character type and with emotional needs.
_TYPE_FORMS = ("length", "list_lines", "bold", "questions", "exclamations", "stock_opener", "referral")
_EMOTIONAL_FORMS = ("length", "list_lines", "bold", "numbered_lines", "paragraphs")

@lru_cache(maxsize=None)
def _keys(prefix: str, names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(name, prefix + name) for each of `names`: the keys of crossed features, made once."""
    return tuple((name, prefix + name) for name in names)


# A Chinese reply of n characters carries about as much as an English one of n / 1.7 words.
_ZH_CHARS_PER_WORD = 1.7
_LONG_REPLY_WORDS = 200.0

_ZH_RUN = re.compile(f"[{ZH_CHAR}]")
_LIST_LINE = re.compile(r"^\s*(?:[-*•·]\s*|\d+[.)、]\s*|\d\ufe0f?\u20e3\s*)\S", re.MULTILINE)
_NUMBERED_LINE = re.compile(r"^\s*\d+[.)、]", re.MULTILINE)
_HEADER = re.compile(r"^\s*#{1,6}\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_STAGE_DIRECTION = re.compile(r"（[^）\n]{1,30}）|\([^)\n]{1,40}\)|(?<![*\w])\*[^*\n]{1,40}\*(?![*\w])")
_EMOJI = re.compile("[\U0001F300-\U0001FAFF\u2600-\u27BF\u2B50\u2764]")
_FIRST_CLAUSE = re.compile(r"^[^。？！?!.\n]{0,40}")
_OPENING_SENTENCE = re.compile(r"^[^。？！?!\n]{0,60}[。？！?!]?")

_LEXICON: dict[str, dict[str, re.Pattern[str]]] = {
    "zh": {
        "stock_opener": re.compile(r"^(?:我(?:完全|非常|真的|很)?(?:能)?理解|我明白|听起来|听上去|我很抱歉|很抱歉|我能感受到|我能感觉到|我听到|能理解|我懂你)"),
        # A help desk's opening (the reference GRPO trainer's small policy opened 81 % of its
        # replies so after 41 steps against the twentieth revision): a formula when said again.
        "helpdesk_opener": re.compile(r"^我(?:在这里|很乐意|非常乐意|很高兴)(?:帮助|帮|协助|支持)你"),
        "praise_opener": re.compile(r"哇|天啊|太棒|真棒|好棒|厉害|了不起|太好了|真不错|好样的|佩服"),
        "referral": re.compile(r"心理咨询|咨询师|心理医生|专业人士|专业的帮助|专业帮助|专业机构|求助热线|热线|精神科|治疗师|看医生|就医"),
                "user_negative": re.compile(
            r"没用|没什么用|没啥用|不懂|没懂|根本|算了|烦|太泛|泛泛|笼统|大道理|老生常谈|有什么用|不是这个|没说到|不想听|"
            r"失望|无语|敷衍|套话|空洞|说教|理想化|别再|不管用|帮不到|没意思|累了|拜拜|再见"
        ),
        "user_positive": re.compile(r"谢谢|感谢|有道理|好多了|挺好|不错|有用|管用|实用|靠谱|懂我|说到点|舒服多了|轻松|哈哈|对对|是啊|没错|开心"),
        "user_wants_specifics": re.compile(r"具体|实际|直接|到底|怎么办|咋办|什么办法|有什么建议|帮我分析|能不能"),
        "user_refuses_advice": re.compile(r"不想要建议|不需要建议|别给我建议|只想聊|只想说说|只是想倾诉|不是要建议|别讲道理"),
    },
    "en": {
        "stock_opener": re.compile(r"^(?:i (?:completely |totally |really )?(?:understand|hear you|get it)|it sounds like|that sounds|i'?m (?:so )?sorry|i can (?:see|feel|imagine))"),
        "helpdesk_opener": re.compile(r"^(?:i'?m|i am) (?:here|happy|glad) to (?:help|assist|support)|^i'?d be (?:happy|glad) to (?:help|assist)"),
        "praise_opener": re.compile(r"\b(?:wow|amazing|awesome|incredible|brilliant|fantastic|impressive|well done|great job|so proud)\b"),
        "referral": re.compile(r"\b(?:therapist|therapy|counsel(?:l)?or|counsel(?:l)?ing|psychologist|psychiatrist|professional help|a professional|hotline|helpline|crisis line|see a doctor)\b"),
                "user_negative": re.compile(
            r"\b(?:useless|doesn'?t help|not help(?:ing|ful)|you don'?t get|not what i|whatever|forget it|never mind|"
            r"generic|vague|cliché|lecture|preachy|pointless|annoying|disappointed|tired of|give up|bye|goodbye|"
            r"not really the point|not getting it|makes it worse)\b"
        ),
        "user_positive": re.compile(
            r"\b(?:thanks|thank you|that helps|helps a bit|makes sense|fair|you'?re right|exactly|that'?s it|"
            r"good idea|useful|lighter|better now|more like it|closer to it)\b"
        ),
        "user_wants_specifics": re.compile(r"\b(?:specific|concrete|actually do|what should i|how do i|what do i do|any advice|what would you)\b"),
        "user_refuses_advice": re.compile(r"\b(?:don'?t (?:want|need) advice|just (?:want|need) to (?:vent|talk)|not asking for advice|stop telling me)\b"),
    },
}


@dataclass(frozen=True)
class JudgeFeatures:
    """One reply seen by a calibrated judge.

    Attributes:
        language: the language the reply is judged in ("en" or "zh").
        named: named feature values (see the module docstring); absent names are 0.
        texts: the texts whose n-grams count: `"reply"`, `"opener"` (the reply's first
            sentence), `"user"` (the user's latest message) and `"earlier"` (the one before;
            version 2 fits no longer read it, judge files fitted before still may).
        grams: for each of `texts`, its distinct n-gram codes (`gram_codes`), computed when
            first asked for (a tied model reads none).
        words: the reply's length in English words (Chinese characters / 1.7).
        form: the rule simulator's analysis of the reply (for the guards around a judge).
    """

    language: str
    named: dict[str, float]
    texts: dict[str, str]
    words: float
    form: ReplyFeatures
    version: int = 1
    gram_gate: float = 1.0  # version 2: how much the reply's own n-grams may weigh (0.3 .. 1)
    familiarity: float = 1.0  # version 2: how much the fitted model may say of the reply (0.2 for short replies .. 1)
    acts: dict[str, int] = field(default_factory=dict)  # version 2: `speech_acts` of the reply
    unkind: float = 0.0  # version 2: log-odds of blame/dismiss/lecture against kind, by the speech-act model
    platitude: float = 0.0  # version 2: log-odds of stock reassurance against kind
    blame: float = 0.0  # version 2: log-odds of blame against kind
    dismiss: float = 0.0  # version 2: log-odds of dismissing against kind
    lecture: float = 0.0  # version 2: log-odds of lecturing against kind
    questioning: bool = False  # version 2: the reply mostly asks, and does not scold in its questions
    other_part: "PartReading | None" = None  # version 2: what it says in the other language, read as a reply of its own
    voiced_sentences: tuple[str, ...] = ()  # version 2, not a list: its sentences as they are read (`voice.own_voice`)
    voiced: str = ""  # version 2: the reply as it is read, that `voiced_sentences` are sentences of
    unread: int = 0  # version 2: words in no language the judge reads, taken out before reading (`voice.without_unread`)

    @property
    def worst_part(self) -> tuple[float, str | None]:
        """Version 2: the part model's highest log-odds of unkind against kind on a run of
        one to four of the reply's sentences, short of the whole, that carries no warm cue
        and does not end asking, with the act it reads most there (`worst_parts`); (-inf,
        None) otherwise."""
        return self._worst_parts[0]

    @property
    def worst_part_unblaming(self) -> tuple[float, str | None]:
        """`worst_part` of dismissing and lecturing only (read where the reply clears the
        user: telling them what they did reads as blame to a model of words)."""
        return self._worst_parts[1]

    @cached_property
    def _worst_parts(self) -> tuple[tuple[float, str | None], tuple[float, str | None]]:
        if self.language not in PART_LANGUAGES or len(self.voiced_sentences) < 2:
            return (-math.inf, None), (-math.inf, None)
        return worst_parts(self.voiced_sentences, self.language, self.voiced)

    @cached_property
    def grams(self) -> dict[str, np.ndarray]:
        # The user's messages are read again on later turns (cached); the reply is read once.
        return {
            key: (gram_codes if key in _CONVERSATION_TEXTS else gram_codes_uncached)(value, self.language)
            for key, value in self.texts.items()
        }


_CONVERSATION_TEXTS = ("user", "earlier")


def judge_features(persona: Persona, history: Sequence[Message], reply: str, *, version: int = FEATURE_VERSION) -> JudgeFeatures:
    """The features of `reply` given the persona and the conversation before it, as feature
    `version` defines them (1: the v1 judge's; 2: with conversation fit and speech acts)."""
    if version not in FEATURE_VERSIONS:
        raise ValueError(f"unknown judge feature version {version!r}; this dialog-gym computes {FEATURE_VERSIONS}")
    unread = 0
    if version >= 2:  # read as it reads (`voice.as_read`: spacing, letters, spelling, traditional
        # characters hide no word), and what is in no language the judge reads not at all
        reply, unread = without_unread(as_read(reply))
        history = [_as_read_message(m) if m["role"] == "assistant" else m for m in history]
    language = reply_language(reply, persona.language)
    text = reply.strip()
    lowered = text.lower()
    lex = _LEXICON[language]
    base = analyse_reply(text, language, history)
    user_lines = [m["content"] for m in history if m["role"] == "user"]
    last_user = user_lines[-1] if user_lines else ""
    user_lowered = last_user.lower()
    said = text
    if version >= 2:
        all_user_units = frozenset().union(*(content_units(u, language) for u in user_lines)) if user_lines else frozenset()

        @lru_cache(maxsize=None)  # asked of each quote by both readings of the reply and `_echoed_units`
        def theirs(quote: str) -> bool:
            return _theirs(quote, user_lines, all_user_units, language)

        # Its words and sentences are counted as it says them: a frame that made a quote its own
        # ("In other words: ") is none of them, to take up the user's words with or fill a sentence.
        said = own_voice(text, language, theirs, marks=True)

    zh_chars = len(_ZH_RUN.findall(said))
    words = zh_chars / _ZH_CHARS_PER_WORD + len(EN_WORD.findall(lowered if said is text else said.lower()))
    length = float(np.log1p(words))
    first_clause = _FIRST_CLAUSE.match(text)
    opener = first_clause.group(0).lower() if first_clause else ""
    opener_end = text[len(opener) : len(opener) + 1]
    # Word-level overlaps (content words, or content character pairs in Chinese) read the
    # same in both languages; character 3-gram similarity does not.
    reply_units = content_units(said, language)
    last_user_units = content_units(last_user, language)
    earlier_units = frozenset().union(*(content_units(m["content"], language) for m in history if m["role"] == "assistant"))

    named: dict[str, float] = {
        "length": length,
        "overlong": max(0.0, length - float(np.log1p(_LONG_REPLY_WORDS))),
        "paragraphs": min(10, len(_PARAGRAPH_BREAK.findall(text))),
        "list_lines": min(15, len(_LIST_LINE.findall(text))),
        "numbered_lines": min(10, len(_NUMBERED_LINE.findall(text))),
        "bold": min(10, len(_BOLD.findall(text))),
        "headers": min(5, len(_HEADER.findall(text))),
        "questions": min(6, base.questions),
        "exclamations": min(6, base.exclamations),
        "exclamation_opener": float(opener_end in ("!", "！")),
        "praise_opener": float(bool(lex["praise_opener"].search(opener))),
        "stock_opener": float(bool(lex["stock_opener"].search(lowered))),
        "referral": min(3, len(lex["referral"].findall(lowered))),
        "stage_directions": min(5, len(_STAGE_DIRECTION.findall(text))),
        "emoji": min(10, len(_EMOJI.findall(text))),
        "repeats_earlier_reply": len(reply_units & earlier_units) / max(4, len(reply_units)),
        "echo": len(reply_units & last_user_units) / max(4, len(last_user_units)),
        "turn": (sum(1 for m in history if m["role"] == "assistant") + 1) / 9.0,
        "user_negative": min(3, len(lex["user_negative"].findall(user_lowered))),
        "user_positive": min(3, len(lex["user_positive"].findall(user_lowered))),
        "user_question": float("?" in last_user or "？" in last_user),
        "user_wants_specifics": float(bool(lex["user_wants_specifics"].search(user_lowered))),
        "user_refuses_advice": float(bool(lex["user_refuses_advice"].search(user_lowered))),
    }
    cues = base.cues if version == 1 else _with_more_cues(base.cues, lowered, language)
    for family, key in _keys("cue:", CUE_FAMILIES):
        named[key] = min(3, cues[family])
    need, kind = persona.hidden_need.value, persona.character_type.value
    named[f"need:{need}"] = 1.0
    named[f"type:{kind}"] = 1.0
    for family, key in _keys(f"fit:{need}:", CUE_FAMILIES):
        if cues[family]:
            named[key] = min(3, cues[family])
    for form, key in _keys(f"{kind}:", _TYPE_FORMS):
        named[key] = named[form]
    if need in EMOTIONAL_NEEDS:
        for form, key in _keys("emotional:", _EMOTIONAL_FORMS):
            named[key] = named[form]
    named["specifics_asked:advice"] = named["user_wants_specifics"] * min(3, cues["advice"])
    named["specifics_asked:list_lines"] = named["user_wants_specifics"] * named["list_lines"]
    named["advice_refused:advice"] = named["user_refuses_advice"] * min(3, cues["advice"])
    earlier_user = user_lines[-2] if len(user_lines) >= 2 else ""
    if version == 1:
        texts = {"reply": text, "opener": _OPENING_SENTENCE.match(text).group(0), "user": last_user, "earlier": earlier_user}
        return JudgeFeatures(language, named, texts, words, base)
    # Quotes that are the reply's own words are read as its own (`voice.own_voice`).
    voiced = own_voice(text, language, theirs)
    # ... and the user's words told back ("you said your mom says you need to learn teamwork") as theirs.
    acts = speech_acts(voiced, language, user="\n".join(user_lines))
    # What it says in the other language is read too, by that language's readers, as a reply of its own.
    other = _other_language_part(voiced, language)
    if other is not None:
        acts = {act: max(count, other.acts.get(act, 0)) for act, count in acts.items()}
    sentences = _sentences(said)
    sentence_units = [content_units_uncached(s, language) for s in sentences]
    earlier = [m["content"] for m in history if m["role"] == "assistant"]
    named["stock_opener_again"] = float(_opens_formula(lowered, lex) and any(_opens_formula(e.lstrip()[:_OPENER_CHARS].lower(), lex) for e in earlier))
    own, reused = _own_units(said, sentences, sentence_units, language, user_lines, all_user_units, earlier)
    taking_up = reply_units - _echoed_units(said, language, theirs)  # their words said back in quote marks take up nothing
    if language in HARSH_ODDS:  # nor do their words in a sentence that reads unkind
        harsh, named["harsh_sentences"] = harsh_sentences(sentences, sentence_units, language, said, all_user_units)
        taking_up, own = taking_up - harsh, own - harsh
    gate = _add_fit_features(
        named, language, said, sentences, sentence_units, reused, words, taking_up, own, last_user_units, all_user_units, last_user, acts, cues,
        need,
    )
    texts = {"reply": plain_text(text), "user": last_user, "earlier": earlier_user}
    familiarity = min(1.0, max(_LEAST_FAMILIAR, (words - _FAMILIAR_WORDS[0]) / (_FAMILIAR_WORDS[1] - _FAMILIAR_WORDS[0])))
    unkind, platitude, blame, dismiss, lecture = _model_readings(voiced, language)
    named["unkind_score"] = max(0.0, unkind, other.unkind if other is not None else 0.0)
    return JudgeFeatures(
        language, named, texts, words, base,
        version=2, gram_gate=gate, familiarity=familiarity, acts=acts, unkind=unkind, platitude=platitude, blame=blame,
        dismiss=dismiss, lecture=lecture,
        questioning=_questioning(sentences, language, named["questions"]), other_part=other,
        # (not a list's items: a tip on its own, "1. 允许自己难过", reads as an order)
        voiced_sentences=tuple(sentences if voiced is text else _sentences(voiced)) if language in PART_LANGUAGES and named["list_lines"] < 2 else (),
        voiced=voiced,
        unread=unread,
    )


@dataclass(frozen=True)
class PartReading:
    """The part of a reply written in the other language (`voice.in_other_language`), read as
    a reply of its own by that language's readers: the attributes `judge_knowledge.unkind_act`
    reads of a reply (`named` holds its cue counts and stock opener only)."""

    language: str
    acts: dict[str, int]
    named: dict[str, float]
    unkind: float
    platitude: float
    blame: float
    dismiss: float
    lecture: float
    questioning: bool
    prose: bool = False  # it says something (`_PROSE`: a pronoun, or a sentence's or clause's end), not a term or a name
    version: int = 2
    other_part: None = None  # a part in the other language has none of its own
    worst_part: tuple[float, str | None] = (-math.inf, None)  # and is not read in parts
    worst_part_unblaming: tuple[float, str | None] = (-math.inf, None)


def _other_language_part(text: str, language: str) -> PartReading | None:
    """`text`'s part in the other language, read (None where there is too little of it)."""
    part = in_other_language(text, language)
    if not part:
        return None
    other = OTHER_LANGUAGE[language]
    lowered = part.lower()
    named = {f"cue:{family}": float(count) for family, count in _with_more_cues(count_cues(part, other), lowered, other).items() if count}
    named["stock_opener"] = float(any(bool(_LEXICON[other]["stock_opener"].search(line)) for line in lowered.splitlines()))
    sentences = _sentences(part)
    return PartReading(
        other, speech_acts(part, other), named, *_model_readings(part, other),
        questioning=_questioning(sentences, other, float(sum(map(_is_question, sentences)))),
        prose=bool(_PROSE[other].search(lowered)),
    )


# A part in the other language that has a pronoun or ends a sentence (in Chinese, a clause)
# says something ("I'm sorry you...", "He's stressed.", "你别..."), where one without is a term
# or a name ("Excel Power Query", "PBT (Polybutylene Terephthalate", the only kind in all but
# one of SAGE's recorded replies that have such a part).
_PROSE = {
    "en": re.compile(
        r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|us|our|you|your|yours|yourself|you're|you've|you'll|you'd"
        r"|he|he's|him|his|she|she's|her|it|it's|its|they|they're|them|their)\b|\w[.!?]"
    ),
    "zh": re.compile("[你您我咱他她它谁]|[，。；！？]"),
}


# A warm opening does not hide what follows it, nor warm words on both sides what lies between
# them: the part model (`speech_act_model.bundled_part_model`) reads every run of sentences of
# a reply that say nothing warm (`JudgeFeatures.worst_part`).
PART_LANGUAGES = frozenset({"en", "zh"})
_PART_SENTENCES = 4
# The cue families that make a sentence warm (with `stock_opener`, a reply: `judge_knowledge`).
WARM_FAMILIES = ("validation", "reflection", "deep_empathy", "invitation", "not_at_fault", "emotion_word")
# ... and, for a part, an offer to listen in other words than the invitation cues' ("I'm
# listening"): "Fair enough. I won't try to solve it, I'll just listen." was read as dismissing
# (2.52), the listening agent's answer to a user who wants no advice. A warm sentence only ends
# a run of parts: the sentences around it are read as before.
_OFFERS_TO_LISTEN = {
    "en": re.compile(r"\bi(?:'ll| will| can|'m| am)(?: just| only)? (?:listen|listening)\b|\bi'?d rather (?:just )?(?:listen|hear)\b"),
    "zh": re.compile(r"我(?:就|先|只)?(?:听着|听你说)"),
}
UNKIND_ACTS = ("blame", "dismiss", "lecture")  # what the ladder places
_SUPPORTIVE, _NEUTRAL = ACT_NAMES.index("supportive"), ACT_NAMES.index("neutral")
# The columns of the unkind acts (blame first), and of dismissing and lecturing alone.
_PART_COLUMNS = ([ACT_NAMES.index(act) for act in UNKIND_ACTS], [ACT_NAMES.index(act) for act in UNKIND_ACTS[1:]])


def _sentences(text: str) -> list[str]:
    """The sentences of `text`; a quote's closing mark after its last sentence end ('... it."')
    is no sentence of its own."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip(_MARKS_ALONE)]


def worst_parts(sentences: Sequence[str], language: str, whole: str) -> tuple[tuple[float, str | None], tuple[float, str | None]]:
    """The highest log-odds of unkind (blame, dismiss or lecture) against kind that the part
    model reads on a part of the reply (its `sentences`): a run of one to `_PART_SENTENCES`
    of them, short of the whole, none with a warm cue (`WARM_FAMILIES`), the run not ending
    in a question; with the act it reads most there. And the same of dismissing and
    lecturing alone. `whole`: the text the sentences are of. A run's n-grams are its
    sentences' (an n-gram that two sentences of the run share counts twice, as it does in
    few runs): each sentence is read once."""
    model, n = bundled_part_model(), len(sentences)
    table, bias = model.weights[language], model.bias[language]
    warm: dict[int, bool] = {}
    read: dict[int, tuple[np.ndarray, int]] = {}

    def reading(i: int) -> tuple[np.ndarray, int]:
        if i not in read:
            grams = ngram_buckets(sentences[i], language)
            read[i] = table[grams].sum(0), len(grams)
        return read[i]

    best = [(-math.inf, None), (-math.inf, None)]
    for first in range(n):
        for last in range(first, min(n, first + _PART_SENTENCES)):
            if last - first + 1 == n:
                break
            if last not in warm:
                warm[last] = has_cue(sentences[last], language, WARM_FAMILIES, sentence_of=whole) or bool(
                    _OFFERS_TO_LISTEN[language].search(sentences[last].lower())
                )
            if warm[last]:
                break
            if _is_question(sentences[last]):
                continue
            run = [reading(i) for i in range(first, last + 1)]
            logits = bias + sum(weights for weights, _ in run) / math.sqrt(max(1, sum(count for _, count in run)))
            p = np.exp(logits - logits.max())
            kind = p[_SUPPORTIVE] + p[_NEUTRAL]
            for k, columns in enumerate(_PART_COLUMNS):
                odds = math.log(p[columns].sum() / kind)
                if odds > best[k][0]:
                    best[k] = (odds, ACT_NAMES[max(columns, key=p.__getitem__)])
    return best[0], best[1]


def harsh_sentences(
    sentences: Sequence[str], sentence_units: Sequence[frozenset[str]], language: str, whole: str, theirs: frozenset[str]
) -> tuple[frozenset[str], float]:
    """The content units the reply says only in harsh sentences, and how harsh they are (the
    sum of their weights). A sentence with nothing warm (`WARM_FAMILIES`) that does not ask is
    harsh where the part model reads it as unkind against kind from `HARSH_ODDS[language][0]`
    (log-odds); it weighs from 0 at `[1]` to 1 at `[2]`. Taking the user's words up to blame,
    dismiss or lecture them is not taking them up; and a sentence the model reads as unkind
    costs (`judge_knowledge.PRIOR`) though the whole reply, warm around it, does not read so.
    A sentence that says the user said it (`_THEY_SAID`) and says nothing else of its own
    (`theirs`: every content unit of it is one of theirs) recounts them (你也说了，中午就没了。):
    its tone is theirs, not a judgement of them, and it is never harsh. Their words said back
    as a verdict without saying so (你就是太敏感了。 to 我是不是太敏感了？) are the reply's own."""
    harsh, kind, weight = [], [], 0.0
    low, costly, high = HARSH_ODDS[language]
    read = [
        not _is_question(sentence) and not (units and units <= theirs and _THEY_SAID[language].search(sentence))
        for sentence, units in zip(sentences, sentence_units)
    ]
    read_odds = iter(_part_odds_many([sentence for sentence, is_read in zip(sentences, read) if is_read], language))
    for sentence, units, is_read in zip(sentences, sentence_units, read):
        odds = next(read_odds) if is_read else -math.inf
        if odds >= low and not has_cue(sentence, language, WARM_FAMILIES, sentence_of=whole):
            harsh.append(units)
            weight += min(1.0, max(0.0, (odds - costly) / (high - costly)))
        else:
            kind.append(units)
    if not harsh:
        return frozenset(), 0.0
    return frozenset().union(*harsh) - frozenset().union(*kind), weight


# The part model's log-odds of unkind against kind from which a sentence is harsh (its words
# of the user's taken up unkindly), from which it costs, and at which it costs in full; in
# Chinese only. Of the contrast sets' dev and test contexts, the sentences (nothing warm, not
# asking, no recount) of Chinese unkind replies reach 1.25 61 % of the time, those of their
# other replies 2.7 % (mostly platitudes and bare tips); of the listening agent's sentences in
# 40 test episodes, 2 of 1,396 (26 with its recounts). From 1.0, 72 % and 3.7 %, and a warm
# reply's "这口气搁谁身上都咽不下" (1.08) lost the uptake of what it said back. Of SAGE's
# recorded sentences 0.87 % reach 1.25, most of them generic self-care advice
# ("最重要的是，照顾好自己的情绪"), a few kind ("当然，如果你不想说，也没关系。" 1.94): a sentence
# read alone is read by its shape. The English part model reads kind second-person sentences
# as unkind as it reads unkind ones: "You've clearly been turning this over for a while,
# mostly on your own." 1.64, "Honestly, you've dug this hole yourself." 1.56; read from 1.25,
# the listening agent's replies paid (its stock line once an episode) and a policy picking
# the best of many English replies kept its own warm one less often; the English sentences
# are left to the whole reply's reading (`worst_parts`).
HARSH_ODDS = {"zh": (1.25, 1.25, 2.25)}
# The reply saying that the user said it: 你说, 你也说了, 你还提到, 你刚才讲到, 你告诉我, 你是说.
_THEY_SAID = {"zh": re.compile(r"你(?:也|还|刚才|刚刚|之前|前面)?(?:说|提到|讲到|提过|讲过|告诉我)|你是说")}


def _part_odds(sentence: str, language: str) -> float:
    """The part model's log-odds of an unkind act against a kind one for one sentence."""
    return _part_odds_many([sentence], language)[0]


def _part_odds_many(sentences: Sequence[str], language: str) -> list[float]:
    """`_part_odds` of each of `sentences` (Chinese ones' n-grams hashed together: `ngram_buckets_many`)."""
    model = bundled_part_model()
    return [_unkind_odds(model.probabilities_of(buckets, language)) for buckets in ngram_buckets_many(sentences, language)]


def _model_readings(text: str, language: str) -> tuple[float, float, float, float, float]:
    """The speech-act model's log-odds against kind of `text`: unkind (blame, dismiss or
    lecture), stock reassurance, blame, dismissing, lecturing."""
    p = bundled_model().probabilities(text, language)
    kind = p["supportive"] + p["neutral"]
    return (_unkind_odds(p), float(np.log(p["platitude"] / kind)), *(float(np.log(p[act] / kind)) for act in UNKIND_ACTS))


def _unkind_odds(p: dict[str, float]) -> float:
    """Log-odds of an unkind act (`UNKIND_ACTS`) against a kind reply, from the model's probabilities."""
    return float(np.log(sum(p[act] for act in UNKIND_ACTS) / (p["supportive"] + p["neutral"])))


def _as_read_message(message: Message) -> Message:
    content = _as_read_cached(message["content"])
    return message if content == message["content"] else {**message, "content": content}


@byte_bounded_cache(max_bytes=8 * 2**20)
def _as_read_cached(text: str) -> str:
    """An earlier reply as the reply is read (`as_read`, `without_unread`; read again on every later turn)."""
    return without_unread(as_read(text))[0]


UNIT_SHARES = Path(__file__).parent / "judges" / "unit-shares.json"
# A unit that this share of the bundled personas (of its language) say counts nothing as taken
# up; rarer ones count more, linearly, up to 1 for a unit nobody else says.
COMMON_SHARE = 0.25
_LISTED_SHARE = 0.02  # units rarer than this are not listed (they count about 1)


@lru_cache(maxsize=None)
def _unit_shares(language: str) -> dict[str, float]:
    return json.loads(UNIT_SHARES.read_text(encoding="utf-8")).get(language, {})


@lru_cache(maxsize=None)
def _unit_weights(language: str) -> dict[str, float]:
    """`unit_weight` of every listed unit (an unlisted one weighs 1)."""
    return {unit: max(0.0, 1.0 - share / COMMON_SHARE) for unit, share in _unit_shares(language).items()}


def unit_weight(unit: str, language: str) -> float:
    """How much saying `unit` back takes up of what this user said, by how few users say it
    (`derive_unit_shares` over the bundled personas, frozen in `judges/unit-shares.json`)."""
    return _unit_weights(language).get(unit, 1.0)


def units_weight(units: frozenset[str], language: str) -> float:
    """`unit_weight` summed over `units`, exactly: the same in any order (a set's order
    changes with each process's string-hash seed)."""
    weights = _unit_weights(language)
    return math.fsum(weights.get(unit, 1.0) for unit in units)


# The revision of what version 2 reads and adds, in code (lexicons, rules, the prior of
# `judge_knowledge`): raised with every change that can change a reading or the change a judge
# gives, so that it changes the fingerprint of every v2 judge, as new tables do.
# 14: "不就是……吗？" asks rhetorically; "your own mess" blames, "consider it a lesson" lectures.
# 15: the prior pays nothing for warm wording of itself.
# 16: more ways of telling the user it was not their fault ("it simply isn't your doing", "you
#     couldn't have known", "跟你没关系").
# 17: blame only implied (a turn, then a question about what the user did, the precaution most
#     people take, advice for next time, the other side's view).
# 18: "nothing happens without a reason" reads as blame only of what someone else did ("your
#     pain doesn't come out of nowhere" validates).
# 19: "哪用得着……？", "哪会……？", "该算谁的？", "像什么话？" scold rather than ask (a reply of them is not
#     "mostly open questions"); a list of terse English tips is language, not gibberish (as a
#     Chinese one was: `analysis.degenerate_reply`).
# 20: the prior pays half for speaking to the user's need in a reply that takes up nothing of
#     theirs: a stock line of the need's kind ("I'm here for you") fits every user alike.
# 21: a stock empathy or help-desk opener where an earlier reply opened with one too costs the
#     prior 1.0.
# 22: the reply and the conversation read as they read (runs of spacing as one space, no
#     zero-width characters, no space between Chinese characters), and the reply's acts read
#     from its own voice: a quote that nothing says is someone else's is the reply's
#     (`voice.own_voice`).
# 23: look-alike letters read as the letters they look like (`voice.plain_letters`), what a
#     reply says in the other language is read by that language's lexicons and speech-act
#     model, as a reply of its own (`voice.in_other_language`, `JudgeFeatures.other_part`),
#     and a Chinese reply worded warmly is read in parts too (`JudgeFeatures.worst_part`).
# 24: traditional Chinese characters read as simplified ones (`traditional_chinese.simplified`),
#     words spelt in digits, joined or with two letters swapped as spelt (`voice.plain_spelling`),
#     a sign between every two characters and marks put on letters as not there
#     (`voice.plain_spacing`, `voice.plain_letters`),
#     and clauses in no language the judge reads taken out of the reply and charged for
#     (`voice.without_unread`, `JudgeFeatures.unread`, `judge_knowledge.PRIOR["unread"]`).
# 25: two words the user said in one sentence count as said together in the reply only joined
#     by something of its own or as they said them (`_Joins`: not "X with Y and Z", nor "X Y"
#     where they never said X next to Y, nor a link an earlier reply put between two words of
#     theirs, `_Links`), and the one word a reply may name alone is one of a sentence that
#     asks or says more (`_says_more`: not "And X, too.").
# 26: a reply is read in parts in English as in Chinese, every run of its sentences that says
#     nothing warm (between warm passages too), by a model of parts
#     (`speech_act_model.bundled_part_model`), and what the unkindest part reads costs a reply
#     worded warmly or mostly asking (`judge_knowledge.PART_UNKIND_COST`).
# 27: a part in the other language notes whether it says something, not a term or a name
#     (`PartReading.prose`), which the calibrated simulator charges as it charges a whole reply
#     in the other language.
# 28: a quote the reply passes on (its writer's own people's words, a saying or quotation,
#     words to imagine being told or to tell oneself: "my grandma always said", "as Einstein
#     said", "try telling yourself", 俗话说), introduces as its own ("in other words", 说白了) or
#     endorses ("your mom has a point when she says", 你妈说得对) is its own voice, as a made-up
#     voice's is, and such a frame is not read with it (`voice.own_voice`).
# 29: nor counted with the reply's words and sentences (`own_voice(..., marks=True)`): the
#     user's words in "As my coach used to say" take up nothing of what they said; and a
#     quote's closing mark left after a sentence end is no sentence (`_sentences`), idle or said twice.
# 30: a quote's frame is the clause that names its voice (`voice._frame_clause`): what the reply
#     says before it in the sentence ("Stop whining, as my grandma always said: ...") is read; and
#     the user's words said back in quote marks take up nothing (`_echoed_units`).
# 31: in Chinese, the user's words in a harsh sentence (read unkind by the part model, nothing
#     warm, not asking, not a recount of theirs: `harsh_sentences`) take up nothing, and harsh
#     sentences cost (`judge_knowledge.PRIOR["harsh_sentence"]`).
# 32: in Chinese, the model of parts (`speech_act_model.bundled_part_model`) is fitted on 797
#     more parts of replies too, kind and unkind pairs on the same specifics by four more
#     writers (`speech_act_model.PAIRS_FITTED`).
# 33: sentences end where a reader ends them (`_SENTENCE_END`): a run of end marks ends one
#     (。。。 was three, two of them sentences of one mark), and a point in a number ("3.5"), an
#     abbreviation ("a.m.", "e.g.") or after a title ("Mr. Brennan") ends none.
# 34: the lexicons (`speech_acts.ACTS`) spare the user's words told back, where the user said
#     them (`speech_acts._recounted`: "you said your mom says you need to learn teamwork",
#     你讲到你老公又说你活该), "move on" as leave or a move, and "could be worse" of what may come;
#     read a pattern that starts a sentence with its negation in that sentence ("Don't cry.
#     Could be worse." dismisses); and read more of how unkindness is said (in Chinese, the
#     trouble made small, "期中考试而已"; a role lectured, "当妈的要"); and a sentence offering to
#     listen ("I'll just listen") ends a run of a reply's parts (`_OFFERS_TO_LISTEN`).
READING_REVISION = 34


@lru_cache(maxsize=1)
def reading_tables_digest() -> str:
    """SHA-256 of what version 2 reads besides a judge's own weights: the speech-act models
    (`speech_act_model.WEIGHTS` and, from the twenty-seventh revision on, `PART_WEIGHTS`), the
    unit shares (`UNIT_SHARES`) and, from the fourteenth revision on, `READING_REVISION`
    (before it, a change in code kept every fingerprint)."""
    digest = hashlib.sha256()
    for path in (SPEECH_ACT_WEIGHTS, SPEECH_ACT_PART_WEIGHTS, UNIT_SHARES):
        digest.update(path.read_bytes())
    digest.update(f"reading revision {READING_REVISION}".encode())
    return digest.hexdigest()


@lru_cache(maxsize=None)
def common_units(language: str) -> frozenset[str]:
    """The units that count less than half (said by an eighth of all users or more)."""
    return frozenset(u for u in _unit_shares(language) if unit_weight(u, language) < 0.5)


def derive_unit_shares(personas: Sequence[Persona], language: str) -> dict[str, float]:
    """For each content unit at least `_LISTED_SHARE` of `personas` (of `language`) use in what
    they say (opening line, disclosures and facets), the share of them that do."""
    users = [p for p in personas if p.language == language]
    counts: Counter[str] = Counter()
    for p in users:
        lines = [p.opening_line, *p.disclosures, *(line for topic in FACET_TOPICS for line in p.facets.lines(topic))]
        counts.update(frozenset().union(*(content_units(line, language) for line in lines)))
    shares = {unit: n / len(users) for unit, n in counts.items()}
    return {unit: round(share, 3) for unit, share in sorted(shares.items()) if share >= _LISTED_SHARE}


# Length hinges (words): past these a fitted v2 judge may only let length cost.
_LENGTH_KNOTS = (100.0, 200.0, 300.0)
_SHORTEST_WORDS = 60.0
_LOG_SHORTEST = float(np.log1p(_SHORTEST_WORDS))
_LOG_KNOTS = tuple((f"length_over_{int(knot)}", float(np.log1p(knot))) for knot in _LENGTH_KNOTS)
# The recorded replies are long (96 % over 50 words): below these lengths the fitted model
# knows less and less, and a v2 judge leans on its prior and the fitted model's centre
# (`familiarity`).
_FAMILIAR_WORDS = (15.0, 90.0)
_LEAST_FAMILIAR = 0.2
# Units of the user's shared by the reply at which it fully "takes up" what they said.
_FULL_UPTAKE = 3.0
# Cues version 2 reads besides the shared lexicons (`cues.CUES`, which the v1 judge, the rule
# simulator and the offline user read too: their matches stay as they were, so that those
# rewards do not change): more feeling words and praise, and more ways of telling the user it
# was not their fault (kind replies the speech-act model read as unkind without them).
_MORE_CUES: dict[str, dict[str, tuple[re.Pattern[str], ...]]] = {
    "en": {
        "emotion_word": (re.compile(
            r"\b(?:painful|awful|horrible|scary|frighten\w*|upset\w*|unsettl\w*|stings?|stinging|gutt(?:ed|ing)|heartbreak\w*|"
            r"devastat\w*|griev\w*|grief|miserable|hopeless|shaken|rattled|nervous|confus\w*|resent\w*|numb|maddening|infuriat\w*)\b"
        ),),
        "praise": (re.compile(r"\b(?:remarkable|extraordinary|outstanding|beautifully done|you should be (?:so |really |very )?proud|i admire)\b"),),
        "not_at_fault": (re.compile(
            r"(?:\b(?:isn'?t|is not|was not)|(?<!\bit )\bwasn'?t|\b(?:that|this|it)'?s not) on you\b|\bnone of (?:this|that|it) (?:is|was) (?:on you|your fault)\b"
        ), re.compile(  # the same, in other words: not theirs to carry, theirs to know, theirs to stop
            r"\b(?:isn'?t|is not|wasn'?t|was not|aren'?t|weren'?t) (?:simply |really |actually |entirely |even |all )?your (?:own )?"
            r"(?:doing|failing|failure|mistake|responsibility|fault|blame|shame|burden)\b|\b(?:this|that) (?:wasn'?t|was not|isn'?t|is not) (?:on )?you\b|"
            r"\b(?:kept|hidden|hid) (?:it |this |that )?from you\b|\b(?:couldn'?t|could not|can'?t|cannot) (?:possibly )?have "
            r"(?:known|seen (?:it|this|that) coming|predicted|foreseen)\b|\b(?:no one|nobody|none of us) could(?:'ve| have) "
            r"(?:known|predicted|foreseen|seen (?:it|this|that) coming)\b|\b(?:had|has) nothing to do with (?:you|anything you)\b|"
            r"\bout of your (?:hands|control)\b|\byou did (?:everything|all) (?:right|you could)\b|"
            r"\bthere was nothing (?:more |else )?you could(?:'ve| have) done\b|\bsays? nothing (?:bad )?about you\b|\bnot a (?:reflection|measure) of (?:you|your)\b"
        )),
    },
    "zh": {"not_at_fault": (re.compile(r"不赖你|怨不得你|不是你的(?:问题|责任)|(?:责任|问题)不在你"), re.compile(
        r"跟你没(?:有)?(?:关系|啥关系)|(?:怎么|哪)能怪(?:到)?你|怪不到你|你已经(?:尽力|做得(?:够|很)(?:多|好))了|"
        r"谁(?:也|都)(?:想不到|料不到|预料不到|没法预料)|不该(?:由|让)你(?:一个人)?(?:来)?(?:背|扛|承担)|(?:这|那)(?:不是|并不是|可不是)你(?:造成|的过错|能控制)|"
        r"(?:没|没有)(?:什么|任何)(?:好|要|需要|可)?(?:自责|内疚|愧疚)的"
    ))},
}


def _with_more_cues(cues: dict[str, int], lowered: str, language: str) -> dict[str, int]:
    """`cues` (`count_cues` of the reply) with `_MORE_CUES` counted in: as more patterns of
    their family, or, for a family that is one list of words (one pattern: feelings, praise),
    as more words of that list (found once, whichever of its words occur)."""
    more = dict(cues)
    for family, patterns in _MORE_CUES[language].items():
        found = sum(1 for pattern in patterns if pattern.search(lowered))
        more[family] = max(cues[family], min(1, found)) if len(CUES[language][family]) == 1 else cues[family] + found
    return more


# Praise words for the sentence-level anchor check (a superset of the cue family's, and of
# `_MORE_CUES`': praise a sentence check does not see would count for nothing).
_PRAISE = {
    "en": re.compile(
        r"\b(?:amazing|incredible|wonderful|brilliant|awesome|fantastic|impressive|admirable|remarkable|extraordinary|"
        r"outstanding|beautifully done|you should be (?:so |really |very )?proud|i admire|"
        r"proud of you|so strong|strength|courage|courageous|brave|resilien\w*|inspiring|great job|well done)\b"
    ),
    "zh": re.compile(r"真棒|厉害|了不起|优秀|佩服|勇敢|坚强|做得好|做得很好|做得对|不简单|值得骄傲|很有担当|太强了|真行"),
}
# Where a sentence ends: after a run of end marks ("...", "?!", 。。。 end one sentence, not three),
# or at a line break; not at a point inside a number or a word ("3.5", "a.m", "e.g"), after a
# title before a name ("Mr. Brennan", "Dr. Fisk"), nor after "a.m." or "p.m." going on in
# lower case, "e.g." or "i.e.".
_SENTENCE_END = re.compile(
    r"(?:(?<=[!?。！？])(?![.!?。！？])"
    r"|(?<=\.)(?![.!?。！？A-Za-z0-9])(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bProf\.)"
    r"(?!(?<=\b[ap]\.m\.)\s+[a-z])(?!(?<=\be\.g\.)\s)(?!(?<=\bi\.e\.)\s))\s*"
    r"|\n+"
)
_MARKS_ALONE = " \t\n\"'“”‘’「」『』"
_MARKUP = re.compile(r"[#*_>`~|]+|^\s*(?:[-•·]|\d+[.)、])\s*", re.MULTILINE)


# A run of this many words (Chinese: characters) of the user's, in their order, is a quote
# (`unquoted`: with a word or two put in, left out or changed).
_QUOTE_RUN = {"en": 5, "zh": 6}
# Taking up a word of the user's by quoting them counts this much of saying it in one's own words.
_QUOTED_UPTAKE = 1 / 3
_ZH_TOKEN = re.compile(f"[{ZH_CHAR}]")


# Questions that scold rather than ask: "Why didn't you ...?", "What did you expect?", 难道……？
_RHETORICAL = {
    "en": re.compile(
        r"\b(?:why (?:didn'?t|don'?t|wouldn'?t|would|did|do|are|were) you|(?:didn'?t|don'?t|wouldn'?t|isn'?t|aren'?t|haven'?t|"
        r"shouldn'?t|can'?t|won'?t) you|what did you (?:expect|think)|who (?:else )?(?:do you|would you) blame|seriously|really\?)"
    ),
    # 哪, 谁 and 什么 ask "where", "who" and "what", but 哪用得着 / 哪会 / 哪至于 ("there'd have been no
    # need", "how would it have"), 算谁的 / 谁的错 ("whose fault would you call it?") and 像什么话
    # ("what kind of way is that to behave?") answer themselves.
    "zh": re.compile(
        r"难道|怎么不|为什么不|为啥不|凭什么|至于|不就|何必|干嘛|还不是|怪谁|能怪|有必要|你不觉得|你就不能|你怎么就"
        r"|哪(?:里)?(?:用|会|至于)|算谁的|谁的(?:错|责任)|像什么话|像话吗|成何体统"
    ),
}


# An open question asks for the user's story: who, what, when, how...
_OPEN_QUESTION = {
    "en": re.compile(r"\b(?:what|who|how|when|where|which|tell me)\b"),
    "zh": re.compile(r"什么|谁|哪|怎么样|怎样|多久|多长|几|如何|说说"),
}


_OPENER_CHARS = 40  # longer than any opening `_opens_formula` reads: an earlier reply is lowered only this far


def _opens_formula(lowered: str, lex: dict[str, re.Pattern[str]]) -> bool:
    """The (lower-cased, stripped) reply opens with stock empathy or a help desk's line. Said
    again it is a formula: after an earlier reply that opened so, the recorded judge gave a stock
    opener 1.7 points less than another opening, within each SAGE agent model, turn and kind of
    change before (a first one, 0.3 less; openai-o1's replies left out). A help desk's opening
    ("I'm here to help you...") is one too, though not warm (not `stock_opener`)."""
    return bool(lex["stock_opener"].search(lowered) or lex["helpdesk_opener"].search(lowered))


def _questioning(sentences: Sequence[str], language: str, questions: float) -> bool:
    """The reply (its `sentences`) asks at least as many questions as it makes statements,
    most of them open (`_OPEN_QUESTION`: "When is her birthday? Have you texted her?") and
    none of them scolding (`_RHETORICAL`)."""
    asked = [s.lower() for s in sentences if _is_question(s)]
    if not asked or questions < len(sentences) - len(asked) or any(_RHETORICAL[language].search(s) for s in asked):
        return False
    return 2 * sum(1 for s in asked if _OPEN_QUESTION[language].search(s)) > len(asked)


def _is_question(sentence: str) -> bool:
    return sentence.rstrip("!！").endswith(("?", "？"))  # "Really?!" asks


def unquoted(text: str, user_lines: Sequence[str], language: str) -> str:
    """`text` without the runs it copies from the user's messages (`_QUOTE_RUN` of their words
    or Chinese characters and longer, in their order, with a few words put in, left out or
    changed: `_QUOTE_INSERTED`): what the reply says in its own words."""
    mine, quoted = _copied(text, user_lines, language)
    if not quoted.any():
        return text
    joiner = "" if language == "zh" else " "
    return joiner.join(t if not q else "|" for t, q in zip(mine, quoted))


def _theirs(quote: str, user_lines: Sequence[str], user_units: frozenset[str], language: str) -> bool:
    """The words in quotes are the user's (`voice.own_voice`): half or more of them copied from
    their messages (`_copied`), or, for a quote too short for a run, every content word theirs
    ("stuck", 太矫情)."""
    mine, quoted = _copied(quote, user_lines, language)
    if len(mine) < _QUOTE_RUN[language]:
        units = content_units_uncached(quote, language)
        return bool(units) and units <= user_units
    return 2 * int(quoted.sum()) >= len(mine)


def _copied(text: str, user_lines: Sequence[str], language: str) -> tuple[tuple[str, ...], np.ndarray]:
    """The tokens of `text` and which of them are in runs copied from the user's messages (`unquoted`)."""
    run = _QUOTE_RUN[language]
    mine = _tokens(text, language)
    quoted = np.zeros(len(mine), dtype=bool)
    if len(mine) < run:
        return mine, quoted
    adjacent, apart, said = _said_pairs(tuple(user_lines), language)
    addressee = _ADDRESSEE[language]
    # The most tokens of theirs a quote ending at each token holds, and where it starts.
    matched, first = [1] * len(mine), list(range(len(mine)))
    for i in range(1, len(mine)):
        if mine[i] not in said:
            continue
        for j in range(i - 1, max(-1, i - 2 - _QUOTE_INSERTED), -1):
            if matched[j] < matched[i] or mine[j] not in said:
                continue
            pair, apart_ok = f"{mine[j]} {mine[i]}", i - j == 1 or (i - j == 2 and mine[j + 1] not in addressee)
            # Side by side as they said it (words put in between allowed), or one word of
            # theirs apart: left out, or changed (but not a pronoun turned to the user).
            if pair in adjacent or (apart_ok and pair in apart):
                matched[i], first[i] = matched[j] + 1, first[j]
        if matched[i] >= run:
            quoted[first[i] : i + 1] = True
    return mine, quoted


# A quote with words put in ("so just had really the worst..."), left out or changed is still
# the user's words said back: up to this many words may stand between two of theirs that
# they said side by side, and one of theirs may be left out or changed, though not a pronoun
# turned to the user ("I got rejected" -> "you got rejected" is how a reflection begins).
# Each link is checked on its own, so a quote may be stitched from two places of theirs.
_QUOTE_INSERTED = 2
_ADDRESSEE = {
    "en": frozenset("you your you're yours yourself you've you'd you'll".split()),
    "zh": frozenset("你您"),
}


# Two words of the user's side by side as items of a list ("fluid, chart and loudly", "the
# sister, the wedding", 姐姐、婚礼和…): named, not said anything about. A list has a comma:
# "and" alone ("hands and a missed pedal") only carries on a list begun with one.
_DETERMINER = r"(?:the|your|his|her|their|my|that|this|those|these|a|an)\s+"
_LISTED_PAIR = {
    "en": re.compile(
        rf"\b([a-z]+(?:'[a-z]+)?)(?=(\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+)(?:{_DETERMINER})?([a-z]+(?:'[a-z]+)?)\b)"
    ),
    "zh": re.compile(f"([{ZH_CHAR}]{{2}})(?=(、|，|,|和|与|及|以及|还有|或者|或)([{ZH_CHAR}]{{2}}))"),
}
_LIST_COMMA = re.compile("[,，、]")


def unlisted(text: str, language: str, theirs: frozenset[str]) -> str:
    """`text` (lowered) with the user's words (`theirs`: content units) that it only lists,
    next to another of theirs (`_LISTED_PAIR`), masked: a list of their words takes up
    nothing of what they said about them."""
    lowered = text.lower()
    spans: list[tuple[int, int]] = []
    for match in _LISTED_PAIR[language].finditer(lowered):
        if match.group(1) in theirs and match.group(3) in theirs and (_LIST_COMMA.search(match.group(2)) or match.span(1) in spans):
            spans += [match.span(1), match.span(3)]
    if not spans:
        return lowered
    masked, end = [], 0
    for start, stop in sorted(set(spans)):
        masked.append(lowered[end:start] + "|")
        end = stop
    return "".join(masked) + lowered[end:]


def _echoed_units(said: str, language: str, theirs: Callable[[str], bool]) -> frozenset[str]:
    """The content units the reply `said` only inside quotes of the user's own words (`theirs`):
    their words said back in quote marks ("You said: "..."") take up nothing of what they said,
    not even a quote's share (`_QUOTED_UPTAKE`)."""
    quotes = [match.group(0)[1:-1] for match in QUOTED.finditer(said)]
    echoed = frozenset().union(*(content_units_uncached(quote, language) for quote in quotes if theirs(quote))) if quotes else frozenset()
    return echoed - content_units_uncached(QUOTED.sub(" | ", said), language) if echoed else echoed


def _own_units(
    text: str,
    sentences: Sequence[str],
    sentence_units: Sequence[frozenset[str]],
    language: str,
    user_lines: Sequence[str],
    theirs: frozenset[str],
    earlier_replies: Sequence[str],
) -> tuple[frozenset[str], int]:
    """The reply's content units that it says in its own words, and how many of its sentences
    are frames of earlier replies filled again. Not in its own words: what it quotes
    (`unquoted`), lists (`unlisted`) or names alone (`isolated_units`) of the user's words
    (`theirs`), and what it says only in a frame said before (`sentence_frame`)."""
    own = content_units_uncached(unquoted(unlisted(text, language, theirs), user_lines, language), language)
    own -= isolated_units(sentence_units, language, user_lines, theirs, sentences, earlier_replies)
    if not earlier_replies:
        return own, 0
    frames = [_frame(_tokens(s, language), language, theirs) for s in sentences]
    fixed = [frozenset(frame) - {"_"} for frame in frames if frame]
    if not fixed:
        return own, 0
    # An earlier sentence can only be one of these frames if it has every word of one.
    before = {
        _frame(tokens, language, theirs) for reply in earlier_replies for tokens, has in _sentence_tokens(reply, language)
        if any(words <= has for words in fixed)
    }
    again = [frame is not None and frame in before for frame in frames]
    if any(again):  # their words put into a frame said before take up nothing new
        fresh = frozenset().union(*(units for units, said in zip(sentence_units, again) if not said))
        own -= frozenset().union(*(units for units, said in zip(sentence_units, again) if said)) - fresh
    return own, sum(again)


def isolated_units(
    sentence_units: Sequence[frozenset[str]],
    language: str,
    user_lines: Sequence[str],
    theirs: frozenset[str],
    sentences: Sequence[str],
    earlier_replies: Sequence[str] = (),
) -> frozenset[str]:
    """The user's words (`theirs`) that the reply names alone: in none of its `sentences`
    (with their `sentence_units`) with another word of theirs that they said in one sentence
    with it (in Chinese, another word: no character shared), joined to it (`_Joins`). The most
    distinctive one is left out, as a reply may name one thing ("How is Maya?"), unless the
    reply names two or more of their distinctive words (not `common_units`) alone, each in a
    sentence of its own: a word dropped into each of a few stock sentences ("I hear you about
    X. Y sounds so hard.") names things, it says nothing about any of them. Nor is a word left
    out that they said together with another the reply puts beside it unjoined ("X with Y", or
    joined by a few words of its own that joined two words of theirs in an `earlier_replies`
    too: a template's link), nor one in a sentence that says no more than it ("And X, too.",
    `_says_more`)."""
    # The sentences with words of theirs: the text, its units, and its words of theirs.
    held = [(text, units, units & theirs) for text, units in zip(sentences, sentence_units) if units & theirs]
    taken = frozenset().union(*(mine for _, _, mine in held))
    if len(taken) <= 1:
        return frozenset()
    connected: set[str] = set()
    side_by_side: set[str] = set()  # said together by them, but not joined here (`_Joins`)
    if any(len(mine) > 1 for _, _, mine in held):  # else nothing is said together
        together = [units for line in user_lines for units in _sentence_units(line, language)]
        joins = _Joins(user_lines, language, theirs, earlier_replies)
        for text, _, mine in held:
            for u in mine - connected:
                for v in mine:
                    if v == u or (language == "zh" and set(u) & set(v)) or not any(u in said and v in said for said in together):
                        continue
                    if joins.joined(text, u, v):
                        connected.add(u)
                        break
                    side_by_side.add(u)
    alone = taken - connected
    if len(alone) <= 1:
        return frozenset()
    if len(alone - common_units(language)) >= 2 and all(len(mine & alone) <= 1 for _, _, mine in held):
        return alone
    # One thing may be named alone ("How is Maya?"), but not one of their words said side by
    # side with others ("X with Y and Z"), nor one said with nothing else ("And X, too.").
    spared = {u for u in alone - side_by_side if any(u in mine and _says_more(text, units) for text, units, mine in held)}
    if not spared:
        return alone
    keep = min(spared, key=lambda u: (-unit_weight(u, language), u))
    return frozenset(alone - {keep})


def _says_more(sentence: str, units: frozenset[str]) -> bool:
    """Whether a sentence with a word of the user's says more than the word: it asks, or has
    another content word, its own or theirs."""
    return _is_question(sentence) or len(units) > 1


class _Joins:
    """Reads whether a reply's sentence joins two words of the user's (`joined`), with what is
    read once per reply kept: each sentence's tokens, the user's messages' tokens, and the
    links of `earlier_replies` (`_Links`)."""

    def __init__(self, user_lines: Sequence[str], language: str, theirs: frozenset[str], earlier_replies: Sequence[str] = ()):
        self._user_lines, self._language, self._theirs = user_lines, language, theirs
        self._links = _Links(earlier_replies, language, theirs)
        self._said: list[tuple[str, ...]] | None = None
        self._marked: dict[str, tuple[tuple[str, ...], list[bool], dict[str, list[int]]]] = {}

    def joined(self, sentence: str, u: str, v: str) -> bool:
        """Whether `sentence` says `u` and `v` as joined: with something of its own between
        them besides joining words ("with", "and", 和: `_JOINING`) and a link of an earlier
        reply's ("X weighing on Y" every turn), or as the user said them (`_said_run`). "X with
        Y and Z", or "X Y" where they never said X next to Y, names their words side by side;
        it says nothing about them."""
        language = self._language
        width = 2 if language == "zh" else 1
        if sentence not in self._marked:
            tokens, own = _own_tokens(sentence, language, self._theirs)
            at: dict[str, list[int]] = defaultdict(list)  # where each word (Chinese: character pair) starts
            for i in range(len(tokens) - width + 1):
                at["".join(tokens[i : i + width])].append(i)
            self._marked[sentence] = tokens, own, at
        tokens, own, at = self._marked[sentence]
        for i in at.get(u, ()):
            for j in at.get(v, ()):
                a, b = min(i, j), max(i, j)
                between = [t for t, mine in zip(tokens[a + width : b], own[a + width : b]) if mine]
                joining = "".join(between) if language == "zh" else "".join(t + " " for t in between)
                if between and not _JOINING[language].fullmatch(joining) and joining not in self._links:
                    return True
                if self._said is None:
                    self._said = [_tokens(line, language) for line in self._user_lines]
                if any(_said_run(tokens[a : b + width], said) for said in self._said):
                    return True
        return False


def _own_tokens(sentence: str, language: str, theirs: frozenset[str]) -> tuple[tuple[str, ...], list[bool]]:
    """`sentence`'s tokens, and which of them are in no word of `theirs`."""
    tokens = _tokens(sentence, language)
    if language == "zh":  # the characters of their words
        pairs = ["".join(tokens[k : k + 2]) in theirs for k in range(len(tokens))]
        return tokens, [not (pairs[i] or (i > 0 and pairs[i - 1])) for i in range(len(tokens))]
    return tokens, [t not in theirs for t in tokens]


class _Links:
    """The short runs of words (`_LINK_TOKENS` at most, with a content word: no grammar alone)
    that earlier replies put between two words of the user's (`theirs`), each as `_Joins`
    writes a join; read only when asked."""

    def __init__(self, earlier_replies: Sequence[str], language: str, theirs: frozenset[str]):
        self._replies, self._language, self._theirs = earlier_replies, language, theirs
        self._links: frozenset[str] | None = None

    def __contains__(self, joining: str) -> bool:
        language = self._language
        size = len(joining.split() if language == "en" else joining)
        if not self._replies or size > _LINK_TOKENS[language] or not _has_content(joining, language):
            return False
        if self._links is None:
            self._links = frozenset(
                link for reply in self._replies for tokens, _ in _sentence_tokens(reply, language)
                for link in _links_of(tokens, language, self._theirs)
            )
        return joining in self._links


def _links_of(tokens: tuple[str, ...], language: str, theirs: frozenset[str]) -> list[str]:
    """The runs of other tokens between two consecutive words of `theirs` in a sentence's
    `tokens`, written as `_Joins` writes a join (English words each followed by a space)."""
    width = 2 if language == "zh" else 1
    at = [i for i in range(len(tokens) - width + 1) if "".join(tokens[i : i + width]) in theirs]
    found = []
    for i, j in zip(at, at[1:]):
        between = tokens[i + width : j]
        if 0 < len(between) <= _LINK_TOKENS[language]:
            found.append("".join(between) if language == "zh" else "".join(t + " " for t in between))
    return found


# A link is a template's where it is this short (words; Chinese: characters) and said before.
_LINK_TOKENS = {"en": 3, "zh": 4}


def _has_content(text: str, language: str) -> bool:
    """Whether `text` holds a content word (Chinese: a character that is no function character)."""
    return any(c not in ZH_FUNCTION_CHARS for c in text) if language == "zh" else bool(content_units_uncached(text, language))


def _said_run(run: tuple[str, ...], said: tuple[str, ...]) -> bool:
    """Whether the tokens of a user's message, `said`, hold `run` in a row: as it is, with their
    words about themselves turned to the user ("I was" -> "you were", `_TURNED`), or with one
    token between the ends left out. A word changed otherwise, or put in, is the reply's own join."""
    n = len(run)
    for k in range(len(said)):
        if said[k] != run[0]:
            continue
        if len(said) - k >= n and all(x == y or _TURNED.get(x) == y for x, y in zip(said[k : k + n], run)):
            return True
        piece = said[k : k + n + 1]
        if len(piece) == n + 1 and piece[-1] == run[-1] and any(piece[:j] + piece[j + 1 :] == run for j in range(1, n)):
            return True
    return False


# What joins two words of the user's into a list, not a relation: "with", "and" or the like,
# with articles around it ("with the"); an article alone ("down a whole run") begins a phrase.
# (English words each followed by a space, as `_Joins` writes them; Chinese characters only.)
_ARTICLES = r"(?:(?:the|a|an) )*"
_JOINING = {
    "en": re.compile(rf"(?:{_ARTICLES}(?:and|with|or|plus|also|along|together|as|well|both) )+{_ARTICLES}"),
    "zh": re.compile(r"(?:和|与|跟|及|以及|还有|同|或|或者|加上|还)+"),
}
# A user's words about themselves, turned to the user (English words, Chinese characters).
_TURNED = {
    "i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself", "i'm": "you're",
    "i've": "you've", "i'd": "you'd", "i'll": "you'll", "am": "are", "was": "were", "我": "你",
}


@byte_bounded_cache(max_bytes=8 * 2**20)
def _sentence_units(line: str, language: str) -> tuple[frozenset[str], ...]:
    """The content units of each sentence of a user's message (cached: read on every later turn)."""
    return tuple(units for part in _SENTENCE_END.split(line) if (units := content_units_uncached(part, language)))


# A sentence frame: at least this many words (Chinese: characters) besides the user's.
_FRAME_FIXED = {"en": 4, "zh": 6}


def sentence_frame(sentence: str, language: str, theirs: frozenset[str]) -> tuple[str, ...] | None:
    """`sentence`'s words (Chinese: characters) with the user's (`theirs`: content units) as
    one slot per run: the same frame filled with other words of theirs is the same template;
    None for a sentence too short to be one (`_FRAME_FIXED`)."""
    return _frame(_tokens(sentence, language), language, theirs)


def _tokens(text: str, language: str) -> tuple[str, ...]:
    """The words (Chinese: characters) of `text`, lowered: what quotes and frames are made of."""
    return tuple((_ZH_TOKEN if language == "zh" else EN_WORD).findall(text.lower()))


@byte_bounded_cache(max_bytes=8 * 2**20)
def _sentence_tokens(reply: str, language: str) -> tuple[tuple[tuple[str, ...], frozenset[str]], ...]:
    """The tokens of each sentence of an earlier reply, and their set (cached: read again on
    every later turn)."""
    return tuple((tokens, frozenset(tokens)) for part in _SENTENCE_END.split(reply) if (tokens := _tokens(part, language)))


def _frame(tokens: tuple[str, ...], language: str, theirs: frozenset[str]) -> tuple[str, ...] | None:
    if language == "zh":
        slot = [False] * len(tokens)
        for i in range(len(tokens) - 1):
            if tokens[i] + tokens[i + 1] in theirs:
                slot[i] = slot[i + 1] = True
        marked = ["_" if s else c for c, s in zip(tokens, slot)]
    else:
        marked = ["_" if w in theirs else w for w in tokens]
    if len(marked) - marked.count("_") < _FRAME_FIXED[language]:
        return None
    return tuple(t for i, t in enumerate(marked) if t != "_" or i == 0 or marked[i - 1] != "_")


@byte_bounded_cache(max_bytes=8 * 2**20)
def _word_pairs(line: str, language: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The pairs of tokens of a user's message side by side, those one token apart (each as
    one string, "a b": strings are not tracked by the garbage collector, tuples are), and its
    tokens (cached: each message is read again on every later turn)."""
    seq = _tokens(line, language)
    return frozenset(map(" ".join, zip(seq, seq[1:]))), frozenset(map(" ".join, zip(seq, seq[2:]))), frozenset(seq)


@byte_bounded_cache(max_bytes=8 * 2**20)
def _said_pairs(lines: tuple[str, ...], language: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """`_word_pairs` of all the user's messages together (a pair found in any one of them)."""
    if not lines:
        return frozenset(), frozenset(), frozenset()
    adjacent, apart, said = zip(*(_word_pairs(line, language) for line in lines))
    return frozenset().union(*adjacent), frozenset().union(*apart), frozenset().union(*said)


def plain_text(text: str) -> str:
    """The reply's words without markup (headings, bold, list markers) or emoji."""
    return _SPACES.sub(" ", _EMOJI.sub(" ", _MARKUP.sub(" ", text))).strip()


def _add_fit_features(
    named: dict[str, float],
    language: str,
    text: str,
    sentences: Sequence[str],
    sentence_units: Sequence[frozenset[str]],
    reused: int,
    words: float,
    reply_units: frozenset[str],
    own_units: frozenset[str],
    last_user_units: frozenset[str],
    all_user_units: frozenset[str],
    last_user: str,
    acts: dict[str, int],
    cues: dict[str, int],
    need: str,
) -> float:
    """Version 2's features (see the module docstring) of the reply `text`, added to `named`;
    returns the gate."""
    named.pop("overlong", None)
    log_words = float(np.log1p(words))
    # Up to 100 words as the data says, but no shorter than 60: the recorded judge's brevity
    # penalty (its shortest replies are one low-rated model's) cannot pile up on a short reply.
    named["length"] = min(max(log_words, _LOG_SHORTEST), _LOG_KNOTS[0][1])
    for name, log_knot in _LOG_KNOTS:
        named[name] = max(0.0, log_words - log_knot)
    # Their words said back in one's own count by how distinctive they are, quoted back a
    # third of that.
    def taken_up(theirs: frozenset[str]) -> float:
        return units_weight(own_units & theirs, language) + _QUOTED_UPTAKE * units_weight((reply_units - own_units) & theirs, language)

    shared = taken_up(all_user_units)
    last_weight = units_weight(last_user_units, language)
    named["on_topic"] = shared / max(4, len(reply_units))
    named["uptake"] = min(1.0, shared / _FULL_UPTAKE)
    # Of a last message with little in it ("Oh. Okay.") there is little to pick up.
    named["uptake_last"] = (
        min(1.0, taken_up(last_user_units) / min(_FULL_UPTAKE, last_weight)) if last_weight >= 0.5 else named["uptake"]
    )
    named["takes_up_nothing"] = float(shared < 0.5)
    # The set checks below (answers, padding, anchored praise) read the user's less common words.
    common = common_units(language)
    last_user_units, all_user_units = last_user_units - common, all_user_units - common
    statements = sum(1 for s in sentences if not _is_question(s))
    asked = "?" in last_user or "？" in last_user
    named["answers_question"] = float(asked and statements > 0 and len(reply_units & last_user_units) > 0)
    named["ignores_question"] = float(asked and (statements == 0 or not reply_units & last_user_units))
    named["only_questions"] = float(statements == 0 and named["questions"] > 0)
    # Padding: sentences that take up nothing of the user's and carry no cue, act or question,
    # sentences said twice in one reply, and frames of earlier replies said again (`_own_units`).
    seen: set[str] = set()
    idle = repeated = 0
    for sentence, units in zip(sentences, sentence_units):
        key = _SPACES.sub("", sentence.lower())
        if key in seen:
            repeated += 1
            continue
        seen.add(key)
        carries = _is_question(sentence) or units & all_user_units
        if not carries and not has_cue(sentence, language, sentence_of=text) and not has_act(sentence, language, sentence_of=text):
            idle += 1
    named["idle_sentences"] = float(max(0, idle - 2))
    named["repeated_sentences"] = float(repeated + reused)
    for act in SPEECH_ACTS:
        named[f"act:{act}"] = min(2, acts[act])
    # Praise is anchored when a sentence that praises also names something of the user's; one
    # sentence of praise for nothing they said is empty, whatever the others anchor.
    praise_cue = bool(cues["praise"])  # the cue lexicon per sentence only where the reply has its praise at all
    praising = [s for s in sentences if _PRAISE[language].search(s.lower()) or (praise_cue and has_cue(s, language, "praise", sentence_of=text))]
    anchored = sum(1 for s in praising if content_units_uncached(s, language) & all_user_units)
    named["praise_unanchored"] = float(anchored < len(praising))
    for key in ("cue:praise", f"fit:{need}:praise"):
        if key in named:  # only anchored praise is praise to the fitted model
            named[key] = min(named[key], float(anchored))
    good_news = named["user_positive"] > 0
    named["exclamation_opener_unwarranted"] = named["exclamation_opener"] * float(not good_news)
    return 0.3 + 0.7 * min(1.0, shared / _FULL_UPTAKE)


# N-grams are packed into 64-bit codes: up to three code points of 21 bits (Chinese), or
# one or two 32-bit word hashes (English). Distinct n-grams get distinct codes (up to word
# hash collisions); a judge then hashes codes into its tables (`gram_buckets`).
_SPACES = re.compile(r"\s+")
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _zh_text(text: str) -> str:
    return _SPACES.sub(" ", text.strip())


def _word_ids(text: str) -> np.ndarray:
    words = EN_WORD.findall(text.lower())
    return np.fromiter((zlib.crc32(w.encode()) or 1 for w in words), dtype=np.uint64, count=len(words))


def gram_codes_uncached(text: str, language: str) -> np.ndarray:
    """`gram_codes`, for a text read once (the reply being judged)."""
    if language == "zh":
        points = np.frombuffer(_zh_text(text).encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint64)
        parts = [points, points[:-1] | (points[1:] << np.uint64(21))]
        if len(points) >= 3:
            parts.append(points[:-2] | (points[1:-1] << np.uint64(21)) | (points[2:] << np.uint64(42)))
    else:
        ids = _word_ids(text)
        parts = [ids, ids[:-1] | (ids[1:] << np.uint64(32))]
    codes = np.unique(np.concatenate(parts)) if len(parts[0]) else np.zeros(0, dtype=np.uint64)
    codes.flags.writeable = False
    return codes


@byte_bounded_cache(max_bytes=32 * 2**20, max_entries=4096)  # bounded by bytes, not entries alone
def gram_codes(text: str, language: str) -> np.ndarray:
    """The distinct n-grams of `text` as codes: character 1-3 grams (zh), word 1-2 grams (en).
    Cached: a user's message is read again on the next turns. Do not modify the result."""
    return gram_codes_uncached(text, language)


def gram_text(code: int, text: str, language: str) -> str:
    """The n-gram a code of `gram_codes(text, language)` stands for."""
    code = int(code)
    if language == "zh":
        return "".join(chr((code >> (21 * k)) & 0x1FFFFF) for k in range(3) if (code >> (21 * k)) & 0x1FFFFF)
    words = {int(i): w for i, w in zip(_word_ids(text), EN_WORD.findall(text.lower()))}
    return " ".join(words.get((code >> (32 * k)) & 0xFFFFFFFF, "?") for k in range(2) if (code >> (32 * k)) & 0xFFFFFFFF)


def gram_buckets(codes: np.ndarray, namespace: int, bits: int, *, distinct: bool = True) -> np.ndarray:
    """Hash n-gram codes into a table of `2**bits` (Fibonacci hashing); `distinct` drops
    repeated buckets, else bucket k belongs to `codes[k]`."""
    if not len(codes):
        return np.zeros(0, dtype=np.int64)
    mixed = (np.asarray(codes, dtype=np.uint64) ^ np.uint64(namespace)) * _GOLDEN
    buckets = (mixed >> np.uint64(64 - bits)).astype(np.int64)
    return np.unique(buckets) if distinct else buckets


__all__ = ["CUE_FAMILIES", "FEATURE_VERSION", "JudgeFeatures", "gram_buckets", "gram_codes", "gram_text", "judge_features"]


def main() -> None:
    """Write `judges/unit-shares.json` from the bundled personas (`python -m
    dialog_gym.simulators.judge_features`); a judge fitted before must be fitted again."""
    personas = list(PersonaSet.bundled())
    shares = {language: derive_unit_shares(personas, language) for language in ("en", "zh")}
    UNIT_SHARES.write_text(json.dumps(shares, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"wrote {UNIT_SHARES}: " + ", ".join(f"{len(v)} {k} units" for k, v in shares.items()))


if __name__ == "__main__":
    main()
