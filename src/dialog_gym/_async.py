"""Run the async core from synchronous code: the one way every sync entry point does it.

The envs (`reset`/`step`), the trainer adapters and the sync facades (`rollout`,
`evaluate`, `replay`, `rescore`) all go through `LoopRunner`, so each of them works both
from plain scripts and from inside a running event loop (a notebook, an async web app).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


class LoopRunner:
    """Owns one event loop and runs coroutines on it to completion.

    From plain synchronous code the loop runs in the calling thread. When the caller is
    already inside a running loop (a notebook, an async web app), the runner's loop runs in
    a private daemon thread instead, so `env.step` still works there. Either way every
    coroutine of one runner sees the same loop, which clients such as `openai.AsyncOpenAI`
    require.

    An interruption while a coroutine runs (Ctrl-C, or an exception in the waiting thread)
    cancels the coroutine and waits for it to clean up before it propagates, as
    `asyncio.run` does: nothing is left running on the loop.
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
                return self._run_here(coro)
            self._start_thread()
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # interrupted while waiting: cancel the coroutine on the loop's thread
            raise

    def _run_here(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self.loop
        task = loop.create_task(coro)
        try:
            return loop.run_until_complete(task)
        except BaseException:
            if not task.done():  # interrupted inside the loop: let the coroutine clean up first
                task.cancel()
                with contextlib.suppress(BaseException):
                    loop.run_until_complete(task)
            raise

    def _start_thread(self) -> None:
        loop = self.loop
        self._thread = threading.Thread(target=loop.run_forever, name="dialog-gym-loop", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Cancel what is still scheduled on the loop, then close it (and stop its thread)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        if self._thread is not None:
            asyncio.run_coroutine_threadsafe(_shutdown(loop), loop).result(timeout=5)
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(timeout=5)
            self._thread = None
        else:
            loop.run_until_complete(_shutdown(loop))
        loop.close()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion on a fresh `LoopRunner`, then close it: the synchronous
    facade of a one-shot async entry point (`rollout`, `evaluate`, `replay`, `rescore`)."""
    runner = LoopRunner()
    try:
        return runner.run(coro)
    finally:
        runner.close()


def sync_facade(coroutine_function: Callable[..., Coroutine[Any, Any, T]]) -> Callable[..., T]:
    """The synchronous twin of a one-shot async entry point: `rollout = sync_facade(arollout)`.

    The facade has the async function's signature and docstring (so `help` and
    `inspect.signature` show its parameters), is named without the leading `a`, and runs
    each call to completion with `run_sync`, also from inside a running event loop (a
    notebook: the loop then runs in a worker thread).
    """
    if not inspect.iscoroutinefunction(coroutine_function):
        raise TypeError(f"sync_facade needs an async function, got {coroutine_function!r}")
    async_name = coroutine_function.__name__
    name = async_name[1:] if async_name.startswith("a") else f"{async_name}_sync"

    @functools.wraps(coroutine_function)
    def facade(*args: Any, **kwargs: Any) -> T:
        return run_sync(coroutine_function(*args, **kwargs))

    facade.__name__ = name
    facade.__qualname__ = name
    facade.__signature__ = inspect.signature(coroutine_function)  # type: ignore[attr-defined]
    intro = f"`{async_name}` from synchronous code (also inside a running event loop, e.g. a notebook).\n\n"
    facade.__doc__ = intro + inspect.cleandoc(coroutine_function.__doc__ or "")
    del facade.__wrapped__  # type: ignore[attr-defined]  # not a coroutine function: inspect must not say so
    return facade


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


async def _shutdown(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel and await every other task of `loop`, then close its async generators."""
    tasks = [t for t in asyncio.all_tasks(loop) if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await loop.shutdown_asyncgens()


def _inside_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
