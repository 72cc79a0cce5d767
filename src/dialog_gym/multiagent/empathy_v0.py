"""PettingZoo version of the empathy dialogue: the supporter and the seeker as two agents.

    from dialog_gym.multiagent import empathy_v0
    env = empathy_v0.env()                       # AEC: the seeker speaks first
    par = empathy_v0.parallel_env()              # parallel: one speaker per step
"""

from __future__ import annotations

import dataclasses
import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding

try:
    from pettingzoo import AECEnv, ParallelEnv
except ImportError as exc:  # an optional dependency
    raise ImportError("dialog_gym.multiagent needs PettingZoo: pip install 'dialog-gym[multiagent]'") from exc

from dialog_gym._async import LoopRunner
from dialog_gym.envs.copying import CopyableEnv
from dialog_gym.envs.empathy import MAX_TEXT_LENGTH, select_personas
from dialog_gym.envs.spaces import UnicodeText
from dialog_gym.multiagent.duet import ROLES, SEEKER_REWARDS, Duet, Role, SeekerRewardFn, Speaker
from dialog_gym.multiagent.prompts import seeker_system_prompt
from dialog_gym.multiagent.voice import SeekerVoice
from dialog_gym.personas import Persona
from dialog_gym.session import DialogConfig, DialogSession, UsesDialogConfig, takes_dialog_config
from dialog_gym.text_guard import ReplyGuard

OFF_TURN_ACTIONS = ("ignore", "error")


