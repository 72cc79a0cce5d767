"""Rollout throughput against a local OpenAI-compatible server with a fixed latency.

    python benchmarks/rollout_throughput.py [--latency 0.1] [--sizes 16 64 256]

For every N it plays N dialogues (RLVER preset: up to 8 agent turns, two simulator calls
per turn, plus one call for the opening line) with the LLM simulator against
`dialog_gym.testing.ScriptedOpenAIServer`, which runs in its own process (its own GIL,
sharing the machine's cores with the client), and measures:

  (a) ceiling      raw `openai.AsyncOpenAI` calls, N concurrent chains of 17 calls
                   (a full episode's worth), same prompt size, no env; and the same calls
                   in lock-step (every chain waits for all the others every 2 calls, as
                   the steps of any vector env do): what a step barrier alone costs;
  (b) vector env   `EmpathyVectorEnv` (autoreset disabled) stepped until every dialogue ends;
  (c) rollout      the rollout engine (`dialog_gym.rollouts.arollout`, N episodes in flight);
  (d) sync / async Gymnasium's `SyncVectorEnv` and `AsyncVectorEnv` over N
                   `EmpathyDialogEnv`s (next-step autoreset), stepped until each sub-env has
                   finished one episode;
  (e) sequential   an RLVER-style loop: one episode after another, one call at a time.

Columns: wall time, simulator calls (counted by the server), calls per second, the ratio of
a row's calls/s to the ceiling's, and wall time over the latency floor (the longest chain
of dependent calls in the row times the latency: no client can beat it). Rows that call
the server one request at a time would take minutes at N=256; they run for
`--sequential-budget` seconds and their wall time is extrapolated from the measured rate
(marked `~`). `AsyncVectorEnv` starts one process per sub-env; above `--async-max-n` it is
skipped. Rows (a)-(c) run `--repeats` times, interleaved, and keep their best run (the
machine's other load varies). A last table gives the rule simulator's sub-env steps/s in `EmpathyVectorEnv`.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import time
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import openai
from gymnasium.vector import AutoresetMode

import dialog_gym  # noqa: F401
from dialog_gym.envs.empathy import EmpathyDialogEnv
from dialog_gym.envs.vector import EmpathyVectorEnv
from dialog_gym.mood import RLVER
from dialog_gym.personas import PersonaSet
from dialog_gym.rollouts import arollout
from dialog_gym.simulators import prompts

MODEL = "scripted"
CALLS_PER_EPISODE = 1 + 2 * RLVER.max_turns  # opening + (appraise, respond) per turn
# Warm, questioning replies and some advice: the scripted brain keeps the mood between the
# ending thresholds, so dialogues run their full 8 turns.
REPLIES = (
    "That sounds really hard. What happened next?",
    "I hear you. How did that make you feel?",
    "Have you tried talking to them about it?",
    "That sounds exhausting, I'm sorry. What was the worst part?",
)


def reply_for_turn(turn: int) -> str:
    return REPLIES[turn % len(REPLIES)]


# -- the server process ---------------------------------------------------------------------
def _serve(conn: Any, latency_s: float) -> None:
    from dialog_gym.testing import ScriptedOpenAIServer

    server = ScriptedOpenAIServer(latency_s=latency_s, seed=0).start()
    conn.send(server.base_url)
    while True:
        command = conn.recv()
        if command == "stats":
            conn.send(server.stats())
        else:
            server.stop()
            conn.send(None)
            return


class ServerProcess:
    """`ScriptedOpenAIServer` in a child process, with its counters readable from here."""

    def __init__(self, latency_s: float):
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, latency_s), daemon=True)
        self._process.start()
        self.base_url: str = self._conn.recv()

    def calls(self) -> int:
        self._conn.send("stats")
        return int(self._conn.recv()["chat_requests"])

    def stop(self) -> None:
        self._conn.send("stop")
        self._conn.recv()
        self._process.join(timeout=10)


# -- rows -----------------------------------------------------------------------------------
@dataclass
class Row:
    name: str
    n: int
    wall_s: float
    calls: int
    chain: int  # the longest chain of dependent calls (for the latency floor)
    extrapolated: bool = False
    note: str = ""

    @property
    def calls_per_s(self) -> float:
        return self.calls / self.wall_s if self.wall_s else 0.0


def simulator_fields(base_url: str, n: int) -> dict[str, Any]:
    """The openai simulator on the scripted server, as the keyword arguments of an entry point."""
    options = {"model": MODEL, "base_url": base_url, "max_concurrency": max(64, n), "timeout_s": 120.0}
    return {"simulator": "openai", "simulator_options": options}


def sample_prompt() -> list[dict[str, str]]:
    """A realistic appraisal request (persona, scene, a short history) for the ceiling."""
    persona = PersonaSet.bundled().filter(split="train")[0]
    history = [{"role": "user", "content": "I've had a rough week."}, {"role": "assistant", "content": REPLIES[0]},
               {"role": "user", "content": "It's my job, mostly. I keep getting blamed for things."}]
    return prompts.appraisal_messages(persona, 35, history, REPLIES[1], rules=RLVER, style="vanilla", language=persona.language)


async def ceiling(base_url: str, n: int, *, lock_step: bool = False) -> tuple[float, int]:
    """N concurrent chains of 17 dependent calls; `lock_step`: all chains wait for each other
    every 2 calls (one env step: appraise, respond), as a vector env's step does."""
    client = openai.AsyncOpenAI(api_key="EMPTY", base_url=base_url, max_retries=0, timeout=120.0)
    messages = sample_prompt()

    async def chain(length: int) -> int:
        for _ in range(length):
            await client.chat.completions.create(model=MODEL, messages=messages, max_tokens=320, temperature=0.7)
        return length

    started = time.perf_counter()
    if lock_step:
        calls = sum(await asyncio.gather(*(chain(1) for _ in range(n))))
        for _ in range(RLVER.max_turns):
            calls += sum(await asyncio.gather(*(chain(2) for _ in range(n))))
    else:
        calls = sum(await asyncio.gather(*(chain(CALLS_PER_EPISODE) for _ in range(n))))
    wall = time.perf_counter() - started
    await client.close()
    return wall, calls


