"""`Episode`: the complete, reproducible record of one dialogue."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

from dialog_gym._version import __version__
from dialog_gym.session import DialogSession
from dialog_gym.types import Message


def recorded_action_chars(max_reply_chars: int | None) -> int | None:
    """How much of an agent's action (and of its thought) a record keeps: twice the reply
    cap, so that replaying the record gives the simulator the same reply (None: all)."""
    return None if max_reply_chars is None else 2 * max_reply_chars


@dataclass
class Episode:
    """One finished (or failed) dialogue, with everything needed to reproduce and judge it.

    `turns` holds one dict per agent reply (see `dialog_gym.session.TurnRecord`):
    the raw action, the reply the user saw, the thought, the user's answer, the requested
    and applied mood change, the mood after it, the appraisal reasoning, usage and errors.
    An action (or thought) longer than twice the reply guard's `max_chars` is kept up to
    that length, its full length in `action_chars` (`thought_chars`): a 1 MB reply no
    longer makes a 1 MB record, and a replay still gives the simulator the same reply.
    Identity fields never hold secrets (API keys are not part of any identity).

    Reproducibility: `rules` holds the full mood rules (the preset with any overrides),
    `persona` the full persona (so a record replays without the persona files), `source`
    where the record comes from (`"dialog-gym"`, or e.g. `"sage:gpt-4.1"` for an import),
    `extra` source-specific data that has no field of its own (kept, never dropped).
    """

    persona_id: str
    language: str
    hidden_need: str
    character_type: str
    preset: str
    opening: str
    messages: list[Message]
    turns: list[dict[str, Any]]
    final_mood: int
    reward: float
    terminal_reason: str | None
    seed: int | None = None
    group_id: int | None = None
    episode_id: str | None = None
    simulator: dict[str, Any] = field(default_factory=dict)
    agent: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    start_mood: int = 0
    think: bool = False
    rules: dict[str, Any] = field(default_factory=dict)
    persona: dict[str, Any] | None = None
    source: str = "dialog-gym"
    extra: dict[str, Any] = field(default_factory=dict)
    version: str = __version__
    created_at: float = field(default_factory=time.time)

    @property
    def num_turns(self) -> int:
        return len(self.turns)

    @property
    def moods(self) -> list[int]:
        """The mood trajectory: start, then after each agent turn."""
        return [self.start_mood, *(t["mood"] for t in self.turns)]

    @classmethod
    def from_session(
        cls,
        session: DialogSession,
        *,
        seed: int | None = None,
        group_id: int | None = None,
        episode_id: str | None = None,
        agent: dict[str, Any] | None = None,
    ) -> "Episode":
        persona = session.persona
        limit = recorded_action_chars(session.config.reply_guard.max_chars)
        turns = []
        for record in session.turns:
            turn = dataclasses.asdict(record)
            turn["errors"] = list(turn["errors"])
            turn["raw"] = list(turn["raw"])
            for key in ("action", "thought"):  # bounded, and the full length said, never silently
                text = turn[key]
                if limit is not None and text is not None and len(text) > limit:
                    turn[key] = text[:limit]
                    turn[f"{key}_chars"] = len(text)
            turns.append(turn)
        return cls(
            persona_id=persona.id,
            language=persona.language,
            hidden_need=persona.hidden_need.value,
            character_type=persona.character_type.value,
            preset=session.rules.name,
            opening=session.opening or "",
            messages=session.messages,
            turns=turns,
            final_mood=session.mood,
            reward=session.reward,
            terminal_reason=session.terminal_reason,
            seed=seed,
            group_id=group_id,
            episode_id=episode_id,
            simulator=session.simulator.identity(),
            agent=dict(agent or {}),
            usage=session.usage.to_dict(),
            error=session.error,
            start_mood=session.rules.start,
            think=session.think,
            rules=dataclasses.asdict(session.rules),
            persona=persona.to_dict(),
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (also what `datasets.Dataset.from_list` takes)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Episode":
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"unknown Episode field(s) {sorted(unknown)}")
        return cls(**data)
