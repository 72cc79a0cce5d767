"""`dialog-gym replay RUN [RUN...]`: re-run recorded episodes from their own recordings.

Every episode is played again through a `DialogSession` with its recorded persona, rules,
seed and agent actions, the reactions coming from the recording (`ReplaySimulator`), and
compared with the record: final mood and the whole record, byte for byte. SAGE result
files are imported on the fly, so this is also the SAGE import check. `--out DIR` writes
the replayed episodes as a run folder (`episodes.jsonl`, `summary.json`) that
`dialog-gym report` can put next to your own runs.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from dialog_gym._async import run_sync
from dialog_gym.episodes.load import FORMATS
from dialog_gym.cli.arguments import add_rules_argument


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="replay recorded episodes (or SAGE result files) and check they reproduce",
        description="Replay recorded episodes through the environment from their recordings; compare.",
    )
    parser.add_argument("runs", nargs="+", help="run folders, episode JSONL files or SAGE result files")
    parser.add_argument("--format", default="auto", choices=FORMATS, help="input format (default: %(default)s)")
    add_rules_argument(parser, default=None, help="replay under these mood rules instead of the recorded ones")
    parser.add_argument("--out", "-o", default=None, help="write the replayed episodes as a run folder")
    parser.add_argument("--show", default=None, metavar="EPISODE_ID", help="print this episode's replayed transcript")
    parser.set_defaults(func=run_replay)


def run_replay(args: argparse.Namespace) -> int:
    from dialog_gym.episodes.io import EPISODES_FILE, EpisodeWriter
    from dialog_gym.episodes.load import load_episodes
    from dialog_gym.eval.metrics import summarize
    from dialog_gym.episodes.replay import areplay, diff_episodes

    console = Console(highlight=False)
    table = Table(title="replay")
    for column in ("file", "episodes", "final mood exact", "record identical", "recorded mean", "replayed mean"):
        table.add_column(column, justify="left" if column == "file" else "right")
    all_replayed = []
    failures = 0
    first_diffs: dict[str, list[str]] = defaultdict(list)
    for path in args.runs:
        episodes = load_episodes(path, format=args.format)

        async def replay_all(eps=episodes) -> list:
            return [await areplay(ep, rules=args.rules) for ep in eps]

        replayed = run_sync(replay_all())
        all_replayed.extend(replayed)
        exact = sum(a.final_mood == b.final_mood for a, b in zip(episodes, replayed))
        identical = 0
        for a, b in zip(episodes, replayed):
            diff = diff_episodes(a, b)
            if diff:
                if len(first_diffs[path]) < 3:
                    first_diffs[path].append(f"{a.episode_id}: {', '.join(diff)}")
            else:
                identical += 1
        failures += len(episodes) - exact
        n = max(1, len(episodes))
        table.add_row(
            str(path), str(len(episodes)), f"{exact}/{len(episodes)}", f"{identical}/{len(episodes)}",
            f"{sum(ep.final_mood for ep in episodes) / n:.2f}", f"{sum(ep.final_mood for ep in replayed) / n:.2f}",
        )
    console.print(table)
    for path, diffs in first_diffs.items():
        for line in diffs:
            console.print(f"[yellow]differs[/] {path}: {line}")
    if args.show:
        match = next((ep for ep in all_replayed if ep.episode_id == args.show), None)
        if match is None:
            raise KeyError(f"no episode {args.show!r} in {', '.join(args.runs)}")
        console.rule(f"{match.episode_id}: {match.persona_id} ({match.hidden_need}, {match.character_type})")
        console.print(f"[bold cyan]user [/] {match.opening}  [dim](mood {match.start_mood})[/]")
        for turn in match.turns:
            console.print(f"[bold green]agent[/] {turn['reply']}")
            console.print(f"[bold cyan]user [/] {turn['user_reply']}  [dim](mood {turn['mood']}, {turn['delta']:+d})[/]")
        console.print(f"end: {match.terminal_reason}, final mood {match.final_mood}")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        target = out / EPISODES_FILE
        if target.exists():
            raise FileExistsError(f"{target} exists; choose another --out")
        with EpisodeWriter(target) as writer:
            writer.write_all(all_replayed)
        (out / "summary.json").write_text(json.dumps(summarize(all_replayed), indent=2, ensure_ascii=False), encoding="utf-8")
        console.print(f"wrote {target}")
    return 1 if failures else 0
