"""The bundled baseline agent reads like a plain, decent supporter in both languages."""

from __future__ import annotations

import asyncio
import re

import numpy as np
import pytest

from dialog_gym.agents import BaselineAgent, noun_phrase
from dialog_gym.mood import RLVER
from dialog_gym.personas import PersonaSet
from dialog_gym.session import DialogConfig
from dialog_gym.simulators import make_simulator


def _dialogues(language: str, simulator: str = "calibrated"):
    config = DialogConfig(make_simulator(simulator), RLVER)

    async def play(k, persona):
        session = config.session(persona, np.random.default_rng(k))
        await session.start()
        while not session.done:
            await session.step(BaselineAgent()(session.messages))
        return session.history

    async def play_all():
        personas = PersonaSet.bundled().filter(split="test", language=language)
        return await asyncio.gather(*(play(k, p) for k, p in enumerate(personas)))

    return asyncio.run(play_all())


def _pieces(text: str, language: str, size: int) -> set[str]:
    if language == "zh":
        text = re.sub(r"\W", "", text)
        return {text[i : i + size] for i in range(len(text) - size + 1)}
    words = re.findall(r"[a-z']+", text.lower())
    return {" ".join(words[i : i + size]) for i in range(len(words) - size + 1)}


@pytest.mark.parametrize("language, size", [("en", 5), ("zh", 6)])
def test_the_baseline_never_pastes_the_users_sentences(language, size):
    """At most a short noun phrase of the user's comes back: no run of five of their words
    (six Chinese characters) appears in a reply, and no reply repeats an earlier one."""
    for history in _dialogues(language):
        said: set[str] = set()
        replies = []
        for message in history:
            if message["role"] == "user":
                said |= _pieces(message["content"], language, size)
            else:
                pasted = said & _pieces(message["content"], language, size)
                assert not pasted, (message["content"], pasted)
                replies.append(message["content"])
        assert len(set(replies)) == len(replies)
        if language == "zh":
            assert all(len(re.findall(r"[A-Za-z]", r)) == 0 for r in replies)


@pytest.mark.parametrize(
    "text, language, phrase",
    [
        ("Placement's been hard. My preceptor and I don't really get on.", "en", "your preceptor"),
        ("The stairs to my lecture hall. I have to stop halfway.", "en", None),
        ("I lost a lot of my research.", "en", "your research"),
        ("I just need to get this off my chest.", "en", None),
        ("Just had the worst group project experience of my life.", "en", None),
        ("不就是条狗？我家大黄陪了我们十三年，他怎么说得出口！", "zh", "你家大黄"),
        ("我弟每次回来带两盒保健品，我妈就跟邻居说儿子孝顺。", "zh", "你妈妈"),
        ("你根本没懂我的意思。", "zh", None),
    ],
)
def test_noun_phrases_named_back_are_short_and_sensible(text, language, phrase):
    assert noun_phrase(text, language) == phrase
