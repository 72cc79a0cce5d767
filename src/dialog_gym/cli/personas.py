"""`dialog-gym personas`: list, show, validate and import persona sets."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from dialog_gym.personas import CharacterType, HiddenNeed, PersonaSet, import_rlver, validate_file
from dialog_gym.personas.stats import NEAR_DUPLICATE_THRESHOLD, balance, near_duplicates


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("personas", help="list, show, validate, stats, generate or import-rlver personas")
    commands = parser.add_subparsers(dest="personas_command", metavar="ACTION", required=True)

    listing = commands.add_parser("list", help="one line per persona")
    _add_selection(listing)
    listing.set_defaults(func=run_list)

    show = commands.add_parser("show", help="print one persona as JSON")
    show.add_argument("persona_id")
    show.add_argument("--personas", default=None, help="JSONL file or folder (default: the bundled sets)")
    show.set_defaults(func=run_show)

    validate = commands.add_parser("validate", help="check persona JSONL files against the schema")
    validate.add_argument("paths", nargs="+", type=Path, help="JSONL files or folders of them")
    validate.set_defaults(func=run_validate)

    stats = commands.add_parser("stats", help="balance table; fails on duplicates or near-duplicates")
    stats.add_argument("--personas", default=None, help="JSONL file or folder (default: the bundled sets)")
    stats.add_argument("--threshold", type=float, default=NEAR_DUPLICATE_THRESHOLD, help="near-duplicate similarity (default: %(default)s)")
    stats.set_defaults(func=run_stats)

    gen = commands.add_parser("generate", help="write new personas with an LLM backend")
    gen.add_argument("--backend", required=True, help="openai:MODEL or transformers:PATH")
    gen.add_argument("--base-url", default=None, help="OpenAI-compatible server URL (key from $OPENAI_API_KEY)")
    gen.add_argument("--n", type=int, required=True, help="how many personas")
    gen.add_argument("--language", choices=["en", "zh"], required=True)
    gen.add_argument("--need", action="append", default=None, help="hidden need(s); default: all eight, balanced")
    gen.add_argument("--type", dest="character_type", action="append", default=None, help="character type(s); default: all three")
    gen.add_argument("--out", type=Path, required=True, help="JSONL file to append to")
    gen.add_argument("--id-prefix", default="gen", help="ids are PREFIX-LANG-NNNN (default: %(default)s)")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--max-attempts", type=int, default=3, help="tries per persona (default: %(default)s)")
    gen.add_argument("--temperature", type=float, default=0.9)
    gen.set_defaults(func=run_generate)

    imp = commands.add_parser("import-rlver", help="convert RLVER profile JSONL to dialog-gym personas")
    imp.add_argument("source", type=Path, help="train_profile.jsonl or test_profile.jsonl")
    imp.add_argument("--out", type=Path, required=True, help="output JSONL file")
    imp.add_argument("--split", choices=["train", "test"], default=None, help="default: from the file name")
    imp.set_defaults(func=run_import)


def _add_selection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--personas", default=None, help="JSONL file or folder (default: the bundled sets)")
    parser.add_argument("--split", choices=["train", "test"], default=None)
    parser.add_argument("--language", choices=["en", "zh"], default=None)
    parser.add_argument("--need", default=None, help="hidden need, e.g. practical_advice")
    parser.add_argument("--type", dest="character_type", default=None, help="negative, passive or avoidant")


def _selected(args: argparse.Namespace) -> PersonaSet:
    return PersonaSet.load(args.personas).filter(
        split=args.split, language=args.language, hidden_need=args.need, character_type=args.character_type
    )


def run_list(args: argparse.Namespace) -> int:
    personas = _selected(args)
    console = Console()
    rows = [(p.id, p.language, p.split, p.hidden_need.value, p.character_type.value, p.name, p.opening_line or "")
            for p in personas]
    table = Table(title=f"{len(personas)} personas")
    # Ids, needs and types never break or shorten (they are copied into commands): their
    # columns are as wide as their longest entry. The name and the opening line take the
    # room that is left, cut with an ellipsis; the opening line only where it has room.
    widths = [max([len(column), *(len(r[i]) for r in rows)]) for i, column in enumerate(("id", "lang", "split", "hidden need", "type"))]
    for column, width in zip(("id", "lang", "split", "hidden need", "type"), widths):
        table.add_column(column, no_wrap=True, min_width=width)
    left = console.width - sum(w + 3 for w in widths) - 1
    table.add_column("name", no_wrap=True, overflow="ellipsis", max_width=max(4, min(14, left - 3)))
    show_opening = left - 17 >= 20
    if show_opening:
        table.add_column("opening line", no_wrap=True, overflow="ellipsis", max_width=left - 17 - 3)
    for row in rows:
        table.add_row(*row[:6], *([row[6]] if show_opening else []))
    console.print(table)
    return 0


def run_show(args: argparse.Namespace) -> int:
    persona = PersonaSet.load(args.personas).get(args.persona_id)
    print(json.dumps(persona.to_dict(), ensure_ascii=False, indent=2))
    return 0


def run_validate(args: argparse.Namespace) -> int:
    files: list[Path] = []
    for path in args.paths:
        files.extend(sorted(path.glob("*.jsonl")) if path.is_dir() else [path])
    bad = 0
    for path in files:
        if not path.is_file():
            print(f"{path}: no such file", file=sys.stderr)
            bad += 1
            continue
        errors = validate_file(path)
        for error in errors:
            print(error, file=sys.stderr)
        bad += len(errors)
    print(f"{len(files)} file(s) checked, {bad} error(s)")
    return 1 if bad else 0


def run_import(args: argparse.Namespace) -> int:
    personas = import_rlver(args.source, split=args.split)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        for p in personas:
            fh.write(json.dumps(p.to_dict(), ensure_ascii=False) + "\n")
    print(f"imported {len(personas)} personas from {args.source} into {args.out}")
    return 0


def run_stats(args: argparse.Namespace) -> int:
    personas = list(PersonaSet.load(args.personas))
    counts = balance(personas)
    keys = sorted({(lang, split) for lang, split, _, _ in counts})
    table = Table(title=f"{len(personas)} personas: hidden need x character type, per language/split")
    table.add_column("hidden need")
    table.add_column("type")
    for lang, split in keys:
        table.add_column(f"{lang}/{split}", justify="right")
    for need in HiddenNeed:
        for kind in CharacterType:
            table.add_row(need.value, kind.value, *(str(counts[(lang, split, need, kind)]) for lang, split in keys))
    table.add_row("total", "", *(str(sum(v for k, v in counts.items() if k[:2] == key)) for key in keys), style="bold")
    console = Console()
    console.print(table)
    duplicates = near_duplicates(personas, args.threshold)
    for dup in duplicates:
        console.print(f"[red]near-duplicate[/]: {dup.first} ~ {dup.second} (similarity {dup.similarity:.2f})")
    if duplicates:
        console.print(f"[red]{len(duplicates)} near-duplicate pair(s)[/]")
        return 1
    console.print("no near-duplicates")
    return 0


def run_generate(args: argparse.Namespace) -> int:
    from dialog_gym._async import run_sync
    from dialog_gym.backends.factory import backend_from_spec
    from dialog_gym.personas.generate import generate_personas, plan_personas

    existing = list(PersonaSet.from_jsonl(args.out)) if args.out.is_file() and args.out.stat().st_size else []
    plans = plan_personas(
        args.n, language=args.language, id_prefix=args.id_prefix, start=len(existing),
        needs=[HiddenNeed(n) for n in args.need] if args.need else None,
        types=[CharacterType(t) for t in args.character_type] if args.character_type else None,
    )
    backend = backend_from_spec(args.backend, base_url=args.base_url)
    known = [*PersonaSet.bundled(), *existing]
    report = run_sync(generate_personas(backend, plans, known=known, max_attempts=args.max_attempts, seed=args.seed, temperature=args.temperature))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a", encoding="utf-8") as fh:
        for persona in report.personas:
            fh.write(json.dumps(persona.to_dict(), ensure_ascii=False) + "\n")
    for planned_id, reasons in report.failures:
        print(f"failed {planned_id}: " + "; ".join(reasons), file=sys.stderr)
    print(f"wrote {len(report.personas)} of {len(plans)} personas to {args.out} ({report.attempts} attempts, {len(report.failures)} failed)")
    return 1 if report.failures else 0
