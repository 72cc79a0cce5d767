"""User simulators: the environment and the reward of an empathy dialogue.

Simulators are built by name with `make_simulator(name, **options)`, from a registry that
`register_simulator` fills, each entry declaring the options its simulator takes (checked,
with the closest spelling named on a typo), whether it is an *offline* judge, and how the
settings every command line shares (`--style`, `--simulator-model`, `--simulator-base-url`,
`--simulator-api-key-env`, `--simulator-path`) map to its options (`simulator_options`).

The names: `"calibrated"` (the default) and `"rule"` are offline judges; every backend of
`dialog_gym.backends` (`"openai"`, `"transformers"`, and any registered with
`register_backend`) is also an LLM simulator of the same name; a layer above adds its own
(`dialog_gym` registers `"replay"`, the simulator built from episode records), so this
layer never imports the layers above it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from dialog_gym._options import check_names, declared_options
from dialog_gym.backends.factory import backend_entry, backend_names
from dialog_gym.simulators.base import Appraisal, Response, Simulator, SimulatorError
from dialog_gym.simulators.calibrated import CalibratedSimulator
from dialog_gym.simulators.judge import V1_JUDGE
from dialog_gym.simulators.recital import RecitingPlanner
from dialog_gym.simulators.rule import RuleSimulator, appraise

# The simulator every env, rollout and evaluation uses unless told otherwise.
DEFAULT_SIMULATOR = "calibrated"
# The style a simulator without a `style` option plays.
DEFAULT_STYLE = "vanilla"

# The settings every command line (and the reference trainers) shares, with the flags that
# carry them; each simulator maps the ones it uses to its own options.
COMMON_SETTINGS: dict[str, str] = {
    "style": "--style",
    "model": "--simulator-model",
    "base_url": "--simulator-base-url",
    "api_key_env": "--simulator-api-key-env",
    "path": "--simulator-path",
    "timeout_s": "--simulator-timeout",
    "max_retries": "--simulator-max-retries",
    "max_retry_time_s": "--simulator-max-retry-time",
}
# The settings an LLM simulator passes to its backend under their own names, where it takes them.
_BACKEND_SETTINGS = ("base_url", "api_key_env", "timeout_s", "max_retries", "max_retry_time_s")


@dataclass(frozen=True)
class SimulatorEntry:
    """A registered simulator.

    Attributes:
        name: what `make_simulator` calls it.
        build: `build(**options) -> Simulator`.
        offline: an offline judge: it appraises with no model and no network, as a pure
            function of its inputs, so its calls are free and its records hold no LLM
            judgement (the calibrated and rule simulators).
        settings: which common setting fills which option (`{"path": "judge"}`); `style`
            goes to every simulator with a `style` option.
        required: the options a command line must give (`simulator_options` checks them).
        description: one line for listings and `--help`.
    """

    name: str
    build: Callable[..., Simulator]
    offline: bool = False
    settings: Mapping[str, str] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    description: str = ""
    _options: Callable[[], Collection[str]] = field(default=tuple, repr=False)

    @property
    def options(self) -> frozenset[str]:
        """The keyword arguments `build` takes."""
        return frozenset(self._options())


_SIMULATORS: dict[str, SimulatorEntry] = {}


def register_simulator(
    name: str,
    build: Callable[..., Simulator],
    *,
    options: Collection[str] | Callable[[], Collection[str]] | None = None,
    offline: bool = False,
    settings: Mapping[str, str] | None = None,
    required: Collection[str] = (),
    description: str = "",
) -> SimulatorEntry:
    """Declare a simulator: `make_simulator(name, **options)` then calls `build(**options)`.

    Arguments:
        name: the simulator's name; registering a name again replaces it.
        build: a `Simulator` class, or a function returning one.
        options: the keyword arguments `build` takes (a collection, or a callable returning
            one when asked, for a build whose module is heavy to import); None reads them
            from `build`'s signature.
        offline: whether it is an offline judge (see `SimulatorEntry.offline`).
        settings: which of the common settings (`COMMON_SETTINGS`: style, model, base_url,
            api_key_env, path) fill which option, e.g. `{"path": "judge"}`.
        required: options a command line must give, e.g. `("model",)`.
        description: one line for listings.
    """
    check_names(settings or {}, COMMON_SETTINGS, what="setting", where=f"of the {name!r} simulator")
    entry = SimulatorEntry(
        name, build, bool(offline), dict(settings or {}), tuple(required), description, declared_options(build, options)
    )
    _SIMULATORS[name] = entry
    return entry


def simulator_names() -> tuple[str, ...]:
    """Every name `make_simulator` builds: the registered simulators, then the backends."""
    return (*_SIMULATORS, *(name for name in backend_names() if name not in _SIMULATORS))


def simulator_entry(name: str) -> SimulatorEntry:
    """The registry entry of `name` (a backend's name gives its LLM simulator)."""
    if name in _SIMULATORS:
        return _SIMULATORS[name]
    if name in backend_names():
        return _llm_entry(name)
    raise ValueError(f"unknown simulator {name!r}; expected one of {simulator_names()} or a Simulator instance")


def is_offline(simulator: "str | Simulator") -> bool:
    """Whether a simulator (a name, or an instance of a registered class) is an offline judge.

    A name that is not registered (an identity recorded by another version) is not offline.
    """
    if isinstance(simulator, str):
        entry = _SIMULATORS.get(simulator)
        return entry is not None and entry.offline
    classes = type(simulator).__mro__
    return any(entry.offline and entry.build in classes for entry in _SIMULATORS.values())


def make_simulator(simulator: "str | Simulator" = DEFAULT_SIMULATOR, **options: Any) -> Simulator:
    """Build a simulator from a name, or pass an instance through.

    Names: `"calibrated"` (offline default, a judge fitted on an LLM judge, the v2 judge
    unless `judge` names another; options `style`, `judge`), `"calibrated-v1"` (the v1
    judge, frozen; `style`), `"rule"` (offline, v0; `style`), each backend's LLM simulator
    (`"openai"`: `model`, `base_url`, `api_key`, `style`, `language`, ...; `"transformers"`:
    `model_path`, `style`, ...), and those registered with `register_simulator`
    (`"replay"`: recorded reactions; `path`). An option the simulator does not declare
    raises a `TypeError` that names it, the closest declared one and all of them.
    """
    if not isinstance(simulator, str):
        if options:
            raise TypeError(f"simulator options {sorted(options)} given with a simulator instance; set them on the instance")
        return simulator
    entry = simulator_entry(simulator)
    check_names(options, entry.options, what="option", where=f"for the {simulator!r} simulator")
    return entry.build(**options)


def style_option(simulator: str, style: str | None) -> dict[str, str]:
    """The `style` option for `simulator` (`{}` for one that declares none and plays vanilla)."""
    if style is None:
        return {}
    if "style" in simulator_entry(simulator).options:
        return {"style": style}
    if style != DEFAULT_STYLE:
        raise ValueError(f"the {simulator!r} simulator has no styles (no 'style' option): it cannot play style {style!r}")
    return {}


def simulator_options(
    simulator: str,
    *,
    style: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    path: str | None = None,
    timeout_s: float | None = None,
    max_retries: int | None = None,
    max_retry_time_s: float | None = None,
) -> dict[str, Any]:
    """The options of `simulator` for the settings every command line shares: the one
    translation behind `dialog-gym eval`, `dialog-gym rescore` and the reference trainers.

    A setting left None is not passed. A setting the simulator does not use, or a required
    one missing, raises a `ValueError` that names its flag (`COMMON_SETTINGS`):
    `simulator_options("openai", model="m")` is `{"model": "m"}`,
    `simulator_options("calibrated", path="judge.json")` is `{"judge": "judge.json"}`.
    """
    entry = simulator_entry(simulator)
    options: dict[str, Any] = dict(style_option(simulator, style))
    given = {
        "model": model, "base_url": base_url, "api_key_env": api_key_env, "path": path,
        "timeout_s": timeout_s, "max_retries": max_retries, "max_retry_time_s": max_retry_time_s,
    }
    for setting, value in given.items():
        if value is None:
            continue
        option = entry.settings.get(setting)
        if option is None:
            used = ", ".join(COMMON_SETTINGS[s] for s in entry.settings)
            uses = f"it uses {used}" if used else "it uses none of the simulator flags"
            raise ValueError(f"the {simulator!r} simulator does not use {COMMON_SETTINGS[setting]} ({uses})")
        if option in options:
            raise ValueError(f"the {simulator!r} simulator takes its {option} from one flag; give only one of "
                             f"{', '.join(COMMON_SETTINGS[s] for s, o in entry.settings.items() if o == option)}")
        options[option] = value
    missing = [option for option in entry.required if option not in options]
    if missing:
        flags = [" or ".join(COMMON_SETTINGS[s] for s, o in entry.settings.items() if o == m) or m for m in missing]
        raise ValueError(f"the {simulator!r} simulator needs {', '.join(flags)}")
    return options


# -- LLM simulators: one per backend ------------------------------------------------------
def _llm_entry(backend: str) -> SimulatorEntry:
    target = backend_entry(backend).target

    def build(**options: Any) -> Simulator:
        from dialog_gym.simulators.llm import LLMSimulator

        return LLMSimulator.from_backend_name(backend, **options)

    def options() -> Collection[str]:
        from dialog_gym.simulators.llm import LLMSimulator

        return LLMSimulator.options(backend)

    backend_options = backend_entry(backend).options
    settings = {"model": target, **({"path": target} if target != "model" else {})}
    settings.update({key: key for key in _BACKEND_SETTINGS if key in backend_options})
    return SimulatorEntry(
        backend, build, offline=False, settings=settings, required=(target,),
        description=f"an LLM plays the user, on the {backend!r} backend", _options=options,
    )


def _calibrated_v1(style: str = "vanilla") -> Simulator:
    """The v1 calibrated judge (`RLVER-Empathy-*-v1`), frozen: judge file `sage-deepseek-v3`."""
    return CalibratedSimulator(style, judge=V1_JUDGE, planner=RecitingPlanner(style))


register_simulator(
    "calibrated", CalibratedSimulator, offline=True, settings={"path": "judge"},
    description="offline judge fitted on SAGE's recorded DeepSeek-V3 judgements, v2 (the default)",
)
register_simulator("calibrated-v1", _calibrated_v1, offline=True, description="the v1 calibrated judge, frozen (the v1 envs)")
register_simulator("rule", RuleSimulator, offline=True, description="offline hand-written judge (the v0 envs)")


__all__ = [
    "COMMON_SETTINGS",
    "DEFAULT_SIMULATOR",
    "Appraisal",
    "CalibratedSimulator",
    "Response",
    "RuleSimulator",
    "Simulator",
    "SimulatorEntry",
    "SimulatorError",
    "appraise",
    "is_offline",
    "make_simulator",
    "register_simulator",
    "simulator_entry",
    "simulator_names",
    "simulator_options",
]