def run_vector_env(base_url: str, n: int) -> tuple[float, int]:
    venv = EmpathyVectorEnv(n, autoreset_mode=AutoresetMode.DISABLED, **simulator_fields(base_url, n))
    started = time.perf_counter()
    venv.reset(seed=0)
    turn = 0
    while not venv.done.all():
        venv.step([None if done else reply_for_turn(turn) for done in venv.done])
        turn += 1
    wall = time.perf_counter() - started
    venv.close()
    return wall, turn


async def run_rollout(base_url: str, n: int) -> tuple[float, int]:
    async def agent(messages):
        return reply_for_turn(sum(1 for m in messages if m["role"] == "assistant"))

    started = time.perf_counter()
    episodes = await arollout(agent, n_episodes=n, split="train", seed=0, max_concurrent_episodes=n, progress=False,
                              **simulator_fields(base_url, n))
    return time.perf_counter() - started, max(e.num_turns for e in episodes)


def run_gym_vector(kind: str, base_url: str, n: int, budget_s: float) -> tuple[float, bool]:
    """Step until every sub-env has finished one episode (or the budget runs out)."""
    kwargs = simulator_fields(base_url, n)
    make = lambda: EmpathyDialogEnv(**kwargs)  # noqa: E731
    if kind == "sync":
        venv = gym.vector.SyncVectorEnv([make] * n)
    else:
        venv = gym.vector.AsyncVectorEnv([make] * n, shared_memory=False)
    started = time.perf_counter()
    venv.reset(seed=0)
    finished = np.zeros(n, dtype=bool)
    turn = 0
    while not finished.all():
        _, _, terminated, truncated, _ = venv.step(tuple(reply_for_turn(turn) for _ in range(n)))
        finished |= terminated | truncated
        turn += 1
        if time.perf_counter() - started > budget_s:
            break
    wall = time.perf_counter() - started
    venv.close()
    return wall, not finished.all()


