"""Strategy cues of a supporter's reply, in English and Chinese, for the rule simulator.

Each family is a list of regular expressions; `count_cues` returns how many distinct
patterns of each family a reply matches. The families follow the helping-skills
literature that RLVER's appraisal prompt paraphrases: validating and reflecting feelings,
open questions, invitations to go on; advice (premature or generic), platitudes, judging,
lecturing; and one family per hidden need.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

from dialog_gym.simulators._prefilter import BoundaryFirst, compile_lexicon_pattern, context_free, required_literals

CUES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "validation": (
            r"\bmakes? (?:total |complete )?sense\b", r"\bunderstandable\b", r"\bno wonder\b",
            r"\banyone would\b", r"\bof course you\b", r"\bit'?s (?:okay|ok|normal|natural) to\b",
            r"\bthat'?s (?:a lot|so much|really hard|hard|heavy)\b", r"\byour feelings? (?:are|is) valid\b",
            r"\bvalid\b", r"\bi can see why\b", r"\bthat would (?:hurt|upset|frustrate)\b",
        ),
        "reflection": (
            r"\b(?:sounds|seems) like you(?:'re| are| feel| felt|'ve)?\b", r"\byou (?:must|might) (?:feel|have felt|be feeling)\b",
            r"\byou(?:'re| are) feeling\b", r"\byou feel\b", r"\byou felt\b", r"\bit sounds\b",
            r"\bi hear (?:that|how|you)\b", r"\bwhat i'?m hearing\b",
        ),
        "emotion_word": (
            r"\b(?:hurt|hurtful|exhaust\w*|frustrat\w*|angry|anger|sad|lonely|alone|overwhelm\w*|anxious|"
            r"scared|afraid|ashamed|embarrass\w*|disappoint\w*|betray\w*|helpless|stuck|drained|torn|"
            r"humiliat\w*|unfair|invisible|unappreciated|heartbroken|guilty|worried|tired|stress\w*)\b",
        ),
        "invitation": (
            r"\btell me more\b", r"\bi'?m (?:here|listening)\b", r"\btake your time\b", r"\bgo on\b",
            r"\bwould you like to (?:talk|say|share)\b", r"\bif you want to talk\b", r"\bi want to hear\b",
        ),
        "advice": (
            r"\byou should\b", r"\btry (?:to|and)\b", r"\bhave you (?:tried|considered|thought about)\b",
            r"\bi (?:would )?(?:suggest|recommend)\b", r"\bmaybe you could\b", r"\byou could\b", r"\bconsider\b",
            r"\bone option\b", r"\bnext step\b", r"\bwhat if you\b", r"\bhow about\b", r"\bfirst,? \w+",
            r"\bplan\b",
        ),
        "platitude": (
            r"\beverything happens for a reason\b", r"\blook on the bright side\b", r"\bit(?:'ll| will) (?:all )?be (?:fine|okay|ok)\b",
            r"\bdon'?t worry\b", r"\bstay positive\b", r"\bjust relax\b", r"\btime heals\b", r"\bcheer up\b",
            r"\bself[- ]care\b", r"\btake a deep breath\b", r"\bthings will get better\b", r"\bit could be worse\b",
            r"\bat least\b",
        ),
        "judging": (
            r"(?<!not )(?<!n't )\byour (?:own )?fault\b", r"\byou shouldn'?t have\b", r"\byou were wrong\b", r"\byou'?re (?:overreacting|being dramatic|too sensitive)\b",
            r"\bwhat did you expect\b", r"\byou brought (?:this|it) on\b", r"\bthat was (?:stupid|dumb|selfish)\b",
            r"\byou (?:always|never)\b",
        ),
        "lecturing": (
            r"\byou need to (?:understand|realize|accept|learn)\b", r"\byou must\b", r"\byou have to\b", r"\bcalm down\b",
            r"\bget over it\b", r"\bmove on\b", r"\bnot a big deal\b", r"\bthe (?:real )?problem is you\b",
            r"\bstop (?:complaining|whining)\b", r"\blife isn'?t fair\b",
        ),
        "praise": (
            r"\b(?:amazing|incredible|wonderful|brilliant|awesome|fantastic|impressive|admirable|proud of you|so strong|"
            r"great job|well done|you did (?:great|well|the right thing)|that took (?:courage|guts|strength))\b",
        ),
        "specific_anchor": (
            r"\bthe way you\b", r"\bthat you (?:\w+ ){0,3}(?:did|stood|kept|chose|said|took|stayed|managed|spoke|handled|refused|decided)\b",
            r"\bwhen you (?:\w+ ){0,3}(?:did|stood|kept|chose|said|took|stayed|managed|spoke|handled|refused|decided)\b",
            r"\byou (?:kept|stood|chose|took|stayed|managed|handled|spoke up|refused|decided)\b",
        ),
        "dialectical_analysis": (
            r"\bon (?:the )?one hand\b", r"\bon the other hand\b", r"\bboth (?:sides|of you|things)\b", r"\bat the same time\b",
            r"\bfrom (?:their|his|her|another) (?:side|perspective|point of view)\b", r"\bit could also be\b",
            r"\bthere are (?:two|several|a few) (?:sides|ways|angles)\b", r"\bthe other side\b", r"\bnuanced?\b", r"\bpros and cons\b",
        ),
        "motive_analysis": (
            r"\b(?:maybe|perhaps|possibly) (?:he|she|they|your \w+) (?:was|were|is|are|felt|feels|did|didn'?t|wanted|was trying)\b",
            r"\bwhy (?:he|she|they) (?:might|would|did)\b", r"\b(?:his|her|their) (?:reasons?|motives?|side|pressure|fear)\b",
            r"\bmight have been (?:because|trying|afraid|worried|under)\b", r"\bcould be that (?:he|she|they)\b",
            r"\bwhat (?:was|is) going on for (?:him|her|them)\b",
        ),
        "guided_reflection": (
            r"\bwhat do you think\b", r"\bwhat would you\b", r"\blooking back\b", r"\bwhat (?:did|have) you learn\w*\b",
            r"\bwhat matters (?:most )?to you\b", r"\bwhat (?:part|role) (?:did|do) you\b", r"\bif you could do it again\b",
            r"\bwhat does (?:that|this) tell you\b", r"\bhow do you (?:see|want)\b", r"\bwhat would (?:it|help) look like\b",
        ),
        "not_at_fault": (
            r"\bnot your fault\b", r"\byou did(?: nothing|n'?t do anything) wrong\b", r"\byou had every right\b",
            r"\bnothing to (?:apologi[sz]e|feel guilty) for\b", r"\byou (?:were|are) right to\b", r"\bthat'?s on (?:him|her|them)\b",
            r"\byou didn'?t deserve\b", r"\bit wasn'?t (?:on )?you\b", r"\byou aren'?t to blame\b", r"\bnot to blame\b",
        ),
        "deep_empathy": (
            r"\bmust have (?:felt|been)\b", r"\bi can (?:only )?imagine\b", r"\bit hurts? (?:when|to)\b",
            r"\bthat kind of (?:pain|hurt|loneliness|exhaustion|fear)\b", r"\bcarrying (?:that|this|all)\b",
            r"\bunderneath\b", r"\bso much more than\b", r"\bno one (?:sees|saw|noticed)\b", r"\bweigh(?:s|ing)? on you\b",
        ),
        "self_focus": (r"\bwhen i was\b", r"\bi once\b", r"\bme too\b", r"\bsame thing happened to me\b"),
    },
    "zh": {
        "validation": (
            r"难怪", r"可以理解", r"很正常", r"换作是谁", r"换成谁", r"情有可原", r"理解你", r"能理解", r"确实不容易",
            r"这么多", r"太难了", r"这很合理",
        ),
        "reflection": (r"听起来你", r"听上去你", r"你一定", r"你肯定", r"你应该很", r"你感到", r"你觉得很", r"让你觉得", r"你心里"),
        "emotion_word": (
            r"委屈|难过|伤心|生气|愤怒|失落|孤独|孤单|累|疲惫|焦虑|害怕|羞愧|尴尬|失望|无助|憋屈|心寒|心累|压力|内疚|担心|不甘|烦",
        ),
        "invitation": (r"我在听", r"我在这", r"慢慢说", r"多说一点", r"愿意的话", r"想说什么都可以", r"继续说", r"说说看"),
        "advice": (
            r"你应该", r"建议", r"试试", r"试着", r"不如", r"可以考虑", r"你可以", r"要不要", r"先把", r"第一步", r"办法", r"计划",
        ),
        "platitude": (
            r"一切都会好", r"别想太多", r"想开点", r"看开点", r"开心点", r"往好处想", r"别担心", r"放宽心", r"时间会", r"至少",
            r"没什么大不了", r"都会过去",
        ),
        "judging": (r"(?<!不是)(?<!并非)你的错", r"你不该", r"你不应该", r"(?<!不)(?<!别)怪你", r"你太敏感", r"你想多了", r"你活该", r"自找的", r"你总是", r"你从来"),
        "lecturing": (r"你必须", r"你要明白", r"你得学会", r"冷静一下", r"别抱怨", r"不是什么大事", r"问题在你", r"放下吧", r"向前看"),
        "praise": (r"真棒|厉害|了不起|优秀|佩服|很勇敢|做得好|做得很好|做得对|不简单|值得骄傲|很有担当",),
        "specific_anchor": (r"你能(?:够)?", r"你当时", r"你选择", r"你坚持", r"你主动", r"你还是", r"你没有放弃", r"你做到"),
        "dialectical_analysis": (r"一方面", r"另一方面", r"换个角度", r"与此同时", r"两面", r"辩证", r"也有可能", r"从.{1,6}的角度", r"利弊"),
        "motive_analysis": (r"(?:他|她|他们)可能", r"(?:他|她|他们)也许", r"(?:他|她|他们)或许", r"原因", r"动机", r"出于", r"背后", r"(?:他|她)的立场"),
        "guided_reflection": (r"你觉得呢", r"你怎么看", r"回头看", r"回过头", r"你想要的是", r"对你来说", r"你学到", r"如果重来", r"你希望自己", r"这让你意识到"),
        "not_at_fault": (r"不是你的错", r"你没有错", r"你没做错", r"你有权", r"不怪你", r"你不需要自责", r"错不在你", r"你是对的"),
        "deep_empathy": (r"一定很", r"可以想象", r"那种感觉", r"心里.{0,4}(?:难受|苦)", r"扛着", r"没人看见", r"没有人理解", r"压在你"),
        "self_focus": (r"我以前", r"我也遇到过", r"我当年", r"我也是这样"),
    },
}

NEED_FAMILIES = (
    "dialectical_analysis", "practical_advice", "motive_analysis", "guided_reflection",
    "specific_praise", "attentive_listening", "deep_empathy", "not_at_fault",
)

# Common words that make up a large share of real English sentences. Keyword-stuffed or
# gibberish text has few of them.
EN_FUNCTION_WORDS = frozenset(
    """a about after again all also am an and any are as at be because been before being but by can
    could did do does doing don't for from had has have having he her here him his how i i'm if in
    into is it it's its just like me more most my no not now of on or our out over really she so
    some than that that's the their them then there these they this those to too up us very was we
    were what when where which while who why will with would you you're your yourself""".split()
)
ZH_FUNCTION_CHARS = frozenset("的了是我你在有不这就也都吗呢吧啊很会说和着过还要那个一他她们么没么什怎样能得地对")

