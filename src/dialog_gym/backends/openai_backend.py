"""`OpenAIBackend`: chat completions from any OpenAI-compatible server (vLLM, SGLang, Ollama, APIs)."""

from __future__ import annotations

import asyncio
import os
import random
import threading
import time
import weakref
from json import JSONDecodeError
from typing import Any, Literal, Sequence
from urllib.parse import urlsplit, urlunsplit

import openai

from dialog_gym.backends._limits import SharedLimiter
from dialog_gym.backends.base import BackendError, Completion, check_request
from dialog_gym.types import Message, Usage

RETRYABLE_STATUS = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
PLACEHOLDER_KEY = "EMPTY"  # what local servers (vLLM, SGLang, Ollama) accept when they need none


class _Secret:
    """A string that never shows itself in a repr, a str() or a log line."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__


class _MalformedResponse(Exception):
    pass


class OpenAIBackend:
    """Chat completions over HTTP with bounded concurrency, timeouts and retries.

    Arguments:
        model: the model name the server knows (e.g. "deepseek-chat", "Qwen/Qwen2.5-7B-Instruct").
        base_url: the server's `/v1` URL; None uses OpenAI's (or `$OPENAI_BASE_URL`).
        api_key: the key; None reads `api_key_env`. With neither, a custom `base_url` gets
            the placeholder "EMPTY" (local servers need none) and OpenAI's URL is an error.
            The key never appears in a repr, a log line, an exception or a record.
        api_key_env: the environment variable holding the key.
        timeout_s: the deadline of each attempt, from sending the request to the last byte of
            the answer: a server that dribbles its body is cut off there like one that hangs
            (a retryable failure). Also the HTTP client's connect/read timeout.
        max_concurrency: requests in flight at once, across every env and event loop that
            shares this backend instance.
        max_retries: retries after the first attempt on 429, 408/409/425, 5xx, timeouts,
            connection errors and malformed responses. Other 4xx and client-side faults
            (text UTF-8 cannot encode: `check_request` names the message) fail at once.
        backoff_s, max_backoff_s: exponential backoff (`backoff_s * 2**k`, capped) with
            jitter (a factor in [0.5, 1]); a server's `retry-after` is honoured up to the cap.
        max_retry_time_s: no retry starts once this much time has passed since the call.
        json_mode: `"auto"` sends `response_format={"type": "json_object"}` when a caller
            asks for JSON and stops sending it after the server rejects it (400); True
            always sends it; False never does.
        extra_body: extra JSON fields for every request (e.g. vLLM's `top_k`).
        seed: seeds the backoff jitter (the only randomness here).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 60.0,
        max_concurrency: int = 64,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        max_backoff_s: float = 8.0,
        max_retry_time_s: float = 120.0,
        json_mode: bool | Literal["auto"] = "auto",
        extra_body: dict[str, Any] | None = None,
        seed: int = 0,
    ):
        if not model:
            raise ValueError("OpenAIBackend needs a model name (model=...)")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        if json_mode not in (True, False, "auto"):
            raise ValueError(f"json_mode must be True, False or 'auto', got {json_mode!r}")
        key = api_key if api_key is not None else os.environ.get(api_key_env)
        if not key:
            if base_url is None and not os.environ.get("OPENAI_BASE_URL"):
                raise ValueError(
                    f"no API key for OpenAI's API: pass api_key=... or set ${api_key_env} "
                    "(or pass base_url=... for a local server that needs none)"
                )
            key = PLACEHOLDER_KEY
        self.model = model
        self.base_url = base_url
        self._api_key = _Secret(key)
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.max_retry_time_s = max_retry_time_s
        self.json_mode = json_mode
        self._json_supported = json_mode is not False
        self.extra_body = dict(extra_body or {})
        self._limiter = SharedLimiter(max_concurrency)
        self._jitter = random.Random(seed)
        self._jitter_lock = threading.Lock()
        self._clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI]" = weakref.WeakKeyDictionary()
        self._clients_lock = threading.Lock()

    @property
    def max_concurrency(self) -> int:
        return self._limiter.limit

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self.model!r}, base_url={_public_url(self.base_url)!r}, max_concurrency={self.max_concurrency})"

    def identity(self) -> dict[str, Any]:
        return {"class": "OpenAIBackend", "model": self.model, "base_url": _public_url(self.base_url)}

    # -- clients: one per event loop (an HTTP connection pool belongs to one loop) --------
    def _client(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            client = self._clients.get(loop)
            if client is None:
                client = openai.AsyncOpenAI(
                    api_key=self._api_key.reveal(), base_url=self.base_url, timeout=self.timeout_s, max_retries=0
                )
                self._clients[loop] = client
            return client

    async def aclose(self) -> None:
        """Close this event loop's HTTP client (the others close with their loops)."""
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            client = self._clients.pop(loop, None)
        if client is not None:
            await client.close()

    # -- the request ----------------------------------------------------------------------
    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None,
        json: bool = False,
    ) -> Completion:
        check_request(messages, max_tokens, temperature)
        started = time.monotonic()
        usage = Usage()
        errors: list[str] = []
        while True:
            use_json = json and self._json_supported
            retryable, retry_after = True, None
            async with self._limiter:
                usage.calls += 1
                try:
                    # A deadline on the whole attempt: the client's own timeout is per read,
                    # so a body sent a chunk at a time would never trip it.
                    text, finish_reason, call_usage = await asyncio.wait_for(
                        self._attempt(messages, max_tokens, temperature, seed, use_json), self.timeout_s
                    )
                except asyncio.TimeoutError:
                    errors.append(f"no complete answer within the {self.timeout_s:g} s deadline")
                except openai.APIStatusError as exc:
                    status = exc.status_code
                    if status == 400 and use_json and self.json_mode == "auto" and "response_format" in _message(exc):
                        self._json_supported = False  # retry at once without JSON mode
                        errors.append("json mode rejected by the server; continuing without it")
                        continue
                    retryable = status in RETRYABLE_STATUS
                    retry_after = _retry_after(exc)
                    errors.append(self._scrub(f"HTTP {status}: {_message(exc)}"))
                except openai.APITimeoutError:
                    errors.append(f"timeout after {self.timeout_s:g} s")
                except openai.APIConnectionError as exc:
                    errors.append(self._scrub(f"connection error: {exc.__cause__ or exc}"))
                except UnicodeEncodeError as exc:  # in the request: the same bytes would fail again
                    retryable = False
                    errors.append(
                        f"the request cannot be encoded as UTF-8 ({exc.reason}: U+{ord(exc.object[exc.start]):04X}); "
                        "a client-side fault that no retry can fix"
                    )
                except (_MalformedResponse, UnicodeDecodeError, JSONDecodeError, openai.APIResponseValidationError) as exc:
                    errors.append(self._scrub(f"malformed response: {exc}"[:300]))
                else:
                    usage.add(call_usage)
                    return Completion(
                        text=text,
                        usage=usage,
                        latency_s=time.monotonic() - started,
                        retries=usage.calls - 1,
                        errors=tuple(errors),
                        finish_reason=finish_reason,
                    )
            elapsed = time.monotonic() - started
            failures = usage.calls - 1
            delay = self._delay(failures, retry_after)
            if not retryable or failures >= self.max_retries or elapsed + delay > self.max_retry_time_s:
                why = "not retryable" if not retryable else f"gave up after {usage.calls} attempt(s) in {elapsed:.1f} s"
                raise BackendError(
                    f"OpenAIBackend({self.model!r}) request failed ({why}): {errors[-1]}",
                    usage=usage, attempts=usage.calls, errors=errors,
                )
            await asyncio.sleep(delay)

    async def _attempt(
        self, messages: Sequence[Message], max_tokens: int, temperature: float, seed: int | None, use_json: bool
    ) -> tuple[str, str | None, Usage]:
        response = await self._client().chat.completions.create(
            model=self.model,
            messages=list(messages),  # type: ignore[arg-type]
            max_tokens=max_tokens,
            temperature=temperature,
            **({"seed": seed} if seed is not None else {}),
            **({"response_format": {"type": "json_object"}} if use_json else {}),
            **({"extra_body": self.extra_body} if self.extra_body else {}),
        )
        return _read_response(response)

    def _delay(self, failures: int, retry_after: float | None) -> float:
        with self._jitter_lock:
            jitter = 0.5 + 0.5 * self._jitter.random()
        delay = min(self.max_backoff_s, self.backoff_s * 2**failures) * jitter
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_backoff_s))
        return delay

    def _scrub(self, text: str) -> str:
        key = self._api_key.reveal()
        return text.replace(key, "***") if key and key != PLACEHOLDER_KEY else text


def _read_response(response: Any) -> tuple[str, str | None, Usage]:
    choices = getattr(response, "choices", None)
    if not choices:
        raise _MalformedResponse(f"no choices in the response ({type(response).__name__}: {str(response)[:120]!r})")
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        raise _MalformedResponse("the first choice has no text content")
    raw_usage = getattr(response, "usage", None)
    try:
        usage = Usage(
            prompt_tokens=int(getattr(raw_usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(raw_usage, "completion_tokens", 0) or 0),
        )
    except (TypeError, ValueError):
        raise _MalformedResponse(f"usage is not token counts: {raw_usage!r:.120}") from None
    return content, getattr(choices[0], "finish_reason", None), usage


def _message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
    return str(exc.message)[:300]


def _retry_after(exc: openai.APIStatusError) -> float | None:
    headers = exc.response.headers if exc.response is not None else {}
    try:
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000
        if "retry-after" in headers:
            return float(headers["retry-after"])
    except ValueError:
        return None
    return None


def _public_url(url: str | None) -> str | None:
    """The URL without credentials or query string (they may carry secrets)."""
    if url is None:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
