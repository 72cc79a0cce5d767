"""PPO with a critic on dialog-gym's empathy dialogues, in one readable file (CleanRL style).

RLVER's PPO recipe: each step plays `episodes_per_step` dialogues with training personas;
the reward (final mood / 100) sits on the last token the policy wrote; a critic (a copy of
the policy's transformer with a scalar head) estimates values per token; GAE (gamma =
lambda = 1 by default, as RLVER) over the policy's tokens gives advantages and returns;
the actor takes the PPO-clip loss (token mean), the critic the clipped value loss. User
turns inside the trajectory are context only: they are neither trained on nor timesteps.

    python examples/train_ppo.py --setup cpu-tiny --total_steps 2
    python examples/train_ppo.py --setup cpu-smol --total_steps 40
    python examples/train_ppo.py --setup gpu-7b --model /models/Qwen2.5-7B-Instruct \\
        --simulator_base_url http://127.0.0.1:8000/v1 --simulator_model deepseek-chat

Every hyperparameter is a field of `Args` below (`--help` lists them). Fields left at None
take the setup's value (see `rl_common.SETUPS`). Resume a run with `--resume`. The file
reads top to bottom as the algorithm: rollouts, values and GAE, the losses, the training
loop; `rl_common` holds the plumbing (models, chat-template tokens, checkpoints, plots).
"""

from __future__ import annotations

import copy
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import torch

from dialog_gym.personas import Persona
from dialog_gym.session import DialogConfig

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rl_common as rc  # noqa: E402


@dataclass
class Args:
    # run
    setup: str = "cpu-tiny"  # hardware configuration: cpu-tiny | cpu-smol | gpu-7b
    model: Optional[str] = None  # "tiny", "smollm2" or a local model folder (gpu-7b)
    output_dir: str = "runs/ppo"
    seed: int = 0
    device: str = "auto"
    resume: bool = False  # continue from output_dir/checkpoint.pt
    # environment
    language: str = "en"
    rules: str = "rlver"  # mood rules preset: rlver | sage
    max_turns: Optional[int] = None  # RLVER: 8
    simulator: Optional[str] = None  # calibrated | rule | openai | transformers | any registered simulator
    simulator_style: str = "vanilla"
    simulator_model: Optional[str] = None  # openai: the model name (gpu-7b: deepseek-chat); transformers: a folder, .gguf or "smollm2"
    simulator_base_url: Optional[str] = None
    reward_mode: str = "terminal"  # terminal (RLVER) | dense (each turn's mood change / 100 on its last token)
    think: bool = False  # <think>...</think> then the reply; each turn its own sample
    # rollouts
    total_steps: int = 20
    episodes_per_step: Optional[int] = None  # RLVER: 32
    max_new_tokens: Optional[int] = None
    temperature: float = 1.0
    # optimisation
    learning_rate: Optional[float] = None  # actor (RLVER: 1e-6)
    critic_learning_rate: Optional[float] = None  # critic (RLVER: 5e-6)
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    ppo_epochs: int = 1
    clip_eps: float = 0.2
    value_clip: float = 0.2
    vf_coef: float = 1.0
    gamma: float = 1.0
    lam: float = 1.0
    whiten_advantages: bool = True  # normalise advantages over the batch's policy tokens
    kl_coef: float = 0.0  # k3 KL to the initial policy (RLVER: none)
    micro_batch_size: Optional[int] = None
    bf16: Optional[bool] = None
    gradient_checkpointing: Optional[bool] = None
    use_lora: bool = False  # LoRA on the actor; the critic stays a full copy
    lora_r: int = 16
    lora_alpha: int = 32
    # evaluation, logging
    eval_every: int = 0
    eval_personas: Optional[int] = None
    eval_temperature: float = 1.0
    eval_repeats: int = 1  # dialogues per test persona (each with its own seed)
    max_minutes: float = 0.0  # the whole run (evaluations included) ends within about this (0: no limit)
    save_every: int = 10
    plot: bool = True
    # unused by PPO; kept so both trainers share the setups
    personas_per_step: Optional[int] = None
    group_size: Optional[int] = None


