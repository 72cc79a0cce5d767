"""Read JSON Lines files with problems that name the file and line, one line at a time.

Each line is read as bytes and decoded on its own, so a line that is not UTF-8 is reported
as `FILE:LINE: not valid UTF-8 (...)` like any other bad line, and the lines after it are
still read. A `\\ud800`-style escape that decodes to a lone surrogate (text no UTF-8 file,
tokenizer or HTTP request can carry) is a bad line too, naming the field it is in. A UTF-8
byte-order mark before the first line is accepted. JSON nested deeper than Python's
recursion limit (a line of 200,000 `[`) is a bad line as well, never a `RecursionError`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dialog_gym.text_guard import SURROGATE_ESCAPE, unencodable_path

_BOM = b"\xef\xbb\xbf"
SHOWN_PROBLEMS = 20
UNENCODABLE_ESCAPE = "a \\u escape of a lone surrogate, which UTF-8 cannot encode"
TOO_DEEP = "JSON nested too deeply to read (arrays or objects deeper than Python's recursion limit)"


@dataclass(frozen=True)
class JsonLine:
    """One non-blank line of a JSONL file: its record, or what is wrong with it."""

    path: Path
    lineno: int
    record: Any = None
    field: str = ""  # where in the record the problem is, when it is in one field
    error: str | None = None

    @property
    def where(self) -> str:
        return f"{self.path}:{self.lineno}"

    def __str__(self) -> str:
        if self.error is None:
            return f"{self.where}: ok"
        return f"{self.where}: {self.field}: {self.error}" if self.field else f"{self.where}: {self.error}"


def decode_json_line(raw: bytes) -> tuple[Any, str | None]:
    """`(record, None)` for one line's bytes, or `(None, problem)` when they are not UTF-8 or not JSON."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg} (column {exc.colno})"
    except RecursionError:
        return None, TOO_DEEP


def unencodable_field(raw: bytes, record: Any) -> str | None:
    """Where a decoded line holds a lone surrogate (from a `\\ud800`-style escape), or None."""
    if not SURROGATE_ESCAPE.search(raw):  # only such an escape can yield one
        return None
    try:
        field = unencodable_path(record)
    except RecursionError:  # nested nearly as deep as the decoder allows: too deep to search
        return "(a part nested too deeply to search)"
    return None if field is None else field or "(record)"


def parse_json_line(raw: bytes) -> tuple[Any, str, str | None]:
    """`(record, "", None)` for a valid line's bytes, else `(None, field, problem)`."""
    record, problem = decode_json_line(raw)
    if problem is not None:
        return None, "", problem
    field = unencodable_field(raw, record)
    if field is not None:
        return None, field, UNENCODABLE_ESCAPE
    return record, "", None


def read_json_lines(path: str | Path) -> Iterator[JsonLine]:
    """Every non-blank line of `path`, parsed, or with its problem; never stops early."""
    path = Path(path)
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM) :]
            if not raw.strip():
                continue
            record, field, error = parse_json_line(raw)
            yield JsonLine(path, lineno, record, field, error)


def describe_problems(problems: Sequence[object], what: str = "invalid lines") -> str:
    """One problem as itself; several as "N {what}:" and the first `SHOWN_PROBLEMS`, one a line."""
    if len(problems) == 1:
        return str(problems[0])
    shown = "\n".join(f"  {p}" for p in problems[:SHOWN_PROBLEMS])
    more = f"\n  ... and {len(problems) - SHOWN_PROBLEMS} more" if len(problems) > SHOWN_PROBLEMS else ""
    return f"{len(problems)} {what}:\n{shown}{more}"


def iter_jsonl(path: str | Path, error: type[Exception] = ValueError) -> Iterator[tuple[str, Any]]:
    """Yield `("FILE:LINE", record)` for every valid non-blank line; after the last line,
    raise `error` listing every line that is not UTF-8, not JSON or not encodable."""
    bad: list[JsonLine] = []
    for line in read_json_lines(path):
        if line.error is None:
            yield line.where, line.record
        else:
            bad.append(line)
    if bad:
        raise error(describe_problems(bad))
