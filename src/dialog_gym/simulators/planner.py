"""Response planners: what an offline simulated user says, given the agent's reply and how it landed.

The offline simulators split a reaction in two, as the LLM simulator does: an appraisal (the
rule simulator's or a calibrated judge's) decides the mood change and a one-word fit verdict
(met / ok / missed / hurt); a planner writes the words, in the persona's language and at the
new mood. Two planners:

- `ResponsePlanner` (`"listening"`, the default) reads the reply (`reading.py`) and answers
  it from the persona's story (`story.py`): a question about the people, the when, the
  feelings, what was tried, what they want or fear gets an answer from the persona's facets;
  advice is taken up with a follow-up when it fits, or pushed back on with what the user
  already tried; a guessed feeling is confirmed or corrected; a detail the agent names is
  picked up; an off-topic reply puzzles, a dismissive one closes the user up. The story comes
  out at the pace the agent earns: a disclosure when a reply lands or asks for more, none
  after a dismissal. Avoidant and passive characters deflect when a reply misses; passive
  ones ask no questions. In the vanilla style the user drops indirect hints towards the
  hidden need (never naming it); in the challenging style never. No line is said twice in an
  episode: what was said is read back from the history.
- `RecitingPlanner` (`"reciting"`, in `recital.py`) is the planner of the v0 and v1 users,
  frozen: a reaction by fit and character type, then the next disclosure by turn, whatever
  the reply said, so that their episodes and rewards stay reproducible.

Both are pure functions of (persona, history, reply, appraisal, mood) and the seeded
generator, so that an episode is the same for the same seed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from dialog_gym.mood import mood_bucket
from dialog_gym.personas import HiddenNeed, Persona
from dialog_gym.simulators import responses
from dialog_gym.simulators.analysis import EN_WORD, content_units
from dialog_gym.simulators.base import Appraisal, Response
from dialog_gym.simulators.reading import Question, ReplyReading, is_dismissive, is_open_question, said_words, sentences
from dialog_gym.simulators.story import Story, story
from dialog_gym.types import Message

if TYPE_CHECKING:
    from dialog_gym.simulators.recital import RecitingPlanner

STYLES = ("vanilla", "challenging")
PLANNERS = ("listening", "reciting")

# A reply the judge found hurtful closes the user up (no answers, no story) from this change
# down, or when it dismisses them; above it, they answer grudgingly.
_CLOSES_UP = -6
# When a topic has nothing left, the nearest topic answers instead.
_RELATED = {"feelings": ("worries",), "worries": ("feelings",), "wants": ("worries",), "people": (), "when": ()}
# Words of a suggestion too generic to say what it suggests.
_GENERIC = {
    "en": frozenset(
        "maybe could should would might consider considered considering trying tried talk talking speak speaking someone something "
        "think thinking help helps first step steps next honest conversation about them with what your this that have just really "
        "also then things thing time some like make sure calm calmly little tomorrow week today option options idea plan "
        "ask asking tell telling call calling write writing message send talk go going get getting find look need want feel know "
        "take give keep people person directly exactly short more less what's matters most deal only other another "
        "someone else again today tomorrow week while cover".split()
    ),
    "zh": frozenset("试试 试着 可以 建议 考虑 一下 或许 也许 不如 要不 觉得 办法 计划 第一 一步 下一 首先 然后 一次 这周 明天".split()),
}
_EN_STEM = re.compile(r"(?:ing|ed|es|s)$")
_OTHERS = {"en": re.compile(r"\b(?:he|she|they|them|him|her|his|their)\b"), "zh": re.compile(r"他|她")}


def check_style(style: str) -> str:
    if style not in STYLES:
        raise ValueError(f"unknown simulator style {style!r}; expected one of {STYLES}")
    return style


class ResponsePlanner:
    """The listening planner: in-character answers to what the agent's reply says.

    Arguments:
        style: `"vanilla"` (expressive; drops indirect hints towards the hidden need when a
            reply misses it) or `"challenging"` (reserved, never hints).
    """

    name = "listening"

    def __init__(self, style: str = "vanilla"):
        self.style = check_style(style)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(style={self.style!r})"

    def open(self, persona: Persona, rng: np.random.Generator) -> str:
        story(persona)  # read the persona's story once, when the episode starts
        return _open(persona, rng)

    def respond(
        self, persona: Persona, history: Sequence[Message], reply: str, appraisal: Appraisal, *, mood: int, rng: np.random.Generator
    ) -> Response:
        """The user's answer to `reply`, given the appraisal's fit and the new mood."""
        return _Turn(self.style, persona, history, reply, appraisal, mood, rng).respond()


class _Turn:
    """One answer being written: the state read from the history, and the parts so far."""

    def __init__(
        self, style: str, persona: Persona, history: Sequence[Message], reply: str, appraisal: Appraisal, mood: int,
        rng: np.random.Generator,
    ):
        self.style, self.persona, self.mood = style, persona, mood
        self.draws = _Draws(int(rng.integers(1 << 62)))  # one draw from the episode's generator per answer
        self.lang = persona.language
        self.kind = persona.character_type.value
        self.story: Story = story(persona)
        user_lines = tuple(m["content"] for m in history if m["role"] == "user")
        agent_lines = [m["content"] for m in history if m["role"] == "assistant"]
        said = _said(user_lines, self.lang)
        self.said = said.text
        self.said_sentences = set(said.sentences)
        self.said_units = list(said.units)
        self.last_user = user_lines[-1] if user_lines else ""
        self.turn = len(agent_lines)  # agent replies before this one
        self.bucket = mood_bucket(mood)
        self.fit = appraisal.fit or _fit_of(appraisal.delta)
        if self.fit == "hurt" and appraisal.delta > _CLOSES_UP:
            self.fit = "missed"  # a reply that only mildly hurt gets a grudging answer, not a wall
        self.reading: ReplyReading = ReplyReading(reply, self.lang, self.story.keywords, said.words)
        self.previous_reply = agent_lines[-1] if agent_lines else None
        self.parts: list[str] = []
        if self.fit == "met" or (self.bucket == "A" and self.fit == "ok"):
            self.tone = "warm"
        elif self.fit == "missed":
            self.tone = "grudging"
        else:
            self.tone = "plain"

    # --- the plan --------------------------------------------------------------------

    def respond(self) -> Response:
        if self.bucket in ("S", "F"):
            goodbye = self.pick(responses.GOODBYES[self.lang][self.bucket]) or responses.GOODBYES[self.lang][self.bucket][0]
            return Response(goodbye, wants_to_end=True)
        r = self.reading
        closed = self.fit == "hurt" or (self.fit != "met" and r.dismissive)
        if closed:
            self.react("hurt" if self.fit == "hurt" else "missed")
            if r.questions:
                self.add(self.pick(responses.REFUSALS[self.lang][self.kind]))
        elif r.off_topic:
            self.add(self.pick(responses.CONFUSED[self.lang][self.kind], **self.keyword_values()))
        else:
            self.answer_reply()
        if not self.parts:
            self.fallback()
        return Response(("" if self.lang == "zh" else " ").join(self.parts))

    def answer_reply(self) -> None:
        r = self.reading
        questions = list(r.questions)
        if r.guess is not None:
            self.feeling(*r.guess)  # says how it feels: no second answer about feelings
            questions = [q for q in questions if r.guess[1] not in q.text.lower() and q.topic != "feelings"]
        if len(questions) > 2:
            self.add(self.pick(responses.OVERWHELMED[self.lang][self.kind]))
            questions = questions[:1]
        suggested = [q for q in questions if q.topic == "tried" and _suggests(q.text, self.lang)]
        if r.advice or suggested:
            self.advice(r.advice or suggested[0].text, asked=bool(suggested))
            questions = [q for q in questions if q not in suggested]
        asked = []
        for question in questions:  # one answer per topic, two at most
            if question.topic not in [q.topic for q in asked] and len(asked) < 2:
                asked.append(question)
        for question in asked:
            self.add(self.answer(question))
        if not self.parts:
            self.react(self.fit)
            if not (r.details and self.pick_up(r.details)) and self.opens():
                self.disclose()
        elif self.fit == "met" and len(self.parts) < 3 and self.opens():
            self.disclose()  # a reply that lands draws out more of the story
        if self.style == "vanilla" and self.fit in ("ok", "missed") and self.turn >= 1 and len(self.parts) <= 2:
            self.hint()

    def opens(self) -> bool:
        """Whether the user tells the next piece of the story: when the reply landed, the mood
        is high, or (negative characters) to complain; not right after a dismissal."""
        if self.fit != "met" and self.previous_reply is not None and is_dismissive(self.previous_reply, self.lang):
            return False
        return self.fit in ("met", "ok") or self.bucket == "A" or (self.kind == "negative" and self.fit == "missed")

    # --- the moves -------------------------------------------------------------------

    def react(self, fit: str) -> None:
        self.add(self.pick(_reactions(self.lang, fit, self.kind)))

    def answer(self, question: Question) -> str | None:
        topic = "what" if question.topic == "other" else question.topic
        if self.deflects(topic):
            return self.pick(responses.DEFLECTIONS[self.lang][self.kind])
        if topic == "wants" and self.style == "challenging" and self.tone != "warm":
            return self.pick(responses.DEFLECTIONS[self.lang]["passive"])  # reserved: no hint, even when asked
        if topic == "opinion":
            about_others = bool(_OTHERS[self.lang].search(question.text.lower()))
            line = self.fresh(self.story.about("people") if about_others else self.story.about("feelings") + self.story.about("wants"))
            lead = self.pick(responses.OPINION_LEADS[self.lang])
            return self.join(lead, line or self.next_disclosure() or "") or None
        known = self.story.disclosures if topic == "what" else self.story.about(topic)
        if topic == "what":
            line = self.next_disclosure()
        else:
            line = self.relevant(self.story.facts[topic], question.text) or self.relevant(self.story.told[topic], question.text)
        for related in _RELATED.get(topic, ()):
            line = line or self.fresh(self.story.about(related))
        if line is None and not known:  # nothing on this topic in the story: tell the story instead
            line = self.next_disclosure() or self.fresh(self.story.facet_lines)
        if line is None:
            if known:  # all of it said already
                return self.pick(responses.EXHAUSTED[self.lang])
            return self.continuation()
        return self.join(self.pick(responses.ANSWER_LEADS[self.lang][self.tone][self.kind]), line)

    def deflects(self, topic: str) -> bool:
        """Avoidant characters dodge feelings and fears early on when a reply misses, and
        anything at a very low mood; passive ones go blank at a very low mood. Never twice in
        a row: asked again, they answer."""
        if self.fit != "missed" or any(line in self.last_user for line in responses.DEFLECTIONS[self.lang][self.kind]):
            return False
        if self.kind == "avoidant":
            return (topic in ("feelings", "worries") and self.turn < 4) or self.mood < 15
        return self.kind == "passive" and self.mood < 12

    def advice(self, suggestion: str, *, asked: bool) -> None:
        """Advice (or "have you tried ...?"): what the user already tried, taken up, or pushed back on."""
        tried = self.story.about("tried")
        matches = _matches(suggestion, tried, self.lang, self.story.keywords)
        if matches:
            new = next((line for line in matches if self.new_fact(line)), None)
            if new is None:  # said already: say so, and what else was tried
                self.add(self.pick(responses.TOLD_YOU_TRIED[self.lang]))
                self.add(self.fresh(tried))
            else:
                self.add(self.join(self.pick(responses.TRIED_THAT[self.lang][self.kind]), new))
            return
        fits = self.fit == "met" or (self.fit == "ok" and self.persona.hidden_need is HiddenNeed.PRACTICAL_ADVICE)
        if fits:
            self.add(self.pick(responses.TAKE_UPS[self.lang][self.kind]))
            self.add(self.pick(responses.FOLLOW_UPS[self.lang][self.kind]))
            return
        line = self.fresh(tried)
        if asked:  # "have you tried X?": not X, but here is what I did try
            if line is None and tried:  # all of it said already
                self.add(self.pick(responses.EXHAUSTED[self.lang]))
            else:
                self.add(self.join(self.pick(responses.NOT_TRIED[self.lang]), line) if line else self.pick(responses.NOT_TRIED[self.lang]))
        elif line is not None:
            self.add(self.join(self.pick(responses.PUSHBACK_LEADS[self.lang][self.kind]), line))
        else:
            self.add(self.pick(responses.PUSHBACKS[self.lang][self.kind]))

    def feeling(self, family: str, word: str) -> None:
        """Confirm a guessed feeling the persona's own words bear out, or correct it; then say how it feels."""
        lang = self.lang
        true = self.story.main_feeling()
        if self.story.feelings.get(family):
            self.add(self.pick(responses.CONFIRMS[lang], word=word))
        elif true is not None and true != family:
            self.add(self.pick(responses.CORRECTIONS[lang], guess=word, true=responses.FEELING_WORDS[lang][true]))
        else:
            self.add(self.pick(responses.CORRECTIONS_UNKNOWN[lang], guess=word))
        if self.fit != "missed" or self.kind == "negative":
            self.add(self.fresh(self.story.facts["feelings"]) or self.fresh(self.story.told["feelings"]))

    def pick_up(self, details: tuple[str, ...]) -> bool:
        """Pick up a detail the agent named, with a line of the story that mentions it."""
        pool = self.story.facet_lines + self.story.disclosures
        for detail in details:
            key = detail.lower()
            line = self.fresh(tuple(line for line in pool if key in line.lower()))
            if line is not None:
                lead = self.pick(responses.PICKUP_LEADS[self.lang], detail=detail, the_detail=_the(detail, self.lang))
                self.add(self.join(lead, line))
                return True
        return False

    def disclose(self) -> None:
        line = self.next_disclosure()
        if line is None:
            line = self.continuation()
        self.add(line)

    def hint(self) -> None:
        """An indirect hint towards the hidden need (vanilla style), once every other turn:
        something the persona wants, or a line of the need's hints."""
        need = self.persona.hidden_need.value
        hints = responses.HINTS[self.lang][need] + responses.MORE_HINTS[self.lang][need]
        wants = self.story.facts["wants"]
        if any(h in self.last_user for h in hints) or any(w in self.last_user for w in wants):
            return
        unsaid_wants = [w for w in wants if self.unsaid(w)]
        volunteered = self.fresh(unsaid_wants) if len(unsaid_wants) > 1 else None  # one is kept for when they are asked
        self.add(volunteered or self.pick(hints))

    def fallback(self) -> None:
        """Something new to say when every planned part has been said before."""
        self.add(
            self.next_disclosure()
            or self.fresh(self.story.facet_lines)
            or self.continuation()
            or self.pick(responses.EXHAUSTED[self.lang])
            or self.pick(_reactions(self.lang, self.fit, self.kind))
        )
        if not self.parts:  # a very long episode that has used every line: repeat a short one
            self.parts.append(responses.MORE_REACTIONS[self.lang][self.fit][self.kind][0])

    # --- choosing lines that have not been said ---------------------------------------

    def unsaid(self, line: str) -> bool:
        """Neither the line nor any of its sentences has been said in this episode."""
        if line in self.said:
            return False
        for part in self.parts:
            if line in part:
                return False
        return self.said_sentences.isdisjoint(_sentence_keys(line, self.lang))

    def new_fact(self, line: str) -> bool:
        """A line of the persona's story neither said nor said in other words (half its
        content words in one earlier message: facets and disclosures can overlap)."""
        if not self.unsaid(line):
            return False
        units = content_units(line, self.lang)
        if len(units) < 3:
            return True
        return all(len(units & earlier) * 2 < len(units) for earlier in self.said_units)

    def fresh(self, lines: Sequence[str]) -> str | None:
        """One of `lines` (persona facts) not said yet, chosen with the generator."""
        return self._first(lines, lambda line: line if self.new_fact(line) else None)

    def relevant(self, lines: Sequence[str], question: str) -> str | None:
        """The unsaid line that shares most words with the question ("who drives you?" gets the
        cousin who drives), any unsaid line when none shares a word."""
        asked = _stems(question, self.lang)
        scored = [(len(asked & _stems(line, self.lang)), line) for line in lines if self.new_fact(line)]
        if not scored:
            return None
        best = max(score for score, _ in scored)
        return self._first([line for score, line in scored if score == best], lambda line: line)

    def pick(self, options: Sequence[str], **values: str) -> str | None:
        """One phrasing of `options` not said yet ("" always counts as new), formatted with
        `values`; the lines with a question mark are left to those who ask questions."""
        passive = self.kind == "passive"

        def usable(option: str) -> str | None:
            line = _fill(option, values)
            if passive and ("?" in line or "？" in line):
                return None
            return line if line == "" or self.unsaid(line) else None

        return self._first(options, usable)

    def _first(self, options: Sequence[str], usable: Callable[[str], str | None]) -> str | None:
        """The first usable option, scanning from a place the generator draws (any option may
        come first), so that only as many options are checked as it takes."""
        n = len(options)
        start = self.draws.below(n) if n > 1 else 0
        for k in range(n):
            line = usable(options[(start + k) % n])
            if line is not None:
                return line
        return None

    def next_disclosure(self) -> str | None:
        return next((line for line in self.story.disclosures if self.new_fact(line)), None)

    def add(self, part: str | None) -> None:
        if part:
            self.parts.append(part)
            self.said_sentences |= _sentence_keys(part, self.lang)
            self.said_units.append(content_units(part, self.lang))

    def join(self, lead: str | None, line: str) -> str:
        if not lead:
            return line
        return f"{lead}{line}" if self.lang == "zh" else f"{lead} {line}"

    def continuation(self) -> str | None:
        """A line about a detail of the story (or about it all, when the persona names none)."""
        if not self.story.keywords:
            return self.pick(responses.GENERIC_CONTINUATIONS[self.lang])
        return self.pick(responses.LISTENING_CONTINUATIONS[self.lang], **self.keyword_values()) or self.pick(
            responses.GENERIC_CONTINUATIONS[self.lang]
        )

    def keyword_values(self) -> dict[str, str]:
        keywords = self.story.keywords
        keyword = keywords[self.turn % len(keywords)] if keywords else responses.GENERIC_KEYWORD[self.lang]
        return {"keyword": keyword, "the_keyword": _the(keyword, self.lang)}


