"""dialog-gym as a verifiers environment: `vf-eval dialog-gym-empathy`, prime-rl, the Environments Hub.

verifiers (https://github.com/PrimeIntellect-ai/verifiers, 0.4.x: the `verifiers.v1`
stack) splits an environment into a *taskset* (the rows every rollout starts from), an
*env* (how the agents of one episode interact on a row) and per-seat *harnesses* (the
program that plays a seat, its model calls recorded through verifiers' interception
server). This module provides all three for the emotional-support dialogue:

- `EmpathyTaskset`: one task per (persona, seed), read from an env id's persona set
  (default: the newest `RLVER-Empathy-vN`). A task carries the persona id, the seed and
  the agent's system prompt; never the hidden need.
- `EmpathyEnv`: the seat `supporter` is the policy; the environment turns are dialog-gym's
  simulated user, the same `DialogSession` as `gym.make` with the same seed: the user
  opens, every policy reply is appraised, moves the mood and is answered, until the
  session ends it (mood, goodbye, the turn limit). Every episode of a run shares one
  simulator on verifiers' event loop, so an LLM simulator's calls stay concurrent.
- `SupporterChat`: the default harness of the seat, an in-process chat loop (one plain
  chat completion per turn through the interception endpoint, no tools, no sandbox).
  A verifiers harness that can resume a conversation may take the seat instead
  (`--env.supporter.harness.id null`: verifiers' own chat program, one `uv` script run per
  turn in the seat's runtime; not exercised by dialog-gym's tests).

Rewards (recorded on the supporter's trace, weighted; the trace's `reward` is their sum):

- `mood`: final mood / 100, weight 1 (the RLVER reward);
- `mood_gain`: the applied mood changes / 100, summed: weight 1 with `reward_mode="dense"`,
  else 0 (recorded, not counted), so the total equals `gym.make`'s episode return;
- `format_penalty`: minus `format_penalty` per malformed think action (think ids only).

Metrics: `final_mood`, `turns`, `format_ok_rate`; `trace.info["dialog_gym"]` holds the
persona id, seed, moods, changes and why the dialogue ended. A simulator failure fails
the episode (an `EnvError` naming it; verifiers retries or reports it), never a made-up
reward. A dialogue cut short by the seat's own limits (`--env.supporter.max-turns`, token
limits) is scored at the mood it reached, with `terminal_reason="agent_limit"`.

Discovery: verifiers imports a taskset id as a module; `dialog-gym-empathy` is the
`dialog_gym_empathy` module that ships with dialog-gym and re-exports these classes::

    pip install "dialog-gym[verifiers]"
    vf-eval dialog-gym-empathy -m MODEL --client.base-url URL --no-push -n 8 -r 4 \\
        --env.taskset.env-id RLVER-Empathy-v2 --env.taskset.language en

From Python, `load_environment(env_id=None, config=None, ...)` returns the `EmpathyEnv`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any, Literal

try:
    import verifiers.v1 as vf
    from verifiers.v1.dialects.chat import message_to_wire
except ImportError as exc:  # pragma: no cover - exercised only without verifiers
    raise ImportError(
        "dialog_gym.integrations.verifiers needs verifiers 0.4.x (the verifiers.v1 stack): "
        "pip install 'dialog-gym[verifiers]'"
    ) from exc
from pydantic import Field

from dialog_gym.integrations._setup import DialogSetup, dialog_setup, spec_config
from dialog_gym.session import DialogConfig, DialogSession, takes_dialog_config

__all__ = [
    "TASKSET_ID",
    "EmpathyData",
    "EmpathyEnv",
    "EmpathyEnvConfig",
    "EmpathyTask",
    "EmpathyTaskset",
    "EmpathyTasksetConfig",
    "SupporterChat",
    "SupporterChatConfig",
    "load_environment",
]

TASKSET_ID = "dialog-gym-empathy"
"""The id verifiers finds this environment under (the `dialog_gym_empathy` module)."""


# -- the taskset ------------------------------------------------------------------------------
class EmpathyTasksetConfig(vf.TasksetConfig):
    """Which dialogues a run plays, under `--env.taskset.*`.

    Unset options (None) keep the env id's spec values, as `gym.make(env_id)` does.
    """

    id: str = TASKSET_ID
    env_id: str | None = None
    """A registered dialog-gym id; None: the newest `RLVER-Empathy-vN`."""
    personas: str | None = None
    """A persona JSONL file or folder; None: the bundled sets."""
    split: str | None = None
    """`train`, `test`, or `all`; None: the env id's split."""
    language: Literal["en", "zh"] | None = None
    """Only personas of this language; None: both."""
    num_tasks: int | None = Field(None, ge=1)
    """How many tasks; None: one per persona. Personas are used in turn."""
    seed: int = Field(0, ge=0)
    """The first task's seed; task i has seed `seed + i`."""
    simulator: str | None = None
    """`calibrated`, `rule`, `openai`, `transformers`, ...; None: the env id's."""
    simulator_options: dict[str, Any] = Field(default_factory=dict)
    """The simulator's options (`model`, `base_url`, `max_concurrency`, ...), as `DialogConfig`'s."""
    rules: str | None = None
    """A mood-rules preset (`rlver`, `sage`); None: the env id's."""
    style: str | None = None
    """The simulator's style (`vanilla`, `challenging`); None: the env id's."""
    think: bool | None = None
    reward_mode: Literal["terminal", "dense"] | None = None
    format_penalty: float | None = None
    system_prompt: str | None = None
    """The supporter's system message; None: a default per persona language."""
    reply_guard: dict[str, Any] | None = None
    """`ReplyGuard` fields (`max_chars`, `unencodable`); None: the defaults, as the env."""

    def dialog_options(self) -> dict[str, Any]:
        """The options that are set, for `dialog_setup` (which leaves the rest to the env id)."""
        names = ("personas", "split", "language", "simulator", "rules", "style", "think", "reward_mode",
                 "format_penalty", "system_prompt", "reply_guard", "simulator_options")
        return {name: getattr(self, name) for name in names if getattr(self, name) not in (None, {})}


