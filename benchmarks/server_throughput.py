"""Episodes per second through the OpenEnv server against the same episodes in-process.

    python benchmarks/server_throughput.py [--concurrency 1 16 64] [--episodes 128] [--llm-latency 0.02]

For each concurrency C it plays the same episodes (seeds 0..E-1, personas drawn by seed as
`gym.make(env).reset(seed=s)` draws them, one fixed cycle of replies) twice:

  in-process  C asyncio workers driving `DialogSession`s directly (the gym env's core, no
              transport): the ceiling for this simulator on this machine;
  server      C `DialogEnvClient` WebSocket sessions against `dialog-gym serve` running in
              its own process (its own GIL; both share the machine's cores), each worker
              resetting and stepping one episode after another.

With `--llm-latency S` the simulated user is the LLM simulator instead, against
`dialog_gym.testing.ScriptedOpenAIServer` in its own process answering every call after S
seconds (two calls a turn): the set-up where a served environment is used, a slow user
shared by many rollout workers.

Both runs must produce the same rewards (checked). Each row runs `--repeats` times,
interleaved, and keeps its best run of each kind (the machine's other load varies).
Columns: episodes/s of each, and the server's share of the in-process rate (ratio). The
server is started with `--max-sessions` = the largest C. Needs openenv-core (`pip install "dialog-gym[openenv]"`;
or a folder with it on `DIALOG_GYM_OPENENV_PATH`, as CI installs it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from dialog_gym.integrations._setup import dialog_setup, newest_env_id

OPENENV_PATH = os.environ.get("DIALOG_GYM_OPENENV_PATH", "")
if OPENENV_PATH:
    sys.path.extend(p for p in OPENENV_PATH.split(os.pathsep) if p)

REPLIES = (
    "That sounds exhausting. What happened after that?",
    "I hear you, and it makes sense that you feel hurt by it.",
    "You did nothing wrong here, honestly.",
    "Have you thought about talking to them directly?",
    "It must be hard to carry that on your own. I'm here.",
)


async def in_process(env_id: str, options: dict, seeds: list[int], concurrency: int) -> tuple[float, dict[int, float]]:
    from gymnasium.utils import seeding

    setup = dialog_setup(env_id, **options)
    queue = list(reversed(seeds))
    rewards: dict[int, float] = {}

    async def worker() -> None:
        while queue:
            seed = queue.pop()
            rng = seeding.np_random(seed)[0]
            session = setup.config.session(setup.personas.sample(rng), rng)
            await session.start()
            reward = 0.0
            while not session.done:
                outcome = await session.step(REPLIES[session.turn % len(REPLIES)])
                reward = outcome.reward
            rewards[seed] = float(reward)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started, rewards


async def through_server(base_url: str, seeds: list[int], concurrency: int) -> tuple[float, dict[int, float]]:
    from dialog_gym.integrations.openenv import DialogEnvClient

    queue = list(reversed(seeds))
    rewards: dict[int, float] = {}

    async def worker() -> None:
        async with DialogEnvClient(base_url=base_url, message_timeout_s=600) as env:
            while queue:
                seed = queue.pop()
                result = await env.reset(seed=seed)
                turn = 0
                while not result.done:
                    result = await env.step(REPLIES[turn % len(REPLIES)])
                    turn += 1
                rewards[seed] = float(result.reward or 0.0)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started, rewards


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def launch(argv: list[str], health_url: str, what: str) -> subprocess.Popen:
    """Start `argv` with this process's path and wait until `health_url` answers."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p and Path(p).is_dir())}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited {proc.returncode}: {proc.stderr.read()[-2000:]}")
        try:
            with urllib.request.urlopen(health_url, timeout=2):
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"{what} did not answer {health_url} within 120 s")


def start_server(env_id: str, options: dict, max_sessions: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    argv = [sys.executable, "-m", "dialog_gym", "serve", "--env", env_id, "--port", str(port),
            "--max-sessions", str(max_sessions), "--log-level", "warning"]
    for key, value in options.items():
        argv += [f"--{key}", str(value)] if key in ("language", "simulator") else ["--option", f"{key}={json.dumps(value)}"]
    base = f"http://127.0.0.1:{port}"
    return launch(argv, f"{base}/health", "dialog-gym serve"), base


def start_llm(latency: float) -> tuple[subprocess.Popen, str]:
    port = free_port()
    argv = [sys.executable, "-m", "dialog_gym.testing.openai_server", "--port", str(port), "--latency", str(latency)]
    base = f"http://127.0.0.1:{port}/v1"
    return launch(argv, f"{base}/models", "the scripted OpenAI-compatible server"), base


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default=None, help="env id (default: the newest RLVER-Empathy-vN)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--episodes", type=int, default=128, help="episodes per row (default: %(default)s)")
    parser.add_argument("--language", choices=["en", "zh"], default="en")
    parser.add_argument("--simulator", default=None, help="an offline simulator name (default: the env's)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per row, best kept (default: %(default)s)")
    parser.add_argument("--llm-latency", type=float, default=None, metavar="S",
                        help="play the user with the LLM simulator against a local server answering after S seconds")
    args = parser.parse_args(argv)
    env_id = args.env or newest_env_id()
    options = {k: v for k, v in {"language": args.language, "simulator": args.simulator}.items() if v}
    seeds = list(range(args.episodes))

    llm = None
    if args.llm_latency is not None:
        llm, llm_url = start_llm(args.llm_latency)
        options.update(simulator="openai", simulator_options={
            "model": "scripted", "base_url": llm_url, "max_concurrency": max(args.concurrency) * 2})
    proc, base = start_server(env_id, options, max(args.concurrency))
    try:
        asyncio.run(through_server(base, seeds[:4], 2))  # warm-up: imports, first connections
        best = {c: [float("inf"), float("inf")] for c in args.concurrency}
        for repeat in range(args.repeats):
            for concurrency in args.concurrency:
                local_s, local = asyncio.run(in_process(env_id, options, seeds, concurrency))
                served_s, served = asyncio.run(through_server(base, seeds, concurrency))
                if served != local:
                    raise SystemExit(f"C={concurrency}: the server's rewards differ from the in-process ones")
                best[concurrency] = [min(best[concurrency][0], local_s), min(best[concurrency][1], served_s)]
                print(f"  run {repeat + 1}, C={concurrency}: in-process {local_s:.2f} s, server {served_s:.2f} s",
                      file=sys.stderr, flush=True)
        rows = [(c, len(seeds) / best[c][0], len(seeds) / best[c][1]) for c in args.concurrency]
    finally:
        for child in (proc, llm):
            if child is not None:
                child.terminate()
                child.wait(timeout=30)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    shown = {k: v for k, v in options.items() if k != "simulator_options"}
    shown.update({k: v for k, v in options.get("simulator_options", {}).items() if k != "base_url"})
    if args.llm_latency is not None:
        shown["llm_latency_s"] = args.llm_latency
    print(f"\n{env_id} ({shown or 'env defaults'}), {len(seeds)} episodes per row, best of {args.repeats}, "
          f"{os.cpu_count()} CPUs (load average {load:.1f} at the end)")
    print(f"{'sessions':>8} | {'in-process ep/s':>15} | {'server ep/s':>11} | {'server / in-process':>19}")
    print(f"{'-' * 8}-+-{'-' * 15}-+-{'-' * 11}-+-{'-' * 19}")
    for concurrency, local_rate, served_rate in rows:
        print(f"{concurrency:>8} | {local_rate:>15.1f} | {served_rate:>11.1f} | {served_rate / local_rate:>19.2f}")


if __name__ == "__main__":
    main()
