"""The dialogue core: `DialogConfig`, GRPO group openings, failed openings, one sync runner."""

from __future__ import annotations

import asyncio
import threading

import gymnasium as gym
import numpy as np
import pytest

import dialog_gym
from dialog_gym.agents import BaselineAgent
from dialog_gym.mood import RLVER, SAGE
from dialog_gym.personas import PersonaSet
from dialog_gym.session import DialogConfig, copy_generator
from dialog_gym.simulators import RuleSimulator, SimulatorError
from eval_helpers import make_persona

REPLIES = ["That sounds really hard. What happened?", "I'm listening. How did that feel?", "You did what you could."]


class FlakyOpener(RuleSimulator):
    """The rule simulator, except that its opening line fails."""

    async def open(self, persona, rng):
        rng.integers(10)  # it drew from the generator before it failed
        raise SimulatorError("the backend is down", raw_outputs=("<html>502</html>",))


def run(coro):
    return asyncio.run(coro)


def play(session, replies) -> list[tuple]:
    async def go():
        return [(await session.step(r)).observation for r in replies if not session.done]

    return run(go())


def test_a_config_is_validated_once_and_opens_sessions_from_itself():
    config = DialogConfig.create("rule", "sage", think=True, reward_mode="dense", format_penalty=1)
    assert config.format_penalty == 1.0 and isinstance(config.format_penalty, float)
    session = config.session(make_persona(0), np.random.default_rng(0))
    assert session.config is config and session.rules.name == "sage" and session.think
    assert session.system_prompt == session.messages[0]["content"] and "<think>" in session.system_prompt
    with pytest.raises(ValueError, match="reward_mode 'sparse'"):
        DialogConfig(RuleSimulator(), RLVER, reward_mode="sparse")
    with pytest.raises(TypeError, match="MoodRules or a preset name"):
        DialogConfig(RuleSimulator(), 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown mood preset 'rlvr'"):
        DialogConfig(rules="rlvr")  # type: ignore[arg-type]
    default = DialogConfig()  # names resolve: the default judge and preset
    assert default.simulator.name == dialog_gym.simulators.DEFAULT_SIMULATOR and default.rules is RLVER
    assert DialogConfig(RuleSimulator(), "sage").rules is SAGE  # type: ignore[arg-type]


def test_a_group_shares_persona_opening_and_generator_state():
    config = DialogConfig.create("rule")
    persona = make_persona(1)  # no fixed opening: the simulator draws one with the generator
    rng = np.random.default_rng(7)
    group = run(config.open_group(persona, rng, 3))
    assert group[0].rng is rng  # the leader draws with the caller's generator ...
    assert len({id(s.rng) for s in group}) == 3  # ... every other member with its own copy
    assert len({s.opening for s in group}) == 1 and group[0].opening
    states = [s.rng.bit_generator.state for s in group]
    assert all(state == states[0] for state in states)
    # Alone, a session seeded alike draws the same opening: members are copies of one start.
    alone = config.session(persona, np.random.default_rng(7))
    assert run(alone.start()) == group[0].opening
    # With the same replies the members play identical episodes; only the agent tells them apart.
    transcripts = [play(s, REPLIES) for s in group]
    assert transcripts[0] == transcripts[1] == transcripts[2]
    assert [t.mood for t in group[1].turns] == [t.mood for t in group[2].turns]
    with pytest.raises(ValueError, match="positive int"):
        run(config.open_group(persona, rng, 0))


def test_a_failed_opening_is_a_simulator_error_episode_for_every_member_never_an_exception():
    config = DialogConfig(FlakyOpener(), RLVER)
    group = run(config.open_group(make_persona(2), np.random.default_rng(0), 3))
    for session in group:
        assert session.done and session.terminal_reason == "simulator_error" and session.reward == 0.0
        assert session.error == "opening failed: SimulatorError: the backend is down"
        assert session.opening == "" and session.history == [] and session.turns == []
        info = session.info()
        assert info["terminal_reason"] == "simulator_error" and info["error"] == session.error
        with pytest.raises(RuntimeError, match="after the episode ended"):
            run(session.step("hello?"))
    # The single-agent env resets into the same state, reported in info; it does not raise.
    env = gym.make("RLVER-Empathy-v1", simulator=FlakyOpener(), personas=[make_persona(2)], split=None)
    obs, info = env.reset(seed=0)
    assert obs == "" and info["terminal_reason"] == "simulator_error" and "backend is down" in info["error"]
    env.close()


def test_copy_generator_is_independent():
    rng = np.random.default_rng(3)
    clone = copy_generator(rng)
    assert clone is not rng and clone.integers(1 << 30) == rng.integers(1 << 30)
    clone.integers(5)
    assert clone.bit_generator.state != rng.bit_generator.state


def test_a_misspelt_keyword_names_itself_and_its_closest_spelling_at_both_levels():
    # The entry point's own keywords (the config's fields among them)...
    with pytest.raises(TypeError) as caught:
        gym.make("RLVER-Empathy-v2", think_mode=True)
    message = str(caught.value)
    assert "'think_mode' (did you mean 'think'?)" in message and "reply_guard" in message
    with pytest.raises(TypeError, match=r"'sytle' \(did you mean 'style'\?\)"):
        gym.make("RLVER-Empathy-v2", sytle="challenging")
    # ...then the simulator's options, declared by its registry entry.
    with pytest.raises(TypeError, match=r"'jugde' \(did you mean 'judge'\?\) for the 'calibrated' simulator; the options are: judge, "):
        gym.make("RLVER-Empathy-v2", simulator_options={"jugde": "sage-deepseek-v3"})
    with pytest.raises(TypeError, match=r"'temprature' \(did you mean 'temperature'\?\).*api_key.*base_url"):
        dialog_gym.make_simulator("openai", model="m", temprature=0.3)
    with pytest.raises(TypeError, match=r"'shuffle'.*'replay' simulator go in simulator_options.*takes: language, path, style"):
        gym.make("RLVER-Empathy-v1", simulator="replay", simulator_options={"path": "runs/x"}, shuffle=True)
    with pytest.raises(ValueError, match="unknown simulator 'rules'.*'rule'"):
        dialog_gym.make_simulator("rules")
    with pytest.raises(ValueError, match="style is a DialogConfig argument"):
        DialogConfig.create("rule", simulator_options={"style": "challenging"})


def test_simulator_options_as_plain_keywords_still_work_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match=r"simulator options as keywords \(judge\).*simulator_options"):
        env = gym.make("RLVER-Empathy-v2", judge="sage-deepseek-v3")
    assert env.unwrapped.simulator.judge.name == "sage-deepseek-v3"
    env.close()
    with pytest.raises(TypeError, match="judge given both as keywords and in simulator_options"):
        gym.make("RLVER-Empathy-v2", judge="sage-deepseek-v3", simulator_options={"judge": "sage-deepseek-v3"})


