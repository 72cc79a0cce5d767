"""`dialog-gym eval`: run the benchmark for one agent and write a run folder.

    dialog-gym eval --agent baseline --out runs/baseline
    dialog-gym eval --agent openai:my-model --base-url http://127.0.0.1:8000/v1 --out runs/x
    dialog-gym eval --agent mypkg.agents:reply --seeds 3 --simulator openai \\
        --simulator-model deepseek-chat --simulator-base-url URL --out runs/y --resume

The run folder gets `episodes.jsonl` (one record per finished episode, appended as each
finishes), `summary.json` and `run.json`. See docs/evaluation.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from dialog_gym._async import run_sync
from dialog_gym.agents import agent_names
from dialog_gym.cli.arguments import (
    add_concurrency_argument,
    add_reply_guard_arguments,
    add_rules_argument,
    add_simulator_arguments,
    config_fields_from_args,
    reply_guard_from_args,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="evaluate an agent on the benchmark personas; writes episodes.jsonl and summary.json",
        description="Evaluate an agent: every selected persona, --seeds times, through the rollout engine.",
    )
    agent = parser.add_argument_group("agent")
    agent.add_argument(
        "--agent", required=True,
        help=f"a registered agent ({', '.join(agent_names())}), BACKEND:TARGET ('openai:MODEL', "
             "'transformers:PATH'), or 'module:function' / 'file.py:function'",
    )
    agent.add_argument("--base-url", default=None, help="the agent's OpenAI-compatible endpoint (openai:MODEL)")
    agent.add_argument("--api-key-env", default="OPENAI_API_KEY", help="env var holding the agent's API key (default: %(default)s)")
    agent.add_argument("--max-tokens", type=int, default=512, help="agent reply length limit (default: %(default)s)")
    agent.add_argument("--temperature", type=float, default=0.0, help="agent sampling temperature (default: %(default)s)")
    agent.add_argument("--think", action="store_true", help="the agent writes <think>...</think> before its reply")
    agent.add_argument("--timeout", type=float, default=None, metavar="S",
                       help="deadline of each agent request in seconds, body included (openai:MODEL; default: the backend's 60)")
    agent.add_argument("--max-retries", type=int, default=None, metavar="N",
                       help="agent request retries on 429/5xx/timeouts (openai:MODEL; default: the backend's 4)")

    sim = parser.add_argument_group("simulator")
    add_simulator_arguments(sim)
    add_rules_argument(sim, default="sage", help="mood rules (default: %(default)s, the Sentient benchmark)")

    sel = parser.add_argument_group("personas")
    sel.add_argument("--personas", default=None, help="JSONL file or folder, 'en' or 'zh' (default: the bundled sets)")
    sel.add_argument("--split", default="test", help="persona split (default: %(default)s; 'all' for every split)")
    sel.add_argument("--language", default=None, choices=["en", "zh"], help="persona language (default: any)")
    sel.add_argument("--persona-ids", nargs="+", default=None, metavar="ID", help="only these personas")
    sel.add_argument("--limit", type=int, default=None, help="only the first N selected personas")

    run = parser.add_argument_group("run")
    run.add_argument("--seeds", type=int, default=1, help="episodes per persona (default: %(default)s)")
    run.add_argument("--seed", type=int, default=0, help="base seed (default: %(default)s)")
    add_concurrency_argument(run, default=64, help="episodes in flight (default: %(default)s)")
    run.add_argument("--max-batch-size", type=int, default=None, help="largest agent batch (batched agents)")
    run.add_argument("--out", required=True, help="run folder")
    run.add_argument("--resume", action="store_true", help="continue the run in --out, skipping finished episodes")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_reply_guard_arguments(run, unencodable_default="repair")  # an evaluation measures the agent, it does not stop
    parser.set_defaults(func=run_eval)


def select(args: argparse.Namespace) -> Any:
    from dialog_gym.personas import PersonaSet

    personas = PersonaSet.load(args.personas)
    split = None if args.split == "all" else args.split
    selected = personas.filter(split=split, language=args.language, ids=args.persona_ids)
    if args.limit is not None:
        selected = selected[: args.limit]
    if not selected:
        raise ValueError(f"no personas match --split {args.split} --language {args.language} in {args.personas or 'the bundled sets'}")
    return selected


def describe_endings(reasons: dict[str, Any]) -> str:
    """How many episodes ended each way, counts first: "80 max_turns, 2 goodbye"."""
    return ", ".join(f"{count} {reason}" for reason, count in reasons.items())


def print_summary(summary: dict[str, Any], console: Console) -> None:
    table = Table(title="summary", show_header=False)
    score = summary["score"]
    table.add_row("episodes", f"{summary['episodes']} ({summary['personas']} personas)")
    table.add_row("score (mean final mood)", f"{score['mean']:.1f}  95% CI [{score['ci95'][0]:.1f}, {score['ci95'][1]:.1f}]")
    for key, label in (("success", "success (mood 100)"), ("failure", "failure (mood < 10)")):
        s = summary[key]
        table.add_row(label, f"{s['count']} ({100 * s['rate']:.1f}%)")
    table.add_row("mean turns", f"{summary['mean_turns']['mean']:.2f}")
    table.add_row("endings (episodes)", describe_endings(summary["terminal_reasons"]))
    console.print(table)
    run = summary.get("run", {})
    if run.get("episodes_per_s"):  # below the table: its width would vary with the machine's speed
        console.print(f"throughput: {run['new_episodes']} new episodes in {run['wall_s']:.2f} s ({run['episodes_per_s']:.1f}/s)")


def run_eval(args: argparse.Namespace) -> int:
    from dialog_gym.eval.agents import load_agent
    from dialog_gym.eval.runner import aevaluate

    personas = select(args)
    fields = config_fields_from_args(args)
    guard = reply_guard_from_args(args)
    agent = load_agent(
        args.agent, base_url=args.base_url, api_key_env=args.api_key_env, max_tokens=args.max_tokens,
        temperature=args.temperature, seed=args.seed, timeout_s=args.timeout, max_retries=args.max_retries,
    )

    async def main() -> Any:
        try:
            return await aevaluate(
                agent,
                out=args.out,
                personas=personas,
                rules=args.rules,
                think=args.think,
                reply_guard=guard,
                seeds=args.seeds,
                seed=args.seed,
                max_concurrent_episodes=args.max_concurrent_episodes,
                max_batch_size=args.max_batch_size,
                resume=args.resume,
                progress=not args.no_progress and sys.stderr.isatty(),
                agent_spec=args.agent,
                **fields,
            )
        finally:
            aclose = getattr(agent, "aclose", None)
            if aclose is not None:
                await aclose()

    try:
        result = run_sync(main())
    except FileExistsError as exc:
        print(f"dialog-gym eval: error: {exc}", file=sys.stderr)
        return 2
    console = Console(highlight=False)
    print_summary(result.summary, console)
    console.print(f"wrote {result.out / 'episodes.jsonl'} and {result.out / 'summary.json'}")
    return 0
