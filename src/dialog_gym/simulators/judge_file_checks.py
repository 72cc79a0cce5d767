"""Checks on a parsed judge file, before any of it is used: every problem names the file and field.

A judge file is JSON that anyone can edit (or fit badly), and `CalibratedJudge` does
arithmetic with every number in it. A NaN weight, a 1e308 intercept, a zero scale or an
inverted `change_range` would load and then score every reply -10 (or fail every step);
a three-item `change_range`, a `gain` of `"high"` or a `metadata` string would fail
later with a bare Python error. `check_judge_dict` rejects all of them at load time with
a `JudgeFileError` such as::

    judges/mine.json: languages.en.named.reply_length: scale is 0.0; a scale must be > 0

The limits are generous (the bundled judge's largest weight is 1.4 mood points): they
catch values no fitted judge makes, not judges that merely differ.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

MAX_ABS_CHANGE = 100.0  # a mood change beyond this is no change a 0-100 mood can take
MAX_GAIN = 100.0
MAX_ABS_WEIGHT = 1_000.0  # intercept, weights, n-gram weights: mood points
MAX_ABS_FEATURE = 1e6  # a named feature's mean, range and scale
GRAM_TEXTS = ("reply", "opener", "user", "earlier")  # the texts a judge may hold n-gram tables for
NAMED_COLUMNS = ("mean", "scale", "low", "high", "weight")


def _error(where: str, field: str, problem: str) -> Exception:
    from dialog_gym.simulators.judge import JudgeFileError  # here: judge.py imports this module

    return JudgeFileError(f"{where}: {field}: {problem}")


def _number(value: Any, where: str, field: str, *, low: float, high: float, low_open: bool = False) -> float:
    """`value` as a float within [low, high] (or (low, high] with `low_open`); raises naming `field`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _error(where, field, f"must be a number, got {type(value).__name__} {str(value)[:40]!r}")
    number = float(value)
    if not math.isfinite(number):
        raise _error(where, field, f"is {number}; it must be a finite number")
    if number > high or number < low or (low_open and number == low):
        bound = f"({low:g}, {high:g}]" if low_open else f"[{low:g}, {high:g}]"
        raise _error(where, field, f"is {number:g}, outside {bound}")
    return number


def _check_change_range(value: Any, where: str) -> None:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        shown = f"{len(value)} items" if isinstance(value, (list, tuple)) else type(value).__name__
        raise _error(where, "change_range", f"must be [low, high], two numbers; got {shown}")
    low = _number(value[0], where, "change_range[0]", low=-MAX_ABS_CHANGE, high=MAX_ABS_CHANGE)
    high = _number(value[1], where, "change_range[1]", low=-MAX_ABS_CHANGE, high=MAX_ABS_CHANGE)
    if not low < high:
        raise _error(where, "change_range", f"[{low:g}, {high:g}] is empty or inverted; low must be below high")


def _check_named(named: Any, where: str, field: str) -> None:
    if not isinstance(named, Mapping) or not named:
        raise _error(where, field, "must be an object of named features, {name: [mean, scale, low, high, weight]}: a malformed language model")
    for name, values in named.items():
        at = f"{field}.{name}"
        if not isinstance(values, (list, tuple)) or len(values) != len(NAMED_COLUMNS):
            raise _error(where, at, f"must be [{', '.join(NAMED_COLUMNS)}], five numbers")
        mean, scale, low, high = (
            _number(v, where, f"{at} {column}", low=-MAX_ABS_FEATURE, high=MAX_ABS_FEATURE)
            for v, column in zip(values[:4], NAMED_COLUMNS)
        )
        _number(values[4], where, f"{at} weight", low=-MAX_ABS_WEIGHT, high=MAX_ABS_WEIGHT)
        if scale <= 0:
            raise _error(where, at, f"scale is {scale:g}; a scale must be > 0 (features are divided by it)")
        if low > high:
            raise _error(where, at, f"range [{low:g}, {high:g}] is inverted")