def test_every_entry_point_takes_a_config_or_builds_one_from_its_fields(tmp_path):
    from dialog_gym.envs import EmpathyDialogEnv, EmpathyVectorEnv
    from dialog_gym.integrations.trl import DialogRollout
    from dialog_gym.integrations.verl.dialogs import VerlDialogs

    config = DialogConfig.create("rule", "sage", style="challenging", think=True)
    personas = [make_persona(0), make_persona(1)]
    built = [
        EmpathyDialogEnv(config, personas=personas, split=None),
        EmpathyVectorEnv(2, config, personas=personas, split=None),
        gym.make("RLVER-Empathy-v1", config=config).unwrapped,  # the env id's set-up is replaced whole
        DialogRollout(config),
        VerlDialogs(config),
    ]
    pettingzoo = pytest.importorskip("dialog_gym.multiagent").empathy_v0
    built += [pettingzoo.env(config=config), pettingzoo.parallel_env(supporter="baseline", config=config)]
    assert all(entry.config is config for entry in built)
    episodes = dialog_gym.rollout(BaselineAgent(), config, personas=personas, progress=False)
    assert {(e.preset, e.simulator["style"], e.think) for e in episodes} == {("sage", "challenging", True)}

    # The same set-up from fields, or from a mapping of them (an env id's YAML spec states its so).
    for entry in (EmpathyDialogEnv(simulator="rule", rules="sage", style="challenging", think=True),
                  EmpathyDialogEnv({"simulator": "rule", "rules": "sage", "style": "challenging"}, think=True),
                  gym.make("RLVER-Empathy-Challenging-v0", rules="sage", think=True).unwrapped):
        assert (entry.simulator.identity(), entry.rules, entry.config.think) == (config.simulator.identity(), SAGE, True)
    assert gym.spec("RLVER-Empathy-v2").kwargs["config"]["simulator"] == "calibrated"
    with pytest.raises(TypeError, match="config is a DialogConfig, so rules, think cannot be given beside it"):
        EmpathyDialogEnv(config, think=True, rules="rlver")
    with pytest.raises(TypeError, match=r"'thnk' \(did you mean 'think'\?\) in the config mapping"):
        EmpathyDialogEnv({"thnk": True})
    with pytest.raises(TypeError, match="did you mean simulator='rule'"):
        EmpathyDialogEnv("rule")  # type: ignore[arg-type]


