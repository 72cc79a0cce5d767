"""The opt-in stance reader: a language model's reading of whether a reply is unkind to the user."""

import json

import numpy as np
import pytest

from dialog_gym.personas import PersonaSet
from dialog_gym.simulators import CalibratedSimulator
from dialog_gym.simulators.judge_knowledge import ACT_BANDS, KIND_FLOOR, unkind_act
from dialog_gym.simulators.stance import CLASSES, HEAD, StanceHead, StanceReader, corpus_classes, fit_head
from model_helpers import require_smollm2

# Written for this test (in no fit): a message, a kind answer and a blaming one that says
# nothing a lexicon knows and that the v2 judge's n-grams read as kind.
MESSAGE = "My wife says I never listen to her, and last night she cried because I forgot our anniversary dinner."
KIND = "Forgetting the dinner must have hurt her, and seeing her cry must have hurt you too. What do you want to say to her?"
HIDDEN_BLAME = "Well, she's been telling you for a while, so last night can't have come out of nowhere."
HISTORY = ({"role": "user", "content": MESSAGE},)


def test_a_fitted_head_reads_the_classes_it_was_fitted_on():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(len(CLASSES), 8)) * 3
    labels = [CLASSES[k % len(CLASSES)] for k in range(200)]
    features = np.array([centres[CLASSES.index(c)] + rng.normal(size=8) for c in labels])
    mean, scale, weights, bias = fit_head(features, labels)
    head = StanceHead("toy", (1,), {"en": mean}, {"en": scale}, {"en": weights}, {"en": bias})
    predicted = head.probabilities(features, "en").argmax(1)
    assert np.mean([CLASSES[k] == c for k, c in zip(predicted, labels)]) > 0.95
    assert np.allclose(head.probabilities(features, "en").sum(1), 1.0)
    assert corpus_classes("blame") == "blame" and corpus_classes("platitude") == corpus_classes("supportive") == "kind"


def test_a_head_file_round_trips_and_a_bad_one_is_named(tmp_path):
    rng = np.random.default_rng(1)
    head = StanceHead("toy", (2, 3), {"en": rng.normal(size=6)}, {"en": rng.random(6) + 0.5}, {"en": rng.normal(size=(6, 4))}, {"en": rng.normal(size=4)})
    path = tmp_path / "head.json"
    path.write_text(json.dumps(head.to_dict()))
    again = StanceHead.load(path)
    x = rng.normal(size=(5, 6))
    assert np.allclose(again.probabilities(x, "en"), head.probabilities(x, "en"), atol=1e-5)
    assert again.layers == (2, 3) and again.width == 6 and again.model == "toy" and len(again.fingerprint) == 12
    path.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ValueError, match="not a stance head"):
        StanceHead.load(path)
    broken = head.to_dict()
    broken["languages"]["en"]["weights"] = broken["languages"]["en"]["mean"]  # 6 numbers for 6 x 4
    path.write_text(json.dumps(broken))
    with pytest.raises(ValueError, match="a broken stance head"):
        StanceHead.load(path)
    with pytest.raises(ValueError, match="cannot read a stance head"):
        StanceHead.load(tmp_path / "missing.json")
    with pytest.raises(ValueError, match=r"classes must be among .*'rude'"):
        fit_head(np.zeros((2, 3)), ["kind", "rude"])
    with pytest.raises(ValueError, match="3 rows of features but 2 classes"):
        fit_head(np.zeros((3, 3)), ["kind", "blame"])


def test_the_bundled_head_reads_smollm2s_two_layers_in_both_languages():
    head = StanceHead.load(HEAD)
    assert head.model == "smollm2" and head.layers == (10, 15) and head.width == 2 * 576
    assert set(head.weights) == {"en", "zh"}


@pytest.fixture(scope="module")
def reader():
    require_smollm2()
    return StanceReader("smollm2")


