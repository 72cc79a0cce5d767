"""The rollout engine: many dialogues at once, each advancing as soon as it can.

`arollout(agent, n_episodes=..., group_size=...)` plays whole episodes between an agent
and the user simulator and returns `Episode` records. There is no lock-step barrier: an
episode sends its next request to the agent as soon as the simulator has reacted to its
previous reply, and goes back to the simulator as soon as its own reply is ready, so a slow
reaction in one dialogue never holds up another. Requests to a *batched* agent (a local
model's batched `generate`, a vLLM client) are coalesced over a short window into batches
of at most `max_batch_size`.

Agents::

    def agent(messages): ...                 # sync, one conversation -> one reply
    async def agent(messages): ...           # async, one conversation -> one reply
    class Batched:                           # async, many requests -> many replies
        batched = True
        async def __call__(self, requests: list[AgentRequest]) -> list[str]: ...

A sync per-request agent runs on the event loop, between the simulator's calls: fine for
fast rule-based agents; wrap blocking I/O in an `async` function (or `asyncio.to_thread`).

Concurrency: at most `max_concurrent_episodes` dialogues are in flight; a batched agent
gets at most `max_batch_size` requests per call; the simulator's backend bounds its own
concurrent HTTP calls (e.g. the OpenAI backend's `max_concurrency`, a simulator option).

Seeds and groups: the episodes come in groups of `group_size` (GRPO groups; 1 for plain
evaluation), opened with `DialogConfig.open_group`. Group `g` has seed `seed + g`; its
members share the persona, the opening line (produced once) and the generator state after
it, so every episode equals
`EmpathyDialogEnv().reset(seed=episode.seed, options={"persona_id": episode.persona_id})`
followed by the same replies, and group members differ only by what the agent says. A
failed opening line is a `simulator_error` episode for every member of its group.

Interruption: when the agent (or `on_episode`) raises, or the run is cancelled or hit by
KeyboardInterrupt, every in-flight episode task, agent batch and simulator call is
cancelled and awaited before the exception propagates: nothing keeps running. Unfinished
dialogues are dropped; every finished one has already been passed to `on_episode` (write
records there, e.g. with an atomic JSONL appender, to keep them across a crash).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
from gymnasium.utils import seeding

from dialog_gym._async import gather_or_cancel, sync_facade
from dialog_gym._progress import EpisodeProgress
from dialog_gym.envs.empathy import select_personas
from dialog_gym.episodes import Episode
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.session import DialogConfig, DialogSession, takes_dialog_config
from dialog_gym.types import Message

__all__ = ["AgentRequest", "BatchedAgent", "as_agent", "arollout", "rollout"]


@dataclass
class AgentRequest:
    """One pending agent turn: the conversation so far, system prompt first.

    `turn` is the number of the reply asked for (1 for the first one).
    """

    episode_id: str
    group_id: int
    persona_id: str
    turn: int
    messages: list[Message]


@runtime_checkable
class BatchedAgent(Protocol):
    """An agent that answers many pending turns in one call, in order."""

    batched: bool

    def __call__(self, requests: list[AgentRequest]) -> Awaitable[list[str]]: ...


class PerRequestAgent:
    """A per-conversation callable (`(messages) -> str`, sync or async) as a batched agent."""

    batched = True

    def __init__(self, fn: Callable[[list[Message]], str | Awaitable[str]]):
        self.fn = fn

    async def reply(self, request: AgentRequest) -> str:
        reply = self.fn(request.messages)
        if inspect.isawaitable(reply):
            reply = await reply
        return reply  # type: ignore[return-value]

    async def __call__(self, requests: list[AgentRequest]) -> list[str]:
        return await gather_or_cancel([self.reply(r) for r in requests])

    def __repr__(self) -> str:
        return f"PerRequestAgent({self.fn!r})"


def as_agent(obj: Any) -> BatchedAgent:
    """Normalise an agent: a batched agent (`batched = True`) as is, a callable wrapped."""
    if not callable(obj):
        raise TypeError(f"an agent must be callable (messages -> reply, or a batched agent), got {type(obj).__name__}")
    if getattr(obj, "batched", False):
        return obj
    return PerRequestAgent(obj)


def agent_identity(agent: Any) -> dict[str, Any]:
    """What identifies the agent in the records: its `identity()`, or its name."""
    identity = getattr(agent, "identity", None)
    if callable(identity):
        return dict(identity())
    name = getattr(agent, "name", None) or getattr(agent, "__qualname__", None) or type(agent).__qualname__
    return {"name": str(name)}


class _Escalated(Exception):
    """Carries a KeyboardInterrupt or SystemExit raised by agent code out of an episode task.

    asyncio lets those two escape the event loop straight from the task that raised them,
    skipping every other task's cleanup; wrapped, they cancel the run in order and are
    re-raised unchanged by `arollout` once nothing is left running.
    """

    def __init__(self, original: BaseException):
        super().__init__(repr(original))
        self.original = original


# -- request coalescing -------------------------------------------------------------------
class RequestCoalescer:
    """Collects requests for a batched agent and sends them in batches.

    A batch leaves when it is full (`max_batch_size`), when every live episode is waiting
    for the agent (waiting longer cannot grow it), or `window_s` after its first request.
    """

    def __init__(
        self,
        agent: BatchedAgent,
        *,
        max_batch_size: int | None,
        window_s: float,
        live_episodes: Callable[[], int],
    ):
        self.agent = agent
        self.max_batch_size = max_batch_size or 1_000_000
        self.window_s = window_s
        self.live_episodes = live_episodes
        self._pending: list[tuple[AgentRequest, asyncio.Future[str]]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._batches: set[asyncio.Task[None]] = set()
        self.batch_sizes: list[int] = []

    async def submit(self, request: AgentRequest) -> str:
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._pending.append((request, future))
        if len(self._pending) >= min(self.max_batch_size, max(1, self.live_episodes())):
            self._flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.window_s, self._flush)
        return await future

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._pending = [(r, f) for r, f in self._pending if not f.done()]  # drop cancelled waiters
        while self._pending:
            batch, self._pending = self._pending[: self.max_batch_size], self._pending[self.max_batch_size :]
            task = asyncio.ensure_future(self._send(batch))
            self._batches.add(task)
            task.add_done_callback(self._batches.discard)

    async def _send(self, batch: list[tuple[AgentRequest, asyncio.Future[str]]]) -> None:
        self.batch_sizes.append(len(batch))
        try:
            replies = await self.agent([request for request, _ in batch])
            if not isinstance(replies, (list, tuple)) or len(replies) != len(batch):
                got = len(replies) if isinstance(replies, (list, tuple)) else type(replies).__name__
                raise ValueError(f"batched agent returned {got} replies for {len(batch)} requests")
        except asyncio.CancelledError:
            for _, future in batch:
                future.cancel()
            raise
        except (Exception, KeyboardInterrupt, SystemExit) as exc:
            if not isinstance(exc, Exception):
                exc = _Escalated(exc)
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), reply in zip(batch, replies):
            if not future.done():
                future.set_result(reply)

    async def aclose(self) -> None:
        """Cancel the timer and every batch still in flight, and wait for them."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for _, future in self._pending:
            future.cancel()
        self._pending = []
        batches = list(self._batches)
        for task in batches:
            task.cancel()
        await asyncio.gather(*batches, return_exceptions=True)


