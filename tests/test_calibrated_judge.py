"""The calibrated judge: its features, its fitting, its files, and distilling a real LLM judge."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from dialog_gym.cli import main as cli
from dialog_gym.episodes.calibration import CalibrationDataError, judge_samples, load_judge_samples
from dialog_gym.episodes.io import EpisodeWriter
from dialog_gym.personas import PersonaSet
from dialog_gym.simulators import make_simulator
from dialog_gym.simulators._ridge import SparseRows, ridge
from dialog_gym.simulators.calibrated import CalibratedSimulator
from dialog_gym.simulators.judge import CalibratedJudge, JudgeFileError, explain
from dialog_gym.simulators.judge_fit import FitOptions, JudgeSample, fit_judge
from dialog_gym.simulators.judge_features import gram_codes, gram_text, judge_features
from dialog_gym.simulators.llm import LLMSimulator
from dialog_gym.testing import ScriptedOpenAIServer
from dialog_gym.testing.openai_server import scripted_change
from eval_helpers import aplay, play_many

EN = PersonaSet.bundled().filter(language="en")
ZH = PersonaSet.bundled().filter(language="zh")


def test_ridge_matches_the_closed_form_solution():
    rng = np.random.default_rng(0)
    dense = rng.normal(size=(60, 12)) * (rng.random((60, 12)) < 0.4)
    y = rng.normal(size=60)
    penalty = np.linspace(0.5, 3.0, 12)
    rows = [(np.flatnonzero(r), r[np.flatnonzero(r)]) for r in dense]
    fitted = ridge(SparseRows(rows, 12), y, penalty, tol=1e-10)
    exact = np.linalg.solve(dense.T @ dense + np.diag(penalty), dense.T @ y)
    np.testing.assert_allclose(fitted, exact, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "text, language, grams",
    [
        ("听 起来", "zh", {"听", " ", "起", "来", "听 ", " 起", "起来", "听 起", " 起来"}),
        ("I hear you. I hear", "en", {"i", "hear", "you", "i hear", "hear you", "you i"}),
        ("", "en", set()),
        ("嗯", "zh", {"嗯"}),
    ],
)
def test_gram_codes_are_the_distinct_ngrams_and_decode_back(text, language, grams):
    codes = gram_codes(text, language)
    assert len(codes) == len(grams)
    assert {gram_text(c, text, language) for c in codes} == grams


def test_features_read_form_openers_and_the_users_last_message():
    persona = ZH[0]
    history = [{"role": "user", "content": persona.opening_line}, {"role": "assistant", "content": "嗯"},
               {"role": "user", "content": "说这些有什么用，太笼统了，能不能具体点？"}]
    listy = "哇！你太厉害了！\n\n1. **先休息**\n2. **再沟通**\n\n如果需要，可以找心理咨询师聊聊。"
    f = judge_features(persona, history, listy, version=1)
    assert f.language == "zh"
    assert f.named["praise_opener"] == 1 and f.named["exclamation_opener"] == 1
    assert f.named["numbered_lines"] == 2 and f.named["bold"] == 2 and f.named["referral"] >= 1
    assert f.named["user_negative"] >= 2 and f.named["user_wants_specifics"] == 1
    assert f.named[f"need:{persona.hidden_need.value}"] == 1 and f.texts["opener"].startswith("哇")
    plain = judge_features(persona, history, "听起来你真的很累。")
    assert plain.named["stock_opener"] == 1 and plain.named["list_lines"] == 0
    # version 2 reads the same reply without its markup, and how it meets the conversation
    v2 = judge_features(persona, history, listy)
    assert v2.version == 2 and "opener" not in v2.texts and "*" not in v2.texts["reply"] and "#" not in v2.texts["reply"]
    assert v2.named["ignores_question"] == 1 and v2.named["takes_up_nothing"] == 1 and v2.gram_gate == pytest.approx(0.3)
    assert v2.acts["referral"] >= 1 and v2.familiarity < 1


def _planted_samples(n: int = 120) -> list[JudgeSample]:
    """Replies whose change is +6 when they mention the person's own effort, else -2."""
    rng = np.random.default_rng(1)
    good = ["You put in so much effort on {x}.", "All that effort you gave {x} shows.", "Your effort on {x} was real."]
    bad = ["Well, {x} happens to everyone.", "Maybe {x} was not that important.", "Let's talk about something else than {x}."]
    samples = []
    for i in range(n):
        persona = EN[i % len(EN)]
        fits = bool(i % 2)
        text = (good if fits else bad)[int(rng.integers(3))].format(x=persona.keywords[0])
        history = ({"role": "user", "content": persona.opening_line or "hi"},)
        samples.append(JudgeSample(persona, history, text, 6.0 if fits else -2.0, group=f"g{i % 3}", dialogue=str(i)))
    return samples