# ------------------------------------------------------------------------------------------
# Rollouts: whole dialogues, the policy's tokens kept exactly as sampled
# ------------------------------------------------------------------------------------------
def play_dialogues(
    policy, tokenizer, chat: rc.ChatTokens, config: DialogConfig, personas: Sequence[Persona], *,
    rng: np.random.Generator, max_new_tokens: int, temperature: float, stats: dict | None = None,
) -> list[rc.Trajectory]:
    """Play one dialogue with each persona.

    Every live dialogue gets its next reply from one batched `generate` per turn; the
    simulator calls of a turn run concurrently. A failed opening line is a
    `simulator_error` dialogue (logged, never trained on).
    """
    groups = rc.run_concurrently([config.open_group(p, np.random.default_rng(int(rng.integers(2**63))), 1) for p in personas])
    trajectories = [rc.Trajectory(i, i, session, context=chat.prompt_ids(session.messages)) for i, (session,) in enumerate(groups)]
    while live := [t for t in trajectories if not t.session.done]:
        started = time.perf_counter()
        generations = rc.generate(policy, tokenizer, [t.context for t in live], max_new_tokens=max_new_tokens, temperature=temperature)
        if stats is not None:
            stats["generation_s"] = stats.get("generation_s", 0.0) + time.perf_counter() - started
            stats["generated_tokens"] = stats.get("generated_tokens", 0) + sum(len(g.ids) for g in generations)
        replies = [tokenizer.decode(g.ids, skip_special_tokens=True).strip() for g in generations]
        outcomes = rc.run_concurrently([t.session.step(reply) for t, reply in zip(live, replies)])
        for trajectory, generation, outcome in zip(live, generations, outcomes):
            trajectory.add_turn(generation, outcome.reward, chat, think=config.think)
    return trajectories


# ------------------------------------------------------------------------------------------
# Values and advantages: the critic per token, GAE over the policy's tokens
# ------------------------------------------------------------------------------------------
@torch.no_grad()
def fill_old_values(critic, samples, args, tokenizer, device) -> None:
    """The critic's value of the state before each token, as seen at rollout time."""
    critic.eval()
    for k in range(0, len(samples), args.micro_batch_size):
        micro = samples[k : k + args.micro_batch_size]
        batch = rc.collate(micro, tokenizer.pad_token_id, device)
        with rc.autocast(device, args.bf16):
            values = critic(batch["input_ids"], batch["attention_mask"]).float()
        for row, sample in enumerate(micro):
            n = len(sample.input_ids)
            sample.old_values = [0.0] + values[row, : n - 1].tolist()
    critic.train()


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


def assign_gae(trajectories: Sequence[rc.Trajectory], *, gamma: float, lam: float) -> None:
    """GAE over each dialogue's policy tokens in order (across its samples).

    The env reward of turn k (the terminal mood / 100 on the last turn, plus the optional
    dense shaping) sits on turn k's last policy token; `old_values` must be filled first.
    """
    for trajectory in trajectories:
        positions = [(s, i) for s in trajectory.samples for i, m in enumerate(s.policy_mask) if m]
        ends = [(s, e) for s in trajectory.samples for e in s.turn_ends]
        reward_at = {}
        for (s, e), reward in zip(ends, trajectory.turn_rewards, strict=True):
            reward_at[(id(s), e)] = reward_at.get((id(s), e), 0.0) + reward
        rewards = [reward_at.get((id(s), i), 0.0) for s, i in positions]
        values = [s.old_values[i] for s, i in positions]
        advantages, returns = gae(rewards, values, gamma=gamma, lam=lam)
        for s in trajectory.samples:
            s.advantages = [0.0] * len(s.input_ids)
            s.returns = [0.0] * len(s.input_ids)
        for (s, i), a, g in zip(positions, advantages, returns):
            s.advantages[i] = float(a)
            s.returns[i] = float(g)


def whiten(samples) -> None:
    values = np.array([a for s in samples for a, m in zip(s.advantages, s.policy_mask) if m])
    if values.size == 0:
        return
    mean, std = values.mean(), values.std() + 1e-8
    for s in samples:
        s.advantages = [(a - mean) / std if m else 0.0 for a, m in zip(s.advantages, s.policy_mask)]


# ------------------------------------------------------------------------------------------
# The losses: PPO-clip for the actor, clipped value loss for the critic, optional k3 KL
# ------------------------------------------------------------------------------------------
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


def clipped_value_loss(values, old_values, returns, mask, *, clip: float, normalizer: float | None = None):
    """0.5 * max((V - R)^2, (clip(V, V_old +- clip) - R)^2), token mean over the mask."""
    normalizer = float(mask.sum()) if normalizer is None else normalizer
    clipped = old_values + torch.clamp(values - old_values, -clip, clip)
    loss = torch.max((values - returns) ** 2, (clipped - returns) ** 2)
    return 0.5 * masked_sum(loss, mask) / max(normalizer, 1.0)


def k3_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Schulman's k3 estimator of KL(policy || reference), per token: r - log r - 1, r = p_ref/p."""
    log_ratio = ref_logp - logp
    return torch.exp(log_ratio) - log_ratio - 1.0


