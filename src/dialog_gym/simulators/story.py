"""What an offline simulated user can tell about themselves: a persona's story, by topic.

`story(persona)` gathers, once per persona, the lines the response planner answers from:
the facets (people, when, feelings, tried, wants, worries), the disclosures in order, and the
feelings the persona's own words name (to confirm or correct an agent's guess). Lines that
would name the hidden need, or read as a goodbye, are left out, so that no answer leaks the
need or ends the conversation by accident; a passive persona's lines that ask something
come last (passive characters ask no questions).

A persona without facets (an older persona file, an RLVER import) still answers: its
disclosures are sorted into topics by what they mention (a time, someone tried, a fear).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from dialog_gym.mood import is_goodbye
from dialog_gym.personas import FACET_TOPICS, CharacterType, Persona
from dialog_gym.personas.stats import states_need
from dialog_gym.simulators import responses
from dialog_gym.simulators.reading import emotion_families

# What a disclosure mentions, for personas without facets.
_DISCLOSURE_TOPICS: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] = {
    "en": (
        ("tried", re.compile(r"\bi (?:already |even )?(?:tried|called|asked|told|went|emailed|wrote|logged|checked|applied|reported|"
                             r"begged|looked|raised|complained|texted|messaged)\b", re.IGNORECASE)),
        ("worries", re.compile(r"\b(?:afraid|scared|worr\w*|what if|fear\w*|dread\w*|terrified)\b", re.IGNORECASE)),
        ("wants", re.compile(r"\bi (?:just )?(?:want|wish|need|would like|hope|'d like)\b", re.IGNORECASE)),
        ("when", re.compile(r"\b(?:yesterday|today|tonight|last (?:week|month|year|night)|ago|since|monday|tuesday|wednesday|thursday|"
                            r"friday|saturday|sunday|\d+ (?:days|weeks|months|years)|(?:days|weeks|months|years) (?:now|later)|a\.m\.|p\.m\.)\b",
                            re.IGNORECASE)),
        ("people", re.compile(r"\b(?:my (?:mum|mom|mother|dad|father|sister|brother|wife|husband|partner|son|daughter|boss|manager|"
                              r"friend|cousin|aunt|uncle|grandmother|grandfather|colleague|coworker|landlord|teacher|ex)|"
                              r"(?<=[a-z,] )[A-Z][a-z]+)\b")),
    ),
    "zh": (
        ("tried", re.compile(r"我(?:也|还|都)?(?:试过|去过|问过|找过|打过|说过|求过|报过|写过|投过)|我(?:去|找|问|打电话给|跟)[^，。]{0,8}(?:说|问|谈|商量)")),
        ("worries", re.compile(r"怕|担心|万一|不敢想")),
        ("wants", re.compile(r"我(?:就)?(?:想|希望|盼着|只求|就想)")),
        ("when", re.compile(r"昨天|今天|前天|上周|上个月|去年|那天|年前|以前|礼拜|星期|周[一二三四五六日末]|[0-9一二三四五六七八九十两]+(?:天|年|个月|周|点)")),
        ("people", re.compile(r"我(?:妈|爸|老公|老婆|女儿|儿子|姐|哥|弟|妹|婆婆|公公|领导|老板|同事|室友|男朋友|女朋友|闺蜜|朋友|老师)|[老小][王李张刘陈杨赵黄周吴]")),
    ),
}


@dataclass(frozen=True)
class Story:
    """A persona's story as the planner uses it (see the module docstring).

    Attributes:
        facts: for each facet topic, the facet lines that answer it.
        told: for each facet topic, the disclosures that mention it (a time, someone tried,
            a fear...): the answers of a persona without facets, or once the facets are said.
        disclosures: the disclosures that may be said, in order.
        facet_lines: every usable facet line, for answers that run out of their own topic.
        feelings: how often each feeling family is named in the persona's own words.
        keywords: the story's details an agent may name.
        has_facets: whether the persona has facets at all.
    """

    facts: dict[str, tuple[str, ...]]
    told: dict[str, tuple[str, ...]]
    disclosures: tuple[str, ...]
    facet_lines: tuple[str, ...]
    feelings: dict[str, int]
    keywords: tuple[str, ...]
    has_facets: bool

    def about(self, topic: str) -> tuple[str, ...]:
        """Everything that answers `topic`: its facet lines, then the disclosures about it."""
        return self.facts[topic] + self.told[topic]

    def main_feeling(self) -> str | None:
        best = max(self.feelings.items(), key=lambda item: item[1], default=(None, 0))
        return best[0] if best[1] else None


_BY_IDENTITY: dict[int, tuple[Persona, Story]] = {}


def story(persona: Persona) -> Story:
    """The persona's `Story` (computed once per persona; the same object is found without
    hashing every field of it)."""
    known = _BY_IDENTITY.get(id(persona))
    if known is not None and known[0] is persona:
        return known[1]
    found = _story(persona)
    if len(_BY_IDENTITY) >= 1024:
        _BY_IDENTITY.clear()
    _BY_IDENTITY[id(persona)] = (persona, found)  # holds the persona, so its id stays its own
    return found


@lru_cache(maxsize=1024)
def _story(persona: Persona) -> Story:
    lang = persona.language

    def usable(line: str) -> bool:
        return bool(line.strip()) and not leaks(line, persona) and not is_goodbye(line)

    def ordered(lines: tuple[str, ...]) -> tuple[str, ...]:
        kept = tuple(line for line in lines if usable(line))
        if persona.character_type is CharacterType.PASSIVE:  # passive characters ask no questions
            kept = tuple(line for line in kept if not _asks(line)) + tuple(line for line in kept if _asks(line))
        return kept

    disclosures = ordered(persona.disclosures)
    topics = [_disclosure_topic(line, lang) for line in disclosures]
    facts = {topic: ordered(persona.facets.lines(topic)) for topic in FACET_TOPICS}
    told = {topic: tuple(line for line, about in zip(disclosures, topics) if about == topic) for topic in FACET_TOPICS}
    facet_lines = tuple(line for topic in FACET_TOPICS for line in facts[topic])
    own_words = " ".join((*persona.facets.feelings, *persona.facets.worries, persona.scene.current_state or "",
                          persona.opening_line or "", *persona.disclosures))
    keywords = tuple(k for k in persona.keywords if usable(k))
    return Story(facts, told, disclosures, facet_lines, emotion_families(own_words, lang), keywords, bool(persona.facets))


def leaks(text: str, persona: Persona) -> bool:
    """Whether `text` names the persona's hidden need (its name, description or the words
    of `responses.NEED_TERMS`)."""
    if states_need(text, persona.hidden_need):
        return True
    pattern = _need_terms(persona.language, persona.hidden_need.value)
    return bool(pattern.search(text.lower()))


@lru_cache(maxsize=None)
def _need_terms(language: str, need: str) -> re.Pattern[str]:
    terms = responses.NEED_TERMS[language][need]
    if language == "zh":
        return re.compile("|".join(map(re.escape, terms)))
    return re.compile(r"\b(?:" + "|".join(re.escape(t[:-1]) + r"\w*" if t.endswith("*") else re.escape(t) + r"\b" for t in terms) + ")")


def _disclosure_topic(line: str, language: str) -> str | None:
    for topic, pattern in _DISCLOSURE_TOPICS[language]:
        if pattern.search(line):
            return topic
    return None


def _asks(line: str) -> bool:
    return "?" in line or "？" in line
