"""A rich progress bar over episodes, shared by the rollout engine and the eval runner."""

from __future__ import annotations

from typing import Callable

from dialog_gym.episodes.record import Episode


class EpisodeProgress:
    """Episodes done out of `total` on stderr, with a running mean of `metric`; or nothing.

    Arguments:
        label: the bar's title ("rollout", "eval").
        total: how many episodes the run has (`done` of them already finished, e.g. resumed).
        enabled: False draws nothing (all methods become no-ops).
        metric: (name, function of an episode) averaged over the episodes this bar saw.
    """

    def __init__(
        self,
        label: str,
        total: int,
        *,
        enabled: bool = True,
        done: int = 0,
        metric: tuple[str, Callable[[Episode], float]] = ("mean reward", lambda e: e.reward),
    ):
        self._name, self._value = metric
        self._sum = 0.0
        self._seen = 0
        self._bar = None
        if not enabled or total - done <= 0:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self._bar = Progress(
            TextColumn(f"[bold]{label}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("episodes"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[stats]}"),
            console=Console(stderr=True),
        )
        self._task = self._bar.add_task(label, total=total, completed=done, stats="")
        self._bar.start()

    def advance(self, episode: Episode) -> None:
        self._seen += 1
        self._sum += self._value(episode)
        if self._bar is not None:
            self._bar.update(self._task, advance=1, stats=f"{self._name} {self._sum / self._seen:.3f}")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
