"""The verl adapters: data preparation, the reward, and a dialog-gym user inside verl's rollout.

verl pins dependencies that clash with ours, so it is not installed with dialog-gym. `.ci/run`
installs verl 0.9.1 with the few packages its imported modules need into `.verl-site`, and
verl 0.7.1 alone into `.verl-site-0.7` (it imports its dependencies from `.verl-site`)::

    pip install --no-deps --target .verl-site verl==0.9.1 ...      # the list in .ci/run
    pip install --no-deps --target .verl-site-0.7 verl==0.7.1
    DIALOG_GYM_VERL_PATH=.verl-site DIALOG_GYM_VERL07_PATH=.verl-site-0.7 pytest tests/test_integration_verl.py

`DIALOG_GYM_VERL_PATH` lists folders (os.pathsep-separated) appended to sys.path, so
installed packages win; when it is set, verl must import and its tests never skip. The agent
loop tests (verl >= 0.9.1) drive verl's own `AgentLoopWorker` over a dataset read by verl's
`RLHFDataset`, with a scripted policy in place of the LLM server. One process holds one verl,
so the interaction tests (`test_interaction_*`, verl 0.7) run in a child pytest whose path
puts `DIALOG_GYM_VERL07_PATH` first.
"""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import json
import math
import os
import re
import runpy
import subprocess
import sys
import types
import uuid
from pathlib import Path
from typing import Any

import pytest

from dialog_gym.envs.empathy import EmpathyDialogEnv
from dialog_gym.integrations.verl import compute_score, final_reward
from dialog_gym.personas import Persona

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "verl"
PREPARE = EXAMPLES / "prepare_data.py"

VERL_PATH = os.environ.get("DIALOG_GYM_VERL_PATH", "")
VERL07_PATH = os.environ.get("DIALOG_GYM_VERL07_PATH", "")


def _installed(name: str) -> bool:
    """Whether `name` imports as a real package: a folder of that name on sys.path (such as
    examples/verl/, once tests/test_trainers.py puts examples/ there) is only a namespace."""
    spec = importlib.util.find_spec(name)
    return spec is not None and spec.origin is not None


if VERL_PATH and not _installed("verl"):
    sys.path.extend(p for p in VERL_PATH.split(os.pathsep) if p)

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


@pytest.fixture(scope="module")
def persona_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("personas") / "personas.jsonl"
    rows = [
        Persona.from_dict(
            {"id": pid, "language": lang, "split": split, "hidden_need": need, "character_type": ctype,
             "profile": {"name": name, "traits": ["tired"]}, "scene": {"event": event}}
        ).to_dict()
        for pid, lang, split, need, ctype, name, event in PERSONAS
    ]
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def prepare(out_dir: Path, persona_file: Path | None, *extra: str) -> tuple[list[dict], list[dict]]:
    """Rows written by examples/verl/prepare_data.py (persona_file None: the bundled personas)."""
    pd = pytest.importorskip("pandas", reason="the data-preparation script writes parquet with pandas")
    pytest.importorskip("pyarrow", reason="the data-preparation script writes parquet with pyarrow")
    argv = ["--out-dir", str(out_dir), *(["--personas", str(persona_file)] if persona_file else []), *extra]
    runpy.run_path(str(PREPARE), run_name="prepare_data")["main"](argv)
    return (
        pd.read_parquet(out_dir / "train.parquet").to_dict("records"),
        pd.read_parquet(out_dir / "test.parquet").to_dict("records"),
    )


def env_deltas(persona_file: Path | None, persona_id: str, seed: int, replies: list[str]) -> tuple[list[int], list[dict]]:
    """The gym env's emotion deltas and messages for the same persona, seed and replies."""
    env = EmpathyDialogEnv(personas=str(persona_file) if persona_file else None, split=None)
    _, info = env.reset(seed=seed, options={"persona_id": persona_id})
    deltas = []
    for reply in replies:
        _, _, terminated, truncated, info = env.step(reply)
        deltas.append(info["emotion_delta"])
        if terminated or truncated:
            break
    return deltas, info["messages"]


