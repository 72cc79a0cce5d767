"""Measures of an offline simulated user as a conversation partner (`benchmarks/user_realism.py`).

- `action_dependence`: from the same conversation state, replies of different kinds (a
  question about the people, about what was tried, about feelings; advice; validation; a
  dismissal; an off-topic remark) should get different answers.
- `answers_question`: whether a user message answers a question on a topic with one of the
  persona's facts for it (a facet line; a disclosure for "what happened").
- `repeated_lines`: sentences a user says more than once in an episode.
- `distinct_n`: distinct n-grams over total n-grams of many user messages, on a fixed budget
  of n-grams so that corpora of different sizes compare.
- `leaks_need`: a message that names the persona's hidden need.
- `play_episode`: one episode of an agent against a simulator, with the time spent writing
  each answer (`respond`) measured.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dialog_gym.mood import MoodRules, mood_bucket
from dialog_gym.personas import Persona
from dialog_gym.personas.stats import states_need
from dialog_gym.session import DialogConfig
from dialog_gym.simulators.analysis import EN_WORD
from dialog_gym.simulators.base import Simulator
from dialog_gym.simulators.reading import sentences
from dialog_gym.simulators.story import leaks
from dialog_gym.types import Message

# One reply of each kind, for `action_dependence`.
PROBES: dict[str, dict[str, str]] = {
    "en": {
        "ask_people": "That sounds like a lot to carry. Who else is involved in this, and how do you get along with them?",
        "ask_tried": "That sounds really hard. What have you already tried so far?",
        "ask_feelings": "I can hear how heavy this is. How are you feeling about all of it right now?",
        "advice": "Maybe you could write down the one thing you need and raise it with them calmly this week.",
        "validation": "That makes so much sense. Anyone in your place would be shaken by that, and it's okay that it still hurts.",
        "dismissal": "Honestly, it's not a big deal. Everything happens for a reason, so just move on.",
        "off_topic": "By the way, did you catch the football match last night? It was a great game.",
    },
    "zh": {
        "ask_people": "听起来你扛着很多事。这件事里还有谁？你们关系怎么样？",
        "ask_tried": "这真的不容易。到现在你已经试过哪些办法了？",
        "ask_feelings": "我能感觉到这事很沉。你现在心里是什么感觉？",
        "advice": "你可以试着把最需要的一件事写下来，这周找个时间平静地跟对方谈一谈。",
        "validation": "你会这样很正常，换作是谁都会难受，到现在还放不下也可以理解。",
        "dismissal": "说真的，这不是什么大事，想开点，向前看吧。",
        "off_topic": "对了，你昨晚看球赛了吗？踢得真精彩。",
    },
}
_ZH_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


class TimedSimulator:
    """A simulator with the CPU seconds spent in `respond` (writing the user's words) recorded,
    and with `keep_calls` the calls themselves (to time the planner again, alone)."""

    def __init__(self, inner: Simulator, *, keep_calls: bool = False):
        self.inner = inner
        self.name = inner.name
        self.respond_seconds: list[float] = []
        self.keep_calls = keep_calls
        self.calls: list[tuple[Any, ...]] = []  # (persona, history, reply, appraisal, mood) with keep_calls

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    async def open(self, persona: Persona, rng: np.random.Generator) -> str:
        return await self.inner.open(persona, rng)

    async def appraise(self, persona, mood, history, reply, *, rules, rng):  # type: ignore[no-untyped-def]
        return await self.inner.appraise(persona, mood, history, reply, rules=rules, rng=rng)

    async def respond(self, persona, history, reply, appraisal, *, mood, rng):  # type: ignore[no-untyped-def]
        if self.keep_calls:
            self.calls.append((persona, tuple(history), reply, appraisal, mood))
        started = time.thread_time()
        try:
            return await self.inner.respond(persona, history, reply, appraisal, mood=mood, rng=rng)
        finally:
            self.respond_seconds.append(time.thread_time() - started)


@dataclass
class PlayedEpisode:
    persona: Persona
    agent: str
    history: list[Message]  # the opening, then agent / user messages
    moods: list[int] = field(default_factory=list)  # after each agent reply
    reward: float = 0.0

    def user_lines(self) -> list[str]:
        return [m["content"] for m in self.history if m["role"] == "user"]

    def exchanges(self) -> list[tuple[int, str, str]]:
        """(turn, agent reply, the user's answer) for every answered reply."""
        out, turn = [], 0
        for k, m in enumerate(self.history):
            if m["role"] == "assistant" and k + 1 < len(self.history):
                out.append((turn, m["content"], self.history[k + 1]["content"]))
                turn += 1
        return out


async def play_episode(
    simulator: Simulator, persona: Persona, agent: Callable[[Sequence[Message]], str], rules: MoodRules, seed: int, *, name: str = ""
) -> PlayedEpisode:
    session = DialogConfig(simulator, rules).session(persona, np.random.default_rng(seed))
    await session.start()
    while not session.done:
        await session.step(agent(session.messages))
    name = name or getattr(agent, "name", getattr(agent, "__name__", "agent"))
    return PlayedEpisode(persona, name, list(session.history), [t.mood for t in session.turns], float(session.reward))


def replay_cost(planner: Any, calls: Sequence[tuple[Any, ...]], *, repeats: int = 3) -> float:
    """CPU seconds per answer of `planner` over recorded `TimedSimulator.calls`, alone (no
    judge between the calls): the best of `repeats` passes, each reply read afresh."""
    best = float("inf")
    for k in range(repeats):
        rng = np.random.default_rng(k)
        started = time.thread_time()
        for persona, history, reply, appraisal, mood in calls:
            planner.respond(persona, history, reply + " " * (k + 1), appraisal, mood=mood, rng=rng)
        best = min(best, time.thread_time() - started)
    return best / max(1, len(calls))


def answers_question(persona: Persona, topic: str, message: str) -> bool | None:
    """Whether `message` answers a question on `topic` with one of the persona's facts for it;
    None when the persona has no fact for that topic (nothing to check against)."""
    facts = list(persona.disclosures) if topic == "what" else list(persona.facets.lines(topic))
    if not facts:
        return None
    return any(fact in message for fact in facts)


def repeated_lines(lines: Sequence[str], language: str) -> int:
    """How many sentences (of at least 3 English words or 4 Chinese characters) repeat an
    earlier one of `lines`, case and spacing aside."""
    counts: Counter[str] = Counter()
    for line in lines:
        for sentence in sentences(line, language):
            key = re.sub(r"\s+", " ", sentence.lower()).strip(" .!?。！？…")
            if (len(_ZH_CHAR.findall(key)) >= 4) if language == "zh" else (len(EN_WORD.findall(key)) >= 3):
                counts[key] += 1
    return sum(n - 1 for n in counts.values() if n > 1)


def _grams(text: str, language: str, n: int) -> list[tuple[str, ...]]:
    tokens = _ZH_CHAR.findall(text) if language == "zh" else EN_WORD.findall(text.lower())
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def distinct_n(messages: Sequence[str], language: str, *, n: int = 2, budget: int | None = None, seed: int = 0) -> float:
    """Distinct n-grams / all n-grams (words in English, characters in Chinese). With a
    `budget`, messages are taken in a seeded random order until that many n-grams are in."""
    order = np.random.default_rng(seed).permutation(len(messages)) if budget else range(len(messages))
    grams: list[tuple[str, ...]] = []
    for i in order:
        grams.extend(_grams(messages[int(i)], language, n))
        if budget and len(grams) >= budget:
            grams = grams[:budget]
            break
    return len(set(grams)) / len(grams) if grams else 0.0


def ngram_count(messages: Sequence[str], language: str, n: int = 2) -> int:
    return sum(len(_grams(m, language, n)) for m in messages)


def leaks_need(persona: Persona, message: str) -> bool:
    """Whether `message` names the persona's hidden need: its name, its descriptions or the
    words that would name it (`responses.NEED_TERMS`)."""
    return bool(states_need(message, persona.hidden_need)) or leaks(message, persona)


async def action_dependence(
    simulator: Simulator, states: Sequence[tuple[Persona, list[Message], int]], rules: MoodRules, seed: int = 0
) -> dict[str, float]:
    """For each state (persona, history, mood), the answers to one probe reply of each kind
    (`PROBES`), each with the same generator state. Returns the mean share of distinct
    answers per state, the share of probe pairs answered differently, and that share among
    the pairs whose appraisals gave the same fit and mood bucket (what the words depend on
    beyond the appraisal)."""
    distinct, pairs_differ, pairs, same_fit_differ, same_fit = [], 0, 0, 0, 0
    for k, (persona, history, mood) in enumerate(states):
        answers = []
        for reply in PROBES[persona.language].values():
            appraisal = await simulator.appraise(persona, mood, history, reply, rules=rules, rng=np.random.default_rng(seed + k))
            new_mood = rules.apply(mood, appraisal.delta).mood
            response = await simulator.respond(persona, history, reply, appraisal, mood=new_mood, rng=np.random.default_rng(seed + k))
            answers.append(((appraisal.fit, mood_bucket(new_mood)), response.text))
        distinct.append(len({text for _, text in answers}) / len(answers))
        for i in range(len(answers)):
            for j in range(i + 1, len(answers)):
                pairs += 1
                pairs_differ += answers[i][1] != answers[j][1]
                if answers[i][0] == answers[j][0]:
                    same_fit += 1
                    same_fit_differ += answers[i][1] != answers[j][1]
    return {
        "distinct_share": float(np.mean(distinct)) if distinct else 0.0,
        "pairs_differ": pairs_differ / max(1, pairs),
        "same_fit_pairs_differ": same_fit_differ / max(1, same_fit),
        "same_fit_pairs": same_fit,
    }
