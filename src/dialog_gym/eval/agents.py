"""Agents for evaluation, from a command-line spec.

Spec forms:

- a registered agent's name (`dialog_gym.agents.register_agent`): `baseline`, the bundled
  `BaselineAgent` (offline, deterministic), and the reward-hacking canaries (`parrot`,
  `gibberish`, ...);
- `BACKEND:TARGET`, for any registered backend (`dialog_gym.backends.register_backend`):
  `openai:MODEL`, a chat model behind any OpenAI-compatible endpoint (`base_url`), its key
  read from an environment variable (never from the command line, never recorded);
  `transformers:PATH`, a local causal LM (a model folder, or a `.gguf` file);
- `module:function` (or `path/to/file.py:function`): any Python callable
  `(messages) -> str` (sync or async), or a batched agent (`batched = True`); a class is
  instantiated without arguments.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from typing import Any

from dialog_gym.agents import agent_names, make_agent
from dialog_gym.backends.factory import backend_entry, backend_from_spec, backend_names
from dialog_gym.types import Message, Usage

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


class BackendAgent:
    """An agent that answers with a text-generation backend (`dialog_gym.backends`).

    Arguments:
        backend: anything with `async complete(messages, *, max_tokens, temperature, seed)`.
        max_tokens, temperature, seed: generation settings for every reply.
        kind: the spec kind ("openai", "transformers") for the records.
    """

    def __init__(self, backend: Any, *, max_tokens: int = 512, temperature: float = 0.0, seed: int | None = 0, kind: str = "backend"):
        self.backend = backend
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        self.kind = kind
        self.usage = Usage()
        self.name = f"{kind}-agent"

    async def __call__(self, messages: list[Message]) -> str:
        completion = await self.backend.complete(
            messages, max_tokens=self.max_tokens, temperature=self.temperature, seed=self.seed
        )
        self.usage.add(completion.usage)
        return completion.text

    def identity(self) -> dict[str, Any]:
        backend = self.backend.identity() if hasattr(self.backend, "identity") else {"class": type(self.backend).__name__}
        return {
            "name": self.name,
            "kind": self.kind,
            "backend": backend,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "seed": self.seed,
        }

    async def aclose(self) -> None:
        aclose = getattr(self.backend, "aclose", None)
        if aclose is not None:
            await aclose()

    def __repr__(self) -> str:
        return f"BackendAgent({self.backend!r})"


def _load_callable(spec: str) -> Any:
    target, _, attr = spec.rpartition(":")
    if not target or not attr:
        raise ValueError(f"agent spec {spec!r}: expected 'module:function' or 'path/to/file.py:function'")
    if target.endswith(".py") or os.sep in target:
        path = Path(target)
        if not path.is_file():
            raise FileNotFoundError(f"agent spec {spec!r}: no such file {path}")
        module_name = f"_dialog_gym_agent_{path.stem}"
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_name] = module
        module_spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise ValueError(f"agent spec {spec!r}: cannot import module {target!r}: {exc}") from None
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"agent spec {spec!r}: module {target!r} has no attribute {attr!r}") from None
    if inspect.isclass(obj):
        obj = obj()
    if not callable(obj):
        raise ValueError(f"agent spec {spec!r}: {attr!r} is not callable")
    return obj


def load_agent(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str = DEFAULT_API_KEY_ENV,
    max_tokens: int = 512,
    temperature: float = 0.0,
    seed: int | None = 0,
    max_concurrency: int | None = None,
    timeout_s: float | None = None,
    max_retries: int | None = None,
) -> Any:
    """Build the agent a spec names (see the module docstring).

    `base_url`, `api_key_env`, `max_concurrency`, `timeout_s` and `max_retries` go to a
    backend that declares them (None: the backend's default); one given for a backend that
    does not (or for a non-backend spec) is an error, never silently dropped.
    """
    if spec in agent_names():
        _no_backend_options(spec, base_url=base_url, max_concurrency=max_concurrency, timeout_s=timeout_s, max_retries=max_retries)
        return make_agent(spec)
    kind, sep, _ = spec.partition(":")
    if sep and kind in backend_names():
        accepted = backend_entry(kind).options
        # The backend reads the key from the environment itself: it never passes through here.
        options: dict[str, Any] = {"api_key_env": api_key_env} if "api_key_env" in accepted else {}
        given = {"base_url": base_url, "max_concurrency": max_concurrency, "timeout_s": timeout_s, "max_retries": max_retries}
        for name, value in given.items():
            if value is not None:
                if name not in accepted:
                    raise ValueError(f"agent spec {spec!r}: the {kind!r} backend takes no {name}")
                options[name] = value
        return BackendAgent(backend_from_spec(spec, **options), max_tokens=max_tokens, temperature=temperature, seed=seed, kind=kind)
    if sep:
        _no_backend_options(spec, base_url=base_url, max_concurrency=max_concurrency, timeout_s=timeout_s, max_retries=max_retries)
        return _load_callable(spec)
    raise ValueError(
        f"unknown agent spec {spec!r}; expected a registered agent ({', '.join(agent_names())}), "
        f"BACKEND:TARGET with BACKEND one of {backend_names()} (openai:MODEL, transformers:PATH), or 'module:function'"
    )


def _no_backend_options(spec: str, **options: Any) -> None:
    given = sorted(name for name, value in options.items() if value is not None)
    if given:
        raise ValueError(f"agent spec {spec!r} is not a backend agent: it takes no {', '.join(given)}")
