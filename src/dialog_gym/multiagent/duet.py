"""`Duet`: the async core of a dialogue in which the supporter, the seeker or both are policies.

The dialogue itself is a `DialogSession` (mood, endings, rewards, error handling live
there). `Duet` only decides who speaks next, routes each line to the session and runs the
built-in side (the simulator, the baseline supporter or a scripted callable) whenever it is
its turn. The PettingZoo envs in `empathy_v0` are thin synchronous facades over it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from dialog_gym.session import DialogSession, StepOutcome
from dialog_gym.mood import mood_bucket
from dialog_gym.multiagent.prompts import seeker_system_prompt
from dialog_gym.multiagent.voice import SeekerVoice
from dialog_gym.types import Message

Role = Literal["seeker", "supporter"]
ROLES: tuple[Role, Role] = ("seeker", "supporter")  # turn order: the seeker speaks first

#: A built-in speaker: given the conversation from its own side, returns its next line.
Speaker = Callable[[Sequence[Message]], str | Awaitable[str]]
#: A custom seeker reward: called with the session and the seeker's line just spoken.
SeekerRewardFn = Callable[[DialogSession, str], float]
SEEKER_REWARDS = ("none", "shared", "opposed")


@dataclass(frozen=True)
class SeekerView:
    """What the seeker knows when it is to speak (its observation and info)."""

    message: str  # the supporter's reply to answer ("" before the opening)
    mood: int  # the mood after the simulator appraised that reply
    emotion_delta: int  # the applied change of that appraisal
    appraisal: str  # the appraisal's reasoning: how the reply made the seeker feel
    simulator_reply: str  # what the judge would have said: its opening, then (reference_replies) its answer
    ends_after_reply: bool  # the mood or turn limit ends the dialogue after the seeker's line


class Duet:
    """Turn-taking between the supporter and the seeker over one `DialogSession`.

    Arguments:
        session: the dialogue; its simulator is the judge itself (seeker = simulator) or a
            `SeekerVoice` around the judge (seeker = a policy or a scripted speaker).
        supporter: None when the supporter is a policy, else a built-in `Speaker`.
        seeker: None when the seeker is a policy, `"simulator"`, or a built-in `Speaker`.
        seeker_reward: `"none"`, `"shared"`, `"opposed"` or a `SeekerRewardFn`.
        seeker_prompt: the seeker's system message (default: `seeker_system_prompt`).
    """

    def __init__(
        self,
        session: DialogSession,
        *,
        supporter: Speaker | None,
        seeker: Speaker | Literal["simulator"] | None,
        seeker_reward: str | SeekerRewardFn = "none",
        seeker_prompt: str | None = None,
    ):
        voice = session.simulator if isinstance(session.simulator, SeekerVoice) else None
        if (seeker == "simulator") != (voice is None):
            raise ValueError("the session's simulator must be a SeekerVoice exactly when the seeker is not the simulator")
        self.session = session
        self.voice = voice
        self.speakers: dict[Role, Speaker | str | None] = {"supporter": supporter, "seeker": seeker}
        self.seeker_reward = seeker_reward
        self.seeker_prompt = seeker_prompt or seeker_system_prompt(session.persona)
        self.whose_turn: Role | None = None
        self.pending_reply: str | None = None  # the supporter reply the seeker is to answer
        self._step: asyncio.Task[StepOutcome] | None = None
        self.opening_reference: str = ""  # the judge's own opening line (seeker = policy)

    # -- state ----------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.session.done

    @property
    def truncated(self) -> bool:
        return self.session.terminal_reason == "simulator_error"

    def is_policy(self, role: Role) -> bool:
        return self.speakers[role] is None

    def supporter_messages(self) -> list[Message]:
        return self.session.messages

    def seeker_messages(self) -> list[Message]:
        """The conversation from the seeker's side: its persona prompt first, roles swapped."""
        swap = {"user": "assistant", "assistant": "user"}
        messages: list[Message] = [{"role": "system", "content": self.seeker_prompt}]
        messages += [{"role": swap[m["role"]], "content": m["content"]} for m in self.session.history]  # type: ignore[misc]
        if self.pending_reply is not None:
            messages.append({"role": "user", "content": self.pending_reply})
        return messages

    def last_seeker_line(self) -> str:
        return next((m["content"] for m in reversed(self.session.history) if m["role"] == "user"), "")

    def seeker_view(self) -> SeekerView:
        session, rules = self.session, self.session.rules
        pending = self.voice.pending if self.voice is not None and self.pending_reply is not None else None
        if pending is not None:  # the session has applied the judge's appraisal: the mood is known
            ends = rules.terminal_reason(pending.mood, session.turn + 1, goodbye=False) is not None
            return SeekerView(
                pending.reply, pending.mood, pending.mood - session.mood, pending.appraisal.reasoning, pending.reference, ends
            )
        last = session.turns[-1] if session.turns else None
        message = next((m["content"] for m in reversed(session.history) if m["role"] == "assistant"), "")
        return SeekerView(
            message=message,
            mood=session.mood,
            emotion_delta=last.delta if last else 0,
            appraisal=last.reasoning if last else "",
            simulator_reply=self.opening_reference if session.opening is None else "",
            ends_after_reply=False,
        )

    def seeker_info(self) -> dict[str, Any]:
        view, session = self.seeker_view(), self.session
        return {
            "messages": self.seeker_messages(),
            "turn": session.turn,
            "mood": view.mood,
            "mood_bucket": mood_bucket(view.mood),
            "emotion_delta": view.emotion_delta,
            "appraisal": view.appraisal,
            "simulator_reply": view.simulator_reply,
            "ends_after_reply": view.ends_after_reply,
            "terminal_reason": session.terminal_reason,
            "persona_id": session.persona.id,
            "language": session.persona.language,
            "persona": session.persona.to_dict(),
            "error": session.error,
        }

    def supporter_info(self) -> dict[str, Any]:
        """The session's info without `privileged`: the supporter never sees the hidden need."""
        info = self.session.info()
        del info["privileged"]
        return info

    # -- the dialogue ---------------------------------------------------------------------
    async def start(self) -> dict[Role, float]:
        """Open the dialogue and let built-in speakers talk until a policy must act."""
        if self.whose_turn is not None or self.session.opening is not None:
            raise RuntimeError("Duet.start() called twice; create a new Duet per episode")
        if self.speakers["seeker"] == "simulator":
            await self.session.start()
            self.whose_turn = "supporter"
        else:
            # The judge's opening is the seeker's reference line; drawing it also keeps the
            # generator in step with the single-agent env (an echoing seeker replays it).
            assert self.voice is not None
            self.opening_reference = await self.voice.judge.open(self.session.persona, self.session.rng)
            self.whose_turn = "seeker"
        return await self._run_speakers({"seeker": 0.0, "supporter": 0.0})

    async def act(self, role: Role, text: str) -> dict[Role, float]:
        """`role` says `text`; returns the rewards earned until a policy must act again."""
        if role not in ROLES:
            raise ValueError(f"unknown agent {role!r}; expected one of {ROLES}")
        if not isinstance(text, str):
            raise TypeError(f"the {role}'s action must be a str (its next message), got {type(text).__name__}")
        if self.done:
            raise RuntimeError(
                f"the dialogue has ended ({self.session.terminal_reason} at turn {self.session.turn}); call reset()"
            )
        if self.whose_turn is None:
            raise RuntimeError("the dialogue has not started; call reset()")
        if role != self.whose_turn:
            raise RuntimeError(f"it is the {self.whose_turn}'s turn, not the {role}'s")
        rewards: dict[Role, float] = {"seeker": 0.0, "supporter": 0.0}
        await self._speak(role, text, rewards)
        return await self._run_speakers(rewards)

    async def cancel(self) -> None:
        """Abandon a supporter step still waiting for the seeker (on reset or close)."""
        if self._step is not None and not self._step.done():
            self._step.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._step
        self._step = None

    async def _run_speakers(self, rewards: dict[Role, float]) -> dict[Role, float]:
        while self.whose_turn is not None and not self.is_policy(self.whose_turn):
            role = self.whose_turn
            speaker = self.speakers[role]
            messages = self.supporter_messages() if role == "supporter" else self.seeker_messages()
            assert callable(speaker)
            line = speaker(messages)
            if inspect.isawaitable(line):
                line = await line
            if not isinstance(line, str):
                raise TypeError(f"the built-in {role} {speaker!r} returned {type(line).__name__}, expected str")
            await self._speak(role, line, rewards)
        return rewards

    async def _speak(self, role: Role, text: str, rewards: dict[Role, float]) -> None:
        if role == "supporter":
            await self._supporter_reply(text, rewards)
        else:
            await self._seeker_line(text, rewards)

    async def _supporter_reply(self, reply: str, rewards: dict[Role, float]) -> None:
        if self.voice is None:  # the simulator answers within the step
            self._settle(await self.session.step(reply), rewards)
            return
        self._step = asyncio.ensure_future(self.session.step(reply))
        asked = asyncio.ensure_future(self.voice.asked.wait())
        try:
            await asyncio.wait({self._step, asked}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not asked.done():
                asked.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await asked
        if self._step.done():  # the judge failed: the session ended the episode
            step, self._step = self._step, None
            self._settle(step.result(), rewards)
            return
        # The appraisal is in; the seeker answers the reply the simulator saw (thought stripped).
        assert self.voice.pending is not None
        self.pending_reply = self.voice.pending.reply
        self.whose_turn = "seeker"

    async def _seeker_line(self, line: str, rewards: dict[Role, float]) -> None:
        assert self.voice is not None
        self.voice.say(line)
        if self.session.opening is None:
            await self.session.start()
            self.whose_turn = "supporter"
            rewards["seeker"] += self._custom_seeker_reward(line)
            return
        assert self._step is not None, "a seeker line with no supporter reply to answer"
        step, self._step = self._step, None
        outcome = await step
        self.pending_reply = None
        self._settle(outcome, rewards)
        rewards["seeker"] += self._custom_seeker_reward(line)

    def _settle(self, outcome: StepOutcome, rewards: dict[Role, float]) -> None:
        """Book a completed exchange: the supporter's reward and the seeker's share of it."""
        rewards["supporter"] += outcome.reward
        if self.seeker_reward == "shared":
            rewards["seeker"] += outcome.reward
        elif self.seeker_reward == "opposed":
            rewards["seeker"] -= outcome.reward
        self.whose_turn = None if self.done else "supporter"

    def _custom_seeker_reward(self, line: str) -> float:
        if callable(self.seeker_reward):
            return float(self.seeker_reward(self.session, line))
        return 0.0
