"""The text-generation protocol every backend implements, and its small value types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, runtime_checkable

from dialog_gym.text_guard import check_encodable
from dialog_gym.types import Message, Usage


@dataclass(frozen=True)
class Completion:
    """One finished chat completion.

    Attributes:
        text: the generated text (the assistant message's content).
        usage: tokens and calls spent on it, failed attempts included (`calls` counts every
            request sent, so `calls - 1` of them were retries).
        latency_s: wall-clock seconds from the call to its result, retries and waits included.
        retries: how many failed attempts preceded the successful one.
        errors: what each failed attempt ran into (status codes, timeouts...), oldest first.
        cached: the completion was served from a cache; `usage` is then zero.
        finish_reason: why generation stopped ("stop", "length"...), when known.
    """

    text: str
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    retries: int = 0
    errors: tuple[str, ...] = ()
    cached: bool = False
    finish_reason: str | None = None


class BackendError(RuntimeError):
    """A backend gave up on a request (a non-retryable error, or retries exhausted).

    `usage` holds what the failed attempts spent; `attempts` how many were made. The message
    never contains an API key.
    """

    def __init__(self, message: str, *, usage: Usage | None = None, attempts: int = 0, errors: Sequence[str] = ()):
        super().__init__(message)
        self.usage = usage or Usage()
        self.attempts = attempts
        self.errors = tuple(errors)


@runtime_checkable
class Backend(Protocol):
    """Text generation behind one async call.

    `seed=None` with `temperature > 0` is a sampled (non-reproducible) request;
    `temperature == 0` is greedy. `json=True` asks for a JSON object where the backend can
    enforce it (OpenAI's JSON mode); elsewhere it is a hint only, so callers still parse
    strictly. A backend whose `supports_prefill` attribute is true continues a final
    assistant message and returns only the continuation.
    """

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None,
        json: bool = False,
    ) -> Completion: ...

    def identity(self) -> dict[str, Any]:
        """What identifies this backend's outputs (class, model, revision; never secrets)."""
        ...


def is_deterministic(temperature: float, seed: int | None) -> bool:
    """Whether a request asks for a reproducible answer (greedy, or sampled with a seed)."""
    return temperature == 0 or seed is not None


def check_request(messages: Sequence[Message], max_tokens: int, temperature: float) -> None:
    """Validate the arguments every backend shares; raises `ValueError` naming the problem.

    Text that UTF-8 cannot encode (a lone surrogate) raises `UnencodableTextError` naming
    the message: no server, tokenizer or cache could take it, so it is never sent or retried.
    """
    if not messages:
        raise ValueError("complete() needs at least one message")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message or not isinstance(message.get("content"), str):
            raise ValueError(f"message {i} must be a dict with 'role' and str 'content', got {message!r:.120}")
        check_encodable(message["content"], f"message {i} ({message['role']}) of the request")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature!r}")
