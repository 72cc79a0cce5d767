"""`build_report`: one self-contained HTML file for one or more evaluation runs.

Contents: the summary table (runs side by side, 95% bootstrap intervals), scores per
hidden need and per character type, mood-trajectory and final-mood plots (matplotlib,
embedded as PNG data URIs), and every transcript with the mood after each turn and the
simulator's appraisal, collapsible (`<details>`, no JavaScript). Every piece of text from a
record is HTML-escaped: a reply containing `<script>` shows as text and never runs.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dialog_gym._version import __version__
from dialog_gym.episodes.record import Episode
from dialog_gym.eval.metrics import FAILURE_BELOW, SUCCESS_MOOD

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")


@dataclass
class RunData:
    name: str
    summary: dict[str, Any]
    episodes: list[Episode]


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _fmt(x: Any, digits: int = 1) -> str:
    """A number for the page, HTML-escaped: a summary file is input like any other."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return esc(f"{x:.{digits}f}" if isinstance(x, float) else x)


def _ci(stat: dict[str, Any], digits: int = 1, scale: float = 1.0) -> str:
    low, high = stat.get("ci95", [None, None]) if "ci95" in stat else stat.get("rate_ci95", [None, None])
    if low is None or (isinstance(low, float) and math.isnan(low)):
        return ""
    return f'<span class="ci">[{_fmt(low * scale, digits)}, {_fmt(high * scale, digits)}]</span>'


# -- plots --------------------------------------------------------------------------------
class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message says which extra installs it."""


MISSING_MATPLOTLIB = (
    "the report draws its plots with matplotlib, which is not installed: install dialog-gym's 'report' extra "
    "(in the dialog-gym repository: pip install -e '.[report]'), or pip install 'matplotlib>=3.7'"
)


def pyplot() -> Any:
    """`matplotlib.pyplot` on the file-only Agg backend; `MissingExtraError` naming the extra without it."""
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingExtraError(MISSING_MATPLOTLIB) from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _legend_below(ax: Any) -> None:
    """The legend under the axes, where it covers no line or bar (the saved PNG grows to fit it)."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=min(3, len(labels)),
                  fontsize=8, frameon=False)


def _trajectories(episodes: Sequence[Episode]) -> np.ndarray:
    """Moods per turn, each episode's final mood carried forward to the longest episode."""
    length = max((len(ep.moods) for ep in episodes), default=1)
    out = np.empty((len(episodes), length))
    for i, ep in enumerate(episodes):
        moods = ep.moods
        out[i, : len(moods)] = moods
        out[i, len(moods) :] = moods[-1]
    return out


def plot_trajectories(runs: Sequence[RunData]) -> str:
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(7.5, 4))
    for k, run in enumerate(runs):
        if not run.episodes:
            continue
        colour = COLOURS[k % len(COLOURS)]
        moods = _trajectories(run.episodes)
        turns = np.arange(moods.shape[1])
        for row in moods[:200]:
            ax.plot(turns, row, color=colour, alpha=0.06, linewidth=0.8)
        mean = moods.mean(axis=0)
        low, high = np.percentile(moods, [25, 75], axis=0)
        ax.fill_between(turns, low, high, color=colour, alpha=0.15)
        ax.plot(turns, mean, color=colour, linewidth=2.2, label=f"{run.name} (mean, IQR band)")
    ax.axhline(SUCCESS_MOOD, color="#888", linestyle=":", linewidth=1)
    ax.axhline(FAILURE_BELOW, color="#888", linestyle=":", linewidth=1)
    ax.set_xlabel("agent turn")
    ax.set_ylabel("mood")
    ax.set_ylim(-2, 102)
    ax.set_title("Mood trajectories (ended episodes carry their final mood)")
    _legend_below(ax)
    ax.grid(alpha=0.3)
    return _png(fig)


def plot_final_moods(runs: Sequence[RunData]) -> str:
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    bins = np.arange(0, 106, 5)
    for k, run in enumerate(runs):
        finals = [ep.final_mood for ep in run.episodes]
        if finals:
            ax.hist(finals, bins=bins, histtype="step", linewidth=2, color=COLOURS[k % len(COLOURS)], label=run.name)
    ax.set_xlabel("final mood")
    ax.set_ylabel("episodes")
    ax.set_title("Distribution of final moods")
    _legend_below(ax)
    ax.grid(alpha=0.3)
    return _png(fig)


