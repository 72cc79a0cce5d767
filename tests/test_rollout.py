"""The rollout engine: grouping, seeding, batching, no lock-step, concurrency caps, cancellation."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import replace

import pytest

from dialog_gym.envs.empathy import EmpathyDialogEnv
from dialog_gym.episodes import Episode
from dialog_gym.personas import PersonaSet
from dialog_gym.rollouts import AgentRequest, PerRequestAgent, arollout, as_agent, rollout
from rollout_helpers import InstrumentedSimulator, make_personas, reply_for


def scripted_agent(messages):
    """Deterministic per-request agent: the reply depends on the turn and the last message."""
    turn = sum(1 for m in messages if m["role"] == "assistant")
    return reply_for(turn, len(messages[-1]["content"]) % 3)


def comparable(episode: Episode) -> dict:
    data = episode.to_dict()
    data.pop("created_at")
    return data


def test_groups_share_persona_opening_and_seed():
    sim = InstrumentedSimulator()
    episodes = rollout(scripted_agent, n_episodes=12, group_size=3, personas=make_personas(), simulator=sim, seed=5, progress=False)
    assert len(episodes) == 12
    assert len({e.episode_id for e in episodes}) == 12
    assert sim.open_calls == 4  # one opening per group
    for g in range(4):
        group = [e for e in episodes if e.group_id == g]
        assert len(group) == 3
        assert len({e.persona_id for e in group}) == 1
        assert len({e.opening for e in group}) == 1
        assert {e.seed for e in group} == {5 + g}
        # same deterministic agent, same generator state: identical dialogues
        assert len({tuple(m["content"] for m in e.messages) for e in group}) == 1
    assert all(e.terminal_reason is not None and e.agent == {"name": "scripted_agent"} for e in episodes)
    # a PersonaSet with n_episodes: shuffled passes, every persona once before any twice
    assert len({e.persona_id for e in episodes[::3]}) == 4


def test_rollout_is_deterministic_and_matches_the_single_env():
    kwargs = dict(n_episodes=8, personas=make_personas(), progress=False)
    first, again = rollout(scripted_agent, seed=1, **kwargs), rollout(scripted_agent, seed=1, **kwargs)
    assert [comparable(e) for e in first] == [comparable(e) for e in again]
    other = rollout(scripted_agent, seed=2, **kwargs)
    assert [comparable(e) for e in other] != [comparable(e) for e in first]
    # each episode is the single env's episode for (seed, persona) with the same replies
    env = EmpathyDialogEnv(personas=make_personas())
    for episode in first:
        obs, info = env.reset(seed=episode.seed, options={"persona_id": episode.persona_id})
        assert obs == episode.opening
        for turn in episode.turns:
            obs, reward, terminated, truncated, info = env.step(turn["action"])
            assert (obs, info["mood"]) == (turn["user_reply"], turn["mood"])
        assert terminated or truncated
        assert (reward, info["terminal_reason"]) == (episode.reward, episode.terminal_reason)


def test_each_persona_once_and_explicit_persona_lists():
    personas = make_personas()
    episodes = rollout(scripted_agent, personas=personas, group_size=2, progress=False)
    assert [e.persona_id for e in episodes] == [p for p in personas.ids for _ in range(2)]
    ids = ["t-en-fault", "t-zh-praise"]
    episodes = rollout(scripted_agent, personas=[personas.get(i) for i in ids], n_episodes=4, progress=False)
    assert [e.persona_id for e in episodes] == ids * 2
    with pytest.raises(ValueError, match="multiple of group_size"):
        rollout(scripted_agent, personas=personas, n_episodes=5, group_size=2, progress=False)


def test_no_lock_step_a_slow_episode_does_not_hold_up_the_others():
    """One dialogue's agent takes 0.6 s per reply, the other's none: the fast one finishes
    all its turns while the slow one is still on its first."""
    events: list[tuple[str, str]] = []
    personas = make_personas()
    slow = replace(personas.get("t-en-advice"), opening_line="The plant closed after twelve years.")
    personas = PersonaSet([slow, personas.get("t-en-listen")])

    async def agent(messages):
        kind = "slow" if messages[1]["content"] == slow.opening_line else "fast"
        events.append(("ask", kind))
        await asyncio.sleep(0.6 if kind == "slow" else 0.0)
        return "Tell me more about what happened."

    def on_episode(episode):
        events.append(("done", "slow" if episode.persona_id == slow.id else "fast"))

    rollout(agent, personas=personas, simulator=InstrumentedSimulator(latency_s=0.01), on_episode=on_episode, progress=False)
    fast_done = events.index(("done", "fast"))
    assert events[:fast_done].count(("ask", "fast")) >= 2
    assert events[:fast_done].count(("ask", "slow")) <= 1, events


def test_batched_agent_requests_are_coalesced_and_capped():
    class Batched:
        batched = True

        def __init__(self):
            self.sizes: list[int] = []
            self.turns: set[int] = set()

        async def __call__(self, requests: list[AgentRequest]) -> list[str]:
            self.sizes.append(len(requests))
            self.turns.update(r.turn for r in requests)
            assert all(r.messages[0]["role"] == "system" and r.messages[-1]["role"] == "user" for r in requests)
            return [scripted_agent(r.messages) for r in requests]

    sim = InstrumentedSimulator(latency_s=0.01)
    agent = Batched()
    episodes = rollout(agent, n_episodes=16, personas=make_personas(), simulator=sim, progress=False)
    assert len(episodes) == 16
    assert max(agent.sizes) == 16  # every first turn in one batch
    assert sum(agent.sizes) == sum(e.num_turns for e in episodes)
    assert min(agent.turns) == 1

    agent = Batched()
    rollout(agent, n_episodes=16, personas=make_personas(), simulator=sim, max_batch_size=5, progress=False)
    assert max(agent.sizes) == 5

    # the same agent per request gives the same episodes
    per_request = rollout(scripted_agent, n_episodes=16, personas=make_personas(), progress=False)
    batched = rollout(Batched(), n_episodes=16, personas=make_personas(), progress=False)
    assert [comparable(e)["messages"] for e in per_request] == [comparable(e)["messages"] for e in batched]


def test_concurrent_episodes_are_capped():
    sim = InstrumentedSimulator(latency_s=0.02)
    rollout(scripted_agent, n_episodes=12, personas=make_personas(), simulator=sim, max_concurrent_episodes=3, progress=False)
    assert sim.max_in_flight == 3
    sim = InstrumentedSimulator(latency_s=0.02)
    rollout(scripted_agent, n_episodes=12, personas=make_personas(), simulator=sim, progress=False)
    assert sim.max_in_flight == 12


def test_simulator_errors_are_recorded_and_the_run_goes_on():
    sim = InstrumentedSimulator(fail_on={"t-en-listen": 2})
    episodes = rollout(scripted_agent, personas=make_personas(), simulator=sim, progress=False)
    failed = [e for e in episodes if e.terminal_reason == "simulator_error"]
    assert [e.persona_id for e in failed] == ["t-en-listen"]
    assert failed[0].reward == 0.0 and "scripted failure" in failed[0].error and failed[0].num_turns == 2
    assert len(episodes) == len(make_personas())
    # a failed opening line is recorded too (for every member of the group), never invented
    sim = InstrumentedSimulator(fail_open=frozenset({"t-zh-praise"}))
    episodes = rollout(scripted_agent, personas=make_personas(), group_size=2, simulator=sim, progress=False)
    failed = [e for e in episodes if e.terminal_reason == "simulator_error"]
    assert [e.persona_id for e in failed] == ["t-zh-praise"] * 2
    assert all(e.num_turns == 0 and e.reward == 0.0 and "opening failed" in e.error for e in failed)


def test_agent_exception_cancels_everything_and_keeps_finished_episodes():
    sim = InstrumentedSimulator(latency_s=0.005)
    finished: list[Episode] = []
    calls = 0

    async def flaky(messages):
        nonlocal calls
        calls += 1
        if calls == 25:
            raise RuntimeError("agent backend exploded")
        await asyncio.sleep(0.001)
        return scripted_agent(messages)

    async def main():
        with pytest.raises(RuntimeError, match="exploded"):
            await arollout(flaky, n_episodes=30, personas=make_personas(), simulator=sim, max_concurrent_episodes=4, on_episode=finished.append, progress=False)
        return asyncio.all_tasks()

    remaining = asyncio.run(main())
    assert len(remaining) == 1  # only main() itself: no stray episode, batch or opening task
    assert sim.in_flight == 0
    assert 0 < len(finished) < 30
    assert all(e.terminal_reason is not None and e.num_turns >= 1 for e in finished)


@pytest.mark.parametrize("batched", [False, True])
def test_keyboard_interrupt_leaves_nothing_running(batched):
    sim = InstrumentedSimulator(latency_s=0.01)
    finished: list[Episode] = []
    threads_before = threading.active_count()
    calls = 0

    def interrupting(messages):
        nonlocal calls
        calls += 1
        if calls == 80:  # 8 episodes run at once, each of 4-8 turns: some have ended, most not
            raise KeyboardInterrupt
        return scripted_agent(messages)

    agent = interrupting
    if batched:
        class Batched:
            batched = True

            async def __call__(self, requests):
                return [interrupting(r.messages) for r in requests]

        agent = Batched()
    with pytest.raises(KeyboardInterrupt):
        rollout(agent, n_episodes=40, personas=make_personas(), simulator=sim, max_concurrent_episodes=8, on_episode=finished.append, progress=True)
    assert sim.in_flight == 0  # no simulator call is left running
    if not batched:  # (a batch leaves when every episode waits for it: no reaction was pending then)
        assert sim.cancelled > 0  # the other episodes' reactions were cancelled, not abandoned
    assert 0 < len(finished) < 40
    assert all(e.terminal_reason is not None for e in finished)
    deadline = time.monotonic() + 2
    while threading.active_count() > threads_before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert threading.active_count() == threads_before  # the progress bar's thread stopped too


def test_as_agent_and_bad_replies():
    assert isinstance(as_agent(scripted_agent), PerRequestAgent)

    class Batched:
        batched = True

        async def __call__(self, requests):
            return ["only one"]

    assert as_agent(Batched()).batched
    with pytest.raises(TypeError, match="callable"):
        as_agent(42)
    with pytest.raises(ValueError, match="returned 1 replies for 2 requests"):
        rollout(Batched(), n_episodes=2, personas=make_personas(), progress=False)
    with pytest.raises(TypeError, match="must be a str"):
        rollout(lambda messages: None, n_episodes=1, personas=make_personas(), progress=False)


def test_rollout_from_inside_a_running_loop_and_with_bundled_personas():
    async def main():
        return rollout(scripted_agent, n_episodes=4, split="train", progress=False)

    episodes = asyncio.run(main())
    assert len(episodes) == 4 and all(e.turns for e in episodes)


def test_rollout_with_the_llm_simulator_over_http():
    pytest.importorskip("openai", reason="the LLM simulator needs the openai client")
    from dialog_gym.testing import ScriptedOpenAIServer

    async def agent(messages):
        return "That sounds hard. What happened then?"

    with ScriptedOpenAIServer(latency_s=0.02) as server:
        episodes = rollout(agent, n_episodes=12, group_size=2, personas=make_personas(), simulator="openai",
                           simulator_options={"model": "scripted", "base_url": server.base_url}, progress=False)
        stats = server.stats()
    assert len(episodes) == 12
    assert stats["kinds"]["open"] == 6  # one opening per group
    assert stats["max_in_flight"] >= 6
    assert stats["kinds"]["appraise"] == sum(e.num_turns for e in episodes)
    assert all(e.simulator["simulator"] == "llm" and e.terminal_reason != "simulator_error" for e in episodes)
    for g in range(6):
        assert len({e.opening for e in episodes if e.group_id == g}) == 1
