"""Persona facets: what a help-seeker can tell when asked (people, when, feelings, tried, wants,
worries). Optional in the schema, checked by the validator, filled for every bundled persona."""

from __future__ import annotations

import json

import pytest

from dialog_gym.personas import FACET_TOPICS, Facets, Persona, PersonaSet, validate_file, validate_record
from dialog_gym.personas.generate import FACET_COUNTS

FACETS = {
    "people": ["My manager, Dana, has been there twenty years and never lets me forget it.", "My sister Jo texts me every night."],
    "when": ["It started the Monday after the audit."],
    "feelings": ["I sit in the car park for ten minutes before I go in.", "My jaw aches from clenching it."],
    "tried": ["I asked HR for a meeting; they sent me a leaflet.", "I kept a log of every shift change for a month."],
    "wants": ["I'd like one week where the rota doesn't change.", "Someone upstairs to look at the log."],
    "worries": ["I'm scared I'll snap at Dana in front of the team.", "That they'll move me to nights."],
}


def _record(**changes):
    record = {
        "id": "f-1", "language": "en", "split": "train", "hidden_need": "practical_advice", "character_type": "negative",
        "profile": {"name": "Sam Test", "traits": ["blunt"]}, "scene": {"event": "The rota changes every week."},
    }
    record.update(changes)
    return record


def test_facets_load_round_trip_and_are_empty_when_absent():
    persona = Persona.from_dict(_record(facets=FACETS))
    assert persona.facets.tried == tuple(FACETS["tried"]) and persona.facets.lines("when") == tuple(FACETS["when"])
    assert Persona.from_dict(persona.to_dict()) == persona and persona.to_dict()["facets"] == FACETS
    old = Persona.from_dict(_record())
    assert old.facets == Facets() and not old.facets and old.facets.people == ()
    assert "facets" not in old.to_dict()  # an old persona file round-trips unchanged
    partial = Persona.from_dict(_record(facets={"tried": FACETS["tried"]}))
    assert partial.facets.tried and partial.to_dict()["facets"] == {"tried": FACETS["tried"]}
    with pytest.raises(ValueError, match="unknown facet topic"):
        persona.facets.lines("hobbies")


def test_the_schema_holds_the_shape_of_facets():
    assert validate_record(_record(facets=FACETS)) == []
    errors = {e.field: e.message for e in validate_record(_record(facets={**FACETS, "when": ["a.", "b.", "c."], "hobbies": ["x"]}))}
    assert "facets.when" in errors and "too long" in errors["facets.when"]
    assert "facets" in errors and "hobbies" in errors["facets"]
    errors = {e.field for e in validate_record(_record(facets={"people": ["x"] * 5, "tried": [""], "wants": "one line"}))}
    assert {"facets.people", "facets.tried.0", "facets.wants"} <= errors


def test_the_validator_checks_facet_lines(tmp_path):
    bad = {
        **FACETS,
        "wants": ["I want practical advice, not sympathy.", "Sam needs the rota fixed."],
        "worries": ["That they'll move me to nights.", "That they'll move me to nights."],
        "people": ["Dana says 'Sam, again?' every time I ask.", "My sister Jo texts me every night."],
    }
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(_record(facets=bad)) + "\n", encoding="utf-8")
    messages = {f"{e.field}: {e.message}" for e in validate_file(path)}
    assert messages == {
        "facets.wants.0: states the hidden need outright ('practical advice')",
        "facets.wants.1: speaks of Sam in the third person; facet lines are first-person",
        "facets.worries.1: repeats facets.worries.0",
    }  # a name in quoted speech, in a first-person line, is fine


def test_every_bundled_persona_has_facets_of_the_generated_sizes():
    personas = PersonaSet.bundled()
    missing = [p.id for p in personas if not p.facets]
    assert not missing, f"{len(missing)} bundled personas without facets, e.g. {missing[:3]}"
    for persona in personas:
        for topic, (low, high) in FACET_COUNTS.items():
            assert low <= len(persona.facets.lines(topic)) <= high, (persona.id, topic)
    assert set(FACET_COUNTS) == set(FACET_TOPICS)
