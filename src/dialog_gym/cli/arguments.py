"""The options several commands share, spelt once: the simulator, the mood rules, the reply
guard, concurrency.

The choices come from the registries (`simulator_names()`, `rules_names()`), so a simulator
or preset registered by a plugin is a choice of every command; the simulator flags become
the simulator's options through the one translation, `dialog_gym.simulators.simulator_options`.
Old spellings (`--preset`, `--concurrency`) still work and print a deprecation warning.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dialog_gym.mood import rules_names
from dialog_gym.simulators import (
    COMMON_SETTINGS,
    DEFAULT_SIMULATOR,
    SimulatorEntry,
    simulator_entry,
    simulator_names,
    simulator_options,
)
from dialog_gym.text_guard import DEFAULT_MAX_REPLY_CHARS, UNENCODABLE_POLICIES


class DeprecatedAlias(argparse.Action):
    """An old spelling of an option: stores into the new one's `dest`, and says so on stderr."""

    def __init__(self, option_strings: list[str], dest: str, *, new: str, **kwargs: Any):
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: str | None = None) -> None:
        print(f"{parser.prog}: warning: {option_string} is deprecated, use {self.new}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_simulator_arguments(group: Any, *, simulator_default: str | None = DEFAULT_SIMULATOR) -> None:
    """`--simulator` (every registered simulator), `--style` and the simulator flags.

    `simulator_default=None`: the command's env id decides (`dialog-gym serve`)."""
    entries = [simulator_entry(name) for name in simulator_names()]
    default = "%(default)s" if simulator_default else "the env's"
    group.add_argument(
        "--simulator", default=simulator_default, choices=[entry.name for entry in entries],
        help=f"the user simulator (default: {default}): " + "; ".join(_describe(entry) for entry in entries),
    )
    group.add_argument("--style", default=None, choices=["vanilla", "challenging"],
                       help="the simulator's style (default: the simulator's own, vanilla)")
    for setting, flag in COMMON_SETTINGS.items():
        if setting != "style":
            kind, metavar, text = _FLAGS[setting]
            group.add_argument(flag, default=None, dest=f"simulator_{setting}", type=kind, metavar=metavar, help=text)


def simulator_from_args(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The simulator name and options the flags of `add_simulator_arguments` ask for."""
    settings = {setting: getattr(args, f"simulator_{setting}") for setting in COMMON_SETTINGS if setting != "style"}
    return args.simulator, simulator_options(args.simulator, style=args.style, **settings)


def config_fields_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The simulator flags as `DialogConfig` fields (`simulator`, `style`, `simulator_options`),
    for the entry points that take a config's fields."""
    simulator, options = simulator_from_args(args)
    fields: dict[str, Any] = {"simulator": simulator}
    if "style" in options:
        fields["style"] = options.pop("style")
    if options:
        fields["simulator_options"] = options
    return fields


def add_rules_argument(group: Any, *, default: str | None, help: str) -> None:
    """`--rules PRESET` (every registered preset), and `--preset`, its old spelling."""
    group.add_argument("--rules", default=default, choices=rules_names(), help=help)
    group.add_argument("--preset", dest="rules", choices=rules_names(), action=DeprecatedAlias, new="--rules",
                       help=argparse.SUPPRESS)


def add_reply_guard_arguments(group: Any, *, unencodable_default: str | None = None) -> None:
    """`--max-reply-chars N`; with `unencodable_default`, also `--unencodable error|repair`."""
    group.add_argument("--max-reply-chars", type=int, default=DEFAULT_MAX_REPLY_CHARS, metavar="N",
                       help="at most N characters of each agent reply reach the simulator; 0: no limit (default: %(default)s)")
    if unencodable_default is not None:
        group.add_argument("--unencodable", default=unencodable_default, choices=UNENCODABLE_POLICIES,
                           help="a reply holding text UTF-8 cannot encode (a lone surrogate): 'repair' it with U+FFFD "
                                "and record that, or 'error': stop (default: %(default)s)")


def reply_guard_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The `ReplyGuard` fields the options of `add_reply_guard_arguments` ask for."""
    if args.max_reply_chars < 0:
        raise ValueError(f"--max-reply-chars must be >= 0 (0: no limit), got {args.max_reply_chars}")
    guard: dict[str, Any] = {"max_chars": args.max_reply_chars or None}
    if getattr(args, "unencodable", None) is not None:
        guard["unencodable"] = args.unencodable
    return guard


def add_concurrency_argument(group: Any, *, default: int, help: str) -> None:
    """`--max-concurrent-episodes N`, and `--concurrency`, its old spelling."""
    group.add_argument("--max-concurrent-episodes", type=int, default=default, metavar="N", help=help)
    group.add_argument("--concurrency", dest="max_concurrent_episodes", type=int, action=DeprecatedAlias,
                       new="--max-concurrent-episodes", help=argparse.SUPPRESS)


# The simulator flags: (type, metavar, help).
_FLAGS: dict[str, tuple[Any, str | None, str]] = {
    "model": (str, None, "the simulator's model: a name the server serves (openai) or a model folder / .gguf (transformers)"),
    "base_url": (str, None, "the simulator's OpenAI-compatible endpoint (openai)"),
    "api_key_env": (str, None, "env var holding the simulator's API key (openai)"),
    "path": (str, None, "a file the simulator reads: a judge file (calibrated), a recorded run (replay), a model (transformers)"),
    "timeout_s": (float, "S", "deadline of each simulator request in seconds, body included (openai; default: 60)"),
    "max_retries": (int, "N", "simulator request retries on 429/5xx/timeouts (openai; default: 4)"),
    "max_retry_time_s": (float, "S", "no simulator retry starts this long after a request began (openai; default: 120)"),
}


def _describe(entry: SimulatorEntry) -> str:
    flags = sorted({COMMON_SETTINGS[setting] for setting in entry.settings})
    return entry.name + (f" ({', '.join(flags)})" if flags else "") + (", offline" if entry.offline else "")