def test_prepare_data_writes_the_rows_verl_reads(tmp_path, persona_file):
    train, test = prepare(tmp_path / "data", persona_file, "--train-episodes", "6")
    assert len(train) == 6 and len(test) == 1
    for row in train + test:
        assert set(row) >= {"data_source", "prompt", "ability", "reward_model", "extra_info", "agent_name"}
        assert row["agent_name"] == "dialog_gym"
        assert [m["role"] for m in row["prompt"]] == ["system", "user"] and row["prompt"][1]["content"]
        kwargs = row["extra_info"]["interaction_kwargs"]
        assert kwargs["name"] == "dialog_gym" and kwargs["rules"] == "rlver"
        assert row["reward_model"]["ground_truth"] == kwargs["persona_id"]
        # The hidden need never reaches the prompt.
        assert "need" not in json.dumps([dict(m) for m in row["prompt"]], ensure_ascii=False).lower()
    assert {r["extra_info"]["interaction_kwargs"]["persona_id"] for r in train} == {p[0] for p in PERSONAS if p[2] == "train"}
    assert len({r["extra_info"]["interaction_kwargs"]["seed"] for r in train}) == 6
    # Deterministic: the same seeds give the same opening lines; verl 0.7 rows pick the tool agent loop.
    again, _ = prepare(tmp_path / "again", persona_file, "--train-episodes", "6", "--agent-name", "tool_agent")
    assert [r["prompt"][1]["content"] for r in again] == [r["prompt"][1]["content"] for r in train]
    assert {r["agent_name"] for r in again} == {"tool_agent"}


def test_compute_score_is_the_final_mood():
    assert final_reward([], "rlver") == pytest.approx(0.30)
    assert final_reward([0.05, -0.10, 0.12], "rlver") == pytest.approx(0.37)
    assert final_reward([0.10, 0.10], "sage") == pytest.approx(0.60)
    assert final_reward([0.05, float("nan")], "rlver") == 0.0
    info = {"turn_scores": [0.05, 0.07], "interaction_kwargs": {"name": "dialog_gym", "rules": "sage"}}
    assert compute_score("dialog_gym/empathy", "...", "p", info) == pytest.approx(0.52)
    with pytest.raises(KeyError, match="turn_scores"):
        compute_score("dialog_gym/empathy", "...", "p", {})


def _verl_version() -> str | None:
    try:
        import verl
    except ImportError:
        if VERL_PATH:  # verl was provided on purpose: it must import
            raise
        return None
    if getattr(verl, "__file__", None) is None:  # a namespace package, not verl
        if VERL_PATH:
            raise ImportError(f"DIALOG_GYM_VERL_PATH={VERL_PATH!r} holds no verl: `import verl` found only {list(verl.__path__)}")
        return None
    return str(getattr(verl, "__version__", "0"))


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def require_verl(at_least: tuple[int, ...], below: tuple[int, ...]) -> str:
    version = _verl_version()
    if version is None:
        pytest.skip("verl is not installed (examples/verl/ holds only its configs); see this file's docstring")
    if not at_least <= _release(version) < below:
        pytest.skip(f"this test needs verl >= {'.'.join(map(str, at_least))}, < {'.'.join(map(str, below))}; verl "
                    f"{version} is importable (test_verl_0_7_interaction_in_its_own_process runs the 0.7 tests)")
    return version


