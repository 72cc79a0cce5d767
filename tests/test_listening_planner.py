"""The listening response planner: the offline user answers what the agent's reply says."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dialog_gym.mood import is_goodbye
from dialog_gym.personas import CharacterType, Facets, HiddenNeed, Persona
from dialog_gym.simulators import responses
from dialog_gym.simulators.base import Appraisal
from dialog_gym.simulators.planner import ResponsePlanner, make_planner
from dialog_gym.simulators.recital import RecitingPlanner
from dialog_gym.simulators.reading import read_reply, required_text
from dialog_gym.eval.realism import repeated_lines
from dialog_gym.simulators.story import leaks, story
from dialog_gym.testing import make_persona

FACETS = {
    "en": Facets(
        people=("My landlord, Mr. Okafor, answers texts only on Sundays.", "My roommate Jess already found a new place."),
        when=("The letter came on the second of the month, with two weeks' notice.",),
        feelings=("I check my bank app three times a day now.", "My stomach drops every time the doorbell rings."),
        tried=("I already called the tenants' union; they put me on hold for forty minutes.",
               "I asked Mr. Okafor for a payment plan and he laughed."),
        wants=("I'd like to stay until the lease ends in June, that's all.", "Some way to keep my deposit out of this."),
        worries=("If I move, I lose the kitchen shifts near the flat.", "I'm scared the deposit is just gone."),
    ),
    "zh": Facets(
        people=("房东姓王，只在周日回消息。", "室友小杨已经找好新房子了。"),
        when=("通知是这个月二号到的，只给了两周。",),
        feelings=("我现在一天看三遍银行余额。", "一听见门铃响我心里就一紧。"),
        tried=("我给租户协会打过电话，等了四十分钟没人接。", "我跟王房东商量分期付，他直接笑了。"),
        wants=("我就想住到六月合同到期，就这点要求。", "押金能别扯进来就好。"),
        worries=("搬走的话，店里的排班就没了。", "我怕押金就这么没了。"),
    ),
}
DISCLOSURES = {
    "en": ("The landlord still holds a two-month deposit.", "The new rent would eat half my wages.", "I work nights at a diner down the road."),
    "zh": ("押金还在房东手里。", "新房租要吃掉我一半工资。", "我在路口那家饭馆上夜班。"),
}


def persona(language="en", kind=CharacterType.NEGATIVE, need=HiddenNeed.PRACTICAL_ADVICE, facets=True) -> Persona:
    base = make_persona(language)
    return dataclasses.replace(
        base, character_type=kind, hidden_need=need, disclosures=DISCLOSURES[language],
        keywords=("deposit", "Mr. Okafor") if language == "en" else ("押金", "王房东"),
        facets=FACETS[language] if facets else Facets(),
    )


def answer(p, reply, *, fit="ok", mood=45, history=None, seed=0, style="vanilla"):
    history = history if history is not None else [{"role": "user", "content": p.opening_line}]
    appraisal = Appraisal(2 if fit in ("ok", "met") else -3, fit, "")
    return ResponsePlanner(style).respond(p, history, reply, appraisal, mood=mood, rng=np.random.default_rng(seed)).text


def play(p, replies, *, fits=None, mood=45, style="vanilla", seed=0):
    """A conversation of `replies`, each landing with the given fit; the user's messages."""
    history = [{"role": "user", "content": p.opening_line}]
    rng = np.random.default_rng(seed)
    planner = ResponsePlanner(style)
    for k, reply in enumerate(replies):
        fit = fits[k] if fits else "ok"
        text = planner.respond(p, history, reply, Appraisal(1, fit, ""), mood=mood, rng=rng).text
        history += [{"role": "assistant", "content": reply}, {"role": "user", "content": text}]
    return [m["content"] for m in history if m["role"] == "user"]


QUESTIONS = {
    "en": {
        "people": "Who else is involved in this, and how do you get along with them?",
        "when": "When did this start, and how long has it been going on?",
        "feelings": "How are you feeling about it right now?",
        "tried": "What have you already tried?",
        "wants": "What would you want to happen, ideally?",
        "worries": "What worries you most about it?",
    },
    "zh": {
        "people": "这件事里还牵扯到谁？你们关系怎么样？",
        "when": "这是什么时候开始的？持续多久了？",
        "feelings": "你现在心里是什么感觉？",
        "tried": "你已经试过哪些办法了？",
        "wants": "你最希望事情变成什么样？",
        "worries": "你最担心的是什么？",
    },
}


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("topic", ["people", "when", "feelings", "tried", "wants", "worries"])
def test_a_question_is_answered_from_the_facet_it_asks_about(language, topic):
    p = persona(language)
    text = answer(p, QUESTIONS[language][topic])
    assert any(line in text for line in p.facets.lines(topic)), text


