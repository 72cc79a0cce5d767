"""The backend registry: a backend is built by name, or from a `NAME:TARGET` spec.

`register_backend` is the one place a backend is declared. A registered backend is then
everywhere a backend can be named: `make_backend(name, ...)`, an agent spec
(`dialog-gym eval --agent NAME:TARGET`), a persona generator (`personas generate --backend
NAME:TARGET`), and an LLM user simulator of the same name (`simulator="NAME"`, see
`dialog_gym.simulators`). The bundled backends are `"openai"` and `"transformers"`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from dialog_gym._options import check_names, declared_options, keyword_names
from dialog_gym.backends.base import Backend

__all__ = ["BackendEntry", "backend_entry", "backend_from_spec", "backend_names", "make_backend", "register_backend"]


@dataclass(frozen=True)
class BackendEntry:
    """A registered backend.

    Attributes:
        name: what `make_backend` and specs call it.
        build: `build(**options) -> Backend`.
        target: the option the `TARGET` of a `NAME:TARGET` spec fills (`"model"`, `"model_path"`).
        required: options `build` cannot do without.
        description: one line for listings and `--help`.
    """

    name: str
    build: Callable[..., Backend]
    target: str
    required: tuple[str, ...] = ()
    description: str = ""
    _options: Callable[[], Collection[str]] = field(default=tuple, repr=False)

    @property
    def options(self) -> frozenset[str]:
        """The options `build` takes (`cache` is every backend's, see `make_backend`)."""
        return frozenset(self._options()) | {"cache"}


_BACKENDS: dict[str, BackendEntry] = {}


def register_backend(
    name: str,
    build: Callable[..., Backend],
    *,
    target: str,
    options: Collection[str] | Callable[[], Collection[str]] | None = None,
    required: Collection[str] = (),
    description: str = "",
) -> BackendEntry:
    """Declare a backend: `make_backend(name, **options)` then calls `build(**options)`.

    Arguments:
        name: the backend's name (a spec's `NAME`); registering a name again replaces it.
        build: a class or function returning a `Backend`.
        target: the option a spec's `TARGET` fills: `"model"` for `openai:MODEL`.
        options: the keyword arguments `build` takes; a callable returning them when asked
            (for a build whose module is heavy to import); None reads `build`'s signature.
        required: options without which `build` cannot work (named in the error).
        description: one line for listings.
    """
    if not name or ":" in name:
        raise ValueError(f"a backend name must be non-empty and hold no ':', got {name!r}")
    entry = BackendEntry(name, build, target, tuple(required), description, declared_options(build, options))
    _BACKENDS[name] = entry
    return entry


def backend_names() -> tuple[str, ...]:
    """The registered backends, in registration order."""
    return tuple(_BACKENDS)


def backend_entry(name: str) -> BackendEntry:
    try:
        return _BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; expected one of {backend_names()}") from None


def make_backend(name: str, *, cache: str | None = None, **options: Any) -> Backend:
    """Build the backend registered as `name` with `options`, checked against the options it
    declares (an unknown one raises a `TypeError` with the closest spelling).

    `cache=PATH` wraps it in a `CachedBackend` (a content-addressed on-disk cache).
    """
    entry = backend_entry(name)
    check_names(options, entry.options - {"cache"}, what="option", where=f"for the {name!r} backend")
    missing = [option for option in entry.required if options.get(option) is None]
    if missing:
        raise TypeError(f"the {name!r} backend needs {', '.join(f'{m}=...' for m in missing)}")
    backend = entry.build(**options)
    if cache is not None:
        from dialog_gym.backends.cached import CachedBackend

        backend = CachedBackend(backend, cache)
    return backend


def backend_from_spec(spec: str, **options: Any) -> Backend:
    """`NAME:TARGET` (`openai:MODEL`, `transformers:PATH`): the backend `NAME` with its target
    option set to `TARGET`. Options whose value is None are left out (the backend's default)."""
    name, sep, target = spec.partition(":")
    if not sep or not target:
        forms = ", ".join(f"'{entry.name}:{entry.target.upper()}'" for entry in _BACKENDS.values())
        raise ValueError(f"backend spec {spec!r} must look like {forms}")
    entry = backend_entry(name)
    given = {key: value for key, value in options.items() if value is not None}
    return make_backend(name, **{entry.target: target, **given})


# -- the bundled backends: their modules import torch or openai, so only when built -----------
def _openai(**options: Any) -> Backend:
    from dialog_gym.backends.openai_backend import OpenAIBackend

    return OpenAIBackend(**options)


def _openai_options() -> tuple[str, ...]:
    from dialog_gym.backends.openai_backend import OpenAIBackend

    return keyword_names(OpenAIBackend)


def _transformers(**options: Any) -> Backend:
    from dialog_gym.backends.transformers_backend import TransformersBackend

    return TransformersBackend(**options)


def _transformers_options() -> tuple[str, ...]:
    from dialog_gym.backends.transformers_backend import TransformersBackend

    return keyword_names(TransformersBackend)


register_backend(
    "openai", _openai, target="model", options=_openai_options, required=("model",),
    description="any OpenAI-compatible chat server (vLLM, SGLang, Ollama, hosted APIs)",
)
register_backend(
    "transformers", _transformers, target="model_path", options=_transformers_options,
    description="a local causal LM (a model folder or a .gguf file), batched",
)
