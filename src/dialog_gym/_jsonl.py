"""Read JSON Lines files with errors that name the file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def iter_jsonl(path: str | Path, error: type[Exception] = ValueError) -> Iterator[tuple[str, Any]]:
    """Yield `("FILE:LINE", record)` for every non-blank line; raise `error` on invalid JSON."""
    path = Path(path)
    with path.open(encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                yield where, json.loads(raw)
            except json.JSONDecodeError as exc:
                raise error(f"{where}: invalid JSON: {exc.msg}") from None