def _check_grams(grams: Any, where: str, field: str) -> None:
    if grams is None:
        return
    if not isinstance(grams, Mapping):
        raise _error(where, field, f"must be an object {{text: table}}, got {type(grams).__name__}")
    for key, table in grams.items():
        at = f"{field}.{key}"
        if key not in GRAM_TEXTS:
            raise _error(where, at, f"no such text; n-gram tables are for {', '.join(GRAM_TEXTS)}")
        if not isinstance(table, Mapping) or not isinstance(table.get("base64"), str):
            raise _error(where, at, 'must be {"size": N, "dtype": "float16", "base64": "..."}')
        if table.get("dtype", "float16") != "float16":
            raise _error(where, f"{at}.dtype", f"must be \"float16\", got {table.get('dtype')!r}")
        size = table.get("size")
        if isinstance(size, bool) or not isinstance(size, int) or size < 2 or size & (size - 1):
            raise _error(where, f"{at}.size", f"must be a power of two >= 2, got {size!r}")
        try:
            raw = base64.b64decode(table["base64"], validate=True)
        except (binascii.Error, ValueError):
            raise _error(where, f"{at}.base64", "is not valid base64") from None
        if len(raw) != 2 * size:
            raise _error(where, f"{at}.base64", f"holds {len(raw) // 2} weights, size says {size}")
        weights = np.frombuffer(raw, dtype="<f2")
        bad = ~np.isfinite(weights) | (np.abs(weights.astype(np.float64)) > MAX_ABS_WEIGHT)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise _error(where, f"{at}.base64", f"weight {j} is {float(weights[j])}; weights must be finite, within ±{MAX_ABS_WEIGHT:g}")


def _check_model(model: Any, where: str, field: str) -> None:
    if not isinstance(model, Mapping):
        raise _error(where, field, f"malformed language model: must be an object, got {type(model).__name__}")
    for key in ("named", "intercept"):
        if key not in model:
            raise _error(where, f"{field}.{key}", "missing: a malformed language model")
    _number(model["intercept"], where, f"{field}.intercept", low=-MAX_ABS_WEIGHT, high=MAX_ABS_WEIGHT)
    _number(model.get("gram_weight", 0.0), where, f"{field}.gram_weight", low=0.0, high=MAX_ABS_WEIGHT)
    tied = model.get("tied_from")
    if tied is not None and not isinstance(tied, str):
        raise _error(where, f"{field}.tied_from", f"must be a language or null, got {type(tied).__name__}")
    for flag in ("gram_gate", "familiar", "steady_context"):
        if flag in model and not isinstance(model[flag], bool):
            raise _error(where, f"{field}.{flag}", f"must be true or false, got {type(model[flag]).__name__}")
    # 0 switches each off; otherwise the cap on standardised features and the bound on the prediction
    _number(model.get("z_cap", 0.0), where, f"{field}.z_cap", low=0.0, high=MAX_ABS_FEATURE)
    _number(model.get("trust", 0.0), where, f"{field}.trust", low=0.0, high=MAX_ABS_CHANGE)
    _number(model.get("center", 0.0), where, f"{field}.center", low=-MAX_ABS_CHANGE, high=MAX_ABS_CHANGE)
    _check_named(model["named"], where, f"{field}.named")
    _check_grams(model.get("grams"), where, f"{field}.grams")


def check_judge_dict(data: Mapping[str, Any], where: str) -> None:
    """Raise `JudgeFileError` naming `where` (the file) and the field at the first value of a
    parsed judge file that no judge can use: a wrong type, a non-finite or out-of-range
    number, a zero or negative scale, an inverted or wrong-length `change_range`, an unknown
    n-gram text, a table whose size and data disagree. Returns None for a usable file."""
    if "name" in data and not isinstance(data["name"], str):
        raise _error(where, "name", f"must be a string, got {type(data['name']).__name__}")
    if "gain" in data:
        _number(data["gain"], where, "gain", low=0.0, high=MAX_GAIN, low_open=True)
    if "change_range" in data:
        _check_change_range(data["change_range"], where)
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise _error(where, "metadata", f"must be an object, got {type(metadata).__name__}")
    languages = data.get("languages")
    if isinstance(languages, Mapping):
        for language, model in languages.items():
            _check_model(model, where, f"languages.{language}")
