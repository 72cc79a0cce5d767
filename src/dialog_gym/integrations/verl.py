"""dialog-gym as a verl *interaction*: the simulated user of verl's multi-turn agent loop.

verl (https://github.com/volcengine/verl; RLVER itself is a verl fork) trains on many
machines over Ray. Its tool agent loop generates the policy's turn, then asks an
interaction for the user's answer. `DialogGymInteraction` is that interaction: every
rollout drives one `DialogSession`, so the mood mechanics are exactly the gym env's.

Protocol (verl's `BaseInteraction`, up to verl 0.7.1, the last release that ships
`verl.interactions`; 0.8 removed them)::

    await interaction.start_interaction(request_id, **interaction_kwargs)
    should_end, user_reply, turn_score, metadata = await interaction.generate_response(
        request_id, messages, **interaction_kwargs)          # once per policy turn
    await interaction.calculate_score(request_id)            # final mood / 100
    await interaction.finalize_interaction(request_id)

Per sample, `extra_info.interaction_kwargs` (written by `examples/verl/prepare_data.py`,
see `dataset_row`) names the interaction and the episode: ``{"name": "dialog_gym",
"persona_id": ..., "seed": ..., "rules": "rlver"}``. The sample's prompt already holds the
agent system prompt and the user's opening line; the session starts from it.

Turn scores: each turn's score is the applied emotion delta / 100 (after the preset's clamp
and the 0-100 bounds), so ``start / 100 + sum(turn_scores)`` is the final mood / 100, the
RLVER reward. verl 0.7.1 hands the scores to the reward function as
``extra_info["turn_scores"]``; `compute_score` (``custom_reward_function.path=
pkg://dialog_gym.integrations.verl``, ``name=compute_score``) turns them into the reward.
A simulator failure ends the dialogue with a NaN turn score; `compute_score` then gives
0.0, as `DialogSession.reward` does.
"""

from __future__ import annotations

import logging
import math
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from gymnasium.utils import seeding

from dialog_gym.session import DialogConfig, DialogSession, agent_system_prompt
from dialog_gym.mood import MoodRules, get_rules
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.simulators import RuleSimulator, Simulator, make_simulator

__all__ = ["DialogGymInteraction", "INTERACTION_NAME", "compute_score", "dataset_row", "final_reward"]

logger = logging.getLogger(__name__)

