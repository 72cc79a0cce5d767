"""The reference trainers (examples/train_grpo.py, examples/train_ppo.py) and their helpers.

Hand-computed values for the RL maths, token-faithfulness of multi-turn rollouts on real
tiny models and real chat templates, and short real runs of both trainers (cpu-tiny).
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the trainers need the train extra (torch)")
pytest.importorskip("transformers", reason="the trainers need the train extra (transformers)")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))

import rl_common as rc  # noqa: E402
from dialog_gym.simulators import SimulatorError  # noqa: E402
import train_grpo  # noqa: E402
import train_ppo  # noqa: E402


# --------------------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tokenizer():
    return rc.build_byte_tokenizer()


@pytest.fixture(scope="module")
def tiny_model(tokenizer):
    return rc.build_tiny_llama(tokenizer, seed=0)


@pytest.fixture(scope="module")
def personas():
    return rc.load_personas(SimpleNamespace(language="en"), "train")[:2]


def play(policy, tokenizer, personas, *, group_size, seed, simulator=None, **overrides):
    """GRPO's rollout (`train_grpo.play_dialogues`) with the package's set-up built from trainer args."""
    args = dict(rules="rlver", max_turns=3, think=False, reward_mode="terminal", max_new_tokens=10, temperature=1.0)
    args.update(overrides)
    args = SimpleNamespace(**args)
    config = rc.dialog_config(args, simulator or rc.make_simulator("rule"))
    return train_grpo.play_dialogues(
        policy, tokenizer, rc.ChatTokens(tokenizer), config, personas, group_size=group_size,
        rng=np.random.default_rng(seed), max_new_tokens=args.max_new_tokens, temperature=args.temperature,
    )


def scripted_generate(tokenizer, text: str):
    """A stand-in policy that always writes `text` then eos, with known log-probs."""
    ids = rc.ChatTokens(tokenizer).encode(text) + [tokenizer.eos_token_id]

    def generate(model, tok, prompts, *, max_new_tokens, temperature):
        generate.prompts.extend(list(p) for p in prompts)
        return [rc.Generation(list(ids), [-0.5] * len(ids), True) for _ in prompts]

    generate.prompts = []
    return generate, ids


# --------------------------------------------------------------------------------------
# tokenizer and chat template
# --------------------------------------------------------------------------------------
def test_byte_tokenizer_round_trips_unicode_and_special_tokens(tokenizer):
    text = "héllo 你好 <|im_start|>user\nhi<|im_end|>\n"
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(ids) == text
    assert ids.count(tokenizer.eos_token_id) == 1
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer.pad_token_id not in ids
    assert rc.ChatTokens(tokenizer).end_text == "<|im_end|>\n"


def test_template_that_rerenders_earlier_turns_is_refused():
    tok = rc.build_byte_tokenizer()
    # A template that stamps the number of messages into the system turn (re-renders it).
    tok.chat_template = "<|im_start|>system\n{{ messages|length }} messages<|im_end|>\n" + rc.CHATML_TEMPLATE
    with pytest.raises(rc.TemplatePrefixError, match="prefix property"):
        rc.ChatTokens(tok)
    # One that drops earlier assistant replies (like templates that strip past reasoning).
    tok.chat_template = rc.CHATML_TEMPLATE.replace(
        "{{ '<|im_start|>' + message['role']",
        "{% if message['role'] != 'assistant' or loop.last %}{{ '<|im_start|>' + message['role']",
    ).replace("}}{% endfor %}", "}}{% endif %}{% endfor %}")
    assert "{% endif %}{% endfor %}" in tok.chat_template
    with pytest.raises(rc.TemplatePrefixError, match="re-renders earlier turns"):
        rc.ChatTokens(tok)


def test_eos_that_does_not_end_the_turn_is_refused():
    tok = rc.build_byte_tokenizer()
    tok.eos_token = "<|im_start|>"
    with pytest.raises(rc.TemplatePrefixError, match="eos token"):
        rc.ChatTokens(tok)


@pytest.fixture(scope="module")
def smollm2_tokenizer():
    pytest.importorskip("gguf", reason="reading the SmolLM2 GGUF needs the gguf package")
    try:
        folder, name = rc.smollm2_gguf()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder, gguf_file=name)


@pytest.mark.parametrize("which", ["byte", "smollm2"])
def test_incremental_ids_reproduce_the_template(which, tokenizer, request):
    """Prompt + reply + glue + user turns, built incrementally, decode to the template's text."""
    tok = tokenizer if which == "byte" else request.getfixturevalue("smollm2_tokenizer")
    chat = rc.ChatTokens(tok)
    messages = [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "My boss yelled at me today."}]
    ids = chat.prompt_ids(messages)
    for k, (reply, answer) in enumerate([("That sounds awful. What happened?", "He said I was slow."),
                                         ("Being called slow stings.", "Yeah, it does. 谢谢.")]):
        seen = list(ids)
        ids += chat.encode(reply) + [tok.eos_token_id] + chat.glue_after_reply(finished=True)
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": answer}]
        ids += chat.user_turn_ids(messages)
        assert ids[: len(seen)] == seen
        assert tok.decode(ids) == chat.render(messages, generation_prompt=True), f"turn {k}"
    # A reply cut off by max_new_tokens gets the whole end-of-turn text from the template.
    cut = chat.encode("Unfinished") + chat.glue_after_reply(finished=False)
    assert tok.decode(cut) == "Unfinished" + chat.end_text


