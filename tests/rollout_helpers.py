"""Shared fixtures for the vector-env and rollout tests: personas and instrumented simulators."""

from __future__ import annotations

import asyncio
from typing import Any, Sequence

import numpy as np

from dialog_gym.mood import MoodRules
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.simulators import RuleSimulator, SimulatorError
from dialog_gym.types import Message

_PERSONAS = [
    ("t-en-advice", "en", "practical_advice", "passive", "Sam", "The plant where I worked for twelve years closed last week and I have a mortgage to pay."),
    ("t-en-listen", "en", "attentive_listening", "negative", "Dana", "My sister borrowed money for her wedding and now acts like I never lent it."),
    ("t-en-fault", "en", "not_at_fault", "avoidant", "Lee", "My team lead blamed me in front of everyone for a deadline that his own plan made impossible."),
    ("t-zh-praise", "zh", "specific_praise", "negative", "王刚", "我连着加班两晚修好了客户的车，老板却把功劳全算在自己头上。"),
    ("t-zh-empathy", "zh", "deep_empathy", "passive", "李娜", "外婆去年走了，我到现在还会下意识地给她打电话。"),
    ("t-en-motive", "en", "motive_analysis", "negative", "Alex", "My best friend stopped answering my messages after I got the promotion we both applied for."),
]


def make_personas() -> PersonaSet:
    """Six small hand-written train personas (independent of the bundled data files)."""
    return PersonaSet(
        Persona.from_dict(
            {
                "id": pid,
                "language": lang,
                "split": "train",
                "hidden_need": need,
                "character_type": ctype,
                "profile": {"name": name, "traits": ["tired"]},
                "scene": {"event": event},
            }
        )
        for pid, lang, need, ctype, name, event in _PERSONAS
    )


REPLIES = [
    "That sounds really hard. What happened after that?",
    "I hear you, and it makes sense that you feel hurt by it.",
    "You did nothing wrong here, honestly.",
    "Have you thought about just moving on?",
    "ok",
    "听起来真的很委屈，后来怎么样了？",
    "asdf qwer zxcv",
]


def reply_for(step: int, index: int) -> str:
    return REPLIES[(step * 3 + index) % len(REPLIES)]


class InstrumentedSimulator(RuleSimulator):
    """The rule simulator with a latency per call, counters, and optional scripted failures.

    `in_flight`/`max_in_flight` count concurrent `appraise` calls; `fail_on` maps a persona id
    to the agent turn (1-based) whose reaction raises `SimulatorError`; `open` raises it for
    the persona ids in `fail_open`.
    """

    def __init__(
        self, latency_s: float = 0.0, *, fail_on: dict[str, int] | None = None, fail_open: frozenset[str] = frozenset(), **kwargs: Any
    ):
        super().__init__(**kwargs)
        self.latency_s = latency_s
        self.fail_on = dict(fail_on or {})
        self.fail_open = frozenset(fail_open)
        self.appraise_calls = 0
        self.open_calls = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.cancelled = 0

    async def open(self, persona: Persona, rng: np.random.Generator) -> str:
        self.open_calls += 1
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if persona.id in self.fail_open:
            raise SimulatorError(f"scripted opening failure for {persona.id}")
        return await super().open(persona, rng)

    async def appraise(
        self, persona: Persona, mood: int, history: Sequence[Message], reply: str, *, rules: MoodRules, rng: np.random.Generator
    ):
        self.appraise_calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            turn = sum(1 for m in history if m["role"] == "assistant") + 1
            if self.fail_on.get(persona.id) == turn:
                raise SimulatorError(f"scripted failure for {persona.id} at turn {turn}", raw_outputs=["{broken"])
            return await super().appraise(persona, mood, history, reply, rules=rules, rng=rng)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.in_flight -= 1
