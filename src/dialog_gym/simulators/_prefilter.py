"""A literal that every match of a regular expression contains: a cheap test (`in`) that
skips the search for most texts.

Python's `re` tries a pattern that starts with `\\b` or a lookbehind at every position of
the text; a lexicon of a hundred such patterns costs hundreds of microseconds per reply.
Most lexicon patterns hold a run of plain characters that any match must contain ("you
should have", "fault", "多大点事"); where that run is absent from the text, the pattern
cannot match, and the search is skipped. The result is the same, only faster.
"""

from __future__ import annotations

import re
from functools import lru_cache

try:  # the parser `re` itself uses (Python 3.11+), else its older name
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_parse as _sre_parse  # type: ignore[no-redef]

# Zero-width items keep the characters around them adjacent in every match.
_ZERO_WIDTH = ("AT", "ASSERT", "ASSERT_NOT")


@lru_cache(maxsize=None)
def required_literal(pattern: str, shortest: int = 2) -> str | None:
    """The longest run of literal characters (at least `shortest`) that every match of
    `pattern` contains, or None where no such run is found (inline flags, alternation at the
    top, nothing literal): then every text must be searched."""
    try:  # the parser is `re`'s own, not a public API: anything unexpected means no prefilter, never a wrong one
        parsed = _sre_parse.parse(pattern)
        if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
            return None
    except Exception:
        return None
    best, run = "", []
    for op, value in parsed:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(value))
            continue
        if name in _ZERO_WIDTH:
            continue
        best = max(best, "".join(run), key=len)
        run = []
    best = max(best, "".join(run), key=len)
    return best if len(best.strip()) >= shortest else None
