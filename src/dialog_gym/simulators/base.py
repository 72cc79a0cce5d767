"""The user-simulator protocol: open a conversation, then react to each agent reply."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from dialog_gym.mood import MoodRules
from dialog_gym.personas import Persona
from dialog_gym.types import Message, Usage


@dataclass
class Reaction:
    """The simulated user's response to one agent reply.

    Attributes:
        delta: the signed mood change the appraisal asked for (before the preset's clamp).
        reasoning: the appraisal text (privileged: never shown to the agent).
        reply: what the user says next, in character.
        wants_to_end: the user says goodbye.
        usage: tokens and calls spent on this reaction, retries included.
        errors: what went wrong and was recovered from (parse repairs, retries, clamps).
        raw: raw model outputs, kept for debugging and records (empty for offline simulators).
    """

    delta: int
    reasoning: str
    reply: str
    wants_to_end: bool = False
    usage: Usage = field(default_factory=Usage)
    errors: tuple[str, ...] = ()
    raw: tuple[str, ...] = ()


class SimulatorError(RuntimeError):
    """A simulator could not produce a valid reaction within its retry limits.

    The environment ends the episode with `terminal_reason="simulator_error"` and records
    `raw_outputs`; it never invents a score.
    """

    def __init__(self, message: str, *, raw_outputs: Sequence[str] = (), usage: Usage | None = None):
        super().__init__(message)
        self.raw_outputs = tuple(raw_outputs)
        self.usage = usage or Usage()


@runtime_checkable
class Simulator(Protocol):
    """A user model: the environment and the reward of an empathy dialogue.

    `history` is the conversation so far from the agent's side (`user` = the simulated
    help-seeker, `assistant` = the agent), without the agent's system prompt and without
    `reply`, the agent's newest message.
    """

    name: str

    async def open(self, persona: Persona, rng: np.random.Generator) -> str: ...

    async def react(
        self,
        persona: Persona,
        mood: int,
        history: Sequence[Message],
        reply: str,
        *,
        rules: MoodRules,
        rng: np.random.Generator,
    ) -> Reaction: ...

    def identity(self) -> dict[str, Any]:
        """What identifies this simulator in records (class, model, style; never secrets)."""
        ...