def test_the_package_needs_no_verl_and_names_each_adapter_where_its_module_defines_it():
    """The reward and the rows import no verl; each adapter class is defined at module level in
    its own module, which `dialog_gym.integrations.verl` names lazily (verl configs use that name)."""
    code = ("import sys, dialog_gym.integrations.verl as v\n"
            "from dialog_gym.integrations.verl.dialogs import VerlDialogs\n"
            "print('verl' in sys.modules, v.compute_score.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "dialog_gym.integrations.verl.reward"]
    version = _verl_version()
    if version is None:
        pytest.skip("verl is not importable; see this file's docstring")
    import dialog_gym.integrations.verl as package

    name = "DialogGymInteraction" if _release(version) < (0, 8) else "DialogGymAgentLoop"
    module = importlib.import_module(package._ADAPTERS[name])
    cls = getattr(package, name)
    assert cls is getattr(module, name) and cls.__module__ == module.__name__ and cls.__qualname__ == name


# -- verl >= 0.9.1: the agent loop, driven by verl's AgentLoopWorker --------------------------
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


class ScriptedPolicy:
    """verl's LLM server client, played by a script: the k-th policy turn says `replies[k]`.

    It answers token ids (the reply and the end-of-turn token, cut at `max_tokens` as a server
    does) with a log-probability of -0.5 each, and records every request.
    """

    def __init__(self, replies: list[str]):
        self.replies = replies
        self.tokenizer: Any = None  # set to the worker's tokenizer
        self.requests: list[dict[str, Any]] = []

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **kwargs: Any):
        from verl.workers.rollout.replica import TokenOutput

        turn = self.tokenizer.decode(prompt_ids).count("<|im_start|>assistant") - 1
        ids = self.tokenizer.encode(self.replies[turn % len(self.replies)], add_special_tokens=False)
        ids = [*ids, self.tokenizer.eos_token_id][: sampling_params["max_tokens"]]
        self.requests.append({"request_id": request_id, "turn": turn, "max_tokens": sampling_params["max_tokens"]})
        await asyncio.sleep(0)
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), num_preempted=0)


class InProcessActor:
    """A Ray actor handle's `.method.remote(...)` for an object in this process."""

    def __init__(self, target: Any):
        self._target = target

    def __getattr__(self, name: str) -> Any:
        return types.SimpleNamespace(remote=getattr(self._target, name))


@pytest.fixture(scope="module")
def verl_setup(tmp_path_factory, persona_file):
    """verl's trainer config, composed from examples/verl/dialog_gym_grpo.yaml the way
    `python -m verl.trainer.main_ppo --config-path examples/verl --config-name dialog_gym_grpo`
    does, plus a tiny model folder (ChatML tokenizer, Llama config) and training rows of the
    bundled personas (which the shipped agent_loop.yaml uses) and of this file's personas."""
    require_verl((0, 9, 1), (0, 10))
    from hydra import compose, initialize_config_dir
    from transformers import LlamaConfig

    from dialog_gym.testing import tiny_chat_model

    model_dir = tmp_path_factory.mktemp("tiny-model")
    _, tokenizer = tiny_chat_model()
    tokenizer.chat_template = CHATML
    tokenizer.save_pretrained(model_dir)
    LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=2, architectures=["LlamaForCausalLM"]).save_pretrained(model_dir)

    with initialize_config_dir(config_dir=str(EXAMPLES), version_base=None):
        config = compose("dialog_gym_grpo", overrides=[
            f"actor_rollout_ref.model.path={model_dir}",
            f"actor_rollout_ref.rollout.agent.agent_loop_config_path={EXAMPLES / 'agent_loop.yaml'}",
            "actor_rollout_ref.rollout.response_length=4096",
            "actor_rollout_ref.rollout.n=2",
            "trainer.n_gpus_per_node=1",
        ])
    bundled, custom = tmp_path_factory.mktemp("verl-data"), tmp_path_factory.mktemp("verl-data-custom")
    prepare(bundled, None, "--train-episodes", "3")
    prepare(custom, persona_file, "--train-episodes", "3")
    agent_loop_yaml = tmp_path_factory.mktemp("agent-loop") / "agent_loop.yaml"
    return {"config": config, "train": bundled / "train.parquet", "custom_train": custom / "train.parquet",
            "persona_file": persona_file, "agent_loop_yaml": agent_loop_yaml}