# --------------------------------------------------------------------------------------
# rollouts: token-faithful, masks, think
# --------------------------------------------------------------------------------------
def test_rollout_prefix_property_and_mask_with_a_real_policy(tokenizer, tiny_model, personas, monkeypatch):
    calls = []
    real_generate = rc.generate

    def recording_generate(model, tok, prompts, **kw):
        gens = real_generate(model, tok, prompts, **kw)
        calls.extend((tuple(p), g) for p, g in zip(prompts, gens))
        return gens

    monkeypatch.setattr(rc, "generate", recording_generate)
    torch.manual_seed(0)
    rollouts = play(tiny_model, tokenizer, personas, group_size=2, seed=0)
    assert len(rollouts) == 4 and [r.group for r in rollouts] == [0, 0, 1, 1] and [r.index for r in rollouts] == [0, 1, 2, 3]
    assert rollouts[0].session.opening == rollouts[1].session.opening  # a group shares the opening
    derived, generated, logprobs_at = Counter(), Counter(), {}
    for r in rollouts:
        (sample,) = r.samples
        ids, mask = sample.input_ids, sample.policy_mask
        assert len(ids) == len(mask) == len(sample.old_logprobs)
        starts = [i for i in range(1, len(mask)) if mask[i] and not mask[i - 1]]
        assert len(starts) == r.session.turn == len(sample.turn_ends)
        for k, start in enumerate(starts):
            end = sample.turn_ends[k] + 1
            derived[tuple(ids[:start])] += 1  # the ids the policy saw at turn k ...
            generated[tuple(ids[start:end])] += 1  # ... and what it wrote then
            logprobs_at[tuple(ids[start:end])] = sample.old_logprobs[start:end]
            next_start = starts[k + 1] if k + 1 < len(starts) else len(ids)
            assert all(mask[start:end]) and not any(mask[end:next_start])
    # ... are exactly the prompts the real generate calls were given, and the masked
    # tokens exactly what it returned, with the log-probs it returned.
    assert derived == Counter(p for p, _ in calls)
    assert generated == Counter(tuple(g.ids) for _, g in calls)
    assert all(logprobs_at[tuple(g.ids)] == g.logprobs for _, g in calls)
    # The recorded log-probs are the policy's: a fresh forward pass agrees.
    samples = [r.samples[0] for r in rollouts]
    batch = rc.collate(samples, tokenizer.pad_token_id, torch.device("cpu"))
    with torch.no_grad():
        logp, _ = rc.token_logprobs(tiny_model, batch, 1.0)
    assert float(((logp - batch["old_logprobs"]).abs() * batch["mask"]).max()) < 1e-4
    assert int(batch["mask"].sum()) == sum(s.num_policy_tokens for s in samples)


