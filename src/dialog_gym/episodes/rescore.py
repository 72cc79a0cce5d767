"""Re-scoring: judge recorded dialogues again with any simulator, teacher-forced.

The recorded conversation is kept as it is: the opening, every agent reply and every
recorded user answer. The new simulator only *appraises* each agent reply (its
`appraise` call alone: no answer is asked for), given the recorded conversation before
it and its own running mood.
So the new per-turn changes and final mood are directly comparable with the recorded
ones, e.g. to calibrate a cheap simulator against an expensive one, or to check that a
result does not hinge on one judge.

Each recorded reply passes the same `ReplyGuard` as a live reply (8,000 characters by
default), so a megabyte-long recorded reply makes an 8,000-character request, not a
megabyte one; `reply_cut` lists the turns whose reply was cut.

Every recorded turn is judged, so the two series have the same length. The new final
mood is taken where the new rules would have ended the dialogue (the first turn whose
mood reaches a success or failure threshold), otherwise after the last recorded turn;
`new_end_turn` says which.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from dialog_gym._async import sync_facade
from dialog_gym._options import renamed
from dialog_gym.episodes.record import Episode
from dialog_gym.mood import MoodRules, get_rules
from dialog_gym.episodes.replay import recorded_persona, recorded_rules
from dialog_gym.simulators import make_simulator
from dialog_gym.text_guard import ReplyGuard
from dialog_gym.types import Message, Usage


@dataclass
class RescoredEpisode:
    """One recorded episode judged again; recorded and new series side by side."""

    episode_id: str | None
    persona_id: str
    hidden_need: str
    character_type: str
    preset: str
    recorded_deltas: list[int]
    new_deltas: list[int]  # applied changes under the rescoring rules
    new_requested_deltas: list[int]
    recorded_moods: list[int]  # start, then after each turn
    new_moods: list[int]
    recorded_final_mood: int
    new_final_mood: int | None  # None when the simulator failed
    new_end_turn: int  # the turn at which the new rules end the dialogue (or the last turn)
    new_terminal_reason: str | None
    reasonings: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    simulator: dict[str, Any] = field(default_factory=dict)
    reply_cut: list[int] = field(default_factory=list)  # turns whose recorded reply the guard cut

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


async def arescore_episode(
    episode: Episode,
    simulator: Any,
    *,
    rules: "str | MoodRules | None" = None,
    personas: Any = None,
    rng: np.random.Generator | None = None,
    reply_guard: "ReplyGuard | Mapping[str, Any] | None" = None,
) -> RescoredEpisode:
    """Judge one recorded episode's agent replies with `simulator` (see the module docstring)."""
    guard = ReplyGuard.resolve(reply_guard)
    persona = recorded_persona(episode, personas)
    mood_rules = get_rules(rules) if rules is not None else recorded_rules(episode)
    rng = rng if rng is not None else np.random.default_rng(episode.seed)
    mood = mood_rules.start
    moods, deltas, requested, reasonings = [mood], [], [], []
    usage = Usage()
    history: list[Message] = [{"role": "user", "content": episode.opening}]
    end_turn: int | None = None
    reason: str | None = None
    final: int | None = None
    error: str | None = None
    cut_turns: list[int] = []
    for turn in episode.turns:
        reply, cut = guard.cap(turn["reply"])
        if cut:
            cut_turns.append(turn["turn"])
        try:
            appraisal = await simulator.appraise(persona, mood, tuple(history), reply, rules=mood_rules, rng=rng)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:  # recorded, never invented: the episode has no new score
            error = f"turn {turn['turn']}: {type(exc).__name__}: {exc}"
            usage.add(getattr(exc, "usage", None) or Usage())
            break
        usage.add(appraisal.usage)
        update = mood_rules.apply(mood, appraisal.delta)
        mood = update.mood
        moods.append(mood)
        deltas.append(update.delta)
        requested.append(update.requested_delta)
        reasonings.append(appraisal.reasoning)
        if end_turn is None:
            threshold = mood_rules.terminal_reason(mood, turn=0, goodbye=False)
            if threshold is not None:
                end_turn, reason, final = turn["turn"], threshold, mood
        history.append({"role": "assistant", "content": reply})
        history.append({"role": "user", "content": turn["user_reply"]})
    if error is None and final is None:
        final = mood
        end_turn = len(episode.turns)
        reason = mood_rules.terminal_reason(mood, len(episode.turns), False) or episode.terminal_reason
    return RescoredEpisode(
        episode_id=episode.episode_id,
        persona_id=episode.persona_id,
        hidden_need=episode.hidden_need,
        character_type=episode.character_type,
        preset=mood_rules.name,
        recorded_deltas=[int(t["delta"]) for t in episode.turns],
        new_deltas=deltas,
        new_requested_deltas=requested,
        recorded_moods=[int(m) for m in episode.moods],
        new_moods=moods,
        recorded_final_mood=int(episode.final_mood),
        new_final_mood=None if error else final,
        new_end_turn=end_turn or len(deltas),
        new_terminal_reason=None if error else reason,
        reasonings=reasonings,
        usage=usage.to_dict(),
        error=error,
        simulator=simulator.identity(),
        reply_cut=cut_turns,
    )


