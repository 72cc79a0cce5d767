"""The verl adapter: the data-preparation script, the reward, and the interaction driven
the way verl's multi-turn agent loop drives it, against verl's real `BaseInteraction`.

verl pins dependencies that clash with ours, so it is not installed with dialog-gym. The
interaction tests run where `verl.interactions` is importable, either installed or in a
folder named by `DIALOG_GYM_VERL_PATH` (appended to sys.path, so installed packages win;
when it is set, verl must import and the tests never skip)::

    pip install --no-deps --target .verl-site verl==0.7.1 tensordict==0.10.0 ray==2.60.0 \\
        omegaconf==2.4.0 antlr4-python3-runtime==4.9.3 msgpack==1.2.4 protobuf==7.36.2 pyvers==0.2.3
    DIALOG_GYM_VERL_PATH=.verl-site pytest tests/test_integration_verl.py
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import math
import os
import runpy
import sys
from pathlib import Path
from typing import Any

import pytest

from dialog_gym.envs.empathy import EmpathyDialogEnv
from dialog_gym.integrations.verl import compute_score, final_reward
from dialog_gym.personas import Persona
from dialog_gym.simulators import RuleSimulator, SimulatorError

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "examples" / "verl" / "interaction_config.yaml"
PREPARE = ROOT / "examples" / "verl" / "prepare_data.py"

if os.environ.get("DIALOG_GYM_VERL_PATH") and importlib.util.find_spec("verl") is None:
    sys.path.append(os.environ["DIALOG_GYM_VERL_PATH"])

PERSONAS = [
    ("verl-en-advice", "en", "train", "practical_advice", "passive", "Sam", "The plant where I worked for twelve years closed."),
    ("verl-en-fault", "en", "train", "not_at_fault", "negative", "Lee", "My team lead blamed me for a deadline his own plan broke."),
    ("verl-zh-praise", "zh", "train", "specific_praise", "negative", "王刚", "我连着加班两晚修好了客户的车，老板却把功劳算在自己头上。"),
    ("verl-en-test", "en", "test", "deep_empathy", "avoidant", "Ana", "My grandmother died last spring and I still call her number."),
]
REPLIES = [
    "That sounds really hard. What happened after that?",
    "I hear you, and it makes sense that you feel hurt by it.",
    "Have you thought about just moving on?",
    "你真的做得很好，连着两晚修车太不容易了。",
    "ok",
]


@pytest.fixture
def persona_file(tmp_path: Path) -> Path:
    path = tmp_path / "personas.jsonl"
    rows = [
        Persona.from_dict(
            {"id": pid, "language": lang, "split": split, "hidden_need": need, "character_type": ctype,
             "profile": {"name": name, "traits": ["tired"]}, "scene": {"event": event}}
        ).to_dict()
        for pid, lang, split, need, ctype, name, event in PERSONAS
    ]
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def prepare(out_dir: Path, persona_file: Path, *extra: str) -> tuple[list[dict], list[dict]]:
    pd = pytest.importorskip("pandas", reason="the data-preparation script writes parquet with pandas")
    pytest.importorskip("pyarrow", reason="the data-preparation script writes parquet with pyarrow")
    argv = ["--out-dir", str(out_dir), "--personas", str(persona_file), *extra]
    runpy.run_path(str(PREPARE), run_name="prepare_data")["main"](argv)
    return (
        pd.read_parquet(out_dir / "train.parquet").to_dict("records"),
        pd.read_parquet(out_dir / "test.parquet").to_dict("records"),
    )


def test_prepare_data_writes_the_rows_verl_reads(tmp_path, persona_file):
    train, test = prepare(tmp_path / "data", persona_file, "--train-episodes", "6")
    assert len(train) == 6 and len(test) == 1
    for row in train + test:
        assert set(row) >= {"data_source", "prompt", "ability", "reward_model", "extra_info", "agent_name"}
        assert row["agent_name"] == "tool_agent"
        assert [m["role"] for m in row["prompt"]] == ["system", "user"] and row["prompt"][1]["content"]
        kwargs = row["extra_info"]["interaction_kwargs"]
        assert kwargs["name"] == "dialog_gym" and kwargs["rules"] == "rlver"
        assert row["reward_model"]["ground_truth"] == kwargs["persona_id"]
        # The hidden need never reaches the prompt.
        assert "need" not in json.dumps([dict(m) for m in row["prompt"]], ensure_ascii=False).lower()
    assert {r["extra_info"]["interaction_kwargs"]["persona_id"] for r in train} == {p[0] for p in PERSONAS if p[2] == "train"}
    assert len({r["extra_info"]["interaction_kwargs"]["seed"] for r in train}) == 6
    # Deterministic: the same seeds give the same opening lines.
    again, _ = prepare(tmp_path / "again", persona_file, "--train-episodes", "6")
    assert [r["prompt"][1]["content"] for r in again] == [r["prompt"][1]["content"] for r in train]


def test_compute_score_is_the_final_mood():
    assert final_reward([], "rlver") == pytest.approx(0.30)
    assert final_reward([0.05, -0.10, 0.12], "rlver") == pytest.approx(0.37)
    assert final_reward([0.10, 0.10], "sage") == pytest.approx(0.60)
    assert final_reward([0.05, float("nan")], "rlver") == 0.0
    info = {"turn_scores": [0.05, 0.07], "interaction_kwargs": {"name": "dialog_gym", "rules": "sage"}}
    assert compute_score("dialog_gym/empathy", "...", "p", info) == pytest.approx(0.52)
    with pytest.raises(KeyError, match="turn_scores"):
        compute_score("dialog_gym/empathy", "...", "p", {})


# -- against verl's real BaseInteraction ---------------------------------------------------
@pytest.fixture
def verl_base():
    if os.environ.get("DIALOG_GYM_VERL_PATH"):  # verl was provided on purpose: it must import
        return importlib.import_module("verl.interactions.base").BaseInteraction
    base = pytest.importorskip(
        "verl.interactions.base",
        reason="verl with verl.interactions (<= 0.7.1) is not importable; see this file's docstring",
    )
    return base.BaseInteraction


def interaction(persona_file: Path, **config: Any):
    from dialog_gym.integrations.verl import DialogGymInteraction

    return DialogGymInteraction({"name": "dialog_gym", "personas": str(persona_file), **config})


async def play(inter, row: dict, replies: list[str], request_id: str) -> tuple[list[float], list[dict], list[dict]]:
    """What verl's tool agent loop does with an interaction, turn by turn."""
    kwargs = dict(row["extra_info"]["interaction_kwargs"])
    messages = [dict(m) for m in row["prompt"]]
    await inter.start_interaction(request_id, **kwargs)
    scores, metas = [], []
    for turn in range(20):
        messages.append({"role": "assistant", "content": replies[turn % len(replies)]})
        end, user, score, meta = await inter.generate_response(request_id, messages, **kwargs)
        messages.append({"role": "user", "content": user})
        scores.append(score)
        metas.append(meta)
        if end:
            break
        await asyncio.sleep(0)  # let other dialogues interleave
    return scores, metas, messages