@pytest.mark.parametrize("language", ["en", "zh"])
def test_what_happened_gets_the_story_in_order(language):
    p = persona(language)
    asked = {"en": "What happened, exactly?", "zh": "具体发生了什么？"}[language]
    said = play(p, [asked, asked], fits=["ok", "ok"])
    assert DISCLOSURES[language][0] in said[1] and DISCLOSURES[language][1] in said[2]


def test_a_persona_without_facets_answers_from_its_story():
    p = persona(facets=False)
    text = answer(p, QUESTIONS["en"]["people"])
    assert any(line in text for line in DISCLOSURES["en"]), text
    assert "already told you" not in text


@pytest.mark.parametrize("language", ["en", "zh"])
def test_advice_already_tried_gets_what_happened(language):
    p = persona(language)
    reply = {"en": "Maybe you could call the tenants' union about it this week.", "zh": "你可以这周给租户协会打个电话问问。"}[language]
    text = answer(p, reply, fit="missed")
    assert p.facets.tried[0] in text
    leads = responses.TRIED_THAT[language]["negative"]
    assert any(text.startswith(lead) for lead in leads), text


def test_advice_that_fits_is_taken_up_with_a_follow_up():
    p = persona()
    text = answer(p, "You could write to the city's housing office and ask whether two weeks' notice is even legal.", fit="ok")
    assert any(line in text for line in responses.TAKE_UPS["en"]["negative"]), text
    assert any(line in text for line in responses.FOLLOW_UPS["en"]["negative"]) and text.endswith("?")
    passive = persona(kind=CharacterType.PASSIVE)
    text = answer(passive, "You could write to the city's housing office and ask whether two weeks' notice is even legal.", fit="ok")
    assert any(line in text for line in responses.TAKE_UPS["en"]["passive"]) and "?" not in text


def test_advice_that_does_not_fit_is_pushed_back_on():
    p = persona(need=HiddenNeed.ATTENTIVE_LISTENING)
    text = answer(p, "You should make a budget and look at cheaper flats online.", fit="missed")
    assert any(text.startswith(lead) for lead in responses.PUSHBACK_LEADS["en"]["negative"]), text
    assert any(line in text for line in p.facets.tried), text


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_wrong_guess_at_a_feeling_is_corrected_and_a_right_one_confirmed(language):
    p = persona(language)  # its own words: scared (worries), a stomach that drops
    wrong = {"en": "You must be so ashamed.", "zh": "你一定很丢人吧。"}[language]
    right = {"en": "You must be so scared.", "zh": "你一定很害怕吧。"}[language]
    corrected, confirmed = answer(p, wrong), answer(p, right)
    assert corrected.lower().startswith(("not ashamed", "i wouldn't say ashamed", "ashamed? not really")) or "也不是丢人" in corrected \
        or "丢人" in corrected.split("，")[0], corrected
    assert "scared" in confirmed.lower() or "害怕" in confirmed
    assert any(line in confirmed for line in p.facets.feelings)


def test_a_detail_the_agent_names_is_picked_up():
    p = persona()
    text = answer(p, "That deposit sounds like it's weighing on you.", fit="ok")
    assert "deposit" in text.lower() and any(line in text for line in (*p.facets.lines("worries"), *p.facets.wants, *DISCLOSURES["en"]))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_off_topic_puzzles_and_a_dismissal_closes_the_user_up(language):
    p = persona(language)
    off_topic = {"en": "By the way, did you catch the football match last night?", "zh": "对了，你昨晚看球赛了吗？踢得真精彩。"}[language]
    text = answer(p, off_topic, fit="missed")
    assert any(_fill(line) in text for line in responses.CONFUSED[language]["negative"]), text
    dismissal = {"en": "Honestly, it's not a big deal. Just move on. Who cares?", "zh": "这不是什么大事，想开点，向前看吧。谁在乎呢？"}[language]
    text = answer(p, dismissal, fit="missed")
    assert not any(line in text for line in (*DISCLOSURES[language], *(l for t in FACETS[language].__dict__.values() for l in t)))


