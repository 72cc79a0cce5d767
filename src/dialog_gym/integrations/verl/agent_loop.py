"""`DialogGymAgentLoop`: verl 0.9.x's agent loop (from verl 0.9.1) with a dialog-gym user.

Registered by name in ``examples/verl/agent_loop.yaml``; importing this module imports verl.
The package docstring (`dialog_gym.integrations.verl`) says where each adapter plugs in.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import uuid
from typing import Any

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

from dialog_gym.integrations.verl.dialogs import shared_dialogs, turn_scores
from dialog_gym.session import DialogSession

__all__ = ["DialogGymAgentLoop"]

logger = logging.getLogger(__name__)

# verl's own constructor arguments; every other option of the loop's config is the dialogue set-up's.
_VERL_ARGUMENTS = frozenset(inspect.signature(AgentLoopBase.__init__).parameters) - {"self", "args", "kwargs"}


@dataclasses.dataclass
class _Tokens:
    """A rollout's token stream: prompt then response; the response's mask and log-probabilities."""

    ids: list[int]
    mask: list[int] = dataclasses.field(default_factory=list)  # 1: the policy's tokens, 0: context
    logprobs: list[float] = dataclasses.field(default_factory=list)  # empty when the server gives none


class DialogGymAgentLoop(AgentLoopBase):
    """verl's multi-turn rollout of one emotional-support dialogue with a dialog-gym user.

    Registered in an agent loop config (``examples/verl/agent_loop.yaml``)::

        - name: dialog_gym
          _target_: dialog_gym.integrations.verl.DialogGymAgentLoop
          simulator: rule          # or openai, with simulator_options: {model, base_url, ...}
          rules: rlver

    Options (besides verl's own constructor arguments): those of the shared set-up
    (`simulator`, `simulator_options`, `style`, `rules`, `personas`, `think`,
    `reply_guard`, `replay_opening`, see `VerlDialogs`) and `reward_in_loop` (default true: the final
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
        options = {k: kwargs.pop(k) for k in list(kwargs) if k not in _VERL_ARGUMENTS}
        super().__init__(*args, **kwargs)
        self.dialogs = shared_dialogs(options, owner="dialog_gym agent loop")
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
            "turn_scores": turn_scores(session),
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

