"""The wire types of the served dialogue: what a step sends and what it returns (OpenEnv models)."""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

__all__ = ["DialogAction", "DialogObservation", "DialogState"]


class DialogAction(Action):
    """The supporter's reply (with `think` env ids: `<think>...</think>reply`)."""

    message: str = Field(description="the agent's reply to the simulated user")


class DialogObservation(Observation):
    """What the agent sees after a reset or a step: `EmpathyDialogEnv`'s observation and info,
    without `info["privileged"]` (no hidden need, no appraisal).

    `done` is `terminated or truncated`; `truncated` tells them apart (a simulator failure
    truncates, as in the gym env). `reward` follows the env's reward mode: 0 until the last
    step, then final mood / 100 (plus the applied change / 100 on every step when dense).
    """

    message: str = Field(description="the simulated user's latest message (the opening line after a reset)")
    messages: list[dict[str, str]] = Field(
        default_factory=list, description="the conversation from the agent's side, system prompt first"
    )
    episode_id: str = Field(description="names this dialogue; pass it to POST /step to continue it over HTTP")
    turn: int = 0
    mood: int = 0
    mood_bucket: str = ""
    emotion_delta: int = 0
    terminal_reason: str | None = None
    truncated: bool = False
    format_ok: bool = True
    reply_cut: bool = Field(False, description="the reply was longer than the reply guard lets through")
    persona_id: str = ""
    language: str = ""
    error: str | None = None

    @classmethod
    def from_info(cls, message: str, info: dict[str, Any], *, episode_id: str, reward: float | None,
                  done: bool, truncated: bool) -> "DialogObservation":
        public = {k: info[k] for k in ("turn", "mood", "mood_bucket", "emotion_delta", "terminal_reason",
                                         "format_ok", "reply_cut", "persona_id", "language", "error")}
        return cls(message=message, messages=[dict(m) for m in info["messages"]], episode_id=episode_id,
                   reward=reward, done=done, truncated=truncated, **public)


class DialogState(State):
    """The server's view of a session's dialogue (`GET /state`, the WebSocket `state` message)."""

    env_id: str = ""
    persona_id: str | None = None
    seed: int | None = None
    mood: int | None = None
    terminal_reason: str | None = None
