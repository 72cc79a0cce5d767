"""The benchmark runner behind `dialog-gym eval`.

A run plays every selected persona `seeds` times against the agent through the rollout
engine (`dialog_gym.rollouts.arollout`), appends each finished episode to
`OUT/episodes.jsonl` the moment it finishes (atomic line appends), and writes
`OUT/summary.json` at the end. `OUT/run.json` records the run's settings.

Episode `(persona i, repetition k)` is group `g = k * n_personas + i` of the plan and gets
seed `seed + g` and id `"{persona_id}#{k}"`, whatever else runs with it, so a resumed run
(`resume=True`: finished ids in `episodes.jsonl` are skipped) plays exactly the episodes
an uninterrupted run would have played. Resuming with different settings is an error, and
so is resuming onto episodes recorded with another agent, simulator (judge), preset or
think setting, whether or not `run.json` is there: one run folder holds one setting.

Text that UTF-8 cannot encode (a lone surrogate from an agent or a server) never stops a
run: by default the runner's `reply_guard` repairs an agent's action (the turn records
`action_repaired`) and the episode writer repairs any record field that still holds one,
listing it in the record's `extra["unencodable_repaired"]`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dialog_gym._async import gather_or_cancel, run_sync
from dialog_gym._progress import EpisodeProgress
from dialog_gym._version import __version__
from dialog_gym.episodes.io import EPISODES_FILE, EpisodeWriter, read_episodes
from dialog_gym.episodes.record import Episode
from dialog_gym.eval.metrics import summarize
from dialog_gym.mood import MoodRules, get_rules
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.rollouts import agent_identity, arollout
from dialog_gym.simulators import DEFAULT_SIMULATOR, make_simulator
from dialog_gym.text_guard import ReplyGuard

RUN_FILE = "run.json"
SUMMARY_FILE = "summary.json"
# An evaluation measures the agent rather than stopping at its first unencodable reply.
EVAL_REPLY_GUARD = ReplyGuard(unencodable="repair")


class RunFileError(ValueError):
    """A run folder's `run.json` or `summary.json` cannot be read; names the file."""


def read_run_file(path: Path) -> dict[str, Any]:
    """A run folder's JSON file (`run.json`, `summary.json`) as a dict; `RunFileError` naming it otherwise."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        detail = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise RunFileError(f"{path}: not a readable JSON file ({detail}); was it cut short or edited?") from None
    if not isinstance(data, dict):
        raise RunFileError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def guard_settings(guard: ReplyGuard) -> dict[str, Any]:
    """What of a reply guard `run.json` records (the tokenizer by its presence only)."""
    return {"max_chars": guard.max_chars, "max_tokens": guard.max_tokens, "unencodable": guard.unencodable}


@dataclass
class EvalSettings:
    """What defines a run; `run.json` holds it and `resume` checks it."""

    agent: dict[str, Any]
    simulator: dict[str, Any]
    rules: dict[str, Any]
    persona_ids: list[str]
    seeds: int
    seed: int
    think: bool = False
    system_prompt: str | None = None
    reply_guard: dict[str, Any] = field(default_factory=lambda: guard_settings(EVAL_REPLY_GUARD))

    def comparable(self) -> dict[str, Any]:
        return json.loads(json.dumps(asdict(self)))  # as run.json holds it (tuples are lists)


@dataclass
class EvalResult:
    out: Path
    summary: dict[str, Any]
    episodes: list[Episode]
    new_episodes: int
    skipped: int
    wall_s: float
    settings: EvalSettings = field(repr=False)

    @property
    def episodes_per_s(self) -> float:
        return self.new_episodes / self.wall_s if self.wall_s > 0 else float("nan")


def _segments(missing: Sequence[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive group numbers, as [start, stop) pairs."""
    runs: list[tuple[int, int]] = []
    for g in missing:
        if runs and runs[-1][1] == g:
            runs[-1] = (runs[-1][0], g + 1)
        else:
            runs.append((g, g + 1))
    return runs


