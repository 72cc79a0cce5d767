"""EmpathyVectorEnv: equivalence with single envs, autoreset modes, partial endings, groups."""

from __future__ import annotations

import asyncio

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import dialog_gym  # noqa: F401  (registers the env ids)
from dialog_gym.envs.empathy import EmpathyDialogEnv
from dialog_gym.envs.vector import EmpathyVectorEnv
from rollout_helpers import InstrumentedSimulator, make_personas, reply_for

N = 6


def make_venv(num_envs: int = N, **kwargs) -> EmpathyVectorEnv:
    kwargs.setdefault("personas", make_personas())
    return EmpathyVectorEnv(num_envs, **kwargs)


def test_make_vec_returns_the_vector_env():
    venv = gym.make_vec("RLVER-Empathy-v1", num_envs=3, vectorization_mode="vector_entry_point")
    try:
        assert isinstance(venv, EmpathyVectorEnv)
        assert venv.num_envs == 3
        assert venv.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
        assert venv.rules.name == "rlver" and venv.simulator.style == "vanilla"
        observations, infos = venv.reset(seed=0)
        assert isinstance(observations, tuple) and len(observations) == 3
        assert all(isinstance(o, str) and o for o in observations)
        assert venv.observation_space.contains(observations)
        assert infos["_messages"].all() and infos["mood"].tolist() == [30, 30, 30]
    finally:
        venv.close()
    # the spec's kwargs and make_vec's kwargs reach the constructor
    venv = gym.make_vec("RLVER-Empathy-SAGE-v1", num_envs=2, autoreset_mode="SameStep", group_size=2)
    try:
        assert isinstance(venv, EmpathyVectorEnv)
        assert venv.rules.name == "sage" and venv.autoreset_mode is AutoresetMode.SAME_STEP and venv.group_size == 2
    finally:
        venv.close()


def play_singles(seed: int, steps: int) -> list[tuple]:
    """N independent single envs seeded seed + i, with Gymnasium's next-step autoreset by hand."""
    envs = [EmpathyDialogEnv(personas=make_personas()) for _ in range(N)]
    trace = []
    observations = [env.reset(seed=seed + i)[0] for i, env in enumerate(envs)]
    ended = [False] * N
    trace.append((tuple(observations),))
    for t in range(steps):
        row = []
        for i, env in enumerate(envs):
            if ended[i]:
                obs, info = env.reset()
                row.append((obs, 0.0, False, False, info["mood"], info["persona_id"], info["turn"]))
                ended[i] = False
            else:
                obs, reward, term, trunc, info = env.step(reply_for(t, i))
                row.append((obs, reward, term, trunc, info["mood"], info["persona_id"], info["turn"]))
                ended[i] = term or trunc
        trace.append(tuple(row))
    return trace


def play_vector(seed: int, steps: int) -> list[tuple]:
    venv = make_venv()
    trace = []
    observations, _ = venv.reset(seed=seed)
    trace.append((observations,))
    for t in range(steps):
        obs, rewards, terms, truncs, infos = venv.step([reply_for(t, i) for i in range(N)])
        trace.append(
            tuple(
                (obs[i], float(rewards[i]), bool(terms[i]), bool(truncs[i]), int(infos["mood"][i]), infos["persona_id"][i], int(infos["turn"][i]))
                for i in range(N)
            )
        )
    venv.close()
    return trace


def test_vector_env_equals_independent_single_envs_with_the_same_seeds():
    steps = 24  # several episodes per sub-env, so next-step autoresets are compared too
    vector, singles = play_vector(7, steps), play_singles(7, steps)
    assert vector == singles
    ended = sum(row[i][2] or row[i][3] for row in vector[1:] for i in range(N))
    assert ended >= N, "the trace should contain many episode endings"
    # a different seed gives a different trace (the comparison is not vacuous)
    assert play_vector(8, 3) != vector[:4]


def test_next_step_autoreset_ignores_the_action_and_restarts():
    sim = InstrumentedSimulator()
    venv = make_venv(2, simulator=sim)
    venv.reset(seed=0)
    # "asdf" gibberish drives the mood to 0 quickly: step until sub-env 0 ends
    for _ in range(8):
        _, rewards, terms, truncs, infos = venv.step(["asdf qwer zxcv !!!", "Tell me more about what happened."])
        if terms[0]:
            break
    assert terms[0] and infos["terminal_reason"][0] is not None
    calls, opens, second_active = sim.appraise_calls, sim.open_calls, not venv.done[1]
    obs, rewards, terms, truncs, infos = venv.step([None, "That sounds hard."])
    assert sim.appraise_calls == calls + int(second_active)  # the ended sub-env is not stepped...
    assert sim.open_calls == opens + 1 + int(not second_active)  # ...but restarted
    assert rewards[0] == 0.0 and not terms[0] and not truncs[0]
    assert infos["turn"][0] == 0 and infos["mood"][0] == venv.rules.start
    assert obs[0] == venv.sessions[0].opening
    venv.close()


