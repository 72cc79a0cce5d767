"""Import RLVER profile files (`train_profile.jsonl`, `test_profile.jsonl`) as personas.

An RLVER profile has `id`, `player` (a Chinese persona text with bullet fields such as
`* 姓名：`), `scene` (a background script ending in a `####隐藏主题:` line), `main_cha`
(负面型 / 被动型 / 回避型), `cha_group` (three traits), `task` (the hidden need) and, in the
test set, `first_talk` (the opening line).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from dialog_gym._jsonl import describe_problems, read_json_lines
from dialog_gym.personas.persona import CharacterType, HiddenNeed, Persona, Profile, Scene
from dialog_gym.personas.validation import validate_record

HIDDEN_THEME_MARKER = "####隐藏主题:"

# Distinctive words of each of RLVER's eight task sentences, checked in this order.
_NEED_CUES: tuple[tuple[str, HiddenNeed], ...] = (
    ("辩证", HiddenNeed.DIALECTICAL_ANALYSIS),
    ("建议", HiddenNeed.PRACTICAL_ADVICE),
    ("原因", HiddenNeed.MOTIVE_ANALYSIS),
    ("反思", HiddenNeed.GUIDED_REFLECTION),
    ("夸奖", HiddenNeed.SPECIFIC_PRAISE),
    ("倾听", HiddenNeed.ATTENTIVE_LISTENING),
    ("共情", HiddenNeed.DEEP_EMPATHY),
    ("没有错", HiddenNeed.NOT_AT_FAULT),
)

CHARACTER_TYPES: dict[str, CharacterType] = {
    "负面型": CharacterType.NEGATIVE,
    "被动型": CharacterType.PASSIVE,
    "回避型": CharacterType.AVOIDANT,
}

_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "id": (str, int),
    "player": (str,),
    "scene": (str,),
    "main_cha": (str,),
    "cha_group": (list,),
    "task": (str,),
    "first_talk": (str, type(None)),
}

_FIELD_RE = re.compile(r"^\s*[*\-]?\s*(姓名|年龄|性别|职业)\s*[:：]\s*(.+?)\s*$", re.MULTILINE)
_STYLE_RE = re.compile(r"\*\s*说话风格\s*[:：]\s*\n?(.*?)(?:\n\s*\*|\Z)", re.DOTALL)


class RLVERImportError(ValueError):
    """A profile that cannot be mapped onto a persona; names the file, line and field."""


def need_from_task(task: str) -> HiddenNeed:
    for cue, need in _NEED_CUES:
        if cue in task:
            return need
    raise ValueError(f"unrecognised RLVER task (hidden need): {task!r}")


def persona_from_rlver(record: Mapping[str, Any], *, split: str, where: str = "<record>") -> Persona:
    """Map one RLVER profile onto a `Persona` (language zh, source "rlver")."""
    if not isinstance(record, Mapping):
        raise RLVERImportError(f"{where}: expected a JSON object, got {type(record).__name__}")
    for key in ("id", "player", "scene", "main_cha", "cha_group", "task"):
        if key not in record:
            raise RLVERImportError(f"{where}: {key}: missing field")
    for key, kinds in _FIELD_TYPES.items():
        if key in record and not isinstance(record[key], kinds):
            expected = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
            raise RLVERImportError(f"{where}: {key}: expected {expected}, got {type(record[key]).__name__}")
    try:
        need = need_from_task(record["task"])
    except ValueError as exc:
        raise RLVERImportError(f"{where}: task: {exc}") from None
    scene_text: str = record["scene"]
    story, marker, theme = scene_text.partition(HIDDEN_THEME_MARKER)
    if marker:
        try:
            theme_need: HiddenNeed | None = need_from_task(theme)
        except ValueError:
            theme_need = None
        if theme_need is not need:
            raise RLVERImportError(
                f"{where}: scene: hidden theme {theme.strip()!r} disagrees with task {record['task']!r}"
            )
    try:
        character_type = CHARACTER_TYPES[record["main_cha"]]
    except KeyError:
        raise RLVERImportError(
            f"{where}: main_cha: unknown character type {record['main_cha']!r}; expected one of {sorted(CHARACTER_TYPES)}"
        ) from None

    player: str = record["player"]
    fields = {k: v for k, v in _FIELD_RE.findall(player)}
    age_match = re.search(r"\d+", fields.get("年龄", ""))
    style_match = _STYLE_RE.search(player)
    traits = tuple(str(t) for t in record["cha_group"] if str(t).strip()) or ("未知",)
    persona = Persona(
        id=f"rlver-{record['id']}",
        language="zh",
        split=split,
        hidden_need=need,
        character_type=character_type,
        profile=Profile(
            name=fields.get("姓名", "用户"),
            traits=traits,
            age=int(age_match.group()) if age_match else None,
            gender=fields.get("性别"),
            occupation=fields.get("职业"),
            speaking_style=style_match.group(1).strip() if style_match else None,
            description=player.strip(),
        ),
        scene=Scene(event=story.strip()),
        opening_line=(record.get("first_talk") or None),
        source="rlver",
    )
    errors = validate_record(persona.to_dict())  # what maps must still be a valid persona
    if errors:
        raise RLVERImportError(f"{where}: {errors[0].field}: {errors[0].message}")
    return persona


def import_rlver(path: str | Path, *, split: str | None = None) -> list[Persona]:
    """Read an RLVER profile JSONL; `split` defaults to "test" for files named `test*`.

    Every line is read; if any cannot be imported (not UTF-8, not JSON, a field that does
    not map), one `RLVERImportError` lists them all, each as `FILE:LINE: ...`.
    """
    path = Path(path)
    if split is None:
        split = "test" if path.name.startswith("test") else "train"
    personas: list[Persona] = []
    problems: list[str] = []
    for line in read_json_lines(path):
        if line.error is not None:
            problems.append(str(line))
            continue
        try:
            personas.append(persona_from_rlver(line.record, split=split, where=line.where))
        except RLVERImportError as exc:
            problems.append(str(exc))
    if problems:
        raise RLVERImportError(describe_problems(problems, "lines that cannot be imported"))
    return personas
