"""The PettingZoo env `dialog_gym.multiagent.empathy_v0`: supporter and seeker as two agents."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip("pettingzoo", reason="the multi-agent env needs pettingzoo (dialog-gym[multiagent])")

from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

from dialog_gym.agents import BaselineAgent
from dialog_gym.envs import EmpathyDialogEnv
from dialog_gym.multiagent import SeekerVoice, empathy_v0, persona_card
from dialog_gym.personas import NEED_DESCRIPTIONS, CharacterType, HiddenNeed, Persona, PersonaSet
from dialog_gym.personas.persona import Profile, Scene
from dialog_gym.simulators import Appraisal, Response, RuleSimulator, SimulatorError, make_simulator

ROOT = Path(__file__).resolve().parents[1]
REPLY = "That sounds exhausting, carrying the ward on your own. What happened after the double shift?"


def _persona(pid: str, need: HiddenNeed, kind: CharacterType, *, language: str = "en", opening: str | None = None) -> Persona:
    if language == "zh":
        profile = Profile(name="林晓", traits=("要强", "敏感"), age=31, occupation="护士", speaking_style="说话快")
        scene = Scene(event="连续顶了三个夜班，护士长却在晨会上点名批评她交接不清。", current_state="又累又委屈。")
        keywords, disclosures = ("夜班", "交接"), ("那天病房里来了四个急诊。", "我交接本写得清清楚楚。")
    else:
        profile = Profile(name="Dana Reyes", traits=("proud", "tired"), age=34, occupation="ward nurse", speaking_style="clipped")
        scene = Scene(
            event="Dana covered three night shifts in a row and was still criticised in the morning meeting for a handover.",
            stages=("She stayed two hours late to finish the charts.",),
            current_state="Exhausted and stung.",
        )
        keywords = ("night shifts", "handover")
        disclosures = ("We had four admissions that night.", "My handover notes were complete, I checked twice.")
    return Persona(
        id=pid, language=language, split="train", hidden_need=need, character_type=kind, profile=profile,
        scene=scene, keywords=keywords, disclosures=disclosures, opening_line=opening,
    )


PERSONAS = PersonaSet(
    [
        _persona("ma-fault", HiddenNeed.NOT_AT_FAULT, CharacterType.NEGATIVE, opening="I got chewed out at work today and I'm still fuming."),
        _persona("ma-listen", HiddenNeed.ATTENTIVE_LISTENING, CharacterType.PASSIVE),
        _persona("ma-zh", HiddenNeed.DEEP_EMPATHY, CharacterType.AVOIDANT, language="zh", opening="今天又被点名了，算了，不说了也行。"),
    ]
)
NEED_TEXTS = [need.value for need in HiddenNeed] + [d for lang in NEED_DESCRIPTIONS.values() for d in lang.values()]


def make_env(**kwargs):
    """The AEC env on the test personas, the judge's reference replies on (for `echo_seeker`)."""
    kwargs.setdefault("personas", PERSONAS)
    kwargs.setdefault("split", None)
    if kwargs.get("seeker", "policy") == "policy":
        kwargs.setdefault("reference_replies", True)
    return empathy_v0.env(**kwargs)


def make_parallel(**kwargs):
    kwargs.setdefault("personas", PERSONAS)
    kwargs.setdefault("split", None)
    if kwargs.get("seeker", "policy") == "policy":
        kwargs.setdefault("reference_replies", True)
    return empathy_v0.parallel_env(**kwargs)


def play_aec(env, policies, *, seed=0, options=None):
    """Run one episode; returns the per-agent reward sums and the final infos."""
    env.reset(seed=seed, options=options)
    totals = {agent: 0.0 for agent in env.agents}
    last_infos = {}
    for agent in env.agent_iter(200):
        obs, reward, terminated, truncated, info = env.last()
        totals[agent] += reward
        last_infos[agent] = info
        env.step(None if terminated or truncated else policies[agent](obs, info))
    return totals, last_infos


def supporter_policy(obs, info):
    return BaselineAgent()(info["messages"])


def echo_seeker(obs, info):
    """Says exactly what the configured simulator would have said."""
    return info["simulator_reply"]


CONFIGS = {
    "both-policies": {},
    "seeker-simulator": {"seeker": "simulator"},
    "supporter-baseline": {"supporter": "baseline"},
    "sage-dense-think": {"rules": "sage", "reward_mode": "dense", "think": True},
}


