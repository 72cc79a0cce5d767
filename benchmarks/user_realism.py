"""Does the offline simulated user listen? Realism figures of its answers, per language, for
the reciting planner (dialog-gym 0.x's words: "before") and the listening planner ("after"),
in one run, with the same judge.

    python benchmarks/user_realism.py [--personas 32] [--simulator calibrated] [--style vanilla]
                                      [--languages en zh] [--planners reciting listening] [--sage DIR]

Four agents play `--personas` personas each per language (the bundled `BaselineAgent` and the
probe agents of `dialog_gym.agents`: asking, advising, dismissive), under the `rlver` rules.
Printed per language and planner:

- action dependence: from the same states (the baseline's conversations after 1-3 replies),
  one reply of each of 7 kinds (`realism.PROBES`: questions about the people, what was
  tried, feelings; advice; validation; dismissal; off-topic) answered with the same generator
  state: the share of distinct answers per state, the share of reply pairs answered
  differently, and that share among pairs the judge gave the same fit and mood bucket
  (what the words depend on beyond the appraisal);
- answered: the share of the asking agent's questions (who / when / feelings / tried / wants /
  worries / what happened) whose next user message holds one of the persona's facts for that
  topic (a facet line; a disclosure for "what happened"), over questions the persona has
  facts for (target >= 80 %), and over those the user stayed for (a goodbye, when the
  judge has brought the mood below 10, answers nothing);
- repeated lines: sentences a user says twice in one episode, all agents (target 0);
- distinct-2 of the user's messages across episodes (words in English, characters in
  Chinese), on an equal budget of bigrams, beside the recorded SAGE users
  (../shared/data/sage-deepseek-v3, Chinese; skipped when absent);
- hidden-need leaks: user messages that name the persona's need (target 0);
- cost: microseconds of CPU time per `respond` (the words alone; the judge's appraisal is not
  timed; a persona's story is read once, at the episode's opening), target <= 200 us; and
  the planner alone, replaying the same calls with no judge in between (on a busy machine
  the judge's work between two answers makes each answer slower).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

import numpy as np

from dialog_gym.agents import PROBE_AGENTS, AskingAgent, BaselineAgent
from dialog_gym.mood import RLVER, is_goodbye
from dialog_gym.personas import PersonaSet
from dialog_gym.simulators import make_simulator
from dialog_gym.eval.realism import (
    TimedSimulator,
    action_dependence,
    answers_question,
    distinct_n,
    leaks_need,
    ngram_count,
    play_episode,
    repeated_lines,
    replay_cost,
)

SAGE_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sage-deepseek-v3"
AGENTS = {"baseline": BaselineAgent(), **PROBE_AGENTS}


def sage_user_messages(folder: Path) -> list[str]:
    """The recorded SAGE users' messages after their opening line (Chinese)."""
    messages = []
    for path in sorted(folder.glob("*.jsonl")):
        with path.open(encoding="utf-8") as lines:  # not str.splitlines: messages hold U+2028
            for line in filter(str.strip, lines):
                history = json.loads(line).get("history", [])
                messages += [m["content"] for m in history[1:] if m.get("role") == "user" and m.get("content")]
    return messages


