"""Robustness figures of `LLMSimulator`.

    python benchmarks/llm_simulator_figures.py faults --episodes 20 --rate 0.3
    python benchmarks/llm_simulator_figures.py smollm2 --episodes 3 --turns 3

`faults`: episodes against the scripted OpenAI-compatible server with `rate` of requests
failing (429, 500, malformed JSON bodies, hangs past the timeout, malformed appraisals);
reports retries per episode and how many episodes still ended normally.
`smollm2`: short episodes with SmolLM2-135M-Instruct playing the user (CPU); reports the
share of appraisals that parsed on the first try, repairs, and how episodes ended.
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import statistics
import time

import numpy as np

from dialog_gym.session import DialogConfig
from dialog_gym.mood import RLVER, SAGE
from dialog_gym.simulators.llm import LLMSimulator, first_try_parsed, retries_in
from dialog_gym.testing import ScriptedOpenAIServer, make_persona

AGENT_LINES = [
    "That sounds really hard. What happened when the letter came?",
    "Two weeks is nothing. Have you checked whether a 30% raise is even legal where you live?",
    "You could ask the landlord to put the deposit towards a shorter notice period.",
    "What would make Friday's decision easier for you?",
]


async def play(session: DialogSession, turns: int) -> None:
    await session.start()
    for i in range(turns):
        if session.done:
            break
        await session.step(AGENT_LINES[i % len(AGENT_LINES)])


def faults(args: argparse.Namespace) -> dict:
    share = args.rate / 5
    rates = {"rate_limit": share, "server_error": share, "malformed_json": share, "hang": share, "bad_appraisal": share}
    with ScriptedOpenAIServer(seed=args.seed, faults=rates, hang_s=5.0) as server:
        sim = LLMSimulator.from_backend_name("openai", model="scripted", base_url=server.base_url, timeout_s=0.3,
                                             backoff_s=0.01, max_backoff_s=0.05, max_retries=6)
        retries, reasons = [], collections.Counter()

        async def run_all() -> None:
            sessions = [DialogConfig(sim, SAGE).session(make_persona("en" if i % 2 else "zh"), np.random.default_rng(i))
                        for i in range(args.episodes)]
            await asyncio.gather(*(play(s, SAGE.max_turns) for s in sessions))
            for s in sessions:
                retries.append(sum(retries_in(t.errors) for t in s.turns))
                reasons[s.terminal_reason] += 1
            await sim.aclose()

        started = time.perf_counter()
        asyncio.run(run_all())
        stats = server.stats()
    return {
        "figure": "retries per episode under injected faults", "fault_rate": args.rate, "episodes": args.episodes,
        "retries_per_episode_mean": round(statistics.mean(retries), 2), "retries_per_episode_max": max(retries),
        "end_reasons": dict(reasons), "requests": stats["chat_requests"], "faults": stats["faults"],
        "seconds": round(time.perf_counter() - started, 1),
    }


def smollm2(args: argparse.Namespace) -> dict:
    from dialog_gym.backends.transformers_backend import TransformersBackend

    backend = TransformersBackend.smollm2(max_batch_size=args.episodes)
    sim = LLMSimulator(backend, max_tokens_appraisal=args.appraisal_tokens, max_tokens_reply=args.reply_tokens,
                       temperature=0.7, max_appraisal_attempts=3)
    rules = RLVER.with_overrides(max_turns=args.turns)
    sessions = [DialogConfig(sim, rules).session(make_persona("en"), np.random.default_rng(i)) for i in range(args.episodes)]

    async def run_all() -> None:
        await asyncio.gather(*(play(s, args.turns) for s in sessions))

    started = time.perf_counter()
    asyncio.run(run_all())
    backend.close()
    turns = [t for s in sessions for t in s.turns]
    first_attempts = [t for t in turns if t.raw]  # every turn made at least one appraisal call
    strict_first = sum(first_try_parsed(t.errors) and t.user_reply != "" for t in first_attempts)
    repaired = sum(any("repaired" in e for e in t.errors) for t in turns)
    return {
        "figure": "SmolLM2 first-try appraisal parse rate", "episodes": args.episodes, "turns": len(turns),
        "first_try_parsed": strict_first, "first_try_rate": round(strict_first / max(1, len(turns)), 2),
        "turns_with_repairs": repaired, "turns_scored": sum(t.user_reply != "" for t in turns),
        "end_reasons": dict(collections.Counter(s.terminal_reason for s in sessions)),
        "batch_sizes": dict(collections.Counter(backend.batch_sizes)), "seconds": round(time.perf_counter() - started, 1),
        "sample_raw": turns[0].raw[0][:200] if turns and turns[0].raw else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    f = sub.add_parser("faults")
    f.add_argument("--episodes", type=int, default=20)
    f.add_argument("--rate", type=float, default=0.3)
    f.add_argument("--seed", type=int, default=0)
    s = sub.add_parser("smollm2")
    s.add_argument("--episodes", type=int, default=3)
    s.add_argument("--turns", type=int, default=3)
    s.add_argument("--appraisal-tokens", type=int, default=96)
    s.add_argument("--reply-tokens", type=int, default=40)
    args = parser.parse_args()
    print(json.dumps(faults(args) if args.what == "faults" else smollm2(args), ensure_ascii=False))


if __name__ == "__main__":
    main()
