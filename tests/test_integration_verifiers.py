"""The verifiers environment: `vf-eval dialog-gym-empathy` with a local OpenAI-compatible policy.

verifiers 0.4 pins `openai<3` (ours is newer), so CI installs verifiers and the packages it
imports into a folder of its own (the line in `.ci/run`), and everything that imports
verifiers runs in a child process whose path puts that folder first::

    pip install --no-deps --target .verifiers-site verifiers==0.4.0 openai==2.54.0 ...
    DIALOG_GYM_VERIFIERS_PATH=.verifiers-site pytest tests/test_integration_verifiers.py

With `DIALOG_GYM_VERIFIERS_PATH` set these tests never skip; without it they skip unless
verifiers is installed. `vf-eval` (verifiers' own evaluation entry point) runs in a child
process against `ScriptedOpenAIServer`, which plays the policy with scripted replies; every
recorded dialogue is then replayed through `gym.make` with the same seed and replies. The
`test_api_*` tests use the Python API and run in a child pytest.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import dialog_gym  # noqa: F401  (registers the env ids)
from dialog_gym.integrations._setup import newest_env_id
from dialog_gym.simulators.prompts import request_kind
from dialog_gym.testing import ScriptedOpenAIServer, scripted_brain

ROOT = Path(__file__).resolve().parents[1]
VERIFIERS_PATH = os.environ.get("DIALOG_GYM_VERIFIERS_PATH", "")
IN_CHILD = os.environ.get("DIALOG_GYM_VERIFIERS_CHILD") == "1"

REPLIES = [
    "That sounds really hard. What happened after that?",
    "I hear you, and it makes sense that you feel hurt by it.\n",  # reaches the user as written
    "Have you tried just moving on?",
    "You did nothing wrong here; anyone would feel this way.",
]
THINK_REPLIES = [
    "<think>They sound tired; ask what happened.</think>That sounds exhausting. What happened?",
    "no tags here, just a reply",  # malformed: format_ok is False, the penalty applies
    "<think>Validate first.</think>It makes sense that you are upset.",
]


def policy_brain(replies: list[str]):
    """The policy's turn i is replies[i % len]; the simulator's prompts get the scripted brain."""

    def brain(request: dict[str, Any]) -> str:
        messages = request.get("messages") or []
        if request_kind(messages) != "other":
            return scripted_brain(request)
        return replies[sum(m.get("role") == "assistant" for m in messages) % len(replies)]

    return brain


def child_env(**extra: str) -> dict[str, str] | None:
    """An environment whose Python imports verifiers (its folder first), or None without one."""
    # Not verl's side folders, which other test modules of the same session may have put on
    # sys.path: verl's hydra and verifiers' antlr4 cannot share one interpreter.
    foreign = {str(Path(v).resolve()) for key in ("DIALOG_GYM_VERL_PATH", "DIALOG_GYM_VERL07_PATH") for v in os.environ.get(key, "").split(os.pathsep) if v}
    paths = [p for p in sys.path if p and Path(p).is_dir() and str(Path(p).resolve()) not in foreign]
    if VERIFIERS_PATH:
        paths = [p for p in VERIFIERS_PATH.split(os.pathsep) if p] + paths
    elif importlib.util.find_spec("verifiers") is None:
        return None
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), **extra}


def vf_eval(tmp_path: Path, base_url: str, *args: str) -> list[dict]:
    """Run `vf-eval dialog-gym-empathy` (verifiers' CLI entry point) and read its traces."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    env = child_env()
    if env is None:
        pytest.skip("verifiers is not importable; set DIALOG_GYM_VERIFIERS_PATH (see the docstring)")
    argv = [
        "dialog-gym-empathy", "-m", "scripted", "--client.base-url", base_url, "--no-push", "--no-rich",
        "-o", str(tmp_path), "--run.name", "run", *args,
    ]
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from verifiers.v1.cli.eval.main import main; main(sys.argv[1:])", *argv],
        env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert result.returncode == 0, f"vf-eval failed:\n{result.stderr[-4000:]}"
    return [json.loads(line) for line in (tmp_path / "run" / "traces.jsonl").read_text().splitlines()]


def conversation(trace: dict) -> list[dict[str, str]]:
    """The trace's messages along its nodes: system prompt, opening, then reply / answer pairs."""
    return [{"role": n["message"]["role"], "content": n["message"]["content"]} for n in trace["nodes"]]


def gym_replay(env_id: str, persona_id: str, seed: int, replies: list[str], **options: Any):
    env = gym.make(env_id, language="en", **options)
    obs, info = env.reset(seed=seed, options={"persona_id": persona_id})
    observations, total = [obs], 0.0
    for reply in replies:
        obs, reward, terminated, truncated, info = env.step(reply)
        observations.append(obs)
        total += float(reward)
        if terminated or truncated:
            break
    env.close()
    return observations, total, info


def check_against_gym(episodes: list[dict], env_id: str, requests: list[dict], **options: Any) -> None:
    assert episodes and all(episode["ok"] for episode in episodes), [e["errors"] for e in episodes]
    for episode in episodes:
        (trace,) = episode["traces"]
        data = trace["task"]["data"]
        persona_id, seed = data["persona_id"], data["seed"]
        messages = conversation(trace)
        replies = [m["content"] for m in messages if m["role"] == "assistant"]
        users = [m["content"] for m in messages if m["role"] == "user"]
        observations, total, info = gym_replay(env_id, persona_id, seed, replies, **options)
        assert messages[0] == {"role": "system", "content": info["messages"][0]["content"]}
        assert users == observations[: len(users)]  # the opening, then every answer the policy saw
        assert len(users) == len(replies) and info["turn"] == len(replies)  # the policy never saw the final answer
        rewards = {name: r["score"] * r["weight"] for name, r in trace["rewards"].items()}
        assert trace["rewards"]["mood"]["score"] == pytest.approx(info["mood"] / 100)
        assert sum(rewards.values()) == pytest.approx(total)  # the trace's reward is gym's episode return
        facts = trace["info"]["dialog_gym"]
        assert facts["terminal_reason"] == info["terminal_reason"] and facts["moods"][-1] == info["mood"]
        assert (facts["env_id"], facts["persona_id"], facts["seed"]) == (env_id, persona_id, seed)
        # The hidden need reaches neither the task row, the trace nor the policy's requests.
        need = info["privileged"]["hidden_need"]
        assert need not in json.dumps(data) and need not in json.dumps(messages)
    for request in requests:
        if request_kind(request["messages"]) == "other":  # the policy's requests
            text = json.dumps(request["messages"])
            assert "hidden" not in text.lower() and not re.search(r"practical_advice|deep_empathy|not_at_fault", text)


def test_vf_eval_plays_the_gym_dialogues_with_groups(tmp_path):
    with ScriptedOpenAIServer(brain=policy_brain(REPLIES)) as server:
        episodes = vf_eval(tmp_path, server.base_url, "-n", "3", "-r", "2", "--env.taskset.language", "en",
                           "--env.taskset.seed", "5")
        requests = list(server.requests)
    assert len(episodes) == 6
    rows = [e["traces"][0]["task"]["data"] for e in episodes]
    keys = sorted((row["persona_id"], row["seed"]) for row in rows)
    assert [seed for _, seed in keys] == [5, 5, 6, 6, 7, 7]  # three rows, a group of two each
    check_against_gym(episodes, newest_env_id(), requests)
    # A group replays one persona, seed and opening line: with the same replies, one dialogue.
    by_key: dict[tuple, list] = {}
    for episode in episodes:
        trace = episode["traces"][0]
        by_key.setdefault(trace["task"]["key"], []).append(conversation(trace))
    assert all(a == b for a, b in by_key.values())
    assert all(e["traces"][0]["rewards"]["mood_gain"]["weight"] == 0.0 for e in episodes)


def test_vf_eval_dense_think_rewards_add_up_to_the_gym_return(tmp_path):
    env_id = "RLVER-Empathy-Think-v1"
    with ScriptedOpenAIServer(brain=policy_brain(THINK_REPLIES)) as server:
        episodes = vf_eval(
            tmp_path, server.base_url, "-n", "2", "--env.taskset.env-id", env_id, "--env.taskset.language", "en",
            "--env.taskset.reward-mode", "dense", "--env.taskset.format-penalty", "0.25",
        )
        requests = list(server.requests)
    check_against_gym(episodes, env_id, requests, reward_mode="dense", format_penalty=0.25)
    for episode in episodes:
        rewards = episode["traces"][0]["rewards"]
        assert rewards["mood_gain"]["weight"] == 1.0 and rewards["format_penalty"]["score"] <= -0.25
        assert episode["traces"][0]["metrics"]["format_ok_rate"] < 1.0


def test_vf_eval_with_an_llm_simulator_over_http(tmp_path):
    """The simulated user is an LLM behind the same local server; a judge that never answers
    in a parseable form fails the episodes (no invented reward)."""
    with ScriptedOpenAIServer(brain=policy_brain(REPLIES)) as server:
        options = ["--env.taskset.simulator", "openai", "--env.taskset.simulator-options",
                   json.dumps({"model": "scripted-judge", "base_url": server.base_url, "temperature": 0.0})]
        episodes = vf_eval(tmp_path / "ok", server.base_url, "-n", "2", "--env.taskset.language", "en", *options)
        check_against_gym(episodes, newest_env_id(), list(server.requests), simulator="openai", simulator_options={
                          "model": "scripted-judge", "base_url": server.base_url, "temperature": 0.0})
        server.set_faults(bad_appraisal=1.0)
        failed = vf_eval(tmp_path / "bad", server.base_url, "-n", "1", "--env.taskset.language", "en", *options)
    (episode,) = failed
    assert not episode["ok"]
    errors = json.dumps(episode["errors"])
    assert "DialogSimulatorFailure" in errors and "appraisal unparseable" in errors
    assert not episode["traces"][0]["ok"] and episode["traces"][0]["rewards"].get("mood") is None


# -- the Python API (in a process that imports verifiers) -----------------------------------
def test_verifiers_api_in_its_own_process():
    """Runs this file's `test_api_*` tests in a child pytest whose path imports verifiers."""
    env = child_env(DIALOG_GYM_VERIFIERS_CHILD="1")
    if env is None:
        pytest.skip("verifiers is not importable; set DIALOG_GYM_VERIFIERS_PATH (see the docstring)")
    env.pop("PYTEST_ADDOPTS", None)
    names = [name for name in globals() if name.startswith("test_api_")]
    child = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k", "test_api_"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=540,
    )
    summary = child.stdout.strip().splitlines()[-1] if child.stdout.strip() else ""
    assert child.returncode == 0 and re.search(rf"\b{len(names)} passed\b", summary) and "skipped" not in summary, (
        f"verifiers API tests: {summary}\n{child.stdout[-4000:]}\n{child.stderr[-2000:]}"
    )


