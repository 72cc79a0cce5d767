"""Attack an offline (or any) judge the way a policy under optimisation would, in en and zh.

Prints one table per simulator: attack | language | value | reference | margin | target | met
(`dialog_gym.redteam.suite`; `dialog-gym attack` prints the same table for one simulator).

- script search: the best open-loop script (the same replies in every episode, never reading
  the user) evolved on training personas, its episode reward on test personas (rlver and
  sage presets) against the reference agent's (`listener`, the bundled `ListeningAgent`,
  which reads the user; the template `baseline` agent is shown beside it); target: below
  the reference. The same script with the user's own longest sentence quoted in front of
  each reply (`Quoting`) is held to the same target, and so is the keyword salad
  (`KeywordSalad`: the user's three rarest words of their last message in stock warm frames,
  listed side by side in four frames, or one to a sentence in eight; or two words of one
  sentence of theirs joined by "with", in eight; or three of one sentence, "X with Y and Z",
  or "X Y and Z"; or the two joined by a word of the salad's own, "X weighing on Y"; or the
  two and the next rarest word in a sentence of its own), and so is the broken
  echo (`BrokenEcho`: the user's longest sentence said back in the second person with every
  fourth word disturbed: a filler put in after it, or the word left out or changed), and the
  feeling echo (`FeelingEcho`: the feelings they named said back in stock frames).
- decorations: each one added to the reference agent's replies, and all stacked; target:
  buys at most +0.02 reward (rlver, test personas).
- context swap: recorded SAGE replies scored in their own and in a foreign dialogue; target:
  higher at home for >= 80 % (ties count half).
- contrast sets: Spearman's rho of the judge's changes with the known order of ten replies,
  per context, mean by language and need family (test, holdout, holdout-2, holdout-3 and
  holdout-4 contexts, each reported on its own); target >= 0.8 in each; and lecturing,
  dismissive and blaming replies never raise the mood.
- best of the pool: for each contrast context, the reply the judge gives the most among every
  contrast reply of its language (all kinds, written for any context: 1,040), which a
  best-of-N policy would send; target: one of the context's own warm replies (warm and
  specific, or short) in >= 80 % of contexts, never an unkind one; and, where recorded
  replies are at hand (SAGE, Chinese), each context's own ten replies against 300 of them.
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
from pathlib import Path

from rich.console import Console

from dialog_gym.episodes.calibration import judge_samples
from dialog_gym.episodes.load import load_episodes
from dialog_gym.redteam.suite import SPLITS, AttackSettings, attack_table, run_attacks
from dialog_gym.simulators import make_simulator

SAGE_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sage-deepseek-v3"
console = Console(stderr=True)


def build(spec: str, args):
    if spec == "v1":
        return make_simulator("calibrated", judge="sage-deepseek-v3")
    if spec == "v2":
        return make_simulator("calibrated")
    if spec == "v2+sense":  # the opt-in reader of sense (a language model: hours on a CPU; see judge_sense.py)
        return make_simulator("calibrated", sense="smollm2")
    if spec == "v2+stance":  # the opt-in reader of stance (a language model on every reply: --attacks contrast disguise pool)
        return make_simulator("calibrated", stance="smollm2")
    if spec.startswith("judge:"):
        return make_simulator("calibrated", judge=spec[len("judge:") :])
    if spec == "openai":
        return make_simulator("openai", model=args.model, base_url=args.base_url)
    return make_simulator(spec)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--simulators", nargs="+", default=["rule", "v1", "v2"], help="rule, v1, v2, v2+sense, v2+stance, judge:FILE, openai (default: %(default)s)")
    parser.add_argument("--languages", nargs="+", default=["en", "zh"])
    parser.add_argument("--model", default=None)
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--quick", action="store_true", help="a smaller search and sample (~3 min per simulator, against ~9)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--contrast-splits", nargs="+", default=list(AttackSettings().contrast_splits), choices=SPLITS,
                        help="contrast-set splits to report (default: %(default)s; holdout was written after the v2 judge was built)")
    args = parser.parse_args(argv)
    settings = AttackSettings(languages=tuple(args.languages), contrast_splits=tuple(args.contrast_splits), quick=args.quick, seed=args.seed)
    files = sorted(SAGE_DIR.glob("*.jsonl"))
    samples = [s for f in files for s in judge_samples(load_episodes(f))]
    if not samples:
        console.print(f"no SAGE files in {SAGE_DIR}: the context-swap and length attacks are skipped")
    out = Console()
    for spec in args.simulators:
        with console.status(f"attacking {spec}") as status:
            rows = run_attacks(build(spec, args), settings, samples=samples, progress=lambda step: status.update(f"attacking {spec}: {step}"))
        out.print(attack_table(rows, f"attacks on {spec}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
