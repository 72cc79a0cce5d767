"""The `dialog-gym` command line: one subcommand per module of this package.

Each module under `dialog_gym.cli` defines `register(subparsers)`, which adds its
subcommand and sets `func` (taking the parsed args, returning an exit code); the options
several commands share are spelt once, in `dialog_gym.cli.arguments`.

Plugins: before the parser is built, every installed entry point of the group
`dialog_gym.plugins` is imported, so the simulators, backends, presets and agents a plugin
registers are choices of every command (docs/concepts.md, "Extending").
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from dialog_gym._version import __version__

# Subcommand modules, in the order `dialog-gym --help` lists them.
COMMAND_MODULES: tuple[str, ...] = ("demo", "play", "personas", "eval", "report", "rescore", "replay", "calibrate", "attack", "serve")
# The entry-point group of plugins: each entry names a module (or an object in one) to import.
PLUGIN_GROUP = "dialog_gym.plugins"


def load_plugins() -> list[str]:
    """Import every installed plugin (the entry points of `PLUGIN_GROUP`); their names."""
    from importlib.metadata import entry_points

    loaded = []
    for entry in entry_points(group=PLUGIN_GROUP):
        try:
            entry.load()
        except Exception as exc:
            raise RuntimeError(f"dialog-gym plugin {entry.name!r} ({entry.value}) failed to load: {exc}") from exc
        loaded.append(entry.name)
    return loaded


def build_parser() -> argparse.ArgumentParser:
    load_plugins()
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