def worker_config(setup: dict, *, overrides: dict[str, Any] | None = None, loop_options: dict[str, Any] | None = None):
    """The composed config with `overrides`; `loop_options` rewrite the shipped agent loop entry."""
    from omegaconf import OmegaConf

    config = copy.deepcopy(setup["config"])
    for key, value in (overrides or {}).items():
        OmegaConf.update(config, key, value)
    if loop_options is not None:
        entries = OmegaConf.to_container(OmegaConf.load(EXAMPLES / "agent_loop.yaml"))
        entries[0].update(loop_options)
        OmegaConf.save(OmegaConf.create(entries), setup["agent_loop_yaml"])
        OmegaConf.update(config, "actor_rollout_ref.rollout.agent.agent_loop_config_path", str(setup["agent_loop_yaml"]))
    return config


def rollout(setup: dict, config, replies: list[str] = REPLIES, reward_worker: Any = None):
    """One rollout step as verl's trainer runs it: RLHFDataset rows, a batch repeated
    `rollout.n` times (GRPO groups), then `AgentLoopWorker.generate_sequences`.
    `reward_worker` builds the reward loop worker (on the rollout's event loop, as in Ray)."""
    import numpy as np
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.protocol import DataProto
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    policy = ScriptedPolicy(replies)

    async def main():
        handles = None if reward_worker is None else [InProcessActor(reward_worker())]
        worker = AgentLoopWorker(config, policy, reward_loop_worker_handles=handles)
        policy.tokenizer = worker.tokenizer
        dataset = RLHFDataset(data_files=[str(setup["train"])], tokenizer=worker.tokenizer, config=config.data, processor=None)
        batch = DataProto.from_single_dict(collate_fn([dataset[i] for i in range(len(dataset))]))
        batch.non_tensor_batch["uid"] = np.array([uuid.uuid4().hex for _ in range(len(batch))], dtype=object)
        batch = batch.repeat(repeat_times=config.actor_rollout_ref.rollout.n, interleave=True)
        return await worker.generate_sequences(batch), worker

    output, worker = asyncio.run(main())
    return output, worker, policy


def sample(output, worker, i: int) -> dict[str, Any]:
    """One trajectory of a rollout batch, decoded."""
    mask = output.batch["response_mask"][i].bool()
    valid = output.batch["attention_mask"][i, output.batch["prompts"].shape[1]:].bool()
    responses = output.batch["responses"][i]
    return {
        "policy_text": worker.tokenizer.decode(responses[mask]),
        "context_text": worker.tokenizer.decode(responses[valid & ~mask]),
        "rm_scores": output.batch["rm_scores"][i],
        "length": int(valid.sum()),
        "logprobs": output.batch["rollout_log_probs"][i][valid],
        "mask": mask[valid],
        "dialog": output.non_tensor_batch["dialog_gym"][i],
        "turn_scores": list(output.non_tensor_batch["turn_scores"][i]),
        # the row's fields come back only without a reward loop (the trainer merges them back)
        "kwargs": output.non_tensor_batch.get("interaction_kwargs", [None] * len(output))[i],
        "uid": output.non_tensor_batch.get("uid", [None] * len(output))[i],
    }


def test_the_shipped_trainer_config_composes_and_validates(verl_setup):
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    config = verl_setup["config"]
    validate_config(config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config))
    rollout_config = config.actor_rollout_ref.rollout
    assert config.algorithm.adv_estimator == "grpo" and rollout_config.multi_turn.enable
    assert rollout_config.agent.default_agent_loop == "dialog_gym"
    assert rollout_config.multi_turn.max_assistant_turns >= 8  # the rlver preset's turn limit


