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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dialog_gym._async import gather_or_cancel, sync_facade
from dialog_gym._options import renamed
from dialog_gym._progress import EpisodeProgress
from dialog_gym._version import __version__
from dialog_gym.episodes.io import EPISODES_FILE, EpisodeWriter, read_episodes
from dialog_gym.episodes.record import Episode
from dialog_gym.eval.metrics import summarize
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.rollouts import agent_identity, arollout
from dialog_gym.session import DialogConfig, takes_dialog_config
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

    @classmethod
    def of(cls, agent: Any, config: DialogConfig, plan: "RunPlan", *, seed: int, agent_spec: str | None) -> "EvalSettings":
        """The settings of a run of `agent` under `config` over `plan`."""
        agent_info = agent_identity(agent)
        return cls(
            agent={"spec": agent_spec, **agent_info} if agent_spec else agent_info,
            simulator=config.simulator.identity(),
            rules=asdict(config.rules),
            persona_ids=[p.id for p in plan.personas],
            seeds=plan.seeds,
            seed=seed,
            think=config.think,
            system_prompt=config.system_prompt,
            reply_guard=guard_settings(config.reply_guard),
        )

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


@dataclass(frozen=True)
class RunPlan:
    """Which episodes a run holds: group `g` is persona `g % n` of `personas`, repetition
    `g // n`, with seed `seed + g` and id `"{persona_id}#{repetition}"`."""

    personas: tuple[Persona, ...]
    seeds: int

    @classmethod
    def of(cls, personas: "PersonaSet | Sequence[Persona]", seeds: int) -> "RunPlan":
        if seeds < 1:
            raise ValueError(f"seeds must be >= 1, got {seeds}")
        chosen = tuple(personas)
        if not chosen:
            raise ValueError("no personas to evaluate (check --personas / --split / --language)")
        return cls(chosen, seeds)

    @property
    def total(self) -> int:
        return len(self.personas) * self.seeds

    def persona(self, group: int) -> Persona:
        return self.personas[group % len(self.personas)]

    def episode_id(self, group: int) -> str:
        return f"{self.persona(group).id}#{group // len(self.personas)}"

    def missing(self, finished: Mapping[str, Episode]) -> list[tuple[int, int]]:
        """The groups not in `finished`, as maximal [start, stop) runs of consecutive groups."""
        runs: list[tuple[int, int]] = []
        for g in range(self.total):
            if self.episode_id(g) in finished:
                continue
            if runs and runs[-1][1] == g:
                runs[-1] = (runs[-1][0], g + 1)
            else:
                runs.append((g, g + 1))
        return runs

    def in_order(self, episodes: Mapping[str, Episode]) -> list[Episode]:
        """The plan's episodes among `episodes` (by id), group by group."""
        return [episodes[self.episode_id(g)] for g in range(self.total) if self.episode_id(g) in episodes]


@renamed(max_concurrent="max_concurrent_episodes")
@takes_dialog_config(closes=True, rules="sage", reply_guard=EVAL_REPLY_GUARD)
async def aevaluate(
    agent: Any,
    config: DialogConfig | Mapping[str, Any] | None = None,
    *,
    out: str | Path,
    personas: "PersonaSet | Sequence[Persona]",
    seeds: int = 1,
    seed: int = 0,
    max_concurrent_episodes: int = 64,
    max_batch_size: int | None = None,
    resume: bool = False,
    progress: bool = True,
    agent_spec: str | None = None,
    on_episode: Callable[[Episode], None] | None = None,
    n_resamples: int = 2000,
) -> EvalResult:
    """Run the benchmark (see the module docstring); returns the summary and all episodes.

    Arguments:
        agent: a batched agent or a per-conversation callable, as for `rollout`.
        config: the set-up, a `DialogConfig`; or its fields as keyword arguments, as for
            `EmpathyDialogEnv`, with the benchmark's defaults: `rules="sage"` and
            `reply_guard=EVAL_REPLY_GUARD` (8,000 characters, unencodable text repaired).
            A simulator built here from a name is closed at the end.
        out: the run folder (`episodes.jsonl`, `run.json`, `summary.json`).
        personas: the personas to evaluate, each `seeds` times.
        seed: group `g` gets seed `seed + g`.
        max_concurrent_episodes: episodes in flight at once.
        max_batch_size: the largest batch a batched agent gets.
        resume: continue the run in `out`, skipping its finished episodes (same settings only).
        progress: show a progress bar on stderr.
        agent_spec: the command-line spec of the agent, recorded with its identity.
        on_episode: called with each new `Episode` as soon as it is recorded.
        n_resamples: bootstrap resamples of the summary's confidence intervals.
    """
    assert isinstance(config, DialogConfig)  # resolved by takes_dialog_config
    plan = RunPlan.of(personas, seeds)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    settings = EvalSettings.of(agent, config, plan, seed=seed, agent_spec=agent_spec)
    finished = _open_run(out, settings, resume=resume)
    new, wall = await _play_missing(
        agent, config, plan, finished, out=out, seed=seed, max_concurrent_episodes=max_concurrent_episodes,
        max_batch_size=max_batch_size, progress=progress, on_episode=on_episode,
    )
    episodes = plan.in_order({**finished, **{episode.episode_id: episode for episode in new}})
    summary = _summary(episodes, settings, agent, resumed=len(finished), new=len(new), wall=wall, n_resamples=n_resamples)
    (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=2, ensure_ascii=False), encoding="utf-8")
    return EvalResult(out, summary, episodes, len(new), len(finished), wall, settings)


