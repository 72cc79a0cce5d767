"""GRPO on dialog-gym's empathy dialogues, in one readable file (CleanRL style).

Each step samples `personas_per_step` training personas and plays `group_size` dialogues
with each (a group shares the persona and the user's opening line). The reward of a
dialogue is the final mood / 100 (RLVER); advantages are the rewards normalised within
their group and given to every token the policy wrote in that dialogue. The policy is
updated with the PPO-clip loss (token-mean aggregation), optionally with a k3 KL penalty
to the frozen initial policy.

    python examples/train_grpo.py --preset cpu-tiny --total_steps 2          # seconds, for CI
    python examples/train_grpo.py --preset cpu-smol --total_steps 40         # SmolLM2-135M, CPU
    python examples/train_grpo.py --preset gpu-7b --model /models/Qwen2.5-7B-Instruct \\
        --simulator_base_url http://127.0.0.1:8000/v1 --simulator_model deepseek-chat

Every hyperparameter is a field of `Args` below (`--help` lists them). Fields left at None
take the preset's value (see `rl_common.PRESETS`). Resume a run with `--resume`.
"""

from __future__ import annotations

import copy
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rl_common as rc  # noqa: E402


@dataclass
class Args:
    # run
    preset: str = "cpu-tiny"  # cpu-tiny | cpu-smol | gpu-7b
    model: Optional[str] = None  # "tiny", "smollm2" or a local model folder (gpu-7b)
    output_dir: str = "runs/grpo"
    seed: int = 0
    device: str = "auto"
    resume: bool = False  # continue from output_dir/checkpoint.pt
    # environment
    language: str = "en"
    rules: str = "rlver"  # mood preset: rlver | sage
    max_turns: Optional[int] = None  # agent turns per dialogue (RLVER: 8)
    simulator: Optional[str] = None  # rule | openai | transformers
    simulator_style: str = "vanilla"
    simulator_model: str = "deepseek-chat"
    simulator_base_url: Optional[str] = None
    reward_mode: str = "terminal"  # terminal (RLVER) | dense (adds each turn's mood change / 100)
    think: bool = False  # <think>...</think> then the reply; each turn its own sample
    # rollouts
    total_steps: int = 20
    personas_per_step: Optional[int] = None
    group_size: Optional[int] = None  # dialogues per persona (RLVER: 4)
    max_new_tokens: Optional[int] = None
    temperature: float = 1.0
    # optimisation
    learning_rate: Optional[float] = None
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    ppo_epochs: int = 1  # passes over each step's samples (one optimizer step each)
    clip_eps: float = 0.2
    kl_coef: float = 0.0  # k3 KL to the initial policy (RLVER: none)
    scale_rewards: bool = True  # divide by the group's std (Dr. GRPO: False)
    micro_batch_size: Optional[int] = None  # samples per forward pass; gradients accumulate
    bf16: Optional[bool] = None  # bf16 autocast (GPU only)
    gradient_checkpointing: Optional[bool] = None
    use_lora: bool = False
    lora_r: int = 16
    lora_alpha: int = 32
    # evaluation, logging
    eval_every: int = 0  # steps between evaluations on the test personas (0: first and last only)
    eval_personas: Optional[int] = None  # how many test personas (in file order)
    eval_temperature: float = 1.0
    eval_repeats: int = 1  # dialogues per test persona (each with its own seed)
    max_minutes: float = 0.0  # the whole run (evaluations included) ends within about this (0: no limit)
    save_every: int = 10
    plot: bool = True
    # unused by GRPO; kept so both trainers share the presets
    episodes_per_step: Optional[int] = None
    critic_learning_rate: Optional[float] = None


