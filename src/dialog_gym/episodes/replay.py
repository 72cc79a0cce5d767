"""Replays: a simulator built from records, and re-running a recorded episode.

`ReplaySimulator` replays recorded reactions ("cassettes") byte for byte, with no backend.
A cassette is any set of `Episode` records (an episodes JSONL file, a run folder, or
`Episode` objects). The simulator looks each reaction up by the conversation it was
recorded in: the persona id, every message so far and the agent's new reply. So a replay
reproduces the recording exactly as long as the agent says the same things, and stops
with a `SimulatorError` that names the persona and turn the moment it says something else
(the session then ends the episode as `simulator_error`, as for any simulator failure).
It lives with the records it reads, above the session layer; `dialog_gym` registers it
as the simulator named `"replay"`.

`areplay(episode)` re-runs one recorded episode through a `DialogSession` with its
recorded persona, rules, seed and agent actions, and `diff_episodes` says what differs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from gymnasium.utils import seeding

from dialog_gym._async import sync_facade
from dialog_gym.episodes.io import read_episodes
from dialog_gym.episodes.record import Episode
from dialog_gym.mood import MoodRules, get_rules
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.session import DialogConfig
from dialog_gym.simulators.base import Appraisal, Response, SimulatorError
from dialog_gym.types import Message, Usage

# Fields that legitimately differ between a recording and its replay.
VOLATILE_FIELDS = frozenset({"created_at", "simulator", "version"})
# What `ReplaySimulator.from_file` takes (`make_simulator("replay", ...)`).
REPLAY_OPTIONS = ("path", "style", "language")


def _conversation_key(persona_id: str, history: Sequence[Message], reply: str) -> str:
    payload = json.dumps(
        [persona_id, [[m["role"], m["content"]] for m in history], reply], ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _state_key(rng: np.random.Generator) -> str:
    return json.dumps(rng.bit_generator.state, sort_keys=True, default=str)


def _fresh_state_key(seed: int) -> str:
    """The state of a generator just seeded with `seed`, as `env.reset(seed=seed)` makes it."""
    return _state_key(seeding.np_random(int(seed))[0])


@lru_cache(maxsize=None)
def _error_type(name: str) -> type[SimulatorError]:
    """A `SimulatorError` subclass named like the recorded exception, so the replayed
    error message (`"Name: message"`) is byte-identical to the recorded one."""
    if name == "SimulatorError" or not name.isidentifier():
        return SimulatorError
    return type(name, (SimulatorError,), {"__module__": __name__})


def _recorded_failure(turn: dict[str, Any]) -> SimulatorError:
    errors = list(turn.get("errors", ()))
    recorded = errors.pop() if errors else "SimulatorError: recorded simulator failure"
    name, sep, message = recorded.partition(": ")
    if not sep:
        name, message = "SimulatorError", recorded
    usage = Usage(**turn.get("usage", {}))
    return _error_type(name)(message, raw_outputs=turn.get("raw", ()), usage=usage, errors=errors)


class ReplaySimulator:
    """Replays the reactions of recorded episodes; see the module docstring.

    Arguments:
        episodes: the recordings (`Episode` objects or their dicts).
        source: where they came from, for `identity()` (a path, usually).
    """

    name = "replay"

    def __init__(self, episodes: Iterable[Any], *, source: str | None = None):
        self.source = source
        self._openings: dict[str, list[str]] = {}
        # (persona id, generator state of a fresh env seeded like the recording) -> opening
        self._seeded_openings: dict[tuple[str, str], str] = {}
        self._next_opening: dict[str, int] = {}
        # conversation key -> recorded (turn, whether the simulator failed on it), in file order
        self._reactions: dict[str, list[tuple[dict[str, Any], bool]]] = {}
        # (fresh generator state of the recording's seed, conversation key) -> (turn, failed)
        self._seeded_reactions: dict[tuple[str, str], tuple[dict[str, Any], bool]] = {}
        self._next_reaction: dict[str, int] = {}
        self.episodes = 0
        for item in episodes:
            episode = item if isinstance(item, Episode) else Episode.from_dict(item)
            self._add(episode)
        if not self.episodes:
            raise ValueError(f"ReplaySimulator: no recorded episodes{f' in {source}' if source else ''}")

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> "ReplaySimulator":
        """Load the cassette from an episodes JSONL file or a run folder.

        Extra keyword arguments that simulators commonly receive from an env (`style`,
        `language`) are accepted and ignored: a replay has no style of its own.
        """
        unknown = set(kwargs) - set(REPLAY_OPTIONS)
        if unknown:
            raise TypeError(f"ReplaySimulator.from_file() got unexpected option(s) {sorted(unknown)}")
        return cls(read_episodes(path), source=str(path))

    def _add(self, episode: Episode) -> None:
        self.episodes += 1
        self._openings.setdefault(episode.persona_id, []).append(episode.opening)
        if episode.seed is not None:
            key = (episode.persona_id, _fresh_state_key(episode.seed))
            self._seeded_openings.setdefault(key, episode.opening)
        history: list[Message] = [{"role": "user", "content": episode.opening}]
        last = len(episode.turns)
        seed_key = _fresh_state_key(episode.seed) if episode.seed is not None else None
        for turn in episode.turns:
            key = _conversation_key(episode.persona_id, history, turn["reply"])
            failed = episode.terminal_reason == "simulator_error" and turn["turn"] == last
            self._reactions.setdefault(key, []).append((turn, failed))
            if seed_key is not None:
                self._seeded_reactions.setdefault((seed_key, key), (turn, failed))
            history.append({"role": "assistant", "content": turn["reply"]})
            history.append({"role": "user", "content": turn["user_reply"]})

    # -- the Simulator protocol -----------------------------------------------------------
    async def open(self, persona: Persona, rng: np.random.Generator) -> str:
        """The recorded opening of the episode with this persona and seed when the generator
        is a freshly seeded one (as after `env.reset(seed=...)`); otherwise the persona's
        recorded openings in turn."""
        seeded = self._seeded_openings.get((persona.id, _state_key(rng)))
        if seeded is not None:
            return seeded
        openings = self._openings.get(persona.id)
        if not openings:
            raise SimulatorError(f"replay: no recorded episode for persona {persona.id!r}")
        index = self._next_opening.get(persona.id, 0)
        self._next_opening[persona.id] = index + 1
        return openings[index % len(openings)]

    async def appraise(
        self,
        persona: Persona,
        mood: int,
        history: Sequence[Message],
        reply: str,
        *,
        rules: MoodRules,
        rng: np.random.Generator,
    ) -> Appraisal:
        """The recorded appraisal of `reply` in this conversation; it carries the recorded
        answer for `respond`, and the whole turn's usage, errors and raw outputs."""
        key = _conversation_key(persona.id, history, reply)
        # A replay never draws from the generator, so during a replay it still holds the
        # state it was seeded with: that names the recorded episode when several share
        # the same conversation so far (the same persona played with different seeds).
        seeded = self._seeded_reactions.get((_state_key(rng), key))
        if seeded is not None:
            turn, failed = seeded
            return self._appraisal(turn, failed)
        recorded = self._reactions.get(key)
        if not recorded:
            turn_number = sum(1 for m in history if m["role"] == "assistant") + 1
            raise SimulatorError(
                f"replay: no recorded reaction for persona {persona.id!r} at turn {turn_number}: the agent's reply "
                f"or the conversation before it differs from the recording"
            )
        index = self._next_reaction.get(key, 0)
        self._next_reaction[key] = index + 1
        turn, failed = recorded[index % len(recorded)]
        return self._appraisal(turn, failed)

    async def respond(
        self,
        persona: Persona,
        history: Sequence[Message],
        reply: str,
        appraisal: Appraisal,
        *,
        mood: int,
        rng: np.random.Generator,
    ) -> Response:
        """The answer recorded with `appraisal` (its usage was booked with the appraisal)."""
        return Response(appraisal.detail["user_reply"], wants_to_end=appraisal.detail["wants_to_end"])

    @staticmethod
    def _appraisal(turn: dict[str, Any], failed: bool) -> Appraisal:
        if failed:
            raise _recorded_failure(turn)
        return Appraisal(
            delta=int(turn["requested_delta"]),
            fit="",
            reasoning=turn["reasoning"],
            usage=Usage(**turn.get("usage", {})),
            errors=tuple(turn.get("errors", ())),
            raw=tuple(turn.get("raw", ())),
            detail={"user_reply": turn["user_reply"], "wants_to_end": bool(turn["wants_to_end"])},
        )

    def identity(self) -> dict[str, Any]:
        return {"simulator": "replay", "source": self.source, "episodes": self.episodes}

    def __repr__(self) -> str:
        return f"ReplaySimulator({self.episodes} episodes{f' from {self.source}' if self.source else ''})"