def test_same_step_autoreset_reports_the_final_observation():
    venv = make_venv(2, autoreset_mode="SameStep")
    venv.reset(seed=1)
    for _ in range(10):
        obs, rewards, terms, truncs, infos = venv.step(["asdf qwer zxcv !!!"] * 2)
        if terms.any():
            break
    ended = np.flatnonzero(terms)
    assert len(ended) > 0
    i = ended[0]
    assert infos["_final_obs"][i] and isinstance(infos["final_obs"][i], str)
    assert infos["final_info"]["terminal_reason"][i] in ("failure", "goodbye", "max_turns")
    assert infos["turn"][i] == 0 and obs[i] == venv.sessions[i].opening
    assert rewards[i] == pytest.approx(infos["final_info"]["mood"][i] / 100)
    venv.step(["ok"] * 2)  # the restarted sub-env is stepped again right away
    assert venv.sessions[i].turn == 1
    venv.close()


def test_disabled_autoreset_skips_finished_sub_envs():
    sim = InstrumentedSimulator()
    venv = make_venv(4, simulator=sim, autoreset_mode=AutoresetMode.DISABLED)
    venv.reset(seed=2)
    finished_at: dict[int, int] = {}
    for t in range(1, 12):
        # sub-envs 0 and 1 get gibberish (end early), 2 and 3 a decent reply
        actions = [None if venv.done[i] else ("asdf qwer zxcv" if i < 2 else reply_for(t, 0)) for i in range(4)]
        calls = sim.appraise_calls
        active = int((~venv.done).sum())
        obs, rewards, terms, truncs, infos = venv.step(actions)
        assert sim.appraise_calls - calls == active  # finished sub-envs are not stepped
        for i in range(4):
            if i in finished_at:
                assert terms[i] or truncs[i]
                assert rewards[i] == 0.0 and not infos["_mood"][i]  # no info for a skipped sub-env
            elif terms[i] or truncs[i]:
                finished_at[i] = t
        if venv.done.all():
            break
    assert venv.done.all()
    assert len(set(finished_at.values())) > 1, f"episodes should end at different turns: {finished_at}"
    venv.step([None] * 4)  # every sub-env finished: nothing is stepped, nothing raises
    assert sim.appraise_calls == calls + active
    # reset only two of them
    mask = np.array([True, False, True, False])
    obs, infos = venv.reset(options={"reset_mask": mask})
    assert infos["_turn"].tolist() == mask.tolist()
    assert venv.done.tolist() == [False, True, False, True]
    venv.close()


def test_all_simulator_calls_of_a_step_run_concurrently():
    sim = InstrumentedSimulator(latency_s=0.05)
    venv = make_venv(32, simulator=sim)
    venv.reset(seed=0)
    venv.step(["Tell me more about it."] * 32)
    assert sim.max_in_flight == 32
    venv.close()


def test_group_reset_shares_persona_opening_and_generator():
    venv = make_venv(6)
    obs, infos = venv.reset(seed=3, options={"group_size": 3, "persona_ids": ["t-en-listen", "t-zh-praise"]})
    assert list(infos["persona_id"]) == ["t-en-listen"] * 3 + ["t-zh-praise"] * 3
    assert obs[0] == obs[1] == obs[2] and obs[3] == obs[4] == obs[5]
    traces = []
    for t in range(8):
        obs, rewards, terms, truncs, infos = venv.step([reply_for(t, 0)] * 6 if t % 2 else [reply_for(t, 1)] * 6)
        traces.append((obs, rewards.tolist(), infos["mood"].tolist()))
        if terms.any() or truncs.any():
            break
    for obs, rewards, moods in traces:
        assert obs[0] == obs[1] == obs[2] and moods[0] == moods[1] == moods[2]  # same replies, same episode
    # members equal a single env seeded like the group's leader
    single = EmpathyDialogEnv(personas=make_personas())
    first, _ = single.reset(seed=3 + 3, options={"persona_id": "t-zh-praise"})
    assert first == venv.sessions[4].opening
    venv.close()
    # the constructor's group_size applies to every full reset
    venv = make_venv(4, group_size=2)
    obs, infos = venv.reset(seed=0)
    assert obs[0] == obs[1] and infos["persona_id"][0] == infos["persona_id"][1]
    venv.close()


