"""Episode files: JSONL, one `Episode` per line, appended atomically.

A run writes each finished episode as it arrives. Every record goes to the file in one
`os.write` of one complete line (record + newline) on a file descriptor opened with
`O_APPEND`, so a run that is killed leaves only whole lines, except possibly a torn last
line if the kill landed inside that single write. Readers skip a torn last line with a
warning naming the file and line; `EpisodeWriter` removes it (with the same warning)
before it appends, so a resumed run never glues a new record onto a broken one. A broken
line anywhere else is an error: it was not produced by an interrupted append.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dialog_gym._jsonl import UNENCODABLE_ESCAPE, decode_json_line, describe_problems, unencodable_field
from dialog_gym.episodes.record import Episode
from dialog_gym.text_guard import UNENCODABLE_POLICIES, UnencodableTextError, repair_unencodable, unencodable_path

EPISODES_FILE = "episodes.jsonl"


class EpisodeFileError(ValueError):
    """An episode file holds a line that is not a valid record; names the file and line."""


class TornLineWarning(UserWarning):
    """The last line of an episode file is incomplete (a run was interrupted mid-write)."""


def _encode(data: dict[str, Any]) -> bytes:
    line = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    try:
        return (line + "\n").encode("utf-8")
    except UnicodeEncodeError:
        field = unencodable_path(data) or "(record)"
        raise UnencodableTextError(
            f"episode record field {field} holds a lone surrogate, which UTF-8 cannot encode; nothing was written "
            "(EpisodeWriter(unencodable='repair') replaces such code points and names the fields in extra)"
        ) from None


def repair_record(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`data` with every string UTF-8 cannot encode repaired (`repair_unencodable`), and the
    dotted paths of the fields that were; `data` itself when there are none."""
    repaired: list[str] = []

    def fix(value: Any, path: str) -> Any:
        if isinstance(value, str):
            fixed = repair_unencodable(value)
            if fixed is not value:
                repaired.append(path or "(record)")
            return fixed
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                inner = f"{path}.{key}" if path else str(key)
                new_key = repair_unencodable(key) if isinstance(key, str) else key
                if new_key is not key:
                    repaired.append(inner)
                out[new_key] = fix(item, inner)
            return out
        if isinstance(value, (list, tuple)):
            return [fix(item, f"{path}.{i}" if path else str(i)) for i, item in enumerate(value)]
        return value

    if unencodable_path(data) is None:
        return data, []
    return fix(data, ""), repaired


