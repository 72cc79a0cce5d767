"""Evidence of learning: GRPO with the `cpu-smol` setup on CPU, within a time budget.

Runs `examples/train_grpo.py` (SmolLM2-135M-Instruct against the calibrated judge) for at
most `--minutes` of wall time in total (model loading, both evaluations and training) and
reports the mean reward on the held-out test personas before and after training, with a
paired bootstrap 95% confidence interval of the difference (pairs: the same persona and
seed before and after), plus the reward-curve plot. Target: the interval lies above zero.

    python benchmarks/learning_curve.py                      # 30 minutes on 2 CPU cores
    python benchmarks/learning_curve.py --minutes 10 --eval_personas 12   # a shortened run

Any other flag is passed to the trainer (e.g. `--learning_rate 3e-5 --group_size 4`).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import rl_common as rc  # noqa: E402
import train_grpo  # noqa: E402


# Shorter dialogues and replies than the cpu-smol setup, so that 2 CPU cores fit enough GRPO
# steps in the budget; 35 = every English test persona (benchmarks/judge_pressure.py too).
CPU_TRAINER_DEFAULTS = dict(eval_personas=35, eval_temperature=0.7, save_every=5, max_turns=2, max_new_tokens=32,
                            personas_per_step=4, group_size=4, learning_rate=3e-5)


@dataclass
class BenchArgs:
    minutes: float = 30.0  # the whole benchmark, model loading and evaluations included
    bootstrap_samples: int = 10000


def main(bench: BenchArgs, args: train_grpo.Args) -> dict:
    started = time.monotonic()
    args.setup = "cpu-smol"
    args.total_steps = max(args.total_steps, 10_000)  # the time budget ends training
    args.max_minutes = bench.minutes - 0.5  # the trainer stops early enough to evaluate in time
    summary = train_grpo.main(args)
    before, after = summary["eval_before"], summary["eval_after"]
    diff, low, high = rc.bootstrap_ci(before, after, n=bench.bootstrap_samples, seed=args.seed)
    result = {
        "setup": "cpu-smol",
        "steps": summary["steps"],
        "wall_minutes": round((time.monotonic() - started) / 60, 1),
        "test_dialogues": len(before),
        "reward_before": round(float(np.mean(before)), 4),
        "reward_after": round(float(np.mean(after)), 4),
        "difference": round(diff, 4),
        "ci95": [round(low, 4), round(high, 4)],
        "ci_above_zero": low > 0,
        "plot": summary["plot"],
        "metrics": summary["metrics"],
    }
    out = Path(args.output_dir) / "learning_curve.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    from transformers import HfArgumentParser

    parser = HfArgumentParser((BenchArgs, train_grpo.Args))
    parser.set_defaults(output_dir="runs/learning_curve", **CPU_TRAINER_DEFAULTS)
    bench_args, trainer_args = parser.parse_args_into_dataclasses()
    main(bench_args, trainer_args)