async def aevaluate(
    agent: Any,
    *,
    out: str | Path,
    personas: "PersonaSet | Sequence[Persona]",
    simulator: Any = DEFAULT_SIMULATOR,
    rules: "str | MoodRules" = "sage",
    seeds: int = 1,
    seed: int = 0,
    think: bool = False,
    system_prompt: str | None = None,
    max_concurrent: int = 64,
    max_batch_size: int | None = None,
    resume: bool = False,
    progress: bool = True,
    agent_spec: str | None = None,
    on_episode: Callable[[Episode], None] | None = None,
    n_resamples: int = 2000,
    reply_guard: "ReplyGuard | dict[str, Any] | None" = None,
    **simulator_kwargs: Any,
) -> EvalResult:
    """Run the benchmark; see the module docstring. Returns the summary and all episodes.

    `reply_guard` (a `ReplyGuard` or a dict of its fields) bounds what of each reply reaches
    the simulator; None: `EVAL_REPLY_GUARD` (8,000 characters, unencodable text repaired).
    """
    if seeds < 1:
        raise ValueError(f"seeds must be >= 1, got {seeds}")
    persona_list = list(personas)
    if not persona_list:
        raise ValueError("no personas to evaluate (check --personas / --split / --language)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    mood_rules = get_rules(rules)
    guard = EVAL_REPLY_GUARD if reply_guard is None else ReplyGuard.resolve(reply_guard)
    sim = make_simulator(simulator, **simulator_kwargs)
    agent_info = agent_identity(agent)
    if agent_spec:
        agent_info = {"spec": agent_spec, **agent_info}
    settings = EvalSettings(
        agent=agent_info,
        simulator=sim.identity(),
        rules=asdict(mood_rules),
        persona_ids=[p.id for p in persona_list],
        seeds=seeds,
        seed=seed,
        think=think,
        system_prompt=system_prompt,
        reply_guard=guard_settings(guard),
    )
    episodes_path = out / EPISODES_FILE
    run_path = out / RUN_FILE
    finished: dict[str, Episode] = {}
    if episodes_path.exists():
        if not resume:
            raise FileExistsError(f"{episodes_path} exists: pass --resume to continue that run, or choose another --out")
        if run_path.exists():
            _check_run_file(run_path, settings)
        recorded_episodes = read_episodes(episodes_path)
        _check_recorded_episodes(episodes_path, recorded_episodes, settings)
        finished = {ep.episode_id: ep for ep in recorded_episodes if ep.episode_id}
    run_path.write_text(
        json.dumps({"settings": settings.comparable(), "version": __version__, "created_at": time.time()}, indent=2, ensure_ascii=False),
        encoding="utf-8",
    )

    n_personas = len(persona_list)
    total = n_personas * seeds

    def episode_id(g: int) -> str:
        return f"{persona_list[g % n_personas].id}#{g // n_personas}"

    missing = [g for g in range(total) if episode_id(g) not in finished]
    segments = _segments(missing)
    bar = EpisodeProgress("eval", total, done=total - len(missing), enabled=progress, metric=("mean mood", lambda e: e.final_mood))
    writer = EpisodeWriter(episodes_path, unencodable="repair")
    new: list[Episode] = []

    def recorder(start: int) -> Callable[[Episode], None]:
        def record(episode: Episode) -> None:
            g = start + int(episode.group_id or 0)
            episode.group_id = g
            episode.episode_id = episode_id(g)
            writer.write(episode)
            new.append(episode)
            bar.advance(episode)
            if on_episode is not None:
                on_episode(episode)

        return record

    started = time.perf_counter()
    try:
        await gather_or_cancel(
            [
                arollout(
                    agent,
                    personas=[persona_list[g % n_personas] for g in range(start, stop)],
                    group_size=1,
                    simulator=sim,
                    rules=mood_rules,
                    think=think,
                    system_prompt=system_prompt,
                    seed=seed + start,
                    max_concurrent_episodes=max(1, round(max_concurrent * (stop - start) / len(missing))),
                    max_batch_size=max_batch_size,
                    progress=False,
                    on_episode=recorder(start),
                    reply_guard=guard,
                )
                for start, stop in segments
            ]
        )
    finally:
        wall = time.perf_counter() - started
        bar.close()
        writer.close()
        aclose = getattr(sim, "aclose", None)
        if aclose is not None and isinstance(simulator, str):
            await aclose()

    by_id = {**finished, **{ep.episode_id: ep for ep in new}}
    episodes = [by_id[episode_id(g)] for g in range(total) if episode_id(g) in by_id]
    summary = summarize(episodes, n_resamples=n_resamples)
    summary["run"] = {
        "agent": agent_info,
        "simulator": settings.simulator,
        "preset": mood_rules.name,
        "seeds": seeds,
        "seed": seed,
        "resumed_episodes": len(finished),
        "new_episodes": len(new),
        "wall_s": wall,
        "episodes_per_s": len(new) / wall if wall > 0 else None,
        "version": __version__,
    }
    agent_usage = getattr(agent, "usage", None)
    if agent_usage is not None and hasattr(agent_usage, "to_dict"):
        summary["usage"]["agent"] = agent_usage.to_dict()
    (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=2, ensure_ascii=False), encoding="utf-8")
    return EvalResult(out, summary, episodes, len(new), len(finished), wall, settings)


