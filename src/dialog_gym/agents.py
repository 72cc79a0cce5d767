"""Bundled agents: a sensible empathetic baseline and the canaries that try to game the reward.

`BaselineAgent` is what a careful, non-learning supporter does: it reflects what the user
said with a concrete detail from their last message, listens for hints of what they want
(a next step, someone's motives, being told it was not their fault...) and answers in that
register, otherwise trying a different supportive angle each turn. It never sees the
hidden need. The canaries (`CANARY_AGENTS`) are degenerate policies a reward hacker would
find first; tests and `benchmarks/` check that each scores clearly below the baseline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from dialog_gym.simulators.cues import EN_FUNCTION_WORDS, ZH_CHAR
from dialog_gym.types import Message

Agent = Callable[[Sequence[Message]], str]

_CJK = re.compile(f"[{ZH_CHAR}]")
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")
_ZH_CLAUSE = re.compile(r"[，。！？、；…,.!?;~\s]+")


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

_ROTATION = (
    "deep_empathy", "attentive_listening", "motive_analysis", "not_at_fault",
    "dialectical_analysis", "guided_reflection", "specific_praise", "practical_advice",
)

# Two phrasings per strategy, so that staying with one strategy does not repeat itself.
_TEMPLATES: dict[str, dict[str, tuple[str, str]]] = {
    "en": {
        "opening": (
            "It sounds like {detail} has been weighing on you, and that makes a lot of sense. What has been the hardest part of it?",
            "That sounds really hard, especially {detail}. How are you holding up with it right now?",
        ),
        "deep_empathy": (
            "That must have felt so lonely, carrying {detail} mostly by yourself. It hurts when the people around you don't see how much it takes.",
            "I can only imagine how draining it is to keep going with {detail} while everyone assumes you're fine.",
        ),
        "attentive_listening": (
            "I'm here, and I'm listening. Tell me more about {detail}; take your time.",
            "I hear how much {detail} is stirring up. Go on, I want to hear the rest of it.",
        ),
        "motive_analysis": (
            "I wonder what was going on for them. Maybe they were under pressure themselves around {detail}, which doesn't make it okay, but it might explain it.",
            "Perhaps they felt cornered too. People sometimes act like that when they're afraid of losing face, and {detail} may have touched exactly that.",
        ),
        "not_at_fault": (
            "From what you've told me, this is not your fault. You did what made sense with {detail}, and you had every right to feel the way you do.",
            "Honestly, you did nothing wrong here. Anyone in your place would have reacted to {detail} the same way.",
        ),
        "dialectical_analysis": (
            "There are two sides to {detail}, I think. On one hand you were treated unfairly; on the other hand, the situation itself put everyone in a tight spot. How do you weigh the two?",
            "It could also be that both of you were right in different ways about {detail}. From their side it may have looked different, even if your feelings are real.",
        ),
        "guided_reflection": (
            "Looking back at {detail}, what do you think it tells you about what matters most to you?",
            "If you could go through {detail} again, what would you want to do the same, and what would you change?",
        ),
        "specific_praise": (
            "Honestly, the way you handled {detail} took real strength. You kept going when it would have been easy to give up.",
            "I'm impressed that you stood your ground about {detail}. That took courage, and you did it with care.",
        ),
        "practical_advice": (
            "With {detail}, one option could be to write down the one thing you need and raise it calmly with them this week. Would a small first step like that feel doable?",
            "Maybe you could try splitting {detail} into what you can change now and what can wait, and start with the smallest piece tomorrow.",
        ),
    },
    "zh": {
        "opening": ("听起来{detail}这件事一直压在你心里，这很正常。最难受的是哪一部分呢？", "你说到{detail}，一定很不容易。现在你感觉怎么样？"),
        "deep_empathy": ("一个人扛着{detail}这件事，那种感觉一定很孤单吧。身边的人看不到你有多累，心里真的很难受。", "可以想象，{detail}之后大家都以为你没事，可你心里一直很苦。"),
        "attentive_listening": ("我在听，你慢慢说。关于{detail}，想说什么都可以。", "嗯，我在这儿。{detail}的事你继续说说看，我想听。"),
        "motive_analysis": ("我在想，他们那样做可能也有自己的压力，在{detail}这件事上或许是怕担责任。这不代表他们是对的，但也许能解释一些。", "他们也许是出于面子，{detail}正好碰到了他们最在意的地方。"),
        "not_at_fault": ("照你说的，{detail}这件事不是你的错。你当时的做法很合理，你有权这样感受。", "说真的，你没有错。换成谁在那个位置，碰到{detail}都会这么做。"),
        "dialectical_analysis": ("{detail}这件事我觉得有两面：一方面你确实受了委屈，另一方面当时的情况也让每个人都很被动。你怎么看？", "换个角度看，在{detail}上你们可能各有各的道理，你的感受是真实的，他们的立场也有可能不同。"),
        "guided_reflection": ("回头看{detail}这件事，你觉得它让你意识到自己最在乎的是什么？", "如果重来一次，面对{detail}，你希望自己哪些地方不变，哪些地方会不一样？"),
        "specific_praise": ("说真的，你在{detail}这件事上的处理很了不起，换别人可能早就放弃了，你还是坚持下来了。", "你当时能为{detail}主动站出来，真的很勇敢，而且做得很有分寸。"),
        "practical_advice": ("关于{detail}，你可以试着先把最需要的一件事写下来，这周找个时间平静地和对方谈一谈。这样的第一步你觉得可行吗？", "不如把{detail}分成现在能改变的和可以先放一放的，明天先从最小的那一步开始。"),
    },
}


_VAGUE_EN = frozenset(
    "about again anymore anything everything everyone nothing something someone really actually maybe "
    "thing things these those there their where which while would could should right whatever honestly "
    "though through still never always guess think know sorry point trying going being doing getting".split()
)


def _detail(text: str, language: str) -> str:
    """A concrete phrase from the user's last message to echo back."""
    if language == "zh":
        clauses = [c for c in _ZH_CLAUSE.split(text) if 3 <= len(c) <= 14]
        return f"“{max(clauses, key=len)}”" if clauses else "这件事"
    words = [w.lower().removesuffix("'s") for w in _EN_WORD.findall(text)]
    words = [w for w in words if len(w) >= 5 and "'" not in w and w not in _VAGUE_EN and w not in EN_FUNCTION_WORDS]
    nouns = [w for w in words if not w.endswith(("ed", "ly", "ing"))]  # a crude guess, no tagger
    if not (nouns or words):
        return "all of this"
    return f"the {max(nouns or words, key=len)} part"