# -- planning -----------------------------------------------------------------------------
@dataclass(frozen=True)
class EpisodePlan:
    index: int
    episode_id: str
    group_id: int
    member: int
    persona: Persona
    seed: int


def plan_episodes(
    *,
    n_episodes: int | None,
    personas: Any,
    group_size: int,
    split: str | None,
    language: str | None,
    seed: int,
) -> list[EpisodePlan]:
    """Which persona and seed each episode gets (see the module docstring)."""
    if not isinstance(group_size, int) or group_size < 1:
        raise ValueError(f"group_size must be a positive int, got {group_size!r}")
    if n_episodes is not None and (not isinstance(n_episodes, int) or n_episodes < 0):
        raise ValueError(f"n_episodes must be a non-negative int or None, got {n_episodes!r}")
    if n_episodes is not None and n_episodes % group_size:
        raise ValueError(f"n_episodes ({n_episodes}) must be a multiple of group_size ({group_size})")

    explicit = isinstance(personas, (list, tuple)) and all(isinstance(p, (str, Persona)) for p in personas) and personas
    if explicit:
        lookup = None if all(isinstance(p, Persona) for p in personas) else PersonaSet.load(None)
        chosen = [p if isinstance(p, Persona) else lookup.get(p) for p in personas]  # type: ignore[union-attr]
        n_groups = len(chosen) if n_episodes is None else n_episodes // group_size
        group_personas = [chosen[g % len(chosen)] for g in range(n_groups)]
    else:
        pool = select_personas(personas, split, language)
        if n_episodes is None:
            group_personas = list(pool)
        else:
            # Shuffled passes over the pool: every persona once before any twice.
            rng = np.random.default_rng(seed)
            n_groups = n_episodes // group_size
            group_personas = []
            while len(group_personas) < n_groups:
                group_personas.extend(pool[int(i)] for i in rng.permutation(len(pool)))
            group_personas = group_personas[:n_groups]

    plans = []
    for group_id, persona in enumerate(group_personas):
        for member in range(group_size):
            plans.append(
                EpisodePlan(
                    index=len(plans),
                    episode_id=f"s{seed}-g{group_id}-m{member}",
                    group_id=group_id,
                    member=member,
                    persona=persona,
                    seed=seed + group_id,
                )
            )
    return plans


