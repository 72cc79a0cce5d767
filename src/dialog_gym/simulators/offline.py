"""`OfflineSimulator`: an appraisal composed with a response planner, no model, no network.

The rule simulator and the calibrated judges differ only in how they appraise a reply
(`judge_reply`); what the user then says comes from a planner: the listening
`ResponsePlanner` (v2), or the `RecitingPlanner` that the frozen v0 and v1 users keep.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dialog_gym.mood import MoodRules
from dialog_gym.personas import Persona
from dialog_gym.simulators.base import Appraisal, Response
from dialog_gym.simulators.planner import ResponsePlanner, make_planner
from dialog_gym.simulators.recital import RecitingPlanner
from dialog_gym.types import Message


class OfflineSimulator:
    """Base of the deterministic offline simulators: `judge_reply` appraises, `planner` answers.

    A subclass sets `name` and implements `judge_reply(persona, history, reply) -> Appraisal`, a
    pure function of its inputs. `planner` writes the words (`planner_class(style)` unless
    given, by name or as an instance: `"listening"`, the `ResponsePlanner`, or `"reciting"`,
    the frozen `RecitingPlanner` of v0 and v1).
    """

    name = "offline"
    planner_class: type = ResponsePlanner

    def __init__(self, style: str = "vanilla", planner: "str | ResponsePlanner | RecitingPlanner | None" = None):
        self.planner = make_planner(planner, style) if planner is not None else self.planner_class(style)
        if self.planner.style != style:
            raise ValueError(f"the planner's style {self.planner.style!r} is not the simulator's {style!r}")
        self.style = style

    def __repr__(self) -> str:
        return f"{type(self).__name__}(style={self.style!r}, planner={planner_name(self.planner)!r})"

    def identity(self) -> dict[str, Any]:
        return {"simulator": self.name, "style": self.style, "planner": planner_name(self.planner)}

    def judge_reply(self, persona: Persona, history: Sequence[Message], reply: str) -> Appraisal:
        raise NotImplementedError

    async def open(self, persona: Persona, rng: np.random.Generator) -> str:
        return self.planner.open(persona, rng)

    async def appraise(
        self, persona: Persona, mood: int, history: Sequence[Message], reply: str, *, rules: MoodRules, rng: np.random.Generator
    ) -> Appraisal:
        """The judgement of `reply`: a pure function of persona, history and reply."""
        return self.judge_reply(persona, history, reply)

    async def respond(
        self,
        persona: Persona,
        history: Sequence[Message],
        reply: str,
        appraisal: Appraisal,
        *,
        mood: int,
        rng: np.random.Generator,
    ) -> Response:
        """An answer from the response planner, for the appraisal's fit and the new mood."""
        return self.planner.respond(persona, history, reply, appraisal, mood=mood, rng=rng)


def planner_name(planner: Any) -> str:
    """How records name a planner: `"listening"`, `"reciting"`, or its class name."""
    return getattr(planner, "name", None) or {"RecitingPlanner": "reciting"}.get(type(planner).__name__, type(planner).__name__)