@pytest.mark.parametrize("personas", ["bundled", "custom"])
def test_a_rollout_through_verls_agent_loop_worker_plays_the_env_dialogue(verl_setup, personas):
    """The shipped agent_loop.yaml with the bundled personas (each has a fixed opening line),
    and with this file's personas, whose opening lines the simulator wrote from the seed."""
    from dialog_gym.personas import PersonaSet

    persona_file = verl_setup["persona_file"] if personas == "custom" else None
    if persona_file:
        setup = {**verl_setup, "train": verl_setup["custom_train"]}
        config = worker_config(verl_setup, loop_options={"personas": str(persona_file)})
    else:
        setup, config = verl_setup, verl_setup["config"]
    persona_set = PersonaSet.load(persona_file)
    output, worker, policy = rollout(setup, config)
    assert len(output) == 6  # 3 rows x rollout.n = 2
    assert {r["max_tokens"] for r in policy.requests if r["turn"] == 0} == {4096}
    groups: dict[str, list[dict]] = {}
    for i in range(len(output)):
        s = sample(output, worker, i)
        groups.setdefault(s["uid"], []).append(s)
        dialog, kwargs = s["dialog"], s["kwargs"]
        assert dialog["terminal_reason"] in ("failure", "goodbye", "max_turns", "success")
        # The reward: final mood / 100 on the last response token, nothing elsewhere.
        mood = dialog["moods"][-1]
        assert s["rm_scores"][s["length"] - 1].item() == pytest.approx(mood / 100)
        assert s["rm_scores"].abs().sum().item() == pytest.approx(mood / 100)
        assert output.non_tensor_batch["dialog_mood"][i] == mood
        assert compute_score("", "", "", {"turn_scores": s["turn_scores"], "interaction_kwargs": kwargs}) == pytest.approx(mood / 100)
        # The dialogue is the gym env's with the same persona, seed and replies.
        played = [REPLIES[t % len(REPLIES)] for t in range(len(s["turn_scores"]))]
        deltas, messages = env_deltas(persona_file, kwargs["persona_id"], int(kwargs["seed"]), played)
        assert [round(100 * x) for x in s["turn_scores"]] == deltas
        # Policy tokens (mask 1, sampling log-probs) are the replies; the user's answers are context.
        assert s["policy_text"] == "".join(f"{reply}<|im_end|>" for reply in played)
        assert set(s["logprobs"][s["mask"]].tolist()) == {-0.5} and not s["logprobs"][~s["mask"]].any()
        answers = [m["content"] for m in messages[2:] if m["role"] == "user"]
        assert all(answer in s["context_text"] for answer in answers[:-1])
        assert s["context_text"].count("<|im_start|>user") == len(played) - 1  # the last answer ends it
        if kwargs["persona_id"].startswith("verl-zh"):
            assert re.search(r"[\u4e00-\u9fff]", s["context_text"])
        # No hidden need, no appraisal anywhere in what verl keeps.
        kept = json.dumps(dialog, ensure_ascii=False) + s["context_text"]
        assert persona_set.get(kwargs["persona_id"]).hidden_need not in kept and "reasoning" not in kept
    # A GRPO group replays one persona, seed and opening line: same replies, same dialogue.
    assert len(groups) == 3
    for members in groups.values():
        assert [m["turn_scores"] for m in members[1:]] == [members[0]["turn_scores"]] * (len(members) - 1)


def test_the_token_budget_and_verls_turn_limit_end_a_dialogue(verl_setup):
    config = worker_config(verl_setup, overrides={"actor_rollout_ref.rollout.response_length": 120,
                                                  "actor_rollout_ref.rollout.n": 1})
    output, worker, policy = rollout(verl_setup, config)
    for i in range(len(output)):
        s = sample(output, worker, i)
        assert s["dialog"]["terminal_reason"] == "length" and s["length"] <= 120
        assert s["rm_scores"].sum().item() == pytest.approx(s["dialog"]["moods"][-1] / 100)
    # Each request may use only what is left of the budget.
    assert all(0 < r["max_tokens"] <= 120 for r in policy.requests) and min(r["max_tokens"] for r in policy.requests) < 120

    config = worker_config(verl_setup, overrides={"actor_rollout_ref.rollout.multi_turn.max_assistant_turns": 2,
                                                  "actor_rollout_ref.rollout.n": 1})
    output, worker, _ = rollout(verl_setup, config, replies=["That sounds really hard. What happened after that?"])
    reasons = [sample(output, worker, i)["dialog"]["terminal_reason"] for i in range(len(output))]
    assert "max_assistant_turns" in reasons
    assert all(len(sample(output, worker, i)["turn_scores"]) <= 2 for i in range(len(output)))