def test_a_fitted_judge_learns_a_planted_effect_and_round_trips_through_its_file(tmp_path):
    judge = fit_judge(_planted_samples(), name="planted", options=FitOptions.v1(l2=1.0))
    persona = EN[5]
    history = ({"role": "user", "content": persona.opening_line or "hi"},)
    effort = judge.predict(persona, history, "The effort you put into the move really shows.")
    other = judge.predict(persona, history, "Moves happen to everyone, it was not that important.")
    assert effort > other + 3
    assert judge.metadata["fit"]["folds"] == "leaving one agent model out"
    assert judge.metadata["fit"]["out_of_fold_turn_r"] > 0.9
    assert "en" in judge.models and judge.models["zh"].tied_from == "en" and not judge.models["zh"].grams

    path = judge.save(tmp_path / "planted.json")
    loaded = CalibratedJudge.load(path)
    assert loaded.fingerprint == judge.fingerprint
    for reply in ("The effort you put into the move really shows.", "Moves happen to everyone."):
        assert loaded.predict(persona, history, reply) == pytest.approx(judge.predict(persona, history, reply), abs=0.02)
    score = loaded.score(persona, history, "The effort you put into the move really shows.")
    assert score.change == pytest.approx(loaded.predict(persona, history, "The effort you put into the move really shows."))
    top = score.top(1)[0]  # a one-sentence reply: its opening is all of its wording
    assert top.feature in ("wording", "opening") and any("effort" in g for g in top.examples)
    assert explain(score).startswith(f"Mood raised by {top.words}")


def test_a_v2_judge_learns_a_planted_effect_under_its_knowledge(tmp_path):
    judge = fit_judge(_planted_samples(), name="planted-v2", options=FitOptions(l2=1.0))
    assert judge.feature_version == 2 and judge.metadata["fit"]["synthetic_negatives"]
    persona = EN[5]
    history = ({"role": "user", "content": persona.opening_line or "hi"},)
    effort = judge.predict(persona, history, "The effort you put into the move really shows, and it sounds like it cost you a lot.")
    dismissed = judge.predict(persona, history, "Moves happen to everyone, it was not that big a deal. Just get over it.")
    # the ladder holds whatever was fitted (its bands scale with the judge's range)
    from dialog_gym.simulators.judge_knowledge import ACT_BANDS
    assert effort > dismissed + 3 and dismissed <= ACT_BANDS["dismiss"][1] * max(-judge.change_range[0], 1.0) / 10 < 0
    model = judge.models["en"]
    for name, weight in zip(model.names, model.weights):  # knowledge-signed weights keep their sign
        from dialog_gym.simulators.judge_knowledge import required_sign

        assert required_sign(name) * weight >= -1e-9, name
    loaded = CalibratedJudge.load(judge.save(tmp_path / "planted-v2.json"))
    assert loaded.fingerprint == judge.fingerprint and loaded.feature_version == 2
    assert loaded.predict(persona, history, "Moves happen to everyone.") == pytest.approx(judge.predict(persona, history, "Moves happen to everyone."), abs=0.02)


def test_a_new_speech_act_model_changes_a_v2_judges_fingerprint_not_a_v1_judges(tmp_path, monkeypatch):
    """The v2 reward reads the speech-act model and the unit shares besides the judge's own
    weights: an episode record's `judge_fingerprint` must tell a retrained classifier apart."""
    from dialog_gym.simulators import judge_features

    v2, v1 = CalibratedJudge.load("sage-deepseek-v3-v2"), CalibratedJudge.load("sage-deepseek-v3")
    before = v2.fingerprint, v1.fingerprint
    retrained = tmp_path / "speech-acts.json"
    retrained.write_text(judge_features.SPEECH_ACT_WEIGHTS.read_text(encoding="utf-8").replace('"bias": [', '"bias": [0.5, ', 1), encoding="utf-8")
    monkeypatch.setattr(judge_features, "SPEECH_ACT_WEIGHTS", retrained)
    judge_features.reading_tables_digest.cache_clear()
    try:
        assert v2.fingerprint != before[0] and v1.fingerprint == before[1]
    finally:
        judge_features.reading_tables_digest.cache_clear()


