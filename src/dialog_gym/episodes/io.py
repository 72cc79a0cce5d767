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
import os
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dialog_gym._jsonl import UNENCODABLE_ESCAPE, decode_json_line, describe_problems, unencodable_field
from dialog_gym.episodes.record import Episode

EPISODES_FILE = "episodes.jsonl"


class EpisodeFileError(ValueError):
    """An episode file holds a line that is not a valid record; names the file and line."""


class TornLineWarning(UserWarning):
    """The last line of an episode file is incomplete (a run was interrupted mid-write)."""


def _encode(record: Episode | dict[str, Any]) -> bytes:
    data = record.to_dict() if isinstance(record, Episode) else record
    line = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return (line + "\n").encode("utf-8")


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
    """

    def __init__(self, path: str | Path, *, fsync: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
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
        data = _encode(record)
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
    """The raw records of an episode file (or run folder), in file order.

    A torn last line is skipped with a `TornLineWarning`. Any other invalid line (not
    UTF-8, not JSON, not an object, a lone surrogate) does not stop the reading: after the
    last line, one `EpisodeFileError` names every such line as `FILE:LINE: problem`.
    """
    path = resolve_episode_file(path)
    with path.open("rb") as fh:
        lines = fh.read().split(b"\n")
    # After a final newline, split leaves an empty last element: the file ended cleanly.
    last = len(lines)
    problems: list[str] = []
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        record, problem = decode_json_line(raw)
        if problem is not None and lineno == last:  # no newline after it: an interrupted append
            warnings.warn(
                f"{path}:{lineno}: skipping a torn last line ({len(raw)} bytes, no newline): "
                "an interrupted run; it is not a complete record",
                TornLineWarning,
                stacklevel=2,
            )
            break
        if problem is None:
            field = unencodable_field(raw, record)
            if field is not None:
                problem = f"{field}: {UNENCODABLE_ESCAPE}"
            elif not isinstance(record, dict):
                problem = f"expected a JSON object, got {type(record).__name__}"
        if problem is not None:
            problems.append(f"{path}:{lineno}: {problem}")
        else:
            yield record
    if problems:
        raise EpisodeFileError(describe_problems(problems))


def iter_episodes(path: str | Path) -> Iterator[Episode]:
    """The `Episode` records of a file (or run folder); see `iter_episode_dicts`."""
    for lineno, record in enumerate(iter_episode_dicts(path), start=1):
        try:
            yield Episode.from_dict(record)
        except (TypeError, ValueError) as exc:
            raise EpisodeFileError(f"{path}: record {lineno}: not an Episode: {exc}") from None


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
