"""The user-simulator protocol: open a conversation, then appraise and answer each agent reply.

A reaction to an agent reply comes in two calls, as in SAGE and RLVER:

1. `appraise` judges the reply: a signed mood change and the reasoning behind it.
2. The session applies its mood rules to the change (the only place they are applied).
3. `respond` writes the user's next message, knowing the new mood (its bucket decides the
   attitude; at bucket S or F the user says goodbye).

Callers that only need the judgement (re-scoring, the PettingZoo judge) call `appraise`
alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dialog_gym.mood import MoodRules
from dialog_gym.personas import Persona
from dialog_gym.types import Message, Usage


@dataclass(frozen=True)
class Appraisal:
    """How one agent reply made the simulated user feel.

    Attributes:
        delta: the signed mood change asked for (before the preset's clamp).
        fit: the simulator's one-word verdict on how the reply meets the hidden need, if it
            gives one (the rule simulator: `"met"`, `"ok"`, `"missed"` or `"hurt"`), else `""`.
        reasoning: the appraisal text (privileged: never shown to the agent).
        usage: tokens and calls spent on the appraisal, retries included.
        errors: what went wrong and was recovered from (parse repairs, retries, clamps).
        raw: raw model outputs, kept for debugging and records (empty for offline simulators).
        detail: simulator-specific parts, for the simulator's own `respond` (the LLM
            simulator's `intent`, `need_fit`, `inner_reaction`, `feeling`; a replay's
            recorded answer).
    """

    delta: int
    fit: str
    reasoning: str
    usage: Usage = field(default_factory=Usage)
    errors: tuple[str, ...] = ()
    raw: tuple[str, ...] = ()
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Response:
    """What the simulated user says next, in character.

    Attributes:
        text: the message.
        wants_to_end: the user says goodbye (the session also detects goodbyes in `text`).
        usage, errors, raw: as for `Appraisal`, for the response call(s).
    """

    text: str
    wants_to_end: bool = False
    usage: Usage = field(default_factory=Usage)
    errors: tuple[str, ...] = ()
    raw: tuple[str, ...] = ()


class SimulatorError(RuntimeError):
    """A simulator could not produce a valid opening, appraisal or response within its limits.

    The session ends the episode with `terminal_reason="simulator_error"` and records
    `raw_outputs`, `usage` and `errors` (what was recovered from before the failure); it
    never invents a score.
    """

    def __init__(
        self, message: str, *, raw_outputs: Sequence[str] = (), usage: Usage | None = None, errors: Sequence[str] = ()
    ):
        super().__init__(message)
        self.raw_outputs = tuple(raw_outputs)
        self.usage = usage or Usage()
        self.errors = tuple(errors)


@runtime_checkable
class Simulator(Protocol):
    """A user model: the environment and the reward of an empathy dialogue.

    `history` is the conversation so far from the agent's side (`user` = the simulated
    help-seeker, `assistant` = the agent), without the agent's system prompt and without
    `reply`, the agent's newest message. Every random choice comes from `rng`.
    """

    name: str

    async def open(self, persona: Persona, rng: np.random.Generator) -> str:
        """The user's opening line."""
        ...

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
        """Judge `reply` at the current `mood`. `rules` is the preset the change will be
        applied under, so that the question can state its scale (an LLM prompt's range);
        the simulator never applies it."""
        ...

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
        """Answer `reply` in character, given this simulator's `appraisal` of it and the
        `mood` after the session applied the change."""
        ...

    def identity(self) -> dict[str, Any]:
        """What identifies this simulator in records (class, model, style; never secrets)."""
        ...