def _fill(line: str) -> str:
    return line.split("{")[0]


def test_the_story_comes_out_at_the_pace_the_agent_earns():
    p = persona()
    warm = "That sounds so hard. I'm here, tell me more."
    dismissive = "Everything happens for a reason. Just move on."
    engaged = play(p, [warm, warm, warm], fits=["ok", "ok", "ok"])
    assert sum(any(d in m for d in DISCLOSURES["en"]) for m in engaged[1:]) == 3
    after_dismissal = play(p, [dismissive, warm], fits=["missed", "ok"])
    assert not any(d in after_dismissal[1] + after_dismissal[2] for d in DISCLOSURES["en"])


def test_avoidant_users_deflect_feelings_when_a_reply_misses():
    p = persona(kind=CharacterType.AVOIDANT)
    missed = answer(p, QUESTIONS["en"]["feelings"], fit="missed")
    assert any(line in missed for line in responses.DEFLECTIONS["en"]["avoidant"]), missed
    landed = answer(p, QUESTIONS["en"]["feelings"], fit="ok")
    assert any(line in landed for line in p.facets.feelings)


def test_hints_in_the_vanilla_style_only_and_never_the_need_by_name():
    p = persona(need=HiddenNeed.MOTIVE_ANALYSIS)
    replies = ["I hear you.", "That sounds hard.", "I'm sorry, that's a lot.", "Okay, I see.", "Right, go on."] * 2
    hints = (*responses.HINTS["en"]["motive_analysis"], *responses.MORE_HINTS["en"]["motive_analysis"], *p.facets.wants)
    vanilla = play(p, replies, fits=["missed"] * len(replies))
    challenging = play(p, replies, fits=["missed"] * len(replies), style="challenging")
    assert sum(any(h in m for h in hints) for m in vanilla) >= 3
    assert not any(any(h in m for h in hints) for m in challenging)
    assert not any(leaks(m, p) for m in vanilla + challenging)


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("kind", list(CharacterType))
def test_no_line_is_said_twice_in_a_long_episode(language, kind):
    p = persona(language, kind=kind)
    replies = list(QUESTIONS[language].values()) * 3 + ["ok"] * 6
    said = play(p, replies, fits=["ok", "missed", "met", "hurt"] * 6, mood=35)
    assert repeated_lines(said, language) == 0
    if kind is CharacterType.PASSIVE:
        assert not any("?" in m or "？" in m for m in said[1:])


def test_the_same_seed_gives_the_same_words_and_the_reply_changes_them():
    p = persona()
    reply = "That sounds hard. Who else is involved?"
    assert answer(p, reply, seed=3) == answer(p, reply, seed=3)
    kinds = [QUESTIONS["en"]["people"], QUESTIONS["en"]["tried"], "You should move out.", "Did you see the game last night?",
             "That makes so much sense.", "Everything happens for a reason.", "You must be furious."]
    assert len({answer(p, r, seed=3) for r in kinds}) == len(kinds)


def test_goodbye_at_the_extremes_and_reciting_planner_is_0x():
    p = persona()
    assert is_goodbye(answer(p, "Thank you for everything.", fit="met", mood=100))
    assert is_goodbye(answer(p, "Whatever.", fit="hurt", mood=5))
    assert isinstance(make_planner("reciting", "vanilla"), RecitingPlanner)
    with pytest.raises(ValueError, match="unknown response planner"):
        make_planner("chatty", "vanilla")