def test_a_new_revision_of_the_reading_code_changes_a_v2_judges_fingerprint(monkeypatch):
    """A lexicon or rule changed in code reads some replies otherwise while every table stays
    the same: `READING_REVISION`, raised with it, changes the fingerprint all the same."""
    from dialog_gym.simulators import judge_features

    v2, v1 = CalibratedJudge.load("sage-deepseek-v3-v2"), CalibratedJudge.load("sage-deepseek-v3")
    before = v2.fingerprint, v1.fingerprint
    monkeypatch.setattr(judge_features, "READING_REVISION", judge_features.READING_REVISION + 1)
    judge_features.reading_tables_digest.cache_clear()
    try:
        assert v2.fingerprint != before[0] and v1.fingerprint == before[1]
    finally:
        judge_features.reading_tables_digest.cache_clear()


def test_a_v2_judge_reads_the_users_latest_message_not_the_one_before_it():
    """Held out by scenario and by agent model, the n-grams of the user's message before their
    latest added nothing to turn r and moved every reply alike by what the context was said to
    be worth (`judge_fit._V2_TABLES`): v2 fits and the bundled judge read the reply's and the
    latest message's. A v2 file fitted with that table before still reads it."""
    persona = EN[5]
    before = ({"role": "user", "content": "My sister moved out last spring."}, {"role": "assistant", "content": "That is a big change."})
    other = ({"role": "user", "content": "Work has been brutal all winter."}, {"role": "assistant", "content": "That is a big change."})
    last = ({"role": "user", "content": persona.opening_line or "hi"},)
    reply = "You put in so much effort on it."
    fitted = fit_judge(_planted_samples(), name="planted-v2", options=FitOptions(l2=1.0, folds="none")).models["en"]
    assert set(fitted.grams) == {"reply", "user"} and set(CalibratedJudge.load().models["zh"].grams) == {"reply", "user"}
    shares = [fitted.gram_shares(judge_features(persona, history + last, reply)) for history in (before, other)]
    assert "earlier" not in shares[0] and shares[0] == shares[1]
    older = fit_judge(_planted_samples(), name="older-v2", options=FitOptions(l2=1.0, folds="none", gram_tables=(("reply", 15), ("user", 13), ("earlier", 12))))
    reloaded = CalibratedJudge.from_dict(older.to_dict()).models["en"]
    assert set(reloaded.grams) == {"reply", "user", "earlier"}
    assert "earlier" in reloaded.gram_shares(judge_features(persona, before + last, reply))


