"""EmpathyDialogEnv: the Gymnasium contract and the invariants of DESIGN.md."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dialog_gym
from dialog_gym.agents import BaselineAgent
from dialog_gym.envs import EmpathyDialogEnv, UnicodeText
from dialog_gym.session import parse_think
from dialog_gym.personas import NEED_DESCRIPTIONS, HiddenNeed
from dialog_gym.simulators import Appraisal, RuleSimulator, SimulatorError

REPLY = "That sounds really hard. What happened?"


@pytest.mark.parametrize("env_id", dialog_gym.ENV_IDS)
def test_check_env_passes_for_every_registered_id(env_id):
    env = gym.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_registered_variants():
    variants = ("RLVER-Empathy", "RLVER-Empathy-Challenging", "RLVER-Empathy-SAGE", "RLVER-Empathy-Think")
    assert set(dialog_gym.ENV_IDS) == {f"{name}-v{version}" for name in variants for version in (0, 1, 2)}
    for name in variants:  # each version changed only the judge: every other option is v0's
        v0, v1, v2 = (gym.spec(f"{name}-v{k}").kwargs for k in range(3))
        judges = tuple(spec["config"]["simulator"] for spec in (v0, v1, v2))
        assert judges == ("rule", "calibrated-v1", "calibrated")
        same = [({k: v for k, v in spec["config"].items() if k != "simulator"}, {k: v for k, v in spec.items() if k != "config"})
                for spec in (v0, v1, v2)]
        assert same[0] == same[1] == same[2]
    v2 = gym.make("RLVER-Empathy-v2").unwrapped.simulator
    assert v2.judge.name == "sage-deepseek-v3-v2" and v2.judge.feature_version == 2
    v1 = gym.make("RLVER-Empathy-v1").unwrapped.simulator
    assert v1.judge.name == "sage-deepseek-v3" and v1.judge.feature_version == 1
    sage = gym.make("RLVER-Empathy-SAGE-v1").unwrapped
    assert sage.rules.name == "sage" and {p.split for p in sage.personas} == {"test"}
    challenging = gym.make("RLVER-Empathy-Challenging-v1").unwrapped
    assert challenging.simulator.style == "challenging"


def test_quick_start_from_the_issue():
    env = gym.make("RLVER-Empathy-v1")
    obs, info = env.reset(seed=0)
    assert isinstance(obs, str) and obs
    assert info["mood"] == 30 and info["turn"] == 0 and info["terminal_reason"] is None
    assert info["messages"][0]["role"] == "system" and info["messages"][1] == {"role": "user", "content": obs}
    obs, reward, terminated, truncated, info = env.step(REPLY)
    assert isinstance(obs, str) and isinstance(reward, float)
    assert info["mood"] == 30 + info["emotion_delta"]
    assert info["messages"][-2:] == [{"role": "assistant", "content": REPLY}, {"role": "user", "content": obs}]
    assert set(info) >= {"messages", "emotion_delta", "mood", "mood_bucket", "turn", "terminal_reason", "format_ok", "privileged"}


def _play(env, agent, seed, options=None):
    obs, info = env.reset(seed=seed, options=options)
    steps = [(obs, 0.0, False, False, info)]
    while not (steps[-1][2] or steps[-1][3]):
        steps.append(env.step(agent(steps[-1][4]["messages"])))
    return steps


def test_same_seed_same_episode_and_different_seeds_differ():
    agent = BaselineAgent()
    env_a, env_b = gym.make("RLVER-Empathy-v1"), gym.make("RLVER-Empathy-v1")
    a, b = _play(env_a, agent, 11), _play(env_b, agent, 11)
    assert [s[:4] for s in a] == [s[:4] for s in b]
    assert [s[4]["messages"] for s in a] == [s[4]["messages"] for s in b]
    personas = {_play(env_a, agent, seed)[0][4]["persona_id"] for seed in range(12)}
    assert len(personas) > 3


def test_reward_only_at_the_end_and_equal_to_final_mood():
    env = gym.make("RLVER-Empathy-v1")
    for seed in range(6):
        steps = _play(env, BaselineAgent(), seed)
        assert all(s[1] == 0.0 for s in steps[:-1])
        last = steps[-1]
        assert last[2] and last[1] == pytest.approx(max(0, last[4]["mood"]) / 100)
        assert last[4]["terminal_reason"] in {"failure", "goodbye", "max_turns", "success"}


def test_dense_mode_pays_each_change_plus_the_terminal_reward():
    env = gym.make("RLVER-Empathy-v1", reward_mode="dense")
    steps = _play(env, BaselineAgent(), 3)
    assert sum(s[1] for s in steps) == pytest.approx((steps[-1][4]["mood"] - 30) / 100 + steps[-1][4]["mood"] / 100)


def test_step_after_end_and_bad_actions_raise_clear_errors():
    env = gym.make("RLVER-Empathy-v1", disable_env_checker=True)
    with pytest.raises(gym.error.ResetNeeded):
        env.step(REPLY)
    raw = EmpathyDialogEnv()
    with pytest.raises(RuntimeError, match="before reset"):
        raw.step(REPLY)
    _play(env, lambda m: "whatever", 0)
    with pytest.raises(RuntimeError, match="after the episode ended"):
        env.unwrapped.step(REPLY)
    env.reset(seed=0)
    for bad in (None, 3, b"bytes", ["a list"]):
        with pytest.raises(TypeError, match="action must be a str"):
            env.unwrapped.step(bad)


def test_reset_options_choose_a_persona_and_reject_unknown_keys():
    env = EmpathyDialogEnv(split=None)
    target = env.personas[5]
    _, info = env.reset(seed=1, options={"persona_id": target.id})
    assert info["persona_id"] == target.id
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"persona_idx": 3})
    with pytest.raises(KeyError, match="no persona with id"):
        env.reset(options={"persona_id": "nobody"})


def test_constructor_errors_name_the_problem():
    with pytest.raises(ValueError, match="unknown mood preset"):
        EmpathyDialogEnv(rules="fast")
    with pytest.raises(ValueError, match="unknown simulator 'magic'"):
        EmpathyDialogEnv(simulator="magic")
    with pytest.raises(ValueError, match="unknown simulator style"):
        EmpathyDialogEnv(style="rude")
    with pytest.raises(ValueError, match="unknown reward_mode"):
        EmpathyDialogEnv(reward_mode="sparse")
    with pytest.raises(ValueError, match="no personas match"):
        EmpathyDialogEnv(language="fr", split=None)


def test_simulator_instance_is_accepted():
    simulator = RuleSimulator(style="challenging")
    env = gym.make("RLVER-Empathy-v1", simulator=simulator)
    assert env.unwrapped.simulator is simulator


def test_think_then_say():
    assert parse_think("<think>plan</think> Hello there") == ("plan", "Hello there", True)
    assert parse_think("no tags") == (None, "no tags", False)
    assert parse_think("<think>unclosed reply") == (None, "unclosed reply", False)
    assert parse_think("<think>a</think>") == (None, "a", False)  # empty reply
    assert parse_think("<think>a</think>x<think>b</think>y")[2] is False
    env = gym.make("RLVER-Empathy-Think-v1", format_penalty=0.5)
    env.reset(seed=0)
    _, reward, *_, info = env.step("<think>She seems tired; ask gently.</think>That sounds exhausting. What happened?")
    assert info["format_ok"] and info["privileged"]["thought"] == "She seems tired; ask gently."
    assert info["messages"][-2]["content"] == "That sounds exhausting. What happened?"
    assert all("<think>" not in m["content"] and "tired; ask" not in m["content"] for m in info["messages"][1:])
    _, reward, *_, info = env.step("I forgot the tags")
    assert not info["format_ok"] and reward == pytest.approx(-0.5)


class _FailingSimulator(RuleSimulator):
    def __init__(self, fail_at: int):
        super().__init__()
        self.fail_at = fail_at

    async def appraise(self, persona, mood, history, reply, *, rules, rng) -> Appraisal:
        if sum(m["role"] == "assistant" for m in history) + 1 == self.fail_at:
            raise SimulatorError("appraisal unparseable after 3 tries", raw_outputs=["{bad json"])
        return await super().appraise(persona, mood, history, reply, rules=rules, rng=rng)


def test_simulator_failure_truncates_with_error_and_no_invented_reward():
    env = gym.make("RLVER-Empathy-v1", simulator=_FailingSimulator(fail_at=2))
    env.reset(seed=0)
    env.step(REPLY)
    obs, reward, terminated, truncated, info = env.step(REPLY)
    assert (obs, reward, terminated, truncated) == ("", 0.0, False, True)
    assert info["terminal_reason"] == "simulator_error"
    assert "appraisal unparseable" in info["error"]
    session = env.unwrapped.session
    assert session.turns[-1].raw == ("{bad json",) and session.reward == 0.0
    with pytest.raises(RuntimeError, match="simulator_error"):
        env.unwrapped.step(REPLY)


def test_render_modes(capsys):
    env = gym.make("RLVER-Empathy-v1", render_mode="ansi")
    env.reset(seed=0)
    env.step(REPLY)
    text = env.render()
    assert "USER :" in text and f"AGENT: {REPLY}" in text and "mood" in text
    human = gym.make("RLVER-Empathy-v1", render_mode="human")
    human.reset(seed=0)
    human.step(REPLY)
    assert REPLY in capsys.readouterr().out
    with pytest.raises(ValueError, match="render_mode"):
        EmpathyDialogEnv(render_mode="rgb_array")


def test_sync_facade_works_inside_a_running_event_loop():
    import asyncio

    async def inside_a_loop():  # as in a notebook or an async web app
        env = EmpathyDialogEnv()
        obs, _ = env.reset(seed=4)
        step = env.step(REPLY)
        env.close()
        return obs, step[0]

    outside = EmpathyDialogEnv()
    expected = (outside.reset(seed=4)[0], outside.step(REPLY)[0])
    assert asyncio.run(inside_a_loop()) == expected


def test_unicode_text_space():
    space = UnicodeText(10, seed=0)
    assert space.contains("你好 world") and space.contains("") and not space.contains("x" * 11)
    assert not space.contains(b"bytes") and not space.contains(5)
    samples = [space.sample() for _ in range(50)]
    assert all(space.contains(s) for s in samples)
    assert UnicodeText(10, seed=3).sample() == UnicodeText(10, seed=3).sample()


_NEED_TEXTS = [n.value for n in HiddenNeed] + [d for lang in NEED_DESCRIPTIONS.values() for d in lang.values()]

replies = st.one_of(
    st.text(max_size=200),
    st.sampled_from(["", " ", "\n\n", "<think>", "😀" * 50, "x" * 5000, "你" * 3000, "?!" * 100, REPLY]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), actions=st.lists(replies, min_size=1, max_size=10), style=st.sampled_from(["vanilla", "challenging"]), preset=st.sampled_from(["rlver", "sage"]))
def test_invariants_hold_for_arbitrary_replies(seed, actions, style, preset):
    env = EmpathyDialogEnv(style=style, rules=preset, split=None)
    obs, info = env.reset(seed=seed)
    rules = env.rules
    observations = [obs]
    for k, action in enumerate(actions):
        obs, reward, terminated, truncated, info = env.step(action)
        observations.append(obs)
        assert 0 <= info["mood"] <= 100
        assert info["turn"] == k + 1 <= rules.max_turns
        if rules.min_delta is not None:
            assert rules.min_delta <= info["emotion_delta"] <= rules.max_delta
        if terminated:
            assert reward == pytest.approx(info["mood"] / 100)
            break
        assert reward == 0.0
    # What the env says (the agent may type anything, a need's description included).
    visible = "\n".join(observations + [m["content"] for m in info["messages"] if m["role"] == "user"])
    for text in _NEED_TEXTS:
        assert text not in visible
