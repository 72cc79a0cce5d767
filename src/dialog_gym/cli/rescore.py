"""`dialog-gym rescore RUN [RUN...] --simulator ...`: judge recorded dialogues again.

Teacher-forced: the recorded messages are kept, the new simulator only appraises each
agent reply. Writes one JSON line per episode (recorded and new deltas and moods side by
side) and prints how the two judges compare. Accepts run folders, episode files and SAGE
result files.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from rich.console import Console
from rich.table import Table

from dialog_gym._async import run_sync
from dialog_gym.cli.arguments import (
    add_concurrency_argument,
    add_reply_guard_arguments,
    add_rules_argument,
    add_simulator_arguments,
    reply_guard_from_args,
    simulator_from_args,
)
from dialog_gym.episodes.load import FORMATS


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "rescore",
        help="re-judge recorded dialogues with another simulator (teacher-forced)",
        description="Re-judge recorded dialogues: the recorded messages are kept, the simulator only appraises.",
    )
    parser.add_argument("runs", nargs="+", help="run folders, episode JSONL files or SAGE result files")
    parser.add_argument("--format", default="auto", choices=FORMATS, help="input format (default: %(default)s)")
    add_simulator_arguments(parser)
    add_rules_argument(parser, default=None, help="mood rules (default: each record's own)")
    add_reply_guard_arguments(parser)
    add_concurrency_argument(parser, default=16, help="episodes judged at once (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="(default: %(default)s)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N episodes")
    parser.add_argument("--out", "-o", default=None, help="JSONL of per-episode results (default: print the summary only)")
    parser.set_defaults(func=run_rescore)


def run_rescore(args: argparse.Namespace) -> int:
    from dialog_gym.episodes.io import EpisodeWriter
    from dialog_gym.episodes.load import load_episodes
    from dialog_gym.episodes.rescore import arescore, summarize_rescore
    from dialog_gym.simulators import make_simulator

    episodes = load_episodes(*args.runs, format=args.format)
    if args.limit is not None:
        episodes = episodes[: args.limit]
    if not episodes:
        raise ValueError("no episodes to rescore")
    name, options = simulator_from_args(args)
    simulator = make_simulator(name, **options)
    writer = EpisodeWriter(args.out) if args.out else None

    async def main() -> list:
        try:
            return await arescore(
                episodes, simulator, rules=args.rules, seed=args.seed, max_concurrent_episodes=args.max_concurrent_episodes,
                reply_guard=reply_guard_from_args(args),
                on_result=(lambda r: writer.write(r.to_dict())) if writer else None,
            )
        finally:
            aclose = getattr(simulator, "aclose", None)
            if aclose is not None:
                await aclose()

    try:
        results = run_sync(main())
    finally:
        if writer is not None:
            writer.close()
    summary = summarize_rescore(results)
    table = Table(title=f"rescored {len(results)} episodes with {args.simulator}", show_header=False)
    for key, value in summary.items():
        table.add_row(key.replace("_", " "), f"{value:.3f}" if isinstance(value, float) and not math.isnan(value) else str(value))
    Console(highlight=False).print(table)
    if args.out:
        Path(args.out).with_suffix(".summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
        print(f"wrote {args.out}")
    return 0