# -- the engine ---------------------------------------------------------------------------
@dataclass
class _Run:
    agent: Any
    config: DialogConfig
    group_size: int
    on_episode: Callable[[Episode], None] | None
    progress: EpisodeProgress
    agent_info: dict[str, Any]
    results: list[Episode | None]
    coalescer: RequestCoalescer | None = None
    per_request: PerRequestAgent | None = None
    live: int = 0
    starts: dict[int, asyncio.Task[list[DialogSession]]] = field(default_factory=dict)
    members_left: dict[int, int] = field(default_factory=dict)
    open_tasks: set[asyncio.Task[list[DialogSession]]] = field(default_factory=set)

    async def worker(self, plans: Iterator[EpisodePlan]) -> None:
        for plan in plans:
            self.live += 1
            try:
                episode = await self.play(plan)
                self.results[plan.index] = episode
                self.progress.advance(episode)
                if self.on_episode is not None:
                    self.on_episode(episode)
            except (KeyboardInterrupt, SystemExit) as exc:
                raise _Escalated(exc) from None
            finally:
                self.live -= 1

    async def member_session(self, plan: EpisodePlan) -> DialogSession:
        """This plan's dialogue of its group, which the group's first member to ask opens."""
        task = self.starts.get(plan.group_id)
        if task is None:
            group = self.config.open_group(plan.persona, seeding.np_random(plan.seed)[0], self.group_size)
            task = self.starts[plan.group_id] = asyncio.ensure_future(group)
            self.members_left[plan.group_id] = self.group_size
            self.open_tasks.add(task)
            task.add_done_callback(self.open_tasks.discard)
        try:
            return (await asyncio.shield(task))[plan.member]
        finally:
            self.members_left[plan.group_id] -= 1
            if self.members_left[plan.group_id] == 0:
                del self.starts[plan.group_id], self.members_left[plan.group_id]

    async def play(self, plan: EpisodePlan) -> Episode:
        session = await self.member_session(plan)
        while not session.done:
            request = AgentRequest(
                episode_id=plan.episode_id,
                group_id=plan.group_id,
                persona_id=plan.persona.id,
                turn=session.turn + 1,
                messages=[dict(m) for m in session.messages],  # type: ignore[misc]
            )
            reply = await self.ask(request)
            if not isinstance(reply, str):
                raise TypeError(f"the agent's reply for {plan.episode_id} turn {request.turn} must be a str, got {type(reply).__name__}")
            await session.step(reply)
        return Episode.from_session(
            session, seed=plan.seed, group_id=plan.group_id, episode_id=plan.episode_id, agent=self.agent_info
        )

    async def ask(self, request: AgentRequest) -> str:
        if self.per_request is not None:
            return await self.per_request.reply(request)
        assert self.coalescer is not None
        return await self.coalescer.submit(request)


