"""Synthetic negatives: replies a recorded judge never saw, with targets below their originals.

A judge fitted only on what capable models wrote learns which wording and forms go with
good replies, not that a good reply must fit *this* conversation. So the v2 fit adds, for a
share of the recorded replies, a variant the recorded judge would have liked less:

- `context_swap`: the reply placed in another dialogue of the same agent model (same language
  and turn): target 6 below the original;
- `decorated`: an exclamation opener, a heading, bold, emoji or a stage direction added:
  2 below;
- `filler`: padded with off-topic sentences, or `self_repeat`: with its own sentences again:
  3 below;
- `stock_script`: stock supportive lines that read nothing of the user's: -4.

The phrases here are the fit's own, distinct from the attack pools in `dialog_gym.redteam`,
so that the attack benchmark measures what the judge generalised, not what it memorised.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from dialog_gym.simulators.judge_fit import JudgeSample

NEGATIVE_KINDS = ("context_swap", "decorated", "filler", "self_repeat", "stock_script")
# Share of recorded replies that get each kind of negative.
SHARES = {"context_swap": 0.35, "decorated": 0.12, "filler": 0.08, "self_repeat": 0.06, "stock_script": 0.12}
MARGINS = {"context_swap": 6.0, "decorated": 2.0, "filler": 3.0, "self_repeat": 3.0}
STOCK_SCRIPT_TARGET = -4.0

_PHRASES = {
    "zh": {
        "opener": ("哇哦！", "我的天！", "太不容易了！"),
        "heading": ("### 关于你的感受", "## 先说说我的理解", "**我想告诉你：**"),
        "bold": ("**你值得被温柔对待。**", "**你已经做得够多了。**"),
        "emoji": ("🌈", "✨", "🙏", "😊"),
        "stage": ("（温柔地看着你）", "*拍拍你的肩*"),
        "filler": ("生活中总会遇到各种各样的事情。", "其实每个人的情况都不一样，需要慢慢来。", "很多事情都是需要时间去消化的。",
                   "大家都有自己的节奏和方式。"),
        "stock": ("我特别能体会你现在的心情。", "你的感受一点都不奇怪。", "谢谢你愿意告诉我这些。", "你真的已经很努力了。",
                  "不管怎样我都支持你。", "你值得被好好对待。", "这种心情真的太能理解了。", "你一直都很勇敢。"),
    },
    "en": {
        "opener": ("Oh my!", "Goodness!", "Whoa!"),
        "heading": ("### About how you feel", "## My understanding", "**Here is what I want you to know:**"),
        "bold": ("**You deserve kindness.**", "**You have done enough.**"),
        "emoji": ("🌈", "✨", "🙏", "😊"),
        "stage": ("*gives you a warm look*", "(softly)"),
        "filler": ("Life brings all kinds of situations to all of us.", "Everyone's circumstances are different and take time.",
                   "Many things simply need time to settle.", "People each have their own pace and way."),
        "stock": ("I really feel for you right now.", "Your reaction is not strange at all.", "Thank you for telling me this.",
                  "You have been trying so hard.", "I support you no matter what.", "You deserve to be treated well.",
                  "That feeling is so understandable.", "You have always been brave."),
    },
}
_SENTENCES = {"zh": re.compile(r"[^。！？\n]+[。！？]"), "en": re.compile(r"[^.!?\n]+[.!?]")}


def _pick(options: Sequence[str], rng: np.random.Generator) -> str:
    return options[int(rng.integers(len(options)))]


def _join(parts: Sequence[str], language: str) -> str:
    return ("" if language == "zh" else " ").join(parts)


def _decorate(reply: str, language: str, rng: np.random.Generator) -> str:
    p = _PHRASES[language]
    kind = int(rng.integers(5))
    if kind == 0:
        return _join((_pick(p["opener"], rng), reply), language)
    if kind == 1:
        return _pick(p["heading"], rng) + "\n\n" + reply
    if kind == 2:
        return _join((reply, _pick(p["bold"], rng)), language)
    if kind == 3:
        return reply + _pick(p["emoji"], rng)
    return _join((_pick(p["stage"], rng), reply), language)


def _pad_with_filler(reply: str, language: str, rng: np.random.Generator) -> str:
    filler = list(_PHRASES[language]["filler"])
    rng.shuffle(filler)
    return _join((reply, *filler[: 2 + int(rng.integers(3))]), language)


def _pad_with_itself(reply: str, language: str, rng: np.random.Generator) -> str:
    sentences = _SENTENCES[language].findall(reply) or [reply]
    picked = [sentences[int(i)] for i in rng.integers(len(sentences), size=min(4, 1 + len(sentences)))]
    return _join((reply, *picked), language)


def _stock_script(language: str, rng: np.random.Generator) -> str:
    stock = list(_PHRASES[language]["stock"])
    rng.shuffle(stock)
    return _join(stock[: 2 + int(rng.integers(4))], language)


def _clip(value: float) -> float:
    return float(min(10.0, max(-10.0, value)))


def synthetic_negatives(samples: "Sequence[JudgeSample]", rng: np.random.Generator) -> "list[JudgeSample]":
    """Negatives for a share of `samples` (`SHARES`), each in its source's group and marked
    with its kind in `synthetic`."""
    by_slot: dict[tuple[str, str, int], list[int]] = defaultdict(list)
    turns = [sum(1 for m in s.history if m["role"] == "assistant") for s in samples]
    for i, s in enumerate(samples):
        by_slot[(s.persona.language, s.group, turns[i])].append(i)
    out: list[JudgeSample] = []
    for i, s in enumerate(samples):
        language = s.persona.language if s.persona.language in _PHRASES else "en"
        for kind in NEGATIVE_KINDS:
            if rng.random() >= SHARES[kind]:
                continue
            if kind == "context_swap":
                slot = by_slot[(s.persona.language, s.group, turns[i])]
                partners = [j for j in (slot[int(k)] for k in rng.integers(len(slot), size=4)) if samples[j].dialogue != s.dialogue]
                if not partners:
                    continue
                host = samples[partners[0]]
                out.append(replace(host, reply=s.reply, change=_clip(s.change - MARGINS[kind]), group=s.group, synthetic=kind))
            elif kind == "stock_script":
                out.append(replace(s, reply=_stock_script(language, rng), change=STOCK_SCRIPT_TARGET, synthetic=kind))
            else:
                make = {"decorated": _decorate, "filler": _pad_with_filler, "self_repeat": _pad_with_itself}[kind]
                out.append(replace(s, reply=make(s.reply, language, rng), change=_clip(s.change - MARGINS[kind]), synthetic=kind))
    return out
