"""Checks on text at the package's edges, before it reaches a simulator or a file.

Python's `str` can hold code points that UTF-8 cannot encode: *lone surrogates*
(U+D800-U+DFFF), which a broken `"\\ud800"` JSON escape or a `surrogateescape` decode
leaves behind. Any HTTP request, tokenizer or UTF-8 file that receives one fails, every
time, so they are caught here, once, with an error that names the text they are in.

- `lone_surrogate(text)`: the index of the first unencodable code point, or None.
- `check_encodable(text, what)`: raises `UnencodableTextError` naming `what`.
- `repair_unencodable(text)`: joins surrogate pairs, replaces lone ones with U+FFFD.
- `unencodable_path(value)`: where in a JSON-like value an unencodable string sits.
- `ReplyGuard`: what of an agent's reply may reach a simulator: at most `max_chars`
  characters (and `max_tokens` tokens of a given tokenizer), and what to do with
  unencodable text (`"error"` or `"repair"`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

DEFAULT_MAX_REPLY_CHARS = 8_000
UNENCODABLE_POLICIES = ("error", "repair")

_SURROGATE = re.compile("[\ud800-\udfff]")
# A JSON escape of a surrogate: the only way UTF-8 bytes can decode to a lone one.
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")

TokenCounter = Callable[[str], int]


class UnencodableTextError(ValueError):
    """Text holds a code point that UTF-8 cannot encode (a lone surrogate)."""


def lone_surrogate(text: str) -> int | None:
    """The index of the first surrogate code point in `text` (unencodable in UTF-8), or None."""
    match = _SURROGATE.search(text)
    return None if match is None else match.start()


def _preview(text: str, index: int, width: int = 24) -> str:
    start = max(0, index - width)
    snippet = text[start : index + width]
    return ("..." if start else "") + repr(snippet) + ("..." if index + width < len(text) else "")


def check_encodable(text: str, what: str = "text") -> None:
    """Raise `UnencodableTextError` naming `what` when `text` cannot be encoded as UTF-8."""
    index = lone_surrogate(text)
    if index is not None:
        raise UnencodableTextError(
            f"{what} holds a lone surrogate U+{ord(text[index]):04X} at index {index}, which UTF-8 cannot "
            f"encode, so no simulator or file can take it: {_preview(text, index)}"
        )


def repair_unencodable(text: str) -> str:
    """`text` with surrogate pairs joined into the character they encode and lone ones
    replaced by U+FFFD; unchanged (the same object) when it is encodable already."""
    if lone_surrogate(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def unencodable_path(value: Any, path: str = "") -> str | None:
    """The dotted path (`"turns.2.reply"`; `""` for `value` itself) of the first string in a
    JSON-like value, keys included, that UTF-8 cannot encode; None when there is none."""
    if isinstance(value, str):
        return path if lone_surrogate(value) is not None else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            inner = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and lone_surrogate(key) is not None:
                return inner
            found = unencodable_path(item, inner)
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = unencodable_path(item, f"{path}.{i}" if path else str(i))
            if found is not None:
                return found
    return None


class _EncodedLength:
    """How many tokens a Hugging Face tokenizer makes of a text (picklable, unlike a lambda)."""

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer

    def __call__(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))


def token_counter(tokenizer: Any) -> TokenCounter:
    """A `str -> int` token count from a Hugging Face tokenizer (anything with `encode`),
    a local tokenizer folder (loaded with `transformers.AutoTokenizer`), or a callable."""
    if isinstance(tokenizer, str):
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(tokenizer)
    if callable(getattr(tokenizer, "encode", None)):
        return _EncodedLength(tokenizer)
    if callable(tokenizer):
        return tokenizer
    raise TypeError(
        f"tokenizer must be a tokenizer with encode(), a local tokenizer path or a callable counting tokens, "
        f"got {type(tokenizer).__name__}"
    )


@dataclass(frozen=True)
class GuardedReply:
    """What of an agent's reply reaches the simulator, and what was done to it."""

    text: str
    cut: bool = False  # shortened to the guard's limits
    repaired: bool = False  # unencodable code points replaced