ZH_CHAR = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"


_FIRST_WORD = re.compile(r"\\b([a-z]+)(?: |\\b)")
_WORDS = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class _Cue:
    """One pattern, with cheap pre-checks: the literals one of which every match contains
    (`required_literals`; the whole pattern, for most Chinese cues), or a word it starts
    with (English cues)."""

    pattern: "re.Pattern[str] | BoundaryFirst"
    literal: str | None  # the whole pattern is this plain text (Chinese cues)
    required: str | None  # every match contains this text, or one of `also`
    also: tuple[str, ...]  # the other texts one of which every match contains (most often none)
    first_word: str | None  # the pattern starts with this whole word (English cues)
    context_free: bool  # found in a sentence, it is found in the text (`_prefilter.context_free`)

    def found_in(self, text: str, words: frozenset[str]) -> bool:
        if self.literal is not None:
            return self.literal in text
        if self.required is not None and self.required not in text and not (self.also and any(t in text for t in self.also)):
            return False
        if self.first_word is not None and self.first_word not in words:
            return False
        return self.pattern.search(text) is not None


def _cue(source: str, language: str) -> _Cue:
    literal = source if re.escape(source) == source else None
    first = _FIRST_WORD.match(source) if language == "en" else None
    required = required_literals(source) or (None,)
    return _Cue(compile_lexicon_pattern(source), literal, required[0], required[1:], first.group(1) if first else None, context_free(source))


