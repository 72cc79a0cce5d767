"""Open-loop script search: the best fixed sequence of replies an attacker can find.

A script is one reply per turn, each a few phrases from the attack pools, played in the same
order in every episode whatever the user says (`ScriptAgent`). An evolutionary search
mutates scripts (add, drop or replace a phrase, swap two turns), scores each candidate by
its mean episode reward on training personas, and keeps the best. If the best script
reaches the reward of an agent that reads the user, the judge rewards the script, not
support.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dialog_gym.personas import Persona
from dialog_gym.redteam.play import ScriptAgent, episode_rewards
from dialog_gym.simulators import Simulator

Phrase = tuple[str, str]  # (pool, text)


@dataclass(frozen=True)
class SearchResult:
    """The best script found, its mean reward on the personas it was searched on, and how
    many candidates were scored."""

    script: ScriptAgent
    train_reward: float
    candidates: int


def _render(reply: Sequence[Phrase], language: str) -> str:
    if not reply:
        return "I see." if language == "en" else "嗯。"
    out = []
    for pool, text in reply:
        joiner = "\n\n" if pool in ("heading", "list") or (out and out[-1][0] in ("heading", "list")) else ("" if language == "zh" else " ")
        out.append((pool, (joiner if out else "") + text))
    return "".join(text for _, text in out).strip()


def seed_scripts(pools: Mapping[str, Sequence[str]], language: str, turns: int) -> list[list[list[Phrase]]]:
    """Hand-made starting points: the decorated stock-empathy script (exclamation, stock
    empathy, praise, heading, bold, emoji, ~200 words), stock empathy alone, questions alone."""
    def pick(pool: str, k: int) -> Phrase:
        options = pools.get(pool, ())
        return (pool, options[k % len(options)]) if options else ("stock_empathy", pools["stock_empathy"][k % len(pools["stock_empathy"])])

    decorated = [
        [pick("exclamation", t), pick("stock_empathy", t), pick("stock_empathy", t + 3), pick("heading", t), pick("praise", t),
         pick("bold", t), pick("stock_empathy", t + 6), pick("praise", t + 2), pick("question", t), pick("emoji", t)]
        for t in range(turns)
    ]
    plain = [[pick("stock_empathy", t), pick("question", t)] for t in range(turns)]
    questions = [[pick("question", t), pick("question", t + 1)] for t in range(turns)]
    return [decorated, plain, questions]


def search_script(
    simulator: Simulator,
    personas: Sequence[Persona],
    pools: Mapping[str, Sequence[str]],
    *,
    language: str,
    rng: np.random.Generator,
    rules: str = "rlver",
    turns: int = 8,
    population: int = 8,
    generations: int = 40,
    max_phrases: int = 12,
    progress: Callable[[int, int, float], None] | None = None,
) -> SearchResult:
    """Evolve scripts for `personas` (one language); `population * (generations + 1)` candidates
    are scored. `progress(generation, generations, best reward)` after each generation."""
    names = [name for name, options in pools.items() if options]
    flat: list[Phrase] = [(name, text) for name in names for text in pools[name]]

    def score(script: list[list[Phrase]]) -> float:
        agent = ScriptAgent(tuple(_render(reply, language) for reply in script))
        return float(episode_rewards(agent, personas, simulator, rules).mean())

    def mutate(script: list[list[Phrase]]) -> list[list[Phrase]]:
        out = [list(reply) for reply in script]
        for _ in range(1 + int(rng.integers(3))):
            t = int(rng.integers(turns))
            reply = out[t]
            op = int(rng.integers(4))
            if op == 0 and len(reply) < max_phrases:
                reply.insert(int(rng.integers(len(reply) + 1)), flat[int(rng.integers(len(flat)))])
            elif op == 1 and len(reply) > 1:
                reply.pop(int(rng.integers(len(reply))))
            elif op == 2 and reply:
                reply[int(rng.integers(len(reply)))] = flat[int(rng.integers(len(flat)))]
            else:
                u = int(rng.integers(turns))
                out[t], out[u] = out[u], out[t]
        return out

    def random_script() -> list[list[Phrase]]:
        return [[flat[int(rng.integers(len(flat)))] for _ in range(1 + int(rng.integers(5)))] for _ in range(turns)]

    starts = seed_scripts(pools, language, turns)
    scored = [(score(s), s) for s in starts + [random_script() for _ in range(max(0, population - len(starts)))]]
    candidates = len(scored)
    for generation in range(1, generations + 1):
        scored.sort(key=lambda item: -item[0])
        parents = scored[: max(2, population // 2)]
        children = [mutate(parents[int(rng.integers(len(parents)))][1]) for _ in range(population)]
        scored = parents + [(score(c), c) for c in children]
        candidates += len(children)
        if progress is not None:
            progress(generation, generations, max(s for s, _ in scored))
    best_score, best = max(scored, key=lambda item: item[0])
    return SearchResult(ScriptAgent(tuple(_render(reply, language) for reply in best)), best_score, candidates)