@dataclass(frozen=True)
class ReplyGuard:
    """What of an agent's reply may reach a simulator.

    Arguments:
        max_chars: at most this many characters (code points) reach the simulator; a longer
            reply is cut to its first `max_chars`. Default 8,000: about 1,400 English words,
            1.7 times the longest reply in the SAGE benchmark's recorded results (4,643, by
            openai-o1), far past where the rule simulator's wall-of-text penalty peaks, and
            a bounded request for an LLM simulator. None: no limit.
        max_tokens: also at most this many tokens of `tokenizer` (the longest prefix that
            fits). None (default): no token budget.
        tokenizer: counts tokens for `max_tokens`: a Hugging Face tokenizer, a local
            tokenizer folder, or a callable `str -> int`. Required with `max_tokens`.
        unencodable: an action (its thought included) that UTF-8 cannot encode, because it
            holds a lone surrogate, raises `UnencodableTextError` naming the action before
            anything is sent or recorded (`"error"`, default), or has those code points
            replaced by U+FFFD (`"repair"`).

    The cut reply is what the simulator sees and what the history keeps; the turn's record
    keeps the agent's action (and thought) up to twice `max_chars`, with the full length in
    `action_chars` when it was longer (`dialog_gym.episodes.Episode`).
    """

    max_chars: int | None = DEFAULT_MAX_REPLY_CHARS
    max_tokens: int | None = None
    tokenizer: Any = field(default=None, compare=False, repr=False)
    unencodable: Literal["error", "repair"] = "error"
    _count_tokens: TokenCounter | None = field(default=None, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("max_chars", "max_tokens"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"ReplyGuard.{name} must be a positive int or None, got {value!r}")
        if self.unencodable not in UNENCODABLE_POLICIES:
            raise ValueError(f"ReplyGuard.unencodable must be one of {UNENCODABLE_POLICIES}, got {self.unencodable!r}")
        if self.max_tokens is not None:
            if self.tokenizer is None:
                raise ValueError("ReplyGuard.max_tokens needs a tokenizer (a tokenizer, a local path or a token-counting callable)")
            object.__setattr__(self, "_count_tokens", token_counter(self.tokenizer))

    @classmethod
    def resolve(cls, value: "ReplyGuard | Mapping[str, Any] | None") -> "ReplyGuard":
        """What users pass as `reply_guard=`: None (the defaults), a mapping of fields, a guard."""
        if value is None:
            return cls()
        if isinstance(value, ReplyGuard):
            return value
        if isinstance(value, Mapping):
            known = {f.name for f in fields(cls) if f.init}
            unknown = set(value) - known
            if unknown:
                raise ValueError(f"unknown reply_guard field(s) {sorted(unknown)}; expected some of {sorted(known)}")
            return cls(**value)
        raise TypeError(f"reply_guard must be a ReplyGuard, a mapping of its fields or None, got {type(value).__name__}")

    def encodable(self, text: str, what: str = "action") -> tuple[str, bool]:
        """`(text, repaired)`: `text` as UTF-8 can carry it. Under `"error"` an unencodable
        text raises `UnencodableTextError` naming `what`; under `"repair"` it is repaired."""
        if self.unencodable == "error":
            check_encodable(text, what)
            return text, False
        fixed = repair_unencodable(text)
        return fixed, fixed is not text

    def cap(self, reply: str) -> tuple[str, bool]:
        """`(text, cut)`: the longest prefix of `reply` within `max_chars` and `max_tokens`."""
        text = reply if self.max_chars is None else reply[: self.max_chars]
        if self._count_tokens is not None and self.max_tokens is not None:
            text = self._fit_tokens(text, self.max_tokens, self._count_tokens)
        return text, len(text) < len(reply)

    def apply(self, reply: str, what: str = "action") -> GuardedReply:
        """What of `reply` may reach a simulator: `encodable`, then `cap`."""
        text, repaired = self.encodable(reply, what)
        text, cut = self.cap(text)
        return GuardedReply(text, cut=cut, repaired=repaired)

    @staticmethod
    def _fit_tokens(text: str, budget: int, count: TokenCounter) -> str:
        """The longest prefix of `text` (found by bisection) whose token count fits `budget`."""
        if count(text) <= budget:
            return text
        fits, too_long = 0, len(text)  # invariant: text[:fits] fits, text[:too_long] does not
        while too_long - fits > 1:
            middle = (fits + too_long) // 2
            if count(text[:middle]) <= budget:
                fits = middle
            else:
                too_long = middle
        return text[:fits]
