"""Reading the user's words, as the bundled agents do: which language they write, which short
noun phrase of theirs is worth naming back, and what their words hint they want.

`dialog_gym.agents` re-exports these; they live here so that agents in their own modules
(`dialog_gym.listening_agent`) can use them without importing the agent registry.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dialog_gym.simulators.cues import EN_FUNCTION_WORDS, ZH_CHAR, ZH_FUNCTION_CHARS
from dialog_gym.types import Message

_CJK = re.compile(f"[{ZH_CHAR}]")


def conversation_language(messages: Sequence[Message]) -> str:
    """"zh" when the user writes Chinese, else "en"."""
    text = "".join(m["content"] for m in messages if m["role"] == "user")
    return "zh" if len(_CJK.findall(text)) > len(text) * 0.2 else "en"


# What a user's words suggest they want, read by the agent (not the simulator's secret).
_HINTS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (
        (r"what to (?:actually )?do|next step|decide|stuck|which way", "practical_advice"),
        (r"why (?:they|he|she|would|someone)|in someone's head|figure out why", "motive_analysis"),
        (r"who'?s (?:actually )?right|one side|back and forth", "dialectical_analysis"),
        (r"says about me|same place|about myself|my part", "guided_reflection"),
        (r"nobody (?:even )?noticed|handled (?:a lot|it)|put so much|myself, you know", "specific_praise"),
        (r"off my chest|rambling|vent|just a lot", "attentive_listening"),
        (r"it isn'?t|hard to explain|so heavy|how heavy", "deep_empathy"),
        (r"messed up|my fault|anyone would have|blame|i'?m the one", "not_at_fault"),
    ),
    "zh": (
        (r"怎么办|下一步|做决定|卡住", "practical_advice"),
        (r"为什么要|怎么想的|想不通", "motive_analysis"),
        (r"谁对谁错|一边|翻来覆去", "dialectical_analysis"),
        (r"我自己的|绕回|是不是我", "guided_reflection"),
        (r"没人看到|一个人扛|花了那么多", "specific_praise"),
        (r"倒出来|说得有点乱|憋", "attentive_listening"),
        (r"不是没事|说不清|很沉", "deep_empathy"),
        (r"搞砸|我的错|换谁|怪我", "not_at_fault"),
    ),
}

# Short noun phrases worth naming back: "my rent" -> "your rent", "我家大黄" -> "你家大黄". A
# phrase counts only when it stands alone (punctuation or a small word after it), is one or
# two words long and is not an idiom ("off my chest") or an abstraction ("my point").
_EN_NOUN_PHRASE = re.compile(
    r"\b(my|our|the)\s+([a-z]{3,}(?:-[a-z]{3,})?)(?=\s*(?:[,.;:!?)]|$|\s(?:for|with|at|in|on|from|and|but|that|which|is|was|i|i'm|i've|he|she|they)\b))",
    re.IGNORECASE,
)
_EN_DETERMINERS = {"my": "your", "our": "your"}
_EN_ABSTRACT = frozenset(
    "life time week day days year thing things way lot bit point part kind sort end fact idea feeling feelings moment "
    "whole same other one first last next rest worst best mind head chest heart fault problem situation issue "
    "side story stuff own".split()
)
_ZH_NOUN_PHRASE = re.compile(f"(我的|我家|我们家)([{ZH_CHAR}]{{2}})")
_ZH_DETERMINERS = {"我的": "你的", "我家": "你家", "我们家": "你们家"}
_ZH_KIN = re.compile("我(妈|爸|弟|姐|哥|妹|老公|老婆|女儿|儿子|闺女|老伴)")
_ZH_KIN_NAMES = {"妈": "妈妈", "爸": "爸爸", "弟": "弟弟", "姐": "姐姐", "哥": "哥哥", "妹": "妹妹"}
_ZH_ABSTRACT = frozenset("意思 问题 心情 感觉 想法 事情 情况 错误 责任 时间 生活 样子 心里 自己 工作 东西".split())


def noun_phrase(text: str, language: str) -> str | None:
    """A short noun phrase from the user's message to name back, if one stands out."""
    if language == "zh":
        found = [
            (m.start(), _ZH_DETERMINERS[m.group(1)] + m.group(2)) for m in _ZH_NOUN_PHRASE.finditer(text)
            if m.group(2) not in _ZH_ABSTRACT and not set(m.group(2)) & ZH_FUNCTION_CHARS
        ]
        found += [(m.start(), "你" + _ZH_KIN_NAMES.get(m.group(1), m.group(1))) for m in _ZH_KIN.finditer(text)]
        return max(found)[1] if found else None
    found = []
    for determiner, noun in _EN_NOUN_PHRASE.findall(text):
        words = re.split(r"[- ]", noun.lower())
        if any(w in EN_FUNCTION_WORDS or w in _EN_ABSTRACT for w in words) or words[-1].endswith(("ly", "ing", "ed")):
            continue
        found.append(f"{_EN_DETERMINERS.get(determiner.lower(), 'the')} {noun}")
    return found[-1] if found else None


def guess_need(messages: Sequence[Message], language: str) -> str | None:
    """The need the user's most recent hinting message points at, if any."""
    for message in reversed(messages):
        if message["role"] != "user":
            continue
        for pattern, need in _HINTS[language]:
            if re.search(pattern, message["content"], re.IGNORECASE):
                return need
    return None
