"""`dialog-gym serve`: serve an env id over OpenEnv's HTTP/WebSocket API (needs openenv-core)."""

from __future__ import annotations

import argparse
import json
import sys

from dialog_gym.cli.arguments import add_simulator_arguments, config_fields_from_args
from dialog_gym.simulators import DEFAULT_SIMULATOR


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve an env over OpenEnv's HTTP/WebSocket API (pip install 'dialog-gym[openenv]')",
        description=(
            "Serve a dialog-gym env id as an OpenEnv environment: WebSocket sessions at /ws (openenv's EnvClient, "
            "dialog_gym.integrations.openenv.DialogEnvClient), POST /reset and /step (named episodes), /schema, "
            "/health, /metadata. Episodes equal gym.make(ENV) with the same seed and replies."
        ),
    )
    parser.add_argument("--env", default=None, help="registered env id (default: the newest RLVER-Empathy-vN)")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: %(default)s; 0.0.0.0 for all)")
    parser.add_argument("--port", type=int, default=8000, help="port (default: %(default)s)")
    parser.add_argument("--max-sessions", type=int, default=64,
                        help="concurrent WebSocket sessions, and open named HTTP episodes (default: %(default)s)")
    parser.add_argument("--episode-timeout", type=float, default=600.0,
                        help="seconds an idle named HTTP episode is kept (default: %(default)s)")
    parser.add_argument("--language", choices=["en", "zh"], default=None, help="persona language (default: the env's)")
    parser.add_argument("--split", default=None, help="persona split: train, test or all (default: the env's)")
    parser.add_argument("--personas", default=None, help="a persona JSONL file or folder (default: the bundled sets)")
    add_simulator_arguments(parser, simulator_default=None)
    parser.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE",
        help="another gym.make option, the value read as JSON when it parses (e.g. think=true, rules=sage, "
             'simulator_options=\'{"max_concurrency": 256}\''"); repeatable",
    )
    parser.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    parser.set_defaults(func=run)


def parse_options(pairs: list[str]) -> dict:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--option takes KEY=VALUE, got {pair!r}")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
    return options


def run(args: argparse.Namespace) -> int:
    try:
        from dialog_gym.integrations.openenv.server import create_server_app
    except ImportError as exc:
        print(f"dialog-gym serve: {exc}", file=sys.stderr)
        return 2
    import uvicorn

    from dialog_gym.integrations._setup import spec_config

    options = parse_options(args.option)
    if args.simulator is None:  # the env's own simulator, which the simulator flags then configure
        args.simulator = spec_config({"env_id": args.env}).get("simulator", DEFAULT_SIMULATOR)
    fields = config_fields_from_args(args)
    flagged, given = fields.pop("simulator_options", {}), dict(options.pop("simulator_options", None) or {})
    twice = sorted(set(given) & set(flagged))
    if twice:
        raise ValueError(f"--option simulator_options repeats what the simulator flags set: {', '.join(twice)}")
    if flagged or given:
        fields["simulator_options"] = {**flagged, **given}
    twice = sorted(set(fields) & set(options))
    if twice:
        raise ValueError(f"--option {', '.join(twice)}: set by the simulator flags already")
    app = create_server_app(
        args.env, language=args.language, split=args.split, personas=args.personas,
        max_sessions=args.max_sessions, episode_timeout_s=args.episode_timeout, **fields, **options,
    )
    setup = app.state.dialog_setup
    print(
        f"dialog-gym serve: {setup.describe()} at http://{args.host}:{args.port} "
        "(OpenEnv: WebSocket /ws, POST /reset /step, GET /schema /health)",
        file=sys.stderr, flush=True,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0