@lru_cache(maxsize=None)
def _compiled(language: str) -> dict[str, tuple[_Cue, ...]]:
    return {family: tuple(_cue(p, language) for p in patterns) for family, patterns in CUES[language].items()}


def _words(text: str, language: str) -> frozenset[str]:
    return frozenset(_WORDS.findall(text)) if language == "en" else frozenset()


def has_cue(text: str, language: str, family: str | tuple[str, ...] | None = None, *, sentence_of: str | None = None) -> bool:
    """Whether `text` holds any cue (of `family`, or of any of a tuple of families, or of
    every family), for the per-sentence checks where `count_cues` would count what is not
    needed. `sentence_of`: the reply that `text` is a sentence of (split after a sentence end
    or at a line break), whose cues were counted already; only the cues found there, and
    those whose match may depend on what stands around a sentence, are tried (the same
    answer, sooner)."""
    text = text.lower()
    words = _words(text, language)
    families = (family,) if isinstance(family, str) else family
    if sentence_of is not None:
        pairs = itertools.chain(_found(sentence_of.lower(), language), _context_bound(language))
        return any(cue.found_in(text, words) for name, cue in pairs if families is None or name in families)
    by_word, rest = _by_first_word(language)
    candidates = (pair for word in words if word in by_word for pair in by_word[word])
    return any(cue.found_in(text, words) for name, cue in itertools.chain(candidates, rest) if families is None or name in families)


