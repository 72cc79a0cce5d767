"""Write the parquet prompts verl's multi-turn rollout reads for dialog-gym.

Each row is one episode: a persona and a seed. The prompt holds the agent's system prompt
and the simulated user's opening line (produced here by the simulator, so every rollout of
a GRPO group starts from the same line); `agent_name` picks the agent loop and
`extra_info.interaction_kwargs` holds the persona, seed and mood preset of the dialogue.

    python examples/verl/prepare_data.py --out-dir data/dialog_gym --train-episodes 2048 --language en

writes data/dialog_gym/train.parquet (train personas) and test.parquet (test personas) for
verl 0.9.x (agent_name "dialog_gym", the agent loop of agent_loop.yaml); for verl 0.7 add
`--agent-name tool_agent` (the loop that calls the interaction of interaction_config.yaml).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import numpy as np
from gymnasium.utils import seeding

from dialog_gym.envs.empathy import select_personas
from dialog_gym.integrations.verl import AGENT_LOOP_NAME, INTERACTION_NAME, dataset_row
from dialog_gym.simulators import make_simulator


async def build_rows(args: argparse.Namespace, split: str, n_episodes: int | None, first_seed: int) -> list[dict]:
    personas = select_personas(args.personas, split, args.language)
    count = len(personas) if n_episodes is None else n_episodes
    # Seeded shuffled passes over the personas: each one once before any twice.
    rng = np.random.default_rng(first_seed)
    order: list[int] = []
    while len(order) < count:
        order.extend(int(i) for i in rng.permutation(len(personas)))
    simulator = make_simulator(args.simulator, **({"style": args.style} if args.simulator == "rule" else {}))
    try:
        rows = []
        for index in range(count):
            persona, seed = personas[order[index]], first_seed + index
            opening = await simulator.open(persona, seeding.np_random(seed)[0])
            rows.append(
                dataset_row(
                    persona, seed, opening, index=index, split=split, rules=args.rules, think=args.think,
                    agent_name=args.agent_name, interaction_name=args.interaction_name,
                )
            )
        return rows
    finally:
        aclose = getattr(simulator, "aclose", None)
        if aclose is not None:
            await aclose()


def write_parquet(rows: list[dict], path: Path) -> None:
    import pandas as pd

    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(path, index=False)
    print(f"wrote {len(rows)} episodes to {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--personas", default=None, help="persona .jsonl file or folder (default: the bundled sets)")
    parser.add_argument("--language", choices=["en", "zh"], default=None)
    parser.add_argument("--train-episodes", type=int, default=None, help="default: one per train persona")
    parser.add_argument("--test-episodes", type=int, default=None, help="default: one per test persona")
    parser.add_argument("--seed", type=int, default=0, help="first episode seed (test seeds start at seed + 1_000_000)")
    parser.add_argument("--rules", default="rlver", choices=["rlver", "sage"])
    parser.add_argument("--simulator", default="rule", help="simulator that writes the opening lines")
    parser.add_argument("--style", default="vanilla", choices=["vanilla", "challenging"])
    parser.add_argument("--think", action="store_true", help="system prompt asks for <think>...</think>reply")
    parser.add_argument(
        "--agent-name", default=AGENT_LOOP_NAME,
        help="verl's agent loop: 'dialog_gym' (verl 0.9.x, agent_loop.yaml) or 'tool_agent' (verl 0.7 interactions)",
    )
    parser.add_argument("--interaction-name", default=INTERACTION_NAME, help="verl 0.7: the interaction's name")
    args = parser.parse_args(argv)

    for split, n, seed in (("train", args.train_episodes, args.seed), ("test", args.test_episodes, args.seed + 1_000_000)):
        rows = asyncio.run(build_rows(args, split, n, seed))
        write_parquet(rows, args.out_dir / f"{split}.parquet")


if __name__ == "__main__":
    main()
