"""`dialog-gym attack --simulator calibrated --simulator-path my-judge.json`: attack a reward before training on it.

Runs the attacks of `dialog_gym.redteam` (the attacks a policy under optimisation finds:
open-loop scripts, keyword salads, broken and feeling echoes, decorations, contrast sets,
unkind replies in disguise, the best of a pool of replies, and, given recorded dialogues,
context swaps and the length curve) against one simulator and prints one table with issue
19's targets. `--strict` exits 1 where a target is not met, or an attack asked for could not
run (the swap and the length curve without `--episodes`), so that a judge fitted with
`dialog-gym calibrate` can be checked in CI.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from rich.console import Console

from dialog_gym._async import run_sync
from dialog_gym.cli.arguments import add_simulator_arguments, simulator_from_args
from dialog_gym.episodes.load import FORMATS
from dialog_gym.redteam.suite import ATTACKS, SPLITS, AttackSettings


def register(subparsers: argparse._SubParsersAction) -> None:
    defaults = AttackSettings()
    parser = subparsers.add_parser(
        "attack",
        help="attack a simulator's reward the way a policy would (scripts, salads, decorations, contrast sets...)",
        description=(
            "Attack a simulator's reward the way a policy under optimisation would, and print each attack against "
            "its target. Offline judges take minutes (--quick: about three); an LLM simulator makes tens of thousands of "
            "calls (choose --attacks)."
        ),
    )
    add_simulator_arguments(parser)
    parser.add_argument("--languages", nargs="+", default=list(defaults.languages), choices=("en", "zh"), help="(default: %(default)s)")
    parser.add_argument("--attacks", nargs="+", default=list(defaults.attacks), choices=ATTACKS, metavar="ATTACK",
                        help=f"which attacks: {', '.join(ATTACKS)} (default: all; swap and length need --episodes)")
    parser.add_argument("--contrast-splits", nargs="+", default=list(defaults.contrast_splits), choices=SPLITS, metavar="SPLIT",
                        help=f"contrast-set splits to report: {', '.join(SPLITS)} (default: %(default)s)")
    parser.add_argument("--episodes", nargs="+", default=(), metavar="FILE",
                        help="recorded dialogues an LLM user simulator scored (SAGE result files, episode files or run folders), "
                             "for the context swap, the length curve and the script search's recorded sentences")
    parser.add_argument("--format", default="auto", choices=FORMATS, help="format of --episodes (default: %(default)s)")
    parser.add_argument("--quick", action="store_true", help="a smaller script search and sample")
    parser.add_argument("--seed", type=int, default=0, help="(default: %(default)s)")
    parser.add_argument("--json", default=None, metavar="OUT", help="also write the rows as JSON")
    parser.add_argument("--strict", action="store_true", help="exit 1 if any target is not met or an attack asked for could not run")
    parser.set_defaults(func=run_attack)


def run_attack(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from dialog_gym.episodes.calibration import judge_samples
    from dialog_gym.episodes.load import load_episodes
    from dialog_gym.redteam.suite import attack_table, run_attacks
    from dialog_gym.simulators import make_simulator

    settings = AttackSettings(
        languages=tuple(args.languages), attacks=tuple(args.attacks), contrast_splits=tuple(args.contrast_splits), quick=args.quick, seed=args.seed,
    )
    samples = judge_samples(load_episodes(*args.episodes, format=args.format)) if args.episodes else []
    name, options = simulator_from_args(args)
    simulator = make_simulator(name, **options)
    label = name + (f" ({options['judge']})" if options.get("judge") else "")
    console = Console(stderr=True, highlight=False)
    with Progress(TextColumn("[bold]attack"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=console) as bar:
        total = settings.steps(bool(samples))
        task = bar.add_task("", total=total)
        started = iter(range(total))

        def progress(step: str) -> None:  # a step starts: those before it are done
            bar.update(task, description=step, completed=next(started, total))

        try:
            rows = run_attacks(simulator, settings, samples=samples, progress=progress)
        finally:
            aclose = getattr(simulator, "aclose", None)
            if aclose is not None:
                run_sync(aclose())
        bar.update(task, description="done", completed=total)
    Console(highlight=False).print(attack_table(rows, f"attacks on {label}"))
    unmet = [row for row in rows if row.met is False]
    not_run = list(settings.not_run(bool(samples)))
    if args.json:
        record = {"simulator": label, "rows": [asdict(row) for row in rows], "not_run": not_run}
        Path(args.json).write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    targets = sum(row.met is not None for row in rows)
    print(f"{targets - len(unmet)} of {targets} targets met" + (": " + "; ".join(f"{r.attack} [{r.language}]" for r in unmet) if unmet else ""))
    if not_run:  # their targets are unmeasured, not met
        print(f"not run: {' and '.join(not_run)} (they need recorded dialogues: --episodes FILE ...)")
    return 1 if args.strict and (unmet or not_run) else 0