evaluate = sync_facade(aevaluate)


def _open_run(out: Path, settings: EvalSettings, *, resume: bool) -> dict[str, Episode]:
    """Check a run folder against `settings` (for `resume`), record them in `run.json`, and
    return the episodes already finished there, by id."""
    episodes_path, run_path = out / EPISODES_FILE, out / RUN_FILE
    finished: dict[str, Episode] = {}
    if episodes_path.exists():
        if not resume:
            raise FileExistsError(f"{episodes_path} exists: pass --resume to continue that run, or choose another --out")
        if run_path.exists():
            _check_run_file(run_path, settings)
        recorded = read_episodes(episodes_path)
        _check_recorded_episodes(episodes_path, recorded, settings)
        finished = {episode.episode_id: episode for episode in recorded if episode.episode_id}
    run_path.write_text(
        json.dumps({"settings": settings.comparable(), "version": __version__, "created_at": time.time()}, indent=2, ensure_ascii=False),
        encoding="utf-8",
    )
    return finished


async def _play_missing(
    agent: Any, config: DialogConfig, plan: RunPlan, finished: Mapping[str, Episode], *, out: Path, seed: int,
    max_concurrent_episodes: int, max_batch_size: int | None, progress: bool,
    on_episode: Callable[[Episode], None] | None,
) -> tuple[list[Episode], float]:
    """Play the plan's unfinished episodes through the rollout engine, one rollout per run of
    consecutive groups (so each keeps its seed), appending each to `episodes.jsonl` as it
    finishes. Returns the new episodes and the wall time."""
    segments = plan.missing(finished)
    n_missing = sum(stop - start for start, stop in segments)
    bar = EpisodeProgress("eval", plan.total, done=plan.total - n_missing, enabled=progress,
                          metric=("mean mood", lambda e: e.final_mood))
    writer = EpisodeWriter(out / EPISODES_FILE, unencodable="repair")
    new: list[Episode] = []

    def recorder(start: int) -> Callable[[Episode], None]:
        def record(episode: Episode) -> None:
            group = start + int(episode.group_id or 0)
            episode.group_id, episode.episode_id = group, plan.episode_id(group)
            writer.write(episode)
            new.append(episode)
            bar.advance(episode)
            if on_episode is not None:
                on_episode(episode)

        return record

    started = time.perf_counter()
    try:
        await gather_or_cancel([
            arollout(
                agent, config, personas=[plan.persona(g) for g in range(start, stop)], group_size=1, seed=seed + start,
                max_concurrent_episodes=max(1, round(max_concurrent_episodes * (stop - start) / n_missing)),
                max_batch_size=max_batch_size, progress=False, on_episode=recorder(start),
            )
            for start, stop in segments
        ])
    finally:
        wall = time.perf_counter() - started
        bar.close()
        writer.close()
    return new, wall


def _summary(
    episodes: list[Episode], settings: EvalSettings, agent: Any, *, resumed: int, new: int, wall: float, n_resamples: int
) -> dict[str, Any]:
    """The metrics of `episodes`, with what the run was and how fast it went."""
    summary = summarize(episodes, n_resamples=n_resamples)
    summary["run"] = {
        "agent": settings.agent,
        "simulator": settings.simulator,
        "preset": settings.rules["name"],
        "seeds": settings.seeds,
        "seed": settings.seed,
        "resumed_episodes": resumed,
        "new_episodes": new,
        "wall_s": wall,
        "episodes_per_s": new / wall if wall > 0 else None,
        "version": __version__,
    }
    agent_usage = getattr(agent, "usage", None)
    if agent_usage is not None and hasattr(agent_usage, "to_dict"):
        summary["usage"]["agent"] = agent_usage.to_dict()
    return summary


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
