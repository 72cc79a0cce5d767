"""Personas: the dataclass, sets, filters, seeded sampling, schema errors, the RLVER importer."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from dialog_gym.cli import main as cli
from dialog_gym.personas import (
    CharacterType,
    HiddenNeed,
    Persona,
    PersonaSet,
    PersonaValidationError,
    import_rlver,
    validate_file,
    validate_record,
)

RLVER_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "rlver"


def _record(**changes):
    record = {
        "id": "t-1",
        "language": "en",
        "split": "train",
        "hidden_need": "practical_advice",
        "character_type": "negative",
        "profile": {"name": "Sam Test", "traits": ["blunt"]},
        "scene": {"event": "Lost the keys to the shop."},
    }
    record.update(changes)
    return record


def test_bundled_set_loads_and_covers_every_need_and_type_in_both_languages():
    personas = PersonaSet.bundled()
    cells = Counter((p.language, p.hidden_need, p.character_type) for p in personas)
    for language in ("en", "zh"):
        for need in HiddenNeed:
            for kind in CharacterType:
                assert cells[(language, need, kind)] >= 1, (language, need, kind)
    assert {p.split for p in personas} == {"train", "test"}


def test_round_trip_through_dict_is_lossless():
    for persona in PersonaSet.bundled()[:20]:
        assert Persona.from_dict(persona.to_dict()) == persona
        assert validate_record(persona.to_dict()) == []


def test_filter_by_every_criterion():
    personas = PersonaSet.bundled()
    subset = personas.filter(split="test", language="zh", hidden_need="deep_empathy", character_type=["passive", "avoidant"])
    assert len(subset) >= 1
    assert all(
        p.split == "test" and p.language == "zh" and p.hidden_need is HiddenNeed.DEEP_EMPATHY
        and p.character_type in (CharacterType.PASSIVE, CharacterType.AVOIDANT)
        for p in subset
    )
    with pytest.raises(ValueError, match="unknown HiddenNeed"):
        personas.filter(hidden_need="free_pizza")
    with pytest.raises(KeyError, match="no persona with id"):
        personas.get("does-not-exist")


def test_sampling_depends_only_on_the_given_generator():
    personas = PersonaSet.bundled()
    a = [personas.sample(np.random.default_rng(7)).id for _ in range(5)]
    b = [personas.sample(np.random.default_rng(7)).id for _ in range(5)]
    assert a == b
    draws = {personas.sample(np.random.default_rng(s)).id for s in range(50)}
    assert len(draws) > 10
    with pytest.raises(ValueError, match="empty PersonaSet"):
        PersonaSet([]).sample(np.random.default_rng(0))


def test_validation_errors_name_file_line_and_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    lines = [
        json.dumps(_record()),
        json.dumps(_record(id="t-2", hidden_need="free_pizza")),
        "{not json",
        json.dumps(_record(id="t-1")),
        json.dumps(_record(id="t-4", profile={"name": "X", "traits": []})),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rendered = [str(e) for e in validate_file(path)]
    assert any(r.startswith(f"{path}:2: hidden_need:") and "free_pizza" in r for r in rendered)
    assert any(r.startswith(f"{path}:3:") and "invalid JSON" in r for r in rendered)
    assert any(r.startswith(f"{path}:4: id:") and "duplicate" in r for r in rendered)
    assert any(r.startswith(f"{path}:5: profile.traits:") for r in rendered)
    with pytest.raises(PersonaValidationError, match="bad.jsonl:2: hidden_need"):
        PersonaSet.from_jsonl(path)


def test_cli_validate_reports_errors_and_exit_code(tmp_path, capsys):
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(_record()) + "\n", encoding="utf-8")
    assert cli(["personas", "validate", str(good)]) == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_record(split="dev")) + "\n", encoding="utf-8")
    assert cli(["personas", "validate", str(bad)]) == 1
    assert f"{bad}:1: split:" in capsys.readouterr().err


@pytest.mark.skipif(not RLVER_DATA.is_dir(), reason="../shared/data/rlver is not present")
def test_all_600_rlver_profiles_import_onto_our_enums(tmp_path):
    train = import_rlver(RLVER_DATA / "train_profile.jsonl")
    test = import_rlver(RLVER_DATA / "test_profile.jsonl")
    assert (len(train), len(test)) == (500, 100)
    assert {p.split for p in train} == {"train"} and {p.split for p in test} == {"test"}
    everyone = train + test
    assert {p.hidden_need for p in everyone} == set(HiddenNeed)
    assert {p.character_type for p in everyone} == set(CharacterType)
    assert all(p.opening_line for p in test)
    raw = [json.loads(line) for line in (RLVER_DATA / "train_profile.jsonl").open(encoding="utf-8")]
    assert Counter(p.hidden_need for p in train)[HiddenNeed.NOT_AT_FAULT] == sum("没有错" in r["task"] for r in raw)
    for persona in everyone:
        assert validate_record(persona.to_dict()) == [], persona.id
        assert "####隐藏主题" not in persona.scene.event  # the hidden need is not in the scene text
    # The CLI writes a file that loads as a PersonaSet.
    out = tmp_path / "rlver_test.jsonl"
    assert cli(["personas", "import-rlver", str(RLVER_DATA / "test_profile.jsonl"), "--out", str(out)]) == 0
    assert len(PersonaSet.from_jsonl(out)) == 100


def test_rlver_importer_rejects_unknown_values_with_location(tmp_path):
    path = tmp_path / "test_profile.jsonl"
    path.write_text(json.dumps({"id": "x", "player": "* 姓名：甲", "scene": "s", "main_cha": "快乐型", "cha_group": ["a"], "task": "你希望对方辩证地分析事件中的问题"}, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"test_profile.jsonl:1: main_cha: unknown character type"):
        import_rlver(path)