def test_registry_loads_the_shipped_config(verl_base):
    from verl.interactions.utils.interaction_registry import initialize_interactions_from_config

    interactions = initialize_interactions_from_config(str(CONFIG))
    assert list(interactions) == ["dialog_gym"]
    inter = interactions["dialog_gym"]
    assert isinstance(inter, verl_base) and inter.name == "dialog_gym"
    assert inter.rules.name == "rlver" and len(inter.personas) > 0


def test_verl_loads_compute_score_as_the_custom_reward_function(verl_base):
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import get_custom_reward_fn

    config = OmegaConf.create(
        {"reward": {"custom_reward_function": {"path": "pkg://dialog_gym.integrations.verl", "name": "compute_score"}}}
    )
    reward_fn = get_custom_reward_fn(config)
    info = {"turn_scores": [0.08, -0.03], "interaction_kwargs": {"name": "dialog_gym", "rules": "rlver"}}
    assert reward_fn(data_source="dialog_gym/empathy", solution_str="", ground_truth="p", extra_info=info) == pytest.approx(0.35)


def test_scripted_dialogues_score_the_emotion_deltas(verl_base, tmp_path, persona_file):
    train, _ = prepare(tmp_path / "data", persona_file, "--train-episodes", "3")
    inter = interaction(persona_file)
    assert isinstance(inter, verl_base)

    async def main():
        # verl runs many rollouts on one interaction instance at once.
        return await asyncio.gather(*(play(inter, row, REPLIES, f"req-{i}") for i, row in enumerate(train)))

    results = asyncio.run(main())
    for i, (row, (scores, metas, messages)) in enumerate(zip(train, results)):
        kwargs = row["extra_info"]["interaction_kwargs"]
        assert 1 <= len(scores) <= inter.rules.max_turns
        assert metas[-1]["terminal_reason"] in ("failure", "goodbye", "max_turns")
        assert [round(s * 100) for s in scores] == [m["emotion_delta"] for m in metas]
        moods = [inter.rules.start + round(100 * sum(scores[: k + 1])) for k in range(len(scores))]
        assert moods == [m["mood"] for m in metas]
        reward = asyncio.run(inter.calculate_score(f"req-{i}"))
        assert reward == pytest.approx(metas[-1]["mood"] / 100)
        assert compute_score(row["data_source"], "", kwargs["persona_id"], {"turn_scores": scores, "interaction_kwargs": kwargs}) == pytest.approx(reward)
        # The user answers in the persona's language; no appraisal or hidden need leaks.
        user_turns = [m["content"] for m in messages[2:] if m["role"] == "user"]
        if kwargs["persona_id"].startswith("verl-zh"):
            assert all(any("\u4e00" <= ch <= "\u9fff" for ch in text) for text in user_turns)
        for meta in metas:
            assert set(meta) <= {"mood", "emotion_delta", "turn", "terminal_reason", "format_ok"}
        asyncio.run(inter.finalize_interaction(f"req-{i}"))
    assert inter._sessions == {}

    # Same row, same replies: the same dialogue, and the gym env's with the same seed.
    again = asyncio.run(play(interaction(persona_file), train[0], REPLIES, "again"))
    assert again[0] == results[0][0] and again[2] == results[0][2]
    kwargs = train[0]["extra_info"]["interaction_kwargs"]
    env = EmpathyDialogEnv(personas=str(persona_file), split=None)
    obs, info = env.reset(seed=int(kwargs["seed"]), options={"persona_id": kwargs["persona_id"]})
    assert info["messages"] == results[0][2][:2]
    for turn, score in enumerate(results[0][0]):
        obs, _, terminated, truncated, info = env.step(REPLIES[turn % len(REPLIES)])
        assert info["emotion_delta"] == round(100 * score)
    assert terminated and info["messages"] == results[0][2]