def test_verls_reward_loop_scores_the_dialogue_with_compute_score(verl_setup):
    """reward_in_loop: false leaves the reward to verl's reward loop: its RewardLoopWorker loads
    `compute_score` through `custom_reward_function` and reads the turn scores."""
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

    config = worker_config(
        verl_setup,
        overrides={"reward.custom_reward_function.path": "pkg://dialog_gym.integrations.verl",
                   "reward.custom_reward_function.name": "compute_score", "actor_rollout_ref.rollout.n": 1},
        loop_options={"reward_in_loop": False},
    )
    output, worker, _ = rollout(verl_setup, config, reward_worker=lambda: RewardLoopWorker(config))
    for i in range(len(output)):
        s = sample(output, worker, i)
        assert s["rm_scores"].sum().item() == pytest.approx(s["dialog"]["moods"][-1] / 100)
    assert "dialog_mood" not in output.non_tensor_batch  # the reward function's extra info instead
    assert list(output.non_tensor_batch["acc"]) == pytest.approx([sample(output, worker, i)["dialog"]["moods"][-1] / 100 for i in range(len(output))])


def test_an_llm_simulators_calls_run_concurrently_and_a_failure_scores_zero(verl_setup, monkeypatch):
    pytest.importorskip("openai", reason="the LLM simulator needs the openai client")
    from dialog_gym.testing import ScriptedOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    with ScriptedOpenAIServer(seed=0, latency_s=0.1) as server:
        options = {"simulator": "openai", "simulator_options": {"model": "scripted", "base_url": server.base_url}}
        config = worker_config(verl_setup, loop_options=options)
        output, worker, _ = rollout(verl_setup, config)
        stats = server.stats()
        # Every rollout of the worker waits on the simulator at once, not one after another.
        assert stats["max_in_flight"] >= len(output) // 2
        assert stats["kinds"].get("open", 0) == 0  # the opening line comes from the row
        for i in range(len(output)):
            s = sample(output, worker, i)
            assert not any(math.isnan(x) for x in s["turn_scores"]) and s["dialog"]["error"] is None
            start = 30
            assert s["rm_scores"].sum().item() == pytest.approx((start + round(100 * sum(s["turn_scores"]))) / 100)
        assert "sk-test-not-a-secret" not in repr(output.non_tensor_batch)

        server.set_faults(bad_appraisal=1.0)  # every appraisal is unparseable: the simulator fails
        output, worker, _ = rollout(verl_setup, worker_config(verl_setup, overrides={"actor_rollout_ref.rollout.n": 1}, loop_options=options))
    for i in range(len(output)):
        s = sample(output, worker, i)
        assert s["dialog"]["terminal_reason"] == "simulator_error" and s["dialog"]["error"]
        assert len(s["turn_scores"]) == 1 and math.isnan(s["turn_scores"][0])
        assert s["rm_scores"].sum().item() == 0.0 and output.non_tensor_batch["dialog_simulator_error"][i] == 1.0


def test_bad_options_and_rows_get_errors_that_name_them(verl_setup, tmp_path):
    from hydra.errors import InstantiationException

    with pytest.raises(InstantiationException, match=r"dialog_gym agent loop: .*'simulater' \(did you mean 'simulator'\?\)"):
        rollout(verl_setup, worker_config(verl_setup, loop_options={"simulater": "openai"}))
    with pytest.raises(InstantiationException, match=r"'jugde' \(did you mean 'judge'\?\) for the 'calibrated' simulator"):
        rollout(verl_setup, worker_config(verl_setup, loop_options={"simulator_options": {"jugde": "x"}}))
    with pytest.raises(InstantiationException, match="replay_opening"):
        rollout(verl_setup, worker_config(verl_setup, loop_options={"replay_opening": "sometimes"}))

    pd = pytest.importorskip("pandas")
    rows = pd.read_parquet(verl_setup["train"]).to_dict("records")
    for row, message in ((rows[0], "persona_id"), (rows[1], "not-a-persona")):
        row["extra_info"]["interaction_kwargs"] = {"name": "dialog_gym", "seed": 1}
        if message == "not-a-persona":
            row["extra_info"]["interaction_kwargs"]["persona_id"] = message
        path = tmp_path / f"{message}.parquet"
        pd.DataFrame([row]).to_parquet(path, index=False)
        with pytest.raises((KeyError, ValueError), match=message):
            rollout({**verl_setup, "train": path}, worker_config(verl_setup, overrides={"actor_rollout_ref.rollout.n": 1}))