class _Draws:
    """Cheap uniform draws for one answer, from one number of the episode's generator (a
    64-bit linear congruential sequence: plenty for choosing among a few phrasings)."""

    _MASK = (1 << 64) - 1

    def __init__(self, seed: int):
        self.state = seed

    def below(self, n: int) -> int:
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) & self._MASK
        return ((self.state >> 32) * n) >> 32


def make_planner(planner: "str | ResponsePlanner | RecitingPlanner", style: str) -> "ResponsePlanner | RecitingPlanner":
    """A planner by name (`"listening"` or `"reciting"`), or an instance passed through."""
    if not isinstance(planner, str):
        return planner
    if planner == "listening":
        return ResponsePlanner(style)
    if planner == "reciting":
        from dialog_gym.simulators.recital import RecitingPlanner  # recital.py imports this module

        return RecitingPlanner(style)
    raise ValueError(f"unknown response planner {planner!r}; expected one of {PLANNERS} or a planner instance")


def _open(persona: Persona, rng: np.random.Generator) -> str:
    if persona.opening_line:
        return persona.opening_line
    keyword = persona.keywords[0] if persona.keywords else responses.GENERIC_KEYWORD[persona.language]
    return _choice(responses.OPENERS[persona.language], rng).format(keyword=keyword)


