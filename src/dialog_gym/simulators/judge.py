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
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from dialog_gym.personas import Persona
from dialog_gym.simulators._ridge import SparseRows, ridge
from dialog_gym.simulators.judge_features import (
    FEATURE_VERSION,
    JudgeFeatures,
    gram_buckets,
    gram_text,
    judge_features,
)
from dialog_gym.types import Message

JUDGE_FORMAT = "dialog-gym-judge"
JUDGE_FORMAT_VERSION = 1
BUNDLED_JUDGES = Path(__file__).parent / "judges"
DEFAULT_JUDGE = "sage-deepseek-v3"
_INTERCEPT_PENALTY = 1e-3


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

    @property
    def index(self) -> dict[str, int]:
        return _index(self.names)

    def named_vector(self, named: dict[str, float]) -> np.ndarray:
        """Standardised named features, clipped to the fitted range."""
        x = np.zeros(len(self.names))
        index = self.index
        for name, value in named.items():
            j = index.get(name)
            if j is not None:
                x[j] = value
        return (np.clip(x, self.low, self.high) - self.mean) / self.scale

    def _gram_sets(self, features: JudgeFeatures):
        """(text, distinct buckets, table) of each text this model weighs."""
        for key, table in self.grams.items():
            codes = features.grams.get(key)
            if codes is not None and len(codes):
                yield key, gram_buckets(codes, _NAMESPACES[key], _bits(table)), table

    def gram_shares(self, features: JudgeFeatures) -> dict[str, float]:
        """Per text, the n-grams' part of the prediction."""
        return {
            key: self.gram_weight * float(table[distinct].sum()) / math.sqrt(len(distinct))
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

    def predict(self, features: JudgeFeatures) -> float:
        named = float(self.named_vector(features.named) @ self.weights)
        return self.intercept + named + sum(self.gram_shares(features).values())

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
                tied_from=data.get("tied_from"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise JudgeFileError(f"{where}: malformed language model ({type(exc).__name__}: {exc})") from None


@lru_cache(maxsize=64)
def _index(names: tuple[str, ...]) -> dict[str, int]:
    return {name: j for j, name in enumerate(names)}


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
class Contribution:
    """One reason the mood moved: a feature group, its share of the change, and examples."""

    feature: str  # a group name, e.g. "length", "wording", "cue:advice"
    words: str  # the same, as a person would say it
    value: float  # in mood points (after the gain)
    examples: tuple[str, ...] = ()  # the n-grams that weighed most, for "wording"


@dataclass(frozen=True)
class JudgeScore:
    """A judge's verdict on one reply: the change (unrounded) and the feature groups that
    moved it most, largest first."""

    change: float
    language: str
    contributions: tuple[Contribution, ...]

    def top(self, k: int = 3) -> tuple[Contribution, ...]:
        """The `k` contributions that moved the mood most, largest first."""
        return tuple(sorted(self.contributions, key=lambda c: -abs(c.value))[:k])


@dataclass(frozen=True)
class CalibratedJudge:
    """A fitted appraisal model (see the module docstring).

    Load the bundled one with `CalibratedJudge.load()`, a file with `load(path)`, fit one
    with `fit_judge`.
    """

    name: str
    models: dict[str, LinearModel]
    gain: float = 1.0
    change_range: tuple[float, float] = (-10.0, 10.0)
    metadata: dict[str, Any] = field(default_factory=dict)

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
        features = judge_features(persona, history, reply)
        return self._scale(self.model(features.language).predict(features))

    def _scale(self, raw: float) -> float:
        low, high = self.change_range
        return float(min(high, max(low, self.gain * raw)))

    def score(self, persona: Persona, history: Sequence[Message], reply: str) -> JudgeScore:
        """The change and its explanation: the feature groups' shares of it."""
        return self.score_features(judge_features(persona, history, reply))

    def score_features(self, features: JudgeFeatures, *, keep: int = 8, examples_for: int = 3) -> JudgeScore:
        """`score` from features already computed, with the `keep` largest contributions; the
        n-grams quoted as examples are looked up for the `examples_for` largest only."""
        model = self.model(features.language)
        z = model.named_vector(features.named)
        groups, index, primary = _grouping(model.names)
        named = np.bincount(index, weights=z * model.weights, minlength=len(groups))
        raw = model.intercept + float(named.sum())
        shares = {group: float(value) for group, value in zip(groups, named) if value and group != "persona"}
        above = {group: bool(z[j] > 0) for group, j in zip(groups, primary) if j >= 0}
        text_of_group: dict[str, str] = {}
        for key, value in model.gram_shares(features).items():
            group = _TEXT_GROUPS[key]
            shares[group] = shares.get(group, 0.0) + value
            raw += value
            if group != "conversation":
                text_of_group[group] = key
        largest = sorted(shares, key=lambda g: -abs(shares[g]))[:keep]
        contributions = tuple(
            Contribution(
                group, describe_feature(group, above=above.get(group, True)), self.gain * shares[group],
                model.gram_examples(features, text_of_group[group]) if group in text_of_group and k < examples_for else (),
            )
            for k, group in enumerate(largest)
        )
        return JudgeScore(self._scale(raw), features.language, contributions)

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
            "feature_version": FEATURE_VERSION,
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
        """A judge file, or a bundled judge by name (`"sage-deepseek-v3"`)."""
        return _load(str(_judge_path(judge)))

    @property
    def fingerprint(self) -> str:
        """A short hash of the weights, recorded with every episode judged by this judge."""
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:12]

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "<judge>") -> "CalibratedJudge":
        if not isinstance(data, dict) or data.get("format") != JUDGE_FORMAT:
            raise JudgeFileError(f"{where}: not a dialog-gym judge file (no \"format\": \"{JUDGE_FORMAT}\")")
        if data.get("format_version") != JUDGE_FORMAT_VERSION:
            raise JudgeFileError(f"{where}: judge format version {data.get('format_version')}, this dialog-gym reads {JUDGE_FORMAT_VERSION}")
        if data.get("feature_version") != FEATURE_VERSION:
            raise JudgeFileError(
                f"{where}: fitted on feature version {data.get('feature_version')}, this dialog-gym computes "
                f"version {FEATURE_VERSION}; fit it again with `dialog-gym calibrate`"
            )
        languages = data.get("languages")
        if not isinstance(languages, dict) or not languages:
            raise JudgeFileError(f"{where}: no language models")
        low, high = data.get("change_range", (-10, 10))
        return cls(
            name=str(data.get("name", "judge")),
            models={lang: LinearModel.from_dict(m, f"{where}: languages.{lang}") for lang, m in languages.items()},
            gain=float(data.get("gain", 1.0)),
            change_range=(float(low), float(high)),
            metadata=dict(data.get("metadata") or {}),
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
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise JudgeFileError(f"{path}: not a JSON judge file ({exc})") from None
    return CalibratedJudge.from_dict(data, where=path)


# -- explanations -------------------------------------------------------------------------
_TEXT_GROUPS = {"reply": "wording", "opener": "opening", "user": "conversation", "earlier": "conversation"}
_FAMILY_WORDS = {
    "validation": "validating my feelings", "reflection": "reflecting my feelings back", "emotion_word": "naming feelings",
    "invitation": "inviting me to go on", "advice": "advice", "platitude": "stock reassurance", "judging": "judging me",
    "lecturing": "lecturing", "praise": "praise", "specific_anchor": "pointing at what I actually did",
    "dialectical_analysis": "weighing both sides", "motive_analysis": "explaining the others' motives",
    "guided_reflection": "questions that make me reflect", "not_at_fault": "saying it is not my fault",
    "deep_empathy": "deep empathy", "self_focus": "talking about themselves",
}
_GROUP_WORDS = {
    "length": "its length", "paragraphs": "many paragraphs", "list_lines": "list formatting",
    "numbered_lines": "numbered steps", "bold": "bold text", "headers": "headings", "questions": "its questions",
    "exclamations": "exclamation marks", "exclamation_opener": "an exclamation to open with",
    "praise_opener": "opening with praise", "stock_opener": "a stock empathy opener",
    "referral": "sending me to a professional or a hotline", "stage_directions": "stage directions",
    "emoji": "emoji",
    "repeats_earlier_reply": "repeating an earlier reply", "echo": "picking up my own words", "turn": "how far into the talk we are",
    "conversation": "how the conversation has gone so far", "wording": "its wording", "opening": "how it opens",
    "specifics": "answering my request for something specific", "advice_refused": "advice after I said I did not want it",
    "persona": "who I am",
}
# The same groups when the reply has less of them than the average recorded reply.
_LESS_WORDS = {
    "length": "its brevity", "paragraphs": "few paragraphs", "list_lines": "no lists", "numbered_lines": "no numbered steps",
    "bold": "no bold text", "headers": "no headings", "questions": "asking few questions", "exclamations": "few exclamation marks",
    "exclamation_opener": "a calm opening", "praise_opener": "no opening praise", "stock_opener": "no stock empathy opener",
    "referral": "no referral to a professional", "stage_directions": "no stage directions", "emoji": "no emoji",
    "repeats_earlier_reply": "saying something new", "echo": "not picking up my words", "turn": "how early in the talk we are",
}
_GROUP_OF = {
    "overlong": "length", "user_negative": "conversation", "user_positive": "conversation", "user_question": "conversation",
    "user_wants_specifics": "conversation", "user_refuses_advice": "conversation",
}


@lru_cache(maxsize=64)
def _grouping(names: tuple[str, ...]) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """The explanation groups of a model's features: their names, each feature's group, and
    each group's own feature (the one that says whether a reply has more or less of it than
    average; -1 when the group has none)."""
    of_feature = [feature_group(name) for name in names]
    groups = tuple(dict.fromkeys(of_feature))
    position = {group: k for k, group in enumerate(groups)}
    index = np.array([position[g] for g in of_feature], dtype=np.int64)
    own = {name: j for j, name in enumerate(names)}
    primary = np.array([own.get(group, -1) for group in groups], dtype=np.int64)
    return groups, index, primary


def feature_group(name: str) -> str:
    """The group a named feature belongs to, for explanations (e.g. `"fit:x:advice"` -> `"cue:advice"`)."""
    if name in _GROUP_OF:
        return _GROUP_OF[name]
    head, _, tail = name.partition(":")
    if head in ("need", "type"):
        return "persona"
    if head in ("cue", "fit"):
        return "cue:" + tail.rpartition(":")[2]
    if head == "specifics_asked":
        return "specifics"
    if head == "advice_refused":
        return "advice_refused"
    if tail:  # "negative:length", "emotional:bold": the form feature itself
        return _GROUP_OF.get(tail, tail)
    return name


def describe_feature(group: str, *, above: bool = True) -> str:
    """A feature group in words (`"cue:advice"` -> `"advice"`); `above=False` says that the
    reply has less of it than the average recorded reply (`"length"` -> `"its brevity"`)."""
    if group.startswith("cue:"):
        words = _FAMILY_WORDS.get(group[4:], group[4:].replace("_", " "))
        return words if above else f"little {words}"
    if not above and group in _LESS_WORDS:
        return _LESS_WORDS[group]
    return _GROUP_WORDS.get(group, group.replace("_", " "))


def _readable(gram: str, language: str) -> bool:
    """An n-gram worth quoting: two or more characters of Chinese, or an English word."""
    letters = [ch for ch in gram if ch.isalpha()]
    return len(letters) >= (2 if language == "zh" else 1)


def describe_name(name: str) -> str:
    """A named feature in words, with its qualifier (`"negative:length"` -> `"its length (negative characters)"`)."""
    words = describe_feature(feature_group(name))
    head, _, tail = name.partition(":")
    if head == "fit":
        return f"{words} (when I need {tail.partition(':')[0].replace('_', ' ')})"
    if head in ("negative", "passive", "avoidant"):
        return f"{words} ({head} characters)"
    if head == "emotional":
        return f"{words} (emotional needs)"
    if name in _GROUP_OF and name != "overlong":
        return name.replace("_", " ").replace("user", "my last message:", 1)
    if name == "overlong":
        return "length beyond ~200 words"
    return words


def explain(score: JudgeScore, k: int = 3) -> str:
    """One sentence naming what moved the mood most: "raised by ...; lowered by ..."."""
    top = [c for c in score.top(k) if abs(c.value) >= 0.05]
    if not top:
        return "Nothing in the reply moved me much either way."

    def say(c: Contribution) -> str:
        examples = " (" + ", ".join(f"\u201c{g}\u201d" for g in c.examples) + ")" if c.examples else ""
        return f"{c.words}{examples} {c.value:+.1f}"

    raised = [say(c) for c in top if c.value > 0]
    lowered = [say(c) for c in top if c.value < 0]
    parts = ([f"raised by {', '.join(raised)}"] if raised else []) + ([f"lowered by {', '.join(lowered)}"] if lowered else [])
    return "Mood " + "; ".join(parts) + "."


# -- fitting ------------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgeSample:
    """One appraised reply of a recorded dialogue: the input and the recorded change.

    `group` names where it came from (the evaluated agent model, for leave-one-group-out
    figures) and `dialogue` the dialogue it belongs to.
    """

    persona: Persona
    history: tuple[Message, ...]
    reply: str
    change: float
    group: str = ""
    dialogue: str = ""


@dataclass(frozen=True)
class FitOptions:
    """Hyperparameters of `fit_judge` (the defaults were chosen by leave-one-model-out on SAGE).

    Attributes:
        l2: ridge penalty of every weight (features standardised, n-gram vectors normalised).
        gram_weight: the length of each text's n-gram vector; larger lets n-grams weigh more.
        gram_tables: the texts whose n-grams count, each with log2 of its hashed table size
            (the reply, its opening sentence, the user's latest message and the one before).
        tie_languages: give a language without samples a tied model fitted on the others.
        folds: how out-of-fold predictions (for `gain` and the fit report) are made:
            `"groups"` leaves one group out (needs >= 3 groups), else 5 folds of dialogues;
            `"none"` fits once (gain 1, no held-out figure).
    """

    l2: float = 200.0
    gram_weight: float = 8.0
    gram_tables: tuple[tuple[str, int], ...] = (("reply", 15), ("opener", 12), ("user", 13), ("earlier", 12))
    tie_languages: bool = True
    folds: str = "groups"


@dataclass
class _Design:
    """Features of many samples, computed once and reused by every fold."""

    features: list[JudgeFeatures]
    changes: np.ndarray

    @classmethod
    def of(cls, samples: Sequence[JudgeSample], progress: Callable[[int], None] | None = None) -> "_Design":
        """`progress(done)` is called every 256 samples and at the end."""
        features = []
        for k, s in enumerate(samples, 1):
            features.append(judge_features(s.persona, s.history, s.reply))
            if progress is not None and (k % 256 == 0 or k == len(samples)):
                progress(k)
        return cls(features, np.array([s.change for s in samples], dtype=float))


def _fit_model(design: _Design, rows: np.ndarray, options: FitOptions, *, grams: bool, tied_from: str | None = None) -> LinearModel:
    feats = [design.features[i] for i in rows]
    names = tuple(sorted({n for f in feats for n in f.named}))
    index = _index(names)
    dense = np.zeros((len(feats), len(names)))
    for i, f in enumerate(feats):
        for n, v in f.named.items():
            dense[i, index[n]] = v
    low, high = dense.min(0), dense.max(0)
    mean, scale = dense.mean(0), dense.std(0)
    keep = scale > 1e-9
    names = tuple(n for n, k in zip(names, keep) if k)
    dense, low, high, mean, scale = dense[:, keep], low[keep], high[keep], mean[keep], scale[keep]
    z = (dense - mean) / scale
    n_named = len(names)
    tables = dict(options.gram_tables) if grams else {}
    offsets, n_columns = {}, n_named + 1
    for key, bits in tables.items():
        offsets[key], n_columns = n_columns, n_columns + (1 << bits)
    columns = np.arange(n_named + 1)
    sparse_rows = []
    for i, f in enumerate(feats):
        idx, val = [columns], [np.append(z[i], 1.0)]
        for key, bits in tables.items():
            codes = f.grams.get(key)
            if codes is not None and len(codes):
                buckets = gram_buckets(codes, _NAMESPACES[key], bits)
                idx.append(buckets + offsets[key])
                val.append(np.full(len(buckets), options.gram_weight / math.sqrt(len(buckets))))
        sparse_rows.append((np.concatenate(idx), np.concatenate(val)))
    x = SparseRows(sparse_rows, n_columns)
    penalty = np.full(n_columns, float(options.l2))
    penalty[n_named] = _INTERCEPT_PENALTY
    w = ridge(x, design.changes[rows], penalty)
    return LinearModel(
        names=names, mean=mean, scale=scale, low=low, high=high, weights=w[:n_named], intercept=float(w[n_named]),
        gram_weight=options.gram_weight if grams else 0.0,
        grams={key: w[offsets[key] : offsets[key] + (1 << bits)] for key, bits in tables.items()},
        tied_from=tied_from,
    )


def _fit_models(design: _Design, rows: np.ndarray, options: FitOptions) -> dict[str, LinearModel]:
    languages = np.array([f.language for f in design.features])
    models = {}
    for lang in sorted(set(languages[rows])):
        models[lang] = _fit_model(design, rows[languages[rows] == lang], options, grams=True)
    if options.tie_languages:
        for lang in ("en", "zh"):
            if lang not in models:
                donors = [other for other in sorted(models) if other != lang]
                models[lang] = _fit_model(design, rows, options, grams=False, tied_from="+".join(donors))
    return models


def _folds(samples: Sequence[JudgeSample], options: FitOptions) -> list[np.ndarray]:
    """Held-out row sets: one per group (>= 3 groups), else 5 folds of whole dialogues."""
    if options.folds == "none":
        return []
    groups = sorted({s.group for s in samples})
    if options.folds == "groups" and len(groups) >= 3:
        labels = np.array([groups.index(s.group) for s in samples])
        return [np.flatnonzero(labels == g) for g in range(len(groups))]
    dialogues = sorted({(s.group, s.dialogue) for s in samples})
    order = {d: k % 5 for k, d in enumerate(dialogues)}
    labels = np.array([order[(s.group, s.dialogue)] for s in samples])
    return [np.flatnonzero(labels == k) for k in range(min(5, len(dialogues)))]


def out_of_fold_predictions(
    design: _Design, folds: Sequence[np.ndarray], options: FitOptions, progress: Callable[[int], None] | None = None
) -> np.ndarray:
    """Each sample's raw prediction by models fitted without its fold; `progress(folds done)`."""
    predictions = np.zeros(len(design.changes))
    every = np.arange(len(design.changes))
    for k, held_out in enumerate(folds, 1):
        models = _fit_models(design, np.setdiff1d(every, held_out), options)
        for i in held_out:
            predictions[i] = models[design.features[i].language].predict(design.features[i])
        if progress is not None:
            progress(k)
    return predictions


def fit_judge(
    samples: Iterable[JudgeSample],
    *,
    name: str = "custom",
    options: FitOptions = FitOptions(),
    metadata: dict[str, Any] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> CalibratedJudge:
    """Fit a judge on recorded appraisals (see the module docstring).

    `progress(stage, done, total)` is called as features are computed and folds are fitted.
    The judge's `metadata["fit"]` holds the sample counts and the out-of-fold figures.
    """
    samples = list(samples)
    if len(samples) < 20:
        raise ValueError(f"fit_judge needs at least 20 appraised replies, got {len(samples)}")
    for s in samples:
        if not math.isfinite(s.change):
            raise ValueError(f"a sample of dialogue {s.dialogue!r} has a non-finite change {s.change!r}")
    total = len(samples)
    report = progress or (lambda stage, done, of: None)
    design = _Design.of(samples, lambda done: report("features", done, total))
    folds = _folds(samples, options)
    predictions = out_of_fold_predictions(design, folds, options, lambda done: report("folds", done, len(folds) + 1))
    gain = _gain(predictions, design.changes) if folds else 1.0
    models = _fit_models(design, np.arange(total), options)
    report("folds", len(folds) + 1, len(folds) + 1)
    low, high = float(design.changes.min()), float(design.changes.max())
    fit_report = {
        "samples": total,
        "dialogues": len({(s.group, s.dialogue) for s in samples}),
        "groups": sorted({s.group for s in samples}),
        "languages": {lang: int(sum(f.language == lang for f in design.features)) for lang in sorted(models) if not models[lang].tied_from},
        "folds": _describe_folds(samples, options, folds),
        "out_of_fold_turn_r": _pearson(predictions, design.changes) if folds else float("nan"),
        "options": {k: getattr(options, k) for k in options.__dataclass_fields__},
    }
    return CalibratedJudge(name=name, models=models, gain=gain, change_range=(low, high), metadata={**(metadata or {}), "fit": fit_report})


def _describe_folds(samples: Sequence[JudgeSample], options: FitOptions, folds: Sequence[np.ndarray]) -> str:
    if not folds:
        return "nothing (fitted once)"
    if options.folds == "groups" and len({s.group for s in samples}) >= 3:
        return "leaving one agent model out"
    return f"{len(folds)} folds of dialogues"


def _gain(predictions: np.ndarray, changes: np.ndarray) -> float:
    """The slope of recorded changes on out-of-fold predictions (> 1 undoes ridge's shrinkage)."""
    centred = predictions - predictions.mean()
    variance = float(centred @ centred)
    if variance <= 1e-12:
        return 1.0
    return float(max(0.25, min(4.0, (centred @ (changes - changes.mean())) / variance)))


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) < 2 or np.std(a) == 0 or np.std(b) == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])
