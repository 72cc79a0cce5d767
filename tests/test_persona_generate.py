"""`dialog-gym personas generate` against a real local OpenAI-compatible server."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("openai", reason="persona generation over HTTP needs the 'llm' extra")

from dialog_gym.cli import main as cli
from dialog_gym.personas import CharacterType, HiddenNeed, PersonaSet, validate_file
from dialog_gym.personas.generate import parse_persona, plan_personas
from dialog_gym.testing import ScriptedOpenAIServer

import random

def _story(index: int) -> str:
    """A distinct made-up sentence per index (random letters, so scenes never look alike)."""
    rng = random.Random(index)
    return " ".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 8))) for _ in range(14))


def persona_brain(request: dict) -> str:
    """A persona per request; by seed: malformed JSON, a need stated outright, a copied scene, or a good one."""
    seed = request.get("seed") or 0
    prompt = request["messages"][-1]["content"]
    domain = re.search(r"Life domain: (\w+)", prompt).group(1)
    plan_index, attempt = divmod(seed, 1000)
    if attempt == 0 and plan_index % 4 == 1:
        return '{"profile": {"name": "Broken"'  # truncated JSON
    event = _story(plan_index)
    if attempt == 0 and plan_index % 4 == 2:
        event = "A copied scene that is identical for every persona who gets it, word for word, with no change."
    opening = "I just want you to praise me." if attempt == 0 and plan_index % 4 == 3 else _story(plan_index + 500)
    facets = {
        "people": ["My manager, Dana, counts every roll.", "My sister drives the van."],
        "when": ["It started on Monday."],
        "feelings": ["My hands shake before every shift.", "I go home and stare at the wall."],
        "tried": ["I asked Dana for a meeting; she said next month.", "I wrote it all down, nobody read it."],
        "wants": ["I'd like one person to look at what I did.", "I want Friday to feel normal again."],
        "worries": ["I'm scared the van goes next.", "I worry I'll snap at a customer."],
    }
    if attempt == 0 and plan_index == 4:
        facets["tried"] = facets["tried"][:1]  # too few lines
    if attempt == 0 and plan_index == 0:
        facets["wants"] = ["I want specific praise for what I did.", "That's all."]  # states the need
    return json.dumps({
        "profile": {"name": f"Person {plan_index}", "age": 30 + plan_index, "gender": "female", "occupation": "baker",
                    "traits": ["shy", "proud", "tired"], "speaking_style": "Short sentences.", "description": "Lives alone."},
        "scene": {"event": event, "stages": ["a", "b", "c"], "current_state": "Unsure."},
        "reactions": {"high_mood": "Opens up.", "low_mood": "Goes quiet.", "need_met": "Relaxes.", "need_missed": "Withdraws."},
        "domain": domain,
        "keywords": ["oven", "shift", "manager", "flour", "van"],
        "disclosures": ["One.", "Two.", "Three.", "Four.", "Five."],
        "opening_line": opening,
        "facets": facets,
    })


def test_plans_are_balanced_and_stratified():
    plans = plan_personas(48, language="zh")
    cells = {(p.hidden_need, p.character_type) for p in plans}
    assert len(cells) == 24 and [p.id for p in plans][:2] == ["gen-zh-0001", "gen-zh-0002"]
    assert sum(p.split == "test" for p in plans) == 0  # only every 5th round is test
    assert sum(p.split == "test" for p in plan_personas(120, language="en")) == 24
    with pytest.raises(ValueError, match="unknown language"):
        plan_personas(3, language="fr")


def test_parse_names_every_problem():
    plan = plan_personas(1, language="en", needs=[HiddenNeed.SPECIFIC_PRAISE], types=[CharacterType.PASSIVE])[0]
    assert parse_persona("no json here", plan, "t")[1] == ["no JSON object in the answer"]
    persona, errors = parse_persona(json.dumps({"profile": {"name": "X", "traits": []}}), plan, "t")
    assert persona is None and any(e.startswith("profile.traits") for e in errors) and any(e.startswith("scene") for e in errors)
    good = persona_brain({"seed": 5001, "messages": [{"role": "user", "content": "Life domain: work."}]})
    persona, errors = parse_persona(good, plan, "t")
    assert errors == [] and persona.hidden_need is HiddenNeed.SPECIFIC_PRAISE and persona.id == plan.id
    assert persona.facets.tried[0].startswith("I asked Dana") and len(persona.facets.people) == 2


def test_parse_checks_the_facets():
    plan = plan_personas(1, language="en", needs=[HiddenNeed.SPECIFIC_PRAISE], types=[CharacterType.PASSIVE])[0]
    record = json.loads(persona_brain({"seed": 5001, "messages": [{"role": "user", "content": "Life domain: work."}]}))
    del record["facets"]
    assert parse_persona(json.dumps(record), plan, "t")[1] == ["facets: missing"]
    record = json.loads(persona_brain({"seed": 4000, "messages": [{"role": "user", "content": "Life domain: work."}]}))
    assert parse_persona(json.dumps(record), plan, "t")[1] == ["facets.tried: expected 2-3 lines, got 1"]
    record = json.loads(persona_brain({"seed": 0, "messages": [{"role": "user", "content": "Life domain: work."}]}))
    assert parse_persona(json.dumps(record), plan, "t")[1] == ["facets.wants.0: states the hidden need outright ('specific praise')"]
    record["facets"]["wants"] = ["Person 0 wants a raise.", "Nothing else."]
    assert parse_persona(json.dumps(record), plan, "t")[1] == ["facets.wants.0: speaks of Person in the third person; facet lines are first-person"]
    record["facets"]["people"] = ["One.", "One."]
    errors = parse_persona(json.dumps(record), plan, "t")[1]
    assert "facets.people.1: repeats facets.people.0" in errors


def test_generate_command_retries_dedups_and_writes_valid_personas(tmp_path, capsys):
    out = tmp_path / "generated.jsonl"
    with ScriptedOpenAIServer(brain=persona_brain, seed=0) as server:
        code = cli([
            "personas", "generate", "--backend", "openai:scripted", "--base-url", server.base_url,
            "--n", "8", "--language", "en", "--need", "practical_advice", "--need", "specific_praise",
            "--out", str(out), "--seed", "0",
        ])
        stats = server.stats()
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "wrote 8 of 8 personas" in printed.out
    assert validate_file(out) == []
    personas = PersonaSet.from_jsonl(out)
    assert len(personas) == 8 and {p.hidden_need for p in personas} == {HiddenNeed.PRACTICAL_ADVICE, HiddenNeed.SPECIFIC_PRAISE}
    assert all(p.source == "generated:scripted" for p in personas)
    assert stats["chat_requests"] > 8  # malformed, duplicated and leaking answers were retried


def test_generate_reports_personas_that_keep_failing(tmp_path, capsys):
    out = tmp_path / "generated.jsonl"
    with ScriptedOpenAIServer(brain=lambda request: "I cannot do that.", seed=0) as server:
        code = cli(["personas", "generate", "--backend", "openai:scripted", "--base-url", server.base_url,
                    "--n", "2", "--language", "zh", "--out", str(out), "--max-attempts", "2"])
    printed = capsys.readouterr()
    assert code == 1
    assert "failed gen-zh-0001: attempt 1: no JSON object in the answer; attempt 2: no JSON object" in printed.err
    assert "wrote 0 of 2 personas" in printed.out
