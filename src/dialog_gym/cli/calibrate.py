"""`dialog-gym calibrate --episodes FILE... --out judge.json`: distil a recorded LLM judge.

Fits a `CalibratedJudge` on dialogues that an LLM user simulator scored (SAGE result files,
or dialog-gym episode records made with `--simulator openai|transformers`), prints how well
it predicts held-out dialogues and what it rewards and punishes, and writes the judge file.
Use it with `gym.make(ENV_ID, simulator="calibrated", judge="judge.json")`.
"""

from __future__ import annotations

import argparse
import math
import shlex
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

from dialog_gym.episodes.load import FORMATS


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "calibrate",
        help="fit an offline judge on dialogues an LLM user simulator scored",
        description=(
            "Fit a calibrated judge on recorded dialogues with per-turn mood changes (SAGE result files, or "
            "episode records made with an LLM simulator), and write it as a judge file for simulator='calibrated'."
        ),
    )
    parser.add_argument("--episodes", nargs="+", required=True, metavar="FILE", help="SAGE result files, episode JSONL files or run folders")
    parser.add_argument("--out", "-o", required=True, help="the judge file to write (JSON)")
    parser.add_argument("--name", default=None, help="the judge's name (default: the file name)")
    parser.add_argument("--format", default="auto", choices=FORMATS, help="input format (default: %(default)s)")
    parser.add_argument("--l2", type=float, default=None, help="ridge penalty (default: the fitted default)")
    parser.add_argument("--gram-weight", type=float, default=None, help="weight of the n-gram features (default: the fitted default)")
    parser.add_argument("--folds", default="groups", choices=("groups", "dialogues", "none"),
                        help="held-out fits for the gain and the report: one per agent model, 5 of dialogues, or none (default: %(default)s)")
    parser.add_argument("--v1", action="store_true", help="fit as the v1 judge was fitted (feature version 1, no knowledge, no negatives)")
    parser.set_defaults(func=run_calibrate)


def run_calibrate(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from dialog_gym.episodes.calibration import calibrate
    from dialog_gym.simulators.judge_fit import FitOptions

    defaults = FitOptions.v1() if args.v1 else FitOptions()
    options = replace(
        defaults,
        l2=defaults.l2 if args.l2 is None else args.l2,
        gram_weight=defaults.gram_weight if args.gram_weight is None else args.gram_weight,
        folds=args.folds,
    )
    out = Path(args.out)
    console = Console(stderr=True, highlight=False)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console) as bar:
        tasks: dict[str, int] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task({"features": "features", "folds": "fits"}.get(stage, stage), total=total)
            bar.update(tasks[stage], completed=done, total=total)

        judge = calibrate(*args.episodes, name=args.name or out.stem, format=args.format, options=options, progress=progress)
    judge.save(out)
    fit = judge.metadata["fit"]
    table = Table(title=f"judge {judge.name!r}", show_header=False)
    table.add_row("appraised replies", str(fit["samples"]))
    table.add_row("dialogues", str(fit["dialogues"]))
    table.add_row("agent models", ", ".join(fit["groups"]) or "-")
    table.add_row("languages", ", ".join(
        f"{lang} (tied to {model.tied_from}: its named features only)" if model.tied_from else f"{lang} ({fit['languages'].get(lang, 0)} replies)"
        for lang, model in sorted(judge.models.items())
    ))
    table.add_row("held out by", fit["folds"])
    r = fit["out_of_fold_turn_r"]
    table.add_row("turn r (held out)", "nan" if math.isnan(r) else f"{r:.3f}")
    table.add_row("gain", f"{judge.gain:.2f}")
    Console(highlight=False).print(table)
    for language in judge.languages:
        weights = Table(title=f"{language}: what moves the mood most (per standard deviation)")
        weights.add_column("feature")
        weights.add_column("change", justify="right")
        for words, value in judge.largest_weights(language, 8):
            weights.add_row(words, f"{value:+.2f}")
        Console(highlight=False).print(weights)
    print(f"wrote {out}")
    episodes = shlex.join(str(path) for path in args.episodes)  # their replies feed the context swap and the length curve
    print(f"attack it before training on it: dialog-gym attack --simulator calibrated --simulator-path {shlex.quote(str(out))} --episodes {episodes} --quick")
    return 0
