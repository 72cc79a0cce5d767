"""The TRL adapter: token bookkeeping of multi-turn rollouts, and real `GRPOTrainer` steps.

The model is a tiny randomly initialised Llama and the tokenizer a byte-level BPE built at
run time with a ChatML template: nothing is downloaded.
"""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch", reason="the TRL adapter needs torch (pip install 'dialog-gym[trl]')")
pytest.importorskip("trl", reason="the TRL adapter needs trl (pip install 'dialog-gym[trl]')")
pytest.importorskip("datasets", reason="the TRL adapter needs datasets (pip install 'dialog-gym[trl]')")

from dialog_gym.envs.empathy import EmpathyDialogEnv  # noqa: E402
from dialog_gym.integrations.trl import (  # noqa: E402
    EpisodeKey,
    make_prompt_dataset,
    make_rollout_func,
    mood_reward,
)
from dialog_gym.mood import RLVER  # noqa: E402
from dialog_gym.personas import Persona, PersonaSet  # noqa: E402

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def byte_tokenizer():
    """A byte-level tokenizer (256 byte tokens + 3 specials) with a ChatML chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tok = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|im_start|>", "<|im_end|>", "<|pad|>"])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|im_start|>", eos_token="<|im_end|>", pad_token="<|pad|>"
    )
    fast.chat_template = CHATML
    return fast


def personas() -> PersonaSet:
    rows = [
        ("trl-advice", "en", "practical_advice", "passive", "Sam", "The plant where I worked for twelve years closed."),
        ("trl-listen", "en", "attentive_listening", "negative", "Dana", "My sister acts like I never lent her money."),
        ("trl-praise", "zh", "specific_praise", "negative", "王刚", "我连着加班两晚修好了客户的车，老板却把功劳算在自己头上。"),
    ]
    return PersonaSet(
        Persona.from_dict(
            {"id": pid, "language": lang, "split": "train", "hidden_need": need, "character_type": ctype,
             "profile": {"name": name, "traits": ["tired"]}, "scene": {"event": event}}
        )
        for pid, lang, need, ctype, name, event in rows
    )


SCRIPT = [
    "That sounds really hard. What happened after that?",
    "I hear you, and it makes sense that you feel hurt.",
    "你做得很好，真的。",
    "ok",
]


class ScriptedGenerator:
    """A `TurnGenerator` that 'generates' scripted replies (cut after `max_new_tokens`)."""

    def __init__(self, tokenizer, cut: int | None = None):
        self.tokenizer = tokenizer
        self.calls: list[int] = []
        self.cut = cut

    def __call__(self, sequences, max_new_tokens):
        self.calls.append(len(sequences))
        out = []
        for i, _ in enumerate(sequences):
            text = SCRIPT[(len(self.calls) + i) % len(SCRIPT)]
            ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
            ids = ids[: min(max_new_tokens, self.cut or max_new_tokens)]
            out.append((ids, [-0.5] * len(ids)))
        return out


def fake_trainer(tokenizer, max_completion_length: int):
    return SimpleNamespace(
        processing_class=tokenizer,
        max_completion_length=max_completion_length,
        eos_token_ids=[tokenizer.eos_token_id],
        chat_template=None,
        chat_template_kwargs={},
    )


def test_episode_keys_round_trip_and_reject_other_prompts():
    key = EpisodeKey("trl-advice", 7)
    assert EpisodeKey.parse(key.encode()) == key
    assert EpisodeKey.parse([{"role": "user", "content": key.encode()}]) == key
    with pytest.raises(ValueError, match="not a dialog-gym episode key"):
        EpisodeKey.parse("Tell me a joke")
    data = make_prompt_dataset(personas(), n_prompts=5, seed=10)
    assert data["seed"] == [10, 11, 12, 13, 14]
    assert [EpisodeKey.parse(p).persona_id for p in data["prompt"]] == data["persona_id"]


def test_rollout_tokens_match_the_chat_template_and_mask_user_turns():
    tokenizer = byte_tokenizer()
    generator = ScriptedGenerator(tokenizer)
    episodes = []
    rollout = make_rollout_func(personas=personas(), max_turns=3, generate=generator, on_episode=episodes.append)
    prompts = [EpisodeKey("trl-advice", 3).encode()] * 2 + [EpisodeKey("trl-praise", 4).encode()] * 2
    out = rollout(prompts, fake_trainer(tokenizer, max_completion_length=4096))

    assert len(out["prompt_ids"]) == len(out["completion_ids"]) == len(out["env_mask"]) == 4
    # A GRPO group replays one persona, seed and opening line.
    assert out["prompt_ids"][0] == out["prompt_ids"][1] and out["prompt_ids"][2] == out["prompt_ids"][3]
    assert out["prompt_ids"][0] != out["prompt_ids"][2]
    assert len(episodes) == 4
    for i, episode in enumerate(episodes):
        ids, mask, logprobs = out["completion_ids"][i], out["env_mask"][i], out["logprobs"][i]
        assert len(ids) == len(mask) == len(logprobs)
        # prompt + completion is exactly the template rendering of the dialogue (minus the
        # simulated user's final answer, which only moves the mood).
        messages = episode.messages
        last_reply = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
        rendered = tokenizer.apply_chat_template(messages[: last_reply + 1], tokenize=True, return_dict=False)
        assert out["prompt_ids"][i] + ids == rendered[: len(out["prompt_ids"][i]) + len(ids)]
        assert rendered[len(out["prompt_ids"][i]) + len(ids) :] == tokenizer.encode("\n", add_special_tokens=False)
        # Policy tokens decode to the agent's replies, masked tokens to the user's turns.
        policy = tokenizer.decode([t for t, m in zip(ids, mask) if m], skip_special_tokens=True)
        user = tokenizer.decode([t for t, m in zip(ids, mask) if not m], skip_special_tokens=True)
        replies = [m["content"] for m in messages if m["role"] == "assistant"]
        users = [m["content"] for m in messages[2:] if m["role"] == "user"]
        assert policy == "".join(replies)
        for text in users[: len(replies) - 1]:
            assert text in user
        assert all(lp == -0.5 for lp, m in zip(logprobs, mask) if m)
        assert all(lp == 0.0 for lp, m in zip(logprobs, mask) if not m)
        # Extra fields for the reward function.
        assert out["dialog_reward"][i] == pytest.approx(episode.reward)
        assert out["dialog_turns"][i] == len(replies)
    assert mood_reward(prompts, None, dialog_reward=out["dialog_reward"]) == out["dialog_reward"]


def test_rollout_equals_the_gym_env_with_the_same_seed_and_replies():
    tokenizer = byte_tokenizer()
    rollout = make_rollout_func(personas=personas(), max_turns=3, generate=ScriptedGenerator(tokenizer))
    out = rollout([EpisodeKey("trl-listen", 11).encode()], fake_trainer(tokenizer, 4096))
    policy = [t for t, m in zip(out["completion_ids"][0], out["env_mask"][0]) if m]
    replies = tokenizer.decode(policy, skip_special_tokens=False).split("<|im_end|>")[:-1]

    env = EmpathyDialogEnv(rules=RLVER.with_overrides(max_turns=3), personas=personas())
    env.reset(seed=11, options={"persona_id": "trl-listen"})
    for reply in replies:
        _, reward, terminated, truncated, info = env.step(reply)
    assert terminated or truncated
    assert info["mood"] == out["dialog_final_mood"][0]
    assert reward == pytest.approx(out["dialog_reward"][0])


def test_rollout_stops_at_the_token_budget_and_closes_cut_replies():
    tokenizer = byte_tokenizer()
    rollout = make_rollout_func(personas=personas(), max_turns=8, generate=ScriptedGenerator(tokenizer, cut=5))
    out = rollout([EpisodeKey("trl-advice", 1).encode()], fake_trainer(tokenizer, max_completion_length=200))
    ids, mask = out["completion_ids"][0], out["env_mask"][0]
    assert len(ids) <= 200
    assert out["dialog_terminal_reason"][0] in ("length", "failure", "goodbye")
    # Every cut reply is closed by a masked end-of-turn token before the next user turn.
    eos = tokenizer.eos_token_id
    for pos in range(1, len(ids)):
        if mask[pos - 1] == 1 and mask[pos] == 0:
            assert ids[pos] == eos
    assert out["dialog_reward"][0] == pytest.approx(out["dialog_final_mood"][0] / 100)


def test_unknown_persona_names_the_fix():
    tokenizer = byte_tokenizer()
    rollout = make_rollout_func(personas=personas(), generate=ScriptedGenerator(tokenizer))
    with pytest.raises(KeyError, match="make_prompt_dataset"):
        rollout([EpisodeKey("nobody", 1).encode()], fake_trainer(tokenizer, 100))


def text_hash_reward(prompts, completions, **kwargs):
    """A second reward that differs between group members, so advantages are non-zero."""
    return [int(hashlib.sha256(str(c).encode()).hexdigest()[:6], 16) / 0xFFFFFF for c in completions]


@pytest.mark.slow
def test_two_real_grpo_steps_train_on_policy_tokens_only(tmp_path, monkeypatch):
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    torch.manual_seed(0)
    tokenizer = byte_tokenizer()
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=2048,
            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        )
    )
    # The SAGE preset (start 40, changes clamped to +-10) keeps random replies' rewards above 0.
    rollout = make_rollout_func(personas=personas(), rules="sage", max_turns=3, max_tokens_per_turn=12)
    rollouts: list[dict] = []

    def recording_rollout(prompts, trainer):
        out = rollout(prompts, trainer)
        rollouts.append(out)
        return out

    args = GRPOConfig(
        output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=2, max_completion_length=320,
        max_steps=2, learning_rate=1e-2, beta=0.0, logging_steps=1, save_strategy="no", report_to="none",
        use_cpu=True, bf16=False, seed=0, dataloader_num_workers=0,
    )
    trainer = GRPOTrainer(
        model=model, processing_class=tokenizer, args=args,
        train_dataset=make_prompt_dataset(personas(), n_prompts=8, seed=0),
        reward_funcs=[mood_reward, text_hash_reward], rollout_func=recording_rollout,
    )

    batches: list[dict] = []
    grads: list[torch.Tensor] = []
    compute_loss, per_token_logps = trainer._compute_loss, trainer._get_per_token_logps_and_entropies

    def recording_compute_loss(model, inputs):
        batches.append({k: v.detach().clone() for k, v in inputs.items() if k in ("tool_mask", "completion_mask", "advantages")})
        return compute_loss(model, inputs)

    def recording_logps(*a, **kw):
        result = per_token_logps(*a, **kw)
        logps = result[0]
        if torch.is_grad_enabled() and logps.requires_grad:
            logps.register_hook(lambda g: grads.append(g.detach().clone()))
        return result

    monkeypatch.setattr(trainer, "_compute_loss", recording_compute_loss)
    monkeypatch.setattr(trainer, "_get_per_token_logps_and_entropies", recording_logps)
    before = [p.detach().clone() for p in model.parameters()]
    trainer.train()

    assert trainer.state.global_step == 2 and len(rollouts) == 2 and len(batches) == 2 and len(grads) == 2
    # The mood rewards reach the trainer: its logged mean is the mean of the dialogues' rewards.
    logged = [h for h in trainer.state.log_history if "rewards/mood_reward/mean" in h]
    assert len(logged) == 2
    for entry, out in zip(logged, rollouts):
        rewards = out["dialog_reward"]
        assert all(r is not None and 0.0 <= r <= 1.0 for r in rewards)
        assert entry["rewards/mood_reward/mean"] == pytest.approx(sum(rewards) / len(rewards), abs=1e-6)
        assert sum(rewards) > 0
    # env_mask reached the loss as TRL's tool_mask, and masked tokens carry no gradient.
    env_masks = sorted(tuple(m) for out in rollouts for m in out["env_mask"])
    for batch, grad in zip(batches, grads):
        assert batch["advantages"].abs().sum() > 0
        mask = batch["tool_mask"] * batch["completion_mask"]
        rows = sorted(tuple(batch["tool_mask"][r, : int(batch["completion_mask"][r].sum())].tolist()) for r in range(len(mask)))
        assert set(rows) <= set(env_masks)
        user_tokens = (batch["completion_mask"] == 1) & (batch["tool_mask"] == 0)
        assert user_tokens.any(), "the dialogues should contain simulated-user tokens"
        assert torch.all(grad[user_tokens] == 0)
        assert torch.any(grad[mask.bool()] != 0)
    assert any(not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters()))


def test_rollouts_with_an_llm_simulator_over_http_across_steps(monkeypatch):
    """Any simulator works: an LLM simulator behind a real local OpenAI-compatible server,
    over two rollout calls (the async client must survive between trainer steps)."""
    pytest.importorskip("openai", reason="the LLM simulator needs the openai client")
    from dialog_gym.testing import ScriptedOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    tokenizer = byte_tokenizer()
    with ScriptedOpenAIServer(seed=0) as server:
        rollout = make_rollout_func(
            simulator="openai", simulator_options={"model": "scripted", "base_url": server.base_url},
            personas=personas(), max_turns=2, generate=ScriptedGenerator(tokenizer),
        )
        try:
            outs = [
                rollout([EpisodeKey("trl-advice", step).encode()] * 2 + [EpisodeKey("trl-praise", step).encode()] * 2,
                        fake_trainer(tokenizer, 4096))
                for step in range(2)
            ]
        finally:
            rollout.close()
        kinds = server.stats()["kinds"]
    assert kinds.get("appraise", 0) >= 8 and kinds.get("respond", 0) >= 8
    for out in outs:
        assert all(r is not None and 0.0 <= r <= 1.0 for r in out["dialog_reward"])
        assert all(reason in ("failure", "goodbye", "max_turns") for reason in out["dialog_terminal_reason"])
        assert all(0 in mask and 1 in mask for mask in out["env_mask"])


def test_a_simulator_failure_gives_no_reward(monkeypatch):
    pytest.importorskip("openai", reason="the LLM simulator needs the openai client")
    from dialog_gym.testing import ScriptedOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    tokenizer = byte_tokenizer()
    with ScriptedOpenAIServer(seed=0, faults={"server_error": 1.0}) as server:
        rollout = make_rollout_func(
            simulator="openai", simulator_options={"model": "scripted", "base_url": server.base_url, "max_retries": 0},
            personas=personas(), max_turns=2, generate=ScriptedGenerator(tokenizer),
        )
        try:
            out = rollout([EpisodeKey("trl-listen", 0).encode()] * 2, fake_trainer(tokenizer, 4096))
        finally:
            rollout.close()
    assert out["dialog_terminal_reason"] == ["simulator_error"] * 2
    assert out["dialog_reward"] == [None, None]
    assert mood_reward(None, None, **{"dialog_reward": out["dialog_reward"]}) == [None, None]
    assert all(len(ids) == len(mask) >= 1 for ids, mask in zip(out["completion_ids"], out["env_mask"]))
