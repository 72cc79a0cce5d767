"""A concurrency limit that holds across event loops and threads.

Each `EmpathyDialogEnv` runs its coroutines on its own event loop, so an `asyncio.Semaphore`
(bound to one loop) cannot bound the requests of several envs that share a backend. This
limiter hands out slots under a thread lock and wakes each waiter on its own loop.
"""

from __future__ import annotations

import asyncio
import collections
import threading
from types import TracebackType


class SharedLimiter:
    """At most `limit` holders at a time, across every event loop and thread; FIFO waiters."""

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError(f"the concurrency limit must be >= 1, got {limit}")
        self.limit = limit
        self._free = limit
        self._lock = threading.Lock()
        self._waiters: collections.deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = collections.deque()

    @property
    def in_use(self) -> int:
        return self.limit - self._free

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._free > 0 and not self._waiters:
                self._free -= 1
                return
            future: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, future))
        try:
            await future
        except asyncio.CancelledError:
            with self._lock:
                try:
                    self._waiters.remove((loop, future))
                    still_waiting = True
                except ValueError:
                    still_waiting = False
            # Handed over already: if the hand-over ran, the slot is ours to give back; if it
            # is still pending, `_grant` finds the future cancelled and passes the slot on.
            if not still_waiting and future.done() and not future.cancelled():
                self.release()
            raise

    def release(self) -> None:
        with self._lock:
            while self._waiters:
                loop, future = self._waiters.popleft()
                if loop.is_closed():
                    continue
                loop.call_soon_threadsafe(self._grant, future)
                return
            self._free += 1

    def _grant(self, future: asyncio.Future[None]) -> None:
        if future.done():  # cancelled before the hand-over arrived: pass the slot on
            self.release()
        else:
            future.set_result(None)

    async def __aenter__(self) -> "SharedLimiter":
        await self.acquire()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()