class EmpathyData(vf.TaskData):
    """One dialogue: a persona and a seed (the hidden need stays with the simulator)."""

    persona_id: str
    seed: int
    language: str


class EmpathyTask(vf.Task[EmpathyData, vf.State, vf.TaskConfig]):
    """A dialogue to play; its rewards are recorded by `EmpathyEnv` from the session."""

    @property
    def key(self) -> str:
        return f"{self.data.persona_id}/seed={self.data.seed}"


class EmpathyTaskset(vf.Taskset[EmpathyTask, EmpathyTasksetConfig]):
    """One task per (persona, seed); see `EmpathyTasksetConfig`.

    `dialogs` is the set-up shared with `EmpathyEnv` (built on first use): the
    `DialogConfig` and personas of `gym.make(env_id, **options)`, or the `DialogConfig`
    handed to `load_environment(config=...)`.
    """

    def __init__(self, config: EmpathyTasksetConfig) -> None:
        super().__init__(config)
        self._dialog_config: DialogConfig | None = None

    @functools.cached_property
    def dialogs(self) -> DialogSetup:
        return dialog_setup(self.config.env_id, config=self._dialog_config, **self.config.dialog_options())

    def use_config(self, config: DialogConfig) -> None:
        """Play with `config` instead of building one from the taskset options."""
        if "dialogs" in self.__dict__:
            raise RuntimeError("the taskset's set-up is already built; call use_config() before loading tasks")
        self._dialog_config = config

    def load(self) -> Iterator[EmpathyTask]:
        setup = self.dialogs
        pool = setup.personas
        count = len(pool) if self.config.num_tasks is None else self.config.num_tasks
        for i in range(count):
            persona = pool[i % len(pool)]
            seed = self.config.seed + i
            yield EmpathyTask(
                EmpathyData(
                    id=f"{persona.id}/seed={seed}",
                    name=f"{persona.id}#{seed}",
                    prompt=None,  # the simulated user opens the conversation
                    system_prompt=setup.system_prompt(persona),
                    persona_id=persona.id,
                    seed=seed,
                    language=persona.language,
                ),
                self.config.task,
            )


# -- the supporter's harness ------------------------------------------------------------------
class SupporterChatConfig(vf.HarnessConfig):
    id: str = TASKSET_ID


