"""Small value types shared by every layer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypedDict


class Message(TypedDict):
    """One chat message in OpenAI format."""

    role: Literal["system", "user", "assistant"]
    content: str


@dataclass
class Usage:
    """Token and call counts, accumulated per call, per turn and per episode (retries included)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: "Usage") -> "Usage":
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.calls += other.calls
        return self

    def __add__(self, other: "Usage") -> "Usage":
        return Usage().add(self).add(other)

    def to_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "calls": self.calls,
        }
