"""Memory of the offline simulators' text caches: RSS after many unique long replies.

    python benchmarks/text_cache_memory.py                    # 18,000 unique 8,000-character replies
    python benchmarks/text_cache_memory.py --replies 3000     # shorter
    python benchmarks/text_cache_memory.py --modes bounded    # without the baseline (it takes GBs)

The calibrated simulator (the default) and the rule simulator analyse every message of a
conversation again on each turn, caching the analyses by text (`char_ngrams`,
`content_units`, `gram_codes`). Each mode runs in a child process of its own: dialogues of
8 turns whose every reply is a new `--chars`-character text of words drawn from a
vocabulary of 2,000 pseudo-words, stepped
through `DialogSession`. `bounded` is the package as it is (caches bounded by bytes);
`unbounded` puts back the entry-bounded `functools.lru_cache`s they replaced (16,384,
16,384 and 4,096 entries), as the baseline. Prints, per mode and simulator, RSS before and
after and steps per second, then the ratios and one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

OLD_LIMITS = {"char_ngrams": 16_384, "content_units": 16_384, "gram_codes": 4_096}


def rss_mb() -> float:
    """The process's resident set size now (not its peak), in MB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    import resource

    return pages * resource.getpagesize() / 2**20


def unbound_caches() -> None:
    """Rebind the cached functions to entry-bounded `lru_cache`s, as before the fix."""
    from dialog_gym.simulators import analysis, judge_features

    for module, name in ((analysis, "char_ngrams"), (analysis, "content_units"), (judge_features, "content_units"),
                         (judge_features, "gram_codes")):
        original = getattr(module, name).__wrapped__
        cached = getattr(unbound_caches, name, None) or functools.lru_cache(maxsize=OLD_LIMITS[name])(original)
        setattr(unbound_caches, name, cached)
        setattr(module, name, cached)


def vocabulary(rng: np.random.Generator, size: int = 2_000) -> list[str]:
    """Pseudo-words of 2-9 letters: replies drawn from them repeat words like real text does."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, int(rng.integers(2, 10)))) for _ in range(size)]


def random_reply(rng: np.random.Generator, words: list[str], chars: int, index: int) -> str:
    """A unique reply (it starts with its index) of `chars` characters of random words."""
    picked = [words[int(i)] for i in rng.integers(0, len(words), chars // 3)]
    return f"{index} {' '.join(picked)}"[:chars]


async def play(simulator: str, replies: int, chars: int, seed: int) -> dict[str, Any]:
    from dialog_gym.personas import PersonaSet
    from dialog_gym.session import DialogConfig

    config = DialogConfig.create(simulator, "rlver")
    personas = list(PersonaSet.bundled("en"))
    rng = np.random.default_rng(seed)
    words = vocabulary(rng)
    before = rss_mb()
    started = time.perf_counter()
    done = 0
    while done < replies:
        session = config.session(personas[done % len(personas)], np.random.default_rng(done))
        await session.start()
        while not session.done and done < replies:
            await session.step(random_reply(rng, words, chars, done))
            done += 1
    wall = time.perf_counter() - started
    return {"rss_before_mb": round(before, 1), "rss_after_mb": round(rss_mb(), 1), "steps_per_s": round(done / wall, 1)}


def child(args: argparse.Namespace) -> None:
    if args.mode == "unbounded":
        unbound_caches()
    result = asyncio.run(play(args.simulator, args.replies, args.chars, args.seed))
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replies", type=int, default=18_000, help="unique replies stepped (default: %(default)s)")
    parser.add_argument("--chars", type=int, default=8_000, help="characters per reply (default: %(default)s)")
    parser.add_argument("--simulators", nargs="+", default=["calibrated", "rule"])
    parser.add_argument("--modes", nargs="+", default=["unbounded", "bounded"], choices=["unbounded", "bounded"],
                        help="unbounded: the baseline, about 0.5 MB per reply up to 16,384 replies (default: both)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=["bounded", "unbounded"], help=argparse.SUPPRESS)
    parser.add_argument("--simulator", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    results: dict[str, dict[str, Any]] = {}
    for simulator in args.simulators:
        for mode in args.modes:
            command = [sys.executable, __file__, "--child", "--mode", mode, "--simulator", simulator,
                       "--replies", str(args.replies), "--chars", str(args.chars), "--seed", str(args.seed)]
            out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
            results[f"{simulator}/{mode}"] = figures = json.loads(out.strip().splitlines()[-1])
            print(f"{simulator:<10} {mode:<9}  RSS {figures['rss_before_mb']:7.1f} -> {figures['rss_after_mb']:7.1f} MB"
                  f"   {figures['steps_per_s']:6.1f} steps/s", flush=True)
    for simulator in args.simulators if len(args.modes) == 2 else ():
        old, new = results[f"{simulator}/unbounded"], results[f"{simulator}/bounded"]
        print(f"{simulator}: RSS after {args.replies} replies {new['rss_after_mb'] / old['rss_after_mb']:.2f}x the unbounded "
              f"caches'; speed {new['steps_per_s'] / old['steps_per_s']:.2f}x")
    print(json.dumps({"replies": args.replies, "chars": args.chars, **results}))


if __name__ == "__main__":
    main()