# ------------------------------------------------------------------------------------------
# The training loop
# ------------------------------------------------------------------------------------------
def main(args: Args) -> dict:
    run_started = time.monotonic()
    rc.apply_setup(args)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    device = rc.pick_device(args.device)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)

    # -- models ---------------------------------------------------------------------------
    policy, tokenizer = rc.load_policy(args)
    chat = rc.ChatTokens(tokenizer)  # refuses a template that breaks the prefix property
    critic = rc.ValueModel(policy)
    reference = copy.deepcopy(policy).eval().requires_grad_(False).to(device) if args.kl_coef > 0 and not args.use_lora else None
    if args.use_lora:
        policy = rc.add_lora(policy, args.lora_r, args.lora_alpha)
    if args.gradient_checkpointing:
        policy.gradient_checkpointing_enable()
        critic.body.gradient_checkpointing_enable()
        if args.use_lora:
            policy.enable_input_require_grads()
    policy.to(device)
    critic.to(device)
    actor_opt = torch.optim.AdamW([p for p in policy.parameters() if p.requires_grad], lr=args.learning_rate, weight_decay=args.weight_decay)
    critic_opt = torch.optim.AdamW(critic.parameters(), lr=args.critic_learning_rate, weight_decay=args.weight_decay)

    # -- data -----------------------------------------------------------------------------
    train_personas = rc.load_personas(args, "train")
    test_personas = rc.load_personas(args, "test")[: args.eval_personas] * args.eval_repeats
    config = rc.dialog_config(args, rc.build_simulator(args))
    metrics = rc.MetricsLog(out / "metrics.jsonl")
    modules, optimizers = {"policy": policy, "critic": critic}, {"policy": actor_opt, "critic": critic_opt}

    start_step = 0
    if args.resume:
        start_step = rc.load_checkpoint(out / "checkpoint.pt", modules=modules, optimizers=optimizers, rng=rng)
        metrics.truncate(after_step=start_step)

    def evaluate(step: int) -> list[float]:
        """One dialogue per test persona, with a fixed seed: before and after compare like for like."""
        with rc.autocast(device, args.bf16):
            trajectories = play_dialogues(
                policy, tokenizer, chat, config, test_personas, rng=np.random.default_rng(args.seed + 1),
                max_new_tokens=args.max_new_tokens, temperature=args.eval_temperature,
            )
        rewards = [t.session.reward for t in trajectories]
        metrics.write({"step": step, **rc.dialogue_metrics(trajectories, prefix="eval_"), "eval_rewards": rewards})
        return rewards

    eval_started = time.monotonic()
    eval_before = evaluate(0) if start_step == 0 else None
    eval_s = time.monotonic() - eval_started  # the final evaluation takes about as long

    # -- training loop --------------------------------------------------------------------
    from tqdm.auto import tqdm

    deadline = run_started + 60 * args.max_minutes if args.max_minutes > 0 else float("inf")
    step_s = 0.0
    last_step = start_step
    bar = tqdm(range(start_step, args.total_steps), initial=start_step, total=args.total_steps, desc="ppo")
    for step in bar:
        if time.monotonic() + step_s + 1.2 * eval_s > deadline:  # no time left for a step and the final eval
            if last_step > start_step:  # keep what was learnt before the time ran out
                rc.save_checkpoint(out / "checkpoint.pt", step=last_step, modules=modules, optimizers=optimizers, rng=rng, args=args)
            break
        started = time.perf_counter()
        chosen = rng.choice(len(train_personas), size=args.episodes_per_step, replace=args.episodes_per_step > len(train_personas))
        stats: dict = {}
        with rc.autocast(device, args.bf16):
            trajectories = play_dialogues(
                policy, tokenizer, chat, config, [train_personas[i] for i in chosen],
                rng=rng, max_new_tokens=args.max_new_tokens, temperature=args.temperature, stats=stats,
            )
        # A dialogue cut short by a simulator failure has no reward: it is logged, not trained on.
        scored = [t for t in trajectories if t.session.terminal_reason != "simulator_error"]
        samples = [s for t in scored for s in t.samples]
        if not samples:
            raise RuntimeError(f"step {step + 1}: every dialogue ended in a simulator error; see the simulator's logs")
        fill_old_values(critic, samples, args, tokenizer, device)
        assign_gae(scored, gamma=args.gamma, lam=args.lam)  # rewards on each turn's last policy token
        if args.whiten_advantages:
            whiten(samples)
        num_tokens = sum(s.num_policy_tokens for s in samples)

        policy.train()
        train_started = time.perf_counter()
        totals = {"loss": 0.0, "value_loss": 0.0, "clip_fraction": 0.0, "entropy": 0.0, "kl_old": 0.0, "kl_ref": 0.0}
        trained_tokens = 0
        for _ in range(args.ppo_epochs):
            actor_opt.zero_grad(set_to_none=True)
            critic_opt.zero_grad(set_to_none=True)
            for micro in rc.micro_batches(samples, args.micro_batch_size, rng):
                batch = rc.collate(micro, tokenizer.pad_token_id, device)
                mask = batch["mask"]
                with rc.autocast(device, args.bf16):
                    logp, entropy = rc.token_logprobs(policy, batch, args.temperature)
                    values = critic(batch["input_ids"], batch["attention_mask"]).float()[:, :-1]
                policy_loss, clip_fraction = ppo_clip_loss(
                    logp, batch["old_logprobs"], batch["advantages"], mask, clip_eps=args.clip_eps, normalizer=num_tokens
                )
                value_loss = clipped_value_loss(
                    values, batch["old_values"], batch["returns"], mask, clip=args.value_clip, normalizer=num_tokens
                )
                loss = policy_loss + args.vf_coef * value_loss
                if args.kl_coef > 0:
                    with torch.no_grad(), rc.autocast(device, args.bf16):
                        if args.use_lora:
                            with policy.disable_adapter():
                                ref_logp, _ = rc.token_logprobs(policy, batch, args.temperature, with_entropy=False)
                        else:
                            ref_logp, _ = rc.token_logprobs(reference, batch, args.temperature, with_entropy=False)
                    kl_ref = masked_sum(k3_kl(logp, ref_logp), mask) / num_tokens
                    loss = loss + args.kl_coef * kl_ref
                    totals["kl_ref"] += kl_ref.item() / args.ppo_epochs
                loss.backward()
                share = float(mask.sum()) / num_tokens / args.ppo_epochs
                totals["loss"] += policy_loss.item() / args.ppo_epochs
                totals["value_loss"] += value_loss.item() / args.ppo_epochs
                totals["clip_fraction"] += clip_fraction.item() * share
                totals["entropy"] += (masked_sum(entropy.detach(), mask) / mask.sum().clamp(min=1)).item() * share
                kl_old = k3_kl(logp.detach(), batch["old_logprobs"])
                totals["kl_old"] += (masked_sum(kl_old, mask) / mask.sum().clamp(min=1)).item() * share
                trained_tokens += int(batch["attention_mask"].sum())
            grad_norm = torch.nn.utils.clip_grad_norm_(policy.parameters(), args.max_grad_norm)
            torch.nn.utils.clip_grad_norm_(critic.parameters(), args.max_grad_norm)
            actor_opt.step()
            critic_opt.step()
        train_s = time.perf_counter() - train_started

        record = {
            "step": step + 1,
            **rc.dialogue_metrics(trajectories),
            **totals,
            "grad_norm": float(grad_norm),
            "policy_tokens": num_tokens,
            "generation_tokens_per_s": stats["generated_tokens"] / max(stats["generation_s"], 1e-9),
            "train_tokens_per_s": trained_tokens / max(train_s, 1e-9),
            "step_s": time.perf_counter() - started,
        }
        metrics.write(record)
        step_s = max(step_s, record["step_s"])
        bar.set_postfix(reward=f"{record['reward']:.3f}", vloss=f"{record['value_loss']:.4f}", kl=f"{record['kl_old']:.4f}")

        if args.eval_every and (step + 1) % args.eval_every == 0 and step + 1 < args.total_steps:
            evaluate(step + 1)
        if (step + 1) % args.save_every == 0 or step + 1 == args.total_steps:
            rc.save_checkpoint(out / "checkpoint.pt", step=step + 1, modules=modules, optimizers=optimizers, rng=rng, args=args)
        last_step = step + 1

    eval_after = evaluate(last_step)
    policy.save_pretrained(out / "policy")
    tokenizer.save_pretrained(out / "policy")
    torch.save(critic.state_dict(), out / "critic.pt")
    plot = rc.plot_reward_curve(out / "metrics.jsonl", out / "reward_curve.png", title=f"PPO {args.setup}") if args.plot else None
    return {"eval_before": eval_before, "eval_after": eval_after, "steps": last_step, "metrics": str(out / "metrics.jsonl"),
            "plot": str(plot) if plot else None, "args": asdict(args)}


if __name__ == "__main__":
    from transformers import HfArgumentParser

    (cli_args,) = HfArgumentParser(Args).parse_args_into_dataclasses()
    summary = main(cli_args)
    print(f"eval reward before {np.mean(summary['eval_before'] or [float('nan')]):.3f} "
          f"after {np.mean(summary['eval_after']):.3f}; metrics {summary['metrics']}; plot {summary['plot']}")