def test_a_rows_preset_overrides_the_config(verl_base, tmp_path, persona_file):
    train, _ = prepare(tmp_path / "data", persona_file, "--train-episodes", "1", "--rules", "sage")
    inter = interaction(persona_file, rules="rlver")
    scores, metas, _ = asyncio.run(play(inter, train[0], REPLIES, "r"))
    assert all(abs(s) <= 0.10 + 1e-9 for s in scores)  # sage clamps each change to +-10
    assert metas[0]["mood"] == 40 + metas[0]["emotion_delta"]
    assert compute_score("", "", "", {"turn_scores": scores, "interaction_kwargs": train[0]["extra_info"]["interaction_kwargs"]}) == pytest.approx(metas[-1]["mood"] / 100)


class FlakySimulator(RuleSimulator):
    """Fails on the second reaction."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    async def react(self, *args, **kwargs):
        self.calls += 1
        if self.calls == 2:
            raise SimulatorError("backend down", raw_outputs=["<garbled>"])
        return await super().react(*args, **kwargs)


def test_a_simulator_failure_ends_the_dialogue_with_no_invented_reward(verl_base, tmp_path, persona_file):
    train, _ = prepare(tmp_path / "data", persona_file, "--train-episodes", "1")
    inter = interaction(persona_file, simulator=FlakySimulator())
    scores, metas, _ = asyncio.run(play(inter, train[0], ["That sounds hard, tell me more."], "r"))
    assert len(scores) == 2 and not math.isnan(scores[0]) and math.isnan(scores[1])
    assert metas[-1]["terminal_reason"] == "simulator_error" and "backend down" in metas[-1]["error"]
    assert compute_score("", "", "", {"turn_scores": scores, "interaction_kwargs": {}}) == 0.0


def test_clear_errors(verl_base, tmp_path, persona_file):
    inter = interaction(persona_file)
    with pytest.raises(ValueError, match="persona_id"):
        asyncio.run(inter.start_interaction("r", name="dialog_gym"))
    with pytest.raises(KeyError, match="start_interaction"):
        asyncio.run(inter.generate_response("nobody", [{"role": "assistant", "content": "hi"}]))


def test_an_llm_simulator_over_http_plays_the_user(verl_base, tmp_path, persona_file, monkeypatch):
    pytest.importorskip("openai", reason="the LLM simulator needs the openai client")
    from dialog_gym.testing import ScriptedOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    train, _ = prepare(tmp_path / "data", persona_file, "--train-episodes", "3")
    with ScriptedOpenAIServer(seed=0) as server:
        inter = interaction(
            persona_file, simulator="openai", simulator_kwargs={"model": "scripted", "base_url": server.base_url}
        )

        async def main():  # one event loop, as in a verl rollout worker
            return await asyncio.gather(*(play(inter, row, REPLIES, f"req-{i}") for i, row in enumerate(train)))

        results = asyncio.run(main())
        kinds = server.stats()["kinds"]
    assert kinds.get("appraise", 0) >= 3 and kinds.get("respond", 0) >= 3
    for scores, metas, _ in results:
        assert not any(math.isnan(s) for s in scores)
        assert metas[-1]["mood"] == inter.rules.start + round(100 * sum(scores))
    assert "sk-test-not-a-secret" not in repr(inter)


def test_open_dialogues_are_bounded(verl_base, tmp_path, persona_file):
    train, _ = prepare(tmp_path / "data", persona_file, "--train-episodes", "1")
    inter = interaction(persona_file, max_sessions=2)
    kwargs = dict(train[0]["extra_info"]["interaction_kwargs"])

    async def main():
        await inter.start_interaction("a", **kwargs)  # left open (e.g. cut by verl's turn limit)
        finished = await play(inter, train[0], ["ok"], "done")  # ends on its own
        await inter.start_interaction("b", **kwargs)
        return finished

    finished = asyncio.run(main())
    assert finished[1][-1]["terminal_reason"] is not None
    assert list(inter._sessions) == ["a", "b"]  # the finished dialogue was dropped first