@renamed(max_concurrent="max_concurrent_episodes")
async def arescore(
    episodes: Iterable[Episode],
    simulator: Any,
    *,
    rules: "str | MoodRules | None" = None,
    personas: Any = None,
    seed: int = 0,
    max_concurrent_episodes: int = 16,
    on_result: Callable[[RescoredEpisode], None] | None = None,
    reply_guard: "ReplyGuard | Mapping[str, Any] | None" = None,
) -> list[RescoredEpisode]:
    """Re-score many episodes concurrently (at most `max_concurrent_episodes` at once), in order.

    Arguments:
        episodes: the recorded episodes (`dialog_gym.episodes.load.load_episodes` reads run
            folders, episode files and SAGE result files).
        simulator: the new judge, a simulator name or instance; it only appraises.
        rules: the mood rules to re-score under; None: each record's own.
        personas: where personas missing from a record are looked up (None: the bundled sets).
        seed: each episode gets its own generator seeded from `(seed, index)`.
        max_concurrent_episodes: episodes judged at once.
        on_result: called with each `RescoredEpisode` as soon as it is done.
        reply_guard: bounds each recorded reply as in a live episode (None: the default
            8,000 characters).
    """
    guard = ReplyGuard.resolve(reply_guard)
    if max_concurrent_episodes < 1:
        raise ValueError(f"max_concurrent_episodes must be >= 1, got {max_concurrent_episodes}")
    sim = make_simulator(simulator)
    episodes = list(episodes)
    gate = asyncio.Semaphore(max_concurrent_episodes)

    async def one(index: int, episode: Episode) -> RescoredEpisode:
        async with gate:
            result = await arescore_episode(
                episode, sim, rules=rules, personas=personas, rng=np.random.default_rng([seed, index]), reply_guard=guard
            )
        if on_result is not None:
            on_result(result)
        return result

    return list(await asyncio.gather(*(one(i, ep) for i, ep in enumerate(episodes))))


rescore = sync_facade(arescore)


def _pearson(x: Sequence[float], y: Sequence[float]) -> float:
    if len(x) < 2:
        return math.nan
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.std() == 0 or b.std() == 0:
        return math.nan
    return float(np.corrcoef(a, b)[0, 1])


def _ranks(values: Sequence[float]) -> np.ndarray:
    """Average ranks (ties share the mean rank), for Spearman's correlation."""
    arr = np.asarray(values, dtype=float)
    order = arr.argsort(kind="stable")
    ranks = np.empty(len(arr))
    ranks[order] = np.arange(len(arr), dtype=float)
    for value in np.unique(arr):
        tied = arr == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def summarize_rescore(results: Sequence[RescoredEpisode]) -> dict[str, Any]:
    """How the new judge compares with the recorded one (means, agreement, correlation)."""
    scored = [r for r in results if r.new_final_mood is not None]
    recorded = [r.recorded_final_mood for r in scored]
    new = [float(r.new_final_mood) for r in scored]  # type: ignore[arg-type]
    pairs = [(a, b) for r in scored for a, b in zip(r.recorded_deltas, r.new_deltas)]
    sign_agree = [np.sign(a) == np.sign(b) for a, b in pairs]
    return {
        "episodes": len(results),
        "scored": len(scored),
        "failed": len(results) - len(scored),
        "recorded_mean_final_mood": float(np.mean(recorded)) if scored else math.nan,
        "new_mean_final_mood": float(np.mean(new)) if scored else math.nan,
        "mean_abs_final_mood_difference": float(np.mean(np.abs(np.subtract(new, recorded)))) if scored else math.nan,
        "final_mood_pearson": _pearson(recorded, new),
        "final_mood_spearman": _pearson(_ranks(recorded), _ranks(new)) if len(scored) >= 2 else math.nan,
        "turns": len(pairs),
        "delta_sign_agreement": float(np.mean(sign_agree)) if pairs else math.nan,
        "delta_pearson": _pearson([a for a, _ in pairs], [b for _, b in pairs]),
    }
