"""The rule simulator: sensible appraisals (its canaries are in test_canaries.py)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from dialog_gym.mood import RLVER, SAGE
from dialog_gym.personas import CharacterType, HiddenNeed, PersonaSet
from dialog_gym.simulators import RuleSimulator, appraise

def _persona(need, kind=CharacterType.PASSIVE, language="en"):
    return PersonaSet.bundled().filter(hidden_need=need, character_type=kind, language=language)[0]


def _history(persona):
    return [{"role": "user", "content": persona.opening_line}, {"role": "assistant", "content": "I'm here for you."}, {"role": "user", "content": persona.disclosures[0]}]


def test_fitting_the_hidden_need_beats_generic_comfort():
    persona = _persona(HiddenNeed.NOT_AT_FAULT)
    history = _history(persona)
    fits = appraise(persona, history, "From what you've told me, this is not your fault. You had every right to be upset.")
    generic = appraise(persona, history, "That sounds hard. I'm sorry you're going through it.")
    blames = appraise(persona, history, "Honestly, you shouldn't have done that. It was partly your fault.")
    assert fits.delta > generic.delta > blames.delta
    assert blames.delta <= -10 and blames.fit == "hurt"


def test_advice_only_pays_when_it_is_wanted():
    wants = _persona(HiddenNeed.PRACTICAL_ADVICE)
    vents = _persona(HiddenNeed.ATTENTIVE_LISTENING)
    advice = "Maybe you could write down what you need and raise it with them this week. Would that first step help?"
    assert appraise(wants, _history(wants), advice).delta > appraise(vents, _history(vents), advice).delta


def test_negative_characters_punish_harder_than_passive_ones():
    rude = "Calm down, it's not a big deal. Just move on."
    negative = _persona(HiddenNeed.DEEP_EMPATHY, CharacterType.NEGATIVE)
    passive = _persona(HiddenNeed.DEEP_EMPATHY, CharacterType.PASSIVE)
    assert appraise(negative, _history(negative), rude).delta < appraise(passive, _history(passive), rude).delta < 0


@pytest.mark.parametrize("reply", ["", "   ", "!!!!!!!!!!", "asdf qwer zxcv uiop hjkl", "aaaaaaaaaaaaaaaaaaaa", "😀" * 20])
def test_non_language_feels_very_bad(reply):
    persona = _persona(HiddenNeed.DEEP_EMPATHY)
    assert appraise(persona, _history(persona), reply).delta <= -15


def test_appraisal_is_deterministic_and_replies_depend_only_on_the_seed():
    persona = _persona(HiddenNeed.MOTIVE_ANALYSIS)
    simulator = RuleSimulator()
    reply = "Maybe they were afraid of losing face. Why do you think they reacted like that?"

    def react(seed):
        async def both():
            rng = np.random.default_rng(seed)
            appraisal = await simulator.appraise(persona, 30, _history(persona), reply, rules=SAGE, rng=rng)
            response = await simulator.respond(persona, _history(persona), reply, appraisal, mood=30 + appraisal.delta, rng=rng)
            return appraisal, response

        return asyncio.run(both())

    assert react(5) == react(5)
    assert len({react(s)[1].text for s in range(20)}) > 1
    assert len({(react(s)[0].delta, react(s)[0].reasoning) for s in range(20)}) == 1


def test_goodbye_at_the_extremes():
    persona = _persona(HiddenNeed.DEEP_EMPATHY)
    simulator = RuleSimulator()
    history, rng = _history(persona), np.random.default_rng(0)
    appraisal = asyncio.run(simulator.appraise(persona, 3, history, "asdf qwer zxcv", rules=RLVER, rng=rng))
    response = asyncio.run(simulator.respond(persona, history, "asdf qwer zxcv", appraisal, mood=max(0, 3 + appraisal.delta), rng=rng))
    assert appraisal.delta < 0 and response.wants_to_end


def test_hidden_need_never_spoken():
    from dialog_gym.simulators import responses

    names = [n.value for n in HiddenNeed] + [n.value.replace("_", " ") for n in HiddenNeed]
    lines = [line for lang in responses.HINTS.values() for group in lang.values() for line in group]
    lines += [line for lang in responses.REACTIONS.values() for fit in lang.values() for kind in fit.values() for line in kind]
    for line in lines:
        assert not any(name in line.lower() for name in names), line


def test_a_reply_in_the_other_language_is_judged_in_its_language_with_a_small_cost():
    zh = _persona(HiddenNeed.NOT_AT_FAULT, language="zh")
    history = [{"role": "user", "content": zh.opening_line}]
    english = appraise(zh, history, "From what you've told me, this is not your fault. You had every right to be upset.")
    gibberish = appraise(zh, history, "asdf qwer zxcv uiop hjkl")
    assert "another language" in english.reasoning and english.delta > gibberish.delta
    chinese = appraise(zh, history, "照你说的，这件事不是你的错，你有权这样感受。")
    assert chinese.delta > english.delta
