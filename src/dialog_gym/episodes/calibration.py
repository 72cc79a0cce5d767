"""Distil an expensive judge into a free one: calibrated judges from recorded dialogues, and
how faithfully any simulator re-scores them.

`judge_samples` turns recorded episodes (dialog-gym records made with an LLM simulator,
or SAGE result files) into the appraisals a `CalibratedJudge` is fitted on: every appraised
agent reply, the conversation before it, and the change the recorded judge asked for.
`calibrate` reads files and fits. `fidelity` compares a re-scoring (`rescore`) with the
recording at three levels: turns, dialogues and agent models.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dialog_gym.episodes.load import load_episodes
from dialog_gym.episodes.record import Episode
from dialog_gym.episodes.replay import recorded_persona
from dialog_gym.episodes.rescore import RescoredEpisode, _pearson, _ranks
from dialog_gym.simulators import is_offline
from dialog_gym.simulators.judge import CalibratedJudge
from dialog_gym.simulators.judge_fit import FitOptions, JudgeSample, fit_judge
from dialog_gym.types import Message


class CalibrationDataError(ValueError):
    """Recorded dialogues a judge cannot be fitted on; names the file and the reason."""


def episode_group(episode: Episode) -> str:
    """The agent a recorded episode evaluated (the model name of a SAGE file), else its source."""
    return str((episode.agent or {}).get("name") or episode.source or "")


def judge_samples(episodes: Iterable[Episode], *, where: str = "<episodes>") -> list[JudgeSample]:
    """Every appraised reply of `episodes`, with the conversation before it and the recorded
    change (before the preset's clamp). Turns the simulator failed on carry no appraisal and
    end their episode; they are left out."""
    samples: list[JudgeSample] = []
    for k, episode in enumerate(episodes):
        label = episode.episode_id or f"episode {k + 1}"
        simulator = str((episode.simulator or {}).get("simulator", ""))
        if is_offline(simulator):  # its records hold no LLM judgement to learn from
            raise CalibrationDataError(
                f"{where}: {label} was judged by the offline {simulator!r} simulator; calibrate on dialogues "
                "an LLM user simulator scored (SAGE result files, or `dialog-gym eval --simulator openai ...` records)"
            )
        persona = recorded_persona(episode)
        history: list[Message] = [{"role": "user", "content": episode.opening}]
        for turn in episode.turns:
            if turn.get("errors") and not turn.get("user_reply"):
                break  # a simulator failure: no appraisal on this turn
            change = turn.get("requested_delta", turn.get("delta"))
            if not isinstance(change, (int, float)) or isinstance(change, bool) or not math.isfinite(change):
                raise CalibrationDataError(f"{where}: {label}, turn {turn.get('turn')}: no per-turn mood change recorded")
            samples.append(JudgeSample(persona, tuple(history), turn["reply"], float(change), episode_group(episode), label))
            history += [{"role": "assistant", "content": turn["reply"]}, {"role": "user", "content": turn["user_reply"]}]
    return samples


def load_judge_samples(*paths: str | Path, format: str = "auto") -> list[JudgeSample]:
    """`judge_samples` of every file (SAGE result files or episode records); errors name the file."""
    samples: list[JudgeSample] = []
    for path in paths:
        try:
            episodes = load_episodes(path, format=format)
        except (OSError, ValueError) as exc:
            raise CalibrationDataError(f"{path}: {exc}") from None
        found = judge_samples(episodes, where=str(path))
        if not found:
            raise CalibrationDataError(f"{path}: no appraised replies (no episode has a turn with a recorded mood change)")
        samples += found
    return samples


def calibrate(
    *paths: str | Path,
    name: str = "custom",
    format: str = "auto",
    options: FitOptions = FitOptions(),
    metadata: dict[str, Any] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> CalibratedJudge:
    """Fit a `CalibratedJudge` on recorded dialogues (see `fit_judge`)."""
    samples = load_judge_samples(*paths, format=format)
    meta = {"fitted_on": [Path(p).name for p in paths], **(metadata or {})}
    return fit_judge(samples, name=name, options=options, metadata=meta, progress=progress)


@dataclass(frozen=True)
class Fidelity:
    """How a re-scoring agrees with the recorded judge.

    Attributes:
        turn_r: Pearson's r of the new and recorded change, over every appraised turn.
        dialogue_r: Pearson's r of a dialogue's mean new change and its recorded final mood.
        model_rho: Spearman's rho, over agent models, of the mean new change and the
            recorded mean final mood (nan with fewer than three models).
        turns, dialogues, models: how many of each were compared.
    """

    turn_r: float
    dialogue_r: float
    model_rho: float
    turns: int
    dialogues: int
    models: int

    def as_row(self) -> dict[str, Any]:
        return {"turn r": self.turn_r, "dialogue r": self.dialogue_r, "model rho": self.model_rho, "turns": self.turns, "dialogues": self.dialogues, "models": self.models}


def fidelity(results: Sequence[RescoredEpisode], groups: Sequence[str]) -> Fidelity:
    """`Fidelity` of re-scored episodes; `groups[i]` is the agent model of `results[i]`.
    Episodes the new simulator failed on are left out."""
    if len(groups) != len(results):
        raise ValueError(f"fidelity: {len(results)} results but {len(groups)} groups")
    new_turns: list[float] = []
    recorded_turns: list[float] = []
    dialogue_new: list[float] = []
    dialogue_recorded: list[float] = []
    by_model: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for result, group in zip(results, groups):
        if result.error is not None or not result.new_requested_deltas:
            continue
        n = min(len(result.recorded_deltas), len(result.new_requested_deltas))
        new_turns += result.new_requested_deltas[:n]
        recorded_turns += result.recorded_deltas[:n]
        mean_change = float(np.mean(result.new_requested_deltas))
        dialogue_new.append(mean_change)
        dialogue_recorded.append(result.recorded_final_mood)
        by_model[group].append((mean_change, result.recorded_final_mood))
    model_new = [np.mean([a for a, _ in v]) for v in by_model.values()]
    model_recorded = [np.mean([b for _, b in v]) for v in by_model.values()]
    return Fidelity(
        turn_r=_pearson(new_turns, recorded_turns),
        dialogue_r=_pearson(dialogue_new, dialogue_recorded),
        model_rho=_pearson(_ranks(model_new), _ranks(model_recorded)) if len(by_model) >= 3 else math.nan,
        turns=len(new_turns),
        dialogues=len(dialogue_new),
        models=len(by_model),
    )
