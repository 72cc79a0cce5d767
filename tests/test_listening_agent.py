"""`ListeningAgent` answers what the user just said: real episodes with the bundled test
personas (the frozen rule simulator, whose user recites its story, and the calibrated one,
whose user answers the reply), plus a few conversations built from a persona's own opener."""

from __future__ import annotations

import asyncio
import re
from difflib import SequenceMatcher
from functools import cache

import numpy as np
import pytest

from dialog_gym._listening_phrases import POOLS
from dialog_gym.agents import agent_names, make_agent
from dialog_gym.listening_agent import ListeningAgent
from dialog_gym.mood import RLVER
from dialog_gym.personas import PersonaSet
from dialog_gym.session import DialogConfig
from dialog_gym.simulators import make_simulator
from dialog_gym.simulators.analysis import content_units


@cache
def _episodes(language: str, simulator: str) -> tuple[tuple[dict, ...], ...]:
    config = DialogConfig(make_simulator(simulator), RLVER)
    agent = ListeningAgent()

    async def play(k, persona):
        session = config.session(persona, np.random.default_rng(k))
        await session.start()
        while not session.done:
            await session.step(agent(session.messages))
        return tuple(m for m in session.messages if m["role"] != "system")

    async def play_all():
        personas = PersonaSet.bundled().filter(split="test", language=language)
        return await asyncio.gather(*(play(k, p) for k, p in enumerate(personas)))

    return tuple(asyncio.run(play_all()))


def _turns(language: str, simulator: str = "rule"):
    """(last user message, reply, conversation before the reply) of every reply after the first."""
    for history in _episodes(language, simulator):
        for i, message in enumerate(history):
            if message["role"] == "assistant" and i > 1:
                yield history[i - 1]["content"], message["content"], history[:i]


def _sentences(text: str) -> list[str]:
    """Sentences of a reply ("Mr. Brennan" and "3 a.m." end none)."""
    parts = re.split(r"(?<!\bMr\.)(?<!\bMs\.)(?<!\bDr\.)(?<!Mrs\.)(?<!\.m\.)(?<=[.?!])\s+|(?<=[。？！])", text)
    return [s.strip() for s in parts if len(s.strip()) > 3]


def _opener(language: str) -> str:
    return next(iter(PersonaSet.bundled().filter(split="test", language=language))).opening_line


def _reply(*user_lines: str, previous: tuple[str, ...] = ()) -> str:
    """The agent's reply to a conversation of `user_lines`, with `previous` (or placeholder
    replies) between them."""
    messages = []
    for k, line in enumerate(user_lines):
        if k:
            messages.append({"role": "assistant", "content": previous[k - 1] if k - 1 < len(previous) else f"Reply {k}."})
        messages.append({"role": "user", "content": line})
    return ListeningAgent()(messages)


def _advice_openings(language: str) -> list[str]:
    """How each of the agent's suggestions begins (up to its first slot)."""
    return [line.split("{")[0] for line in POOLS[language]["practical_advice"] if len(line.split("{")[0]) >= 4]


def test_it_is_registered_as_listener():
    assert "listener" in agent_names()
    agent = make_agent("listener")
    assert isinstance(agent, ListeningAgent) and agent.name == "listener"
    from dialog_gym.agents import ListeningAgent as exported

    assert exported is ListeningAgent


def test_it_says_back_what_the_user_just_said_with_pronouns_turned():
    reply = _reply(_opener("en"), "Matt's section was copied from a website. I rewrote the whole thing at 3 a.m.")
    assert "you rewrote the whole thing at 3 a.m." in reply.lower()
    reply = _reply(_opener("zh"), "工人问我钱啥时候到。我干了二十年装修，头一回碰上这种业主。")
    assert "你干了二十年装修" in reply and "我干了" not in reply


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("simulator", ["rule", "calibrated"])
def test_it_reflects_a_detail_of_the_last_message_without_pasting_it(language, simulator):
    """Most replies take up content of the user's last message (a clause of it, said back);
    none pastes most of that message verbatim."""
    taken_up = total = 0
    for last, reply, _ in _turns(language, simulator):
        total += 1
        taken_up += bool(content_units(last, language) & content_units(reply, language))
        match = SequenceMatcher(None, last, reply, autojunk=False).find_longest_match(0, len(last), 0, len(reply))
        assert len(last) < 12 or match.size < 0.6 * len(last), (last, reply)
    assert total > 200 and taken_up / total >= 0.8, taken_up / total


def test_the_first_reply_reflects_the_opening_and_asks_what_happened():
    for language, question in (("en", "What happened?"), ("zh", "发生了什么")):
        for history in _episodes(language, "rule"):
            opener, reply = history[0]["content"], history[1]["content"]
            assert question in reply, reply
            assert content_units(opener, language) & content_units(reply, language), (opener, reply)