def test_scripted_rollout_matches_the_template_exactly(tokenizer, personas, monkeypatch):
    chat = rc.ChatTokens(tokenizer)
    fake, reply_ids = scripted_generate(tokenizer, "That sounds really hard. What happened?")
    monkeypatch.setattr(rc, "generate", fake)
    (r,) = play(None, tokenizer, personas[:1], group_size=1, seed=1)
    (s,) = r.samples
    messages = r.session.messages
    if messages[-1]["role"] == "user":  # the last user answer is not part of the trajectory
        messages = messages[:-1]
    assert tokenizer.decode(s.input_ids) == chat.render(messages, generation_prompt=False)
    policy_ids = [t for t, m in zip(s.input_ids, s.policy_mask) if m]
    assert policy_ids == reply_ids * r.session.turn
    assert [lp for lp, m in zip(s.old_logprobs, s.policy_mask) if m] == [-0.5] * len(policy_ids)


def test_think_turns_are_separate_samples_without_earlier_thoughts(tokenizer, personas, monkeypatch):
    fake, reply_ids = scripted_generate(tokenizer, "<think>SECRET-PLAN</think>I hear you, that sounds heavy.")
    monkeypatch.setattr(rc, "generate", fake)
    rollouts = play(None, tokenizer, personas[:1], group_size=2, seed=2, think=True)
    for r in rollouts:
        assert len(r.samples) == r.session.turn >= 2
        for k, s in enumerate(r.samples):
            prompt = tokenizer.decode([t for t, m in zip(s.input_ids, s.policy_mask) if not m])
            assert "SECRET-PLAN" not in prompt  # only replies enter later context
            assert prompt.count("I hear you, that sounds heavy.") == k
            assert [t for t, m in zip(s.input_ids, s.policy_mask) if m] == reply_ids
        assert all(t.format_ok for t in r.session.turns)
        assert r.session.turns[0].thought == "SECRET-PLAN"
    advantages = train_grpo.group_advantages([0.2, 0.6], [0, 0])
    train_grpo.assign_advantages(rollouts, advantages)
    for r, adv in zip(rollouts, advantages):
        for s in r.samples:  # every turn sample carries the episode's advantage
            assert [a for a, m in zip(s.advantages, s.policy_mask) if m] == pytest.approx([adv] * s.num_policy_tokens)
            assert {a for a, m in zip(s.advantages, s.policy_mask) if not m} == {0.0}
    assert advantages == pytest.approx([-1.0, 1.0], abs=1e-4)


class FailingSimulator:
    """The rule simulator's opening, then a failure on the second reply."""

    def __init__(self):
        self.rule = rc.make_simulator("rule")

    async def open(self, persona, rng):
        return await self.rule.open(persona, rng)

    async def appraise(self, persona, mood, history, reply, *, rules, rng):
        if len(history) > 1:
            raise SimulatorError("appraisal unparseable", raw_outputs=("???",))
        return await self.rule.appraise(persona, mood, history, reply, rules=rules, rng=rng)

    async def respond(self, persona, history, reply, appraisal, *, mood, rng):
        return await self.rule.respond(persona, history, reply, appraisal, mood=mood, rng=rng)

    def identity(self):
        return {"name": "failing"}