# -- PettingZoo's own checks ----------------------------------------------------------------
@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
def test_pettingzoo_api_tests_pass(config):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo's style advice (Box spaces, player_0 names)
        api_test(make_env(**config), num_cycles=100)
        parallel_api_test(make_parallel(**config), num_cycles=100)
        seed_test(lambda: make_env(**config), num_cycles=100)
        parallel_seed_test(lambda: make_parallel(**config), num_cycles=100)


def test_api_tests_on_bundled_personas():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(empathy_v0.env(split=None), num_cycles=100)
        parallel_api_test(empathy_v0.parallel_env(split=None), num_cycles=100)


def test_agents_spaces_and_turn_order():
    env = make_env()
    assert env.possible_agents == ["seeker", "supporter"]
    env.reset(seed=1)
    assert env.agent_selection == "seeker"
    assert env.observation_space("seeker") is env.observation_space("seeker")
    assert env.action_space("supporter").contains("任何文字 with spaces 😀")
    assert set(env.observe("seeker")) == {"message", "mood", "persona"}
    assert env.observe("supporter") == {"message": ""}
    env.step("I got chewed out at work today.")
    assert env.agent_selection == "supporter"
    assert env.observe("supporter") == {"message": "I got chewed out at work today."}
    env.step(REPLY)
    assert env.agent_selection == "seeker"
    assert env.observe("seeker")["message"] == REPLY
    assert make_env(seeker="simulator").possible_agents == ["supporter"]
    assert make_env(supporter="baseline").possible_agents == ["seeker"]


# -- the single-agent env is the special case seeker = simulator ------------------------------
def _single_agent_episode(persona_id, seed, **kwargs):
    env = EmpathyDialogEnv(personas=PERSONAS, split=None, **kwargs)
    _obs, info = env.reset(seed=seed, options={"persona_id": persona_id})
    agent, rewards, terminated, truncated = BaselineAgent(), [], False, False
    while not (terminated or truncated):
        _, reward, terminated, truncated, info = env.step(agent(info["messages"]))
        rewards.append(reward)
    return env.session, rewards


@pytest.mark.parametrize("persona_id", PERSONAS.ids)
@pytest.mark.parametrize("kwargs", [{}, {"rules": "sage", "reward_mode": "dense"}], ids=["rlver", "sage-dense"])
def test_seeker_simulator_reproduces_the_single_agent_env(persona_id, kwargs):
    single, single_rewards = _single_agent_episode(persona_id, 5, **kwargs)
    env = make_env(seeker="simulator", **kwargs)
    env.reset(seed=5, options={"persona_id": persona_id})
    rewards = []
    for _agent in env.agent_iter(100):
        _, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(BaselineAgent()(info["messages"]))
        rewards.append(env.rewards["supporter"])
    assert env.session.history == single.history
    assert [t.mood for t in env.session.turns] == [t.mood for t in single.turns]
    assert env.session.terminal_reason == single.terminal_reason
    assert rewards == pytest.approx(single_rewards)


@pytest.mark.parametrize("persona_id", PERSONAS.ids)
def test_a_seeker_echoing_the_simulator_replays_the_single_agent_episode(persona_id):
    single, single_rewards = _single_agent_episode(persona_id, 3)
    env = make_env()
    totals, _ = play_aec(env, {"seeker": echo_seeker, "supporter": supporter_policy}, seed=3, options={"persona_id": persona_id})
    session = env.session
    assert isinstance(session.simulator, SeekerVoice)
    assert session.history == single.history
    assert [(t.delta, t.mood, t.reasoning) for t in session.turns] == [(t.delta, t.mood, t.reasoning) for t in single.turns]
    assert session.terminal_reason == single.terminal_reason
    assert totals["supporter"] == pytest.approx(sum(single_rewards)) == pytest.approx(single.reward)
    assert totals["seeker"] == 0.0