def _check_run_file(run_path: Path, settings: EvalSettings) -> None:
    recorded = read_run_file(run_path).get("settings")
    if not isinstance(recorded, dict):
        raise RunFileError(f"{run_path}: no \"settings\" object; not a dialog-gym run file")
    current = settings.comparable()
    recorded = {**current, **recorded}  # a setting added since the run was recorded: its default then
    changed = sorted(k for k in current if recorded.get(k) != current[k])
    if changed:
        raise ValueError(f"--resume: settings differ from the run in {run_path.parent} ({', '.join(changed)}); use another --out")


def _check_recorded_episodes(path: Path, episodes: Sequence[Episode], settings: EvalSettings) -> None:
    """Every recorded episode was played with this run's agent, simulator, rules and think."""
    current = settings.comparable()
    agent = {k: v for k, v in current["agent"].items() if k != "spec"}  # records hold the agent's own identity
    for episode in episodes:
        recorded = json.loads(json.dumps({"agent": episode.agent, "simulator": episode.simulator, "rules": episode.rules,
                                          "think": episode.think}))
        expected = {"agent": agent, "simulator": current["simulator"], "rules": current["rules"], "think": current["think"]}
        changed = [k for k in expected if recorded[k] != expected[k]]
        if changed:
            what = changed[0]
            raise ValueError(
                f"--resume: {path} holds episode {episode.episode_id or episode.persona_id} played with another {what} "
                f"({json.dumps(recorded[what], sort_keys=True)[:200]}) than this run's "
                f"({json.dumps(expected[what], sort_keys=True)[:200]}); one run folder holds one setting: use another --out"
            )


def evaluate(agent: Any, **kwargs: Any) -> EvalResult:
    """Synchronous `aevaluate` (also from inside a running event loop)."""
    return run_sync(aevaluate(agent, **kwargs))


def load_run(run_dir: str | Path) -> tuple[dict[str, Any], list[Episode]]:
    """A run folder's summary (recomputed when `summary.json` is missing) and episodes."""
    run_dir = Path(run_dir)
    episodes = read_episodes(run_dir)
    summary_path = run_dir / SUMMARY_FILE
    if run_dir.is_dir() and summary_path.is_file():
        summary = read_run_file(summary_path)
    else:
        summary = summarize(episodes)
    return summary, episodes
