"""The bundled persona sets: complete, valid, balanced, distinct, and never leaking the need."""

from __future__ import annotations

from collections import Counter

import pytest

from dialog_gym._resources import data_dir
from dialog_gym.cli import main as cli
from dialog_gym.personas import CharacterType, HiddenNeed, PersonaSet, validate_file
from dialog_gym.personas.stats import cell_spread, need_leaks, near_duplicates

BUNDLED = PersonaSet.bundled()


def test_every_bundled_file_is_schema_valid():
    files = sorted(data_dir("personas").glob("*/*.jsonl"))
    assert len(files) >= 16
    for path in files:
        assert validate_file(path) == [], path


@pytest.mark.parametrize("language", ["en", "zh"])
def test_at_least_150_per_language_balanced_within_one_per_cell(language):
    personas = BUNDLED.filter(language=language)
    assert len(personas) >= 150
    low, high = cell_spread(list(personas), language)
    assert high - low <= 1 and low >= 6


@pytest.mark.parametrize("language", ["en", "zh"])
def test_split_is_about_80_20_and_stratified(language):
    personas = BUNDLED.filter(language=language)
    share = len(personas.filter(split="test")) / len(personas)
    assert 0.15 <= share <= 0.30
    tested = Counter((p.hidden_need, p.character_type) for p in personas.filter(split="test"))
    assert all(tested[(n, t)] >= 1 for n in HiddenNeed for t in CharacterType)


def test_personas_are_complete_and_varied():
    for p in BUNDLED:
        assert p.opening_line and len(p.disclosures) == 5 and len(p.keywords) >= 5, p.id
        assert p.profile.age and p.profile.occupation and p.profile.speaking_style and len(p.profile.traits) == 3, p.id
        assert p.scene.stages and p.scene.current_state and p.reactions.need_met and p.reactions.need_missed, p.id
    for language in ("en", "zh"):
        group = BUNDLED.filter(language=language)
        assert len({p.name for p in group}) == len(group)
        assert len({p.domain for p in group}) == 8
        assert len({p.profile.occupation for p in group}) > len(group) / 2


def test_no_near_duplicates_and_no_need_stated_in_the_opening_line():
    assert near_duplicates(list(BUNDLED)) == []
    assert {p.id: need_leaks(p) for p in BUNDLED if need_leaks(p)} == {}


def test_stats_command_prints_the_table_and_fails_on_near_duplicates(tmp_path, capsys):
    assert cli(["personas", "stats"]) == 0
    assert "no near-duplicates" in capsys.readouterr().out
    path = tmp_path / "dups.jsonl"
    line = (data_dir("personas") / "en" / "deep_empathy.jsonl").read_text(encoding="utf-8").splitlines()[0]
    path.write_text(line + "\n" + line.replace('"id": "en-empathy-neg-1"', '"id": "copy-1"') + "\n", encoding="utf-8")
    assert cli(["personas", "stats", "--personas", str(path)]) == 1
    assert "near-duplicate" in capsys.readouterr().out