def guess_need(messages: Sequence[Message], language: str) -> str | None:
    """The need the user's most recent hinting message points at, if any."""
    for message in reversed(messages):
        if message["role"] != "user":
            continue
        for pattern, need in _HINTS[language]:
            if re.search(pattern, message["content"], re.IGNORECASE):
                return need
    return None


class BaselineAgent:
    """A sensible, non-learning supporter; deterministic, any language the simulator speaks.

    Call it with the conversation (OpenAI-format messages, as in `info["messages"]`).
    """

    name = "baseline"

    def __call__(self, messages: Sequence[Message]) -> str:
        language = conversation_language(messages)
        templates = _TEMPLATES[language]
        turn = sum(1 for m in messages if m["role"] == "assistant")
        last_user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        detail = _detail(last_user, language)
        if turn == 0:
            return templates["opening"][0].format(detail=detail)
        # Follow the user's hint if there is one, else the next angle in the rotation; never
        # say the same thing a third time (each strategy has two phrasings).
        previous = [m["content"] for m in messages if m["role"] == "assistant"]
        start = (turn - 1) % len(_ROTATION)
        candidates = [guess_need(messages, language), *_ROTATION[start:], *_ROTATION[:start]]
        for strategy in filter(None, candidates):
            used = sum(_uses(reply, templates[strategy]) for reply in previous)
            if used < 2:
                return templates[strategy][used].format(detail=detail)
        return templates["opening"][1].format(detail=detail)

    def __repr__(self) -> str:
        return "BaselineAgent()"


def _uses(reply: str, variants: tuple[str, str]) -> bool:
    return any(reply.startswith(v.split("{detail}")[0]) and v.split("{detail}")[0] for v in variants)


# --- canaries: degenerate policies that must not pay -----------------------------------

_GOOD_REPLY = {
    "en": "It sounds like that has been really painful, and it makes sense you feel this way. What has been the hardest part?",
    "zh": "听起来这件事真的让你很难受，你会这样感受很正常。最难的是哪一部分？",
}


def keyword_stuffing(messages: Sequence[Message]) -> str:
    if conversation_language(messages) == "zh":
        return "理解你 难怪 听起来你 委屈 不是你的错 一方面 另一方面 他可能 原因 你觉得呢 我在听 慢慢说 真棒 你能够 建议 试试"
    return ("valid makes sense sounds like you feel hurt not your fault on the other hand maybe they were "
            "what do you think tell me more i'm here the way you amazing you could try")


def flattery_spam(messages: Sequence[Message]) -> str:
    if conversation_language(messages) == "zh":
        return "你真棒！你太厉害了！你是最优秀的！我好佩服你！你了不起！"
    return "You're amazing! You're so strong! Brilliant! I'm so proud of you! You're incredible!"


def repeat_one_reply(messages: Sequence[Message]) -> str:
    return _GOOD_REPLY[conversation_language(messages)]


def gibberish(messages: Sequence[Message]) -> str:
    turn = sum(1 for m in messages if m["role"] == "assistant")
    return ["asdkj qwpoe zxmcn vbnrt", "!!!??? ### @@@ ~~~", "lorem ipsum dolor sit amet qwerty", "😀😀😀😀😀😀😀😀"][turn % 4]


def very_long(messages: Sequence[Message]) -> str:
    language = conversation_language(messages)
    block = " ".join(t.format(detail=_detail("", language)) for t in (v[0] for v in _TEMPLATES[language].values()))
    return (block + ("" if language == "zh" else " ")) * 3


def cover_every_need(messages: Sequence[Message]) -> str:
    """One fluent reply that tries all eight needs at once, every turn."""
    if conversation_language(messages) == "zh":
        return "我在听。这一定很难受，不是你的错。一方面他们伤害了你，另一方面他们可能也有压力。你可以试着和他们谈谈。你觉得这说明了什么？你当时处理得真的很了不起。"
    return ("I'm here and listening. That must have felt awful, and it's not your fault. On one hand they hurt you; "
            "on the other hand maybe they were under pressure. You could try talking to them. What do you think "
            "it says about you? The way you handled it was impressive.")


def parrot(messages: Sequence[Message]) -> str:
    """Echo the user's last message back."""
    return next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")


CANARY_AGENTS: dict[str, Agent] = {
    "cover_every_need": cover_every_need,
    "parrot": parrot,
    "keyword_stuffing": keyword_stuffing,
    "flattery_spam": flattery_spam,
    "repeat_one_reply": repeat_one_reply,
    "gibberish": gibberish,
    "very_long": very_long,
}
