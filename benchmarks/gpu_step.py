"""Time one GRPO step of a Qwen2.5-7B-architecture policy on one GPU.

No weights are downloaded: the model is built from Qwen2.5-7B's architecture (written out
below) with random initialisation, directly in bf16 on the GPU. The step is the trainers'
own code path (`examples/rl_common.py`): batched sampling with `rc.generate` (ids and
log-probs kept as generated), group-normalised advantages, then PPO-clip forward/backward
over micro-batches with gradient accumulation and gradient checkpointing, and one AdamW
update of all parameters. Prompts are random ids (the speed of a random model equals a
trained one's; only the number of generated tokens could differ, and it is measured).

Reported: generation tokens/s, training tokens/s (every token of every sequence through
forward + backward), model FLOPs utilisation (MFU) of the training pass and of the whole
step, peak memory. Model FLOPs per token: training 6N + 12*L*d*S, generation
2N + 4*L*d*ctx (N: parameters without the input embedding, L layers, d hidden size,
S sequence length, ctx the mean attended context); gradient checkpointing's recomputation
is not counted (MFU, not hardware FLOPs utilisation).

    python benchmarks/gpu_step.py                     # H100/H200: about 3-5 minutes
    python benchmarks/gpu_step.py --dry_run_cpu true  # a tiny config on CPU, to check the script
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import rl_common as rc  # noqa: E402
import train_grpo  # noqa: E402  (the GRPO advantages and loss)

# Qwen2.5-7B-Instruct's config.json (architecture only).
QWEN25_7B = dict(
    vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
    num_attention_heads=28, num_key_value_heads=4, max_position_embeddings=32768,
    rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=False, hidden_act="silu",
)
TINY = dict(QWEN25_7B, vocab_size=1024, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2)


@dataclass
class Args:
    episodes: int = 32  # sequences in the step (RLVER's batch); GRPO groups of 4
    group_size: int = 4
    prompt_tokens: int = 512  # a few turns of dialogue context
    new_tokens: int = 256  # one reply
    micro_batch_size: int = 4
    gradient_checkpointing: bool = True
    learning_rate: float = 1e-6
    temperature: float = 1.0
    peak_tflops: float = 989.0  # dense bf16 peak of H100/H200 SXM; set for other GPUs
    seed: int = 0
    out: Optional[str] = None  # also write the figures as JSON here
    dry_run_cpu: bool = False  # tiny config on CPU: checks the script, figures meaningless


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def build_model(args: Args, device: torch.device):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(**(TINY if args.dry_run_cpu else QWEN25_7B))
    dtype = torch.float32 if args.dry_run_cpu else torch.bfloat16
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = Qwen2ForCausalLM(config)
    finally:
        torch.set_default_dtype(previous)
    model.config.use_cache = True
    return model, config


def flops_per_token(config, n_params: int, context: float, training: bool) -> float:
    attention = config.num_hidden_layers * config.hidden_size * context
    return 6 * n_params + 12 * attention if training else 2 * n_params + 4 * attention


def main(args: Args) -> dict:
    if not args.dry_run_cpu and not torch.cuda.is_available():
        raise SystemExit("gpu_step.py needs a CUDA GPU (or --dry_run_cpu true to check the script on CPU)")
    device = torch.device("cpu" if args.dry_run_cpu else "cuda")
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    if args.dry_run_cpu:
        args.episodes, args.prompt_tokens, args.new_tokens, args.micro_batch_size = 4, 16, 8, 2

    started = time.perf_counter()
    model, config = build_model(args, device)
    sync(device)
    build_s = time.perf_counter() - started
    n_params = sum(p.numel() for p in model.parameters()) - model.get_input_embeddings().weight.numel()
    tokenizer = rc.build_byte_tokenizer()  # only its eos / pad ids are used; ids are random
    vocab = config.vocab_size
    prompts = [rng.integers(300, vocab, size=args.prompt_tokens).tolist() for _ in range(args.episodes // args.group_size)]
    prompts = [p for p in prompts for _ in range(args.group_size)]  # a group shares its prompt

    # -- warm-up: kernels, allocator, CUDA graphs of attention --------------------------
    rc.generate(model, tokenizer, prompts[: args.micro_batch_size], max_new_tokens=4, temperature=args.temperature)

    # -- generation --------------------------------------------------------------------
    sync(device)
    t0 = time.perf_counter()
    gens = rc.generate(model, tokenizer, prompts, max_new_tokens=args.new_tokens, temperature=args.temperature)
    sync(device)
    generation_s = time.perf_counter() - t0
    generated = sum(len(g.ids) for g in gens)

    # -- one GRPO update ----------------------------------------------------------------
    rewards = rng.uniform(0, 1, size=len(gens))
    advantages = train_grpo.group_advantages(rewards, np.arange(len(gens)) // args.group_size)
    samples = []
    for i, (prompt, gen) in enumerate(zip(prompts, gens)):
        s = rc.Sample(episode=i)
        s.extend(prompt, policy=False)
        s.extend(gen.ids, policy=True, logprobs=gen.logprobs)
        s.advantages = [float(advantages[i]) * m for m in s.policy_mask]
        samples.append(s)
    num_policy_tokens = sum(s.num_policy_tokens for s in samples)
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, fused=device.type == "cuda")

    def train_pass() -> tuple[int, float]:
        optimizer.zero_grad(set_to_none=True)
        tokens, clip = 0, 0.0
        for k in range(0, len(samples), args.micro_batch_size):
            batch = rc.collate(samples[k : k + args.micro_batch_size], tokenizer.pad_token_id, device)
            with rc.autocast(device, bf16=True):
                logp, _ = rc.token_logprobs(model, batch, args.temperature, with_entropy=False)
            loss, clip_fraction = train_grpo.ppo_clip_loss(logp, batch["old_logprobs"], batch["advantages"], batch["mask"],
                                                           clip_eps=0.2, normalizer=num_policy_tokens)
            loss.backward()
            tokens += int(batch["attention_mask"].sum())
            clip += float(clip_fraction)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return tokens, clip

    # The first update allocates AdamW's state; time the second (also includes the mismatch
    # of log-probs between generation and training: first-pass clip fraction is reported).
    _, first_clip = train_pass()
    sync(device)
    t0 = time.perf_counter()
    train_tokens, _ = train_pass()
    sync(device)
    train_s = time.perf_counter() - t0

    seq_len = args.prompt_tokens + generated / len(gens)
    train_flops = train_tokens * flops_per_token(config, n_params, seq_len, training=True)
    gen_flops = generated * flops_per_token(config, n_params, args.prompt_tokens + args.new_tokens / 2, training=False)
    peak = args.peak_tflops * 1e12
    result = {
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu (dry run)",
        "params_without_embedding": n_params,
        "build_s": round(build_s, 2),
        "episodes": len(gens),
        "generated_tokens": generated,
        "generation_s": round(generation_s, 3),
        "generation_tokens_per_s": round(generated / generation_s, 1),
        "generation_mfu": round(gen_flops / generation_s / peak, 4),
        "train_tokens": train_tokens,
        "train_s": round(train_s, 3),
        "train_tokens_per_s": round(train_tokens / train_s, 1),
        "train_mfu": round(train_flops / train_s / peak, 4),
        "step_s": round(generation_s + train_s, 3),
        "step_mfu": round((train_flops + gen_flops) / (generation_s + train_s) / peak, 4),
        "first_pass_clip_fraction_sum": round(first_clip, 4),
        "peak_memory_gib": round(torch.cuda.max_memory_allocated(device) / 2**30, 1) if device.type == "cuda" else None,
        "args": asdict(args),
    }
    print(json.dumps(result, indent=2))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    from transformers import HfArgumentParser

    (cli_args,) = HfArgumentParser(Args).parse_args_into_dataclasses()
    main(cli_args)