class _EmpathyDuetEnv(CopyableEnv, UsesDialogConfig):
    """
    ## Description
    The emotional-support dialogue of `RLVER-Empathy-v2` with both sides as agents:
    `seeker`, a help-seeker playing a persona with a hidden need, and `supporter`, who
    tries to help. The seeker speaks first. After every supporter reply the configured user
    simulator (the *judge*) appraises how the reply made the persona feel and moves the
    0-100 mood under the same presets as the single-agent env; the seeker then answers,
    and its line (not the simulator's) is what the supporter reads. Either side can be
    built in instead of a policy: `seeker="simulator"` is exactly the single-agent env
    with one agent, `supporter="baseline"` trains or evaluates a seeker against the bundled
    baseline supporter, and any callable `(messages) -> str` (sync or async) can play a
    side. Use cases: training a user simulator, self-play of two models, a human in the
    loop on either side.

    ## Agents
    `possible_agents` are the policy-played roles in turn order, `["seeker", "supporter"]`
    by default. The AEC env cycles seeker, supporter, seeker... The parallel env is turn
    based: each step only the agent on turn speaks (`infos[agent]["active_agent"]` names
    it); the other agent's action is ignored (`off_turn_actions="ignore"`, PettingZoo's
    turn-based convention, so generic parallel trainers work) or must be None
    (`off_turn_actions="error"`).

    ## Action Space
    `UnicodeText(max_length)` for both agents: the agent's next message, any `str`. With
    `think=True` the supporter writes `<think>...</think>reply` and only the reply reaches
    the judge and the seeker. Both sides' lines pass the config's `reply_guard` (at most
    8,000 characters reach the judge and the other side; text UTF-8 cannot encode raises
    `UnencodableTextError` naming the line before anything moves, or is repaired); so do
    the lines of a built-in seeker.

    ## Observation Space
    `Dict` per agent (a dict so that PettingZoo's checks, which need a `dtype` on array
    observations, accept text):
    - supporter: `{"message": UnicodeText}`, the seeker's latest line ("" before the opening).
    - seeker: `{"message": UnicodeText, "mood": Discrete(101), "persona": UnicodeText}`: the
      supporter reply to answer ("" before the opening), the mood after the judge appraised
      it, and the seeker's persona card with its hidden need (also its system prompt).
    The conversation from each side, system prompt first and roles as that agent sees them,
    is in `infos[agent]["messages"]`, ready for `tokenizer.apply_chat_template`.

    ## Rewards
    Supporter: as the single-agent env: `reward_mode="terminal"` (default) gives final mood
    / 100 at the end and 0 before; `"dense"` adds the applied mood change / 100 for each
    reply; `format_penalty` for malformed think actions. The reward of a reply is booked when
    the seeker has answered it (the exchange is complete), so the supporter reads it at its
    next `last()`.
    Seeker (`seeker_reward`):
    - `"none"` (default): always 0; train the seeker with your own signal.
    - `"shared"`: the supporter's reward, booked at the same exchange (cooperative self-play:
      both sides gain when the conversation goes well).
    - `"opposed"`: minus the supporter's reward (zero-sum; trains a demanding user; watch
      that it stays in character).
    - a callable `(session, line) -> float`: called after every seeker line, opening
      included, with the `DialogSession` (persona, appraisals, mood history); use it for a
      persona-fidelity or no-leak score of your own.

    ## Starting State
    A persona is drawn with the env's seeded generator (or `reset(options={"persona_id":
    ...})` / `{"persona": Persona}`); the mood starts at the preset's start value.

    ## Episode End
    As the single-agent env: the mood reaches the preset's failure (or success) threshold,
    the seeker says goodbye, or the preset's turn limit (supporter replies) is reached. The
    seeker always has the last word: when the judge's appraisal ends the dialogue, the
    seeker writes a closing line first (`infos["seeker"]["ends_after_reply"]` tells it).
    Both agents then terminate together (`terminal_reason` in the supporter's info); a judge
    failure truncates both (`terminal_reason="simulator_error"`). In the AEC env each agent
    then steps once with None to leave, as usual in PettingZoo.

    ## Errors
    A non-str action raises `TypeError`; acting out of turn (`say(agent, text)` in AEC, an
    on-turn agent missing from the parallel actions, an off-turn action with
    `off_turn_actions="error"`) and acting after the end raise `RuntimeError` with what
    happened; a finished agent stepping with anything but None raises `ValueError`.

    ## Info
    Supporter: the single-agent info without `privileged` (the supporter never sees the
    hidden need). Seeker: `messages`, `turn`, `mood`, `mood_bucket`, `emotion_delta`,
    `appraisal` (the judge's reasoning about the reply to answer), `simulator_reply` (what
    the judge would have said: its opening line before the opening and, with
    `reference_replies=True`, its answer to each reply, else ""; a reference for imitation,
    never spoken; a seeker echoing it replays the single-agent episode), `ends_after_reply`,
    `terminal_reason`, `persona_id`, `language`, `persona` (the full persona dict), `error`.
    Both: `active_agent`. Everything about the episode is in `env.unwrapped.session`.

    ## Copying
    With an offline judge `copy.deepcopy` and `pickle` copy the env on the supporter's turn
    (or before the opening); while the seeker is to answer a reply, the judge's step waits
    for its line and the env refuses with `TypeError`, as an env with an LLM judge always does.

    ## Arguments
    - `supporter`: `"policy"` (default), `"baseline"` (`dialog_gym.agents.BaselineAgent`)
      or a callable `(messages) -> str`.
    - `seeker`: `"policy"` (default), `"simulator"` (the judge also speaks) or a callable.
    - `config`: the set-up, a `DialogConfig` (the judge is its simulator; `think`,
      `reward_mode`, `format_penalty`, `system_prompt` are the supporter's), or its fields as
      keyword arguments, as in `EmpathyDialogEnv`: `simulator` (the offline `"calibrated"`
      judge by default, `"rule"`, any `LLMSimulator` by name or instance),
      `simulator_options`, `rules` (`"rlver"` default, `"sage"`, a `MoodRules`), `style`,
      `think`, `reward_mode`, `format_penalty`, `system_prompt`, `reply_guard`.
    - `personas`, `split`, `language`: the persona set, as in `EmpathyDialogEnv`.
    - `seeker_reward`: see Rewards. `seeker_prompt`: a callable `(persona) -> str` for the
      seeker's system prompt.
    - `reference_replies`: with a policy seeker, also ask the judge for its own answer to
      each supporter reply (`simulator_reply`); off by default, so the judge only
      appraises (an LLM judge then makes one call per reply, not two).
    - `off_turn_actions` (the parallel env only), `max_length`, `render_mode` (`"ansi"`/`"human"`).

    ## Example
    >>> from dialog_gym.multiagent import empathy_v0
    >>> env = empathy_v0.env(seeker_reward="shared")
    >>> env.reset(seed=0)
    >>> for agent in env.agent_iter():
    ...     obs, reward, terminated, truncated, info = env.last()
    ...     env.step(None if terminated or truncated else my_policy[agent](info["messages"]))
    """

    metadata: ClassVar[dict[str, Any]] = {"name": "empathy_v0", "render_modes": ["ansi", "human"], "render_fps": 1, "is_parallelizable": False}

    @takes_dialog_config
    def __init__(
        self,
        supporter: str | Speaker = "policy",
        seeker: str | Speaker = "policy",
        config: DialogConfig | Mapping[str, Any] | None = None,
        *,
        personas: Any = None,
        split: str | None = "train",
        language: str | None = None,
        seeker_reward: str | SeekerRewardFn = "none",
        seeker_prompt: Callable[[Persona], str] | None = None,
        reference_replies: bool = False,
        off_turn_actions: str = "ignore",
        max_length: int = MAX_TEXT_LENGTH,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if off_turn_actions not in OFF_TURN_ACTIONS:
            raise ValueError(f"unknown off_turn_actions {off_turn_actions!r}; expected one of {OFF_TURN_ACTIONS}")
        if off_turn_actions != "ignore" and not isinstance(self, ParallelEnv):
            raise ValueError("off_turn_actions is an option of the parallel env (empathy_v0.parallel_env); the AEC env has turns")
        self.off_turn_actions = off_turn_actions
        self._supporter = _supporter_speaker(supporter)
        self._seeker = _seeker_speaker(seeker)
        if not callable(seeker_reward) and seeker_reward not in SEEKER_REWARDS:
            raise ValueError(f"unknown seeker_reward {seeker_reward!r}; expected one of {SEEKER_REWARDS} or a callable")
        if self._seeker is not None and seeker_reward != "none":
            raise ValueError(f"seeker_reward={seeker_reward!r} needs the seeker to be a policy (seeker='policy'), got {seeker!r}")
        self.possible_agents: list[Role] = [
            role for role, speaker in (("seeker", self._seeker), ("supporter", self._supporter)) if speaker is None
        ]
        if not self.possible_agents:
            raise ValueError(
                "both sides are built in, so no agent is left to act; use dialog_gym.rollouts or "
                "EmpathyDialogEnv to run built-in agents against the simulator"
            )
        self.agents: list[Role] = []
        self.config = config
        if callable(self._seeker):
            self._seeker = _GuardedSpeaker(self._seeker, self.config.reply_guard, "the built-in seeker's line")
        self.personas = select_personas(personas, split, language)
        self.seeker_reward = seeker_reward
        self.seeker_prompt = seeker_prompt or seeker_system_prompt
        self.reference_replies = bool(reference_replies)
        self.render_mode = render_mode
        text = UnicodeText(max_length)
        self._action_spaces: dict[Role, spaces.Space] = {role: UnicodeText(max_length) for role in ROLES}
        self._observation_spaces: dict[Role, spaces.Space] = {
            "supporter": spaces.Dict({"message": text}),
            "seeker": spaces.Dict(
                {
                    "message": UnicodeText(max_length),
                    "mood": spaces.Discrete(self.rules.cap - self.rules.floor + 1, start=self.rules.floor),
                    "persona": UnicodeText(max_length),
                }
            ),
        }
        self.duet: Duet | None = None
        self._np_random: np.random.Generator | None = None
        self._np_random_seed: int | None = None
        self._runner = LoopRunner()

    def _refuse_copy(self) -> str | None:
        why = super()._refuse_copy()
        if why is None and self.duet is not None and self.duet._step is not None:
            why = ("the seeker is to answer a supporter reply, and the judge's step (a running coroutine) waits for "
                   "its line; copy the env on the supporter's turn")
        return why

    # -- spaces ---------------------------------------------------------------------------
    def observation_space(self, agent: Role) -> spaces.Space:
        return self._observation_spaces[_known(agent)]

    def action_space(self, agent: Role) -> spaces.Space:
        return self._action_spaces[_known(agent)]

    # -- state ----------------------------------------------------------------------------
    @property
    def session(self) -> DialogSession | None:
        """The current dialogue (persona, turns, appraisals, mood): for analysis and records."""
        return None if self.duet is None else self.duet.session

    @property
    def np_random(self) -> np.random.Generator:
        if self._np_random is None:
            self._np_random, self._np_random_seed = seeding.np_random()
        return self._np_random

    def observe(self, agent: Role) -> dict[str, Any]:
        duet = self._require_duet()
        if _known(agent) == "supporter":
            return {"message": duet.last_seeker_line()}
        view = duet.seeker_view()
        return {"message": view.message, "mood": view.mood, "persona": duet.seeker_prompt}

    def _info(self, agent: Role) -> dict[str, Any]:
        duet = self._require_duet()
        info = duet.supporter_info() if agent == "supporter" else duet.seeker_info()
        info["active_agent"] = duet.whose_turn
        return info

    def _require_duet(self) -> Duet:
        if self.duet is None:
            raise RuntimeError("the env has not been reset: call reset() to start an episode")
        return self.duet

    # -- episode --------------------------------------------------------------------------
    def _start(self, seed: int | None, options: dict[str, Any] | None) -> None:
        if seed is not None or self._np_random is None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
        persona = self._choose_persona(options)
        self._abandon()
        voice = None if self._seeker == "simulator" else SeekerVoice(self.simulator, reference_replies=self.reference_replies)
        config = self.config if voice is None else dataclasses.replace(self.config, simulator=voice)
        session = config.session(persona, self.np_random)
        self.duet = Duet(
            session,
            supporter=self._supporter,
            seeker=self._seeker,
            seeker_reward=self.seeker_reward,
            seeker_prompt=self.seeker_prompt(persona),
        )
        self._runner.run(self.duet.start())  # rewards here go to built-in sides only
        self._render_step()

    def _choose_persona(self, options: dict[str, Any] | None) -> Persona:
        options = dict(options or {})
        unknown = sorted(set(options) - {"persona_id", "persona"})
        if unknown:
            warnings.warn(f"empathy_v0.reset: ignoring unknown option(s) {unknown}; known: 'persona_id', 'persona'", stacklevel=3)
        if "persona" in options:
            if not isinstance(options["persona"], Persona):
                raise TypeError(f"options['persona'] must be a Persona, got {type(options['persona']).__name__}")
            return options["persona"]
        if "persona_id" in options:
            return self.personas.get(options["persona_id"])
        return self.personas.sample(self.np_random)

    def _act(self, agent: Role, action: Any) -> dict[Role, float]:
        duet = self._require_duet()
        if agent == "seeker" and isinstance(action, str):  # the supporter's reply passes the session's guard
            action = self.config.reply_guard.apply(action, "the seeker's line").text
        return self._runner.run(duet.act(agent, action))

    def _abandon(self) -> None:
        if self.duet is not None:
            self._runner.run(self.duet.cancel())

    def _ended_error(self) -> RuntimeError:
        session = self.session
        reason = f"{session.terminal_reason} at turn {session.turn}" if session is not None else "never started"
        return RuntimeError(f"step() after the episode ended ({reason}); call reset() to start a new one")

    # -- rendering and closing ------------------------------------------------------------
    def render(self) -> str | None:
        if self.render_mode is None:
            warnings.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'", stacklevel=2)
            return None
        text = self.transcript()
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def _render_step(self) -> None:
        if self.render_mode == "human":
            print(self.transcript(last_only=True))

    def transcript(self, *, last_only: bool = False) -> str:
        """The conversation as text, with the mood after each appraised reply."""
        if self.duet is None:
            return ""
        session, duet = self.duet.session, self.duet
        lines: list[str] = [] if last_only else [f"[persona {session.persona.id}] mood {self.rules.start}"]
        if session.opening is not None and (not last_only or not session.turns):
            lines.append(f"SEEKER   : {session.opening}")
        for record in session.turns[-1:] if last_only else session.turns:
            lines.append(f"SUPPORTER: {record.reply}")
            lines.append(f"SEEKER   : {record.user_reply}   [mood {record.mood} ({record.delta:+d})]")
        if duet.pending_reply is not None:
            view = duet.seeker_view()
            lines.append(f"SUPPORTER: {duet.pending_reply}   [mood {view.mood} ({view.emotion_delta:+d}), seeker to answer]")
        if session.done:
            lines.append(f"-- end: {session.terminal_reason}, supporter reward {session.reward:.2f}")
        return "\n".join(lines)

    def close(self) -> None:
        self._abandon()
        self._runner.run(self.config.aclose())
        self._runner.close()


class raw_env(_EmpathyDuetEnv, AECEnv):
    __doc__ = _EmpathyDuetEnv.__doc__

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._start(seed, options)
        self.agents = list(self.possible_agents)
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: self._info(agent) for agent in self.agents}
        assert self.duet is not None and self.duet.whose_turn is not None
        self.agent_selection = self.duet.whose_turn
        self._skip_agent_selection = None

    def step(self, action: str | None) -> None:
        duet = self._require_duet()
        if not self.agents:
            raise self._ended_error()
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise ValueError(
                    f"the episode has ended ({duet.session.terminal_reason}); the {agent} may only step "
                    f"with None to leave, got {type(action).__name__}"
                )
            self._was_dead_step(action)
            return
        if not isinstance(action, str):
            raise TypeError(f"the {agent}'s action must be a str (its next message), got {type(action).__name__}")
        rewards = self._act(agent, action)
        self._cumulative_rewards[agent] = 0.0
        for name in self.agents:
            self.rewards[name] = rewards[name]
        if duet.done:
            for name in self.agents:
                self.terminations[name] = not duet.truncated
                self.truncations[name] = duet.truncated
        self.infos = {name: self._info(name) for name in self.agents}
        if duet.whose_turn is not None:
            self.agent_selection = duet.whose_turn
        else:  # the end: the other agent leaves first, then this one
            others = [name for name in self.agents if name != agent]
            self.agent_selection = others[0] if others else agent
        self._accumulate_rewards()
        self._render_step()

    def say(self, agent: Role, text: str) -> None:
        """`step(text)` for `agent`, checking that it is `agent`'s turn (for humans in the loop)."""
        if agent not in self.possible_agents:
            raise ValueError(f"{agent!r} is not an agent of this env; agents: {self.possible_agents}")
        if not self.agents:
            raise self._ended_error()
        if agent != self.agent_selection:
            raise RuntimeError(f"{agent} acted out of turn: it is the {self.agent_selection}'s turn")
        self.step(text)

    def __str__(self) -> str:
        return self.metadata["name"]