def _number(value: Any, *path: Any) -> float:
    """`value[path...]` as a float, NaN where it is missing or not a number (a hostile file)."""
    for step in path:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return math.nan
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def plot_by_group(runs: Sequence[RunData], key: str, title: str) -> str:
    plt = pyplot()

    groups = sorted({g for run in runs for g in _groups(run.summary, key)})
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    width = 0.8 / max(1, len(runs))
    x = np.arange(len(groups))
    for k, run in enumerate(runs):
        table = _groups(run.summary, key)
        means = [_number(table.get(g), "score", "mean") for g in groups]
        lows = [_number(table.get(g), "score", "ci95", 0) for g in groups]
        highs = [_number(table.get(g), "score", "ci95", 1) for g in groups]
        err = np.array([np.subtract(means, lows), np.subtract(highs, means)], dtype=float)
        ax.bar(x + k * width - 0.4 + width / 2, means, width, yerr=np.nan_to_num(err), capsize=2,
               color=COLOURS[k % len(COLOURS)], label=run.name)
    ax.set_xticks(x, [g.replace("_", "\n") for g in groups], fontsize=7)
    ax.set_ylabel("mean final mood")
    ax.set_ylim(0, 105)
    ax.set_title(title)
    _legend_below(ax)
    ax.grid(alpha=0.3, axis="y")
    return _png(fig)


