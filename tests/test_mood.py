"""Mood mechanics: the rlver and sage presets, buckets, endings, goodbye detection."""

from __future__ import annotations

import pytest

from dialog_gym.mood import RLVER, SAGE, MoodRules, get_rules, is_goodbye, mood_bucket


@pytest.mark.parametrize(
    ("mood", "bucket"), [(100, "S"), (99, "A"), (70, "A"), (69, "B"), (40, "B"), (39, "C"), (10, "C"), (9, "F"), (0, "F")]
)
def test_buckets(mood, bucket):
    assert mood_bucket(mood) == bucket


def test_rlver_preset():
    assert (RLVER.start, RLVER.max_turns) == (30, 8)
    assert RLVER.apply(30, 50).mood == 80  # unclamped change
    capped = RLVER.apply(90, 35)
    assert (capped.mood, capped.delta, capped.requested_delta, capped.clamped) == (100, 10, 35, False)
    assert RLVER.apply(5, -40).mood == 0
    assert RLVER.terminal_reason(0, 3, False) == "failure"
    assert RLVER.terminal_reason(100, 3, False) is None  # rlver does not end at 100
    assert RLVER.terminal_reason(50, 3, True) == "goodbye"
    assert RLVER.terminal_reason(50, 8, False) == "max_turns"
    assert RLVER.terminal_reason(50, 7, False) is None


def test_sage_preset():
    assert (SAGE.start, SAGE.max_turns) == (40, 9)  # the 10th SAGE reply is never appraised
    update = SAGE.apply(40, 25)
    assert (update.mood, update.delta, update.requested_delta, update.clamped) == (50, 10, 25, True)
    assert SAGE.apply(40, -30).mood == 30
    assert SAGE.terminal_reason(100, 2, False) == "success"
    assert SAGE.terminal_reason(9, 2, False) == "failure"
    assert SAGE.terminal_reason(10, 2, False) is None
    assert SAGE.terminal_reason(60, 9, False) == "max_turns"
    assert SAGE.terminal_reason(60, 8, False) is None


def test_reward_is_final_mood_over_100_floored_at_zero():
    assert RLVER.reward(73) == pytest.approx(0.73)
    assert RLVER.reward(-5) == 0.0


def test_rules_validation_and_lookup():
    with pytest.raises(ValueError, match="start 120 outside"):
        MoodRules(name="x", start=120, min_delta=None, max_delta=None)
    with pytest.raises(ValueError, match="unknown mood preset 'nope'"):
        get_rules("nope")
    assert get_rules("sage") is SAGE


@pytest.mark.parametrize("text", ["Thanks, I think I'll go now. Bye.", "OK, see you later", "Goodbye.", "算了，不聊了，再见。", "我先走了"])
def test_goodbye_detected(text):
    assert is_goodbye(text)


@pytest.mark.parametrize("text", ["I don't know what to say.", "Maybe I should take a break from it.", "我不知道怎么办。"])
def test_no_false_goodbye(text):
    assert not is_goodbye(text)
