"""`DialogGymInteraction`: a dialog-gym user as a verl 0.7.x interaction (`BaseInteraction`).

verl 0.7's tool agent loop calls it after each policy turn (configured in
``examples/verl/interaction_config.yaml``). Importing this module imports verl 0.7.
"""

from __future__ import annotations

import logging
import uuid
from collections import OrderedDict
from typing import Any

try:
    from verl.interactions.base import BaseInteraction
except ImportError as exc:
    raise ImportError(
        "DialogGymInteraction needs verl's interaction API (verl.interactions, verl 0.7.x; verl >= 0.8 "
        "removed it: use DialogGymAgentLoop there)"
    ) from exc

from dialog_gym.integrations.verl.dialogs import VerlDialogs, message_text, turn_scores
from dialog_gym.session import DialogSession

__all__ = ["DialogGymInteraction"]

logger = logging.getLogger(__name__)


class DialogGymInteraction(BaseInteraction):
    """A verl 0.7 interaction whose user is a dialog-gym simulator.

    Config (the `config:` block of the interaction YAML): the options of the shared
    set-up (`simulator`, `simulator_options`, `style`, `rules`, `personas`, `think`,
    `reply_guard`, `replay_opening`, see `VerlDialogs`) and `max_sessions`: dialogues kept at once; the
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
        self.dialogs = VerlDialogs.from_options(options, owner="dialog_gym interaction")
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
        outcome = await session.step(message_text(messages[-1].get("content")))
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
            return True, outcome.observation, turn_scores(session)[-1], metadata
        if session.done:  # kept for calculate_score(), first in the eviction order
            self._sessions.move_to_end(instance_id, last=False)
        return session.done, outcome.observation, turn_scores(session)[-1], metadata

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

