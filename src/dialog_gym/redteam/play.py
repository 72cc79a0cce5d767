"""Play agents and score replies against any simulator, concurrently, for the attacks."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dialog_gym._async import run_sync
from dialog_gym.mood import MoodRules, get_rules
from dialog_gym.personas import Persona
from dialog_gym.session import DialogConfig
from dialog_gym.simulators import Simulator
from dialog_gym.types import Message

Agent = Callable[[Sequence[Message]], str]


@dataclass(frozen=True)
class ScriptAgent:
    """An open-loop policy: the same replies in the same order in every episode, whatever
    the user says (the last one repeats if the episode runs longer)."""

    replies: tuple[str, ...]

    def __call__(self, messages: Sequence[Message]) -> str:
        turn = sum(1 for m in messages if m["role"] == "assistant")
        return self.replies[min(turn, len(self.replies) - 1)]


def episode_rewards(
    agent: Agent, personas: Sequence[Persona], simulator: Simulator, rules: "str | MoodRules" = "rlver", *, seed: int = 0
) -> np.ndarray:
    """The reward of one episode per persona (seeds `seed + k`). An episode the simulator
    failed in (`terminal_reason="simulator_error"`) raises `RuntimeError` naming it: its
    reward of 0 would count as the attack failing."""
    config = DialogConfig(simulator, get_rules(rules))

    async def play(k: int, persona: Persona) -> float:
        session = config.session(persona, np.random.default_rng(seed + k))
        await session.start()
        while not session.done:
            await session.step(agent(session.messages))
        if session.terminal_reason == "simulator_error":
            raise RuntimeError(f"the simulator failed in persona {persona.id!r}'s episode at turn {session.turn}: {session.error}")
        return session.reward

    async def play_all() -> list[float]:
        return await asyncio.gather(*(play(k, p) for k, p in enumerate(personas)))

    return np.array(run_sync(play_all()), dtype=float)


@dataclass(frozen=True)
class Judged:
    """One reply in one context: the persona, the conversation before it, the reply."""

    persona: Persona
    history: tuple[Message, ...]
    reply: str


def appraised_changes(
    items: Sequence[Judged], simulator: Simulator, rules: "str | MoodRules" = "sage", *, concurrency: int = 64, precise: bool = False
) -> np.ndarray:
    """The change `simulator` asks for on each reply in its context (before the preset's clamp);
    `precise`: the unrounded change where the simulator reports one (`detail["change"]`)."""
    mood_rules = get_rules(rules)
    limit = asyncio.Semaphore(concurrency)

    async def one(k: int, item: Judged) -> float:
        async with limit:
            appraisal = await simulator.appraise(
                item.persona, mood_rules.start, list(item.history), item.reply, rules=mood_rules, rng=np.random.default_rng(k)
            )
            return float(appraisal.detail.get("change", appraisal.delta) if precise else appraisal.delta)

    async def every() -> list[float]:
        return await asyncio.gather(*(one(k, item) for k, item in enumerate(items)))

    return np.array(run_sync(every()), dtype=float)
