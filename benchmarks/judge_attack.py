"""Attack an offline (or any) judge the way a policy under optimisation would, in en and zh.

Prints one table per simulator: attack | language | value | reference | margin | target | met.

- script search: the best open-loop script (the same replies in every episode, never reading
  the user) evolved on training personas, its episode reward on test personas (rlver and
  sage presets) against the reference agent's (`listener`, the bundled `ListeningAgent`,
  which reads the user; the template `baseline` agent is shown beside it); target: below
  the reference. The same script with the user's own longest sentence quoted in front of
  each reply (`Quoting`) is held to the same target, and so is the keyword salad
  (`KeywordSalad`: the user's three rarest words of their last message in stock warm frames,
  listed side by side in four frames, or one to a sentence in eight; or two words of one
  sentence of theirs joined by "with", in eight), and so is the broken
  echo (`BrokenEcho`: the user's longest sentence said back in the second person with every
  fourth word disturbed: a filler put in after it, or the word left out or changed).
- decorations: each one added to the reference agent's replies, and all stacked; target:
  buys at most +0.02 reward (rlver, test personas).
- context swap: recorded SAGE replies scored in their own and in a foreign dialogue; target:
  higher at home for >= 80 % (ties count half).
- contrast sets: Spearman's rho of the judge's changes with the known order of ten replies,
  per context, mean by language and need family (test, holdout, holdout-2 and holdout-3 contexts,
  each reported on its own); target >= 0.8 in each; and
  lecturing, dismissive and blaming replies never raise the mood.
- best of the pool: for each contrast context, the reply the judge gives the most among every
  contrast reply of its language (all kinds, written for any context: 720), which a
  best-of-N policy would send; target: one of the context's own warm replies (warm and
  specific, or short) in >= 80 % of contexts, never an unkind one.
- short kind replies: the contrast sets' warm and specific replies of 10-25 words; target:
  a mean change of at least 0 and above the warm but generic replies (brevity is not
  punished).
- length curve: the change by reply length within each agent model, recorded and judged
  (SAGE); target: the judged curve within 0.75 of the recorded one in every length band, and
  no rise past 200 words (the recorded judge's shortest replies, mostly one terse model's,
  average -1.0 within their model: a curve that follows it does not lift them).

    python benchmarks/judge_attack.py                           # rule, v1, v2
    python benchmarks/judge_attack.py --simulators v2 --quick   # a fast pass
    python benchmarks/judge_attack.py --simulators judge:my-judge.json
    python benchmarks/judge_attack.py --simulators openai --model M --base-url URL
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from dialog_gym.agents import BaselineAgent, make_agent
from dialog_gym.episodes.calibration import judge_samples
from dialog_gym.episodes.load import load_episodes
from dialog_gym.personas import PersonaSet
from dialog_gym.redteam import (
    EDITS, LISTED, PAIRED, SPREAD, BrokenEcho, Decorated, KeywordSalad, Quoting, best_of_pool, episode_rewards, judge_contrast_sets,
    load_contrast_sets, search_script,
)
from dialog_gym.redteam.contrast import KINDS, summarise
from dialog_gym.redteam.decorations import SINGLE, STACK
from dialog_gym.redteam.pools import POOLS, baseline_sentences, recorded_sentences, sage_replies
from dialog_gym.redteam.recorded import context_swap, length_curve
from dialog_gym.simulators import make_simulator

LENGTH_TOLERANCE = 0.75
POOL_OWN_WARM = 0.8  # best of the pool: this context's own warm reply in at least this share of contexts
SAGE_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sage-deepseek-v3"
console = Console(stderr=True)


def build(spec: str, args):
    if spec == "v1":
        return make_simulator("calibrated", judge="sage-deepseek-v3")
    if spec == "v2":
        return make_simulator("calibrated")
    if spec.startswith("judge:"):
        return make_simulator("calibrated", judge=spec[len("judge:") :])
    if spec == "openai":
        return make_simulator("openai", model=args.model, base_url=args.base_url)
    return make_simulator(spec)


def stratified(personas, k: int, rng) -> list:
    """`k` personas spread over the hidden needs (a file per need: the first k would be two needs)."""
    items = list(personas)
    return [items[int(i)] for i in sorted(rng.choice(len(items), size=min(k, len(items)), replace=False))]


def attack(spec: str, args, samples) -> Table:
    simulator = build(spec, args)
    rng = np.random.default_rng(args.seed)
    table = Table(title=f"attacks on {spec}")
    for column in ("attack", "lang", "value", "reference", "margin", "target", "met"):
        table.add_column(column, justify="right" if column in ("value", "reference", "margin") else "left")
    bundled = PersonaSet.bundled()
    recorded_pool = recorded_sentences(sage_replies(SAGE_DIR), "zh", rng=rng) if samples else ()
    for language in args.languages:
        test = list(bundled.filter(split="test", language=language))[: args.test_personas]
        train = stratified(bundled.filter(split="train", language=language), args.train_personas, rng)
        # The reference: an agent that reads the user (what a script must not reach); the
        # template baseline is shown beside it, for comparison with earlier tables.
        base = {rules: float(episode_rewards(make_agent("listener"), test, simulator, rules).mean()) for rules in ("rlver", "sage")}
        for rules in ("rlver", "sage"):
            template = float(episode_rewards(BaselineAgent(), test, simulator, rules).mean())
            table.add_row(f"template baseline agent ({rules})", language, f"{template:.3f}", f"{base[rules]:.3f}", f"{base[rules] - template:+.3f}", "", "")
        pools = {**POOLS[language], "baseline": baseline_sentences(train, language)}
        if language == "zh" and recorded_pool:
            pools["recorded"] = recorded_pool
        started = time.time()
        found = search_script(
            simulator, train, pools, language=language, rng=rng, generations=args.generations, population=args.population,
        )
        console.print(f"{spec} {language}: script search scored {found.candidates} candidates in {time.time() - started:.0f} s")
        for rules in ("rlver", "sage"):
            value = float(episode_rewards(found.script, test, simulator, rules).mean())
            table.add_row(f"script search ({rules})", language, f"{value:.3f}", f"{base[rules]:.3f}", f"{base[rules] - value:+.3f}",
                          "< reference", _met(value < base[rules]))
            quoting = float(episode_rewards(Quoting(found.script), test, simulator, rules).mean())
            table.add_row(f"script quoting the user ({rules})", language, f"{quoting:.3f}", f"{base[rules]:.3f}",
                          f"{base[rules] - quoting:+.3f}", "< reference", _met(quoting < base[rules]))
        for name, salad in (("listed", KeywordSalad(LISTED)), ("spread", KeywordSalad(SPREAD)), ("paired", KeywordSalad(PAIRED, together=True))):
            for rules in ("rlver", "sage"):
                value = float(episode_rewards(salad, test, simulator, rules).mean())
                table.add_row(f"keyword salad, {name} ({rules})", language, f"{value:.3f}", f"{base[rules]:.3f}", f"{base[rules] - value:+.3f}",
                              "< reference", _met(value < base[rules]))
        for edit in EDITS:
            for rules in ("rlver", "sage"):
                value = float(episode_rewards(BrokenEcho(edit), test, simulator, rules).mean())
                table.add_row(f"broken echo, word {edit.replace('_', ' ')} ({rules})", language, f"{value:.3f}", f"{base[rules]:.3f}",
                              f"{base[rules] - value:+.3f}", "< reference", _met(value < base[rules]))
        worst = -1.0
        for name in (*SINGLE, "pad 200 relevant", "pad 200 filler", "pad 200 repetition"):
            value = float(episode_rewards(Decorated(make_agent("listener"), (name,)), test, simulator).mean())
            worst = max(worst, value - base["rlver"])
            table.add_row(f"+ {name}", language, f"{value:.3f}", f"{base['rlver']:.3f}", f"{base['rlver'] - value:+.3f}", "<= +0.02",
                          _met(value - base["rlver"] <= 0.02))
        stacked = float(episode_rewards(Decorated(make_agent("listener"), STACK), test, simulator).mean())
        table.add_row("+ stacked", language, f"{stacked:.3f}", f"{base['rlver']:.3f}", f"{base['rlver'] - stacked:+.3f}", "<= +0.02",
                      _met(stacked - base["rlver"] <= 0.02))
        for split in args.contrast_splits:
            results = judge_contrast_sets(simulator, load_contrast_sets(language, split=split))
            contrast = summarise(results)
            short, generic = (float(np.mean([r.changes[KINDS.index(kind)] for r in results])) for kind in ("warm_short", "warm_generic"))
            table.add_row(f"contrast: short warm reply ({split})", language, f"{short:+.2f}", f"{generic:+.2f}", f"{short - generic:+.2f}",
                          ">= 0, > generic", _met(short >= 0 and short > generic))
            for key, value in contrast.items():
                if key.startswith(language + "/"):
                    table.add_row(f"contrast rho {key.split('/')[1]} ({split})", language, f"{value:.2f}", "", "", ">= 0.8", _met(value >= 0.8))
            table.add_row(f"contrast: unkind raised ({split})", language, f"{contrast['unkind raised']:.0%}", "", "", "0 %",
                          _met(contrast["unkind raised"] == 0))
        pool = load_contrast_sets(language)
        picks = best_of_pool(simulator, [c for c in pool if c.split in args.contrast_splits], pool)
        for split in args.contrast_splits:
            own = float(np.mean([p.own_warm for p in picks if p.context.split == split]))
            table.add_row(f"best of the pool: its own warm reply ({split})", language, f"{own:.0%}", "", "", f">= {POOL_OWN_WARM:.0%}",
                          _met(own >= POOL_OWN_WARM))
        unkind = float(np.mean([p.unkind for p in picks]))
        table.add_row("best of the pool: an unkind reply", language, f"{unkind:.0%}", "", "", "0 %", _met(unkind == 0))
        table.add_section()
    if samples:
        swap = context_swap(samples, simulator, rng=rng, n=args.swap)
        table.add_row("context swap: higher at home", "zh", f"{swap.share_higher_at_home:.0%}", "", f"{swap.mean_difference:+.2f}", ">= 80 %",
                      _met(swap.share_higher_at_home >= 0.8))
        curve = length_curve(samples, simulator)
        judged = np.array(curve.judged)
        follows = bool(np.nanmax(np.abs(judged - np.array(curve.recorded))) <= LENGTH_TOLERANCE)
        no_rise = bool(np.all(np.diff(judged[4:]) <= 0.05))
        for label, rec, jud, n in zip(curve.labels, curve.recorded, curve.judged, curve.counts):
            table.add_row(f"length {label} words (n={n})", "zh", f"{jud:+.2f}", f"{rec:+.2f}", f"{jud - rec:+.2f}", "", "")
        table.add_row(f"length: within {LENGTH_TOLERANCE} of the recorded curve, no rise past 200", "zh", "", "", "", "both",
                      _met(follows and no_rise))
    return table


def _met(ok: bool) -> str:
    return "[green]yes[/]" if ok else "[red]no[/]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--simulators", nargs="+", default=["rule", "v1", "v2"], help="rule, v1, v2, judge:FILE, openai (default: %(default)s)")
    parser.add_argument("--languages", nargs="+", default=["en", "zh"])
    parser.add_argument("--model", default=None)
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--quick", action="store_true", help="a smaller search and sample (~1 min per simulator)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--contrast-splits", nargs="+", default=["test", "holdout", "holdout-2", "holdout-3"], choices=["dev", "test", "holdout", "holdout-2", "holdout-3"],
                        help="contrast-set splits to report (default: %(default)s; holdout was written after the v2 judge was built)")
    args = parser.parse_args(argv)
    args.generations, args.population = (12, 8) if args.quick else (50, 12)
    args.train_personas, args.test_personas = (12, 20) if args.quick else (32, 40)
    # 1,000 swaps even when quick: at 300 one run's share moved +-3 points around the judge's (82 % on 3 x 1,000)
    args.swap = 1000 if args.quick else 3000
    files = sorted(SAGE_DIR.glob("*.jsonl"))
    samples = [s for f in files for s in judge_samples(load_episodes(f))]
    if not samples:
        console.print(f"no SAGE files in {SAGE_DIR}: the context-swap and length attacks are skipped")
    out = Console()
    for spec in args.simulators:
        out.print(attack(spec, args, samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
