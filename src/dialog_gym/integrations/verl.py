"""dialog-gym inside verl's multi-turn rollout: the simulated user of a verl training run.

verl (https://github.com/volcengine/verl; RLVER itself is a verl fork) trains on many
machines over Ray. Where a simulated user plugs into its rollout depends on the release:

- **verl 0.9.x (from 0.9.1): an agent loop.** verl 0.8 deleted its interaction API
  (`verl.interactions`); a multi-turn rollout is now an `AgentLoopBase` subclass, registered
  by name in the YAML file named by ``actor_rollout_ref.rollout.agent.agent_loop_config_path``
  and picked per dataset row by the row's ``agent_name``. `DialogGymAgentLoop` plays a whole
  dialogue: the policy's turn comes from verl's LLM server (token in, token out), the
  simulated user's answer is appended as context tokens (response mask 0), and the final
  mood / 100 is the trajectory's ``reward_score``, which verl writes into ``rm_scores`` (no
  reward function needed). Every rollout of a worker runs concurrently on its event loop, so
  an LLM simulator's requests are concurrent too (bounded by its backend's
  ``max_concurrency``). verl 0.8.0 and 0.9.0 tokenize turns another way and are not supported.
- **verl 0.7.x: an interaction.** `DialogGymInteraction` subclasses
  `verl.interactions.base.BaseInteraction`; verl's tool agent loop asks it for the user's
  answer after each policy turn and hands its turn scores to `compute_score`.

Both drive every dialogue through `DialogSession`, the core of the gym env, and read the
episode from the dataset row (`dataset_row`, written by ``examples/verl/prepare_data.py``):
``extra_info.interaction_kwargs = {"name": "dialog_gym", "persona_id": ..., "seed": ...,
"rules": "rlver"}``. The row's prompt already holds the agent system prompt and the
simulated user's opening line; the dialogue starts from it.

Turn scores: each turn's score is the applied emotion delta / 100 (after the preset's clamp
and the 0-100 bounds), so ``start / 100 + sum(turn_scores)`` is the final mood / 100, the
RLVER reward. `compute_score` (``reward.custom_reward_function.path=
pkg://dialog_gym.integrations.verl``, ``name=compute_score``) turns them into the reward
wherever verl hands them to a reward function as ``extra_info["turn_scores"]``. A simulator
failure ends the dialogue with a NaN turn score and a reward of 0.0, as
`DialogSession.reward` gives.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import logging
import math
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from gymnasium.utils import seeding

from dialog_gym.mood import MoodRules, get_rules
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.session import DialogConfig, DialogSession, agent_system_prompt
from dialog_gym.simulators import DEFAULT_SIMULATOR
from dialog_gym.simulators.offline import OfflineSimulator

__all__ = [
    "AGENT_LOOP_NAME",
    "DialogGymAgentLoop",
    "DialogGymInteraction",
    "INTERACTION_NAME",
    "compute_score",
    "dataset_row",
    "final_reward",
]

logger = logging.getLogger(__name__)

INTERACTION_NAME = "dialog_gym"
AGENT_LOOP_NAME = "dialog_gym"
DATA_SOURCE = "dialog_gym/empathy"


# -- the reward (no verl import needed) ----------------------------------------------------
def final_reward(turn_scores: Sequence[float], rules: str | MoodRules = "rlver") -> float:
    """Final mood / 100 from a dialogue's turn scores (applied deltas / 100).

    0.0 when a turn score is NaN (the simulator failed: no invented reward).
    """
    scores = [float(s) for s in turn_scores]
    if any(math.isnan(s) for s in scores):
        return 0.0
    rules = get_rules(rules)
    mood = rules.start + round(100 * sum(scores))
    return rules.reward(min(rules.cap, max(rules.floor, mood)))


def compute_score(
    data_source: str | None = None,
    solution_str: str | None = None,
    ground_truth: Any = None,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> float:
    """verl's custom reward function: the final mood / 100 of the dialogue.

    Reads ``extra_info["turn_scores"]`` (the agent loop's turn scores, which verl's reward
    manager merges into ``extra_info``) and the preset from
    ``extra_info["interaction_kwargs"]["rules"]`` (default rlver).
    """
    extra_info = extra_info or {}
    if "turn_scores" not in extra_info:
        raise KeyError(
            "extra_info has no 'turn_scores': roll out with the dialog_gym agent loop (verl 0.9.x: "
            "actor_rollout_ref.rollout.agent.agent_loop_config_path=examples/verl/agent_loop.yaml) or the "
            "dialog_gym interaction (verl 0.7: actor_rollout_ref.rollout.multi_turn.interaction_config_path=...)"
        )
    turn_scores = extra_info["turn_scores"]
    turn_scores = [] if turn_scores is None else list(turn_scores)
    rules = (extra_info.get("interaction_kwargs") or {}).get("rules", "rlver")
    return final_reward(turn_scores, rules)


def dataset_row(
    persona: Persona,
    seed: int,
    opening: str,
    *,
    index: int,
    split: str,
    rules: str = "rlver",
    think: bool = False,
    system_prompt: str | None = None,
    agent_name: str = AGENT_LOOP_NAME,
    interaction_name: str = INTERACTION_NAME,
) -> dict[str, Any]:
    """One row of the parquet file verl's `RLHFDataset` reads.

    The prompt holds what the agent sees (system prompt, opening line); the hidden need
    never enters it. `agent_name` picks verl's agent loop: ``"dialog_gym"`` (verl 0.9.x,
    `DialogGymAgentLoop` as registered in ``examples/verl/agent_loop.yaml``) or
    ``"tool_agent"`` (verl 0.7, the loop that calls `DialogGymInteraction`).
    `reward_model.ground_truth` is the persona id (verl requires the key).
    """
    return {
        "data_source": DATA_SOURCE,
        "prompt": [
            {"role": "system", "content": system_prompt or agent_system_prompt(persona.language, think)},
            {"role": "user", "content": opening},
        ],
        "ability": "emotional_support",
        "agent_name": agent_name,
        "reward_model": {"style": "rule", "ground_truth": persona.id},
        "extra_info": {
            "split": split,
            "index": int(index),
            "interaction_kwargs": {
                "name": interaction_name,
                "persona_id": persona.id,
                "seed": int(seed),
                "rules": rules,
            },
        },
    }


# -- what both adapters share: the set-up, and one dialogue per rollout ---------------------
_DIALOG_OPTIONS = ("simulator", "simulator_kwargs", "style", "rules", "personas", "think", "replay_opening")


class _Dialogs:
    """The simulator, preset and personas of an adapter; opens the dialogue of a dataset row.

    Options (the adapter's config): `simulator` (`"calibrated"`, `"rule"`, `"openai"`, `"transformers"`, ...
    or an instance), `simulator_kwargs` (for `make_simulator`: model, base_url,
    max_concurrency, ...), `style` (`vanilla` / `challenging`), `rules` (the default preset;
    a row's `rules` overrides it), `personas` (a file or folder; None: the bundled sets),
    `think` (the policy writes `<think>...</think>reply`; only the reply reaches the user),
    `replay_opening` (`"auto"`: only for the rule simulator; true; false). The opening line
    comes from the prompt; replaying the simulator's opener on the episode's generator (its
    output is discarded) leaves the generator where `env.reset(seed=seed)` leaves it, so a
    dialogue equals the gym env's with the same seed and replies. It costs one simulator
    call per rollout.
    """

    def __init__(
        self,
        *,
        simulator: Any = DEFAULT_SIMULATOR,
        simulator_kwargs: Mapping[str, Any] | None = None,
        style: str = "vanilla",
        rules: str = "rlver",
        personas: str | None = None,
        think: bool = False,
        replay_opening: str | bool = "auto",
    ):
        if replay_opening not in ("auto", True, False):
            raise ValueError(f"replay_opening must be 'auto', true or false, got {replay_opening!r}")
        self.config = DialogConfig.create(
            simulator, rules, style=style, think=bool(think), **dict(simulator_kwargs or {})
        )
        self.personas = PersonaSet.load(personas)
        if replay_opening == "auto":
            replay_opening = isinstance(self.config.simulator, OfflineSimulator)
        self.replay_opening = bool(replay_opening)

    @classmethod
    def from_options(cls, options: Mapping[str, Any], *, owner: str) -> "_Dialogs":
        unknown = sorted(set(options) - set(_DIALOG_OPTIONS))
        if unknown:
            raise TypeError(f"unknown {owner} option(s) {unknown}; the options are {sorted(_DIALOG_OPTIONS)}")
        return cls(**{k: _plain(v) for k, v in options.items()})

    def session(self, episode: Mapping[str, Any] | None) -> DialogSession:
        """The dialogue of one rollout, from the row's ``interaction_kwargs``."""
        episode = dict(episode or {})
        if episode.get("persona_id") is None:
            raise ValueError(
                "the dataset row's extra_info.interaction_kwargs has no 'persona_id'; write the dataset with "
                "examples/verl/prepare_data.py (interaction_kwargs = {'name', 'persona_id', 'seed', 'rules'})"
            )
        persona_id = str(episode["persona_id"])
        try:
            persona = self.personas.get(persona_id)
        except KeyError:
            raise KeyError(f"persona {persona_id!r} is not in this adapter's persona set (option 'personas')") from None
        rules = episode.get("rules")
        config = self.config if rules is None else dataclasses.replace(self.config, rules=get_rules(str(rules)))
        return config.session(persona, seeding.np_random(int(episode.get("seed", 0)))[0])

    async def start(self, session: DialogSession, messages: Sequence[Mapping[str, Any]]) -> None:
        """Start `session` from the rollout's prompt: its system message and opening line."""
        session.system_prompt = _first(messages, "system") or session.system_prompt
        opening = _first(messages, "user")
        if opening is None:
            raise ValueError(
                "the rollout's prompt holds no user turn: it must end with the simulated user's opening line"
            )
        if self.replay_opening:
            await session.simulator.open(session.persona, session.rng)  # advances the generator only
        await session.start(opening)


_SHARED: dict[str, _Dialogs] = {}


def _shared_dialogs(options: Mapping[str, Any], *, owner: str) -> _Dialogs:
    """One `_Dialogs` per distinct config and process: verl builds an agent loop per rollout."""
    key = json.dumps(
        {k: _plain(v) for k, v in options.items()}, sort_keys=True, default=lambda o: f"{type(o).__qualname__}@{id(o)}"
    )
    if key not in _SHARED:
        _SHARED[key] = _Dialogs.from_options(options, owner=owner)
    return _SHARED[key]


def _plain(value: Any) -> Any:
    """An OmegaConf node (how hydra hands YAML values to a constructor) as plain Python."""
    if type(value).__module__.startswith("omegaconf"):
        from omegaconf import OmegaConf

        return OmegaConf.to_container(value, resolve=True)
    return value


def _first(messages: Sequence[Mapping[str, Any]], role: str) -> str | None:
    for message in messages:
        if message.get("role") == role:
            return _text(message.get("content"))
    return None


def _text(content: Any) -> str:
    """A message's text (verl may hand multimodal content lists)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, Mapping))
    return "" if content is None else str(content)


@dataclasses.dataclass
class _Tokens:
    """A rollout's token stream: prompt then response; the response's mask and log-probabilities."""

    ids: list[int]
    mask: list[int] = dataclasses.field(default_factory=list)  # 1: the policy's tokens, 0: context
    logprobs: list[float] = dataclasses.field(default_factory=list)  # empty when the server gives none


def _turn_scores(session: DialogSession) -> list[float]:
    """Applied delta / 100 per turn; NaN for the turn on which the simulator failed."""
    scores = [turn.delta / 100.0 for turn in session.turns]
    if session.terminal_reason == "simulator_error" and scores:
        scores[-1] = float("nan")
    return scores


# -- verl 0.9.x (from 0.9.1): the agent loop -----------------------------------------------
def _agent_loop_class() -> type:
    try:
        import verl
        from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput
        from verl.utils.profiler import simple_timer
    except ImportError as exc:
        raise ImportError(
            "DialogGymAgentLoop needs verl's agent loop API (verl.experimental.agent_loop, verl >= 0.9.1): "
            "pip install 'dialog-gym[verl]'"
        ) from exc
    if not hasattr(AgentLoopBase, "ct_merge_context_msg"):  # 0.8 and 0.9.0 tokenize turns another way
        raise ImportError(
            f"DialogGymAgentLoop needs verl >= 0.9.1 (its continuous-token agent loop API); verl "
            f"{getattr(verl, '__version__', '?')} is installed. For verl 0.7 use DialogGymInteraction."
        )

    verl_arguments = frozenset(inspect.signature(AgentLoopBase.__init__).parameters) - {"self", "args", "kwargs"}

    class DialogGymAgentLoop(AgentLoopBase):
        """verl's multi-turn rollout of one emotional-support dialogue with a dialog-gym user.

        Registered in an agent loop config (``examples/verl/agent_loop.yaml``)::

            - name: dialog_gym
              _target_: dialog_gym.integrations.verl.DialogGymAgentLoop
              simulator: rule          # or openai, with simulator_kwargs: {model, base_url, ...}
              rules: rlver

        Options (besides verl's own constructor arguments): those of the shared set-up
        (`simulator`, `simulator_kwargs`, `style`, `rules`, `personas`, `think`,
        `replay_opening`, see `_Dialogs`) and `reward_in_loop` (default true: the final
        mood / 100 is the trajectory's `reward_score`; false leaves the reward to verl's
        reward loop, e.g. ``custom_reward_function`` = `compute_score` plus your shaping).
        The simulator and personas are built once per process and config, though verl
        builds an agent loop per rollout. The loop offers the policy no tools.

        A dialogue ends when the simulated user ends it (mood, goodbye, the preset's turn
        limit), when ``multi_turn.max_assistant_turns`` is reached, or when
        ``rollout.response_length`` (the token budget of the whole dialogue, user turns
        included) runs out: a reply cut by the budget is still judged, and the dialogue
        stops after the last complete exchange. The reward is the mood reached.
        """

        def __init__(
            self, *args: Any, reward_in_loop: bool = True, name: str | None = None, tools: Any = None, **kwargs: Any
        ):
            options = {k: kwargs.pop(k) for k in list(kwargs) if k not in verl_arguments}
            super().__init__(*args, **kwargs)
            self.dialogs = _shared_dialogs(options, owner="dialog_gym agent loop")
            self.reward_in_loop = bool(reward_in_loop)
            self.response_length = int(self.rollout_config.response_length)
            self.max_assistant_turns = self.rollout_config.multi_turn.max_assistant_turns

        async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
            messages = [dict(m) for m in kwargs["raw_prompt"]]
            session = self.dialogs.session(kwargs.get("interaction_kwargs"))
            await self.dialogs.start(session, messages)

            metrics: dict[str, Any] = {}
            request_id = uuid.uuid4().hex
            tokens = _Tokens(await self.ct_build_initial_tokens(messages))
            user_turns = 0
            stopped: str | None = None
            while True:
                action = await self._policy_turn(tokens, sampling_params, request_id, metrics)
                with simple_timer("tool_calls", metrics):  # verl's timer for time outside the policy
                    await session.step(action)
                if session.done:
                    break
                if len(tokens.mask) >= self.response_length:
                    stopped = "length"
                    break
                if self.max_assistant_turns and session.turn >= self.max_assistant_turns:
                    stopped = "max_assistant_turns"
                    break
                before = [*messages, {"role": "assistant", "content": action}]
                messages = [*before, session.history[-1]]
                if not await self._user_turn(tokens, before, messages):
                    stopped = "length"  # no room for the user's answer and another reply
                    break
                user_turns += 1

            prompt_end = len(tokens.ids) - len(tokens.mask)
            return AgentLoopOutput(
                prompt_ids=tokens.ids[:prompt_end],
                response_ids=tokens.ids[prompt_end:],
                response_mask=tokens.mask,
                response_logprobs=tokens.logprobs or None,
                multi_modal_data={},
                reward_score=session.reward if self.reward_in_loop else None,
                num_turns=1 + session.turn + user_turns,  # as verl counts: prompt, policy and user turns
                metrics=metrics,
                extra_fields=self._extra_fields(session, kwargs.get("interaction_kwargs"), stopped),
            )

        async def _policy_turn(
            self, tokens: _Tokens, sampling_params: dict[str, Any], request_id: str, metrics: dict[str, Any]
        ) -> str:
            """One reply from verl's rollout server, within what is left of the budget; its text."""
            room = self.response_length - len(tokens.mask)
            with simple_timer("generate_sequences", metrics):
                output = await self.server_manager.generate(
                    request_id=request_id, prompt_ids=tokens.ids,
                    sampling_params={**sampling_params, "max_tokens": room},
                )
            if output.num_preempted is not None:
                metrics["num_preempted"] = metrics.get("num_preempted", 0) + output.num_preempted
            reply_ids = list(output.token_ids)[:room]
            reply_logprobs = list(output.log_probs)[:room] if output.log_probs else None
            merged, tokens.mask, logprobs = await self.ct_merge_assistant_token(
                tokens.ids, reply_ids, tokens.mask,
                tokens.logprobs if (tokens.logprobs or reply_logprobs) else None, assistant_logprobs=reply_logprobs,
            )
            tokens.ids = merged.token_ids
            if logprobs is not None:
                tokens.logprobs = logprobs
            return self.tokenizer.decode(reply_ids, skip_special_tokens=True).strip()

        async def _user_turn(self, tokens: _Tokens, before: list[dict], after: list[dict]) -> bool:
            """Append the user's answer (and the next generation prompt) as context; False if it does not fit."""
            merged, mask, logprobs = await self.ct_merge_context_msg(
                before, after, tokens.ids, tokens.mask, tokens.logprobs or None
            )
            if len(mask) >= self.response_length:
                return False
            tokens.ids, tokens.mask = merged.token_ids, mask
            if tokens.logprobs:
                tokens.logprobs = logprobs
            return True

        def _extra_fields(self, session: DialogSession, episode: Any, stopped: str | None) -> dict[str, Any]:
            """Turn scores for reward functions; the dialogue's outcome for logs (no hidden need)."""
            error = session.terminal_reason == "simulator_error"
            if error:
                logger.warning(
                    "dialog-gym agent loop: %s ended with a simulator error: %s", session.persona.id, session.error
                )
            fields: dict[str, Any] = {
                "turn_scores": _turn_scores(session),
                "tool_rewards": [],
                "dialog_gym": {
                    "persona_id": session.persona.id,
                    "seed": int(dict(episode or {}).get("seed", 0)),
                    "rules": session.rules.name,
                    "moods": [turn.mood for turn in session.turns],
                    "terminal_reason": session.terminal_reason or stopped,
                    "error": session.error,
                },
            }
            if self.reward_in_loop:  # verl logs these beside the reward
                fields["reward_extra_info"] = {
                    "dialog_mood": float(session.mood),
                    "dialog_turns": float(session.turn),
                    "dialog_simulator_error": float(error),
                }
            return fields

    DialogGymAgentLoop.__module__ = __name__
    DialogGymAgentLoop.__qualname__ = "DialogGymAgentLoop"
    return DialogGymAgentLoop


# -- verl 0.7: the interaction --------------------------------------------------------------
def _interaction_class() -> type:
    try:
        from verl.interactions.base import BaseInteraction
    except ImportError as exc:
        raise ImportError(
            "DialogGymInteraction needs verl's interaction API (verl.interactions, verl 0.7.x; verl >= 0.8 "
            "removed it: use DialogGymAgentLoop there)"
        ) from exc

    class DialogGymInteraction(BaseInteraction):
        """A verl 0.7 interaction whose user is a dialog-gym simulator.

        Config (the `config:` block of the interaction YAML): the options of the shared
        set-up (`simulator`, `simulator_kwargs`, `style`, `rules`, `personas`, `think`,
        `replay_opening`, see `_Dialogs`) and `max_sessions`: dialogues kept at once; the
        oldest are dropped beyond it (verl 0.7.1 never calls `finalize_interaction`, and
        rollouts cut by verl's turn or length limits never end on their own).

        Protocol::

            await interaction.start_interaction(request_id, **interaction_kwargs)
            should_end, user_reply, turn_score, metadata = await interaction.generate_response(
                request_id, messages, **interaction_kwargs)          # once per policy turn
            await interaction.calculate_score(request_id)            # final mood / 100
            await interaction.finalize_interaction(request_id)
        """

        def __init__(self, config: dict[str, Any]):
            super().__init__(config)
            options = {k: v for k, v in config.items() if k not in ("name", "max_sessions")}
            self.dialogs = _Dialogs.from_options(options, owner="dialog_gym interaction")
            self.simulator, self.rules = self.dialogs.config.simulator, self.dialogs.config.rules
            self.personas = self.dialogs.personas
            self.max_sessions = int(config.get("max_sessions", 65536))
            self._sessions: OrderedDict[str, DialogSession] = OrderedDict()

        def __repr__(self) -> str:
            return (
                f"DialogGymInteraction(name={self.name!r}, simulator={self.simulator.identity()!r}, "
                f"rules={self.rules.name!r}, sessions={len(self._sessions)})"
            )

        async def start_interaction(self, instance_id: str | None = None, **kwargs: Any) -> str:
            """Create the dialogue of one rollout; its first user turn comes from the prompt."""
            session = self.dialogs.session(kwargs)
            instance_id = instance_id or uuid.uuid4().hex
            self._sessions[instance_id] = session
            while len(self._sessions) > self.max_sessions:  # finished dialogues go first
                dropped, old = self._sessions.popitem(last=False)
                if not old.done:
                    logger.warning("dialog-gym interaction: dropped unfinished dialogue %s (max_sessions)", dropped)
            return instance_id

        async def generate_response(
            self, instance_id: str, messages: list[dict[str, Any]], **kwargs: Any
        ) -> tuple[bool, str, float, dict[str, Any]]:
            """The simulated user's answer to the policy's latest message.

            Returns `(should_terminate, user_reply, turn_score, metadata)`: the turn score is
            the applied emotion delta / 100; metadata holds the mood, the delta and the
            reason the dialogue ended (never the hidden need or the appraisal).
            """
            session = self._session(instance_id)
            if session.opening is None:
                await self.dialogs.start(session, messages)
            if session.done:
                raise RuntimeError(
                    f"generate_response() after the dialogue {instance_id} ended ({session.terminal_reason}); "
                    "start a new interaction"
                )
            if not messages or messages[-1].get("role") != "assistant":
                raise ValueError("generate_response() expects the policy's reply as the last message")
            outcome = await session.step(_text(messages[-1].get("content")))
            metadata = {
                "mood": session.mood,
                "emotion_delta": outcome.info["emotion_delta"],
                "turn": session.turn,
                "terminal_reason": session.terminal_reason,
                "format_ok": outcome.info["format_ok"],
            }
            if session.terminal_reason == "simulator_error":
                metadata["error"] = session.error
                self._sessions.pop(instance_id, None)
                return True, outcome.observation, _turn_scores(session)[-1], metadata
            if session.done:  # kept for calculate_score(), first in the eviction order
                self._sessions.move_to_end(instance_id, last=False)
            return session.done, outcome.observation, _turn_scores(session)[-1], metadata

        async def calculate_score(self, instance_id: str | None = None, **kwargs: Any) -> float:
            """The dialogue's reward so far: mood / 100 (0.0 after a simulator error)."""
            return self._session(instance_id).reward

        async def finalize_interaction(self, instance_id: str | None = None, **kwargs: Any) -> None:
            """Forget the dialogue."""
            if instance_id is None:
                self._sessions.clear()
            else:
                self._sessions.pop(instance_id, None)

        def _session(self, instance_id: str | None) -> DialogSession:
            if instance_id is None:
                if len(self._sessions) != 1:
                    raise ValueError(f"instance_id is required ({len(self._sessions)} dialogues are open)")
                return next(iter(self._sessions.values()))
            try:
                return self._sessions[instance_id]
            except KeyError:
                raise KeyError(f"no dialogue {instance_id!r}: call start_interaction() first") from None

    DialogGymInteraction.__module__ = __name__
    DialogGymInteraction.__qualname__ = "DialogGymInteraction"
    return DialogGymInteraction


_CLASSES: dict[str, type] = {}
_BUILDERS = {"DialogGymAgentLoop": _agent_loop_class, "DialogGymInteraction": _interaction_class}


def __getattr__(name: str) -> Any:
    """The verl classes are built on first access, so the reward helpers need no verl."""
    if name in _BUILDERS:
        if name not in _CLASSES:
            _CLASSES[name] = _BUILDERS[name]()
        return _CLASSES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