@pytest.fixture
def vf():
    if not IN_CHILD:
        pytest.skip("runs in the child process of test_verifiers_api_in_its_own_process")
    return pytest.importorskip("verifiers.v1")


def test_api_load_environment_reads_the_env_ids_setup(vf):
    from dialog_gym.integrations.verifiers import EmpathyEnv, load_environment

    env = load_environment(language="en", num_tasks=5, seed=3)
    assert isinstance(env, EmpathyEnv) and env.dialogs.env_id == newest_env_id()
    tasks = list(env.taskset)
    assert [t.data.seed for t in tasks] == [3, 4, 5, 6, 7] and len({t.key for t in tasks}) == 5
    gym_env = gym.make(newest_env_id(), language="en")
    for task in tasks:
        assert task.data.prompt is None  # the simulated user opens
        _, info = gym_env.reset(seed=task.data.seed, options={"persona_id": task.data.persona_id})
        assert task.data.system_prompt == info["messages"][0]["content"]
        assert info["privileged"]["hidden_need"] not in task.data.model_dump_json()
    sage = load_environment("RLVER-Empathy-SAGE-v1", language="en")
    assert sage.dialogs.config.rules.name == "sage" and {p.split for p in sage.dialogs.personas} == {"test"}
    everyone = load_environment(language="en", split="all")
    assert len(everyone.dialogs.personas) > len(env.dialogs.personas)


