"""`CalibratedSimulator`: the offline user simulator with a judge fitted on an LLM judge.

The mood change comes from a `CalibratedJudge` (a linear model fitted on dialogues that an
LLM user simulator scored; the bundled one on SAGE's DeepSeek-V3 judge), explained by the
features that moved it most; the words from the offline `ResponsePlanner`, as for the rule
simulator.
Around the learned model stand the guards that recorded LLM dialogues cannot teach, because
LLM agents (almost) never write that way: noise and gibberish feel very bad; repeating
oneself verbatim, parroting, pasting the user's message back, dense stock phrases,
answering in another language (or, in part, talking to the user in it) and exclamation spam
cost what they cost in the rule simulator. Opt-in, a language model's reading (`SenseReader`)
withholds part of what the judge pays for taking up the user's words where the reply says
nothing about them (a keyword salad), and another (`StanceReader`) places a reply it reads as
unkind, which the judge's lexicons and n-grams missed, among the unkind ones.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dialog_gym.personas import Persona
from dialog_gym.simulators.base import Appraisal
from dialog_gym.simulators.judge import DEFAULT_JUDGE, CalibratedJudge, explain
from dialog_gym.simulators.judge_features import JudgeFeatures
from dialog_gym.simulators.judge_knowledge import placed_as, prior_parts, unkind_act
from dialog_gym.simulators.analysis import ReplyFeatures, degenerate_reply, misuse_costs
from dialog_gym.simulators.offline import OfflineSimulator, planner_name
from dialog_gym.simulators.planner import ResponsePlanner
from dialog_gym.simulators.recital import RecitingPlanner
from dialog_gym.simulators.sense import SenseReader
from dialog_gym.simulators.stance import StanceReader
from dialog_gym.types import Message

# Exclamation marks per 100 words beyond which they read as spam: in the recorded SAGE
# replies 99 % stay under ~3.6, and the densest reaches ~12.
_EXCLAMATION_SPAM_PER_100_WORDS = 8.0
# A reply "pastes" the user's message when one verbatim run covers this share of it.
_PASTE_SHARE, _PASTE_MIN_CHARS = 0.6, 12
_SPACES = re.compile(r"\s+")
# The response plans' verdicts, by change.
_MET, _OK, _HURT = 4, 0, -4
# Of the prior's pay for taking up the user's words, the share a reply that says nothing about
# them loses (`SenseReader`): a third is kept, as for words quoted back.
_SENSELESS_SHARE = 2 / 3
_UPTAKE_PARTS = ("uptake", "uptake_last")


class CalibratedSimulator(OfflineSimulator):
    """Offline, deterministic user simulator whose appraisal is a calibrated judge.

    Arguments:
        style: `"vanilla"` or `"challenging"`, as for `RuleSimulator`. The recorded judge is
            SAGE's vanilla one; `"challenging"` scales gains by 0.75 and losses by 1.25 (not
            calibrated: no recorded challenging judge exists here).
        judge: a `CalibratedJudge`, a judge file (`dialog-gym calibrate --out FILE`), or a
            bundled judge's name (default `"sage-deepseek-v3-v2"`; `"sage-deepseek-v3"` is v1's).
        planner: what writes the user's words: `"listening"` (default, the `ResponsePlanner`:
            it answers what the reply says), `"reciting"` (the frozen `RecitingPlanner`, which
            the v1 simulator `"calibrated-v1"` keeps) or a planner instance.
        sense: opt-in, a `SenseReader` or its model (`"smollm2"`, a model folder or a
            `.gguf` file): where the reply takes up the user's words but says nothing about
            them (a keyword salad), up to two thirds of the judge prior's pay for taking them
            up is withheld. It runs a language model on each reply that takes up two or more of
            the user's words (SmolLM2 on two CPU cores: 0.2-0.7 s in English, up to about 4 s
            in Chinese). Default None: off.
        stance: opt-in, a `StanceReader` or its model (`"smollm2"`, a model folder or a
            `.gguf` file of it): a reply the judge does not read as unkind that the reader
            reads as unkind with confidence is placed within that act's band, below every
            kind reply. It runs a language model on every reply (SmolLM2's first 16 layers
            on two CPU cores: 0.1-0.3 s in English, 0.2-0.4 s in Chinese). Default None: off.
    """

    name = "calibrated"

    def __init__(
        self, style: str = "vanilla", judge: "str | Path | CalibratedJudge" = DEFAULT_JUDGE,
        planner: "str | ResponsePlanner | RecitingPlanner | None" = None, sense: "str | Path | SenseReader | None" = None,
        stance: "str | Path | StanceReader | None" = None,
    ):
        super().__init__(style, planner)
        self.judge = judge if isinstance(judge, CalibratedJudge) else CalibratedJudge.load(judge)
        self.sense = sense if sense is None or isinstance(sense, SenseReader) else SenseReader(sense)
        self.stance = stance if stance is None or isinstance(stance, StanceReader) else StanceReader(stance)

    def __repr__(self) -> str:
        readers = "".join(f", {name}={reader!r}" for name, reader in (("sense", self.sense), ("stance", self.stance)) if reader is not None)
        return f"CalibratedSimulator(style={self.style!r}, judge={self.judge.name!r}, planner={planner_name(self.planner)!r}{readers})"

    def identity(self) -> dict[str, Any]:
        identity = {
            "simulator": "calibrated", "style": self.style, "judge": self.judge.name, "judge_fingerprint": self.judge.fingerprint,
            "planner": planner_name(self.planner),
        }
        if self.sense is not None:
            identity["sense"] = self.sense.identity()
        if self.stance is not None:
            identity["stance"] = self.stance.identity()
        return identity

    def judge_reply(self, persona: Persona, history: Sequence[Message], reply: str) -> Appraisal:
        features = self.judge.features(persona, history, reply)
        degenerate = degenerate_reply(features.form, features.language, lenient=True, telegraphic=features.version >= 2)
        if degenerate is not None:
            return degenerate
        score = self.judge.score_features(features, persona.hidden_need.value)
        partly = features.other_part is not None and features.other_part.prose  # says something in the other language, in part
        costs = misuse_costs(features.form, features.language, features.language != persona.language, lenient=True, partly=partly)
        costs += _exclamation_spam(features.form, features.words)
        costs += _pasted_message(reply, features.texts["user"])
        if self.sense is not None:
            costs += self._senseless_uptake(features, history, reply, persona.hidden_need.value)
        change = score.change
        if self.stance is not None:
            change, stance_notes = self._read_stance(features, history, reply, change)
            costs += stance_notes
        if self.style == "challenging":
            change *= 0.75 if change > 0 else 1.25
        penalty = sum(cost for cost, _ in costs)
        delta = int(round(change - penalty))
        if delta >= _MET:
            fit = "met"
        elif delta <= _HURT or penalty >= 8:
            fit = "hurt"
        else:
            fit = "ok" if delta >= _OK else "missed"
        reasoning = " ".join([explain(score), *(note for _, note in costs)])
        detail = {
            "change": max(-25.0, min(20.0, change - penalty)),
            "judge": self.judge.name,
            "judge_change": round(score.change, 3),
            "contributions": [
                {"feature": c.feature, "words": c.words, "value": round(c.value, 3), "examples": list(c.examples)}
                for c in score.top(5)
            ],
            "guards": [{"cost": cost, "note": note} for cost, note in costs],
        }
        return Appraisal(max(-25, min(20, delta)), fit, reasoning, detail=detail)

    def _senseless_uptake(self, features: JudgeFeatures, history: Sequence[Message], reply: str, need: str) -> list[tuple[float, str]]:
        """What the judge's prior paid for taking up the user's words, in part, where the
        `SenseReader` reads that the reply says nothing about them."""
        paid = sum(prior_parts(features, need).get(part, 0.0) for part in _UPTAKE_PARTS)
        if paid <= 0:
            return []
        reading = self.sense.read(history, reply, features.language)
        cost = round(self.judge.gain * paid * _SENSELESS_SHARE * (1.0 - reading.keeps), 3)
        if cost <= 0:
            return []
        return [(cost, "It names things I said, but says nothing about them.")]

    def _read_stance(self, features: JudgeFeatures, history: Sequence[Message], reply: str, change: float) -> tuple[float, list[tuple[float, str]]]:
        """`change`, placed within an unkind act's band where the `StanceReader` reads the
        reply as that act with confidence and the judge did not read it as unkind (a note
        says so, at no further cost)."""
        if features.version < 2 or unkind_act(features) is not None:
            return change, []
        reading = self.stance.read(history, reply, features.language)
        if reading is None or reading.act is None:
            return change, []
        return placed_as(change, reading.act, self.judge.change_range), [(0.0, _STANCE_NOTES[reading.act])]


_STANCE_NOTES = {
    "blame": "Underneath, it puts the blame on me.",
    "dismiss": "Underneath, it brushes off what I feel.",
    "lecture": "Underneath, it lectures me.",
}


def _pasted_message(reply: str, message: str) -> list[tuple[float, str]]:
    """A cost when the reply pastes most of the user's last message back verbatim (a learned
    judge likes its words picked up; 5 of SAGE's 4,789 recorded replies paste like this)."""
    message, reply = _SPACES.sub(" ", message.strip()), _SPACES.sub(" ", reply.strip())
    need = math.ceil(_PASTE_SHARE * len(message))
    if len(message) < _PASTE_MIN_CHARS or len(reply) < need:
        return []
    # A common run of `need` characters holds one of these blocks whole: where none occurs in
    # the reply (almost always), the quadratic match is skipped.
    block = (need + 1) // 2
    if not any(message[i : i + block] in reply for i in range(0, len(message) - block + 1, block)):
        return []
    match = difflib.SequenceMatcher(None, message, reply, autojunk=False).find_longest_match(0, len(message), 0, len(reply))
    if match.size >= _PASTE_SHARE * len(message):
        return [(6.0, "It pastes my own message back at me; it feels mechanical.")]
    return []


def _exclamation_spam(form: ReplyFeatures, words: float) -> list[tuple[float, str]]:
    if form.exclamations >= 3 and 100 * form.exclamations / max(1.0, words) > _EXCLAMATION_SPAM_PER_100_WORDS:
        return [(float(form.exclamations), "All the exclamation marks feel forced.")]
    return []