# -- HTML ---------------------------------------------------------------------------------
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans","Noto Sans CJK SC",sans-serif;margin:2rem auto;max-width:1100px;color:#222;padding:0 1rem}
h1{margin-bottom:.2rem} .sub{color:#666;margin-top:0}
.wide{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:1rem 0} th,td{border:1px solid #ddd;padding:.35rem .6rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#f4f4f4} td.num{text-align:right;font-variant-numeric:tabular-nums}
.ci{color:#777;font-size:.85em;margin-left:.3em}
img.plot{display:block;width:100%;height:auto;box-sizing:border-box;border:1px solid #eee;margin:.5rem 0}
details{border:1px solid #e3e3e3;border-radius:6px;margin:.3rem 0;padding:.3rem .6rem;background:#fcfcfc}
details>summary{cursor:pointer}
.turn{margin:.4rem 0;padding:.3rem .5rem;border-left:3px solid #ccc}
.who{font-weight:600;margin-right:.4em}
.msg{white-space:pre-wrap}
.user{border-color:#1f77b4} .agent{border-color:#2ca02c}
.mood{font-variant-numeric:tabular-nums;font-size:.9em;color:#444}
.up{color:#2a7d2a} .down{color:#b22} .flat{color:#777}
.appraisal{white-space:pre-wrap;color:#555;font-size:.88em}
.tag{display:inline-block;background:#eef;border-radius:4px;padding:0 .35em;margin-right:.3em;font-size:.85em}
@media (max-width:600px){body{margin:1rem auto;padding:0 .5rem} th,td{padding:.25rem .35rem;font-size:.85em} .ci{display:block;margin-left:0}}
"""


def describe_identity(identity: dict[str, Any]) -> str:
    """A short label for a simulator or agent identity dict (never holds secrets)."""
    if not identity:
        return "–"
    if identity.get("simulator") == "replay" and isinstance(identity.get("of"), dict):
        return f"replay of {describe_identity(identity['of'])}"
    head = identity.get("spec") or identity.get("simulator") or identity.get("name") or identity.get("class") or "?"
    details = [str(identity[k]) for k in ("model", "style") if identity.get(k)]
    return f"{head} ({', '.join(details)})" if details else str(head)


def describe_episodes(episodes: Sequence[Episode]) -> dict[str, Any]:
    """Run information taken from the records, for runs without `summary.json["run"]`."""

    def only(values: list[Any]) -> Any:
        distinct = {json.dumps(v, sort_keys=True, default=str): v for v in values}
        return next(iter(distinct.values())) if len(distinct) == 1 else {"name": "mixed"}

    return {
        "agent": only([ep.agent for ep in episodes]) if episodes else {},
        "simulator": only([ep.simulator for ep in episodes]) if episodes else {},
        "preset": ", ".join(sorted({ep.preset for ep in episodes})) or "–",
    }


def _summary_table(runs: Sequence[RunData]) -> str:
    rows = [
        ("episodes", lambda s: esc(s.get("episodes", "–"))),
        ("personas", lambda s: esc(s.get("personas", "–"))),
        ("score (mean final mood)", lambda s: f"<b>{_fmt(s['score']['mean'])}</b>{_ci(s['score'])}"),
        ("success (mood 100)", lambda s: f"{esc(s['success']['count'])} ({_fmt(100 * s['success']['rate'])}%){_ci(s['success'], scale=100)}"),
        ("failure (mood &lt; 10)", lambda s: f"{esc(s['failure']['count'])} ({_fmt(100 * s['failure']['rate'])}%){_ci(s['failure'], scale=100)}"),
        ("mean turns", lambda s: f"{_fmt(s['mean_turns']['mean'], 2)}{_ci(s['mean_turns'], 2)}"),
        ("mean reward", lambda s: _fmt(s.get("mean_reward"), 3)),
        ("simulator errors", lambda s: esc(s.get("simulator_errors", 0))),
        ("endings (episodes)", lambda s: esc(", ".join(f"{v} {k}" for k, v in s.get("terminal_reasons", {}).items()))),
        ("simulator tokens", lambda s: esc(sum(v for k, v in s.get("usage", {}).get("simulator", {}).items() if k != "calls"))),
        ("agent", lambda s: esc(describe_identity(s.get("run", {}).get("agent", {})))),
        ("simulator", lambda s: esc(describe_identity(s.get("run", {}).get("simulator", {})))),
        ("preset", lambda s: esc(s.get("run", {}).get("preset", "–"))),
    ]
    head = "".join(f"<th>{esc(run.name)}</th>" for run in runs)
    body = []
    for label, cell in rows:
        cells = []
        for run in runs:
            try:
                cells.append(f'<td class="num">{cell(run.summary)}</td>')
            except (KeyError, TypeError, AttributeError, ValueError):
                cells.append('<td class="num">–</td>')
        body.append(f"<tr><th>{label}</th>{''.join(cells)}</tr>")
    return f'<div class="wide"><table class="summary"><tr><th></th>{head}</tr>{"".join(body)}</table></div>'


def _groups(summary: dict[str, Any], key: str) -> dict[str, Any]:
    table = summary.get(key)
    return {str(g): v for g, v in table.items()} if isinstance(table, dict) else {}


def _group_table(runs: Sequence[RunData], key: str, label: str) -> str:
    groups = sorted({g for run in runs for g in _groups(run.summary, key)})
    head = "".join(f"<th>{esc(run.name)}</th>" for run in runs)
    body = []
    for g in groups:
        cells = []
        for run in runs:
            entry = _groups(run.summary, key).get(g)
            try:
                cells.append(
                    f'<td class="num">{_fmt(entry["score"]["mean"])}{_ci(entry["score"])}'
                    f' <span class="ci">n={esc(entry.get("n"))}, S {esc(entry.get("success"))}, F {esc(entry.get("failure"))}</span></td>'
                )
            except (KeyError, TypeError, AttributeError, ValueError):
                cells.append('<td class="num">–</td>')
        body.append(f"<tr><th>{esc(g)}</th>{''.join(cells)}</tr>")
    return f'<div class="wide"><table><tr><th>{esc(label)}</th>{head}</tr>{"".join(body)}</table></div>'


def _delta_class(delta: int) -> str:
    return "up" if delta > 0 else "down" if delta < 0 else "flat"


def _transcript(ep: Episode, *, open_: bool = False) -> str:
    parts = [
        f'<div class="turn user"><span class="who">user</span><span class="mood">[mood {ep.start_mood}]</span>'
        f'<div class="msg">{esc(ep.opening)}</div></div>'
    ]
    for turn in ep.turns:
        thought = f'<details><summary>agent thought</summary><div class="appraisal">{esc(turn["thought"])}</div></details>' if turn.get("thought") else ""
        parts.append(f'<div class="turn agent"><span class="who">agent</span> turn {esc(turn["turn"])}{thought}<div class="msg">{esc(turn["reply"])}</div></div>')
        delta = int(turn["delta"])
        clamp = f" (asked {int(turn['requested_delta']):+d})" if turn.get("clamped") else ""
        appraisal = f'<details><summary>appraisal</summary><div class="appraisal">{esc(turn["reasoning"])}</div></details>' if turn.get("reasoning") else ""
        errors = f'<div class="appraisal">errors: {esc("; ".join(turn["errors"]))}</div>' if turn.get("errors") else ""
        parts.append(
            f'<div class="turn user"><span class="who">user</span><span class="mood {_delta_class(delta)}">'
            f"[mood {esc(turn['mood'])}, {delta:+d}{esc(clamp)}]</span>{appraisal}{errors}"
            f'<div class="msg">{esc(turn["user_reply"])}</div></div>'
        )
    if ep.extra.get("unappraised_reply"):
        parts.append(f'<div class="turn agent"><span class="who">agent</span> (not appraised)<div class="msg">{esc(ep.extra["unappraised_reply"])}</div></div>')
    if ep.error:
        parts.append(f'<div class="appraisal">error: {esc(ep.error)}</div>')
    moods = " → ".join(str(m) for m in ep.moods)
    summary = (
        f"<summary><b>{esc(ep.episode_id or ep.persona_id)}</b> "
        f'<span class="tag">{esc(ep.hidden_need)}</span><span class="tag">{esc(ep.character_type)}</span>'
        f'<span class="tag">{esc(ep.language)}</span> final mood <b>{esc(ep.final_mood)}</b> · '
        f"{esc(ep.terminal_reason)} after {ep.num_turns} turns "
        f'<span class="mood">({esc(moods)})</span></summary>'
    )
    return f'<details class="episode"{" open" if open_ else ""}>{summary}{"".join(parts)}</details>'


def build_report(runs: Sequence[RunData], *, title: str = "dialog-gym evaluation report") -> str:
    """The report's HTML (a complete, self-contained document)."""
    if not runs:
        raise ValueError("build_report needs at least one run")
    pyplot()  # before any work: without matplotlib, say which extra to install
    sections = [
        f"<h1>{esc(title)}</h1>",
        f'<p class="sub">{len(runs)} run(s) · generated {esc(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))} '
        f"by dialog-gym {esc(__version__)} · intervals: 95% bootstrap over personas</p>",
        "<h2>Summary</h2>",
        _summary_table(runs),
        "<h2>Mood</h2>",
        f'<img class="plot" alt="mood trajectories" src="{plot_trajectories(runs)}">',
        f'<img class="plot" alt="final mood distribution" src="{plot_final_moods(runs)}">',
        "<h2>By hidden need</h2>",
        f'<img class="plot" alt="score by hidden need" src="{plot_by_group(runs, "by_hidden_need", "Score by hidden need (95% CI)")}">',
        _group_table(runs, "by_hidden_need", "hidden need"),
        "<h2>By character type</h2>",
        _group_table(runs, "by_character_type", "character type"),
        "<h2>Transcripts</h2>",
    ]
    for run in runs:
        # The first transcript of each run starts open, as an example; the rest are collapsed.
        episodes = "".join(_transcript(ep, open_=i == 0) for i, ep in enumerate(run.episodes))
        sections.append(f"<details class=\"run\" open><summary><b>{esc(run.name)}</b> · {len(run.episodes)} episodes</summary>{episodes}</details>")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>{''.join(sections)}</body></html>"
    )


def write_report(run_dirs: Sequence[str | Path], out: str | Path, *, names: Sequence[str] | None = None, title: str | None = None) -> Path:
    """Load run folders (or episode files), build the report, write it to `out`."""
    from dialog_gym.eval.runner import load_run

    runs = []
    for i, run_dir in enumerate(run_dirs):
        summary, episodes = load_run(run_dir)
        summary.setdefault("run", describe_episodes(episodes))
        path = Path(run_dir)
        name = names[i] if names else (path.name if path.is_dir() else path.stem)
        runs.append(RunData(name, summary, episodes))
    document = build_report(runs, title=title or "dialog-gym evaluation report")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(document, encoding="utf-8")
    return out