def test_simulator_failure_ends_the_rollout_cleanly(tokenizer, personas, monkeypatch):
    fake, reply_ids = scripted_generate(tokenizer, "That sounds hard.")
    monkeypatch.setattr(rc, "generate", fake)
    (r,) = play(None, tokenizer, personas[:1], group_size=1, seed=3, simulator=FailingSimulator(), max_turns=4)
    assert r.session.terminal_reason == "simulator_error" and r.session.turn == 2
    assert r.reward == 0.0 and len(r.turn_rewards) == 2
    (s,) = r.samples
    assert [t for t, m in zip(s.input_ids, s.policy_mask) if m] == reply_ids * 2
    assert tokenizer.decode(s.input_ids).endswith("That sounds hard.<|im_end|>\n")  # no invented user turn


class FailingOpener(FailingSimulator):
    """Cannot open a dialogue with the first persona."""

    def __init__(self, persona_id):
        super().__init__()
        self.persona_id = persona_id

    async def open(self, persona, rng):
        if persona.id == self.persona_id:
            raise SimulatorError("backend down")
        return await self.rule.open(persona, rng)


def test_a_failed_opening_is_logged_not_a_crash_of_the_training_step(tokenizer, personas, monkeypatch):
    fake, _ = scripted_generate(tokenizer, "That sounds hard.")
    monkeypatch.setattr(rc, "generate", fake)
    rollouts = play(None, tokenizer, personas, group_size=2, seed=4, simulator=FailingOpener(personas[0].id), max_turns=1)
    failed, played = rollouts[:2], rollouts[2:]
    assert all(r.session.terminal_reason == "simulator_error" and not r.samples and r.session.turn == 0 for r in failed)
    assert all(r.session.done and r.session.terminal_reason != "simulator_error" and r.samples for r in played)
    assert rc.dialogue_metrics(rollouts)["simulator_errors"] == 2


# --------------------------------------------------------------------------------------
# RL maths against hand-computed values
# --------------------------------------------------------------------------------------
def test_group_advantages():
    adv = train_grpo.group_advantages([0.2, 0.4, 0.6, 0.6], [0, 0, 1, 1])
    assert adv == pytest.approx([-1.0, 1.0, 0.0, 0.0], abs=1e-4)
    raw = train_grpo.group_advantages([0.2, 0.4, 0.6, 0.6], [0, 0, 1, 1], scale=False)
    assert raw == pytest.approx([-0.1, 0.1, 0.0, 0.0])
    three = train_grpo.group_advantages([0.0, 0.3, 0.9], [5, 5, 5], scale=False)
    assert three == pytest.approx([-0.4, -0.1, 0.5])


def test_gae_hand_computed():
    adv, ret = train_ppo.gae([0.0, 0.0, 1.0], [0.5, 0.6, 0.7], gamma=1.0, lam=1.0)
    assert adv == pytest.approx([0.5, 0.4, 0.3]) and ret == pytest.approx([1.0, 1.0, 1.0])
    adv, ret = train_ppo.gae([0.0, 0.0, 1.0], [0.5, 0.6, 0.7], gamma=0.9, lam=0.5)
    # delta = [0.9*0.6-0.5, 0.9*0.7-0.6, 1-0.7] = [0.04, 0.03, 0.3]; A_t = delta_t + 0.45 A_{t+1}
    assert adv == pytest.approx([0.04 + 0.45 * 0.165, 0.165, 0.3])
    assert ret == pytest.approx(np.array([0.11425, 0.165, 0.3]) + [0.5, 0.6, 0.7])


def test_assign_gae_puts_turn_rewards_on_last_policy_tokens():
    s = rc.Sample(episode=0)
    s.extend([1, 2], policy=False)
    s.extend([3, 4], policy=True, logprobs=[0.0, 0.0])
    s.turn_ends.append(3)
    s.extend([5], policy=False)
    s.extend([6], policy=True, logprobs=[0.0])
    s.turn_ends.append(5)
    s.old_values = [0, 0, 0.1, 0.2, 0, 0.3]
    r = SimpleNamespace(samples=[s], turn_rewards=[0.05, 0.5])  # dense shaping, then terminal
    train_ppo.assign_gae([r], gamma=1.0, lam=1.0)
    # policy tokens 2, 3, 5 with rewards [0, 0.05, 0.5]: returns-to-go [0.55, 0.55, 0.5]
    assert s.returns == pytest.approx([0, 0, 0.55, 0.55, 0, 0.5])
    assert s.advantages == pytest.approx([0, 0, 0.45, 0.35, 0, 0.2])