@pytest.mark.parametrize(
    ("language", "user", "named", "not_named"),
    [
        ("en", "Lonely? Not really. Angry, more like. The bridge is on my desk. Held 14 kilos.", "angry", "lonely"),
        ("en", "I was shaking during the presentation. Actually shaking, from caffeine and rage.", "rage", None),
        ("en", "I'm not angry. I'm exhausted, that's all, after two all-nighters.", "exhausted", "angry"),
        ("zh", "我妈拿着成绩单，第一眼就往英语那栏看，我心里特别委屈。", "委屈", None),
        ("zh", "不是生气，是累，天天守在医院，一宿一宿睡不着。", "累", "生气"),
    ],
)
def test_it_names_back_the_feeling_the_user_named(language, user, named, not_named):
    reply = _reply(_opener(language), user)
    assert named in reply.lower(), reply
    if not_named:  # a feeling they denied is not put on them ("you're not angry" may be said back)
        assert not re.search(f"(?<!not )(?<!不是){not_named}", reply.lower()), reply


def test_it_takes_a_correction_in_the_users_word():
    reply = _reply(_opener("en"), "It must have felt lonely.", "Lonely? Not really. Angry, more like.")
    assert "angry" in reply.lower() and "lonely" not in reply.lower(), reply
    reply = _reply(_opener("zh"), "你是不是觉得孤单？", "不是这样，是委屈。")
    assert "委屈" in reply and "孤单" not in reply, reply


@pytest.mark.parametrize(
    ("language", "ask", "pushback", "stuck"),
    [
        ("en", "I just don't know what to actually do next. What should I do?",
         "I've tried that. Honestly, I don't need fixing, I just need to say it.",
         "I have to decide something soon and I'm stuck. I just don't know what to actually do next."),
        ("zh", "我真不知道下一步该怎么办。", "说得轻巧，这些我都试过了。我不用谁来解决，我就想说出来。", "我卡住了，不知道下一步怎么走。"),
    ],
)
def test_it_stops_suggesting_after_pushback(language, ask, pushback, stuck):
    openings = _advice_openings(language)
    users = [_opener(language), ask]
    replies = [_reply(*users)]
    assert any(o in replies[0] for o in openings), replies[0]  # asked what to do: one small suggestion
    for line in (pushback, stuck, stuck + (" Sorry, I'm rambling." if language == "en" else "不好意思，我说得有点乱。")):
        users.append(line)
        replies.append(_reply(*users, previous=tuple(replies)))
        assert not any(o in replies[-1] for o in openings), replies[-1]


def test_after_pushback_in_real_episodes_it_only_suggests_when_asked_outright():
    for language in ("en", "zh"):
        openings, asks = _advice_openings(language), r"what (?:should|do|can|would) i (?:do|say)|怎么办|咋办|该怎么|我该"
        for history in _episodes(language, "rule") + _episodes(language, "calibrated"):
            pushed = False
            for i, message in enumerate(history):
                if message["role"] == "user":
                    pushed |= bool(re.search(r"need fixing|tried that|easier said than done|不用谁来解决|说得轻巧|试过了", message["content"], re.I))
                elif pushed and not re.search(asks, history[i - 1]["content"], re.I):
                    assert not any(o in message["content"] for o in openings), (history[i - 1]["content"], message["content"])


def test_it_answers_a_question_put_to_it_first():
    reply = _reply(_opener("en"), "I want him to say sorry. Am I being selfish for wanting that?")
    assert re.match(r"(?:Honestly, )?no\b[^.?]*\bselfish\.", reply, re.IGNORECASE), reply
    reply = _reply(_opener("zh"), "你评评理，我干了二十年，这回让人踩到地上了。")
    assert reply.startswith(("要我说", "照你说的", "按你讲的")), reply


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("simulator", ["rule", "calibrated"])
def test_it_never_repeats_a_sentence_in_an_episode(language, simulator):
    for history in _episodes(language, simulator):
        said = [s for m in history if m["role"] == "assistant" for s in _sentences(m["content"])]
        repeated = {s for s in said if said.count(s) > 1}
        assert not repeated, repeated


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("simulator", ["rule", "calibrated"])
def test_replies_are_plain_text_of_a_chat_length_with_at_most_one_question(language, simulator):
    for history in _episodes(language, simulator):
        for reply in (m["content"] for m in history if m["role"] == "assistant"):
            assert not re.search(r"[!！*#\n•]|^\s*(?:-|\d+\.)\s|[\U0001F300-\U0001FAFF]", reply), reply
            size = len(reply) if language == "zh" else len(reply.split())
            low, high = (50, 150) if language == "zh" else (30, 90)
            assert low <= size <= high, (size, reply)
            assert len(re.findall(r"[?？]", reply)) <= 1, reply


def test_it_speaks_chinese_to_a_chinese_user():
    for history in _episodes("zh", "rule"):
        user_latin = set(re.findall(r"[A-Za-z]+", " ".join(m["content"] for m in history if m["role"] == "user")))
        for reply in (m["content"] for m in history if m["role"] == "assistant"):
            assert len(re.findall(r"[\u4e00-\u9fff]", reply)) > 0.8 * len(re.sub(r"\W", "", reply)), reply
            assert set(re.findall(r"[A-Za-z]+", reply)) <= user_latin, reply  # Latin letters only where the user wrote them