def test_the_seekers_line_is_spoken_and_the_simulator_still_judges():
    persona = PERSONAS.get("ma-fault")
    env = make_env()
    env.reset(seed=0, options={"persona_id": "ma-fault"})
    env.step("Honestly? Worst week ever. My boss blamed me for a handover I did perfectly.")
    env.step(REPLY)
    info = env.infos["seeker"]
    # the judge's appraisal of REPLY, before the seeker has answered
    expected = asyncio.run(
        make_simulator().appraise(persona, 30, tuple(env.session.history), REPLY, rules=env.rules, rng=__import__("numpy").random.default_rng(0))
    )
    assert info["appraisal"] == expected.reasoning
    assert info["mood"] == 30 + info["emotion_delta"] and info["emotion_delta"] == expected.delta
    assert info["simulator_reply"] and env.observe("seeker")["mood"] == info["mood"]
    assert env.session.turn == 0  # the exchange completes when the seeker answers
    line = "Yeah. Four admissions and nobody noticed I stayed late."
    env.step(line)
    assert env.session.turns[-1].user_reply == line and env.session.mood == info["mood"]
    assert env.observe("supporter") == {"message": line}
    assert env.infos["supporter"]["messages"][-2:] == [{"role": "assistant", "content": REPLY}, {"role": "user", "content": line}]
    seeker_messages = env.infos["seeker"]["messages"]
    assert seeker_messages[0]["role"] == "system" and seeker_messages[-1] == {"role": "assistant", "content": line}
    assert seeker_messages[-2] == {"role": "user", "content": REPLY}


class CountingJudge(RuleSimulator):
    """The rule simulator, counting its calls."""

    def __init__(self):
        super().__init__()
        self.calls = {"appraise": 0, "respond": 0}

    async def appraise(self, *args, **kwargs):
        self.calls["appraise"] += 1
        return await super().appraise(*args, **kwargs)

    async def respond(self, *args, **kwargs):
        self.calls["respond"] += 1
        return await super().respond(*args, **kwargs)


@pytest.mark.parametrize("reference_replies", [False, True])
def test_the_judge_only_appraises_unless_reference_replies_are_asked_for(reference_replies):
    judge = CountingJudge()
    env = empathy_v0.env(simulator=judge, personas=PERSONAS, split=None, reference_replies=reference_replies)
    env.reset(seed=0, options={"persona_id": "ma-fault"})
    env.step("I got chewed out at work today.")
    env.step(REPLY)
    info = env.infos["seeker"]
    assert info["appraisal"] and info["emotion_delta"] != 0
    assert bool(info["simulator_reply"]) == reference_replies
    env.step("Yeah, it was the handover.")
    assert judge.calls == {"appraise": 1, "respond": int(reference_replies)}


# -- privileged data ----------------------------------------------------------------------------
@pytest.mark.parametrize("persona_id", PERSONAS.ids)
def test_the_supporter_never_sees_the_hidden_need_and_the_seeker_does(persona_id):
    env = make_env(seeker_reward="shared")
    env.reset(seed=0, options={"persona_id": persona_id})
    persona = env.session.persona
    need_text = NEED_DESCRIPTIONS[persona.language][persona.hidden_need]
    seen_by_supporter = []
    for agent in env.agent_iter(100):
        obs, _, terminated, truncated, info = env.last()
        if agent == "supporter":
            seen_by_supporter.append(repr(obs) + repr(info))
            assert "privileged" not in info
        else:
            assert need_text in obs["persona"] and info["persona"]["hidden_need"] == persona.hidden_need.value
            assert info["messages"][0]["content"] == obs["persona"]
        env.step(None if terminated or truncated else (echo_seeker if agent == "seeker" else supporter_policy)(obs, info))
    blob = "\n".join(seen_by_supporter)
    assert not [t for t in NEED_TEXTS if t in blob]


def test_persona_card_states_the_need_in_both_languages():
    for persona in PERSONAS:
        assert NEED_DESCRIPTIONS[persona.language][persona.hidden_need] in persona_card(persona)
        assert persona.profile.name in persona_card(persona)


# -- rewards ----------------------------------------------------------------------------------
def _episode_totals(**kwargs):
    env = make_env(**kwargs)
    totals, _ = play_aec(env, {"seeker": echo_seeker, "supporter": supporter_policy}, seed=2, options={"persona_id": "ma-fault"})
    return env, totals