def test_bad_settings_are_named(reader, tmp_path):
    with pytest.raises(ValueError, match=r"sure\['en'\] must be a probability"):
        StanceReader(sure={"en": 1.5})
    with pytest.raises(ValueError, match=r"among the head's \['en', 'zh'\], got \['fr'\]"):
        StanceReader(sure={"fr": 0.9})
    narrow = StanceHead("other", (10, 15), {"en": np.zeros(4)}, {"en": np.ones(4)}, {"en": np.zeros((4, 4))}, {"en": np.zeros(4)})
    path = tmp_path / "narrow.json"
    path.write_text(json.dumps(narrow.to_dict()))
    with pytest.raises(ValueError, match="fit a head for it"):
        StanceReader(head=path)
    features_only = StanceReader(head=None)
    with pytest.raises(ValueError, match="reads features only"):
        features_only.read(HISTORY, KIND, "en")


@pytest.mark.slow
def test_the_reader_tells_hidden_blame_from_a_kind_reply(reader):
    kind, blame = (reader.read(HISTORY, reply, "en") for reply in (KIND, HIDDEN_BLAME))
    assert kind.act is None and kind.unkind < 0.2
    assert blame.act == "blame" and blame.unkind >= reader.sure["en"]
    assert reader.read(HISTORY, KIND, "en") is kind  # cached
    assert reader.read(HISTORY, KIND, "fr") is None  # a language it does not read
    assert reader.read(HISTORY, "", "en").act is None  # no reply, no blame
    small = StanceReader(cache_size=1)
    both = small.read_many([(HISTORY, KIND), (HISTORY, HIDDEN_BLAME), (HISTORY, KIND)], "en")
    assert [r.act for r in both] == [None, "blame", None]  # more new replies than the cache holds


@pytest.mark.slow
def test_the_simulator_places_what_the_reader_reads_as_unkind_and_leaves_kind_replies(reader):
    persona = next(iter(PersonaSet.bundled().filter(split="test", language="en")))
    plain, reading = CalibratedSimulator(), CalibratedSimulator(stance=reader)
    assert unkind_act(plain.judge.features(persona, HISTORY, HIDDEN_BLAME)) is None  # the judge alone misses it
    missed, placed = (sim.judge_reply(persona, HISTORY, HIDDEN_BLAME) for sim in (plain, reading))
    low, high = ACT_BANDS["blame"]
    assert missed.detail["change"] > KIND_FLOOR[1] > max(top for _, top in ACT_BANDS.values())  # above every band
    assert low <= placed.detail["change"] <= high
    assert "puts the blame on me" in placed.reasoning and "puts the blame on me" not in missed.reasoning
    assert reading.judge_reply(persona, HISTORY, KIND).delta == plain.judge_reply(persona, HISTORY, KIND).delta
    assert reading.identity()["stance"]["model"] == "smollm2" and "stance" not in plain.identity()
    assert reading.identity()["stance"]["head"] == {"model": "smollm2", "fingerprint": StanceHead.load(HEAD).fingerprint}
    assert "StanceReader(model='smollm2'" in repr(reading)


@pytest.mark.slow
def test_chinese_is_read_too(reader):
    history = ({"role": "user", "content": "我把结婚纪念日忘了，老婆昨晚哭了，说我从来不听她说话。"},)
    kind = reader.read(history, "忘了纪念日，看到她哭，你心里一定也不好受。你想跟她说些什么？", "zh")
    blame = reader.read(history, "纪念日一年前就在日历上了。她说你从来不听，说的就是这种事。", "zh")
    assert kind.act is None and blame.unkind > kind.unkind


@pytest.mark.slow
def test_gym_make_takes_the_reader_as_a_simulator_option(reader):
    import gymnasium as gym

    import dialog_gym  # noqa: F401  (registers the ids)

    env = gym.make("RLVER-Empathy-v2", language="en", simulator_options={"stance": reader})
    env.reset(seed=0)
    assert env.unwrapped.config.simulator.stance is reader
    env.close()
