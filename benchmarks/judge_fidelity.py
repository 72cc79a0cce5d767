"""How faithfully an offline judge stands in for the recorded LLM judge (SAGE's DeepSeek-V3).

Every simulator re-scores the recorded SAGE dialogues teacher-forced (`dialog-gym rescore`:
the recorded conversation is kept, the simulator only appraises each agent reply) and is
compared with the recording at three levels:

- turn r: Pearson's r of the simulator's change and the recorded change, over all turns;
- dialogue r: Pearson's r of a dialogue's mean change and its recorded final mood;
- model rho: Spearman's rho, over the six agent models, of the mean change and the
  recorded mean final mood (the benchmark's ranking).

`calibrated-lomo` is the honest figure for a fitted judge: for each of the six agent models,
a judge is fitted on the other five and re-scores the sixth; the held-out results are
pooled (`calibrated-v1-lomo`: the same with the v1 judge's fitting). `calibrated` is the
bundled v2 judge and `calibrated-v1` the v1 judge (fitted on all six: in-sample). A table per
agent model follows for each held-out row (and for every row with `--per-model`): the figures
within the model and its mean change, judged and recorded, whose order is the model rho.

    python benchmarks/judge_fidelity.py                                   # rule, v1 and v2, bundled and held out
    python benchmarks/judge_fidelity.py --simulators openai --model deepseek-chat --base-url URL
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import track
from rich.table import Table

from dialog_gym._async import run_sync
from dialog_gym.episodes.calibration import episode_group, fidelity, judge_samples
from dialog_gym.episodes.load import load_episodes
from dialog_gym.episodes.rescore import arescore
from dialog_gym.simulators import make_simulator
from dialog_gym.simulators.calibrated import CalibratedSimulator
from dialog_gym.simulators.judge_fit import FitOptions, fit_judge

SAGE_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sage-deepseek-v3"
TARGETS = {"turn r": 0.50, "dialogue r": 0.75, "model rho": 0.80}


def rescored(episodes, simulator):
    return run_sync(arescore(episodes, simulator, rules="sage", max_concurrent_episodes=32))


def leave_one_model_out(by_model: dict[str, list], options: FitOptions):
    """Fit on five models, re-score the sixth, for each model; the pooled results and their groups."""
    results, groups = [], []
    for held_out in track(list(by_model), description="leave one model out", console=Console(stderr=True)):
        train = [s for model, eps in by_model.items() if model != held_out for s in judge_samples(eps)]
        judge = fit_judge(train, name=f"without-{held_out}", options=options)
        part = rescored(by_model[held_out], CalibratedSimulator(judge=judge))
        results += part
        groups += [held_out] * len(part)
    return results, groups


def per_model_table(name: str, results, groups) -> Table:
    """Each agent model's figures under one simulator: turn and dialogue r within the model, and
    its mean change judged and recorded, whose order over the models is the model rho."""
    table = Table(title=f"{name}, per agent model (held out from the fit where the name says lomo)")
    for column in ("agent model", "turn r", "dialogue r", "mean change", "recorded", "recorded final mood", "turns"):
        table.add_column(column, justify="left" if column == "agent model" else "right")
    for model in dict.fromkeys(groups):
        part = [r for r, g in zip(results, groups) if g == model and r.error is None and r.new_requested_deltas]
        f = fidelity(part, [model] * len(part))
        judged = [d for r in part for d in r.new_requested_deltas[: len(r.recorded_deltas)]]
        recorded = [d for r in part for d in r.recorded_deltas[: len(r.new_requested_deltas)]]
        final = sum(r.recorded_final_mood for r in part) / max(1, len(part))
        table.add_row(model, f"{f.turn_r:.3f}", f"{f.dialogue_r:.3f}", f"{sum(judged) / max(1, len(judged)):+.2f}",
                      f"{sum(recorded) / max(1, len(recorded)):+.2f}", f"{final:.1f}", str(f.turns))
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", nargs="+", default=None, help=f"SAGE result files (default: {SAGE_DIR}/*.jsonl)")
    parser.add_argument("--simulators", nargs="+", default=["rule", "calibrated-v1", "calibrated-v1-lomo", "calibrated", "calibrated-lomo"],
                        help="rule, calibrated(-v1), calibrated(-v1)-lomo, openai, transformers (default: %(default)s)")
    parser.add_argument("--judge", default=None, help="judge file for 'calibrated' (default: the bundled one)")
    parser.add_argument("--model", default=None, help="model for --simulators openai")
    parser.add_argument("--base-url", default=None, help="endpoint for --simulators openai")
    parser.add_argument("--model-path", default=None, help="model for --simulators transformers")
    parser.add_argument("--limit", type=int, default=None, help="only the first N dialogues of each file")
    parser.add_argument("--per-model", action="store_true", help="a per-model table for every simulator (always for the -lomo ones)")
    args = parser.parse_args(argv)

    files = args.files or sorted(SAGE_DIR.glob("*.jsonl"))
    if not files:
        print(f"no SAGE result files (looked in {SAGE_DIR}); pass --files", file=sys.stderr)
        return 1
    by_model = {Path(f).stem: load_episodes(f)[: args.limit] for f in files}
    episodes = [ep for eps in by_model.values() for ep in eps]
    groups = [episode_group(ep) for ep in episodes]

    table = Table(title=f"judge fidelity on {len(episodes)} SAGE dialogues of {len(by_model)} models (teacher-forced)")
    for column in ("simulator", "turn r", "dialogue r", "model rho", "turns", "seconds"):
        table.add_column(column, justify="left" if column == "simulator" else "right")
    per_model = []
    for name in args.simulators:
        start = time.perf_counter()
        if name in ("calibrated-lomo", "calibrated-v1-lomo"):
            options = FitOptions.v1(folds="none") if name == "calibrated-v1-lomo" else FitOptions(folds="none")
            results, result_groups = leave_one_model_out(by_model, options)
        else:
            options = {"judge": args.judge} if name == "calibrated" and args.judge else {}
            if name == "openai":
                options = {"model": args.model, "base_url": args.base_url}
            elif name == "transformers":
                options = {"model_path": args.model_path}
            results, result_groups = rescored(episodes, make_simulator(name, **options)), groups
        figures = fidelity(results, result_groups)
        row = figures.as_row()
        table.add_row(name, *(f"{row[k]:.3f}" for k in TARGETS), str(figures.turns), f"{time.perf_counter() - start:.0f}")
        if args.per_model or name.endswith("-lomo"):
            per_model.append(per_model_table(name, results, result_groups))
    table.add_row("target (held out)", *(f">= {v:.2f}" for v in TARGETS.values()), "", "")
    Console(highlight=False).print(table)
    for part in per_model:
        Console(highlight=False).print(part)
    return 0


if __name__ == "__main__":
    sys.exit(main())