def _choice(options: Sequence[str], rng: np.random.Generator) -> str:
    return options[int(rng.integers(len(options)))]


@lru_cache(maxsize=None)
def _reactions(language: str, fit: str, kind: str) -> tuple[str, ...]:
    both = responses.REACTIONS[language][fit][kind] + responses.MORE_REACTIONS[language][fit][kind]
    return tuple(line for line in both if line not in responses.READ_AS_PLEASED)


def _fit_of(delta: int) -> str:
    """A fit verdict from a change alone, for appraisals that give none."""
    return "met" if delta >= 4 else "ok" if delta >= 0 else "missed" if delta > -4 else "hurt"


def _fill(template: str, values: dict[str, str]) -> str:
    """`template` with `{name}` and `{Name}` (capitalised) replaced by `values`."""
    if not values or "{" not in template:
        return template
    table = {**values, **{k[:1].upper() + k[1:]: v[:1].upper() + v[1:] for k, v in values.items()}}
    return template.format_map(table)


def _the(detail: str, language: str) -> str:
    """A detail as English needs it after a preposition: "the rostering software", "Dr. Hamid"."""
    if language == "zh" or detail[:1].isupper() or detail.lower().startswith(("the ", "my ", "his ", "her ", "their ", "our ", "a ", "an ")):
        return detail
    return f"the {detail}"


