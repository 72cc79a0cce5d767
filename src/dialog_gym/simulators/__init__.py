"""User simulators: the environment and the reward of an empathy dialogue.

Simulators are built by name with `make_simulator`. The names `"rule"`, `"openai"` and
`"transformers"` are this package's; a layer above adds its own with `register_simulator`
(`dialog_gym` registers `"replay"`, the simulator built from episode records), so this
layer never imports the layers above it.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from dialog_gym.simulators.base import Appraisal, Response, Simulator, SimulatorError
from dialog_gym.simulators.calibrated import CalibratedSimulator
from dialog_gym.simulators.judge import V1_JUDGE
from dialog_gym.simulators.recital import RecitingPlanner
from dialog_gym.simulators.rule import RuleSimulator, appraise


# The simulator every env, rollout and evaluation uses unless told otherwise.
DEFAULT_SIMULATOR = "calibrated"


@dataclass(frozen=True)
class _Registered:
    build: Callable[..., Simulator]
    options: Callable[[], Collection[str]]  # the keyword arguments `build` takes


_SIMULATORS: dict[str, _Registered] = {}


def register_simulator(
    name: str, build: Callable[..., Simulator], *, options: Collection[str] | Callable[[], Collection[str]] | None = None
) -> None:
    """Make `make_simulator(name, **kwargs)` call `build(**kwargs)`.

    `options` are the keyword arguments `build` takes (a collection, or a callable that
    returns one when asked, for builders whose options need a heavy import); None reads
    them from `build`'s signature.
    """
    if options is None:
        listed = _keyword_names(build)
        get_options: Callable[[], Collection[str]] = lambda: listed  # noqa: E731
    elif callable(options):
        get_options = options
    else:
        fixed = tuple(options)
        get_options = lambda: fixed  # noqa: E731
    _SIMULATORS[name] = _Registered(build, get_options)


def simulator_names() -> tuple[str, ...]:
    return tuple(_SIMULATORS)


def make_simulator(simulator: "str | Simulator" = DEFAULT_SIMULATOR, **kwargs: Any) -> Simulator:
    """Build a simulator from a name, or pass an instance through.

    Names: `"calibrated"` (offline default, a judge fitted on an LLM judge, the v2 judge
    unless `judge` names another; kwargs: `style`, `judge`), `"calibrated-v1"` (the v1
    judge, frozen; kwargs: `style`), `"rule"` (offline, v0; kwargs: `style`), `"openai"` (an OpenAI-compatible
    server; kwargs: `model`, `base_url`, `api_key`, `style`, `language`, ...),
    `"transformers"` (a local model; kwargs: `model_path`, `style`, ...), and those
    registered with `register_simulator` (`"replay"`: recorded reactions; kwargs: `path`).
    An option the simulator does not take raises a `TypeError` that names it and lists
    the options it does take.
    """
    if not isinstance(simulator, str):
        if kwargs:
            raise TypeError(f"simulator options {sorted(kwargs)} given with a simulator instance; set them on the instance")
        return simulator
    registered = _SIMULATORS.get(simulator)
    if registered is None:
        raise ValueError(f"unknown simulator {simulator!r}; expected one of {simulator_names()} or a Simulator instance")
    valid = sorted(registered.options())
    unknown = sorted(set(kwargs) - set(valid))
    if unknown:
        hints = [f"{name!r} (did you mean {close[0]!r}?)" if (close := difflib.get_close_matches(name, valid, n=1)) else repr(name)
                 for name in unknown]
        raise TypeError(
            f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(hints)} for the {simulator!r} simulator "
            f"(an env passes the options it does not take itself to its simulator); the {simulator!r} "
            f"simulator takes: {', '.join(valid) or 'no options'}"
        )
    return registered.build(**kwargs)


def _keyword_names(build: Callable[..., Any]) -> tuple[str, ...]:
    parameters = inspect.signature(build).parameters.values()
    return tuple(p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def _llm(backend: str) -> tuple[Callable[..., Simulator], Callable[[], Collection[str]]]:
    def build(**kwargs: Any) -> Simulator:
        from dialog_gym.simulators.llm import LLMSimulator

        return LLMSimulator.from_backend_name(backend, **kwargs)

    def options() -> Collection[str]:
        from dialog_gym.simulators.llm import LLMSimulator

        return LLMSimulator.options(backend)

    return build, options


def _calibrated_v1(style: str = "vanilla") -> Simulator:
    """The v1 calibrated judge (`RLVER-Empathy-*-v1`), frozen: judge file `sage-deepseek-v3`."""
    return CalibratedSimulator(style, judge=V1_JUDGE, planner=RecitingPlanner(style))


register_simulator("rule", RuleSimulator)
register_simulator("calibrated", CalibratedSimulator)
register_simulator("calibrated-v1", _calibrated_v1)
for _backend in ("openai", "transformers"):
    _build, _options = _llm(_backend)
    register_simulator(_backend, _build, options=_options)


__all__ = [
    "DEFAULT_SIMULATOR",
    "Appraisal",
    "CalibratedSimulator",
    "Response",
    "RuleSimulator",
    "Simulator",
    "SimulatorError",
    "appraise",
    "make_simulator",
    "register_simulator",
    "simulator_names",
]
