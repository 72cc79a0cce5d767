"""`dialog-gym demo`: play a few complete episodes, printed turn by turn (offline by default).

`--agent` takes the specs of `dialog-gym eval --agent`: a registered agent (`listener`, the
default, a supporter that reads the user; `baseline`, the template agent; the reward-hacking
canaries), `BACKEND:TARGET` or `module:function`.
"""

from __future__ import annotations

import argparse

import gymnasium as gym
from rich.console import Console

from dialog_gym.agents import agent_names


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="play a few episodes offline and print them")
    parser.add_argument("--env", default="RLVER-Empathy-v2", help="registered env id (default: %(default)s)")
    parser.add_argument("--episodes", type=int, default=3, help="how many episodes (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first episode (default: %(default)s)")
    parser.add_argument("--language", choices=["en", "zh"], default=None, help="persona language (default: any)")
    parser.add_argument(
        "--agent", default="listener",
        help=f"the supporter, as for `eval --agent`: {', '.join(agent_names())}, BACKEND:TARGET or "
        "module:function (default: %(default)s)",
    )
    parser.add_argument("--base-url", default=None, help="the agent's OpenAI-compatible endpoint (openai:MODEL)")
    parser.add_argument("--show-reasoning", action="store_true", help="also print the simulator's appraisal")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dialog_gym._async import LoopRunner
    from dialog_gym.eval.agents import load_agent
    from dialog_gym.rollouts import AgentRequest, as_agent

    if args.episodes < 1:
        raise ValueError(f"--episodes must be >= 1, got {args.episodes}")
    console = Console(highlight=False)
    agent = load_agent(args.agent, base_url=args.base_url, seed=args.seed)
    batched = as_agent(agent)  # every agent form answers a list of requests
    runner = LoopRunner()  # the agent's own loop (an HTTP client stays bound to it)
    env = gym.make(args.env, language=args.language)
    rewards = []
    try:
        for k in range(args.episodes):
            obs, info = env.reset(seed=args.seed + k)
            console.rule(f"episode {k + 1}: persona {info['persona_id']}  (mood {info['mood']})")
            console.print(f"[bold cyan]user [/]  {obs}")
            terminated = truncated = False
            reward = 0.0
            while not (terminated or truncated):
                request = AgentRequest(f"demo-{k}", k, info["persona_id"], info["turn"] + 1, info["messages"])
                (reply,) = runner.run(batched([request]))
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
    finally:
        env.close()
        aclose = getattr(agent, "aclose", None)
        if aclose is not None:
            runner.run(aclose())
        runner.close()
    console.rule(f"mean reward over {len(rewards)} episodes: {sum(rewards) / len(rewards):.3f}")
    return 0