@lru_cache(maxsize=16384)
def _stems(text: str, language: str) -> frozenset[str]:
    units = content_units(text, language)
    if language == "zh":
        return frozenset(units) - _GENERIC["zh"]
    return frozenset(_EN_STEM.sub("", w) for w in units if w not in _GENERIC["en"])


def _suggests(question: str, language: str) -> bool:
    """A "have you tried X?" question (a suggestion), not an open "what have you tried?"."""
    return not is_open_question(question, language) and bool(_stems(question, language))


def _matches(suggestion: str, lines: Sequence[str], language: str, keywords: Sequence[str] = ()) -> list[str]:
    """The lines (things the user tried) that `suggestion` suggests again, best first: those
    sharing two words with it (three pairs of characters in Chinese), a word of the story's
    details ("the bank", "the transmission") counting twice."""
    wanted = _stems(suggestion, language)
    if not wanted:
        return []
    details = frozenset().union(*(_stems(k, language) for k in keywords)) if keywords else frozenset()
    need = 3 if language == "zh" else 2
    scored = []
    for k, line in enumerate(lines):
        shared = wanted & _stems(line, language)
        score = len(shared) + (1 if shared & details else 0)
        if score >= need:
            scored.append((-score, k, line))
    return [line for _, _, line in sorted(scored)]


