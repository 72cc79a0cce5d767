"""Mood mechanics: how an appraised change moves the mood, when a dialogue ends, the reward.

Two presets reproduce the published set-ups:

========  =====  ================  =========================================  =========
preset    start  change per turn   episode ends at                            max turns
========  =====  ================  =========================================  =========
`rlver`   30     unclamped         mood <= 0, a goodbye, the turn limit        8
`sage`    40     clamped to ±10    mood >= 100, mood < 10, goodbye, the limit  9
========  =====  ================  =========================================  =========

The mood always stays within [0, 100]; the reward is final mood / 100.

SAGE's published limit is 10 agent replies, but the 10th is never appraised (checked on the
600 recorded SAGE dialogues), so at most 9 replies move the mood: `sage.max_turns` is 9, which
reproduces the benchmark's final moods exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

MoodBucket = Literal["S", "A", "B", "C", "F"]
TerminalReason = Literal["success", "failure", "goodbye", "max_turns", "simulator_error"]

# (lower bound, bucket), highest first: S >= 100, A >= 70, B >= 40, C >= 10, F < 10.
_BUCKETS: tuple[tuple[int, MoodBucket], ...] = ((100, "S"), (70, "A"), (40, "B"), (10, "C"))


def mood_bucket(mood: float) -> MoodBucket:
    """The coarse mood level the simulator's response is conditioned on."""
    for lower, bucket in _BUCKETS:
        if mood >= lower:
            return bucket
    return "F"


@dataclass(frozen=True)
class MoodUpdate:
    """The result of applying one appraised change."""

    mood: int  # the new mood, within [floor, cap]
    delta: int  # the change actually applied (after clamping and capping)
    requested_delta: int  # the change the simulator asked for
    clamped: bool  # the requested change lay outside [min_delta, max_delta]


@dataclass(frozen=True)
class MoodRules:
    """The mood mechanics of one benchmark or training set-up (see the module docstring).

    Arguments:
        name: preset name, recorded with every episode.
        start: the mood at the start of a dialogue.
        min_delta, max_delta: bounds on one turn's change; None leaves that side unclamped.
        floor, cap: the mood always stays within [floor, cap].
        end_at_or_below: the dialogue ends (failure) once mood <= this value; None: never.
        end_at_or_above: the dialogue ends (success) once mood >= this value; None: never.
        max_turns: the dialogue ends after this many agent replies.
        end_on_goodbye: the dialogue ends when the simulated user says goodbye.
    """

    name: str
    start: int
    min_delta: int | None
    max_delta: int | None
    floor: int = 0
    cap: int = 100
    end_at_or_below: int | None = 0
    end_at_or_above: int | None = None
    max_turns: int = 8
    end_on_goodbye: bool = True

    def __post_init__(self) -> None:
        if not self.floor <= self.start <= self.cap:
            raise ValueError(f"MoodRules {self.name!r}: start {self.start} outside [{self.floor}, {self.cap}]")
        if self.max_turns < 1:
            raise ValueError(f"MoodRules {self.name!r}: max_turns must be >= 1, got {self.max_turns}")
        if self.min_delta is not None and self.max_delta is not None and self.min_delta > self.max_delta:
            raise ValueError(f"MoodRules {self.name!r}: min_delta {self.min_delta} > max_delta {self.max_delta}")

    def apply(self, mood: int, delta: int) -> MoodUpdate:
        """Clamp `delta` to the preset's bounds and move `mood`, keeping it within [floor, cap]."""
        requested = int(delta)
        bounded = requested
        if self.min_delta is not None:
            bounded = max(self.min_delta, bounded)
        if self.max_delta is not None:
            bounded = min(self.max_delta, bounded)
        new_mood = min(self.cap, max(self.floor, mood + bounded))
        return MoodUpdate(new_mood, new_mood - mood, requested, bounded != requested)

    def terminal_reason(self, mood: int, turn: int, goodbye: bool) -> TerminalReason | None:
        """Why the dialogue ends after `turn` agent replies at `mood`, or None if it goes on.

        Mood thresholds take precedence over a goodbye, and a goodbye over the turn limit.
        """
        if self.end_at_or_above is not None and mood >= self.end_at_or_above:
            return "success"
        if self.end_at_or_below is not None and mood <= self.end_at_or_below:
            return "failure"
        if goodbye and self.end_on_goodbye:
            return "goodbye"
        if turn >= self.max_turns:
            return "max_turns"
        return None

    def reward(self, mood: float) -> float:
        """RLVER's terminal reward: final mood / 100, floored at 0."""
        return max(0.0, float(mood)) / 100.0

    def with_overrides(self, **changes) -> "MoodRules":
        return replace(self, **changes)


RLVER = MoodRules(name="rlver", start=30, min_delta=None, max_delta=None, end_at_or_below=0, max_turns=8)
SAGE = MoodRules(
    name="sage", start=40, min_delta=-10, max_delta=10, end_at_or_below=9, end_at_or_above=100, max_turns=9
)
# The presets by name: every `rules="NAME"`, `--rules NAME` and recorded preset resolves here.
PRESETS: dict[str, MoodRules] = {}


def register_rules(rules: MoodRules) -> MoodRules:
    """Make `rules` a preset, by its `name`: `rules="NAME"` in every entry point, `--rules
    NAME` in every command, and the preset of every episode recorded under it. Registering
    a name again replaces it."""
    if not isinstance(rules, MoodRules):
        raise TypeError(f"register_rules takes a MoodRules, got {type(rules).__name__}")
    PRESETS[rules.name] = rules
    return rules


def rules_names() -> tuple[str, ...]:
    """The registered presets, sorted."""
    return tuple(sorted(PRESETS))


def get_rules(rules: "str | MoodRules") -> MoodRules:
    """Resolve a preset name or pass a `MoodRules` through."""
    if isinstance(rules, MoodRules):
        return rules
    try:
        return PRESETS[rules]
    except (KeyError, TypeError):
        raise ValueError(f"unknown mood preset {rules!r}; expected one of {rules_names()} or a MoodRules") from None


register_rules(RLVER)
register_rules(SAGE)


_GOODBYE_EN = re.compile(
    r"\b(good ?bye|bye(?:-bye)?|see you|see ya|take care|talk (?:to you )?later|gotta go|got to go|"
    r"i(?:'m| am) (?:going to )?(?:leave|leaving|logging off|signing off)|i(?:'ll| will) (?:go|leave) now|"
    r"have to go|need to go|i'm done talking|this is pointless)\b",
    re.IGNORECASE,
)
# Only unambiguous leave-taking: "不说了" and "就这样吧" also occur mid-conversation.
_GOODBYE_ZH = re.compile(r"(再见|拜拜|回头聊|先走了|先下了|不聊了|下次再聊|我走了|告辞)")


def is_goodbye(text: str) -> bool:
    """Whether a simulated-user line closes the conversation (English or Chinese)."""
    return bool(_GOODBYE_EN.search(text) or _GOODBYE_ZH.search(text))