# -- verl 0.7: the interaction, driven the way verl's tool agent loop drives it --------------
def test_verl_0_7_interaction_in_its_own_process():
    """Runs this file's `test_interaction_*` tests in a child pytest that imports verl 0.7."""
    if not VERL07_PATH:
        pytest.skip("DIALOG_GYM_VERL07_PATH (a folder with verl 0.7) is not set; see this file's docstring")
    require_verl((0, 8), (1, 0))  # this process holds verl >= 0.8; verl 0.7 runs in the child
    names = [name for name in globals() if name.startswith("test_interaction_")]
    env = {**os.environ, "DIALOG_GYM_VERL_PATH": os.pathsep.join([VERL07_PATH, VERL_PATH]), "DIALOG_GYM_VERL07_PATH": ""}
    env.pop("PYTEST_ADDOPTS", None)
    child = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k", "test_interaction_"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=540,
    )
    summary = child.stdout.strip().splitlines()[-1] if child.stdout.strip() else ""
    assert child.returncode == 0 and re.search(rf"\b{len(names)} passed\b", summary) and "skipped" not in summary, (
        f"verl 0.7 interaction tests: {summary}\n{child.stdout[-4000:]}\n{child.stderr[-2000:]}"
    )


@pytest.fixture
def verl07():
    require_verl((0, 7), (0, 8))
    return importlib.import_module("verl.interactions.base").BaseInteraction


def interaction(persona_file: Path, **config: Any):
    from dialog_gym.integrations.verl import DialogGymInteraction

    return DialogGymInteraction({"name": "dialog_gym", "personas": str(persona_file), **config})


async def play(inter, row: dict, replies: list[str], request_id: str) -> tuple[list[float], list[dict], list[dict]]:
    """What verl 0.7's tool agent loop does with an interaction, turn by turn."""
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


def test_interaction_registry_and_reward_function_load_through_verl(verl07, tmp_path, persona_file):
    from omegaconf import OmegaConf
    from verl.interactions.utils.interaction_registry import initialize_interactions_from_config
    from verl.trainer.ppo.reward import get_custom_reward_fn

    interactions = initialize_interactions_from_config(str(EXAMPLES / "interaction_config.yaml"))
    assert list(interactions) == ["dialog_gym"]
    inter = interactions["dialog_gym"]
    assert isinstance(inter, verl07) and inter.name == "dialog_gym"
    assert inter.rules.name == "rlver" and len(inter.personas) > 0
    config = OmegaConf.create(
        {"reward": {"custom_reward_function": {"path": "pkg://dialog_gym.integrations.verl", "name": "compute_score"}}}
    )
    reward_fn = get_custom_reward_fn(config)
    info = {"turn_scores": [0.08, -0.03], "interaction_kwargs": {"name": "dialog_gym", "rules": "rlver"}}
    assert reward_fn(data_source="dialog_gym/empathy", solution_str="", ground_truth="p", extra_info=info) == pytest.approx(0.35)


