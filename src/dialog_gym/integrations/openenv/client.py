"""`DialogEnvClient`: a typed OpenEnv client of `dialog-gym serve` (openenv-core's `EnvClient`)."""

from __future__ import annotations

import json
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from websockets.exceptions import ConnectionClosed

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

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            return await super()._send_and_receive(message)
        except ConnectionClosed as exc:
            # A server that refuses a session (CAPACITY_REACHED) sends an error frame and closes
            # right after the handshake; a request sent after that fails on the closed socket.
            # The refusal is still in the receive buffer: raise it instead of a bare close.
            refusal = await self._buffered_error()
            if refusal is None:
                raise
            raise RuntimeError(
                f"Server error: {refusal.get('message', 'Unknown error')} (code: {refusal.get('code', 'UNKNOWN')})"
            ) from exc

    async def _buffered_error(self) -> dict[str, Any] | None:
        while self._ws is not None:
            try:
                frame = json.loads(await self._ws.recv())
            except (ConnectionClosed, ValueError):
                return None
            if isinstance(frame, dict) and frame.get("type") == "error":
                return frame.get("data", {})
        return None

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