def run_sequential(base_url: str, n: int, budget_s: float) -> tuple[float, int, bool]:
    """RLVER-style: one env, one episode after another, each call waiting for the last."""
    env = EmpathyDialogEnv(**simulator_fields(base_url, n))
    started = time.perf_counter()
    episodes = 0
    for i in range(n):
        env.reset(seed=i)
        turn, done = 0, False
        while not done:
            _, _, terminated, truncated, _ = env.step(reply_for_turn(turn))
            done, turn = terminated or truncated, turn + 1
        episodes += 1
        if time.perf_counter() - started > budget_s:
            break
    wall = time.perf_counter() - started
    env.close()
    return wall, episodes, episodes < n


def measure(server: ServerProcess, args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []

    def timed(fn, *fn_args) -> Any:
        """`fn(*fn_args)` and the number of chat requests the server answered meanwhile."""
        before = server.calls()
        result = fn(*fn_args)
        return result, server.calls() - before

    for n in args.sizes:
        # The concurrent rows run `--repeats` times, interleaved so that they see the same
        # machine load; each keeps its best (shortest) run.
        best: dict[str, Row] = {}
        for _ in range(args.repeats):
            (wall, _), calls = timed(lambda: asyncio.run(ceiling(server.base_url, n)))
            keep_best(best, Row("(a) ceiling: raw AsyncOpenAI", n, wall, calls, CALLS_PER_EPISODE))
            (wall, _), calls = timed(lambda: asyncio.run(ceiling(server.base_url, n, lock_step=True)))
            keep_best(best, Row("(a') lock-step raw AsyncOpenAI", n, wall, calls, CALLS_PER_EPISODE, note="barrier every 2 calls"))
            (wall, turns), calls = timed(run_vector_env, server.base_url, n)
            keep_best(best, Row("(b) EmpathyVectorEnv", n, wall, calls, 1 + 2 * turns))
            (wall, turns), calls = timed(lambda: asyncio.run(run_rollout(server.base_url, n)))
            keep_best(best, Row("(c) rollout engine", n, wall, calls, 1 + 2 * turns))
        rows.extend(best.values())
        full_calls = best["(b) EmpathyVectorEnv"].calls  # N whole episodes, for extrapolating budgeted rows
        print(f"  N={n}: ceiling {best['(a) ceiling: raw AsyncOpenAI'].calls_per_s:.0f} calls/s", flush=True)

        # SyncVectorEnv makes one call at a time whatever N is: measure its rate on at most
        # --sync-max-n sub-envs and extrapolate the wall time of N episodes from it.
        n_sync = min(n, args.sync_max_n)
        (wall, partial), calls = timed(run_gym_vector, "sync", server.base_url, n_sync, args.sequential_budget)
        row = budgeted(Row("(d) gym SyncVectorEnv", n, wall, calls, CALLS_PER_EPISODE), partial or n_sync < n, full_calls)
        if n_sync < n:
            row.note = f"{n_sync} sub-envs: " + row.note
        rows.append(row)

        if n <= args.async_max_n:
            (wall, partial), calls = timed(run_gym_vector, "async", server.base_url, n, args.sequential_budget)
            rows.append(budgeted(Row("(d) gym AsyncVectorEnv", n, wall, calls, CALLS_PER_EPISODE), partial, full_calls))
        else:
            rows.append(Row("(d) gym AsyncVectorEnv", n, 0.0, 0, CALLS_PER_EPISODE, note=f"skipped: {n} worker processes (--async-max-n {args.async_max_n})"))

        (wall, _, partial), calls = timed(run_sequential, server.base_url, n, args.sequential_budget)
        rows.append(budgeted(Row("(e) RLVER-style sequential", n, wall, calls, CALLS_PER_EPISODE), partial, full_calls))
        print(f"  N={n} done", flush=True)
    return rows


def keep_best(best: dict[str, Row], row: Row) -> None:
    if row.name not in best or row.wall_s < best[row.name].wall_s:
        best[row.name] = row


def budgeted(row: Row, partial: bool, full_calls: int) -> Row:
    """A row cut short by the budget: keep its measured rate, extrapolate the wall time."""
    if not partial:
        return row
    rate = row.calls_per_s
    row.note = f"ran {row.wall_s:.0f} s ({row.calls} calls); wall extrapolated"
    row.calls, row.wall_s, row.extrapolated = full_calls, full_calls / rate, True
    return row


def print_table(rows: list[Row], latency_s: float) -> None:
    ceilings = {r.n: r.calls_per_s for r in rows if r.name.startswith("(a) ceiling")}
    header = f"{'row':<30} {'N':>4} {'wall s':>9} {'calls':>6} {'calls/s':>8} {'vs ceiling':>10} {'wall/floor':>10}  note"
    print(header)
    print("-" * len(header))
    for r in rows:
        if not r.wall_s:
            print(f"{r.name:<30} {r.n:>4} {'-':>9} {'-':>6} {'-':>8} {'-':>10} {'-':>10}  {r.note}")
            continue
        floor = r.chain * latency_s
        wall = f"{'~' if r.extrapolated else ''}{r.wall_s:.2f}"
        print(
            f"{r.name:<30} {r.n:>4} {wall:>9} {r.calls:>6} {r.calls_per_s:>8.0f} "
            f"{r.calls_per_s / ceilings[r.n]:>9.0%} {r.wall_s / floor:>10.1f}  {r.note}"
        )
    print(f"latency {latency_s:g} s per call; floor = longest dependent call chain x latency "
          f"({CALLS_PER_EPISODE} calls = {CALLS_PER_EPISODE * latency_s:.1f} s for a full episode)")


def rule_simulator_rates(sizes: list[int]) -> None:
    from dialog_gym.simulators import RuleSimulator

    print("\nrule simulator, EmpathyVectorEnv (same-step autoreset):")
    for n in sizes:
        venv = EmpathyVectorEnv(n, simulator=RuleSimulator(), autoreset_mode=AutoresetMode.SAME_STEP)
        venv.reset(seed=0)
        steps = max(10, 4000 // n)
        started = time.perf_counter()
        for t in range(steps):
            venv.step([reply_for_turn(t + i) for i in range(n)])
        wall = time.perf_counter() - started
        venv.close()
        print(f"  N={n:<4} {steps * n / wall:>8,.0f} sub-env steps/s  ({1e6 * wall / (steps * n):.0f} us per sub-env step)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Rollout throughput against a local OpenAI-compatible server.")
    parser.add_argument("--latency", type=float, default=0.1, help="server latency per call, seconds")
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each concurrent row (the best is kept)")
    parser.add_argument("--sequential-budget", type=float, default=20.0,
                        help="seconds a one-call-at-a-time row may run before its wall time is extrapolated")
    parser.add_argument("--sync-max-n", type=int, default=16, help="sub-envs of the SyncVectorEnv row (its rate does not depend on N)")
    parser.add_argument("--async-max-n", type=int, default=64, help="largest N for AsyncVectorEnv (one process per sub-env)")
    args = parser.parse_args(argv)
    server = ServerProcess(args.latency)
    try:
        print(f"server {server.base_url}, latency {args.latency} s", flush=True)
        rows = measure(server, args)
    finally:
        server.stop()
    print()
    print_table(rows, args.latency)
    rule_simulator_rates(args.sizes)


if __name__ == "__main__":
    main()
