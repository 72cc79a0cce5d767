"""JSON Schema validation of persona files, with errors that name the file, line and field."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import jsonschema

from dialog_gym._jsonl import read_json_lines
from dialog_gym.personas.persona import FACET_TOPICS, HiddenNeed
from dialog_gym.personas.stats import states_need
from dialog_gym._resources import data_dir
from dialog_gym.text_guard import unencodable_path


@dataclass(frozen=True)
class PersonaError:
    path: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class PersonaValidationError(ValueError):
    """Raised when a persona file does not match `personas/schema.json`."""

    def __init__(self, errors: list[PersonaError]):
        self.errors = errors
        shown = "\n".join(f"  {e}" for e in errors[:20])
        more = f"\n  ... and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(f"{len(errors)} invalid persona field(s):\n{shown}{more}")


@lru_cache(maxsize=1)
def persona_schema() -> dict[str, Any]:
    return json.loads((data_dir("personas") / "schema.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(persona_schema())


def validate_record(record: Any, *, path: str = "<record>", line: int = 1) -> list[PersonaError]:
    """Every schema violation of one persona record, each naming its field."""
    errors = []
    try:
        found = sorted(_validator().iter_errors(record), key=lambda e: list(e.absolute_path))
        unencodable = unencodable_path(record)
    except RecursionError:  # nested almost as deep as the JSON decoder allows
        return [PersonaError(path, line, "(record)", "nested too deeply to validate (arrays or objects hundreds of levels deep)")]
    for err in found:
        field = ".".join(str(p) for p in err.absolute_path) or "(record)"
        errors.append(PersonaError(path, line, field, err.message))
    errors.extend(_facet_errors(record, path, line))
    if unencodable is not None:
        errors.append(PersonaError(path, line, unencodable or "(record)", "holds a lone surrogate, which UTF-8 cannot encode"))
    return errors


def _facet_errors(record: Any, path: str, line: int) -> list[PersonaError]:
    """What the schema cannot say about facet lines: none states the hidden need outright,
    none speaks of the persona in the third person (their own name outside quoted speech, in a
    line that never says "I"), none is said twice."""
    if not isinstance(record, dict) or not isinstance(record.get("facets"), dict):
        return []
    try:
        need: HiddenNeed | None = HiddenNeed(record.get("hidden_need"))
    except ValueError:
        need = None  # the schema reports it
    profile = record.get("profile")
    name = profile.get("name") if isinstance(profile, dict) else None
    own_name = _own_name(name, record.get("language")) if isinstance(name, str) else None
    errors, seen = [], {}
    for topic in FACET_TOPICS:
        lines = record["facets"].get(topic)
        for k, text in enumerate(lines if isinstance(lines, list) else ()):
            if not isinstance(text, str):
                continue
            field = f"facets.{topic}.{k}"
            stated = states_need(text, need) if need is not None else []
            if stated:
                errors.append(PersonaError(path, line, field, f"states the hidden need outright ({stated[0]!r})"))
            if own_name and _third_person(text, own_name, record.get("language")):
                errors.append(PersonaError(path, line, field, f"speaks of {own_name} in the third person; facet lines are first-person"))
            if text.strip() in seen:
                errors.append(PersonaError(path, line, field, f"repeats facets.{seen[text.strip()]}"))
            seen.setdefault(text.strip(), f"{topic}.{k}")
    return errors


_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|「[^」]*」|『[^』]*』|(?<![A-Za-z])'[^']*'(?![A-Za-z])")
_FIRST_PERSON = {"en": re.compile(r"\b(?:i|me|my|mine|myself|we|us|our)\b|\bi'", re.IGNORECASE), "zh": re.compile(r"我|咱|俺")}


def _third_person(text: str, own_name: str, language: Any) -> bool:
    """A line that names the persona, outside quoted speech, and never says "I" or "my"."""
    unquoted = _QUOTED.sub(" ", text)
    first_person = _FIRST_PERSON["zh" if language == "zh" else "en"]
    return bool(re.search(rf"(?<!\w){re.escape(own_name)}(?!\w)", unquoted)) and not first_person.search(text)


def _own_name(name: str, language: Any) -> str | None:
    """The part of a persona's name a third-person line would use: the given name in
    English, the whole name in Chinese; None when too short to tell."""
    own = name.strip() if language == "zh" else (name.split() or [""])[0]
    return own if len(own) >= (2 if language == "zh" else 3) else None


def iter_records(path: str | Path) -> Iterator[tuple[int, Any, list[PersonaError]]]:
    """Yield `(line_number, record, errors)` for each non-blank line of a JSONL file.

    A line that is not UTF-8 or not JSON comes with `record=None` and its one error; the
    lines after it are still read.
    """
    for line in read_json_lines(path):
        if line.error is not None:
            yield line.lineno, None, [PersonaError(str(line.path), line.lineno, line.field, line.error)]
        else:
            yield line.lineno, line.record, validate_record(line.record, path=str(line.path), line=line.lineno)


def validate_file(path: str | Path) -> list[PersonaError]:
    """All errors of a persona JSONL file, duplicate ids included; empty when it is valid."""
    errors: list[PersonaError] = []
    seen: dict[str, int] = {}
    for lineno, record, record_errors in iter_records(path):
        errors.extend(record_errors)
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            if record["id"] in seen:
                errors.append(PersonaError(str(path), lineno, "id", f"duplicate id {record['id']!r} (first on line {seen[record['id']]})"))
            else:
                seen[record["id"]] = lineno
    return errors
