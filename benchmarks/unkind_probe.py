"""Unkindness written to slip past keyword lexicons: how often a judge reads it, and whether
it still raises the mood.

`benchmarks/data/unkind_probe_en.jsonl` holds English replies to single user messages,
written by the team apart from the judge's lexicons, corpus and contrast sets:

- `tuning`: 120 unkind replies (40 each of blame, dismiss, lecture) that avoid the obvious
  words ("your fault", "get over it", "calm down"...). The nine blame patterns added to
  `speech_acts.py` in the ladder's revision were found on these, so their figures are not
  held out.
- `check`: written afterwards by someone who saw neither: 60 blaming replies and 100 kind
  replies of the same shape (a warm opening and a "but", questions about what happened,
  the user's own choices recounted). The held-out figures.
- `check-2`: written later still, without the repository in view: 80 blaming replies
  (rhetorical questions about a choice, "to be fair to them", hindsight made a lesson), 40
  dismissive, 40 lecturing, and 80 kind replies of the blaming ones' shapes. Held out.

`benchmarks/data/unkind_probe_zh.jsonl` holds Chinese replies written the way `check-2`
was (80 blaming, 40 dismissive, 40 lecturing, 80 kind; none of the obvious words such as
你的错, 想开点, 你应该), halved: `tuning` (seven blame patterns of `speech_acts.py` were
found on its blaming replies) and `check` (held out).

Both files end with `check-3`: written during the sixteenth revision of the v2 judge, by a
writer who saw none of the repository (40 blaming, 20 dismissive, 20 lecturing and 80 kind
replies a language, the Chinese written natively, the kind ones of the unkind ones' shapes:
what the user did told back, the other people named, questions, gentle advice; the blame
often only implied: a warm opening, a "though", a pointed question). Nothing was fitted on
it; its figures decided one thing: a ninth speech-act corpus batch that the worn contrast
holdouts liked was dropped because English blame here raised the mood more often with it
(18 % -> 28 %). Then `tuning-2` (100 blaming and 100 kind replies a language, by another
blind writer: blame only implied, behind sympathy and a turn, and kind replies of the same
shapes) was written to find the implied-blame patterns of the seventeenth revision on;
`check-3` was read once more, after they were fixed.

Last, `check-4` (written during the twenty-fifth revision by blind writers, 150 user messages
a topic area and language, three areas): each user message answered twice on the same
specifics, once kindly and plainly (mostly no stock warm words: what the user did, told back;
that it was not on them; one gentle question) and once subtly unkindly (blame, dismissing or
lecturing in turn, rarely with the obvious words): 450 kind and 450 unkind replies a
language. It was fitted on only in trials that were not kept (a corpus batch, a reader of
sentences); the shipped judge never saw it. Its kind replies are the ones a reading of
unkindness most easily mistakes.

Per language, split and act: the share of replies that raise the mood, the share the judge
reads as unkind (`judge_knowledge.unkind_act`: a lexicon or the speech-act classifier), and
the mean change. Each reply is judged as the answer to its user message, for bundled
training personas of its language in turn (the persona sets the hidden need and character
type).

    python benchmarks/unkind_probe.py [--judges sage-deepseek-v3-v2 sage-deepseek-v3] [--languages en zh]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from dialog_gym.personas import PersonaSet
from dialog_gym.simulators.judge import DEFAULT_JUDGE, V1_JUDGE, CalibratedJudge
from dialog_gym.simulators.judge_knowledge import unkind_act

DATA = Path(__file__).parent / "data"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", nargs="+", default=[DEFAULT_JUDGE, V1_JUDGE], help="bundled judge names or judge files")
    parser.add_argument("--languages", nargs="+", default=["en", "zh"], choices=["en", "zh"])
    args = parser.parse_args(argv)
    probes = {language: [json.loads(line) for line in (DATA / f"unkind_probe_{language}.jsonl").read_text(encoding="utf-8").splitlines()]
              for language in args.languages}
    table = Table(title=f"unkind probe: {sum(map(len, probes.values()))} replies (benchmarks/data/unkind_probe_*.jsonl)")
    for column in ("judge", "lang", "split", "act", "n", "raise the mood", "read as unkind", "mean change"):
        table.add_column(column, justify="left" if column in ("judge", "lang", "split", "act") else "right")
    for name in args.judges:
        judge = CalibratedJudge.load(name)
        for language, rows in probes.items():
            personas = list(PersonaSet.bundled().filter(language=language, split="train"))
            groups: dict[tuple[str, str], list[tuple[float, bool]]] = defaultdict(list)
            for k, row in enumerate(rows):
                persona = personas[k % len(personas)]
                history = [{"role": "user", "content": row["user"]}]
                features = judge.features(persona, history, row["reply"])
                change = judge.predict_features(features, persona.hidden_need.value)
                groups[row["split"], row["act"]].append((change, unkind_act(features) is not None))
            for (split, act), values in sorted(groups.items()):
                changes = np.array([c for c, _ in values])
                read = np.mean([r for _, r in values])
                table.add_row(name, language, split, act, str(len(values)), f"{np.mean(changes > 0):.0%}", f"{read:.0%}", f"{changes.mean():+.2f}")
    Console().print(table)


if __name__ == "__main__":
    main()