# -- re-running a recorded episode --------------------------------------------------------
def recorded_rules(episode: Episode) -> MoodRules:
    """The mood rules an episode was recorded under (its full rules, else its preset)."""
    return MoodRules(**episode.rules) if episode.rules else get_rules(episode.preset)


def recorded_persona(episode: Episode, personas: Any = None) -> Persona:
    """The persona an episode was recorded with: from the record, else from `personas`."""
    if episode.persona:
        return Persona.from_dict(episode.persona)
    if personas is None:
        personas = PersonaSet.bundled()
    return personas.get(episode.persona_id)


async def areplay(
    episode: Any,
    *,
    simulator: Any = None,
    rules: "str | MoodRules | None" = None,
    personas: Any = None,
) -> Any:
    """Re-run a recorded episode: its persona, opening, agent actions and seed, through a
    `DialogSession`. By default the reactions come from the recording itself
    (`ReplaySimulator([episode])`) under the recorded rules, which reproduces it exactly.

    Arguments:
        episode: the recorded `Episode`.
        simulator: another simulator (a name or an instance) to react in the recording's place.
        rules: the mood rules to replay under (a preset name or `MoodRules`); None: the recorded ones.
        personas: where the persona is looked up when the record holds none (None: the bundled sets).

    Returns the new `Episode`. If the session ends before the recorded actions run out, the
    replay stops there; if the actions run out first, the new episode has no terminal reason.
    Compare with `diff_episodes(recorded, replayed)`.
    """
    own_recording = simulator is None
    sim = ReplaySimulator([episode], source=episode.source) if own_recording else simulator
    mood_rules = get_rules(rules) if rules is not None else recorded_rules(episode)
    persona = recorded_persona(episode, personas)
    system = episode.messages[0]["content"] if episode.messages and episode.messages[0]["role"] == "system" else None
    rng = np.random.default_rng(episode.seed)
    session = DialogConfig(sim, mood_rules, think=episode.think, system_prompt=system).session(persona, rng)
    await session.start()
    for turn in episode.turns:
        if session.done:
            break
        await session.step(turn["action"])
    replayed = Episode.from_session(
        session, seed=episode.seed, group_id=episode.group_id, episode_id=episode.episode_id, agent=episode.agent
    )
    if own_recording:  # say whose reactions these are
        replayed.simulator = {"simulator": "replay", "of": dict(episode.simulator)}
    replayed.source = episode.source
    replayed.extra = dict(episode.extra)
    return replayed


replay = sync_facade(areplay)


def diff_episodes(recorded: Any, replayed: Any, *, ignore: Iterable[str] = VOLATILE_FIELDS) -> list[str]:
    """The fields (and for `turns`, the turn numbers and keys) where two records differ."""
    a, b = recorded.to_dict(), replayed.to_dict()
    skip = set(ignore)
    out = []
    for name in a:
        if name in skip or a[name] == b.get(name):
            continue
        if name == "turns":
            for i, (ta, tb) in enumerate(zip(a["turns"], b["turns"]), start=1):
                keys = sorted(k for k in ta if ta[k] != tb.get(k))
                if keys:
                    out.append(f"turns[{i}]: {', '.join(keys)}")
            if len(a["turns"]) != len(b["turns"]):
                out.append(f"turns: {len(a['turns'])} recorded, {len(b['turns'])} replayed")
        else:
            out.append(name)
    return out
