"""`CachedBackend`: a content-addressed on-disk cache (sqlite) in front of any backend."""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Sequence

from dialog_gym.backends.base import Backend, Completion, check_request, is_deterministic
from dialog_gym.types import Message, Usage

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    finish_reason TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL
)
"""
CACHE_FORMAT = 1


class CachedBackend:
    """Serve repeated deterministic requests from a sqlite file instead of the backend.

    The key is a SHA-256 of the inner backend's `identity()`, the messages and every
    sampling argument, so a different model, prompt or seed never hits another's entry.
    Only deterministic requests (temperature 0, or an explicit seed) are cached; sampled
    ones pass straight through unless `cache_sampled=True` (then a sampled request always
    returns its first answer: only for replaying a fixed run).

    It is safe under concurrent use: from many coroutines, event loops and threads (one
    connection behind a lock; identical requests in flight at once share one backend call)
    and from several processes (WAL journal, busy timeout, first writer wins).

    A hit returns `cached=True` with zero usage. `hits`, `misses` and `bypassed` count
    requests.
    """

    def __init__(self, inner: Backend, path: str | Path, *, cache_sampled: bool = False):
        self.inner = inner
        self.path = Path(path)
        self.cache_sampled = cache_sampled
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._lock = threading.Lock()
        self._in_flight: dict[str, concurrent.futures.Future[Completion]] = {}
        self.hits = self.misses = self.bypassed = 0

    @property
    def supports_prefill(self) -> bool:
        return bool(getattr(self.inner, "supports_prefill", False))

    def __repr__(self) -> str:
        return f"CachedBackend({self.inner!r}, path={str(self.path)!r})"

    def identity(self) -> dict[str, Any]:
        return {"class": "CachedBackend", "inner": self.inner.identity()}

    def key(self, messages: Sequence[Message], *, max_tokens: int, temperature: float, seed: int | None, json_mode: bool) -> str:
        """The cache key of a request (hex SHA-256)."""
        payload = {
            "format": CACHE_FORMAT,
            "backend": self.inner.identity(),
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "max_tokens": max_tokens,
            "temperature": float(temperature),
            "seed": seed,
            "json": bool(json_mode),
        }
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

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
        if not (self.cache_sampled or is_deterministic(temperature, seed)):
            with self._lock:
                self.bypassed += 1
            return await self.inner.complete(messages, max_tokens=max_tokens, temperature=temperature, seed=seed, json=json)
        started = time.monotonic()
        key = self.key(messages, max_tokens=max_tokens, temperature=temperature, seed=seed, json_mode=json)
        with self._lock:
            row = self._db.execute(
                "SELECT text, finish_reason FROM completions WHERE key = ?", (key,)
            ).fetchone()
            if row is not None:
                self.hits += 1
                return Completion(text=row[0], usage=Usage(), latency_s=time.monotonic() - started, cached=True, finish_reason=row[1])
            shared = self._in_flight.get(key)
            if shared is None:
                self.misses += 1
                owner = self._in_flight[key] = concurrent.futures.Future()
            else:
                self.hits += 1
        if shared is not None:  # the same request is in flight: wait for its answer
            completion = await asyncio.wrap_future(shared)
            return Completion(text=completion.text, usage=Usage(), latency_s=time.monotonic() - started,
                              cached=True, finish_reason=completion.finish_reason)
        try:
            completion = await self.inner.complete(messages, max_tokens=max_tokens, temperature=temperature, seed=seed, json=json)
        except BaseException as exc:
            with self._lock:
                del self._in_flight[key]
            owner.set_exception(exc)
            _ = owner.exception()  # mark retrieved: waiters re-raise it, nobody else must
            raise
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO completions VALUES (?, ?, ?, ?, ?, ?)",
                (key, completion.text, completion.finish_reason, completion.usage.prompt_tokens,
                 completion.usage.completion_tokens, time.time()),
            )
            del self._in_flight[key]
        owner.set_result(completion)
        return completion

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    async def aclose(self) -> None:
        aclose = getattr(self.inner, "aclose", None)
        if aclose is not None:
            await aclose()

    def close(self) -> None:
        """Close the database (the inner backend is closed with `aclose`)."""
        with self._lock:
            self._db.close()
