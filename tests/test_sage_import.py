"""The SAGE result importer: a synthetic record always, the recorded benchmark files when present."""

from __future__ import annotations

import json

import pytest

from dialog_gym.episodes.load import detect_format, load_episodes
from dialog_gym.episodes.sage import SAGE_RECORDED_RULES, SageImportError, check_sage_file, episode_from_sage, import_sage
from dialog_gym.episodes.replay import diff_episodes, replay

from eval_helpers import SAGE_DATA

# Mean final emo_point per model as the data README records it (one decimal).
RECORDED_MEANS = {
    "gpt-4.1": 68.2,
    "claude3.7-think": 61.2,
    "deepseek-v3-0324": 54.4,
    "openai-o4mini": 35.9,
    "gemini2.0-flash": 32.9,
    "openai-o1": 28.9,
}


def sage_record(points: list[int], *, trailing_reply: bool = False) -> dict:
    history = [{"role": "user", "content": "最近工作上的事让我很烦。", "emotion-point": points[0]}]
    for i, point in enumerate(points[1:], start=1):
        history.append({"role": "assistant", "content": f"回复{i}：听起来你很委屈。"})
        history.append(
            {
                "role": "user",
                "content": f"用户第{i}句。",
                "emotion-point": point,
                "planning": {"activity": f"心理活动{i}", "analyse": f"分析{i}", "change": str(point - points[i - 1])},
                "thinking": f"思考{i}",
            }
        )
    if trailing_reply:
        history.append({"role": "assistant", "content": "最后一句没有被评估。"})
    return {
        "id": "abc-1",
        "emo_point": points[-1],
        "emo_state": "Emotion-B",
        "target": "eq",
        "player": "* 姓名：李雷\n* 年龄：30岁\n* 性别：男性\n* 职业：工程师",
        "scene": "李雷的项目被领导否定了。\n####隐藏主题:你希望对方给出建议",
        "character": "被动型",
        "topic": "工作-项目被否定",
        "task": "你想获得能真正帮助自己解决当下困境的建议",
        "history": history,
    }


def test_a_synthetic_record_maps_onto_an_episode():
    ep = episode_from_sage(sage_record([40, 45, 38, 48, 50], trailing_reply=True), model="m")
    assert ep.persona_id == "rlver-abc-1" and ep.language == "zh" and ep.hidden_need == "practical_advice"
    assert ep.character_type == "passive" and ep.preset == "sage" and ep.source == "sage:m"
    assert [t["requested_delta"] for t in ep.turns] == [5, -7, 10, 2]
    assert ep.moods == [40, 45, 38, 48, 50] and ep.final_mood == 50
    assert "[activity] 心理活动1" in ep.turns[0]["reasoning"] and "[thinking] 思考1" in ep.turns[0]["reasoning"]
    assert json.loads(ep.turns[0]["raw"][0])["planning"]["analyse"] == "分析1"
    assert ep.extra["unappraised_reply"] == "最后一句没有被评估。" and ep.extra["topic"] == "工作-项目被否定"
    assert ep.messages[0]["role"] == "system" and len(ep.messages) == 1 + 1 + 2 * 4
    assert ep.rules["max_turns"] == 9 and ep.rules["end_on_goodbye"] is False
    assert diff_episodes(ep, replay(ep)) == []


def test_threshold_endings_are_recognised():
    assert episode_from_sage(sage_record([40, 30, 20, 10, 5]), model="m").terminal_reason == "failure"
    assert episode_from_sage(sage_record([40, 50, 60, 70, 80, 90, 100]), model="m").terminal_reason == "success"
    limit = episode_from_sage(sage_record([40, 42, 44, 46, 48, 50, 52, 54, 56, 58], trailing_reply=True), model="m")
    assert limit.terminal_reason == "max_turns" and limit.num_turns == 9 and diff_episodes(limit, replay(limit)) == []


def test_invalid_records_name_file_line_and_field(tmp_path):
    with pytest.raises(SageImportError, match="cannot follow 40"):
        episode_from_sage(sage_record([40, 55]), model="m", where="f.jsonl:3")
    broken = sage_record([40, 45])
    broken["history"][1]["role"] = "user"
    with pytest.raises(SageImportError, match=r"f.jsonl:3: history\[1\]: expected a assistant message"):
        episode_from_sage(broken, model="m", where="f.jsonl:3")
    missing = sage_record([40, 45])
    del missing["emo_point"]
    with pytest.raises(SageImportError, match="emo_point: missing"):
        episode_from_sage(missing, model="m")
    path = tmp_path / "model-x.jsonl"
    path.write_text(json.dumps(sage_record([40, 45])) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(SageImportError, match=r"model-x.jsonl:2: invalid JSON"):
        import_sage(path)


def test_format_detection(tmp_path):
    path = tmp_path / "model-y.jsonl"
    path.write_text(json.dumps(sage_record([40, 45, 50])) + "\n", encoding="utf-8")
    assert detect_format(path) == "sage"
    (episode,) = load_episodes(path)
    assert episode.agent == {"name": "model-y"} and episode.final_mood == 50


# -- the recorded benchmark ---------------------------------------------------------------
sage_files = sorted(SAGE_DATA.glob("*.jsonl")) if SAGE_DATA.is_dir() else []
needs_data = pytest.mark.skipif(not sage_files, reason=f"SAGE result files not present in {SAGE_DATA}")


@needs_data
def test_recorded_sage_results_replay_exactly():
    total = exact = 0
    for path in sage_files:
        check = check_sage_file(path)
        records = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
        recorded_mean = sum(r["emo_point"] for r in records) / len(records)
        assert check.episodes == len(records) == 100
        assert check.exact == check.episodes, check.mismatches[:5]
        assert check.replayed_mean == recorded_mean  # exactly, not approximately
        if path.stem in RECORDED_MEANS:
            assert abs(check.replayed_mean - RECORDED_MEANS[path.stem]) <= 0.05 + 1e-9
        total += check.episodes
        exact += check.exact
    assert total == exact == 100 * len(sage_files)


@needs_data
def test_recorded_sage_records_are_reproduced_byte_for_byte():
    episodes = import_sage(sage_files[0])
    assert all(diff_episodes(ep, replay(ep)) == [] for ep in episodes)
    assert SAGE_RECORDED_RULES.max_turns == 9
    assert max(ep.num_turns for ep in episodes) <= 9


@pytest.mark.parametrize("line, problem", [("[1, 2]", "a SAGE record is a JSON object"), ('{"history": ["hi"]}', r"history\[0\]: a message is a JSON object")])
def test_records_of_the_wrong_shape_are_named_with_file_and_line(tmp_path, line, problem):
    path = tmp_path / "model.jsonl"
    path.write_text(json.dumps(sage_record([40, 45])) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(SageImportError, match=problem) as error:
        import_sage(path)
    assert f"{path}:2" in str(error.value)