TRAINERS = pytest.mark.parametrize("trainer", [train_grpo, train_ppo], ids=["grpo", "ppo"])  # each holds its own copy


@TRAINERS
def test_ppo_clip_loss_hand_computed(trainer):
    logp = torch.tensor([[0.5, -0.5, 0.5, 3.0]])
    old = torch.zeros(1, 4)
    adv = torch.tensor([[1.0, 1.0, -1.0, 5.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0]])
    loss, clip_fraction = trainer.ppo_clip_loss(logp, old, adv, mask, clip_eps=0.2)
    # token 1: min(1.6487, 1.2) = 1.2; token 2: min(0.6065, 0.8); token 3: min(-1.6487, -1.2)
    expected = -(1.2 + math.exp(-0.5) - math.exp(0.5)) / 3
    assert float(loss) == pytest.approx(expected, rel=1e-5)
    assert float(clip_fraction) == pytest.approx(1 / 3)
    # A whole-batch normaliser (gradient accumulation) divides the same sum by it.
    loss10, _ = trainer.ppo_clip_loss(logp, old, adv, mask, clip_eps=0.2, normalizer=10)
    assert float(loss10) == pytest.approx(expected * 3 / 10, rel=1e-5)


@TRAINERS
def test_micro_batches_with_global_normaliser_equal_the_full_batch_token_mean(trainer):
    g = torch.Generator().manual_seed(0)
    logp = torch.randn(4, 6, generator=g, requires_grad=True)
    old, adv = torch.randn(4, 6, generator=g) * 0.1, torch.randn(4, 6, generator=g)
    mask = (torch.rand(4, 6, generator=g) > 0.3).float()
    full, _ = trainer.ppo_clip_loss(logp, old, adv, mask, clip_eps=0.2)
    n = float(mask.sum())
    parts = sum(trainer.ppo_clip_loss(logp[i : i + 2], old[i : i + 2], adv[i : i + 2], mask[i : i + 2], clip_eps=0.2, normalizer=n)[0] for i in (0, 2))
    assert parts.item() == pytest.approx(full.item(), rel=1e-6)


@TRAINERS
def test_k3_kl_hand_computed(trainer):
    kl = trainer.k3_kl(torch.log(torch.tensor([0.5, 0.3])), torch.log(torch.tensor([0.25, 0.3])))
    assert kl.tolist() == pytest.approx([0.5 - math.log(0.5) - 1, 0.0], abs=1e-6)


def test_value_loss_hand_computed():
    loss = train_ppo.clipped_value_loss(torch.tensor([0.5, 1.0]), torch.tensor([0.4, 0.4]), torch.tensor([1.0, 0.0]),
                                 torch.tensor([1.0, 1.0]), clip=0.2)
    assert float(loss) == pytest.approx(0.5 * (0.25 + 1.0) / 2)  # token 2: max(1.0, 0.6**2)


def test_bootstrap_ci_brackets_the_mean_difference():
    point, low, high = rc.bootstrap_ci([0.1, 0.2, 0.3, 0.2], [0.3, 0.4, 0.5, 0.4])
    assert point == pytest.approx(0.2) and low == pytest.approx(0.2) and high == pytest.approx(0.2)
    point, low, high = rc.bootstrap_ci([0.0] * 20, list(np.linspace(-0.1, 0.3, 20)))
    assert low < point < high and point == pytest.approx(0.1)


# --------------------------------------------------------------------------------------
# the trainers, for real (cpu-tiny)
# --------------------------------------------------------------------------------------
TRAIN_KEYS = {"reward", "mood", "turns", "kl_old", "entropy", "clip_fraction", "generation_tokens_per_s", "train_tokens_per_s"}