def test_seeker_reward_options():
    env, none = _episode_totals()
    final = env.session.reward
    assert none == {"seeker": 0.0, "supporter": pytest.approx(final)} and final > 0
    assert _episode_totals(seeker_reward="shared")[1] == {"seeker": pytest.approx(final), "supporter": pytest.approx(final)}
    assert _episode_totals(seeker_reward="opposed")[1]["seeker"] == pytest.approx(-final)
    calls = []

    def fidelity(session, line):
        calls.append((session.turn, line))
        return 0.5 if "nobody" not in line.lower() else -1.0

    env, custom = _episode_totals(seeker_reward=fidelity)
    seeker_lines = [m["content"] for m in env.session.history if m["role"] == "user"]
    assert [line for _, line in calls] == seeker_lines
    assert [turn for turn, _ in calls] == list(range(len(seeker_lines)))
    assert custom["seeker"] == pytest.approx(sum(0.5 if "nobody" not in x.lower() else -1.0 for x in seeker_lines))


def test_dense_supporter_rewards_sum_to_change_plus_final():
    env, totals = _episode_totals(reward_mode="dense", seeker_reward="shared")
    expected = (env.session.mood - env.rules.start) / 100 + env.session.reward
    assert totals["supporter"] == pytest.approx(expected) == pytest.approx(totals["seeker"])


def test_invalid_configurations_are_rejected():
    with pytest.raises(ValueError, match="seeker_reward"):
        make_env(seeker_reward="fidelity")
    with pytest.raises(ValueError, match="needs the seeker to be a policy"):
        make_env(seeker="simulator", seeker_reward="shared")
    with pytest.raises(ValueError, match="no agent is left"):
        make_env(seeker="simulator", supporter="baseline")
    with pytest.raises(ValueError, match="supporter must be"):
        make_env(supporter="robot")
    with pytest.raises(ValueError, match="off_turn_actions"):
        make_parallel(off_turn_actions="maybe")


# -- endings ----------------------------------------------------------------------------------
class FixedJudge:
    """A judge with a fixed appraisal (or a failure), to drive the endings."""

    name = "fixed"

    def __init__(self, delta=0, fail=False):
        self.delta, self.fail = delta, fail

    def identity(self):
        return {"simulator": "fixed"}

    async def open(self, persona, rng):
        return "hi"

    async def appraise(self, persona, mood, history, reply, *, rules, rng):
        if self.fail:
            raise SimulatorError("the judge's backend is down", raw_outputs=("<html>502</html>",))
        return Appraisal(self.delta, "", f"fixed {self.delta}")

    async def respond(self, persona, history, reply, appraisal, *, mood, rng):
        return Response("(simulator line)")


def test_the_seeker_writes_the_last_line_when_the_mood_ends_the_dialogue():
    env = make_env(simulator=FixedJudge(delta=-40))
    env.reset(seed=0)
    env.step("I had a bad day.")
    env.step("Stop whining.")
    info = env.infos["seeker"]
    assert info["ends_after_reply"] and info["mood"] == 0 and not env.terminations["seeker"]
    env.step("Forget it.")
    assert env.terminations == {"seeker": True, "supporter": True}
    assert env.session.terminal_reason == "failure" and env.session.history[-1]["content"] == "Forget it."
    assert env.infos["supporter"]["terminal_reason"] == "failure"


def test_a_seeker_goodbye_ends_the_dialogue():
    env = make_env(simulator=FixedJudge(delta=5))
    env.reset(seed=0)
    env.step("I had a bad day.")
    env.step(REPLY)
    assert not env.infos["seeker"]["ends_after_reply"]
    env.step("Thanks, I have to go now. Bye!")
    assert env.session.terminal_reason == "goodbye" and all(env.terminations.values())


def test_the_turn_limit_ends_after_the_seekers_answer():
    env = make_env(simulator=FixedJudge(delta=1), rules="sage")
    env.reset(seed=0)
    env.step("opening")
    limit = env.session.rules.max_turns
    for turn in range(1, limit + 1):
        env.step(f"reply {turn}")
        assert env.infos["seeker"]["ends_after_reply"] == (turn == limit)
        env.step(f"answer {turn}")
    assert env.session.terminal_reason == "max_turns" and env.session.turn == limit


