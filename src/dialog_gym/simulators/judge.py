"""`CalibratedJudge`: a linear appraisal model fitted on dialogues that an LLM judge scored.

A recorded LLM user simulator (SAGE's DeepSeek-V3, or your own through `dialog-gym
calibrate`) moved its mood after every agent reply. The calibrated judge learns that change
from `judge_features` (named features shared by English and Chinese, plus hashed n-grams of
the reply, its first sentence and the user's last two messages) with ridge regression, and
predicts

    change = gain * (intercept + named weights . standardised features + n-gram weights)

clipped to the range the recorded judge used. `gain` is the slope of the recorded change on
out-of-fold predictions (0.93 for the bundled judge), so that summed changes (the final
mood, the reward) keep the recorded scale.

Judges are small JSON files (`simulators/judges/*.json`): one model per language. A
language without recorded dialogues gets a *tied* model: the named features only, fitted on
the other language's dialogues, so that the same cue families, forms and openers move the
mood the same way in both languages.

A judge file names the feature version it was fitted on. Version 1 is the v1 judge
(`sage-deepseek-v3`). Version 2 (`sage-deepseek-v3-v2`, the default) reads how the reply fits
the conversation and its speech acts, scales the reply's n-grams by how much of the user's
it takes up, caps what its form features may cost together (`FITTED_FORM_CAP`), and adds
what `judge_knowledge` knows: the prior, and the ladder that puts unkind acts below every
other reply, the worse act lower. Fitting is in `judge_fit`,
explanations in `judge_explain`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from dialog_gym.personas import Persona
from dialog_gym.simulators.judge_explain import (
    _TEXT_GROUPS,
    CONTEXT_GROUPS,
    CONTEXT_TEXTS,
    Contribution,
    JudgeScore,
    _grouping,
    _readable,
    describe_feature,
    describe_name,
    explain,
    feature_group,
    is_context_feature,
)
from dialog_gym.simulators.judge_features import (
    FEATURE_VERSIONS, JudgeFeatures, gram_buckets, gram_text, judge_features, reading_tables_digest,
)
from dialog_gym.simulators.judge_file_checks import check_judge_dict
from dialog_gym.simulators.judge_knowledge import is_form_cost, placed, prior_parts
from dialog_gym.types import Message

JUDGE_FORMAT = "dialog-gym-judge"
JUDGE_FORMAT_VERSION = 1
BUNDLED_JUDGES = Path(__file__).parent / "judges"
DEFAULT_JUDGE = "sage-deepseek-v3-v2"
# Version 2: the recorded judge's preference for replies near 100 words is mostly one terse,
# low-rated model's (o1); a shorter reply loses at most this many standard deviations of it.
BREVITY_FLOOR = 0.25
# Version 2: the fitted model's form features (formatting, decoration, length past 100 words)
# together cost at most this many mood points: form saturates.
FITTED_FORM_CAP = 3.0
V1_JUDGE = "sage-deepseek-v3"


class JudgeFileError(ValueError):
    """A judge file that cannot be read; names the file and what is wrong."""


# Each text's n-grams hash into a table of their own (a different seed per text).
_NAMESPACES = {"reply": 0x5EED_0001, "opener": 0x5EED_0003, "user": 0x5EED_0002, "earlier": 0x5EED_0004}


def _bits(table: np.ndarray) -> int:
    return int(len(table)).bit_length() - 1


@dataclass(frozen=True)
class LinearModel:
    """The weights of one language.

    Attributes:
        names, mean, scale, low, high, weights: named features, their standardisation, the
            range seen in fitting (inputs are clipped to it) and their weights.
        intercept: the predicted change of an average reply.
        gram_weight: the length of every text's n-gram vector (hashed, binary, normalised).
        grams: for each text with n-grams (`"reply"`, `"opener"`, `"user"`, `"earlier"`),
            weights per hashed bucket; empty in a tied model.
        tied_from: the language whose dialogues fitted a tied model, else None.
        gram_gate: the reply's n-grams weigh `features.gram_gate` (how much of the user's it
            takes up), in fitting and prediction alike (feature version 2).
        z_cap: standardised features are capped at +-z_cap, so that a feature rare in fitting
            cannot weigh tens of standard deviations (feature version 2; 0: no cap).
        familiar: the prediction shrinks toward `center` by `features.familiarity` (version 2).
        steady_context: where the conversation is (the turn, the user's messages:
            `is_context_feature`, and the user's n-grams) is not shrunk with the reply's
            familiarity (version 2): how familiar a reply is says nothing about what it
            answers.
        trust: the prediction is bounded to +-trust mood points (version 2; 0: unbounded).
        center: what an unfamiliar reply's share of the prediction shrinks toward: a share
            (`FitOptions.center_share`) of the model's mean prediction of it (under
            `steady_context`, the reply's share alone) on the recorded replies it was fitted
            on. The prior alone is no calibrated judgement (it rates the average recorded reply
            3.3 points above its recorded change); shrinking all the way to the mean would cost
            short replies more than the recorded judge did within each agent model.
    """

    names: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    low: np.ndarray
    high: np.ndarray
    weights: np.ndarray
    intercept: float
    gram_weight: float = 0.0
    grams: dict[str, np.ndarray] = field(default_factory=dict)
    tied_from: str | None = None
    gram_gate: bool = False
    z_cap: float = 0.0
    familiar: bool = False
    steady_context: bool = False
    trust: float = 0.0
    center: float = 0.0

    @cached_property
    def index(self) -> dict[str, int]:
        return {name: j for j, name in enumerate(self.names)}

    @cached_property
    def context_mask(self) -> np.ndarray:
        """Which named features say what the conversation is, not what the reply does
        (`is_context_feature`); none unless `steady_context`."""
        return np.array([self.steady_context and is_context_feature(name) for name in self.names], dtype=bool)

    def is_context_text(self, key: str) -> bool:
        """Text `key`'s n-grams are the conversation's (the user's messages), under `steady_context`."""
        return self.steady_context and key in CONTEXT_TEXTS

    @cached_property
    def form_mask(self) -> np.ndarray:
        """Which named features are form costs (`is_form_cost`)."""
        return np.array([is_form_cost(name) for name in self.names], dtype=bool)

    def named_vector(self, named: dict[str, float]) -> np.ndarray:
        """Standardised named features, clipped to the fitted range."""
        x = np.zeros(len(self.names))
        index = self.index
        for name, value in named.items():
            j = index.get(name)
            if j is not None:
                x[j] = value
        z = (np.clip(x, self.low, self.high) - self.mean) / self.scale
        if not self.z_cap:
            return z
        z = np.clip(z, -self.z_cap, self.z_cap)
        j = index.get("length")
        if j is not None:  # brevity may cost at most one standard deviation's worth
            z[j] = max(z[j], -BREVITY_FLOOR)
        return z

    def weight_of(self, features: JudgeFeatures) -> float:
        """How much of this model's prediction counts for `features` (familiarity)."""
        return features.familiarity if self.familiar else 1.0

    def _gram_sets(self, features: JudgeFeatures):
        """(text, distinct buckets, table) of each text this model weighs."""
        for key, table in self.grams.items():
            codes = features.grams.get(key)
            if codes is not None and len(codes):
                yield key, gram_buckets(codes, _NAMESPACES[key], _bits(table)), table

    def gram_scale(self, key: str, features: JudgeFeatures) -> float:
        """The value of each of text `key`'s n-grams, before its bucket's weight."""
        return features.gram_gate if self.gram_gate and key == "reply" else 1.0

    def gram_shares(self, features: JudgeFeatures) -> dict[str, float]:
        """Per text, the n-grams' part of the prediction."""
        return {
            key: self.gram_scale(key, features) * self.gram_weight * float(table[distinct].sum()) / math.sqrt(len(distinct))
            for key, distinct, table in self._gram_sets(features)
        }

    def gram_examples(self, features: JudgeFeatures, key: str, k: int = 3) -> tuple[str, ...]:
        """The `k` readable n-grams of text `key` that weigh most, for explanations."""
        table, codes = self.grams.get(key), features.grams.get(key)
        if table is None or codes is None or not len(codes):
            return ()
        weights = table[gram_buckets(codes, _NAMESPACES[key], _bits(table), distinct=False)]
        examples: list[str] = []
        for j in np.argsort(-np.abs(weights), kind="stable"):
            gram = gram_text(codes[j], features.texts[key], features.language)
            if _readable(gram, features.language):
                examples.append(gram)
                if len(examples) == k:
                    break
        return tuple(examples)

    def contributions(self, features: JudgeFeatures, z: np.ndarray | None = None) -> np.ndarray:
        """Each named feature's share of the prediction (`z`: `named_vector`, if computed
        already); in version 2 the form features' shares together cost at most
        `FITTED_FORM_CAP` (scaled down alike)."""
        shares = (self.named_vector(features.named) if z is None else z) * self.weights
        if self.z_cap:
            form = self.form_mask
            total = float(shares[form].sum())
            if total < -FITTED_FORM_CAP:
                shares[form] *= FITTED_FORM_CAP / -total
        return shares

    def reply_and_context(self, features: JudgeFeatures) -> tuple[float, float]:
        """The prediction before `bounded`, as (the reply's share with the intercept, the
        conversation's share: nothing unless `steady_context`)."""
        shares = self.contributions(features)
        context = float(shares[self.context_mask].sum())
        reply = self.intercept + float(shares.sum()) - context
        for key, value in self.gram_shares(features).items():
            if self.is_context_text(key):
                context += value
            else:
                reply += value
        return reply, context

    def predict(self, features: JudgeFeatures) -> float:
        reply, context = self.reply_and_context(features)
        return self.bounded(reply, features, context)

    def bounded(self, value: float, features: JudgeFeatures, context: float = 0.0) -> float:
        """What of the model's prediction counts (version 2): the reply's share `value` shrunk
        toward `center` by its `familiarity`, the conversation's share `context` (under
        `steady_context`) added whole, within +-`trust`."""
        value = self.center + (value - self.center) * self.weight_of(features) + context
        return float(min(self.trust, max(-self.trust, value))) if self.trust else value

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "tied_from": self.tied_from,
            "intercept": self.intercept,
            "named": {
                name: [round(float(v), 6) for v in values]
                for name, values in zip(self.names, zip(self.mean, self.scale, self.low, self.high, self.weights))
            },
            "gram_weight": self.gram_weight,
        }
        if self.gram_gate:
            out["gram_gate"] = True
        if self.z_cap:
            out["z_cap"] = self.z_cap
        if self.familiar:
            out["familiar"] = True
        if self.steady_context:
            out["steady_context"] = True
        if self.trust:
            out["trust"] = self.trust
        if self.center:
            out["center"] = round(self.center, 6)
        out["grams"] = {key: _pack(table) for key, table in self.grams.items()}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str) -> "LinearModel":
        try:
            named = data["named"]
            names = tuple(named)
            columns = np.array([named[n] for n in names], dtype=float).reshape(len(names), 5).T
            return cls(
                names=names, mean=columns[0], scale=columns[1], low=columns[2], high=columns[3], weights=columns[4],
                intercept=float(data["intercept"]), gram_weight=float(data.get("gram_weight", 0.0)),
                grams={key: _unpack(table, f"{where}.grams.{key}") for key, table in (data.get("grams") or {}).items()},
                tied_from=data.get("tied_from"), gram_gate=bool(data.get("gram_gate", False)),
                z_cap=float(data.get("z_cap", 0.0)), familiar=bool(data.get("familiar", False)),
                steady_context=bool(data.get("steady_context", False)),
                trust=float(data.get("trust", 0.0)), center=float(data.get("center", 0.0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise JudgeFileError(f"{where}: malformed language model ({type(exc).__name__}: {exc})") from None


def _pack(table: np.ndarray) -> dict[str, Any]:
    """A weight table as little-endian float16, base64 (a few hundred kB for 40k buckets)."""
    data = np.asarray(table, dtype="<f2").tobytes()
    return {"size": int(len(table)), "dtype": "float16", "base64": base64.b64encode(data).decode("ascii")}


def _unpack(packed: dict[str, Any], where: str) -> np.ndarray:
    size = int(packed["size"])
    if size < 2 or size & (size - 1):
        raise JudgeFileError(f"{where}: table size {size} is not a power of two")
    table = np.frombuffer(base64.b64decode(packed["base64"]), dtype="<f2").astype(np.float64)
    if len(table) != size:
        raise JudgeFileError(f"{where}: {len(table)} weights, the file says {size}")
    return table


@dataclass(frozen=True)
class CalibratedJudge:
    """A fitted appraisal model (see the module docstring).

    Load the bundled one with `CalibratedJudge.load()`, a file with `load(path)`, fit one
    with `judge_fit.fit_judge`.

    `predict` and `score` are the fitted reading alone. The guards that recorded dialogues
    cannot teach stand around it in `CalibratedSimulator.judge_reply`: gibberish and empty
    replies, repeating oneself, parroting, stock phrases strung together, pasting the user's
    message back, exclamation spam, and a reply in a language other than the user's, which
    this reading judges by its own language's model (a Chinese reply to an English user is
    read as a Chinese reply). Score what a policy writes through the simulator
    (`make_simulator("calibrated")`), as the envs do.
    """

    name: str
    models: dict[str, LinearModel]
    gain: float = 1.0
    change_range: tuple[float, float] = (-10.0, 10.0)
    metadata: dict[str, Any] = field(default_factory=dict)
    feature_version: int = 1

    def features(self, persona: Persona, history: Sequence[Message], reply: str) -> JudgeFeatures:
        """What this judge reads in `reply` (its feature version)."""
        return judge_features(persona, history, reply, version=self.feature_version)

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(sorted(self.models))

    def model(self, language: str) -> LinearModel:
        try:
            return self.models[language]
        except KeyError:
            raise ValueError(
                f"judge {self.name!r} has no model for language {language!r} (it has {list(self.languages)}); "
                "fit one on dialogues in that language with `dialog-gym calibrate`"
            ) from None

    def predict(self, persona: Persona, history: Sequence[Message], reply: str) -> float:
        """The change this judge gives `reply` (unrounded, within `change_range`)."""
        return self.predict_features(self.features(persona, history, reply), persona.hidden_need.value)

    def predict_features(self, features: JudgeFeatures, need: str) -> float:
        """`predict` from features already computed, for a persona with hidden need `need`."""
        raw = self.model(features.language).predict(features) + sum(prior_parts(features, need).values())
        return self._scale(raw, features)

    def _scale(self, raw: float, features: JudgeFeatures) -> float:
        low, high = self.change_range
        return float(placed(min(high, max(low, self.gain * raw)), features, self.change_range))

    def score(self, persona: Persona, history: Sequence[Message], reply: str) -> JudgeScore:
        """The change and its explanation: the feature groups' shares of it."""
        return self.score_features(self.features(persona, history, reply), persona.hidden_need.value)

    def score_features(self, features: JudgeFeatures, need: str = "", *, keep: int = 8, examples_for: int = 3) -> JudgeScore:
        """`score` from features already computed (for a persona with hidden need `need`), with
        the `keep` largest contributions; the n-grams quoted as examples are looked up for the
        `examples_for` largest only."""
        model = self.model(features.language)
        z = model.named_vector(features.named)
        groups, index, primary = _grouping(model.names)
        named = np.bincount(index, weights=model.contributions(features, z), minlength=len(groups))
        raw = model.intercept + float(named.sum())
        shares = {group: value for group, value in zip(groups, named.tolist()) if value and group != "persona"}
        gram_shares = model.gram_shares(features)
        learned = raw + sum(gram_shares.values())
        # What the conversation says stays whole (`steady_context`); what does not count of the
        # rest shrinks the reply's shares alike.
        steady = CONTEXT_GROUPS if model.steady_context else frozenset()
        steady_named = sum(value for group, value in zip(groups, named.tolist()) if group in steady)
        steady_keys = {key for key in gram_shares if model.is_context_text(key)}
        context = steady_named + sum(gram_shares[key] for key in steady_keys)
        counted = model.bounded(learned - context, features, context)
        if learned - context and counted != learned:
            shrink = (counted - context) / (learned - context)
            raw = (raw - steady_named) * shrink + steady_named
            shares = {g: v if g in steady else v * shrink for g, v in shares.items()}
            gram_shares = {k: v if k in steady_keys else v * shrink for k, v in gram_shares.items()}
        z_of = z.tolist()
        above = {group: z_of[j] > 0 for group, j in zip(groups, primary) if j >= 0}
        text_of_group: dict[str, str] = {}
        for key, value in gram_shares.items():
            group = _TEXT_GROUPS[key]
            shares[group] = shares.get(group, 0.0) + value
            raw += value
            if group != "conversation":
                text_of_group[group] = key
        for cause, value in prior_parts(features, need).items():
            group = feature_group(cause)
            shares[group] = shares.get(group, 0.0) + value
            raw += value
            above[group] = True  # the prior speaks of what the reply has, not of a deficit
        largest = sorted(shares, key=lambda g: -abs(shares[g]))[:keep]
        contributions = tuple(
            Contribution(
                group, describe_feature(group, above=above.get(group, True)), self.gain * shares[group],
                model.gram_examples(features, text_of_group[group]) if group in text_of_group and k < examples_for else (),
            )
            for k, group in enumerate(largest)
        )
        return JudgeScore(self._scale(raw, features), features.language, contributions)

    def largest_weights(self, language: str, k: int = 8) -> list[tuple[str, float]]:
        """The named features that move this language's mood most, in words, with the change
        one standard deviation of each brings (after the gain); largest first."""
        model = self.model(language)
        effects = [(name, self.gain * float(w)) for name, w in zip(model.names, model.weights) if feature_group(name) != "persona"]
        effects.sort(key=lambda item: -abs(item[1]))
        return [(describe_name(name), value) for name, value in effects[:k]]

    # -- files ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": JUDGE_FORMAT,
            "format_version": JUDGE_FORMAT_VERSION,
            "feature_version": self.feature_version,
            "name": self.name,
            "gain": self.gain,
            "change_range": list(self.change_range),
            "metadata": self.metadata,
            "languages": {lang: model.to_dict() for lang, model in sorted(self.models.items())},
        }

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, judge: "str | Path" = DEFAULT_JUDGE) -> "CalibratedJudge":
        """A judge file, or a bundled judge by name (`"sage-deepseek-v3-v2"`, the default; `"sage-deepseek-v3"`, the v1 judge)."""
        return _load(str(_judge_path(judge)))

    @property
    def fingerprint(self) -> str:
        """A short hash of the weights and, from feature version 2, of the tables its features
        read (`reading_tables_digest`: a new speech-act model changes the reward as surely as
        new weights), recorded with every episode judged by this judge."""
        digest = hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode())
        if self.feature_version >= 2:
            digest.update(reading_tables_digest().encode())
        return digest.hexdigest()[:12]

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "<judge>") -> "CalibratedJudge":
        if not isinstance(data, dict) or data.get("format") != JUDGE_FORMAT:
            raise JudgeFileError(f"{where}: not a dialog-gym judge file (no \"format\": \"{JUDGE_FORMAT}\")")
        if data.get("format_version") != JUDGE_FORMAT_VERSION:
            raise JudgeFileError(f"{where}: judge format version {data.get('format_version')}, this dialog-gym reads {JUDGE_FORMAT_VERSION}")
        if data.get("feature_version") not in FEATURE_VERSIONS:
            raise JudgeFileError(
                f"{where}: fitted on feature version {data.get('feature_version')}, this dialog-gym computes "
                f"versions {list(FEATURE_VERSIONS)}; fit it again with `dialog-gym calibrate`"
            )
        languages = data.get("languages")
        if not isinstance(languages, dict) or not languages:
            raise JudgeFileError(f"{where}: no language models")
        check_judge_dict(data, where)  # every value usable, or an error naming the field
        low, high = data.get("change_range", (-10, 10))
        return cls(
            name=str(data.get("name", "judge")),
            models={lang: LinearModel.from_dict(m, f"{where}: languages.{lang}") for lang, m in languages.items()},
            gain=float(data.get("gain", 1.0)),
            change_range=(float(low), float(high)),
            metadata=dict(data.get("metadata") or {}),
            feature_version=int(data["feature_version"]),
        )


def _judge_path(judge: "str | Path") -> Path:
    path = Path(judge)
    if path.suffix == ".json" or path.exists():
        if not path.is_file():
            raise FileNotFoundError(f"judge file {str(path)!r} does not exist")
        return path.resolve()
    bundled = BUNDLED_JUDGES / f"{judge}.json"
    if not bundled.is_file():
        names = sorted(p.stem for p in BUNDLED_JUDGES.glob("*.json"))
        raise ValueError(f"unknown judge {str(judge)!r}: not a file, and the bundled judges are {names}")
    return bundled


@lru_cache(maxsize=8)
def _load(path: str) -> CalibratedJudge:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise JudgeFileError(f"{path}: not a JSON judge file ({'nested too deeply' if isinstance(exc, RecursionError) else exc})") from None
    return CalibratedJudge.from_dict(data, where=path)