INTERACTION_NAME = "dialog_gym"
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

    Reads ``extra_info["turn_scores"]`` (filled by verl's agent loop from our turn scores)
    and the preset from ``extra_info["interaction_kwargs"]["rules"]`` (default rlver).
    """
    extra_info = extra_info or {}
    if "turn_scores" not in extra_info:
        raise KeyError(
            "extra_info has no 'turn_scores': run verl's multi-turn agent loop with the dialog_gym interaction "
            "(actor_rollout_ref.rollout.multi_turn.interaction_config_path=...)"
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
    interaction_name: str = INTERACTION_NAME,
) -> dict[str, Any]:
    """One row of the parquet file verl's `RLHFDataset` reads.

    The prompt holds what the agent sees (system prompt, opening line); the hidden need
    never enters it. `agent_name` selects verl's tool agent loop (the one that calls
    interactions); `reward_model.ground_truth` is the persona id (verl requires the key).
    """
    return {
        "data_source": DATA_SOURCE,
        "prompt": [
            {"role": "system", "content": system_prompt or agent_system_prompt(persona.language, think)},
            {"role": "user", "content": opening},
        ],
        "ability": "emotional_support",
        "agent_name": "tool_agent",  # verl's multi-turn agent loop, the one that calls interactions
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


# -- the interaction ----------------------------------------------------------------------
def _interaction_class() -> type:
    try:
        from verl.interactions.base import BaseInteraction
    except ImportError as exc:
        raise ImportError(
            "DialogGymInteraction needs verl's interaction API (verl.interactions, shipped up to verl 0.7.1): "
            "pip install 'dialog-gym[verl]'"
        ) from exc

    class DialogGymInteraction(BaseInteraction):
        """A verl interaction whose user is a dialog-gym simulator.

        Config (the `config:` block of the interaction YAML):
            simulator: `"rule"` (default), `"openai"`, `"transformers"`, ...
            simulator_kwargs: passed to `make_simulator` (model, base_url, style, ...).
            style: the simulator style (`vanilla` / `challenging`), for a named simulator.
            rules: the default preset (`rlver`, `sage`); a sample's `interaction_kwargs.rules`
                overrides it.
            personas: a persona file or folder (None: the bundled sets).
            think: the policy writes `<think>...</think>reply`; only the reply reaches the user.
            max_sessions: dialogues kept at once; the oldest are dropped beyond it (verl
                0.7.1 never calls `finalize_interaction`, and rollouts cut by verl's turn
                or length limits never end on their own).
            replay_opening: `"auto"` (default: only for the rule simulator), true or false.
                The opening line comes from the prompt; replaying the simulator's opener
                on the episode's generator (its output is discarded) leaves the generator
                where `env.reset(seed=seed)` leaves it, so a dialogue equals the gym env's
                with the same seed and replies. It costs one simulator call per rollout.
        """

        def __init__(self, config: dict[str, Any]):
            super().__init__(config)
            simulator = config.get("simulator", "rule")
            simulator_kwargs = dict(config.get("simulator_kwargs") or {})
            if isinstance(simulator, str):
                simulator_kwargs.setdefault("style", config.get("style", "vanilla"))
            self.simulator: Simulator = make_simulator(simulator, **simulator_kwargs)
            self.rules = get_rules(config.get("rules", "rlver"))
            self.personas = PersonaSet.load(config.get("personas"))
            self.think = bool(config.get("think", False))
            self.max_sessions = int(config.get("max_sessions", 65536))
            replay = config.get("replay_opening", "auto")
            if replay not in ("auto", True, False):
                raise ValueError(f"replay_opening must be 'auto', true or false, got {replay!r}")
            self.replay_opening = isinstance(self.simulator, RuleSimulator) if replay == "auto" else replay
            self._sessions: OrderedDict[str, DialogSession] = OrderedDict()

        def __repr__(self) -> str:
            return (
                f"DialogGymInteraction(name={self.name!r}, simulator={self.simulator.identity()!r}, "
                f"rules={self.rules.name!r}, sessions={len(self._sessions)})"
            )

        async def start_interaction(
            self,
            instance_id: str | None = None,
            *,
            persona_id: str | None = None,
            seed: int = 0,
            rules: str | None = None,
            **kwargs: Any,
        ) -> str:
            """Create the dialogue of one rollout; its first user turn comes from the prompt."""
            if persona_id is None:
                raise ValueError(
                    "interaction_kwargs has no 'persona_id'; write the dataset with examples/verl/prepare_data.py "
                    "(extra_info.interaction_kwargs = {'name', 'persona_id', 'seed', 'rules'})"
                )
            try:
                persona = self.personas.get(persona_id)
            except KeyError:
                raise KeyError(f"persona {persona_id!r} is not in this interaction's persona set") from None
            instance_id = instance_id or uuid.uuid4().hex
            config = DialogConfig(self.simulator, get_rules(rules) if rules is not None else self.rules, think=self.think)
            session = config.session(persona, seeding.np_random(int(seed))[0])
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
                session.system_prompt = _first(messages, "system") or session.system_prompt
                opening = _first(messages, "user")
                if opening is None:
                    raise ValueError("the rollout's messages hold no user turn: the prompt must end with the opening line")
                if self.replay_opening:
                    await self.simulator.open(session.persona, session.rng)  # advances the generator only
                await session.start(opening)
            if session.done:
                raise RuntimeError(
                    f"generate_response() after the dialogue {instance_id} ended ({session.terminal_reason}); "
                    "start a new interaction"
                )
            if not messages or messages[-1].get("role") != "assistant":
                raise ValueError("generate_response() expects the policy's reply as the last message")
            reply = _text(messages[-1].get("content"))
            outcome = await session.step(reply)
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
                return True, outcome.observation, float("nan"), metadata
            if session.done:
                self._finished(instance_id, session)
            return session.done, outcome.observation, session.turns[-1].delta / 100.0, metadata

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

        def _finished(self, instance_id: str, session: DialogSession) -> None:
            # Finished dialogues stay for calculate_score(); they move to the front of the
            # eviction order.
            self._sessions.move_to_end(instance_id, last=False)

    DialogGymInteraction.__module__ = __name__
    DialogGymInteraction.__qualname__ = "DialogGymInteraction"
    return DialogGymInteraction


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


_CLASS: type | None = None


def __getattr__(name: str) -> Any:
    """`DialogGymInteraction` is built on first access, so the reward helpers need no verl."""
    global _CLASS
    if name == "DialogGymInteraction":
        if _CLASS is None:
            _CLASS = _interaction_class()
        return _CLASS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