def test_api_takes_a_dialog_config_and_names_bad_options(vf):
    from pydantic import ValidationError

    from dialog_gym.integrations.verifiers import load_environment
    from dialog_gym.session import DialogConfig

    config = DialogConfig.create("rule", "sage", think=True)
    env = load_environment(config=config, language="en", num_tasks=2)
    assert env.dialogs.config is config
    assert all("<think>" in t.data.system_prompt for t in env.taskset)
    with pytest.raises(TypeError, match="config is a DialogConfig, so simulator cannot be given beside it"):
        load_environment(config=config, simulator="rule")
    with pytest.raises(ValueError, match="unknown env id 'RLVER-Empathy-v999'"):
        load_environment("RLVER-Empathy-v999")
    with pytest.raises(ValidationError, match="language"):
        load_environment(language="fr")
    with pytest.raises(TypeError, match=r"unknown keyword argument 'temperature'.*'rule' simulator go in simulator_options"):
        load_environment(simulator="rule", temperature=0.3)
    with pytest.raises(TypeError, match=r"'temprature' \(did you mean 'temperature'\?\) for the 'openai' simulator"):
        load_environment(simulator="openai", simulator_options={"model": "m", "temprature": 0.3})


def test_api_episodes_run_concurrently_through_the_env_and_fail_cleanly(vf):
    from dialog_gym.integrations.verifiers import load_environment

    async def run(env, base_url: str, n: int):
        client = vf.EvalClientConfig(base_url=base_url)
        ctx = vf.ModelContext(model="scripted", client=client, sampling=vf.SamplingConfig())
        tasks = list(env.taskset)[:n]
        async with env.serving():
            return await asyncio.gather(*(env.run_episode(task, ctx) for task in tasks))

    with ScriptedOpenAIServer(brain=policy_brain(REPLIES), latency_s=0.05) as server:
        judge = {"model": "judge", "base_url": server.base_url}
        env = load_environment(language="en", num_tasks=4, simulator="openai", simulator_options=judge)
        episodes = asyncio.run(run(env, server.base_url, 4))
        assert all(e.ok for e in episodes), [e.errors for e in episodes]
        assert server.stats()["max_in_flight"] > 1  # the four dialogues were in flight together
        for episode in episodes:
            (trace,) = episode.traces
            assert trace.agent.name == "supporter" and trace.rewards["mood"].score == trace.metrics["final_mood"] / 100
        server.set_faults(bad_appraisal=1.0)
        env = load_environment(language="en", num_tasks=1, simulator="openai", simulator_options=judge)
        (failed,) = asyncio.run(run(env, server.base_url, 1))
    assert not failed.ok and "DialogSimulatorFailure" in json.dumps([e.model_dump() for e in failed.errors])
