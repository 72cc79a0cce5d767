"""The opt-in sense reader: whether a reply says something about the user's words it takes up."""

import pytest

from dialog_gym.personas import PersonaSet
from dialog_gym.redteam.salad import LINKED_ANEW, PAIRED, KeywordSalad
from dialog_gym.simulators import CalibratedSimulator, make_simulator
from dialog_gym.simulators.sense import SenseReader, SenseReading, swapped
from model_helpers import require_smollm2

MESSAGE = (
    "My landlord raised the rent again this month, and the heater in my bedroom broke the same week. "
    "I work nights at the bakery and I can't afford both."
)
HISTORY = ({"role": "user", "content": MESSAGE},)
# The attack's salad (`redteam.KeywordSalad`): three of the user's words in a stock frame, and
# one of nouns only, whose words keep their kinds wherever they are put.
SALAD = "I hear you about bedroom with heater and raised. That makes so much sense."
NOUN_SALAD = "I hear you about landlord with heater and bakery."
# The same three words, each two joined by a word of the salad's own, which the judge cannot
# tell from a reflection's join (`test_judge_attack.CHAINED_LEVEL`).
CHAIN = "I hear you about bedroom weighing on heater tangled with raised. That makes so much sense."
REFLECTION = "Your landlord raised the rent and then the heater broke, in the same week. That's a lot to carry on night shifts."


def test_swapped_replaces_whole_words_and_keeps_the_rest():
    assert swapped("The Heater broke; heaters too.", {"heater": "rent"}, "en") == "The rent broke; heaters too."
    assert swapped("房租涨了，暖气也坏了。", {"房租": "面包", "暖气": "卧室"}, "zh") == "面包涨了，卧室也坏了。"


@pytest.fixture(scope="module")
def reader():
    require_smollm2()
    return SenseReader("smollm2")


@pytest.mark.slow
def test_a_salad_says_less_about_the_users_words_than_a_reflection(reader):
    assert SALAD == KeywordSalad(PAIRED, together=True, words=3)(list(HISTORY))
    assert CHAIN == KeywordSalad(LINKED_ANEW, together=True, words=3, linked=True)(list(HISTORY))
    salad, nouns, chain, reflection = (reader.read(HISTORY, reply, "en") for reply in (SALAD, NOUN_SALAD, CHAIN, REFLECTION))
    assert set(salad.taken) == set(chain.taken) == {"bedroom", "heater", "raised"} and set(nouns.taken) == {"landlord", "heater", "bakery"}
    assert {"landlord", "heater", "rent"} <= set(reflection.taken)
    assert max(salad.gain, nouns.gain, chain.gain) < reader.gain_ranges["en"][0] + 1 < reader.gain_ranges["en"][1] < reflection.gain
    assert salad.keeps == chain.keeps == 0.0 and nouns.keeps < 0.25 and reflection.keeps == 1.0
    assert reader.read(HISTORY, SALAD, "en") is salad  # cached
    nothing = reader.read(HISTORY, "That sounds so hard. I'm here.", "en")
    assert nothing == SenseReading((), None, 1.0)
    one = reader.read(HISTORY, "The bakery, and now this. How are you holding up?", "en")  # a word named alone
    assert one == SenseReading(("bakery",), None, 1.0)


@pytest.mark.slow
def test_the_simulator_withholds_uptake_pay_from_a_salad_only(reader):
    persona = next(iter(PersonaSet.bundled().filter(split="test", language="en")))
    plain, sensing = CalibratedSimulator(), CalibratedSimulator(sense=reader)
    salad = [sim.judge_reply(persona, HISTORY, SALAD) for sim in (plain, sensing)]
    reflection = [sim.judge_reply(persona, HISTORY, REFLECTION) for sim in (plain, sensing)]
    assert salad[1].delta < salad[0].delta
    assert "says nothing about them" in salad[1].reasoning and "says nothing about them" not in salad[0].reasoning
    assert reflection[1].delta == reflection[0].delta
    assert sensing.identity()["sense"]["model"] == "smollm2" and "sense" not in plain.identity()
    assert "SenseReader(model='smollm2'" in repr(sensing)


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="swaps"):
        SenseReader(swaps=0)
    with pytest.raises(ValueError, match=r"gain_ranges\['en'\] must rise"):
        SenseReader(gain_ranges={"en": (8.0, 4.0)})
    with pytest.raises(ValueError, match="'fr'"):
        SenseReader(gain_ranges={"en": (2.0, 6.0), "fr": (2.0, 6.0)})
    with pytest.raises(TypeError, match="sense"):
        make_simulator("calibrated", sens="smollm2")


@pytest.mark.slow
def test_chinese_is_read_too_and_a_language_left_out_keeps_its_pay(reader):
    history = ({"role": "user", "content": "房东又涨房租了，卧室的暖气也坏了，我在面包店上夜班，实在负担不起。"},)
    salad = "我听到你说房东和暖气还有面包。"
    reflection = "房东刚涨了房租，暖气又坏了，还要上夜班，这一周压在你身上的东西太多了。"
    read_salad, read_reflection = reader.read(history, salad, "zh"), reader.read(history, reflection, "zh")
    assert {"房东", "暖气"} <= set(read_salad.taken) and {"房东", "房租", "暖气"} <= set(read_reflection.taken)
    assert read_salad.gain < 0.5 < 2.5 < read_reflection.gain  # SmolLM2 reads Chinese less surely than English
    assert read_salad.keeps == 0.0 and read_reflection.keeps > 0.75
    english_only = SenseReader("smollm2", gain_ranges={"en": (2.0, 6.0)})
    assert english_only.read(history, salad, "zh") == SenseReading((), None, 1.0)


@pytest.mark.slow
def test_gym_make_takes_the_reader_as_a_simulator_option(reader):
    import gymnasium as gym

    import dialog_gym  # noqa: F401  (registers the ids)

    moods = []
    for options in ({}, {"sense": reader}):
        env = gym.make("RLVER-Empathy-v2", language="en", simulator_options=options)
        opening, _ = env.reset(seed=0)
        salad = KeywordSalad(PAIRED, together=True, words=3)([{"role": "user", "content": opening}])
        assert env.unwrapped.config.simulator.sense is options.get("sense")
        moods.append(env.step(salad)[4]["mood"])
        env.close()
    assert moods[1] < moods[0]  # the salad's pay for the user's words, withheld