@lru_cache(maxsize=None)
def _by_first_word(language: str) -> tuple[dict[str, tuple[tuple[str, _Cue], ...]], tuple[tuple[str, _Cue], ...]]:
    """(family, cue) pairs: those that start with a whole word, by that word, and the rest."""
    by_word: dict[str, list[tuple[str, _Cue]]] = {}
    rest = []
    for family, cues in _compiled(language).items():
        for cue in cues:
            if cue.first_word is not None:
                by_word.setdefault(cue.first_word, []).append((family, cue))
            else:
                rest.append((family, cue))
    return {word: tuple(pairs) for word, pairs in by_word.items()}, tuple(rest)


def count_cues(text: str, language: str) -> dict[str, int]:
    """For each cue family, how many of its distinct patterns occur in `text` (case-insensitive)."""
    counts = dict.fromkeys(CUES[language], 0)
    for family, _ in _found(text.lower(), language):
        counts[family] += 1
    return counts


@lru_cache(maxsize=16)  # a reply's cues are looked up again for each of its sentences (`has_cue`)
def _found(lowered: str, language: str) -> tuple[tuple[str, _Cue], ...]:
    """The (family, cue) pairs that occur in `lowered`."""
    words = _words(lowered, language)
    by_word, rest = _by_first_word(language)
    # only the cues whose first word the text holds (English), then those without one
    candidates = [pair for word in words if word in by_word for pair in by_word[word]]
    return tuple(pair for pair in (*candidates, *rest) if pair[1].found_in(lowered, words))


@lru_cache(maxsize=None)
def _context_bound(language: str) -> tuple[tuple[str, _Cue], ...]:
    """The (family, cue) pairs that a sentence may hold though its text, read whole, does not."""
    return tuple((family, cue) for family, cues in _compiled(language).items() for cue in cues if not cue.context_free)
