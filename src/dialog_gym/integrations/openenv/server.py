"""The OpenEnv server: dialog-gym's dialogue behind OpenEnv's HTTP/WebSocket API.

`create_server_app(env_id, config, ...)` builds the FastAPI app with openenv-core's own
`create_app` (its routes, schemas, session handling and validation), serving
`EmpathyEnvironment`, an `openenv.core.Environment` whose episodes are `DialogSession`s set
up exactly as `gym.make(env_id, ...)` sets them up: the same simulator, mood rules,
persona set, reply guard and seeding, so `reset(seed=s)` and the same replies give the
episode `gym.make(env_id).reset(seed=s)` gives.

Sessions:

- **WebSocket `/ws`** (what `DialogEnvClient` and openenv's `EnvClient` use): one session
  per connection, each with its own environment; at most `max_sessions` at once (beyond
  that openenv-core refuses the connection with `CAPACITY_REACHED`). All sessions share
  one simulator on the server's event loop, so an LLM simulator's calls run concurrently.
- **HTTP `POST /reset`, `POST /step`**: openenv-core gives every HTTP request a fresh
  environment, so a dialogue continues over HTTP only by name: reset with an
  `episode_id` and pass the same `episode_id` with each step. Named dialogues live in the
  server's table until they end, or sit idle past `episode_timeout_s`; at most
  `max_sessions` of them.

Errors name the problem: an unknown or finished `episode_id` (HTTP 404), a step without a
dialogue or after its end (409), a malformed action or reset option (422: openenv-core's
validation for the action's shape, ours for its content, e.g. text UTF-8 cannot encode),
a full table (503). Over the WebSocket the same messages come back as openenv-core error
frames. The observation never holds the hidden need or the appraisal
(`info["privileged"]`).

Run it: ``dialog-gym serve --env RLVER-Empathy-v2 --port 8000``, or
``uvicorn dialog_gym.integrations.openenv.server:app`` (the module's `app` is built on first
access from the `DIALOG_GYM_*` environment variables, see `app_from_environment`).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from gymnasium.utils import seeding
from openenv.core.env_server.exceptions import SessionNotFoundError
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata
from starlette.websockets import WebSocketDisconnect

from dialog_gym._async import LoopRunner
from dialog_gym._version import __version__
from dialog_gym.integrations._setup import DialogSetup, dialog_setup, spec_config
from dialog_gym.integrations.openenv.models import DialogAction, DialogObservation, DialogState
from dialog_gym.session import DialogConfig, DialogSession, takes_dialog_config
from dialog_gym.text_guard import UnencodableTextError

__all__ = [
    "DEFAULT_MAX_SESSIONS",
    "DialogRequestError",
    "EmpathyEnvironment",
    "EpisodeTable",
    "app_from_environment",
    "create_server_app",
    "serve",
]

DEFAULT_MAX_SESSIONS = 64
DEFAULT_EPISODE_TIMEOUT_S = 600.0
_RESET_OPTIONS = ("seed", "episode_id", "persona_id")


# -- errors: each names the problem and carries its HTTP status --------------------------------
class DialogRequestError(Exception):
    """A request the served dialogue cannot honour; `status_code` is its HTTP status."""

    status_code = 400


class NoEpisodeError(DialogRequestError):
    status_code = 409


class EpisodeOverError(DialogRequestError):
    status_code = 409


class EpisodeNotFoundError(DialogRequestError, SessionNotFoundError):
    status_code = 404

    def __init__(self, message: str):
        DialogRequestError.__init__(self, message)


class BadRequestError(DialogRequestError):
    status_code = 422


class TooManyEpisodesError(DialogRequestError):
    status_code = 503


class StepTimeoutError(DialogRequestError):
    status_code = 504


# -- named dialogues (how HTTP clients continue one) -------------------------------------------
class EpisodeTable:
    """Dialogues addressable by episode id, shared by every environment of one server.

    Arguments:
        max_episodes: at most this many open named dialogues.
        idle_timeout_s: a dialogue not stepped for this long is forgotten (None: never).
    """

    def __init__(self, max_episodes: int = DEFAULT_MAX_SESSIONS, idle_timeout_s: float | None = DEFAULT_EPISODE_TIMEOUT_S):
        if max_episodes < 1:
            raise ValueError(f"max_episodes must be >= 1, got {max_episodes}")
        self.max_episodes = int(max_episodes)
        self.idle_timeout_s = idle_timeout_s
        self._episodes: OrderedDict[str, tuple[DialogSession, float]] = OrderedDict()

    def __len__(self) -> int:
        self._expire()
        return len(self._episodes)

    def _expire(self) -> None:
        if self.idle_timeout_s is None:
            return
        cutoff = time.monotonic() - self.idle_timeout_s
        while self._episodes and next(iter(self._episodes.values()))[1] < cutoff:
            self._episodes.popitem(last=False)

    def add(self, episode_id: str, session: DialogSession) -> None:
        self._expire()
        self._episodes.pop(episode_id, None)  # a reset restarts a named dialogue
        if len(self._episodes) >= self.max_episodes:
            raise TooManyEpisodesError(
                f"too many open named dialogues ({self.max_episodes}): finish some, let idle ones expire "
                f"({self.idle_timeout_s} s), or start the server with a larger --max-sessions"
            )
        self._episodes[episode_id] = (session, time.monotonic())

    def get(self, episode_id: str) -> DialogSession:
        self._expire()
        if episode_id not in self._episodes:
            raise EpisodeNotFoundError(
                f"no open dialogue {episode_id!r}: it ended, sat idle past {self.idle_timeout_s} s, or was never "
                f'started; start it with POST /reset {{"episode_id": {json.dumps(episode_id)}}}'
            )
        session, _ = self._episodes.pop(episode_id)
        self._episodes[episode_id] = (session, time.monotonic())  # most recently used last
        return session

    def discard(self, episode_id: str) -> None:
        self._episodes.pop(episode_id, None)


# -- the environment ---------------------------------------------------------------------------
class EmpathyEnvironment(Environment[DialogAction, DialogObservation, DialogState]):
    """One session's emotional-support dialogue (see the module docstring).

    `reset(seed=None, episode_id=None, persona_id=None)`: the persona is `persona_id` or
    drawn with the seeded generator, as `EmpathyDialogEnv.reset` draws it. `step(action)`
    continues this environment's dialogue, or the named one with `episode_id=`.
    The async methods are what the server calls; the sync ones run them on a private loop
    for in-process use.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, setup: DialogSetup, episodes: EpisodeTable | None = None):
        super().__init__()
        self.setup = setup
        self.episodes = episodes if episodes is not None else EpisodeTable()
        self._np_random: np.random.Generator | None = None
        self._seed: int | None = None
        self._session: DialogSession | None = None
        self._episode_id: str | None = None
        self._runner: LoopRunner | None = None

    # -- the dialogue ---------------------------------------------------------------------
    async def reset_async(
        self, seed: int | None = None, episode_id: str | None = None, persona_id: str | None = None, **kwargs: Any
    ) -> DialogObservation:
        if kwargs:
            raise BadRequestError(f"unknown reset option(s) {sorted(kwargs)}; expected some of {list(_RESET_OPTIONS)}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise BadRequestError(f"seed must be a non-negative int, got {seed!r}")
        if episode_id is not None and (not isinstance(episode_id, str) or not episode_id.strip() or len(episode_id) > 255):
            raise BadRequestError(f"episode_id must be a non-empty string of at most 255 characters, got {episode_id!r}")
        if seed is not None or self._np_random is None:  # as gymnasium.Env.reset seeds np_random
            self._np_random, self._seed = seeding.np_random(seed)
        if persona_id is not None:
            try:
                persona = self.setup.persona(str(persona_id))
            except KeyError as exc:
                raise BadRequestError(exc.args[0]) from None
        else:
            persona = self.setup.personas.sample(self._np_random)
        session = self.setup.config.session(persona, self._np_random)
        if episode_id is not None:
            self.episodes.add(episode_id, session)  # refuses before the simulator is asked when the table is full
        try:
            opening = await session.start()
        except BaseException:
            if episode_id is not None:
                self.episodes.discard(episode_id)
            raise
        self._session, self._episode_id = session, episode_id or uuid.uuid4().hex
        truncated = session.done  # the opening failed: a simulator_error episode, as the gym env reports it
        return DialogObservation.from_info(
            opening, session.info(), episode_id=self._episode_id, reward=None, done=truncated, truncated=truncated
        )

    async def step_async(
        self,
        action: DialogAction,
        timeout_s: float | None = None,
        episode_id: str | None = None,
        request_id: str | None = None,  # openenv's request tracking field; not used here
        **kwargs: Any,
    ) -> DialogObservation:
        if kwargs:
            raise BadRequestError(f"unknown step option(s) {sorted(kwargs)}; expected some of ['episode_id', 'timeout_s']")
        if not isinstance(action, DialogAction):
            raise BadRequestError(f'an action is {{"message": "<the agent\'s reply>"}}, got {type(action).__name__}')
        if episode_id is not None:
            session, name = self.episodes.get(episode_id), episode_id
        elif self._session is not None:
            session, name = self._session, self._episode_id or ""
        else:
            raise NoEpisodeError(
                "step() before reset(): this environment has no dialogue. Over HTTP every request gets a fresh "
                'environment: start a named dialogue with POST /reset {"episode_id": "..."} and send the same '
                "episode_id with each POST /step; a WebSocket session (/ws) keeps its dialogue itself."
            )
        if session.done:
            raise EpisodeOverError(
                f"the dialogue {name!r} has ended ({session.terminal_reason} at turn {session.turn}); reset to start another"
            )
        try:
            outcome = await asyncio.wait_for(session.step(action.message), timeout_s)
        except UnencodableTextError as exc:
            raise BadRequestError(str(exc)) from None
        except asyncio.TimeoutError:
            raise StepTimeoutError(
                f"the step of dialogue {name!r} took longer than timeout_s={timeout_s} s and was abandoned; the "
                "turn was not recorded"
            ) from None
        if session.done and episode_id is not None:
            self.episodes.discard(episode_id)
        return DialogObservation.from_info(
            outcome.observation, outcome.info, episode_id=name, reward=float(outcome.reward),
            done=outcome.terminated or outcome.truncated, truncated=outcome.truncated,
        )

    @property
    def state(self) -> DialogState:
        session = self._session
        return DialogState(
            episode_id=self._episode_id,
            step_count=session.turn if session else 0,
            env_id=self.setup.env_id,
            persona_id=session.persona.id if session else None,
            seed=self._seed,
            mood=session.mood if session else None,
            terminal_reason=session.terminal_reason if session else None,
        )

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=self.setup.env_id,
            description=(
                f"dialog-gym emotional-support dialogue with a simulated help-seeker: {self.setup.describe()}. "
                "The reward is the final mood / 100."
            ),
            version=__version__,
            documentation_url="https://github.com/dialog-gym/dialog-gym/tree/main/docs/training-at-scale.md",
        )

    # -- the sync facade (in-process use) -------------------------------------------------
    def _run(self, coro):
        if self._runner is None:
            self._runner = LoopRunner()
        return self._runner.run(coro)

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> DialogObservation:
        return self._run(self.reset_async(seed=seed, episode_id=episode_id, **kwargs))

    def step(self, action: DialogAction, timeout_s: float | None = None, **kwargs: Any) -> DialogObservation:
        return self._run(self.step_async(action, timeout_s=timeout_s, **kwargs))

    def close(self) -> None:
        """Forget this environment's own dialogue (named ones stay in the server's table)."""
        self._session = None
        if self._runner is not None:
            self._runner.close()
            self._runner = None


