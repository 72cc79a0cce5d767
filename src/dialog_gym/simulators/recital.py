"""`RecitingPlanner`: the words of the v0 and v1 offline users, frozen.

It tells the persona's story in order (a reaction by fit and character type, the next
disclosure, an indirect hint in the vanilla style), whatever the agent asked: the user of
`RLVER-Empathy-v0` (rule simulator) and `-v1` (`calibrated-v1`), kept so that their episodes
and rewards stay reproducible. The v2 user (`ResponsePlanner`, `planner.py`) listens.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dialog_gym.mood import mood_bucket
from dialog_gym.personas import Persona
from dialog_gym.simulators import responses
from dialog_gym.simulators.base import Appraisal, Response
from dialog_gym.types import Message

from dialog_gym.simulators.planner import check_style


class RecitingPlanner:
    """In-character openings and answers that recite the persona's story in order.

    Arguments:
        style: `"vanilla"` (expressive; drops indirect hints towards the hidden need when a
            reply misses it) or `"challenging"` (reserved, never hints).
    """

    def __init__(self, style: str = "vanilla"):
        self.style = check_style(style)

    def open(self, persona: Persona, rng: np.random.Generator) -> str:
        if persona.opening_line:
            return persona.opening_line
        keyword = persona.keywords[0] if persona.keywords else responses.GENERIC_KEYWORD[persona.language]
        return _pick(responses.OPENERS[persona.language], rng).format(keyword=keyword)

    def respond(
        self, persona: Persona, history: Sequence[Message], reply: str, appraisal: Appraisal, *, mood: int, rng: np.random.Generator
    ) -> Response:
        """An answer for the appraisal's fit and the new mood's bucket."""
        lang = persona.language
        bucket = mood_bucket(mood)
        if bucket in ("S", "F"):
            return Response(_pick(responses.GOODBYES[lang][bucket], rng), wants_to_end=True)
        fit = appraisal.fit
        kind = persona.character_type.value
        parts = [_pick(responses.REACTIONS[lang][fit][kind], rng)]
        turn = sum(1 for m in history if m["role"] == "assistant")  # agent replies before this one
        opens_up = fit in ("met", "ok") or kind == "negative" or bucket in ("A",)
        if opens_up:
            if turn < len(persona.disclosures):
                parts.append(persona.disclosures[turn])
            else:
                keyword = persona.keywords[turn % len(persona.keywords)] if persona.keywords else responses.GENERIC_KEYWORD[lang]
                parts.append(_pick(responses.CONTINUATIONS[lang], rng).format(keyword=keyword))
        if self.style == "vanilla" and fit in ("ok", "missed") and turn >= 1:
            parts.append(_pick(responses.HINTS[lang][persona.hidden_need.value], rng))
        separator = "" if lang == "zh" else " "
        return Response(separator.join(parts))


def _pick(options: Sequence[str], rng: np.random.Generator) -> str:
    return options[int(rng.integers(len(options)))]