def test_a_v2_judge_shrinks_an_unfamiliar_reply_toward_its_centre_not_toward_zero():
    samples = _planted_samples()
    judge = fit_judge(samples, name="planted-v2", options=FitOptions(l2=1.0, folds="none", center_share=1.0))
    model = judge.models["en"]
    assert model.steady_context and model.context_mask.any()
    # the centre is what the model says, unshrunk, of the reply's share for the average recorded reply it was fitted on
    features = [judge_features(s.persona, s.history, s.reply) for s in samples]
    unshrunk = [model.intercept + float(model.contributions(f)[~model.context_mask].sum()) + model.gram_shares(f)["reply"] for f in features]
    assert model.center == pytest.approx(float(np.mean(unshrunk)), abs=1e-9) and model.center != 0
    default = fit_judge(samples, name="planted-v2", options=FitOptions(l2=1.0, folds="none")).models["en"]
    assert default.center == pytest.approx(FitOptions().center_share * model.center, abs=1e-9) and FitOptions().center_share == 0.15
    persona = EN[5]
    history = ({"role": "user", "content": persona.opening_line or "hi"},)
    short = judge_features(persona, history, "Your effort shows.")
    assert short.familiarity < 0.5
    # the reply's share shrinks; where the conversation is (the turn, the user's words) does not
    value = model.intercept + float(model.contributions(short)[~model.context_mask].sum()) + model.gram_shares(short)["reply"]
    context = float(model.contributions(short)[model.context_mask].sum()) + sum(
        share for key, share in model.gram_shares(short).items() if key in ("user", "earlier")
    )
    assert (value, context) == pytest.approx(model.reply_and_context(short)) and context != 0
    expected = model.center + (value - model.center) * short.familiarity + context
    assert model.predict(short) == pytest.approx(max(-model.trust, min(model.trust, expected)))
    # the explanation adds up to the prediction (the bundled judge's)
    bundled = CalibratedJudge.load()
    for persona in (EN[5], ZH[5]):
        history = ({"role": "user", "content": persona.opening_line or "hi"},)
        for reply in ("Your effort shows.", "你做得很好。", " ".join(["You kept at it every week, and it shows."] * 8)):
            features = bundled.features(persona, history, reply)
            need = persona.hidden_need.value
            assert bundled.score_features(features, need).change == pytest.approx(bundled.predict_features(features, need), abs=1e-9)
    persona, history = EN[5], ({"role": "user", "content": EN[5].opening_line or "hi"},)
    # a judge file fitted before the conversation's share held steady shrinks it with the reply's
    older = judge.to_dict()
    del older["languages"]["en"]["steady_context"]
    old = CalibratedJudge.from_dict(older).models["en"]
    expected = old.center + (value + context - old.center) * short.familiarity
    assert not old.steady_context and old.predict(short) == pytest.approx(max(-old.trust, min(old.trust, expected)), abs=1e-4)
    # the centre travels with the file, and a file with an unusable one names it
    data = judge.to_dict()
    assert data["languages"]["en"]["center"] == pytest.approx(model.center, abs=1e-5)
    assert CalibratedJudge.from_dict(data).models["en"].center == pytest.approx(model.center, abs=1e-5)
    data["languages"]["en"]["center"] = float("inf")
    with pytest.raises(JudgeFileError, match=r"languages\.en\.center"):
        CalibratedJudge.from_dict(data, where="bad.json")
    with pytest.raises(ValueError, match="center_share"):
        fit_judge(samples, options=FitOptions(center_share=1.5))
    with pytest.raises(ValueError, match="negative_weight"):
        fit_judge(samples, options=FitOptions(negative_weight=0.0))


def test_the_more_a_synthetic_negative_weighs_the_closer_the_fit_comes_to_its_target():
    from dataclasses import replace

    from dialog_gym.simulators.judge_fit import _Design, _fit_model

    recorded = _planted_samples(60)
    # negatives 5 below their originals, with a word the recorded replies never use
    negatives = [replace(s, reply=s.reply + " Anyway.", change=s.change - 5.0, synthetic="decorated") for s in recorded[:30]]
    design = _Design.of(recorded + negatives, 2)
    rows = np.arange(len(design.changes))

    def gap(negative_weight: float) -> float:
        """How far the fit stays above the negatives' targets, on average."""
        model = _fit_model(design, rows, FitOptions(l2=1.0, negative_weight=negative_weight), grams=True)
        return float(np.mean([model.predict(design.features[i]) + design.offsets[i] - design.changes[i] for i in rows[~design.recorded]]))

    gaps = [gap(w) for w in (0.05, 0.5, 5.0)]
    # (the prior, which the fit adds to, already reads part of what sets these replies
    # below their targets, so the weight has less to close)
    assert gaps[0] > gaps[1] > gaps[2] and gaps[0] - gaps[2] > 0.3, gaps


@pytest.mark.parametrize(
    "content, problem",
    [
        ("{not json", "not a JSON judge file"),
        ('{"format": "something-else"}', "not a dialog-gym judge file"),
        ('{"format": "dialog-gym-judge", "format_version": 99}', "format version 99"),
        ('{"format": "dialog-gym-judge", "format_version": 1, "feature_version": 0}', "feature version 0"),
        ('{"format": "dialog-gym-judge", "format_version": 1, "feature_version": 1, "languages": {"en": {"named": 3}}}', "malformed"),
    ],
)
def test_bad_judge_files_name_the_file_and_the_problem(tmp_path, content, problem):
    path = tmp_path / "judge.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(JudgeFileError, match=problem) as error:
        CalibratedJudge.load(path)
    assert str(path) in str(error.value)


def test_unknown_judges_and_missing_languages_are_named(tmp_path):
    with pytest.raises(ValueError, match="bundled judges are"):
        CalibratedJudge.load("no-such-judge")
    with pytest.raises(FileNotFoundError, match="missing.json"):
        CalibratedJudge.load(tmp_path / "missing.json")
    judge = fit_judge(_planted_samples(), options=FitOptions(l2=1.0, tie_languages=False))
    with pytest.raises(ValueError, match="no model for language 'zh'"):
        judge.predict(ZH[0], (), "你好")