class ParallelEmpathyEnv(_EmpathyDuetEnv, ParallelEnv):
    __doc__ = _EmpathyDuetEnv.__doc__

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[Role, Any], dict[Role, dict[str, Any]]]:
        self._start(seed, options)
        self.agents = list(self.possible_agents)
        return {a: self.observe(a) for a in self.agents}, {a: self._info(a) for a in self.agents}

    def step(self, actions: Mapping[Role, str | None]):
        duet = self._require_duet()
        if not self.agents:
            raise self._ended_error()
        if not isinstance(actions, Mapping):
            raise TypeError(f"actions must be a dict {{agent: message}}, got {type(actions).__name__}")
        unknown = sorted(set(actions) - set(self.agents))
        if unknown:
            raise ValueError(f"actions for unknown or finished agent(s) {unknown}; live agents: {self.agents}")
        active = duet.whose_turn
        assert active is not None
        if actions.get(active) is None:
            raise RuntimeError(f"it is the {active}'s turn: actions must hold its message under {active!r}")
        for agent, action in actions.items():
            if agent == active or action is None:
                continue
            if not isinstance(action, str):
                raise TypeError(f"the {agent}'s action must be a str or None, got {type(action).__name__}")
            if self.off_turn_actions == "error":
                raise RuntimeError(f"{agent} acted out of turn: it is the {active}'s turn (pass None for the {agent})")
        live = list(self.agents)
        rewards = self._act(active, actions[active])
        done, truncated = duet.done, duet.truncated
        observations = {a: self.observe(a) for a in live}
        infos = {a: self._info(a) for a in live}
        if done:
            self.agents = []
        self._render_step()
        return (
            observations,
            {a: rewards[a] for a in live},
            {a: done and not truncated for a in live},
            {a: truncated for a in live},
            infos,
        )

    def __str__(self) -> str:
        return self.metadata["name"]