def _template_lines():
    tables = [responses.MORE_REACTIONS, responses.ANSWER_LEADS]
    lines = [responses.REACTIONS]
    for name in ("DEFLECTIONS", "REFUSALS", "TRIED_THAT", "PUSHBACK_LEADS", "PUSHBACKS", "TAKE_UPS", "FOLLOW_UPS", "CONFUSED", "OVERWHELMED"):
        lines.append(getattr(responses, name))
    for name in ("EXHAUSTED", "TOLD_YOU_TRIED", "NOT_TRIED", "CONFIRMS", "CORRECTIONS", "CORRECTIONS_UNKNOWN", "PICKUP_LEADS",
                 "OPINION_LEADS", "LISTENING_CONTINUATIONS", "GENERIC_CONTINUATIONS"):
        lines.append(getattr(responses, name))
    lines += [responses.HINTS, responses.MORE_HINTS]

    def walk(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                yield from walk(value, (*path, key))
        elif isinstance(node, (tuple, list)):
            for value in node:
                yield path, value
    for table in [*tables, *lines]:
        yield from walk(table, ())


def test_no_template_names_a_need_says_goodbye_or_makes_a_passive_user_ask():
    for path, line in _template_lines():
        assert not is_goodbye(line), (path, line)
        language = path[0]
        for need in HiddenNeed:
            p = dataclasses.replace(make_persona(language), hidden_need=need)
            assert not leaks(line, p), (path, need, line)
        if "passive" in path:
            assert "?" not in line and "？" not in line, (path, line)


def test_lines_after_a_miss_do_not_sound_pleased_to_the_judge():
    """The judge reads the user's last message (pleased or displeased words): the lines said
    when a reply missed or hurt must not sound pleased, or a bad reply would buy a better
    appraisal of the next one."""
    from dialog_gym.simulators import judge_features

    lexicon = getattr(judge_features, "_LEXICON", None)
    if lexicon is None:
        pytest.skip("the judge no longer exposes its user lexicons here")
    unhappy = [responses.REACTIONS, responses.MORE_REACTIONS, responses.DEFLECTIONS, responses.REFUSALS, responses.PUSHBACKS,
               responses.PUSHBACK_LEADS, responses.CONFUSED, responses.EXHAUSTED, responses.TRIED_THAT, responses.TOLD_YOU_TRIED]
    for table in unhappy:
        for language, by_key in table.items():
            items = by_key.items() if isinstance(by_key, dict) else [("", by_key)]
            for key, value in items:
                if key in ("met", "ok"):
                    continue
                groups = value.values() if isinstance(value, dict) else [value]
                for group in groups:
                    for line in group:
                        if line not in responses.READ_AS_PLEASED:  # the reciting planner's; the listening one leaves them out
                            assert not lexicon[language]["user_positive"].search(line.lower()), line
    for language in ("en", "zh"):
        for kind in ("negative", "passive", "avoidant"):
            for line in responses.REACTIONS[language]["met"][kind] + responses.MORE_REACTIONS[language]["met"][kind]:
                assert not lexicon[language]["user_negative"].search(line.lower()), line


def test_the_story_leaves_out_lines_that_name_the_need_or_say_goodbye():
    p = dataclasses.replace(persona(), facets=dataclasses.replace(FACETS["en"], wants=("I just want practical advice, honestly.", "Bye then, I'll go now.")))
    s = story(p)
    assert s.facts["wants"] == ()


def test_reading_a_reply():
    r = read_reply("You must be furious. Have you tried calling the bank? Who else knows?", "en", ("bank",))
    assert [q.topic for q in r.questions] == ["tried", "people"] and r.guess == ("anger", "furious") and r.details == ("bank",)
    assert "calling the bank" in r.advice and not r.dismissive and not r.off_topic
    assert read_reply("You're not alone in this.", "en").guess is None
    assert read_reply("What are you most worried about?", "en").guess is None
    assert read_reply("Did you watch the game last night? Great match.", "en", (), ["My car died. Great."]).off_topic
    zh = read_reply("你一定很委屈吧。当时还有谁在场？", "zh")
    assert zh.guess == ("hurt", "委屈") and [q.topic for q in zh.questions] == ["people"]
    assert read_reply("想开点，都会过去的。", "zh").dismissive


def test_required_text_is_in_every_match():
    assert required_text(r"\bi (?:would )?(?:suggest|recommend)\b") == ("suggest", "recommend")
    assert required_text(r"心里.{0,4}(?:难受|苦)") == ("心里",)
    assert required_text(r"(?<!不是)你的错") == ("你的错",)
    assert required_text(r"a|b") == ()
    assert required_text(r"\bmakes? (?:total |complete )?sense\b") == ("sense",)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_persona_with_a_scene_only_still_talks(language):
    """An imported profile (RLVER's) has a scene and no keywords, disclosures or facets."""
    bare = dataclasses.replace(make_persona(language), keywords=(), disclosures=(), facets=Facets())
    replies = [*QUESTIONS[language].values(), "Maybe you could talk to them.", "I'm here.", "ok"]
    said = play(bare, replies * 2, fits=["ok", "missed", "met"] * 6)
    assert all(said) and repeated_lines(said, language) == 0
    assert not any("这件事的事" in m or "the whole situation thing" in m for m in said)
