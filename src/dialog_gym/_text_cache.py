"""`byte_bounded_cache`: an LRU cache of text analyses that holds at most so many bytes.

The offline simulators analyse every message of a conversation again on each turn (its
n-grams, content words, hashed n-gram codes), so they cache those analyses by text. A
cache bounded by entries alone grows with the texts' length: 16,384 analyses of
8,000-character replies held about 4 GB. This cache counts what each entry holds (the key
texts and the result, measured with `sys.getsizeof`) and evicts the least recently used
entries beyond `max_bytes`; a result larger than a quarter of the budget is returned
without being cached, so a single huge text never flushes the rest.
"""

from __future__ import annotations

import functools
import itertools
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import numpy as np

R = TypeVar("R")
_SAMPLE = 8  # a larger collection is measured from its first items (the items of one kind: n-grams, words)


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    entries: int
    bytes: int
    max_bytes: int


def size_of(value: Any) -> int:
    """The bytes `value` holds: a string, a numpy array, or a set, tuple or list of strings."""
    if isinstance(value, np.ndarray):
        return sys.getsizeof(value) + (0 if value.base is None else value.nbytes)
    if isinstance(value, (frozenset, set, tuple, list)):
        if len(value) <= _SAMPLE:
            return sys.getsizeof(value) + sum(map(sys.getsizeof, value))
        sample = sum(map(sys.getsizeof, itertools.islice(value, _SAMPLE)))  # items of one kind: n-grams, words
        return sys.getsizeof(value) + sample * len(value) // _SAMPLE
    return sys.getsizeof(value)


class ByteBoundedCache:
    """`fn` with an LRU cache of its results, keyed by its positional arguments and bounded
    by `max_bytes` (keys and results, see `size_of`) and by `max_entries`."""

    def __init__(self, fn: Callable[..., R], *, max_bytes: int, max_entries: int):
        if max_bytes < 1 or max_entries < 1:
            raise ValueError(f"max_bytes and max_entries must be >= 1, got {max_bytes} and {max_entries}")
        self.fn = fn
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[Any, ...], tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._hits = self._misses = 0
        self._lock = threading.Lock()
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any) -> Any:
        # A hit takes no lock: `get` and `move_to_end` are single calls into C that the GIL
        # keeps whole; another thread may evict the entry between them, which only skips the move.
        entry = self._entries.get(args)
        if entry is not None:
            try:
                self._entries.move_to_end(args)
            except KeyError:
                pass
            self._hits += 1
            return entry[0]
        with self._lock:
            self._misses += 1
        value = self.fn(*args)
        cost = size_of(value) + sum(map(size_of, args))
        if cost > self.max_bytes // 4:
            return value
        with self._lock:
            if args not in self._entries:
                self._entries[args] = (value, cost)
                self._bytes += cost
                while self._bytes > self.max_bytes or len(self._entries) > self.max_entries:
                    _, (_, freed) = self._entries.popitem(last=False)
                    self._bytes -= freed
        return value

    def cache_info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self._hits, self._misses, len(self._entries), self._bytes, self.max_bytes)

    def cache_clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
            self._hits = self._misses = 0

    def __reduce__(self) -> str:  # pickled by name, like a module-level function
        return self.__qualname__


def byte_bounded_cache(*, max_bytes: int, max_entries: int = 16_384) -> Callable[[Callable[..., R]], ByteBoundedCache]:
    """Decorator: `@byte_bounded_cache(max_bytes=32 * 2**20)` (see `ByteBoundedCache`)."""

    def decorate(fn: Callable[..., R]) -> ByteBoundedCache:
        return ByteBoundedCache(fn, max_bytes=max_bytes, max_entries=max_entries)

    return decorate