def test_a_judge_failure_truncates_both_agents():
    env = make_env(simulator=FixedJudge(fail=True))
    env.reset(seed=0)
    env.step("I had a bad day.")
    env.step(REPLY)
    assert env.truncations == {"seeker": True, "supporter": True} and not any(env.terminations.values())
    assert env.session.terminal_reason == "simulator_error"
    assert "backend is down" in env.infos["supporter"]["error"] and env.rewards["supporter"] == 0.0
    env.step(None)
    env.step(None)
    assert env.agents == []


# -- invalid turns ----------------------------------------------------------------------------
def test_invalid_actions_raise_clear_errors():
    env = make_env()
    with pytest.raises(RuntimeError, match="reset"):
        env.step("hello")
    env.reset(seed=0)
    with pytest.raises(TypeError, match="seeker's action must be a str"):
        env.step(42)
    with pytest.raises(TypeError, match="must be a str"):
        env.step(None)
    with pytest.raises(RuntimeError, match="out of turn: it is the seeker's turn"):
        env.say("supporter", REPLY)
    with pytest.raises(ValueError, match="not an agent"):
        make_env(seeker="simulator").say("seeker", "hi")
    env.say("seeker", "I had a bad day.")
    assert env.agent_selection == "supporter" and env.session.opening == "I had a bad day."


def test_acting_after_the_end_raises():
    env = make_env(simulator=FixedJudge(delta=-100))
    env.reset(seed=0)
    env.step("I had a bad day.")
    env.step("Whatever.")
    env.step("Bye.")
    assert all(env.terminations.values())
    with pytest.raises(ValueError, match="may only step with None"):
        env.step("one more thing")
    env.step(None)
    env.step(None)
    with pytest.raises(RuntimeError, match=r"after the episode ended \(failure at turn 1\)"):
        env.step("hello?")
    with pytest.raises(RuntimeError, match="after the episode ended"):
        env.say("seeker", "hello?")
    env.reset(seed=1)  # a new episode works
    assert env.agents == ["seeker", "supporter"]


def test_parallel_turns_and_errors():
    env = make_parallel(simulator=FixedJudge(delta=-100))
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"seeker": "hi"})
    obs, infos = env.reset(seed=0)
    assert infos["seeker"]["active_agent"] == "seeker"
    with pytest.raises(RuntimeError, match="it is the seeker's turn"):
        env.step({"supporter": REPLY})
    with pytest.raises(TypeError, match="must be a str"):
        env.step({"seeker": b"bytes"})
    with pytest.raises(TypeError, match="supporter's action must be a str or None"):
        env.step({"seeker": "hi", "supporter": 3})
    with pytest.raises(ValueError, match="unknown or finished"):
        env.step({"seeker": "hi", "judge": "x"})
    obs, _rewards, terms, _truncs, infos = env.step({"seeker": "I had a bad day.", "supporter": "ignored off-turn text"})
    assert obs["supporter"] == {"message": "I had a bad day."} and infos["supporter"]["active_agent"] == "supporter"
    assert env.session.history == [{"role": "user", "content": "I had a bad day."}]
    env.step({"supporter": "Whatever.", "seeker": None})
    _, _, terms, _, _ = env.step({"seeker": "Bye."})
    assert terms == {"seeker": True, "supporter": True} and env.agents == []
    with pytest.raises(RuntimeError, match="after the episode ended"):
        env.step({"seeker": "hello?"})
    strict = make_parallel(off_turn_actions="error")
    strict.reset(seed=0)
    with pytest.raises(RuntimeError, match="supporter acted out of turn"):
        strict.step({"seeker": "hi", "supporter": "me too"})
    strict.step({"seeker": "hi", "supporter": None})


def test_parallel_and_aec_play_the_same_dialogue():
    aec = make_env()
    play_aec(aec, {"seeker": echo_seeker, "supporter": supporter_policy}, seed=4)
    par = make_parallel()
    obs, infos = par.reset(seed=4)
    while par.agents:
        active = infos["seeker"]["active_agent"]
        action = echo_seeker(obs["seeker"], infos["seeker"]) if active == "seeker" else supporter_policy(obs["supporter"], infos["supporter"])
        obs, _, _, _, infos = par.step({active: action})
    assert par.session.history == aec.session.history and par.session.reward == aec.session.reward


