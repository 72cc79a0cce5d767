"""Copying and pickling envs: the offline ones copy, the others refuse with a clear message.

An env with an offline simulator (`"calibrated"`, `"rule"`, `"replay"`: pure functions of
the conversation, no connections) is plain data plus an event loop, so `copy.deepcopy`
and `pickle` give an independent env in the same state (generator, persona, mood,
history) that steps exactly as the original does: what vector workers and search over
dialogues need. The copy gets an event loop of its own. An env whose simulator holds
live connections (an HTTP client, a model worker: it has `aclose()`) cannot be copied
meaningfully, and raises `TypeError` saying so instead of failing deep inside a lock.
"""

from __future__ import annotations

from typing import Any

from dialog_gym._async import LoopRunner


def holds_connections(simulator: Any) -> bool:
    """Whether a simulator holds connections or workers (it has `aclose()`); such a
    simulator cannot be copied or pickled."""
    return callable(getattr(simulator, "aclose", None))


class CopyableEnv:
    """Mixin for the envs: `__getstate__`/`__setstate__` (see the module docstring).

    The env keeps its `DialogConfig` as `config` and its event loop as `_runner`.
    """

    config: Any
    _runner: LoopRunner

    def _refuse_copy(self) -> str | None:
        """Why this env cannot be copied now, or None."""
        simulator = self.config.simulator
        if holds_connections(simulator):
            return (
                f"its simulator {simulator!r} holds live connections (an HTTP client or a model worker); "
                "only envs with an offline simulator ('calibrated', 'rule', 'replay') copy. "
                "Make another env with the same arguments instead"
            )
        return None

    def __getstate__(self) -> dict[str, Any]:
        why = self._refuse_copy()
        if why is not None:
            raise TypeError(f"{type(self).__name__} cannot be copied or pickled: {why}")
        state = self.__dict__.copy()
        state["_runner"] = None  # an event loop is not copied: the copy starts its own
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._runner = LoopRunner()
