"""`dialog-gym play`: be the supporter yourself, in the terminal.

You type the agent's replies; the simulated user answers, and you see the mood move. At the
end the hidden need and the character type are revealed. Lines starting with `/` are
commands: `/quit` ends the episode, `/why` shows the last appraisal's reasoning (also once
the episode has ended, for its last turn). Without `--seed` every game draws a new persona
and prints its seed, so `--seed N` plays that game again.
"""

from __future__ import annotations

import argparse
import secrets
import sys

import gymnasium as gym
from rich.console import Console

PROMPT = "you> "


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "play",
        help="play one episode by hand: you type the supporter's replies",
        description="Play one episode as the supporter: type a reply, see the user's answer and the mood. "
        "/why shows the last appraisal, /quit ends.",
    )
    parser.add_argument("--env", default="RLVER-Empathy-v2", help="registered env id (default: %(default)s)")
    parser.add_argument("--language", choices=["en", "zh"], default="en", help="persona language (default: %(default)s)")
    parser.add_argument("--persona", default=None, help="a persona id (default: drawn with --seed)")
    parser.add_argument("--seed", type=int, default=None, help="the episode's seed (default: a new one, printed)")
    parser.add_argument("--explain", action="store_true", help="print the appraisal's reasoning after every turn")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    env = gym.make(args.env, language=args.language, split=None)
    options = {"persona_id": args.persona} if args.persona else None
    seed = secrets.randbelow(1_000_000) if args.seed is None else args.seed
    obs, info = env.reset(seed=seed, options=options)
    console.print(f"[dim]{args.env}, persona {info['persona_id']}, mood {info['mood']}, seed {seed}. /why explains, /quit ends.[/]")
    console.print(f"[bold cyan]user[/]  {obs}")
    terminated = truncated = False
    reward = 0.0
    while not (terminated or truncated):
        line = _read_line(console)
        if line is None or line == "/quit":
            console.print("[dim]episode left unfinished[/]")
            break
        if line == "/why":
            console.print(f"[dim]{info['privileged']['reasoning'] or 'no reply appraised yet'}[/]")
            continue
        if not line or line.startswith("/"):
            console.print("[dim]type a reply, /why or /quit[/]")
            continue
        obs, reward, terminated, truncated, info = env.step(line)
        change = info["emotion_delta"]
        colour = "green" if change > 0 else "red" if change < 0 else "yellow"
        console.print(f"[bold cyan]user[/]  {obs}  [{colour}](mood {info['mood']}, {change:+d})[/]")
        if args.explain:
            console.print(f"[dim]      {info['privileged']['reasoning']}[/]")
    if terminated or truncated:
        console.print(f"[bold]end[/]: {info['terminal_reason']} after {info['turn']} turns; reward {float(reward):.2f}. "
                      "/why explains the last turn; Enter ends.")
        while (line := _read_line(console)) not in (None, "", "/quit"):
            if line == "/why":
                console.print(f"[dim]{info['privileged']['reasoning'] or 'the last reply was not appraised'}[/]")
            else:
                console.print("[dim]the episode has ended: /why explains its last turn, Enter leaves[/]")
    privileged = info["privileged"]
    console.print(f"[dim]hidden need: {privileged['hidden_need']}; character: {privileged['character_type']}[/]")
    env.close()
    return 0


def _read_line(console: Console) -> str | None:
    """One reply from stdin (None at end of input)."""
    console.print(PROMPT, end="")
    line = sys.stdin.readline()
    if not line:
        console.print()
        return None
    return line.strip()