@dataclass(frozen=True)
class _Said:
    """What the user has said in an episode, as the planner checks it."""

    text: str  # every message, one per line
    sentences: frozenset[str]  # `_sentence_keys` of every message
    units: tuple[frozenset[str], ...]  # content words of each message
    words: frozenset[str]  # `reading.said_words` of every message


@lru_cache(maxsize=4096)
def _said(lines: tuple[str, ...], language: str) -> _Said:
    """Built from the state one message shorter (cached: the previous answer's), so that an
    answer reads only the newest message, not the whole episode."""
    if not lines:
        return _Said("", frozenset(), (), frozenset())
    before, line = _said(lines[:-1], language), lines[-1]
    return _Said(
        f"{before.text}\n{line}" if before.text else line,
        before.sentences | _sentence_keys(line, language),
        (*before.units, content_units(line, language)),
        before.words | said_words((line,), language),
    )


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=16384)
def _sentence_keys(text: str, language: str) -> frozenset[str]:
    """The sentences of `text` long enough to count as a line said (3+ English words, 4+
    Chinese characters), normalised."""
    keys = set()
    for sentence in sentences(text, language):
        key = _SPACES.sub(" ", sentence.lower()).strip(" .!?。！？…,，")
        if (len(_CJK.findall(key)) >= 4) if language == "zh" else (len(EN_WORD.findall(key)) >= 3):
            keys.add(key)
    return frozenset(keys)


__all__ = ["PLANNERS", "STYLES", "ResponsePlanner", "check_style", "make_planner"]
