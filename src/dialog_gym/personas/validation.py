"""JSON Schema validation of persona files, with errors that name the file, line and field."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import jsonschema

from dialog_gym._jsonl import read_json_lines
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
    if unencodable is not None:
        errors.append(PersonaError(path, line, unencodable or "(record)", "holds a lone surrogate, which UTF-8 cannot encode"))
    return errors


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
