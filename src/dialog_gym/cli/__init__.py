"""The `dialog-gym` command line: one subcommand per module of this package.

Each module under `dialog_gym.cli` defines `register(subparsers)`, which adds its
subcommand and sets `func` (taking the parsed args, returning an exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from dialog_gym._version import __version__

# Subcommand modules, in the order `dialog-gym --help` lists them.
COMMAND_MODULES: tuple[str, ...] = ("demo", "play", "personas", "eval", "report", "rescore", "replay", "calibrate", "serve")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dialog-gym",
        description="Emotional-support dialogue as an RL environment: demos, evaluation, reports, personas.",
    )
    parser.add_argument("--version", action="version", version=f"dialog-gym {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"dialog_gym.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(f"dialog-gym {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
