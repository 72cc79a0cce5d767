"""`dialog-gym play`: a person plays the supporter through stdin."""

from __future__ import annotations

import subprocess
import sys

REPLY = "That sounds exhausting, and it makes sense that it weighs on you. What happened?"


def _play(stdin: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dialog_gym", "play", "--seed", "3", *args],
        input=stdin, capture_output=True, text=True, timeout=120,
    )


def test_typed_replies_get_answers_with_the_mood_and_the_need_is_revealed_at_the_end():
    result = _play(f"{REPLY}\n/why\n\nThank you for telling me. I'm here.\n/quit\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.count("(mood ") == 2  # one answer per typed reply; /why and the empty line are not replies
    assert "Mood " in out  # /why printed the last appraisal's reasoning
    assert "type a reply, /why or /quit" in out
    assert "episode left unfinished" in out and "hidden need: " in out


def test_playing_to_the_end_reports_the_reward():
    replies = "\n".join(f"{REPLY} ({k})" for k in range(12)) + "\n"
    result = _play(replies, "--language", "zh", "--explain")
    assert result.returncode == 0, result.stderr
    assert "end: " in result.stdout and "reward " in result.stdout
    assert "hidden need: " in result.stdout


def test_end_of_input_leaves_the_episode_cleanly():
    result = _play("")
    assert result.returncode == 0, result.stderr
    assert "episode left unfinished" in result.stdout
