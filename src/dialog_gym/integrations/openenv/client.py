"""`DialogEnvClient`: a typed OpenEnv client of `dialog-gym serve` (openenv-core's `EnvClient`)."""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from dialog_gym.integrations.openenv.models import DialogAction, DialogObservation, DialogState

__all__ = ["DialogEnvClient"]


class DialogEnvClient(EnvClient[DialogAction, DialogObservation, DialogState]):
    """One WebSocket session with a dialog-gym server: its own dialogue, reset and stepped.

    Async by default (`.sync()` gives openenv's synchronous wrapper)::

        async with DialogEnvClient(base_url="http://127.0.0.1:8000") as env:
            result = await env.reset(seed=0)            # result.observation.message: the opening
            while not result.done:
                reply = policy(result.observation.messages)
                result = await env.step(reply)          # a str or a DialogAction
            result.reward                               # final mood / 100

    `reset` takes `seed`, `persona_id` and `episode_id`; a server error (a bad option, a step
    after the end, a full server) raises `RuntimeError` carrying the server's message.
    """

    def _step_payload(self, action: DialogAction | str) -> dict[str, Any]:
        if isinstance(action, str):
            action = DialogAction(message=action)
        if not isinstance(action, DialogAction):
            raise TypeError(f"an action is the agent's reply: a str or a DialogAction, got {type(action).__name__}")
        return action.model_dump()

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[DialogObservation]:
        observation = DialogObservation(
            **payload.get("observation", {}), reward=payload.get("reward"), done=bool(payload.get("done", False))
        )
        return StepResult(observation=observation, reward=payload.get("reward"), done=observation.done)

    def _parse_state(self, payload: dict[str, Any]) -> DialogState:
        return DialogState(**payload)