class SupporterChat(vf.Harness[SupporterChatConfig]):
    """A tool-less chat loop run in-process: each segment is one chat completion of the
    conversation so far, sent to verifiers' interception endpoint (which records it on the
    trace and forwards it to the run's model with the run's sampling settings)."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> vf.ProgramResult:
        from openai import AsyncOpenAI

        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        elif prompt:
            messages.extend(message_to_wire(m) for m in prompt)
        async with AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=2) as client:
            await client.chat.completions.create(model=ctx.model, messages=messages)
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")


# -- the env ----------------------------------------------------------------------------------
class DialogSimulatorFailure(RuntimeError):
    """The simulated user failed beyond its retries: the episode has no reward to give."""


class EmpathyEnvConfig(vf.EnvConfig):
    """The env block: one seat, `supporter` (the policy), in-process by default."""

    taskset: EmpathyTasksetConfig = EmpathyTasksetConfig()
    supporter: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class EmpathyEnv(vf.Env[EmpathyEnvConfig]):
    """The supporter talks with dialog-gym's simulated user (see the module docstring)."""

    @property
    def dialogs(self) -> DialogSetup:
        return self.taskset.dialogs

    async def stop(self) -> None:
        await self.dialogs.config.aclose()

    async def run(self, task: EmpathyTask, agents: vf.Agents) -> None:
        session = self.dialogs.session(task.data.persona_id, task.data.seed)
        opening = await session.start()
        if session.done:
            raise DialogSimulatorFailure(f"{task.key}: the simulated user could not open: {session.error}")
        async with agents.supporter.interaction(task) as chat:
            segment = await chat.turn(opening)
            while not segment.terminated:  # else the seat's own turn or token limit ended it
                outcome = await session.step(_reply_text(segment))
                if session.terminal_reason == "simulator_error":
                    raise DialogSimulatorFailure(f"{task.key}, turn {session.turn}: {session.error}")
                if session.done:
                    break
                segment = await chat.turn(outcome.observation)
            # Recorded before the interaction closes, so verifiers' rollout log shows the reward.
            self._record(chat.trace, task, session, ended_by_agent=segment.terminated)

    def _record(self, trace: vf.Trace, task: EmpathyTask, session: DialogSession, ended_by_agent: bool) -> None:
        config = session.config
        turns = session.turns
        trace.record_reward("mood", session.reward, 1.0)
        trace.record_reward(
            "mood_gain", sum(t.delta for t in turns) / 100.0, 1.0 if config.reward_mode == "dense" else 0.0
        )
        if config.think:
            trace.record_reward("format_penalty", -config.format_penalty * sum(not t.format_ok for t in turns), 1.0)
        trace.record_metric("final_mood", float(session.mood))
        trace.record_metric("turns", float(session.turn))
        trace.record_metric("format_ok_rate", sum(t.format_ok for t in turns) / len(turns) if turns else 1.0)
        trace.info["dialog_gym"] = {
            "env_id": self.dialogs.env_id,
            "persona_id": task.data.persona_id,
            "seed": task.data.seed,
            "rules": session.rules.name,
            "moods": [t.mood for t in turns],
            "emotion_deltas": [t.delta for t in turns],
            "terminal_reason": "agent_limit" if ended_by_agent else session.terminal_reason,
            "replies_cut": sum(t.reply_cut for t in turns),
            "usage": session.usage.to_dict(),
        }


def _reply_text(segment: vf.Segment) -> str:
    """The policy's reply as it wrote it (`Segment.last_reply` strips it; the gym env would not)."""
    if segment.root_reply is not None:
        return segment.root_reply
    for message in reversed(segment.messages):
        if isinstance(message, vf.AssistantMessage) and isinstance(message.content, str):
            return message.content
    return segment.last_reply


@takes_dialog_config(base=spec_config)
def load_environment(
    env_id: str | None = None,
    config: DialogConfig | Mapping[str, Any] | None = None,
    *,
    personas: str | None = None,
    split: str | None = None,
    language: Literal["en", "zh"] | None = None,
    num_tasks: int | None = None,
    seed: int = 0,
    supporter: vf.AgentConfig | dict[str, Any] | None = None,
) -> EmpathyEnv:
    """The verifiers environment of `env_id` (default: the newest `RLVER-Empathy-vN`).

    Arguments:
        env_id: a registered dialog-gym id.
        config: a `DialogConfig`, which replaces the env id's set-up; or its fields as
            keyword arguments (`simulator`, `simulator_options`, `rules`, `style`, `think`,
            `reward_mode`, `format_penalty`, `system_prompt`, `reply_guard`), which change
            the env id's set-up, as for `gym.make(env_id, ...)`.
        personas, split, language: the persona set (None: the env id's; `split="all"`: every split).
        num_tasks, seed: the rows (see `EmpathyTasksetConfig`).
        supporter: the policy seat's `AgentConfig` (harness, limits, model overrides).

    Run it with `verifiers.v1`'s own machinery (`env.run_slot`, prime-rl's env server),
    or from the command line as `vf-eval dialog-gym-empathy`.
    """
    taskset = EmpathyTasksetConfig(
        env_id=env_id, personas=personas, split=split, language=language, num_tasks=num_tasks, seed=seed
    )
    env_config: dict[str, Any] = {"taskset": taskset}
    if supporter is not None:
        env_config["supporter"] = supporter
    env = vf.load_environment(vf.resolve_env_config(EmpathyEnvConfig.model_validate(env_config)))
    if not isinstance(env, EmpathyEnv):  # pragma: no cover - a verifiers loader change
        raise TypeError(f"verifiers built a {type(env).__name__} for {TASKSET_ID!r}, not an EmpathyEnv")
    env.taskset.use_config(config)
    env.dialogs  # noqa: B018  (builds the set-up now, so a bad option fails here)
    return env
