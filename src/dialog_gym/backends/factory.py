"""Build a backend from a name or a `KIND:TARGET` spec, as the CLI and `make_simulator` take them."""

from __future__ import annotations

from typing import Any

from dialog_gym.backends.base import Backend

BACKEND_KINDS = ("openai", "transformers")


def make_backend(kind: str, *, cache: str | None = None, **kwargs: Any) -> Backend:
    """`kind="openai"`: `OpenAIBackend(model=..., base_url=..., ...)`; `kind="transformers"`:
    `TransformersBackend(model_path=..., ...)`. `cache=PATH` wraps it in a `CachedBackend`."""
    backend: Backend
    if kind == "openai":
        from dialog_gym.backends.openai_backend import OpenAIBackend

        if "model" not in kwargs:
            raise TypeError("the 'openai' backend needs model=... (the model name the server serves)")
        backend = OpenAIBackend(**kwargs)
    elif kind == "transformers":
        from dialog_gym.backends.transformers_backend import TransformersBackend

        backend = TransformersBackend(**kwargs)
    else:
        raise ValueError(f"unknown backend {kind!r}; expected one of {BACKEND_KINDS}")
    if cache is not None:
        from dialog_gym.backends.cached import CachedBackend

        backend = CachedBackend(backend, cache)
    return backend


def backend_from_spec(spec: str, **kwargs: Any) -> Backend:
    """`openai:MODEL` or `transformers:PATH` (extra kwargs such as `base_url` pass through)."""
    kind, sep, target = spec.partition(":")
    if not sep or not target:
        raise ValueError(f"backend spec {spec!r} must look like 'openai:MODEL' or 'transformers:PATH'")
    if kind == "openai":
        return make_backend(kind, model=target, **kwargs)
    if kind == "transformers":
        kwargs.pop("base_url", None)
        return make_backend(kind, model_path=target, **kwargs)
    raise ValueError(f"unknown backend {kind!r} in {spec!r}; expected one of {BACKEND_KINDS}")
