"""User simulators: the environment and the reward of an empathy dialogue."""

from __future__ import annotations

from typing import Any

from dialog_gym.simulators.base import Reaction, Simulator, SimulatorError
from dialog_gym.simulators.rule import RuleSimulator, appraise


def make_simulator(simulator: "str | Simulator" = "rule", **kwargs: Any) -> Simulator:
    """Build a simulator from a name, or pass an instance through.

    Names: `"rule"` (offline default; kwargs: `style`), `"openai"` (an OpenAI-compatible
    server; kwargs: `model`, `base_url`, `api_key`, `style`, `language`, ...),
    `"transformers"` (a local model; kwargs: `model_path`, `style`, ...), `"replay"`
    (recorded reactions; kwargs: `path`).
    """
    if not isinstance(simulator, str):
        if kwargs:
            raise TypeError(f"simulator options {sorted(kwargs)} given with a simulator instance; set them on the instance")
        return simulator
    if simulator == "rule":
        return RuleSimulator(**kwargs)
    if simulator in ("openai", "transformers"):
        from dialog_gym.simulators.llm import LLMSimulator

        return LLMSimulator.from_backend_name(simulator, **kwargs)
    if simulator == "replay":
        from dialog_gym.simulators.replay import ReplaySimulator

        return ReplaySimulator.from_file(**kwargs)
    raise ValueError(f"unknown simulator {simulator!r}; expected 'rule', 'openai', 'transformers', 'replay' or an instance")


__all__ = ["Reaction", "RuleSimulator", "Simulator", "SimulatorError", "appraise", "make_simulator"]
