"""`dialog-gym demo`: play a few complete episodes offline with the bundled baseline agent."""

from __future__ import annotations

import argparse

import gymnasium as gym
from rich.console import Console

from dialog_gym.agents import CANARY_AGENTS, BaselineAgent


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="play a few episodes offline and print them")
    parser.add_argument("--env", default="RLVER-Empathy-v2", help="registered env id (default: %(default)s)")
    parser.add_argument("--episodes", type=int, default=3, help="how many episodes (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first episode (default: %(default)s)")
    parser.add_argument("--language", choices=["en", "zh"], default=None, help="persona language (default: any)")
    parser.add_argument(
        "--agent", choices=["baseline", *CANARY_AGENTS], default="baseline",
        help="the supporter: the baseline or one of the reward-hacking canaries (default: %(default)s)",
    )
    parser.add_argument("--show-reasoning", action="store_true", help="also print the simulator's appraisal")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.episodes < 1:
        raise ValueError(f"--episodes must be >= 1, got {args.episodes}")
    console = Console(highlight=False)
    agent = BaselineAgent() if args.agent == "baseline" else CANARY_AGENTS[args.agent]
    env = gym.make(args.env, language=args.language)
    rewards = []
    for k in range(args.episodes):
        obs, info = env.reset(seed=args.seed + k)
        console.rule(f"episode {k + 1}: persona {info['persona_id']}  (mood {info['mood']})")
        console.print(f"[bold cyan]user [/]  {obs}")
        terminated = truncated = False
        reward = 0.0
        while not (terminated or truncated):
            reply = agent(info["messages"])
            obs, reward, terminated, truncated, info = env.step(reply)
            console.print(f"[bold green]agent[/]  {reply}")
            if args.show_reasoning:
                console.print(f"[dim]        appraisal: {info['privileged']['reasoning']}[/]")
            colour = "green" if info["emotion_delta"] > 0 else "red" if info["emotion_delta"] < 0 else "yellow"
            console.print(f"[bold cyan]user [/]  {obs}  [{colour}](mood {info['mood']}, {info['emotion_delta']:+d})[/]")
        rewards.append(float(reward))
        need = info["privileged"]["hidden_need"]
        console.print(
            f"[bold]end[/]: {info['terminal_reason']} after {info['turn']} turns; reward {reward:.2f}"
            f"  [dim](hidden need: {need}, {info['privileged']['character_type']})[/]"
        )
    env.close()
    console.rule(f"mean reward over {len(rewards)} episodes: {sum(rewards) / len(rewards):.3f}")
    return 0