# -- distilling a real LLM judge over HTTP --------------------------------------------------
_PHRASES = {
    "en": ["That sounds exhausting.", "I hear you.", "It makes sense you feel hurt.", "You should just relax.",
           "Have you tried talking to them?", "What happened next?", "Calm down.", "That's hard, and unfair.",
           "Try to get over it.", "How are you feeling now?"],
    "zh": ["听起来你真的很委屈。", "我理解你的感受。", "你应该想开点。", "后来怎么样了？", "这确实不容易。",
           "你要学会放下。", "换作是我也会难受。", "你得冷静一下。", "现在感觉怎么样？", "辛苦你了。"],
}


def _varied_agent(language: str, salt: int):
    def agent(messages):
        turn = sum(1 for m in messages if m["role"] == "assistant")
        rng = np.random.default_rng([salt, turn, len(messages[-1]["content"])])
        picks = rng.choice(len(_PHRASES[language]), size=int(rng.integers(1, 4)), replace=False)
        return " ".join(_PHRASES[language][k] for k in picks)

    return agent


def test_calibrate_distils_an_llm_judge_recorded_over_http(tmp_path, capsys):
    """Episodes judged by the LLM simulator through a real local server; `dialog-gym calibrate`
    on their records; the fitted judge then ranks new replies as that server's judge does."""
    with ScriptedOpenAIServer() as server:
        simulator = LLMSimulator.from_backend_name("openai", model="scripted", base_url=server.base_url, api_key="sk-test")

        async def record():
            episodes = []
            for k in range(40):
                persona = (EN if k % 2 else ZH)[k // 2]
                agent = _varied_agent(persona.language, k)
                episodes.append(await aplay(persona, agent=agent, simulator=simulator, rules="rlver", seed=k))
            return episodes

        episodes = asyncio.run(record())
    with EpisodeWriter(tmp_path / "episodes.jsonl") as writer:
        for episode in episodes:
            writer.write(episode)
    out = tmp_path / "judge.json"
    assert cli(["calibrate", "--episodes", str(tmp_path / "episodes.jsonl"), "--out", str(out), "--l2", "3"]) == 0
    # The next step it names attacks the new judge with the replies it was fitted on (for the context swap).
    assert f"--simulator-path {out} --episodes {tmp_path / 'episodes.jsonl'} --quick" in capsys.readouterr().out
    judge = CalibratedJudge.load(out)
    assert judge.metadata["fit"]["samples"] == len(judge_samples(episodes)) >= 100

    rng = np.random.default_rng(7)
    for language, personas in (("en", EN), ("zh", ZH)):
        replies = [" ".join(rng.choice(_PHRASES[language], size=2, replace=False)) for _ in range(30)]
        persona = personas[3]
        history = ({"role": "user", "content": persona.opening_line},)
        predicted = [judge.predict(persona, history, r) for r in replies]
        truth = [scripted_change(r) for r in replies]
        assert np.corrcoef(predicted, truth)[0, 1] > 0.7, language

    env_simulator = make_simulator("calibrated", judge=str(out))
    assert isinstance(env_simulator, CalibratedSimulator) and env_simulator.identity()["judge"] == "judge"


def test_calibrate_refuses_records_without_an_llm_judgement(tmp_path):
    rule_run = tmp_path / "rule.jsonl"
    with EpisodeWriter(rule_run) as writer:
        for episode in play_many(list(EN)[:2]):
            writer.write(episode)
    with pytest.raises(CalibrationDataError, match="offline 'rule' simulator") as error:
        load_judge_samples(rule_run)
    assert str(rule_run) in str(error.value)

    chats = tmp_path / "chats.jsonl"
    chats.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n", encoding="utf-8")
    with pytest.raises(CalibrationDataError, match="chats.jsonl"):
        load_judge_samples(chats)
    assert cli(["calibrate", "--episodes", str(chats), "--out", str(tmp_path / "j.json")]) == 2


# -- the bundled judge in the simulator and the env ----------------------------------------
def _appraise(simulator, persona, history, reply):
    from dialog_gym.mood import RLVER

    return asyncio.run(simulator.appraise(persona, 30, history, reply, rules=RLVER, rng=np.random.default_rng(0)))


def test_the_bundled_judge_explains_itself_and_its_guards_catch_what_data_cannot_teach():
    simulator = CalibratedSimulator()
    persona = ZH[4]
    message = "我熬了三个通宵把报告改完，结果组长在会上说是他做的，我一句话都没说出来。"
    history = ({"role": "user", "content": message},)
    warm = _appraise(simulator, persona, history, "三个通宵改出来的报告，功劳却被组长拿走，换谁都会憋屈。你当时没说出口，不是你的错，那个场合本来就很难开口。后来你们还有交流吗？")
    assert warm.reasoning.startswith("Mood ") and warm.detail["contributions"] and warm.detail["guards"] == []
    pasted = _appraise(simulator, persona, history, f"我能理解你说的“{message}”，你会这样感受很正常。")
    assert "pastes my own message" in pasted.reasoning
    assert _appraise(simulator, persona, history, "asdf qwer zxcv uiop").delta <= -15
    # A line of dashes in a long formatted reply is an LLM's style, not spam (the rule
    # simulator's gate calls it spam).
    formatted = "我懂你的委屈。\n————————————\n熬了三个通宵，功劳却被拿走，这种事放在谁身上都难受。你愿意多说说那天会上的情况吗？"
    assert _appraise(simulator, persona, history, formatted).delta > -15
    from dialog_gym.simulators import RuleSimulator

    assert _appraise(RuleSimulator(), persona, history, formatted).delta <= -15


_JUDGE_THE_CONTRAST_SETS = """
import hashlib, json
from dialog_gym.personas import PersonaSet
from dialog_gym.redteam import load_contrast_sets
from dialog_gym.simulators.calibrated import CalibratedSimulator
personas, simulator = {p.id: p for p in PersonaSet.bundled()}, CalibratedSimulator()
digest = hashlib.sha256()
for context in load_contrast_sets():
    for reply in context.replies:
        appraisal = simulator.judge_reply(personas[context.persona_id], context.history, reply)
        digest.update(json.dumps([appraisal.delta, appraisal.reasoning, appraisal.detail], sort_keys=True).encode())
print(digest.hexdigest())
"""


def test_the_judge_says_the_same_under_any_string_hash_seed():
    """Sets of words iterate in an order that Python's string hashing seeds anew in every
    process; what the judge sums over them (the user's words taken up) must not depend on it,
    or the same seed would record different episodes in two runs."""
    import os
    import subprocess
    import sys

    def digest(seed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run([sys.executable, "-c", _JUDGE_THE_CONTRAST_SETS], env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        return run.stdout.strip()

    assert len({digest(seed) for seed in ("0", "1", "2")}) == 1


def test_v1_envs_judge_with_the_calibrated_simulator_and_v0_with_the_rule_one():
    import gymnasium as gym

    v1 = gym.make("RLVER-Empathy-v1", language="en")
    v0 = gym.make("RLVER-Empathy-v0", language="en")
    assert isinstance(v1.unwrapped.simulator, CalibratedSimulator)
    assert v0.unwrapped.simulator.identity()["simulator"] == "rule"
    v1.reset(seed=0)
    _, _, _, _, info = v1.step("That sounds exhausting, and it makes sense that it weighs on you. What happened?")
    assert info["privileged"]["reasoning"].startswith("Mood ")


def test_the_paste_guards_prescreen_finds_every_paste_the_full_match_finds():
    """`_pasted_message` skips the quadratic match where no block of the message occurs in the
    reply; on replies built to paste every share of a message, at every offset, the verdict
    is the full match's."""
    import difflib
    import re as regex

    from dialog_gym.simulators.calibrated import _PASTE_SHARE, _pasted_message

    rng = np.random.default_rng(7)
    words = "the a my job boss left said never again why it hurts so much and now I do not know".split()
    found = 0
    for _ in range(400):
        message = " ".join(rng.choice(words, size=int(rng.integers(3, 25))))
        start, size = int(rng.integers(0, len(message))), int(rng.integers(1, len(message) + 1))
        reply = " ".join(rng.choice(words, size=int(rng.integers(0, 8)))) + " " + message[start : start + size] + " ok"
        m, r = regex.sub(r"\s+", " ", message.strip()), regex.sub(r"\s+", " ", reply.strip())
        full = difflib.SequenceMatcher(None, m, r, autojunk=False).find_longest_match(0, len(m), 0, len(r))
        expected = len(m) >= 12 and full.size >= _PASTE_SHARE * len(m)
        assert bool(_pasted_message(reply, message)) is expected, (message, reply)
        found += expected
    assert found > 50  # the pastes were there to find