async def measure(language: str, planner: str, args: argparse.Namespace) -> dict[str, float]:
    personas = PersonaSet.bundled().filter(language=language)
    step = max(1, len(personas) // args.personas)
    chosen = [personas[i] for i in range(0, len(personas), step)][: args.personas]
    options = {"judge": args.judge} if args.judge and args.simulator == "calibrated" else {}
    simulator = TimedSimulator(make_simulator(args.simulator, style=args.style, planner=planner, **options), keep_calls=True)
    episodes = []
    for name, agent in AGENTS.items():
        for k, persona in enumerate(chosen):
            episodes.append(await play_episode(simulator, persona, agent, RLVER, seed=k, name=name))

    asked = answered = goodbyes = 0
    for episode in episodes:
        if episode.agent != "asking":
            continue
        for turn, _, answer in episode.exchanges():
            verdict = answers_question(episode.persona, AskingAgent.topic(turn), answer)
            if verdict is not None:
                asked += 1
                answered += verdict
                goodbyes += is_goodbye(answer)
    responses = [line for e in episodes for line in e.user_lines()[1:]]
    states = []
    for episode in episodes:
        if episode.agent == "baseline":
            for cut in (1, 2, 3):
                if len(episode.moods) > cut:
                    states.append((episode.persona, episode.history[: 1 + 2 * cut], episode.moods[cut - 1]))
    dependence = await action_dependence(simulator.inner, states, RLVER)
    return {
        "episodes": len(episodes),
        "responses": len(responses),
        "distinct_share": dependence["distinct_share"],
        "pairs_differ": dependence["pairs_differ"],
        "same_fit_pairs_differ": dependence["same_fit_pairs_differ"],
        "answered": answered / max(1, asked),
        "answered_staying": answered / max(1, asked - goodbyes),
        "asked": asked,
        "goodbyes": goodbyes,
        "repeats": sum(repeated_lines(e.user_lines(), language) for e in episodes),
        "episodes_with_repeats": sum(repeated_lines(e.user_lines(), language) > 0 for e in episodes),
        "leaks": sum(leaks_need(e.persona, line) for e in episodes for line in e.user_lines()[1:]),
        "respond_us": 1e6 * float(np.mean(simulator.respond_seconds)),
        "respond_median_us": 1e6 * float(np.median(simulator.respond_seconds)),
        "respond_p99_us": 1e6 * float(np.percentile(simulator.respond_seconds, 99)),
        "respond_alone_us": 1e6 * replay_cost(simulator.inner.planner, simulator.calls),
        "_responses": responses,  # type: ignore[dict-item]
        "reward": float(np.mean([e.reward for e in episodes if e.agent == "baseline"])),
    }


ROWS = (
    ("action dependence: distinct answers per state", "distinct_share", "{:.0%}", ""),
    ("  reply pairs answered differently", "pairs_differ", "{:.0%}", ""),
    ("  ... among pairs with the same fit and bucket", "same_fit_pairs_differ", "{:.0%}", ""),
    ("questions answered with a persona fact", "answered", "{:.0%}", ">= 80%"),
    ("  ... of those the user stayed for (no goodbye)", "answered_staying", "{:.0%}", ""),
    ("  questions asked (with facts to check), goodbyes", "asked_goodbyes", "{}", ""),
    ("repeated lines within an episode", "repeats", "{:d}", "0"),
    ("  episodes with a repeat", "episodes_with_repeats", "{:d}", ""),
    ("distinct-2 of user messages", "distinct2", "{:.3f}", ""),
    ("hidden-need leaks", "leaks", "{:d}", "0"),
    ("cost per response (us, CPU time)", "respond_us", "{:.0f}", "<= 200"),
    ("  median, p99 (us)", "respond_spread", "{}", ""),
    ("  the planner alone, replayed (us)", "respond_alone_us", "{:.0f}", ""),
    ("baseline agent's mean reward", "reward", "{:.3f}", ""),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--personas", type=int, default=32, help="personas per agent and language (default: %(default)s)")
    parser.add_argument("--simulator", default="calibrated", choices=["calibrated", "rule"])
    parser.add_argument("--judge", default=None, help="the calibrated simulator's judge (default: its own; sage-deepseek-v3 is v1's)")
    parser.add_argument("--style", default="vanilla", choices=["vanilla", "challenging"])
    parser.add_argument("--languages", nargs="+", default=["en", "zh"], choices=["en", "zh"])
    parser.add_argument("--planners", nargs="+", default=["reciting", "listening"], choices=["reciting", "listening"])
    parser.add_argument("--sage", type=Path, default=SAGE_DIR, help="recorded SAGE dialogues (default: %(default)s)")
    args = parser.parse_args()
    sage = sage_user_messages(args.sage) if args.sage.is_dir() else []
    judge = f" (judge {args.judge})" if args.judge else ""
    print(f"{args.simulator} simulator{judge}, {args.style} style, rlver rules; {len(AGENTS)} agents x {args.personas} personas per language")
    for language in args.languages:
        results = {planner: asyncio.run(measure(language, planner, args)) for planner in args.planners}
        budget = min(ngram_count(r["_responses"], language) for r in results.values())  # type: ignore[arg-type]
        if language == "zh" and sage:
            budget = min(budget, ngram_count(sage, language))
        for r in results.values():
            r["distinct2"] = distinct_n(r["_responses"], language, budget=budget)  # type: ignore[arg-type]
            r["respond_spread"] = f"{r['respond_median_us']:.0f}, {r['respond_p99_us']:.0f}"
            r["asked_goodbyes"] = f"{r['asked']}, {r['goodbyes']}"
        header = f"{language}: {results[args.planners[0]]['episodes']} episodes per planner"
        print(f"\n{header}\n" + f"{'':46}" + "".join(f"{p:>12}" for p in args.planners) + f"{'target':>10}")
        for label, key, fmt, target in ROWS:
            print(f"{label:46}" + "".join(f"{fmt.format(results[p][key]):>12}" for p in args.planners) + f"{target:>10}")
        if language == "zh" and sage:
            print(f"{'  recorded SAGE users (DeepSeek-V3)':46}{distinct_n(sage, language, budget=budget):>12.3f}"
                  f"   ({len(sage)} messages; {budget} bigrams each)")
        elif language == "zh":
            print(f"  (no recorded SAGE users at {args.sage}: skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
