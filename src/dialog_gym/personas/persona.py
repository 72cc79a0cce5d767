"""The `Persona`: who the simulated help-seeker is, what happened, and what they secretly need."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping


class HiddenNeed(str, enum.Enum):
    """What the help-seeker wants from the conversation without saying so (RLVER's eight)."""

    DIALECTICAL_ANALYSIS = "dialectical_analysis"
    PRACTICAL_ADVICE = "practical_advice"
    MOTIVE_ANALYSIS = "motive_analysis"
    GUIDED_REFLECTION = "guided_reflection"
    SPECIFIC_PRAISE = "specific_praise"
    ATTENTIVE_LISTENING = "attentive_listening"
    DEEP_EMPATHY = "deep_empathy"
    NOT_AT_FAULT = "not_at_fault"

    @property
    def is_rational(self) -> bool:
        return self in _RATIONAL_NEEDS

    @property
    def description(self) -> str:
        return NEED_DESCRIPTIONS["en"][self]


_RATIONAL_NEEDS = frozenset(
    {
        HiddenNeed.DIALECTICAL_ANALYSIS,
        HiddenNeed.PRACTICAL_ADVICE,
        HiddenNeed.MOTIVE_ANALYSIS,
        HiddenNeed.GUIDED_REFLECTION,
    }
)

NEED_DESCRIPTIONS: dict[str, dict[HiddenNeed, str]] = {
    "en": {
        HiddenNeed.DIALECTICAL_ANALYSIS: "wants the event analysed from several sides",
        HiddenNeed.PRACTICAL_ADVICE: "wants concrete, workable advice for the current predicament",
        HiddenNeed.MOTIVE_ANALYSIS: "wants to understand why the other people involved acted as they did",
        HiddenNeed.GUIDED_REFLECTION: "wants to be guided to reflect on themselves and grow",
        HiddenNeed.SPECIFIC_PRAISE: "wants sincere praise for specific things they did",
        HiddenNeed.ATTENTIVE_LISTENING: "wants to vent and be listened to attentively",
        HiddenNeed.DEEP_EMPATHY: "wants their feelings deeply understood, not simple comfort",
        HiddenNeed.NOT_AT_FAULT: "believes they bear no blame and wants that affirmed",
    },
    "zh": {
        HiddenNeed.DIALECTICAL_ANALYSIS: "希望对方辩证地分析事件中的问题",
        HiddenNeed.PRACTICAL_ADVICE: "想获得能真正帮助自己解决当下困境的建议",
        HiddenNeed.MOTIVE_ANALYSIS: "想分析事件中其他人这么做的原因",
        HiddenNeed.GUIDED_REFLECTION: "希望对方引导自己反思，获得成长",
        HiddenNeed.SPECIFIC_PRAISE: "希望对方真诚地夸奖自己在事件中的具体行为",
        HiddenNeed.ATTENTIVE_LISTENING: "希望对方用心倾听自己的情绪宣泄",
        HiddenNeed.DEEP_EMPATHY: "希望对方深刻共情自己的感受，而不是简单的安慰",
        HiddenNeed.NOT_AT_FAULT: "认为自己没有错，希望对方也认同",
    },
}


class CharacterType(str, enum.Enum):
    """How the help-seeker behaves in conversation (RLVER's three character types)."""

    NEGATIVE = "negative"
    PASSIVE = "passive"
    AVOIDANT = "avoidant"


@dataclass(frozen=True)
class Profile:
    name: str
    traits: tuple[str, ...]
    age: int | None = None
    gender: str | None = None
    occupation: str | None = None
    speaking_style: str | None = None
    description: str | None = None


@dataclass(frozen=True)
class Scene:
    event: str
    stages: tuple[str, ...] = ()
    current_state: str | None = None


@dataclass(frozen=True)
class Reactions:
    high_mood: str | None = None
    low_mood: str | None = None
    need_met: str | None = None
    need_missed: str | None = None


FACET_TOPICS = ("people", "when", "feelings", "tried", "wants", "worries")


@dataclass(frozen=True)
class Facets:
    """What the help-seeker can tell about their story when asked, a few first-person lines
    per topic, in their own voice and language (empty tuples when the persona has none).

    Attributes:
        people: who is involved and how they relate to them.
        when: when it happened, how long it has been going on.
        feelings: how it feels.
        tried: what they already tried, and how it went.
        wants: what they would like to happen (indirectly; never the hidden need by name).
        worries: what they fear.
    """

    people: tuple[str, ...] = ()
    when: tuple[str, ...] = ()
    feelings: tuple[str, ...] = ()
    tried: tuple[str, ...] = ()
    wants: tuple[str, ...] = ()
    worries: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return any(getattr(self, topic) for topic in FACET_TOPICS)

    def lines(self, topic: str) -> tuple[str, ...]:
        """The lines of one topic (one of `FACET_TOPICS`)."""
        if topic not in FACET_TOPICS:
            raise ValueError(f"unknown facet topic {topic!r}; expected one of {FACET_TOPICS}")
        return getattr(self, topic)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Facets":
        return cls(**{topic: tuple(data.get(topic, ())) for topic in FACET_TOPICS})

    def to_dict(self) -> dict[str, list[str]]:
        """The JSON form: the topics that have lines."""
        return {topic: list(getattr(self, topic)) for topic in FACET_TOPICS if getattr(self, topic)}


@dataclass(frozen=True)
class Persona:
    """A simulated help-seeker. Everything except `id`, `language` and the opening line is
    privileged: the agent under training never sees it."""

    id: str
    language: str
    split: str
    hidden_need: HiddenNeed
    character_type: CharacterType
    profile: Profile
    scene: Scene
    reactions: Reactions = field(default_factory=Reactions)
    domain: str = "other"
    keywords: tuple[str, ...] = ()
    disclosures: tuple[str, ...] = ()
    opening_line: str | None = None
    source: str = "dialog-gym"
    facets: Facets = field(default_factory=Facets)

    @property
    def name(self) -> str:
        return self.profile.name

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Persona":
        """Build a persona from a schema-valid mapping (see `personas/schema.json`)."""
        profile = dict(data["profile"])
        profile["traits"] = tuple(profile.get("traits", ()))
        scene = dict(data["scene"])
        scene["stages"] = tuple(scene.get("stages", ()))
        return cls(
            id=data["id"],
            language=data["language"],
            split=data["split"],
            hidden_need=HiddenNeed(data["hidden_need"]),
            character_type=CharacterType(data["character_type"]),
            profile=Profile(**profile),
            scene=Scene(**scene),
            reactions=Reactions(**data.get("reactions", {})),
            domain=data.get("domain", "other"),
            keywords=tuple(data.get("keywords", ())),
            disclosures=tuple(data.get("disclosures", ())),
            opening_line=data.get("opening_line"),
            source=data.get("source", "dialog-gym"),
            facets=Facets.from_dict(data.get("facets", {})),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, the inverse of `from_dict` (lists instead of tuples, enums as str)."""
        out = asdict(self)
        out["hidden_need"] = self.hidden_need.value
        out["character_type"] = self.character_type.value
        for key in ("keywords", "disclosures"):
            out[key] = list(out[key])
        out["profile"]["traits"] = list(out["profile"]["traits"])
        out["scene"]["stages"] = list(out["scene"]["stages"])
        out["reactions"] = {k: v for k, v in out["reactions"].items() if v is not None}
        if self.facets:
            out["facets"] = self.facets.to_dict()
        else:
            del out["facets"]  # old persona files round-trip unchanged
        return out