def test_a_simulator_without_styles_plays_vanilla_only():
    from dialog_gym.simulators import register_simulator

    register_simulator("styleless-test", RuleSimulator, options=())  # declares no style option
    try:
        assert isinstance(DialogConfig.create("styleless-test").simulator, RuleSimulator)
        with pytest.raises(ValueError, match="'styleless-test' simulator has no styles"):
            DialogConfig.create("styleless-test", style="challenging")
    finally:
        dialog_gym.simulators._SIMULATORS.pop("styleless-test")


def test_every_sync_entry_point_works_inside_a_running_loop(tmp_path):
    """A notebook runs an event loop: the sync facades must not call asyncio.run there."""
    pettingzoo_env = pytest.importorskip("dialog_gym.multiagent").empathy_v0
    personas = list(PersonaSet.bundled().filter(split="test", language="en"))[:2]
    agent = BaselineAgent()
    threads_before = threading.active_count()

    async def notebook_cell():
        env = gym.make("RLVER-Empathy-v1", language="en")
        env.reset(seed=0)
        env.step(REPLIES[0])
        env.close()
        venv = gym.make_vec("RLVER-Empathy-v1", num_envs=2, vectorization_mode="vector_entry_point")
        venv.reset(seed=0, options={"group_size": 2})
        venv.step([REPLIES[0]] * 2)
        venv.close()
        duet = pettingzoo_env.env(supporter="baseline")
        duet.reset(seed=0)
        duet.step("I had an awful week.")
        duet.close()
        episodes = dialog_gym.rollout(agent, personas=personas, group_size=2, progress=False)
        result = dialog_gym.evaluate(agent, out=tmp_path / "run", personas=personas, progress=False)
        replayed = dialog_gym.replay(episodes[0])
        rescored = dialog_gym.rescore(episodes, "calibrated")  # the judge the rollout used
        return episodes, result, replayed, rescored

    episodes, result, replayed, rescored = asyncio.run(notebook_cell())
    assert len(episodes) == 4 and all(e.terminal_reason for e in episodes)
    assert result.summary["episodes"] == 2
    assert not dialog_gym.episodes.replay.diff_episodes(episodes[0], replayed)
    assert [r.new_final_mood for r in rescored] == [e.final_mood for e in episodes]
    assert threading.active_count() == threads_before  # every runner's loop thread has stopped