# -- variants ---------------------------------------------------------------------------------
def test_think_actions_reach_the_seeker_without_the_thought():
    env = make_env(think=True)
    env.reset(seed=0)
    env.step("I had a bad day.")
    env.step(f"<think>they want to be heard</think>{REPLY}")
    assert env.observe("seeker")["message"] == REPLY
    assert env.infos["seeker"]["messages"][-1] == {"role": "user", "content": REPLY}
    env.step("Yeah.")
    assert env.session.turns[-1].thought == "they want to be heard"
    assert env.infos["supporter"]["format_ok"] is True


def test_built_in_speakers_may_be_async_callables():
    async def scripted_seeker(messages):
        await asyncio.sleep(0)
        return "Still thinking about it." if len(messages) > 1 else "Work was awful."

    env = make_env(seeker=scripted_seeker)
    env.reset(seed=0)
    assert env.agents == ["supporter"] and env.observe("supporter") == {"message": "Work was awful."}
    env.step(REPLY)
    assert env.observe("supporter") == {"message": "Still thinking about it."}


def test_a_seeker_against_the_baseline_supporter():
    env = make_env(supporter="baseline", seeker_reward="shared")
    env.reset(seed=0, options={"persona_id": "ma-zh"})
    env.step("今天又被点名了。")
    reply = env.observe("seeker")["message"]
    assert reply == BaselineAgent()([{"role": "system", "content": ""}, {"role": "user", "content": "今天又被点名了。"}])
    assert env.infos["seeker"]["mood"] == env.observe("seeker")["mood"]


def test_reset_mid_exchange_and_close_leave_no_pending_work():
    env = make_env(render_mode="ansi")
    env.reset(seed=0)
    env.step("I had a bad day.")
    env.step(REPLY)  # the seeker is now to answer; the session's step waits for it
    assert "seeker to answer" in env.render()
    env.reset(seed=0, options={"persona_id": "ma-listen"})
    assert env.session.persona.id == "ma-listen" and env.session.turn == 0
    env.close()


def test_render_and_unknown_reset_options():
    env = make_env(render_mode="ansi")
    with pytest.warns(UserWarning, match="unknown option"):
        env.reset(seed=0, options={"temperature": 1})
    env.step("I had a bad day.")
    env.step(REPLY)
    env.step("Yeah.")
    text = env.render()
    assert "SEEKER   : I had a bad day." in text and f"SUPPORTER: {REPLY}" in text and "[mood" in text
    with pytest.raises(TypeError, match="must be a Persona"):
        env.reset(options={"persona": "ma-fault"})


def test_example_prints_a_transcript():
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "two_agents.py"), "--seed", "1"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "SEEKER" in result.stdout and "SUPPORTER" in result.stdout and "end:" in result.stdout


def test_an_llm_judge_over_a_local_openai_server(monkeypatch):
    pytest.importorskip("dialog_gym.simulators.llm", reason="the LLM simulator is not installed in this tree")
    pytest.importorskip("openai", reason="the LLM simulator needs the openai client")
    from dialog_gym.testing import ScriptedOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    with ScriptedOpenAIServer(seed=0) as server:
        env = make_env(simulator="openai", simulator_options={"model": "scripted", "base_url": server.base_url})
        env.reset(seed=0, options={"persona_id": "ma-fault"})
        env.step("My boss blamed me for a handover I did perfectly.")
        env.step(REPLY)
        appraisal = env.infos["seeker"]
        env.step("It was four admissions, and I still finished the notes.")
        env.close()
        kinds = server.stats()["kinds"]
    assert kinds.get("appraise", 0) >= 1
    record = env.session.turns[0]
    assert record.user_reply == "It was four admissions, and I still finished the notes."
    assert record.delta == appraisal["emotion_delta"] and record.mood == appraisal["mood"]
    assert record.reasoning == appraisal["appraisal"] and record.reasoning


def test_works_from_inside_a_running_event_loop():
    """A notebook or an async app: the sync API still works (the runner uses its own thread)."""

    async def main():
        env = make_env()
        totals, _ = play_aec(env, {"seeker": echo_seeker, "supporter": supporter_policy}, seed=3, options={"persona_id": "ma-fault"})
        env.close()
        return env.session.history, totals

    history, totals = asyncio.run(main())
    reference = make_env()
    expected_totals, _ = play_aec(reference, {"seeker": echo_seeker, "supporter": supporter_policy}, seed=3, options={"persona_id": "ma-fault"})
    assert history == reference.session.history and totals == expected_totals