# -- the app -----------------------------------------------------------------------------------
@takes_dialog_config(base=spec_config)
def create_server_app(
    env_id: str | None = None,
    config: DialogConfig | Mapping[str, Any] | None = None,
    *,
    personas: Any = None,
    split: str | None = None,
    language: str | None = None,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    episode_timeout_s: float | None = DEFAULT_EPISODE_TIMEOUT_S,
) -> FastAPI:
    """The OpenEnv app of `env_id` (default: the newest `RLVER-Empathy-vN`).

    Arguments:
        env_id: a registered dialog-gym id.
        config: a `DialogConfig`, which replaces the env id's set-up; or its fields as
            keyword arguments (`simulator`, `simulator_options`, `rules`, `think`, ...), which
            change the env id's set-up, as for `gym.make(env_id, ...)`.
        personas, split, language: the persona set (None: the env id's; `split="all"`: every split).
        max_sessions: WebSocket sessions at once, and named (HTTP) dialogues at once.
        episode_timeout_s: a named dialogue idle this long is forgotten (None: never).
    """
    if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) or max_sessions < 1:
        raise ValueError(f"max_sessions must be a positive int, got {max_sessions!r}")
    setup = dialog_setup(env_id, config, personas=personas, split=split, language=language)
    factory = functools.partial(EmpathyEnvironment, setup, EpisodeTable(max_sessions, episode_timeout_s))
    app = create_app(factory, DialogAction, DialogObservation, env_name=setup.env_id, max_concurrent_envs=max_sessions)

    async def request_error(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(
            status_code=getattr(exc, "status_code", 400), content={"detail": str(exc), "error": type(exc).__name__}
        )

    app.add_exception_handler(DialogRequestError, request_error)
    app.add_middleware(_QuietWebSocketClose)
    app.router.on_shutdown.append(setup.config.aclose)
    app.state.dialog_setup = setup
    return app


class _QuietWebSocketClose:
    """openenv-core (0.3.0) closes every `/ws` socket on its way out, also one the client has
    already closed, and starlette raises `WebSocketDisconnect` for that: a traceback in the
    server log per finished session. The session is over either way; this drops that error."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            pass


def app_from_environment() -> FastAPI:
    """The app `uvicorn dialog_gym.integrations.openenv.server:app` (and the Docker image) serve,
    configured by environment variables: `DIALOG_GYM_ENV_ID` (default: the newest id),
    `DIALOG_GYM_MAX_SESSIONS` (default 64) and `DIALOG_GYM_ENV_OPTIONS` (a JSON object of
    `gym.make` options, e.g. ``{"language": "en", "simulator": "openai", "simulator_options": {"model": "..."}}``)."""
    raw = os.environ.get("DIALOG_GYM_ENV_OPTIONS", "") or "{}"
    try:
        options = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"DIALOG_GYM_ENV_OPTIONS is not JSON ({exc}): {raw[:200]!r}") from None
    if not isinstance(options, dict):
        raise ValueError(f"DIALOG_GYM_ENV_OPTIONS must be a JSON object of gym.make options, got {raw[:200]!r}")
    max_sessions = os.environ.get("DIALOG_GYM_MAX_SESSIONS", str(DEFAULT_MAX_SESSIONS))
    if not max_sessions.isdigit():
        raise ValueError(f"DIALOG_GYM_MAX_SESSIONS must be a positive integer, got {max_sessions!r}")
    return create_server_app(os.environ.get("DIALOG_GYM_ENV_ID") or None, max_sessions=int(max_sessions), **options)


def serve(app: FastAPI | None = None, *, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info") -> None:
    """Serve `app` (from `create_server_app(...)`; None: `app_from_environment()`, as the
    Docker image does) with uvicorn until interrupted."""
    import uvicorn

    uvicorn.run(app if app is not None else app_from_environment(), host=host, port=port, log_level=log_level)


@functools.cache
def _default_app() -> FastAPI:
    return app_from_environment()


def __getattr__(name: str) -> Any:
    if name == "app":  # built on first access: importing this module starts nothing
        return _default_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
