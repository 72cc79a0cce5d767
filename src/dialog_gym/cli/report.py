"""`dialog-gym report RUN_DIR [RUN_DIR...]`: one self-contained HTML report of the runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="HTML report of one or more run folders (summary, mood plots, transcripts)",
        description="Write one self-contained HTML file: runs side by side, plots, every transcript.",
    )
    parser.add_argument("runs", nargs="+", help="run folders (or episodes JSONL files)")
    parser.add_argument("--out", "-o", default=None, help="the HTML file (default: RUN_DIR/report.html for one run, report.html otherwise)")
    parser.add_argument("--names", nargs="+", default=None, help="column names for the runs (default: folder names)")
    parser.add_argument("--title", default=None, help="report title")
    parser.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    from dialog_gym.eval.report import MissingExtraError, pyplot, write_report

    try:
        pyplot()
    except MissingExtraError as exc:
        print(f"dialog-gym report: error: {exc}", file=sys.stderr)
        return 2

    if args.names is not None and len(args.names) != len(args.runs):
        raise ValueError(f"--names has {len(args.names)} names for {len(args.runs)} runs")
    if args.out is not None:
        out = Path(args.out)
    elif len(args.runs) == 1 and Path(args.runs[0]).is_dir():
        out = Path(args.runs[0]) / "report.html"
    else:
        out = Path("report.html")
    path = write_report(args.runs, out, names=args.names, title=args.title)
    print(f"wrote {path}")
    return 0
