"""`UnicodeText`: a Gymnasium space of arbitrary Unicode strings (spaces, CJK, emoji...)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.spaces import Space

# Sampling alphabet: ASCII letters, digits, punctuation and space, Latin-1 letters, common
# CJK ideographs and a few emoji. `contains` accepts every `str`, whatever its characters.
_SAMPLE_ALPHABET = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,!?'\"-:;()\n"
    "éèàüöäçñßø"
    "我你他她的了是不在有这人们就说好想心里事情难过开朋友工作家妈爸"
    "😀🙂😢❤️"
)


class UnicodeText(Space[str]):
    """Any Python `str` of at most `max_length` code points (and at least `min_length`).

    Gymnasium's `Text` space defaults to 62 alphanumerics, so a real chat message with a
    space or a Chinese character is outside it. Samples are drawn from a mixed alphabet.
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | np.random.Generator | None = None):
        if not 0 <= min_length <= max_length:
            raise ValueError(f"need 0 <= min_length <= max_length, got {min_length} and {max_length}")
        self.max_length = int(max_length)
        self.min_length = int(min_length)
        super().__init__(dtype=str, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            raise NotImplementedError("UnicodeText.sample does not support masks")
        length = int(self.np_random.integers(self.min_length, min(self.max_length, 64) + 1))
        picks = self.np_random.integers(len(_SAMPLE_ALPHABET), size=length)
        return "".join(_SAMPLE_ALPHABET[i] for i in picks)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText(min_length={self.min_length}, max_length={self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, UnicodeText) and (self.min_length, self.max_length) == (other.min_length, other.max_length)

    def to_jsonable(self, sample_n):
        return list(sample_n)

    def from_jsonable(self, sample_n):
        return list(sample_n)
