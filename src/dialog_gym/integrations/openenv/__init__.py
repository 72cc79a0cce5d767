"""dialog-gym as an OpenEnv environment: a server (`dialog-gym serve`) and a typed client.

OpenEnv (https://github.com/meta-pytorch/OpenEnv, `pip install openenv-core`) serves
environments over HTTP and WebSocket (`reset`/`step`/`state`, JSON schemas, an
`openenv.yaml` manifest), so many rollout workers, in any trainer, can share one server.

- `dialog_gym.integrations.openenv.server`: `create_server_app`, `serve`,
  `EmpathyEnvironment` (the served dialogue, the same `DialogSession` as `gym.make`).
- `dialog_gym.integrations.openenv.client`: `DialogEnvClient` (openenv-core's `EnvClient`).
- `dialog_gym.integrations.openenv.models`: `DialogAction`, `DialogObservation`, `DialogState`.

Needs ``pip install "dialog-gym[openenv]"``.
"""

from __future__ import annotations

try:
    import openenv.core  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without openenv-core
    raise ImportError(
        "dialog_gym.integrations.openenv needs openenv-core: pip install 'dialog-gym[openenv]'"
    ) from exc

from dialog_gym.integrations.openenv.client import DialogEnvClient
from dialog_gym.integrations.openenv.models import DialogAction, DialogObservation, DialogState
from dialog_gym.integrations.openenv.server import EmpathyEnvironment, create_server_app, serve

__all__ = [
    "DialogAction",
    "DialogEnvClient",
    "DialogObservation",
    "DialogState",
    "EmpathyEnvironment",
    "create_server_app",
    "serve",
]
