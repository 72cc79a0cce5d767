"""Read episode records of any supported format: dialog-gym JSONL (or a run folder), or a
SAGE benchmark result file (detected from its first record)."""

from __future__ import annotations

import json
from pathlib import Path

from dialog_gym.episodes.io import read_episodes
from dialog_gym.episodes.record import Episode
from dialog_gym.episodes.sage import import_sage

FORMATS = ("auto", "episodes", "sage")


def detect_format(path: str | Path) -> str:
    """`"sage"` for a SAGE result file, `"episodes"` for anything else (run folders included)."""
    path = Path(path)
    if path.is_dir():
        return "episodes"
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                try:
                    first = json.loads(line)
                except json.JSONDecodeError:
                    return "episodes"  # the episode reader names the broken line
                is_sage = isinstance(first, dict) and "history" in first and "emo_point" in first
                return "sage" if is_sage else "episodes"
    return "episodes"


def load_episodes(*paths: str | Path, format: str = "auto") -> list[Episode]:
    """All episodes of the given files or folders, in order."""
    if format not in FORMATS:
        raise ValueError(f"unknown episode format {format!r}; expected one of {FORMATS}")
    episodes: list[Episode] = []
    for path in paths:
        kind = detect_format(path) if format == "auto" else format
        episodes.extend(import_sage(path) if kind == "sage" else read_episodes(path))
    return episodes