@takes_dialog_config(closes=True)
async def arollout(
    agent: Any,
    config: DialogConfig | Mapping[str, Any] | None = None,
    *,
    n_episodes: int | None = None,
    personas: Any = None,
    group_size: int = 1,
    split: str | None = None,
    language: str | None = None,
    seed: int = 0,
    max_concurrent_episodes: int = 64,
    max_batch_size: int | None = None,
    batch_window_s: float = 0.005,
    progress: bool = True,
    on_episode: Callable[[Episode], None] | None = None,
) -> list[Episode]:
    """Play `n_episodes` dialogues (in groups of `group_size`) and return their records.

    Arguments:
        agent: a batched agent (`batched = True`, `async (list[AgentRequest]) -> list[str]`)
            or a per-conversation callable `(messages) -> str`, sync or async.
        config: the dialogue set-up, a `DialogConfig`; or give its fields (`simulator`,
            `simulator_options`, `rules`, `style`, `think`, `reward_mode`, `format_penalty`,
            `system_prompt`, `reply_guard`) as keyword arguments, as for `EmpathyDialogEnv`.
            A simulator built here from a name is closed at the end; a config passed in is
            left open.
        n_episodes: how many; None plays each persona of the set once per group member.
        personas: None (the bundled sets), a path, a `PersonaSet`, or a list of persona ids
            or `Persona`s (one group each, in order, cycled when `n_episodes` asks for more).
            A set is used in seeded shuffled passes when `n_episodes` is given.
        group_size: episodes per group; a group shares persona, opening line and seed.
        split, language: filters on the persona set.
        seed: group `g` gets seed `seed + g`; the run is deterministic given a deterministic
            agent and simulator.
        max_concurrent_episodes: dialogues in flight at once.
        max_batch_size, batch_window_s: batching of a batched agent's requests.
        progress: show a progress bar on stderr.
        on_episode: called with each `Episode` as soon as it finishes (in finishing order).

    Returns the episodes in plan order (group by group). See the module docstring for what
    happens on an exception or a KeyboardInterrupt.
    """
    assert isinstance(config, DialogConfig)  # resolved by takes_dialog_config
    if max_concurrent_episodes < 1:
        raise ValueError(f"max_concurrent_episodes must be >= 1, got {max_concurrent_episodes}")
    if max_batch_size is not None and max_batch_size < 1:
        raise ValueError(f"max_batch_size must be >= 1 or None, got {max_batch_size}")
    plans = plan_episodes(
        n_episodes=n_episodes, personas=personas, group_size=group_size, split=split, language=language, seed=seed
    )
    normalised = as_agent(agent)
    run = _Run(
        agent=normalised,
        config=config,
        group_size=group_size,
        on_episode=on_episode,
        progress=EpisodeProgress("rollout", len(plans), enabled=progress),
        agent_info=agent_identity(agent),
        results=[None] * len(plans),
    )
    if isinstance(normalised, PerRequestAgent):
        run.per_request = normalised
    else:
        run.coalescer = RequestCoalescer(
            normalised, max_batch_size=max_batch_size, window_s=batch_window_s, live_episodes=lambda: run.live
        )
    shared_plans = iter(plans)
    workers = [asyncio.ensure_future(run.worker(shared_plans)) for _ in range(min(max_concurrent_episodes, len(plans)))]
    try:
        await gather_or_cancel(workers)
    except _Escalated as exc:
        raise exc.original from None
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        starts = list(run.open_tasks)
        for task in starts:
            task.cancel()
        await asyncio.gather(*starts, return_exceptions=True)
        if run.coalescer is not None:
            await run.coalescer.aclose()
        run.progress.close()
    return [episode for episode in run.results if episode is not None]


rollout = sync_facade(arollout)
