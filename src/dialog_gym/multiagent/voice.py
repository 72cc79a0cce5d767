"""`SeekerVoice`: a simulator whose appraisal is the configured simulator's, whose words are the seeker's.

When the help-seeker is a policy (a trained model, a script, a person), the dialogue still
runs through `DialogSession`: the supporter's reply is the session's action, and the
session asks its simulator to appraise it and to answer. `SeekerVoice` is that simulator.
Its `appraise` is the *judge*'s (the configured simulator), so the mood moves exactly as
in the single-agent env; its `respond` waits for the seeker's line, which becomes the
user's reply. The judge is asked for its own in-character answer only with
`reference_replies=True` (one more LLM call per turn); that answer is then a reference
(`simulator_reply`), never spoken.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dialog_gym.mood import MoodRules
from dialog_gym.personas import Persona
from dialog_gym.simulators.base import Appraisal, Response, Simulator
from dialog_gym.types import Message


@dataclass(frozen=True)
class PendingReply:
    """A supporter reply the judge has appraised and the seeker is to answer."""

    reply: str  # what the seeker reads (the supporter's thought already stripped)
    appraisal: Appraisal  # the judge's
    mood: int  # the mood after the session applied the appraisal's change
    reference: str  # the judge's own answer ("" without reference_replies)


class SeekerVoice:
    """Appraise with `judge`, speak with the lines passed to `say()`.

    The env drives it: `say(line)` hands over the seeker's next line; `open`/`respond`
    wait for it. `asked` is set while the voice waits for a line, and `pending` holds the
    supporter reply being answered (with the judge's appraisal) until the seeker answers.

    Arguments:
        judge: the simulator that appraises every supporter reply.
        reference_replies: also ask the judge for its own answer to each reply (a
            reference line for imitation; costs the judge's response call).
    """

    def __init__(self, judge: Simulator, *, reference_replies: bool = False):
        self.judge = judge
        self.reference_replies = reference_replies
        self.name = f"{getattr(judge, 'name', type(judge).__name__)}+seeker-policy"
        self.pending: PendingReply | None = None
        self._lines: asyncio.Queue[str] | None = None
        self._asked: asyncio.Event | None = None

    def __repr__(self) -> str:
        return f"SeekerVoice(judge={self.judge!r}, reference_replies={self.reference_replies})"

    def identity(self) -> dict[str, Any]:
        return {**self.judge.identity(), "speaker": "seeker policy"}

    def __getstate__(self) -> dict[str, Any]:
        """A copy gets its own (empty) line queue and event: they belong to one event loop."""
        if self._lines is not None and not self._lines.empty():
            raise TypeError("a SeekerVoice cannot be copied while a seeker line waits to be spoken")
        return {**self.__dict__, "_lines": None, "_asked": None}

    # -- the env's side -------------------------------------------------------------------
    @property
    def asked(self) -> asyncio.Event:
        """Set while `open`/`respond` wait for the seeker's line."""
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

    async def appraise(
        self,
        persona: Persona,
        mood: int,
        history: Sequence[Message],
        reply: str,
        *,
        rules: MoodRules,
        rng: np.random.Generator,
    ) -> Appraisal:
        return await self.judge.appraise(persona, mood, history, reply, rules=rules, rng=rng)

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
        reference = None
        if self.reference_replies:
            reference = await self.judge.respond(persona, history, reply, appraisal, mood=mood, rng=rng)
        self.pending = PendingReply(reply, appraisal, mood, reference.text if reference else "")
        try:
            line = await self._next_line()
        finally:
            self.pending = None
        # The goodbye is the seeker's to say: the session detects it in `line` itself.
        if reference is None:
            return Response(line)
        return Response(line, usage=reference.usage, errors=reference.errors, raw=reference.raw)

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