def read_metrics(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


@pytest.fixture(scope="module")
def grpo_two_steps(tmp_path_factory):
    out = tmp_path_factory.mktemp("grpo")
    args = train_grpo.Args(setup="cpu-tiny", total_steps=2, output_dir=str(out), eval_personas=1, save_every=1, device="cpu")
    return out, train_grpo.main(args)


def test_grpo_smoke(grpo_two_steps):
    out, summary = grpo_two_steps
    records = read_metrics(out / "metrics.jsonl")
    train = [r for r in records if "reward" in r]
    assert [r["step"] for r in train] == [1, 2]
    for r in train:
        assert TRAIN_KEYS <= set(r) and all(math.isfinite(r[k]) for k in TRAIN_KEYS)
        assert 0 <= r["reward"] <= 1 and r["policy_tokens"] > 0 and r["entropy"] > 0
    assert [r["step"] for r in records if "eval_reward" in r] == [0, 2]
    assert (out / "reward_curve.png").stat().st_size > 1000
    assert (out / "checkpoint.pt").exists() and (out / "policy" / "config.json").exists()
    assert len(summary["eval_after"]) == 1


@pytest.mark.slow
def test_grpo_resume_continues_from_the_checkpoint(grpo_two_steps, tmp_path):
    reference_out, _ = grpo_two_steps
    train_grpo.main(train_grpo.Args(setup="cpu-tiny", total_steps=1, output_dir=str(tmp_path), eval_personas=1, save_every=1, device="cpu", plot=False))
    assert torch.load(tmp_path / "checkpoint.pt", weights_only=False)["step"] == 1
    train_grpo.main(train_grpo.Args(setup="cpu-tiny", total_steps=2, output_dir=str(tmp_path), eval_personas=1, save_every=1, device="cpu", resume=True, plot=False))
    records = read_metrics(tmp_path / "metrics.jsonl")
    assert [r["step"] for r in records if "reward" in r] == [1, 2]
    resumed = torch.load(tmp_path / "checkpoint.pt", weights_only=False)
    straight = torch.load(reference_out / "checkpoint.pt", weights_only=False)
    assert resumed["step"] == straight["step"] == 2
    # Same seed, restored RNGs and optimizer state: the resumed run lands on the same weights.
    for key, value in straight["modules"]["policy"].items():
        torch.testing.assert_close(resumed["modules"]["policy"][key], value, atol=1e-6, rtol=1e-5)
    straight_train = [r for r in read_metrics(reference_out / "metrics.jsonl") if "reward" in r]
    assert [r["reward"] for r in records if "reward" in r] == [r["reward"] for r in straight_train]


def test_resume_without_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        train_grpo.main(train_grpo.Args(setup="cpu-tiny", total_steps=1, output_dir=str(tmp_path), device="cpu", resume=True))


def test_ppo_smoke(tmp_path):
    args = train_ppo.Args(setup="cpu-tiny", total_steps=2, output_dir=str(tmp_path), eval_personas=1, device="cpu", plot=False)
    train_ppo.main(args)
    train = [r for r in read_metrics(tmp_path / "metrics.jsonl") if "reward" in r]
    assert [r["step"] for r in train] == [1, 2]
    for r in train:
        assert TRAIN_KEYS | {"value_loss"} <= set(r) and all(math.isfinite(r[k]) for k in TRAIN_KEYS)
    state = torch.load(tmp_path / "checkpoint.pt", weights_only=False)
    assert set(state["modules"]) == {"policy", "critic"} and state["step"] == 2
    assert (tmp_path / "critic.pt").exists()


def test_gpu_setup_requires_a_local_model_path():
    with pytest.raises(ValueError, match="needs --model"):
        rc.apply_setup(train_grpo.Args(setup="gpu-7b"))
    with pytest.raises(ValueError, match="unknown setup 'tpu'"):
        rc.apply_setup(train_grpo.Args(setup="tpu"))