def env(*args: Any, **kwargs: Any) -> raw_env:
    """The AEC env (see `raw_env` for the arguments). Its own checks replace PettingZoo's
    `OrderEnforcingWrapper`, which only warns when an agent steps after the end."""
    return raw_env(*args, **kwargs)


def parallel_env(*args: Any, **kwargs: Any) -> ParallelEmpathyEnv:
    """The parallel (turn-based) env; see `ParallelEmpathyEnv` for the arguments."""
    return ParallelEmpathyEnv(*args, **kwargs)


env.__signature__ = inspect.signature(raw_env)  # type: ignore[attr-defined]
parallel_env.__signature__ = inspect.signature(ParallelEmpathyEnv)  # type: ignore[attr-defined]


class _GuardedSpeaker:
    """A built-in speaker whose lines pass a `ReplyGuard` (capped, checked or repaired)."""

    def __init__(self, speaker: Speaker, guard: ReplyGuard, what: str):
        self.speaker = speaker
        self.guard = guard
        self.what = what

    async def __call__(self, messages: Any) -> Any:
        line = self.speaker(messages)
        if inspect.isawaitable(line):
            line = await line
        if not isinstance(line, str):
            return line  # the Duet names the speaker in its TypeError
        return self.guard.apply(line, self.what).text

    def __repr__(self) -> str:
        return repr(self.speaker)


def _known(agent: Any) -> Role:
    if agent not in ROLES:
        raise KeyError(f"unknown agent {agent!r}; the roles are {ROLES}")
    return agent


def _supporter_speaker(supporter: str | Speaker) -> Speaker | None:
    if supporter == "policy":
        return None
    if supporter == "baseline":
        from dialog_gym.agents import BaselineAgent

        return BaselineAgent()
    if callable(supporter):
        return supporter
    raise ValueError(f"supporter must be 'policy', 'baseline' or a callable (messages) -> str, got {supporter!r}")


def _seeker_speaker(seeker: str | Speaker) -> Speaker | str | None:
    if seeker == "policy":
        return None
    if seeker == "simulator":
        return "simulator"
    if callable(seeker):
        return seeker
    raise ValueError(f"seeker must be 'policy', 'simulator' or a callable (messages) -> str, got {seeker!r}")