def _torn_tail(fd: int) -> tuple[int, int] | None:
    """(offset of the torn last line, its line number) when the file does not end in a newline."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return None
    data = os.pread(fd, size, 0)
    start = data.rfind(b"\n") + 1
    return start, data.count(b"\n") + 1


@contextmanager
def _locked(fd: int) -> Iterator[None]:
    """An exclusive advisory lock: writers of one file (threads or processes) take turns."""
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


class EpisodeWriter:
    """Append episodes to a JSONL file, each as one whole line written with one `os.write`.

    >>> with EpisodeWriter("runs/x/episodes.jsonl") as writer:
    ...     writer.write(episode)

    Several writers may append to one file at once (processes or threads): each write, and
    the torn-line repair at opening, happens under an exclusive `flock` on the file.

    Arguments:
        path: the file; created (with its folder) if missing, appended to otherwise.
        fsync: also `os.fsync` after every record (survives a power cut, slower).
        unencodable: a record holding text that UTF-8 cannot encode (a lone surrogate, from
            a server or an agent) raises `UnencodableTextError` naming the field, and
            nothing is written (`"error"`, default); or is written with those code points
            replaced by U+FFFD and the repaired fields listed in its
            `extra["unencodable_repaired"]` (`"repair"`, what `dialog-gym eval` uses).
    """

    def __init__(self, path: str | Path, *, fsync: bool = False, unencodable: str = "error"):
        if unencodable not in UNENCODABLE_POLICIES:
            raise ValueError(f"unencodable must be one of {UNENCODABLE_POLICIES}, got {unencodable!r}")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self.unencodable = unencodable
        self.count = 0
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        with _locked(self._fd):
            torn = _torn_tail(self._fd)
            if torn is not None:
                offset, lineno = torn
                warnings.warn(
                    f"{self.path}:{lineno}: removing a torn last line ({os.fstat(self._fd).st_size - offset} bytes) "
                    "left by an interrupted run",
                    TornLineWarning,
                    stacklevel=2,
                )
                os.ftruncate(self._fd, offset)

    def write(self, record: Episode | dict[str, Any]) -> None:
        if self._fd is None:
            raise ValueError(f"EpisodeWriter for {self.path} is closed")
        fields = record.to_dict() if isinstance(record, Episode) else record
        if self.unencodable == "repair":
            fields, repaired = repair_record(fields)
            if repaired:
                extra = fields.get("extra") if isinstance(fields.get("extra"), dict) else {}
                fields = {**fields, "extra": {**extra, "unencodable_repaired": repaired}}
        data = _encode(fields)
        with _locked(self._fd):
            written = os.write(self._fd, data)
            # A regular file takes the whole buffer in one write unless the disk is full or
            # a signal interrupts; finish the line then rather than leave it torn.
            while written < len(data):
                written += os.write(self._fd, data[written:])
            if self.fsync:
                os.fsync(self._fd)
        self.count += 1

    def write_all(self, records: Iterable[Episode | dict[str, Any]]) -> int:
        n = 0
        for record in records:
            self.write(record)
            n += 1
        return n

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "EpisodeWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


def write_episodes(path: str | Path, episodes: Iterable[Episode | dict[str, Any]]) -> int:
    """Append episodes to `path`; returns how many were written."""
    with EpisodeWriter(path) as writer:
        return writer.write_all(episodes)


def resolve_episode_file(path: str | Path) -> Path:
    """A run folder means its `episodes.jsonl`; a file is itself."""
    path = Path(path)
    if path.is_dir():
        path = path / EPISODES_FILE
    if not path.is_file():
        raise FileNotFoundError(f"episode file not found: {path}")
    return path


def iter_episode_dicts(path: str | Path) -> Iterator[dict[str, Any]]:
    """The raw records of an episode file (or run folder), in file order, read line by line.

    A torn last line is skipped with a `TornLineWarning`. Any other invalid line (not
    UTF-8, not JSON, nested too deeply, not an object, a lone surrogate) does not stop the
    reading: after the last line, one `EpisodeFileError` names every such line as
    `FILE:LINE: problem`.
    """
    for _, record in _read(path, check=False):
        yield record


def iter_episodes(path: str | Path) -> Iterator[Episode]:
    """The `Episode` records of a file (or run folder); see `iter_episode_dicts`. A record
    whose fields have the wrong types (`episode_record_problem`) is an invalid line too."""
    for _, record in _read(path, check=True):
        yield Episode.from_dict(record)


def _read(path: str | Path, *, check: bool) -> Iterator[tuple[int, dict[str, Any]]]:
    path = resolve_episode_file(path)
    problems: list[str] = []
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            record, problem = decode_json_line(raw)
            if problem is not None and not raw.endswith(b"\n"):  # the last line, cut: an interrupted append
                warnings.warn(
                    f"{path}:{lineno}: skipping a torn last line ({len(raw)} bytes, no newline): "
                    "an interrupted run; it is not a complete record",
                    TornLineWarning,
                    stacklevel=3,
                )
                break
            if problem is None:
                field = unencodable_field(raw, record)
                if field is not None:
                    problem = f"{field}: {UNENCODABLE_ESCAPE}"
                elif not isinstance(record, dict):
                    problem = f"expected a JSON object, got {type(record).__name__}"
                elif check:
                    problem = episode_record_problem(record)
            if problem is not None:
                problems.append(f"{path}:{lineno}: {problem}")
            else:
                yield lineno, record
    if problems:
        raise EpisodeFileError(describe_problems(problems))


# -- what an Episode record must look like ------------------------------------------------
MAX_RECORD_DEPTH = 64  # lists and objects inside one another; dialog-gym writes fewer than 10


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) and math.isfinite(value)


def _optional(check: Any) -> Any:
    return lambda value: value is None or check(value)


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_dict(value: Any) -> bool:
    return isinstance(value, dict)


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


# (field, check, what it must be, required)
_EPISODE_FIELDS: tuple[tuple[str, Any, str, bool], ...] = (
    ("persona_id", _is_str, "a string", True),
    ("language", _is_str, "a string", True),
    ("hidden_need", _is_str, "a string", True),
    ("character_type", _is_str, "a string", True),
    ("preset", _is_str, "a string", True),
    ("opening", _is_str, "a string", True),
    ("messages", lambda v: isinstance(v, list), "a list", True),
    ("turns", lambda v: isinstance(v, list), "a list", True),
    ("final_mood", _is_int, "an integer", True),
    ("reward", _is_number, "a finite number", True),
    ("terminal_reason", _optional(_is_str), "a string or null", True),
    ("seed", _optional(_is_int), "an integer or null", False),
    ("group_id", _optional(_is_int), "an integer or null", False),
    ("episode_id", _optional(_is_str), "a string or null", False),
    ("simulator", _is_dict, "an object", False),
    ("agent", _is_dict, "an object", False),
    ("usage", lambda v: isinstance(v, dict) and all(_is_int(x) for x in v.values()), "an object of integers", False),
    ("error", _optional(_is_str), "a string or null", False),
    ("start_mood", _is_int, "an integer", False),
    ("think", lambda v: isinstance(v, bool), "true or false", False),
    ("rules", _is_dict, "an object", False),
    ("persona", _optional(_is_dict), "an object or null", False),
    ("source", _is_str, "a string", False),
    ("extra", _is_dict, "an object", False),
    ("version", _is_str, "a string", False),
    ("created_at", _is_number, "a finite number", False),
)
_TURN_FIELDS: tuple[tuple[str, Any, str, bool], ...] = (
    ("turn", _is_int, "an integer", True),
    ("reply", _is_str, "a string", True),
    ("user_reply", _is_str, "a string", True),
    ("delta", _is_int, "an integer", True),
    ("mood", _is_int, "an integer", True),
    ("action", _is_str, "a string", False),
    ("thought", _optional(_is_str), "a string or null", False),
    ("format_ok", lambda v: isinstance(v, bool), "true or false", False),
    ("requested_delta", _is_int, "an integer", False),
    ("reasoning", _is_str, "a string", False),
    ("clamped", lambda v: isinstance(v, bool), "true or false", False),
    ("wants_to_end", lambda v: isinstance(v, bool), "true or false", False),
    ("usage", lambda v: isinstance(v, dict) and all(_is_int(x) for x in v.values()), "an object of integers", False),
    ("errors", _is_str_list, "a list of strings", False),
    ("raw", _is_str_list, "a list of strings", False),
    ("reply_cut", lambda v: isinstance(v, bool), "true or false", False),
    ("action_repaired", lambda v: isinstance(v, bool), "true or false", False),
    ("action_chars", _is_int, "an integer", False),
    ("thought_chars", _is_int, "an integer", False),
)


def _depth(value: Any) -> int:
    """How many lists and objects are nested in `value` (iteratively: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_RECORD_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _field_problem(data: dict[str, Any], spec: tuple[tuple[str, Any, str, bool], ...], where: str) -> str | None:
    for name, check, what, required in spec:
        if name not in data:
            if required:
                return f"{where}{name}: missing"
            continue
        if not check(data[name]):
            return f"{where}{name}: must be {what}, got {_describe(data[name])}"
    return None


def _describe(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return f"{type(value).__name__} {text[:40] + '...' if len(text) > 40 else text}"


def episode_record_problem(record: dict[str, Any]) -> str | None:
    """What makes a parsed JSON object unusable as an `Episode` (a field missing, unknown or
    of the wrong type, nesting deeper than `MAX_RECORD_DEPTH`), naming the field; None when
    it is a valid record. Checked on reading, so that a bad record is reported with its
    file and line instead of failing later in a report, a resume or a rescore."""
    known = {name for name, *_ in _EPISODE_FIELDS}
    unknown = sorted(set(record) - known)
    if unknown:
        return f"unknown field(s) {unknown}"
    depth = _depth(record)
    if depth > MAX_RECORD_DEPTH:
        return f"nested more than {MAX_RECORD_DEPTH} levels deep (lists and objects inside one another)"
    problem = _field_problem(record, _EPISODE_FIELDS, "")
    if problem is not None:
        return problem
    for i, message in enumerate(record["messages"]):
        if not (isinstance(message, dict) and _is_str(message.get("role")) and _is_str(message.get("content"))):
            return f"messages.{i}: must be an object with string 'role' and 'content', got {_describe(message)}"
    for i, turn in enumerate(record["turns"]):
        if not isinstance(turn, dict):
            return f"turns.{i}: must be an object, got {_describe(turn)}"
        problem = _field_problem(turn, _TURN_FIELDS, f"turns.{i}.")
        if problem is not None:
            return problem
    return None


def read_episodes(*paths: str | Path) -> list[Episode]:
    """All episodes of the given files or run folders, in order."""
    return [episode for path in paths for episode in iter_episodes(path)]


def to_dataset_rows(episodes: Iterable[Episode]) -> list[dict[str, Any]]:
    """Flat rows that `datasets.Dataset.from_list` accepts (one per episode).

    Scalars stay columns; `messages` stays a list of `{role, content}`; the per-turn series
    (`moods`, `deltas`, `replies`, `user_replies`, `reasonings`) are lists; structures whose
    shape differs between records (turns, persona, rules, identities, extra) are JSON
    strings, so one schema fits every record.
    """
    rows = []
    for ep in episodes:
        usage = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0, **ep.usage}
        rows.append(
            {
                "episode_id": ep.episode_id or "",
                "persona_id": ep.persona_id,
                "language": ep.language,
                "hidden_need": ep.hidden_need,
                "character_type": ep.character_type,
                "preset": ep.preset,
                "seed": -1 if ep.seed is None else int(ep.seed),
                "group_id": -1 if ep.group_id is None else int(ep.group_id),
                "source": ep.source,
                "opening": ep.opening,
                "messages": [{"role": m["role"], "content": m["content"]} for m in ep.messages],
                "num_turns": ep.num_turns,
                "start_mood": ep.start_mood,
                "final_mood": ep.final_mood,
                "reward": float(ep.reward),
                "terminal_reason": ep.terminal_reason or "",
                "error": ep.error or "",
                "moods": [int(m) for m in ep.moods],
                "deltas": [int(t["delta"]) for t in ep.turns],
                "replies": [str(t["reply"]) for t in ep.turns],
                "user_replies": [str(t["user_reply"]) for t in ep.turns],
                "reasonings": [str(t["reasoning"]) for t in ep.turns],
                "prompt_tokens": int(usage["prompt_tokens"]),
                "completion_tokens": int(usage["completion_tokens"]),
                "simulator_calls": int(usage["calls"]),
                "think": bool(ep.think),
                "version": ep.version,
                "created_at": float(ep.created_at),
                "simulator": json.dumps(ep.simulator, ensure_ascii=False, sort_keys=True),
                "agent": json.dumps(ep.agent, ensure_ascii=False, sort_keys=True),
                "rules": json.dumps(ep.rules, ensure_ascii=False, sort_keys=True),
                "persona": json.dumps(ep.persona, ensure_ascii=False, sort_keys=True),
                "turns": json.dumps(ep.turns, ensure_ascii=False),
                "extra": json.dumps(ep.extra, ensure_ascii=False, sort_keys=True),
            }
        )
    return rows