def main(args: Args) -> dict:
    run_started = time.monotonic()
    rc.apply_preset(args)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    device = rc.pick_device(args.device)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)

    # -- models ---------------------------------------------------------------------------
    policy, tokenizer = rc.load_policy(args)
    chat = rc.ChatTokens(tokenizer)  # refuses a template that breaks the prefix property
    reference = None
    if args.kl_coef > 0 and not args.use_lora:
        reference = copy.deepcopy(policy).eval().requires_grad_(False).to(device)
    if args.use_lora:
        policy = rc.add_lora(policy, args.lora_r, args.lora_alpha)
    if args.gradient_checkpointing:
        policy.gradient_checkpointing_enable()
        if args.use_lora:
            policy.enable_input_require_grads()
    policy.to(device)
    optimizer = torch.optim.AdamW(
        [p for p in policy.parameters() if p.requires_grad], lr=args.learning_rate, weight_decay=args.weight_decay
    )

    # -- data -----------------------------------------------------------------------------
    train_personas = rc.load_personas(args, "train")
    test_personas = rc.load_personas(args, "test")[: args.eval_personas] * args.eval_repeats
    simulator = rc.build_simulator(args)
    metrics = rc.MetricsLog(out / "metrics.jsonl")

    start_step = 0
    if args.resume:
        start_step = rc.load_checkpoint(out / "checkpoint.pt", modules={"policy": policy}, optimizers={"policy": optimizer}, rng=rng)
        metrics.truncate(after_step=start_step)

    def evaluate(step: int) -> list[float]:
        with rc.autocast(device, args.bf16):
            rewards, summary = rc.run_async(rc.aevaluate(policy, tokenizer, chat, test_personas, args, args.seed + 1, simulator))
        metrics.write({"step": step, **summary, "eval_rewards": rewards})
        return rewards

    eval_started = time.monotonic()
    eval_before = evaluate(0) if start_step == 0 else None
    eval_s = time.monotonic() - eval_started  # the final evaluation takes about as long

    # -- training loop --------------------------------------------------------------------
    from tqdm.auto import tqdm

    deadline = run_started + 60 * args.max_minutes if args.max_minutes > 0 else float("inf")
    step_s = 0.0
    last_step = start_step
    bar = tqdm(range(start_step, args.total_steps), initial=start_step, total=args.total_steps, desc="grpo")
    for step in bar:
        if time.monotonic() + step_s + 1.2 * eval_s > deadline:  # no time left for a step and the final eval
            if last_step > start_step:  # keep what was learnt before the time ran out
                rc.save_checkpoint(out / "checkpoint.pt", step=last_step, modules={"policy": policy}, optimizers={"policy": optimizer}, rng=rng, args=args)
            break
        started = time.perf_counter()
        chosen = rng.choice(len(train_personas), size=args.personas_per_step, replace=args.personas_per_step > len(train_personas))
        stats: dict = {}
        with rc.autocast(device, args.bf16):
            rollouts = rc.run_async(rc.arollout(
                policy, tokenizer, chat, [train_personas[i] for i in chosen], group_size=args.group_size,
                args=args, rng=rng, simulator=simulator, stats=stats,
            ))
        # A dialogue cut short by a simulator failure has no reward: it is logged, not trained on.
        scored = [r for r in rollouts if r.session.terminal_reason != "simulator_error"]
        # Group-normalised advantage of each dialogue, shared by all of its policy tokens.
        rewards = [r.reward for r in scored]
        advantages = rc.group_advantages(rewards, [r.group for r in scored], scale=args.scale_rewards)
        rc.assign_episode_advantages(scored, advantages)
        samples = [s for r in scored for s in r.samples]
        if not samples:
            raise RuntimeError(f"step {step + 1}: every dialogue ended in a simulator error; see the simulator's logs")
        num_tokens = sum(s.num_policy_tokens for s in samples)  # token-mean over the whole batch

        policy.train()
        train_started = time.perf_counter()
        totals = {"loss": 0.0, "clip_fraction": 0.0, "entropy": 0.0, "kl_old": 0.0, "kl_ref": 0.0}
        trained_tokens = 0
        for _ in range(args.ppo_epochs):
            optimizer.zero_grad(set_to_none=True)
            for micro in rc.micro_batches(samples, args.micro_batch_size, rng):
                batch = rc.collate(micro, tokenizer.pad_token_id, device)
                mask = batch["mask"]
                with rc.autocast(device, args.bf16):
                    logp, entropy = rc.token_logprobs(policy, batch, args.temperature)
                loss, clip_fraction = rc.ppo_clip_loss(
                    logp, batch["old_logprobs"], batch["advantages"], mask, clip_eps=args.clip_eps, normalizer=num_tokens
                )
                if args.kl_coef > 0:
                    with torch.no_grad(), rc.autocast(device, args.bf16):
                        if args.use_lora:
                            with policy.disable_adapter():
                                ref_logp, _ = rc.token_logprobs(policy, batch, args.temperature, with_entropy=False)
                        else:
                            ref_logp, _ = rc.token_logprobs(reference, batch, args.temperature, with_entropy=False)
                    kl_ref = rc.masked_sum(rc.k3_kl(logp, ref_logp), mask) / num_tokens
                    loss = loss + args.kl_coef * kl_ref
                    totals["kl_ref"] += kl_ref.item() / args.ppo_epochs
                loss.backward()
                share = float(mask.sum()) / num_tokens / args.ppo_epochs
                totals["loss"] += loss.item() / args.ppo_epochs
                totals["clip_fraction"] += clip_fraction.item() * share
                totals["entropy"] += (rc.masked_sum(entropy.detach(), mask) / mask.sum().clamp(min=1)).item() * share
                kl_old = rc.k3_kl(logp.detach(), batch["old_logprobs"])
                totals["kl_old"] += (rc.masked_sum(kl_old, mask) / mask.sum().clamp(min=1)).item() * share
                trained_tokens += int(batch["attention_mask"].sum())
            grad_norm = torch.nn.utils.clip_grad_norm_(policy.parameters(), args.max_grad_norm)
            optimizer.step()
        train_s = time.perf_counter() - train_started

        record = {
            "step": step + 1,
            **rc.episode_metrics(rollouts),
            **totals,
            "grad_norm": float(grad_norm),
            "policy_tokens": num_tokens,
            "generation_tokens_per_s": stats["generated_tokens"] / max(stats["generation_s"], 1e-9),
            "train_tokens_per_s": trained_tokens / max(train_s, 1e-9),
            "step_s": time.perf_counter() - started,
        }
        metrics.write(record)
        step_s = max(step_s, record["step_s"])
        bar.set_postfix(reward=f"{record['reward']:.3f}", turns=f"{record['turns']:.1f}", kl=f"{record['kl_old']:.4f}")

        if args.eval_every and (step + 1) % args.eval_every == 0 and step + 1 < args.total_steps:
            evaluate(step + 1)
        if (step + 1) % args.save_every == 0 or step + 1 == args.total_steps:
            rc.save_checkpoint(out / "checkpoint.pt", step=step + 1, modules={"policy": policy},
                               optimizers={"policy": optimizer}, rng=rng, args=args)
        last_step = step + 1

    eval_after = evaluate(last_step)
    policy.save_pretrained(out / "policy")
    tokenizer.save_pretrained(out / "policy")
    plot = rc.plot_reward_curve(out / "metrics.jsonl", out / "reward_curve.png", title=f"GRPO {args.preset}") if args.plot else None
    return {"eval_before": eval_before, "eval_after": eval_after, "steps": last_step, "metrics": str(out / "metrics.jsonl"),
            "plot": str(plot) if plot else None, "args": asdict(args)}


if __name__ == "__main__":
    from transformers import HfArgumentParser

    (cli_args,) = HfArgumentParser(Args).parse_args_into_dataclasses()
    summary = main(cli_args)
    print(f"eval reward before {np.mean(summary['eval_before'] or [float('nan')]):.3f} "
          f"after {np.mean(summary['eval_after']):.3f}; metrics {summary['metrics']}; plot {summary['plot']}")
