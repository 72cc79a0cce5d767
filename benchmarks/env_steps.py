"""Offline env speed: single-env steps/s and the vector env's overhead per sub-env, for the
calibrated judge (the default, v2), the v1 judge and the rule simulator.

    python benchmarks/env_steps.py [--steps 4000] [--sizes 1 16 64 256] [--simulators calibrated calibrated-v1 rule]
                                   [--repeat-replies] [--written]

The simulator's own work (`appraise` and `respond`, timed by a thin wrapper) is measured separately
from everything else a step does (the session's bookkeeping, the vector env's concurrent
dispatch, autoresets, info batching): "overhead" is wall time minus simulator time, per
sub-env step; "appraisal" is the judge's share of the simulator time. Every reply is new, as
a policy's are in training (six short replies, each with a tail that differs from step to
step); `--repeat-replies` plays the six verbatim, which lets the caches of the reply's
analyses answer. The six are short; a policy's replies are often longer, and the cost of a
reading grows with the reply: `--written` then times each judge's appraisal alone on
written replies (the contrast sets', and SAGE's recorded ones where ../shared/data is
present), each made new. Runs in one process pinned to one core where the OS allows it.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import time
from pathlib import Path
from typing import Any

from gymnasium.vector import AutoresetMode

import dialog_gym  # noqa: F401
from dialog_gym.envs.empathy import EmpathyDialogEnv
from dialog_gym.envs.vector import EmpathyVectorEnv
from dialog_gym.episodes.calibration import judge_samples
from dialog_gym.episodes.load import load_episodes
from dialog_gym.personas import PersonaSet
from dialog_gym.redteam.contrast import load_contrast_sets
from dialog_gym.simulators import CalibratedSimulator, RuleSimulator
from dialog_gym.simulators.judge import V1_JUDGE


class CalibratedV1Simulator(CalibratedSimulator):
    """The calibrated simulator with the v1 judge: the cost issue 19 holds v2 to. It keeps the
    v2 row's planner (the v1 envs' `calibrated-v1` recites), so that the two rows differ in
    the judge alone."""

    def __init__(self, **kwargs: Any):
        super().__init__(judge=V1_JUDGE, **kwargs)


SIMULATORS = {"calibrated": CalibratedSimulator, "calibrated-v1": CalibratedV1Simulator, "rule": RuleSimulator}

REPLIES = (
    "That sounds exhausting. What happened after that?",
    "I hear you, and it makes sense that you feel hurt by it.",
    "You did nothing wrong here, honestly.",
    "Have you thought about talking to them directly?",
    "听起来真的很委屈，后来怎么样了？",
    "It must be hard to carry that on your own. I'm here.",
)


_TAIL = "today again still though maybe really also then later first".split()
_PLAYED = itertools.count()


def reply_at(t: int, repeat: bool = False) -> str:
    """The reply played at step `t`: one of `REPLIES`, verbatim if `repeat`, else with a tail of
    six words that no other reply of this process has (the count of replies played, in words)."""
    reply = REPLIES[t % len(REPLIES)]
    if repeat:
        return reply
    n = next(_PLAYED)
    return reply + " " + " ".join(_TAIL[(n // 10**k) % 10] for k in range(6))


def timed(base: type) -> type:
    """`base` with the time spent inside `open`, `appraise` and `respond` accumulated (and
    inside `appraise` alone)."""

    class Timed(base):
        def __init__(self, **kwargs: Any):
            super().__init__(**kwargs)
            self.seconds = 0.0
            self.appraisal_seconds = 0.0
            self.calls = 0

        async def open(self, persona, rng):
            started = time.perf_counter()
            try:
                return await super().open(persona, rng)
            finally:
                self.seconds += time.perf_counter() - started

        async def appraise(self, persona, mood, history, reply, *, rules, rng):
            started = time.perf_counter()
            try:
                return await super().appraise(persona, mood, history, reply, rules=rules, rng=rng)
            finally:
                spent = time.perf_counter() - started
                self.seconds += spent
                self.appraisal_seconds += spent
                self.calls += 1

        async def respond(self, persona, history, reply, appraisal, *, mood, rng):
            started = time.perf_counter()
            try:
                return await super().respond(persona, history, reply, appraisal, mood=mood, rng=rng)
            finally:
                self.seconds += time.perf_counter() - started

    return Timed


def _check(terminal_reason: str, error: Any) -> None:
    """Stop at an episode a simulator error ended: a failing step is not a step to time."""
    if terminal_reason == "simulator_error":
        raise RuntimeError(f"the simulator failed, so the figures would time failures: {error}")


def _figures(sim: Any, wall: float, steps: int) -> dict[str, float]:
    return {"steps_per_s": steps / wall, "us_per_step": 1e6 * wall / steps, "sim_us": 1e6 * sim.seconds / steps,
            "appraisal_us": 1e6 * sim.appraisal_seconds / steps, "overhead_us": 1e6 * (wall - sim.seconds) / steps}


def bench_single(steps: int, simulator: str, *, repeat: bool = False) -> dict[str, float]:
    sim = timed(SIMULATORS[simulator])()
    env = EmpathyDialogEnv(simulator=sim)
    env.reset(seed=0)
    started = time.perf_counter()
    for t in range(steps):
        _, _, terminated, truncated, info = env.step(reply_at(t, repeat))
        if terminated or truncated:
            _check(info["terminal_reason"], info.get("error"))
            env.reset()
    wall = time.perf_counter() - started
    env.close()
    return _figures(sim, wall, steps)


def bench_vector(num_envs: int, steps: int, simulator: str, *, repeat: bool = False) -> dict[str, float]:
    sim = timed(SIMULATORS[simulator])()
    venv = EmpathyVectorEnv(num_envs, simulator=sim, autoreset_mode=AutoresetMode.SAME_STEP)
    venv.reset(seed=0)
    n_steps = max(4, steps // num_envs)
    actions = [[reply_at(t * num_envs + i, repeat) for i in range(num_envs)] for t in range(n_steps)]
    started = time.perf_counter()
    for t in range(n_steps):
        _, _, terminated, truncated, info = venv.step(actions[t])
        final = info.get("final_info", {})  # SAME_STEP: the ended episodes' own info
        for i in (terminated | truncated).nonzero()[0]:
            _check(final["terminal_reason"][i], final.get("error", [None] * num_envs)[i])
    wall = time.perf_counter() - started
    venv.close()
    return _figures(sim, wall, n_steps * num_envs)


SAGE_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sage-deepseek-v3"


def written_replies() -> dict[str, list[tuple[Any, Any, str]]]:
    """(persona, conversation, reply) per set of replies written as a policy's would be: the
    contrast sets' (en, zh: every kind, 20-120 words) and every twelfth recorded SAGE reply
    (zh, 150-300 words most often; where ../shared/data is present)."""
    personas = {p.id: p for p in PersonaSet.bundled()}
    sets = {f"{language} contrast sets": [(personas[c.persona_id], c.history, reply) for c in load_contrast_sets(language) for reply in c.replies]
            for language in ("en", "zh")}
    files = sorted(SAGE_DIR.glob("*.jsonl"))
    if files:
        sets["zh SAGE recorded"] = [(s.persona, s.history, s.reply) for f in files for s in judge_samples(load_episodes(f))[::12]]
    return sets


def bench_written(items: list[tuple[Any, Any, str]], simulator: str, repeats: int = 3) -> float:
    """Seconds per appraisal of `items` (the judge alone, `judge_reply`), each reply made new
    by a number appended (so that no cache answers for it); the fastest of `repeats` passes."""
    sim = SIMULATORS[simulator]()
    best = math.inf
    for _ in range(repeats):
        replies = [f"{reply} {next(_PLAYED)}" for _, _, reply in items]
        started = time.perf_counter()
        for (persona, history, _), reply in zip(items, replies):
            sim.judge_reply(persona, history, reply)
        best = min(best, (time.perf_counter() - started) / len(items))
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4000, help="sub-env steps per measurement")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 16, 64, 256])
    parser.add_argument("--simulators", nargs="+", default=list(SIMULATORS), choices=list(SIMULATORS))
    parser.add_argument("--repeat-replies", action="store_true", help="play the six replies verbatim (the reply caches answer)")
    parser.add_argument("--written", action="store_true", help="then time the judges on written replies (contrast sets, SAGE's)")
    args = parser.parse_args(argv)
    repeat = args.repeat_replies
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    print(f"replies: {'the six, verbatim' if repeat else 'new at every step'}")
    print(f"{'simulator':<13} {'env':<24} {'sub-env steps/s':>16} {'us/step':>9} {'simulator us':>13} {'appraisal us':>13} {'overhead us':>12}")
    single: dict[str, dict[str, float]] = {}
    for simulator in args.simulators:
        bench_single(1000, simulator, repeat=repeat)  # warm-up (imports, the judge file, the caches of the personas' lines)
        rows = [("EmpathyDialogEnv", bench_single(args.steps, simulator, repeat=repeat))]
        single[simulator] = rows[0][1]
        rows += [(f"EmpathyVectorEnv N={n}", bench_vector(n, args.steps, simulator, repeat=repeat)) for n in args.sizes]
        for name, r in rows:
            print(f"{simulator:<13} {name:<24} {r['steps_per_s']:>16,.0f} {r['us_per_step']:>9.1f} {r['sim_us']:>13.1f} "
                  f"{r['appraisal_us']:>13.1f} {r['overhead_us']:>12.1f}")
    print("overhead = wall time minus time inside the simulator, per sub-env step (target < 200 us)")
    if "calibrated" in single and "calibrated-v1" in single:
        v2, v1 = single["calibrated"], single["calibrated-v1"]
        print(f"appraisal per step, v2 judge / v1 judge: {v2['appraisal_us'] / v1['appraisal_us']:.2f} "
              f"({v2['appraisal_us']:.0f} us / {v1['appraisal_us']:.0f} us); simulator time per step "
              f"{v2['sim_us'] / v1['sim_us']:.2f} ({v2['sim_us']:.0f} us / {v1['sim_us']:.0f} us)")
    judges = [s for s in args.simulators if s in ("calibrated", "calibrated-v1")]
    if args.written and judges:
        print(f"\nappraisal of written replies (us, the fastest of three passes): {' / '.join(judges)}")
        for name, items in written_replies().items():
            us = [1e6 * bench_written(items, s) for s in judges]
            ratio = f"   v2 / v1 {us[0] / us[1]:.2f}" if len(us) == 2 else ""
            print(f"{name:<20} {len(items):>5} replies  " + " / ".join(f"{u:.0f}" for u in us) + ratio)


if __name__ == "__main__":
    main()
