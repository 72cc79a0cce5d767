"""`SeekerVoice`: a simulator whose appraisal is the configured simulator's, whose words are the seeker's.

When the help-seeker is a policy (a trained model, a script, a person), the dialogue still
runs through `DialogSession`: the supporter's reply is the session's action, and the
session asks its simulator to react. `SeekerVoice` is that simulator. It forwards the
supporter's reply to the *judge* (the configured simulator) for the appraisal, so the mood
moves exactly as in the single-agent env, and then waits for the seeker's line, which
becomes the user's reply. The judge's own in-character reply is kept as a reference
(`simulator_reply`), never spoken.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np

from dialog_gym.mood import MoodRules
from dialog_gym.personas import Persona
from dialog_gym.simulators.base import Reaction, Simulator
from dialog_gym.types import Message


class SeekerVoice:
    """Appraise with `judge`, speak with the lines passed to `say()`.

    The env drives it: `say(line)` hands over the seeker's next line; `open`/`react`
    wait for it. `asked` is set while the voice waits for a line, `appraisal` holds the
    judge's reaction to the supporter's latest reply until the seeker has answered it.
    """

    def __init__(self, judge: Simulator):
        self.judge = judge
        self.name = f"{getattr(judge, 'name', type(judge).__name__)}+seeker-policy"
        self.appraisal: Reaction | None = None
        self.heard = ""  # the supporter reply being answered (its thought already stripped)
        self._lines: asyncio.Queue[str] | None = None
        self._asked: asyncio.Event | None = None

    def __repr__(self) -> str:
        return f"SeekerVoice(judge={self.judge!r})"

    def identity(self) -> dict[str, Any]:
        return {**self.judge.identity(), "speaker": "seeker policy"}

    # -- the env's side -------------------------------------------------------------------
    @property
    def asked(self) -> asyncio.Event:
        """Set while `open`/`react` wait for the seeker's line."""
        if self._asked is None:
            self._asked = asyncio.Event()
        return self._asked

    def say(self, line: str) -> None:
        """Hand over the seeker's next line (before or while the session waits for it)."""
        if self._lines is None:
            self._lines = asyncio.Queue(maxsize=1)
        if self._lines.full():
            raise RuntimeError("the seeker already has a line waiting to be spoken")
        self._lines.put_nowait(line)

    # -- the Simulator protocol -----------------------------------------------------------
    async def open(self, persona: Persona, rng: np.random.Generator) -> str:
        return await self._next_line()

    async def react(
        self,
        persona: Persona,
        mood: int,
        history: Sequence[Message],
        reply: str,
        *,
        rules: MoodRules,
        rng: np.random.Generator,
    ) -> Reaction:
        self.heard = reply
        appraisal = await self.judge.react(persona, mood, history, reply, rules=rules, rng=rng)
        self.appraisal = appraisal
        line = await self._next_line()
        self.appraisal = None
        # The goodbye is the seeker's to say: the session detects it in `line` itself.
        return Reaction(
            delta=appraisal.delta,
            reasoning=appraisal.reasoning,
            reply=line,
            wants_to_end=False,
            usage=appraisal.usage,
            errors=appraisal.errors,
            raw=appraisal.raw,
        )

    async def aclose(self) -> None:
        aclose = getattr(self.judge, "aclose", None)
        if aclose is not None:
            await aclose()

    async def _next_line(self) -> str:
        if self._lines is None:
            self._lines = asyncio.Queue(maxsize=1)
        self.asked.set()
        try:
            return await self._lines.get()
        finally:
            self.asked.clear()