def test_interaction_scripted_dialogues_score_the_emotion_deltas(verl07, tmp_path, persona_file):
    train, _ = prepare(tmp_path / "data", persona_file, "--train-episodes", "3", "--agent-name", "tool_agent")
    inter = interaction(persona_file)

    async def main():
        # verl runs many rollouts on one interaction instance at once.
        return await asyncio.gather(*(play(inter, row, REPLIES, f"req-{i}") for i, row in enumerate(train)))

    results = asyncio.run(main())
    for i, (row, (scores, metas, messages)) in enumerate(zip(train, results)):
        kwargs = row["extra_info"]["interaction_kwargs"]
        assert 1 <= len(scores) <= inter.rules.max_turns
        assert metas[-1]["terminal_reason"] in ("failure", "goodbye", "max_turns", "success")
        assert [round(s * 100) for s in scores] == [m["emotion_delta"] for m in metas]
        moods = [inter.rules.start + round(100 * sum(scores[: k + 1])) for k in range(len(scores))]
        assert moods == [m["mood"] for m in metas]
        reward = asyncio.run(inter.calculate_score(f"req-{i}"))
        assert reward == pytest.approx(metas[-1]["mood"] / 100)
        assert compute_score(row["data_source"], "", kwargs["persona_id"], {"turn_scores": scores, "interaction_kwargs": kwargs}) == pytest.approx(reward)
        for meta in metas:
            assert set(meta) <= {"mood", "emotion_delta", "turn", "terminal_reason", "format_ok"}
        # Same row, same replies: the gym env's dialogue with the same seed.
        deltas, env_messages = env_deltas(persona_file, kwargs["persona_id"], int(kwargs["seed"]), [m["content"] for m in messages[2::2]])
        assert deltas == [m["emotion_delta"] for m in metas] and env_messages == messages
        asyncio.run(inter.finalize_interaction(f"req-{i}"))
    assert inter._sessions == {}


def test_interaction_a_rows_preset_overrides_the_config(verl07, tmp_path, persona_file):
    train, _ = prepare(tmp_path / "data", persona_file, "--train-episodes", "1", "--rules", "sage")
    inter = interaction(persona_file, rules="rlver")
    scores, metas, _ = asyncio.run(play(inter, train[0], REPLIES, "r"))
    assert all(abs(s) <= 0.10 + 1e-9 for s in scores)  # sage clamps each change to +-10
    assert metas[0]["mood"] == 40 + metas[0]["emotion_delta"]
    assert compute_score("", "", "", {"turn_scores": scores, "interaction_kwargs": train[0]["extra_info"]["interaction_kwargs"]}) == pytest.approx(metas[-1]["mood"] / 100)


def test_interaction_an_llm_simulator_over_http_plays_the_user_and_fails_cleanly(verl07, tmp_path, persona_file, monkeypatch):
    pytest.importorskip("openai", reason="the LLM simulator needs the openai client")
    from dialog_gym.testing import ScriptedOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    train, _ = prepare(tmp_path / "data", persona_file, "--train-episodes", "3")
    with ScriptedOpenAIServer(seed=0) as server:
        with pytest.warns(DeprecationWarning, match="'simulator_kwargs' is deprecated, use 'simulator_options'"):
            inter = interaction(persona_file, simulator="openai", simulator_kwargs={"model": "scripted", "base_url": server.base_url})

        async def main():  # one event loop, as in a verl rollout worker
            return await asyncio.gather(*(play(inter, row, REPLIES, f"req-{i}") for i, row in enumerate(train)))

        results = asyncio.run(main())
        kinds = server.stats()["kinds"]
        server.set_faults(bad_appraisal=1.0)
        failed = asyncio.run(play(inter, train[0], REPLIES, "failing"))
    assert kinds.get("appraise", 0) >= 3 and kinds.get("respond", 0) >= 3
    for scores, metas, _ in results:
        assert not any(math.isnan(s) for s in scores)
        assert metas[-1]["mood"] == inter.rules.start + round(100 * sum(scores))
    assert "sk-test-not-a-secret" not in repr(inter)
    scores, metas, _ = failed
    assert len(scores) == 1 and math.isnan(scores[0]) and metas[-1]["terminal_reason"] == "simulator_error"
    assert metas[-1]["error"] and compute_score("", "", "", {"turn_scores": scores, "interaction_kwargs": {}}) == 0.0


def test_interaction_bounds_open_dialogues_and_names_bad_input(verl07, tmp_path, persona_file):
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
    with pytest.raises(ValueError, match="persona_id"):
        asyncio.run(inter.start_interaction("r", name="dialog_gym"))
    with pytest.raises(KeyError, match="start_interaction"):
        asyncio.run(inter.generate_response("nobody", [{"role": "assistant", "content": "hi"}]))
    with pytest.raises(TypeError, match="simulater"):
        interaction(persona_file, simulater="openai")
