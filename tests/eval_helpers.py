"""Shared builders for the episode / eval / report / SAGE tests: personas of our own (the
bundled sets may be partial while they are written) and real episodes played through
`DialogSession` with the rule simulator."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dialog_gym.agents import BaselineAgent
from dialog_gym.session import DialogConfig
from dialog_gym.episodes import Episode
from dialog_gym.mood import get_rules
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.simulators import RuleSimulator
from dialog_gym.simulators.base import Appraisal, Response, SimulatorError
from dialog_gym.types import Usage

SAGE_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "sage-deepseek-v3"

_NEEDS = ("practical_advice", "deep_empathy", "not_at_fault", "specific_praise", "motive_analysis", "attentive_listening")
_TYPES = ("negative", "passive", "avoidant")


def make_persona(i: int, *, language: str = "en", split: str = "test") -> Persona:
    need = _NEEDS[i % len(_NEEDS)]
    if language == "zh":
        profile = {"name": f"小{i}", "traits": ["敏感", "要强"], "age": 20 + i, "occupation": "程序员"}
        scene = {"event": f"项目{i}上线前被临时改需求，熬了三个通宵，最后功劳却被组长拿走了。"}
        opening = "最近工作上的事真让我憋屈，熬了几个通宵，功劳全被别人拿走了。"
    else:
        profile = {"name": f"Sam{i}", "traits": ["proud", "tired"], "age": 25 + i, "occupation": "nurse"}
        scene = {"event": f"After covering {i + 2} night shifts in a row, Sam was blamed for a missing chart."}
        opening = None
    return Persona.from_dict(
        {
            "id": f"t-{language}-{i}",
            "language": language,
            "split": split,
            "hidden_need": need,
            "character_type": _TYPES[i % len(_TYPES)],
            "profile": profile,
            "scene": scene,
            "keywords": ["shifts" if language == "en" else "通宵"],
            "opening_line": opening,
        }
    )


def make_personas(n: int = 6, *, languages: Sequence[str] = ("en", "zh")) -> PersonaSet:
    return PersonaSet(make_persona(i, language=languages[i % len(languages)]) for i in range(n))


async def aplay(
    persona: Persona,
    *,
    agent: Callable[[list[Any]], str] | None = None,
    simulator: Any = None,
    rules: str = "sage",
    seed: int = 0,
    episode_id: str | None = None,
) -> Episode:
    """One real episode through `DialogSession` (rule simulator, baseline agent by default)."""
    agent = agent or BaselineAgent()
    session = DialogConfig(simulator or RuleSimulator(), get_rules(rules)).session(persona, np.random.default_rng(seed))
    await session.start()
    while not session.done:
        await session.step(agent(session.messages))
    return Episode.from_session(session, seed=seed, episode_id=episode_id or f"{persona.id}#{seed}", agent={"name": "baseline"})


def play_many(personas: Sequence[Persona], *, seeds: int = 1, **kwargs: Any) -> list[Episode]:
    async def main() -> list[Episode]:
        return [await aplay(p, seed=s, **kwargs) for s in range(seeds) for p in personas]

    return asyncio.run(main())


class ScriptedSimulator:
    """A tiny simulator of our own: a fixed change per turn, a marker reply, an optional
    failure at a given turn; it records the histories it was shown."""

    name = "scripted"

    def __init__(self, delta: int = 5, *, fail_at: int | None = None, reply: str = "SIMULATED REPLY"):
        self.delta = delta
        self.fail_at = fail_at
        self.reply = reply
        self.histories: list[list[dict[str, str]]] = []
        self.responses = 0

    async def open(self, persona: Persona, rng: np.random.Generator) -> str:
        return persona.opening_line or f"hi, I am {persona.name}"

    async def appraise(self, persona, mood, history, reply, *, rules, rng) -> Appraisal:
        turn = sum(1 for m in history if m["role"] == "assistant") + 1
        self.histories.append([dict(m) for m in history])
        if self.fail_at is not None and turn == self.fail_at:
            raise SimulatorError(f"scripted failure at turn {turn}", raw_outputs=["{broken"], usage=Usage(7, 3, 1))
        return Appraisal(self.delta, "", f"turn {turn}: +{self.delta}", usage=Usage(10, 5, 1))

    async def respond(self, persona, history, reply, appraisal, *, mood, rng) -> Response:
        turn = sum(1 for m in history if m["role"] == "assistant") + 1
        self.responses += 1
        return Response(f"{self.reply} {turn}", usage=Usage(4, 2, 1))

    def identity(self) -> dict[str, Any]:
        return {"simulator": "scripted", "delta": self.delta}
