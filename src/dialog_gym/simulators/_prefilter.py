"""What makes the lexicons' regular expressions cheap to search, with the same matches:
`required_literals` (a pattern is skipped where none occurs), `context_free` (a sentence need
only be searched for the patterns its reply holds) and `BoundaryFirst` (a pattern that starts
with `\\b` is searched for its letters first).

`required_literals` gives the literals one of which every match of a regular expression
contains: a cheap test (`in`) that skips the search for most texts.

Python's `re` tries a pattern that starts with `\\b` or a lookbehind at every position of
the text; a lexicon of a hundred such patterns costs hundreds of microseconds per reply.
Most lexicon patterns hold a run of plain characters that any match must contain ("you
should have", "fault", "多大点事"); others hold a group of alternatives each of which does
("(?:though|that said|i do wonder) ..."). Where none of them occurs in the text, the pattern
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
def required_literals(pattern: str, shortest: int = 2) -> tuple[str, ...] | None:
    """Literals (each at least `shortest` characters) one of which every match of `pattern`
    contains: the longest run of literal characters it holds, as a one-tuple; else, where a
    group of alternatives must match once, a literal of each alternative (the group whose
    shortest literal is longest); None where neither is found (inline flags, an alternative
    with nothing literal): then every text must be searched."""
    try:  # the parser is `re`'s own, not a public API: anything unexpected means no prefilter, never a wrong one
        parsed = _sre_parse.parse(pattern)
        if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
            return None
        return _screen(list(parsed), shortest)
    except Exception:
        return None


def _screen(items: list, shortest: int) -> tuple[str, ...] | None:
    """`required_literals` of a parsed sequence of items, each of which matches once."""
    best, run, alternatives = "", [], None
    for op, value in items:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(value))
            continue
        if name in _ZERO_WIDTH:
            continue
        best = max(best, "".join(run), key=len)
        run = []
        options = None
        if name == "BRANCH":  # every match takes one of the branches
            screens = [_screen(list(branch), shortest) for branch in value[1]]
            if all(screens):
                options = tuple(dict.fromkeys(literal for screen in screens for literal in screen))
        elif name == "SUBPATTERN" and not value[1] and not value[2]:  # a group without flags, matched once
            options = _screen(list(value[3]), shortest)
        if options and (alternatives is None or min(map(len, options)) > min(map(len, alternatives))):
            alternatives = options
    best = max(best, "".join(run), key=len)
    return (best,) if len(best.strip()) >= shortest else alternatives


# Zero-width items whose result may differ where a sentence stands alone and where it stands
# in its text: anchors to the start or end, \B at an edge, and negative lookarounds (what
# stands beyond a sentence's edge can make them fail). `\b` cannot turn false in the text:
# a sentence (split after a sentence end or at a line break, stripped) that starts or ends
# with a word character has a space, a line break or a sentence end beside it there.
_EDGE_BOUND = ("ASSERT_NOT",)
_FREE_ANCHORS = ("AT_BOUNDARY",)


@lru_cache(maxsize=None)
def context_free(pattern: str) -> bool:
    """Whether every match of `pattern` in a sentence standing alone is a match in the text
    it is a sentence of: no anchor but `\\b`, no negative lookaround (a positive one only
    finds more in the text). False where unsure."""
    try:
        return _free(list(_sre_parse.parse(pattern)))
    except Exception:
        return False


def _free(items: list) -> bool:
    for op, value in items:
        name = str(op)
        if name in _EDGE_BOUND or (name == "AT" and str(value) not in _FREE_ANCHORS):
            return False
        if name == "ASSERT" and not _free(list(value[1])):
            return False
        if name == "BRANCH" and not all(_free(list(branch)) for branch in value[1]):
            return False
        if name == "SUBPATTERN" and not _free(list(value[3])):
            return False
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and not _free(list(value[2])):
            return False
        if name == "ATOMIC_GROUP" and not _free(list(value)):
            return False
        if name == "GROUPREF_EXISTS":
            return False
    return True


# `re` finds a pattern that starts with plain characters by scanning for them; one that starts
# with `\b` it tries at every position of the text, about ten times slower. A pattern that
# starts with `\b` and a letter (most of the English lexicons) is searched without the `\b`,
# and a match kept where no word character stands before it (the letter then begins a word).
def _boundary_then_letter(source: str) -> bool:
    """`source` is `\\b`, a word character, and the rest (no alternative around it all)."""
    if not source.startswith("\\b"):
        return False
    try:
        items = list(_sre_parse.parse(source))
    except Exception:
        return False
    return (
        len(items) >= 2 and str(items[0][0]) == "AT" and str(items[0][1]) == "AT_BOUNDARY"
        and str(items[1][0]) == "LITERAL" and (chr(items[1][1]).isalnum() or chr(items[1][1]) == "_")
    )


def _word_before(text: str, at: int) -> bool:
    return at > 0 and (text[at - 1].isalnum() or text[at - 1] == "_")  # `re`'s word characters


class BoundaryFirst:
    """A compiled pattern that starts with `\\b` and a letter, searched for its letters first:
    `search` and `finditer` find what the pattern's own would (`pattern` is its source)."""

    __slots__ = ("pattern", "_rest")

    def __init__(self, source: str):
        self.pattern = source
        self._rest = re.compile(source[2:])

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        while (match := self._rest.search(text, pos)) is not None and _word_before(text, match.start()):
            pos = match.start() + 1
        return match

    def finditer(self, text: str):
        pos = 0
        while (match := self.search(text, pos)) is not None:
            yield match
            pos = max(match.end(), match.start() + 1)

    def __repr__(self) -> str:
        return f"BoundaryFirst({self.pattern!r})"


def compile_lexicon_pattern(source: str) -> "re.Pattern[str] | BoundaryFirst":
    """`re.compile(source)`, or, for a pattern that starts with `\\b` and a letter, a
    `BoundaryFirst` that finds the same matches sooner."""
    return BoundaryFirst(source) if _boundary_then_letter(source) else re.compile(source)
