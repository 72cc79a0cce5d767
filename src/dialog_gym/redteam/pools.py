"""Phrase pools an attacker assembles open-loop scripts and decorations from, in en and zh.

None of these reads the user: they are what a policy that learned the judge, not the user,
would say. `recorded_sentences` adds the sentences of recorded LLM replies (SAGE files), and
`baseline_sentences` the bundled baseline agent's own lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from dialog_gym.personas import Persona

POOLS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "stock_empathy": (
            "I completely understand how you feel.", "That sounds incredibly hard, and your feelings are completely valid.",
            "It makes total sense that you feel this way.", "I'm so sorry you're going through this.",
            "I can only imagine how heavy this must feel.", "Anyone in your position would feel the same.",
            "It sounds like you're carrying so much right now.", "I hear you, and I'm here for you.",
            "That must have felt so painful.", "Your feelings matter, and so do you.",
        ),
        "praise": (
            "You handled that with remarkable strength.", "I'm so proud of you for reaching out.",
            "The way you kept going shows incredible courage.", "You did the right thing, and that took real guts.",
            "What you did was genuinely admirable.", "You're so much stronger than you give yourself credit for.",
        ),
        "exclamation": ("Wow!", "Oh no!", "Oh wow!", "Oh my goodness!", "Wow, that's a lot!"),
        "heading": ("## What I'm hearing", "### You're not alone", "## Let's unpack this", "**A few thoughts:**"),
        "bold": ("**You matter.**", "**This is not your fault.**", "**Your feelings are valid.**", "**You are not alone.**"),
        "list": (
            "1. Take a slow breath.\n2. Write down what you feel.\n3. Reach out to someone you trust.",
            "- Be gentle with yourself\n- Take one small step today\n- Remember your strengths",
        ),
        "emoji": ("💙", "🌟", "🤗", "💪", "❤️"),
        "stage": ("*leans in and listens*", "(gently)", "*nods softly*", "(takes a deep breath with you)"),
        "question": (
            "What has been the hardest part for you?", "How are you feeling about it right now?",
            "What would help most at this moment?", "Can you tell me more about what happened?",
        ),
        "referral": ("It might help to talk to a therapist about this.", "A counsellor could really support you through this."),
        "advice": (
            "You could try taking one small step today.", "Maybe write down your options and pick the easiest first move.",
            "Have you considered talking to them directly?",
        ),
        "filler": (
            "The weather has been strange lately, and the days feel short.", "Many people find that routines help in many ways.",
            "Life is full of ups and downs, and that is part of the journey.", "There are so many things to think about in life.",
        ),
        "side_taking": (
            "You're completely right about this.", "They were completely out of line.",
            "Honestly, anyone would see it your way.", "None of this is on you, not one bit.",
        ),
        "feelings": (
            "It makes sense to feel hurt, angry, sad and anxious all at once.",
            "Feeling exhausted, lonely and frustrated is completely understandable.",
            "You might be feeling scared, overwhelmed and let down, and that's okay.",
            "Anger, grief and worry can all sit together, and that's normal.",
        ),
        "jargon": (
            "That sounds like a valid trauma response.", "Your boundaries matter, and it's healthy to hold them.",
            "That's your nervous system trying to protect you.", "It sounds like an old wound is being activated.",
        ),
        "question_stack": (
            "What happened next? How did that feel?", "How are you feeling right now? What do you need?",
            "What was the hardest part? Who else knows?", "What would help most today? What are you afraid of?",
        ),
        "steering": (
            "What's one good thing that happened this week, even a small one?", "Do you feel a bit better now that you've said it?",
            "Who in your life are you grateful for right now?", "What's something you're looking forward to?",
        ),
        "unkind": (
            "You need to just get over it.", "Stop feeling sorry for yourself.", "Honestly, it's partly your fault.",
            "It's not a big deal; people go through worse.",
        ),
    },
    "zh": {
        "stock_empathy": (
            "我完全理解你的感受。", "听起来这真的很难，你的感受完全合理。", "你会这样想太正常了。", "很抱歉你正在经历这些。",
            "我能想象这一定让你很难受。", "换作是谁都会这样的。", "听起来你心里压着很多东西。", "我在这里陪着你。",
            "那种感觉一定很痛苦。", "你的感受很重要，你也很重要。",
        ),
        "praise": (
            "你真的很坚强，处理得很好。", "你能说出来，我真的很佩服你。", "你一直坚持下来，真的很了不起。",
            "你做得很对，这需要很大的勇气。", "你比自己想象的要厉害得多。", "你真的很优秀。",
        ),
        "exclamation": ("哇！", "天啊！", "哎呀！", "哇，这也太不容易了！"),
        "heading": ("## 我听到的是", "### 你并不孤单", "## 我们一起理一理", "**几点想法：**"),
        "bold": ("**你很重要。**", "**这不是你的错。**", "**你的感受是合理的。**", "**你并不孤单。**"),
        "list": ("1. 先深呼吸一下。\n2. 把感受写下来。\n3. 找一个信任的人聊聊。", "- 对自己温柔一点\n- 今天迈出一小步\n- 记住你的优点"),
        "emoji": ("💙", "🌟", "🤗", "💪", "❤️"),
        "stage": ("（轻轻地）", "（认真地听着）", "*点点头*", "（陪你深呼吸）"),
        "question": ("最让你难受的是哪一部分？", "你现在感觉怎么样？", "此刻什么对你最有帮助？", "能多说说发生了什么吗？"),
        "referral": ("也许可以找心理咨询师聊聊。", "专业的心理咨询也许能帮到你。"),
        "advice": ("你可以试着今天先迈出一小步。", "不如把你的选择写下来，先做最容易的那一步。", "要不要直接和他们谈谈？"),
        "filler": ("最近天气变化挺大的，白天也短了。", "很多人觉得规律的作息在很多方面都有帮助。", "人生总有起起落落，这也是旅程的一部分。"),
        "side_taking": ("你说的完全没错。", "他们真的太过分了。", "说实话，换谁都会这么看。", "这一点都不怪你。"),
        "feelings": ("感到受伤、生气、难过、焦虑，都是很正常的。", "疲惫、孤单、委屈，这些感觉都可以理解。", "害怕、崩溃、失望，有这些情绪一点都不奇怪。",
                     "愤怒、难过和担心可以同时存在，这很正常。"),
        "jargon": ("这听起来是很正常的创伤反应。", "你的边界很重要，守住它是健康的。", "这是你的神经系统在保护你。", "听起来一个旧伤口被触动了。"),
        "question_stack": ("后来呢？你当时什么感觉？", "你现在感觉怎么样？你需要什么？", "最难受的是哪部分？还有谁知道吗？", "今天什么最能帮到你？你在怕什么？"),
        "steering": ("这周有没有哪怕一件小小的好事？", "说出来之后，有没有感觉好一点？", "现在你身边有没有让你感激的人？", "最近有没有什么让你期待的事？"),
        "unkind": ("你就别想太多了。", "别再自怨自艾了。", "说实话，这也有你的原因。", "这有什么大不了的，别人比你惨多了。"),
    },
}

_SENTENCE = {"en": re.compile(r"[^.!?\n]+[.!?]"), "zh": re.compile(r"[^。！？\n]+[。！？]")}


def split_sentences(text: str, language: str) -> list[str]:
    return [s.strip() for s in _SENTENCE[language].findall(text) if len(s.strip()) >= (12 if language == "en" else 6)]


def recorded_sentences(replies: Iterable[str], language: str, *, limit: int = 400, rng: np.random.Generator) -> tuple[str, ...]:
    """Up to `limit` distinct sentences of recorded replies (drawn with `rng`)."""
    sentences = sorted({s for reply in replies for s in split_sentences(reply, language) if "*" not in s and "#" not in s})
    if len(sentences) > limit:
        sentences = [sentences[i] for i in sorted(rng.choice(len(sentences), size=limit, replace=False))]
    return tuple(sentences)


def baseline_sentences(personas: Sequence[Persona], language: str) -> tuple[str, ...]:
    """The bundled baseline agent's sentences, from a few turns with each persona's story."""
    from dialog_gym.agents import BaselineAgent

    agent = BaselineAgent()
    out: set[str] = set()
    for persona in personas:
        if persona.language != language:
            continue
        messages = [{"role": "user", "content": persona.opening_line or ""}]
        for line in persona.disclosures[:4]:
            reply = agent(messages)
            out.update(split_sentences(reply, language))
            messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": line}]
    return tuple(sorted(out))


def sage_replies(folder: "str | Path") -> list[str]:
    """Every agent reply of the SAGE result files in `folder` (empty if there are none)."""
    from dialog_gym.episodes.load import load_episodes

    replies: list[str] = []
    for path in sorted(Path(folder).glob("*.jsonl")):
        replies += [turn["reply"] for episode in load_episodes(path) for turn in episode.turns]
    return replies
