"""Text-generation backends behind one async protocol (see `Backend`).

- `OpenAIBackend`: any OpenAI-compatible server (vLLM, SGLang, Ollama, hosted APIs).
- `TransformersBackend`: a local causal LM; concurrent requests are batched.
- `CachedBackend`: a content-addressed on-disk cache around any backend.

Backends are built by name with `make_backend` (or from a `NAME:TARGET` spec); a new one is
declared once, with `register_backend` (see `dialog_gym.backends.factory`).

The OpenAI and transformers backends import their heavy dependencies lazily, so
`import dialog_gym.backends` works without them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dialog_gym.backends.base import Backend, BackendError, Completion, is_deterministic
from dialog_gym.backends.cached import CachedBackend
from dialog_gym.backends.factory import backend_from_spec, backend_names, make_backend, register_backend

if TYPE_CHECKING:
    from dialog_gym.backends.openai_backend import OpenAIBackend
    from dialog_gym.backends.transformers_backend import TransformersBackend

_LAZY = {
    "OpenAIBackend": "dialog_gym.backends.openai_backend",
    "TransformersBackend": "dialog_gym.backends.transformers_backend",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'dialog_gym.backends' has no attribute {name!r}")


__all__ = [
    "Backend",
    "BackendError",
    "CachedBackend",
    "Completion",
    "OpenAIBackend",
    "TransformersBackend",
    "backend_from_spec",
    "backend_names",
    "is_deterministic",
    "make_backend",
    "register_backend",
]
