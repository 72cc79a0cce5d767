"""Run the async core from synchronous code (the Gym facade)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Coroutine, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


class LoopRunner:
    """Owns one event loop and runs coroutines on it to completion.

    From plain synchronous code the loop runs in the calling thread. When the caller is
    already inside a running loop (a notebook, an async web app), the runner's loop runs in
    a private daemon thread instead, so `env.step` still works there. Either way every
    coroutine of one runner sees the same loop, which clients such as `openai.AsyncOpenAI`
    require.
    """

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._thread is None:
            if not _inside_running_loop():
                return self.loop.run_until_complete(coro)
            self._start_thread()
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def _start_thread(self) -> None:
        loop = self.loop
        self._thread = threading.Thread(target=loop.run_forever, name="dialog-gym-loop", daemon=True)
        self._thread.start()

    def close(self) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        if self._thread is not None:
            asyncio.run_coroutine_threadsafe(loop.shutdown_asyncgens(), loop).result(timeout=5)
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(timeout=5)
            self._thread = None
        else:
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


async def gather_or_cancel(awaitables: Sequence[Awaitable[T]]) -> list[T]:
    """`asyncio.gather`, except that the first failure cancels (and awaits) all the others."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _inside_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
