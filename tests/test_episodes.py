"""Episode records: JSONL writer (atomic appends), reader, dataset rows, replay, re-scoring."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import gymnasium as gym
import pytest

from dialog_gym.agents import BaselineAgent
from dialog_gym.episodes import Episode
from dialog_gym.episodes.io import (
    EpisodeFileError,
    EpisodeWriter,
    TornLineWarning,
    iter_episode_dicts,
    read_episodes,
    to_dataset_rows,
    write_episodes,
)
from dialog_gym.episodes.rescore import rescore, summarize_rescore
from dialog_gym.simulators import make_simulator
from dialog_gym.episodes.replay import ReplaySimulator, diff_episodes, replay

from eval_helpers import ScriptedSimulator, aplay, make_persona, make_personas, play_many


@pytest.fixture(scope="module")
def episodes() -> list[Episode]:
    return play_many(make_personas(6), seeds=2)


# -- records and files ----------------------------------------------------------------------
def test_record_carries_what_reproduces_it(episodes):
    ep = episodes[0]
    assert ep.persona_id and ep.seed == 0 and ep.preset == "sage"
    assert ep.rules["name"] == "sage" and ep.rules["start"] == 40 and ep.rules["max_delta"] == 10
    assert ep.simulator == {"simulator": "rule", "style": "vanilla", "planner": "reciting"}
    assert ep.persona["id"] == ep.persona_id and ep.version
    assert ep.moods[0] == 40 and ep.moods[-1] == ep.final_mood
    assert "api_key" not in json.dumps(ep.to_dict()).lower()


def test_write_then_read_round_trips(tmp_path, episodes):
    path = tmp_path / "run" / "episodes.jsonl"
    assert write_episodes(path, episodes) == len(episodes)
    back = read_episodes(path)
    assert [e.to_dict() for e in back] == [e.to_dict() for e in episodes]
    assert read_episodes(path.parent)[0].episode_id == episodes[0].episode_id  # a run folder works too
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line) for line in lines[:-1])


def test_torn_last_line_is_skipped_with_a_warning_naming_file_and_line(tmp_path, episodes):
    path = tmp_path / "episodes.jsonl"
    write_episodes(path, episodes[:3])
    whole = json.dumps(episodes[3].to_dict()).encode()
    with path.open("ab") as fh:
        fh.write(whole[: len(whole) // 2])  # what a kill inside the write leaves
    with pytest.warns(TornLineWarning, match=rf"{path.name}:4: skipping a torn last line"):
        back = read_episodes(path)
    assert len(back) == 3
    # The writer removes the torn tail before appending, so the file is whole again.
    with pytest.warns(TornLineWarning, match=r":4: removing a torn last line"):
        with EpisodeWriter(path) as writer:
            writer.write(episodes[3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [e.episode_id for e in read_episodes(path)] == [e.episode_id for e in episodes[:4]]


def test_a_broken_line_in_the_middle_is_an_error_naming_file_and_line(tmp_path, episodes):
    path = tmp_path / "episodes.jsonl"
    write_episodes(path, episodes[:1])
    with path.open("a") as fh:
        fh.write('{"persona_id": \n')
    write_episodes(path, episodes[1:2])
    with pytest.raises(EpisodeFileError, match=rf"{path.name}:2: invalid JSON"):
        list(iter_episode_dicts(path))


def test_unknown_fields_are_rejected_with_the_file_and_line(tmp_path, episodes):
    path = tmp_path / "episodes.jsonl"
    write_episodes(path, [episodes[0], {**episodes[1].to_dict(), "mystery": 1}])
    with pytest.raises(EpisodeFileError, match=rf"{path.name}:2: unknown field.*mystery"):
        read_episodes(path)


WRITER_SCRIPT = textwrap.dedent(
    """
    import sys, json
    from dialog_gym.episodes.io import EpisodeWriter
    record = json.loads(open(sys.argv[2]).read())
    pad = "x" * int(sys.argv[3])
    with EpisodeWriter(sys.argv[1]) as writer:
        for i in range(int(sys.argv[4])):
            record["episode_id"] = f"{sys.argv[5]}-{i}"
            record["extra"] = {"pad": pad}
            writer.write(record)
            if i == 5:
                print("ready", flush=True)
    """
)


def _spawn_writer(tmp_path: Path, path: Path, record: dict, *, pad: int, count: int, tag: str) -> subprocess.Popen:
    script = tmp_path / f"writer-{tag}.py"  # one file per writer: never rewritten while another reads it
    script.write_text(WRITER_SCRIPT)
    source = tmp_path / f"record-{tag}.json"
    source.write_text(json.dumps(record))
    return subprocess.Popen(
        [sys.executable, str(script), str(path), str(source), str(pad), str(count), tag],
        stdout=subprocess.PIPE, text=True,
    )


def test_a_killed_writer_leaves_only_whole_lines(tmp_path, episodes):
    path = tmp_path / "episodes.jsonl"
    proc = _spawn_writer(tmp_path, path, episodes[0].to_dict(), pad=200_000, count=100_000, tag="k")
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    proc.stdout.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = list(iter_episode_dicts(path))
    assert len(records) >= 6
    assert [r["episode_id"] for r in records] == [f"k-{i}" for i in range(len(records))]
    assert all(len(r["extra"]["pad"]) == 200_000 for r in records)
    # Nothing but a torn tail. (A ResourceWarning is not the reader's: the garbage collector
    # may finalise another test's unclosed file while the reader runs. One full run under load
    # failed here on a warning that was not a TornLineWarning; which one was not recorded.)
    assert all(issubclass(w.category, TornLineWarning) for w in caught if not issubclass(w.category, ResourceWarning)), caught


def test_concurrent_writers_interleave_whole_lines(tmp_path, episodes):
    path = tmp_path / "episodes.jsonl"
    procs = [_spawn_writer(tmp_path, path, episodes[0].to_dict(), pad=20_000, count=60, tag=f"w{j}") for j in range(3)]
    for proc in procs:
        proc.communicate(timeout=60)
        assert proc.returncode == 0
    ids = [r["episode_id"] for r in iter_episode_dicts(path)]
    assert sorted(ids) == sorted(f"w{j}-{i}" for j in range(3) for i in range(60))


def test_dataset_rows_load_into_datasets(episodes):
    datasets = pytest.importorskip("datasets", reason="datasets is needed for Dataset.from_list")
    failed = asyncio.run(aplay(make_persona(0), simulator=ScriptedSimulator(fail_at=2), episode_id="failed"))
    rows = to_dataset_rows([*episodes, failed])
    ds = datasets.Dataset.from_list(rows)
    assert len(ds) == len(episodes) + 1
    assert ds[0]["final_mood"] == episodes[0].final_mood
    assert ds[0]["moods"] == episodes[0].moods
    assert ds[0]["messages"][0]["role"] == "system"
    assert json.loads(ds[0]["turns"]) == episodes[0].turns
    assert ds[-1]["terminal_reason"] == "simulator_error" and "scripted failure" in ds[-1]["error"]


# -- replay ---------------------------------------------------------------------------------
def test_replay_reproduces_every_recorded_episode_byte_for_byte(episodes):
    for ep in episodes:
        again = replay(ep)
        assert diff_episodes(ep, again) == []
        assert json.dumps(again.turns) == json.dumps(ep.turns)


def test_replay_reproduces_a_simulator_failure_exactly():
    ep = asyncio.run(aplay(make_persona(1), simulator=ScriptedSimulator(fail_at=3)))
    assert ep.terminal_reason == "simulator_error" and ep.turns[-1]["raw"] == ["{broken"]
    again = replay(ep)
    assert diff_episodes(ep, again) == []
    assert again.error == ep.error == "SimulatorError: scripted failure at turn 3"


def test_replay_stops_with_a_clear_error_when_the_agent_deviates(episodes):
    ep = episodes[0]
    changed = Episode.from_dict(ep.to_dict())
    changed.turns[1] = {**changed.turns[1], "action": "something else entirely"}
    again = replay(changed, simulator=ReplaySimulator([ep]))
    assert again.terminal_reason == "simulator_error"
    assert f"persona {ep.persona_id!r} at turn 2" in again.error
    assert again.turns[0] == ep.turns[0]


def test_make_simulator_replay_drives_the_gym_env(tmp_path):
    personas = make_personas(4, languages=("en",))
    env = gym.make("RLVER-Empathy-v1", personas=personas, split=None)
    agent = BaselineAgent()
    recorded = []
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        transcript, done = [obs], False
        while not done:
            obs, reward, term, trunc, info = env.step(agent(info["messages"]))
            transcript.append(obs)
            done = term or trunc
        session = env.unwrapped.session
        recorded.append((Episode.from_session(session, seed=seed), transcript, reward))
    env.close()
    path = tmp_path / "cassette.jsonl"
    write_episodes(path, [r[0] for r in recorded])
    assert isinstance(make_simulator("replay", path=path), ReplaySimulator)

    env = gym.make("RLVER-Empathy-v1", personas=personas, split=None, simulator="replay", simulator_options={"path": str(path)})
    for seed, (episode, transcript, reward) in enumerate(recorded):
        obs, info = env.reset(seed=seed)
        replayed, done = [obs], False
        while not done:
            obs, r, term, trunc, info = env.step(agent(info["messages"]))
            replayed.append(obs)
            done = term or trunc
        assert replayed == transcript and r == reward
        assert info["mood"] == episode.final_mood
    env.close()


def test_replay_from_file_rejects_unknown_options(tmp_path, episodes):
    path = tmp_path / "e.jsonl"
    write_episodes(path, episodes[:1])
    with pytest.raises(TypeError, match="model"):
        ReplaySimulator.from_file(path, model="x")
    with pytest.raises(ValueError, match="no recorded episodes"):
        ReplaySimulator([])


# -- re-scoring -----------------------------------------------------------------------------
def test_rescoring_with_the_recording_simulator_reproduces_it(episodes):
    results = rescore(episodes, "rule")
    for ep, r in zip(episodes, results):
        assert r.new_deltas == r.recorded_deltas == [t["delta"] for t in ep.turns]
        assert r.new_final_mood == ep.final_mood
    summary = summarize_rescore(results)
    assert summary["mean_abs_final_mood_difference"] == 0 and summary["delta_sign_agreement"] == 1.0


def test_rescoring_is_teacher_forced_and_reports_both_series(episodes):
    ep = episodes[0]
    judge = ScriptedSimulator(delta=10, reply="NEVER SHOWN")
    (result,) = rescore([ep], judge)
    # The judge saw the recorded user replies, never its own.
    for turn_index, history in enumerate(judge.histories):
        expected = [ep.opening]
        for t in ep.turns[:turn_index]:
            expected += [t["reply"], t["user_reply"]]
        assert [m["content"] for m in history] == expected
    assert not any("NEVER SHOWN" in m["content"] for h in judge.histories for m in h)
    assert result.recorded_deltas == [t["delta"] for t in ep.turns]
    assert result.new_requested_deltas == [10] * len(ep.turns)
    assert result.new_deltas == [10] * 6 + [0] * (len(ep.turns) - 6)  # capped at 100
    assert result.new_moods[:7] == [40, 50, 60, 70, 80, 90, 100]
    # Under sage the judge would have ended the dialogue at mood 100, after turn 6.
    assert result.new_final_mood == 100 and result.new_end_turn == 6 and result.new_terminal_reason == "success"
    # Only the appraisals were asked for (and paid): no answer was generated.
    assert judge.responses == 0
    assert result.usage == {"prompt_tokens": 10 * len(ep.turns), "completion_tokens": 5 * len(ep.turns), "calls": len(ep.turns)}


def test_rescoring_records_a_judge_failure_without_inventing_a_score(episodes):
    (result,) = rescore(episodes[:1], ScriptedSimulator(fail_at=2))
    assert result.new_final_mood is None and result.new_deltas == [5]
    assert "turn 2" in result.error and "scripted failure" in result.error
    assert summarize_rescore([result])["failed"] == 1


def test_rescoring_under_other_rules(episodes):
    (result,) = rescore(episodes[:1], ScriptedSimulator(delta=-50), rules="rlver")
    assert result.preset == "rlver" and result.new_moods[:3] == [30, 0, 0]
    assert result.new_end_turn == 1 and result.new_terminal_reason == "failure"