def test_simulator_error_truncates_only_that_sub_env():
    sim = InstrumentedSimulator(fail_on={"t-en-advice": 1})
    venv = make_venv(3, simulator=sim)
    venv.reset(seed=0, options={"persona_ids": ["t-en-advice", "t-en-listen", "t-en-advice"]})
    obs, rewards, terms, truncs, infos = venv.step(["Tell me more."] * 3)
    assert truncs.tolist() == [True, False, True] and not terms.any()
    assert infos["terminal_reason"][0] == "simulator_error" and "scripted failure" in infos["error"][0]
    assert infos["terminal_reason"][1] is None
    venv.close()


def test_argument_errors_are_clear():
    venv = make_venv(2)
    with pytest.raises(RuntimeError, match="before reset"):
        venv.step(["a", "b"])
    venv.reset(seed=0)
    with pytest.raises(ValueError, match="expected 2 actions"):
        venv.step(["a"])
    with pytest.raises(TypeError, match=r"actions\[1\] must be a str"):
        venv.step(["a", 3])
    with pytest.raises(TypeError, match="sequence"):
        venv.step("ab")
    with pytest.raises(ValueError, match="unknown reset option"):
        venv.reset(options={"persona": "x"})
    with pytest.raises(ValueError, match="does not divide"):
        venv.reset(options={"group_size": 3})
    with pytest.raises(KeyError, match="nope"):
        venv.reset(options={"persona_ids": ["nope", "nope"]})
    with pytest.raises(ValueError, match="num_envs"):
        venv.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match="num_envs"):
        EmpathyVectorEnv(0, personas=make_personas())
    venv.close()


def test_async_core_runs_inside_a_running_loop():
    async def main():
        venv = make_venv(3)
        obs, _ = await venv.areset(seed=0)
        obs2, rewards, *_ = await venv.astep(["I'm here for you."] * 3)
        # the sync facade also works from inside a loop (private loop thread)
        venv.step(["Tell me more."] * 3)
        venv.close()
        return obs, obs2

    obs, obs2 = asyncio.run(main())
    assert len(obs) == len(obs2) == 3


def test_render_ansi_returns_one_transcript_per_sub_env():
    venv = make_venv(2, render_mode="ansi")
    venv.reset(seed=0)
    venv.step(["That sounds hard."] * 2)
    frames = venv.render()
    assert len(frames) == 2 and all("AGENT: That sounds hard." in f for f in frames)
    venv.close()


def test_llm_simulator_calls_of_a_step_are_concurrent_over_http():
    pytest.importorskip("openai", reason="the LLM simulator needs the openai client")
    from dialog_gym.testing import ScriptedOpenAIServer

    with ScriptedOpenAIServer(latency_s=0.05) as server:
        venv = make_venv(16, simulator="openai", simulator_options={"model": "scripted", "base_url": server.base_url},
                         autoreset_mode="Disabled")
        observations, infos = venv.reset(seed=0)
        assert server.stats()["kinds"].get("open") == 16 and server.stats()["max_in_flight"] == 16
        steps = 0
        while not venv.done.all():
            venv.step([None if done else "That sounds hard. What happened then?" for done in venv.done])
            steps += 1
        stats = server.stats()
        venv.close()
    assert steps <= venv.rules.max_turns
    assert stats["max_in_flight"] == 16  # every sub-env's appraisal in flight at once
    assert stats["kinds"]["appraise"] == stats["kinds"]["respond"] == sum(s.turn for s in venv.sessions)
    assert all(s.terminal_reason in ("max_turns", "goodbye", "success", "failure") for s in venv.sessions)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_a_failed_opening_truncates_the_sub_env_and_the_next_step_resets_it(mode):
    sim = InstrumentedSimulator(fail_open=frozenset({"t-en-advice"}))
    venv = make_venv(3, simulator=sim, autoreset_mode=mode)
    observations, infos = venv.reset(seed=0, options={"persona_ids": ["t-en-advice", "t-en-listen", "t-en-fault"]})
    assert observations[0] == "" and observations[1] and observations[2]
    assert infos["terminal_reason"][0] == "simulator_error" and "opening failed" in infos["error"][0]
    assert venv.done.tolist() == [True, False, False]
    sim.fail_open = frozenset()  # the backend is back
    observations, rewards, terminations, truncations, infos = venv.step([None, reply_for(0, 1), reply_for(0, 2)])
    assert infos["turn"][1] == infos["turn"][2] == 1
    if mode is AutoresetMode.DISABLED:  # waits for reset(), reporting its truncation
        assert observations[0] == "" and truncations[0] and not infos["_turn"][0]
        return
    assert observations[0] and rewards[0] == 0.0 and not (terminations[0] or truncations[0])
    assert infos["turn"][0] == 0 and infos["terminal_reason"][0] is None
    assert not venv.done.any()
