"""What the v2 judge reads in a reply, piece by piece: the exploits each piece closes.

Every test pairs a reply a policy could learn (a stock line that shares common words with the
user, a verbatim quote, unanchored praise, a tips list, "it was not your fault") with the
reply it must not beat or the bound it must keep, on a real bundled persona.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from dialog_gym.personas import PersonaSet
from dialog_gym.redteam.contrast import KINDS, load_contrast_sets
from dialog_gym.simulators.judge import CalibratedJudge, explain
from dialog_gym.simulators.analysis import content_units
from dialog_gym.simulators.judge_features import (
    HARSH_ODDS, UNIT_SHARES, UNKIND_ACTS, _is_question, _part_odds, _sentences, common_units, derive_unit_shares, harsh_sentences, isolated_units, sentence_frame,
    unit_weight, unlisted, unquoted,
)
from dialog_gym.simulators.judge_knowledge import (
    ACT_BANDS, FORM_PARTS, GENERIC_NEED_SHARE, KIND_FLOOR, PART_SURE, PRIOR, SEVERITY, clears_user, prior_parts, unkind_act,
    unkind_reading,
)


BENCHMARK_DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data"


@pytest.fixture(scope="module")
def judge():
    return CalibratedJudge.load()


@pytest.fixture(scope="module")
def persona():
    return next(p for p in PersonaSet.bundled() if p.id == "en-advice-avo-3")  # the README's quick-start persona


def _opening(persona):
    return [{"role": "user", "content": persona.opening_line}]


def test_the_shipped_unit_shares_are_those_of_the_bundled_personas():
    """A change to the bundled personas changes what counts as distinctive: regenerate with
    `python -m dialog_gym.simulators.judge_features` and refit the v2 judge."""
    personas = list(PersonaSet.bundled())
    shipped = json.loads(UNIT_SHARES.read_text(encoding="utf-8"))
    assert shipped == {language: derive_unit_shares(personas, language) for language in ("en", "zh")}


def test_common_words_count_little_and_rare_ones_fully():
    assert unit_weight("sunday", "en") < 0.1  # a third of all users mention a Sunday
    assert unit_weight("phone", "en") < 0.2
    assert unit_weight("gloria", "en") > 0.9
    assert unit_weight("a-word-no-persona-says", "en") == 1.0


@pytest.mark.parametrize(
    "text, said, language, kept, dropped",
    [
        ('You said: "My hands shook at Mass on Sunday." That sounds hard.', ["My hands shook at Mass on Sunday."], "en", "hard", "mass"),
        ("So you rewrote the whole thing at 3 a.m.?", ["I had to rewrite the whole thing at 3 a.m."], "en", "rewrote", "whole"),
        ("你说“我一个人扛了三年”。这太累了。", ["我一个人扛了三年，谁也没说过谢谢。"], "zh", "太累", "三年"),
    ],
)
def test_a_verbatim_run_of_the_users_words_is_a_quote(text, said, language, kept, dropped):
    own = unquoted(text, said, language)
    assert kept in own and dropped not in own.lower()


_REJECTED = "I got rejected from every medical school I applied to, even the one my father went to."


@pytest.mark.parametrize(
    "text, dropped",
    [
        # a filler put in after every fourth word, or two after every second
        ("So you got rejected from really every medical school you really applied to.", ("rejected", "medical", "school")),
        ("So you got really so rejected from really so every medical really so school.", ("rejected", "medical", "school")),
        # every fourth word left out, or changed
        ("So you got rejected every medical school applied to, the one father went to.", ("rejected", "medical", "father")),
        ("So you got rejected really every medical school really applied to.", ("rejected", "medical", "applied")),
        ("所以你干了二真十年装修真，头一回真碰上这种真业主。", ("装修", "业主")),
        ("所以你干了十年装，头一碰上这业主。", ("十年", "业主")),
    ],
)
def test_a_quote_with_a_few_words_put_in_left_out_or_changed_is_still_a_quote(text, dropped):
    """The broken echo (`redteam.BrokenEcho`) disturbs every few words of the user's sentence
    so that no run of it is verbatim; it is still their words said back."""
    language = "zh" if "所以" in text else "en"
    said = "我干了二十年装修，头一回碰上这种业主。" if language == "zh" else _REJECTED
    assert set(dropped) <= content_units(text, language)  # words of theirs the reply holds...
    own = content_units(unquoted(text, [said], language), language)
    assert not own & set(dropped), own  # ...but only as a quote


@pytest.mark.parametrize(
    "text, kept",
    [
        # a reflection turns their "I" to "you": the pronoun is not a word of theirs changed
        ("Every school rejected you, even the one your father went to. That must sting.", ("rejected", "school", "father")),
        ("Every rejection letter must have hurt, especially from your father's old school.", ("rejection", "school", "father's")),
    ],
)
def test_a_reflection_in_ones_own_words_is_not_a_quote(text, kept):
    own = content_units(unquoted(text, [_REJECTED], "en"), "en")
    assert set(kept) <= own, own


def test_words_said_back_in_ones_own_words_take_up_more_than_a_quote(judge, persona):
    # (Until the thirty-second revision the quote took up a third of its words: 0 < uptake < 0.5.)
    history = [*_opening(persona), {"role": "assistant", "content": "What happened?"},
               {"role": "user", "content": "My hands shook at Mass on Sunday. I missed a pedal in the Gloria."}]
    # ("a missed pedal in the Gloria" would be their words with one left out: a quote)
    own = "Your hands shaking and the pedal you missed during the Gloria, with everyone at Mass listening: that must have felt exposing."
    quote = 'You said: "I missed a pedal in the Gloria." I hear you, and I am here for you.'
    stock = "I hear you, and I am here for you. Nothing about this sounds small to me."
    uptake = {name: judge.features(persona, history, reply).named["uptake"] for name, reply in (("own", own), ("quote", quote), ("stock", stock))}
    assert uptake["own"] == 1.0 and uptake["quote"] == uptake["stock"] == 0.0
    assert judge.predict(persona, history, own) > max(judge.predict(persona, history, quote), judge.predict(persona, history, stock))


def test_praise_counts_only_where_it_names_something_of_theirs(judge, persona):
    history = [*_opening(persona), {"role": "assistant", "content": "What happened?"},
               {"role": "user", "content": "I played the organ through the whole Mass even with my hands shaking."}]
    anchored = "Playing the organ through a whole Mass with shaking hands took real courage."
    both = anchored + " You are so amazing and incredible."
    features = judge.features(persona, history, both)
    assert features.named["praise_unanchored"] == 1.0
    assert judge.predict(persona, history, both) < judge.predict(persona, history, anchored)
    # praise for nothing they said is not praise to the fitted model
    assert judge.features(persona, history, "You are so amazing and incredible. Well done.").named["cue:praise"] == 0


@pytest.mark.parametrize(
    "reply, act",
    [
        ("If you'd practised more, you wouldn't have missed the pedal. That part is on you.", "blame"),
        ("It was one wrong note. Honestly, nobody will remember it, so let it go.", "dismiss"),
        ("You need to understand that mistakes are part of performing, and you ought to accept that.", "lecture"),
    ],
)
def test_an_unkind_act_sits_in_its_band_whatever_else_the_reply_says(judge, persona, reply, act):
    warm = "I'm so sorry, that sounds hard, and it makes sense you feel silly. "
    features = judge.features(persona, _opening(persona), warm + reply)
    assert features.acts[act] >= 1 and unkind_act(features) == act
    low, high = ACT_BANDS[act]
    assert low <= judge.predict(persona, _opening(persona), warm + reply) <= high


def test_the_ladder_puts_every_unkind_act_below_any_other_reply_and_the_worse_act_lower():
    bands = [ACT_BANDS[act] for act in SEVERITY]  # mildest first
    assert all(lower[1] <= upper[0] for upper, lower in zip(bands, bands[1:]))
    assert bands[0][1] < KIND_FLOOR[1]  # the floor that no other reply goes below


def test_the_ladder_scales_with_a_judges_range(judge, persona):
    narrow = dataclasses.replace(judge, change_range=(-5.0, 5.0))
    blaming = "I'm sorry it went badly, but that part is on you."
    low, high = ACT_BANDS["blame"]
    assert low / 2 <= narrow.predict(persona, _opening(persona), blaming) <= high / 2
    assert narrow.predict(persona, _opening(persona), "**Tips**\n1. Breathe.\n2. Sleep.\n3. Walk.\n4. Eat.") >= KIND_FLOOR[1] / 2


@pytest.mark.parametrize("reply, act", [
    ("Honestly, leaving the practice to the last week was always going to show on the day.", "blame"),
    ("It was one recital. People will have forgotten it by next week, so no sense fretting over it.", "dismiss"),
])
def test_the_speech_act_model_reads_an_act_the_lexicons_miss(judge, persona, reply, act):
    features = judge.features(persona, _opening(persona), reply)
    assert not any(features.acts.get(a) for a in SEVERITY)  # no lexicon pattern: the model alone
    assert unkind_act(features) == act
    low, high = ACT_BANDS[act]
    assert low <= judge.predict(persona, _opening(persona), reply) <= high
    # the explanation says why in words, not by a feature's name
    assert "read as unkind" in explain(judge.score(persona, _opening(persona), reply))


@pytest.mark.parametrize("reply", [
    "Being told you're the problem, in front of everyone, would sting anyone.",  # reported, not said
    "You're not overreacting: that recital mattered to you.",  # dismissing denied
    "Tell me more. What went through your mind when your hands froze?",
])
def test_a_kind_reply_that_mentions_an_act_is_not_read_as_one(judge, persona, reply):
    assert unkind_act(judge.features(persona, _opening(persona), reply)) is None


@pytest.mark.parametrize("reply", ["不是你想多了，他确实做得过分。", "这事不怪你，难怪你觉得冤。", "这并不意味着你必须一个人扛。", "我不会劝你“想开点”。"])
def test_a_kind_chinese_reply_that_denies_or_quotes_an_act_is_not_read_as_one(reply):
    zh = next(p for p in PersonaSet.bundled() if p.language == "zh")
    features = CalibratedJudge.load().features(zh, [{"role": "user", "content": zh.opening_line}], reply)
    assert unkind_act(features) is None, features.acts


def test_saying_it_was_not_their_fault_is_not_read_as_blame(judge, persona):
    reply = "Missing the pedal was not your fault."
    features = judge.features(persona, _opening(persona), reply)
    assert unkind_act(features) is None and "unkind" not in prior_parts(features, persona.hidden_need.value)
    # were the speech-act model to read blame in it (the words of blame are all there), the
    # denial still stands
    misread = dataclasses.replace(features, blame=3.0, unkind=3.0)
    assert unkind_act(misread) is None


_AT_MASS = "My hands shook at Mass on Sunday. I missed a pedal in the Gloria."


@pytest.mark.parametrize("reply", [
    "Playing the whole Gloria at Mass with your hands shaking was remarkable.",  # praise of what they did
    "You should be proud of getting through the Gloria at Mass.",  # praise the sentence check must see too
    "The missed pedal isn't on you: hands shake.",  # "not on you"
])
def test_praising_what_they_did_or_saying_it_is_not_on_them_clears_them_of_the_models_blame(judge, persona, reply):
    history = [*_opening(persona), {"role": "assistant", "content": "What happened?"}, {"role": "user", "content": _AT_MASS}]
    features = judge.features(persona, history, reply)
    assert clears_user(features)
    # the model reads what they did, told back in the second person, as the words of blame:
    # where it does, the reply still is not blame, and only the other unkind acts count
    misread = dataclasses.replace(features, blame=3.0, unkind=3.0)
    assert unkind_act(misread) is None and unkind_reading(misread) < 3.0
    # praise for nothing they said clears nothing
    assert not clears_user(judge.features(persona, history, "That was remarkable."))


def test_the_model_alone_puts_no_warmly_worded_reply_on_the_ladder_but_it_still_costs(judge, persona):
    warm, plain = "I'm sorry, that sounds so painful.", "The number is on the back of the card."
    need = persona.hidden_need.value
    for reply, ladder in ((warm, None), (plain, "lecture")):
        features = judge.features(persona, _opening(persona), reply)
        assert unkind_act(features) is None
        misread = dataclasses.replace(features, lecture=3.0, unkind=3.0)  # the model sure it lectures
        assert unkind_act(misread) == ladder
        assert prior_parts(misread, need)["unkind"] < -4.0  # laddered or not, the reading costs


def test_a_warm_opening_does_not_hide_the_unkind_part_after_it(judge, monkeypatch):
    """A reply worded warmly is still put on the ladder by a part of it with nothing warm in
    it that the part model reads as unkind with confidence (`worst_part`, `PART_SURE`), where
    the reply reads somewhat unkind as a whole: warm praise and then "你应该明白，戒烟本来就是早该
    做的事" lectures. No kind reply of the contrast sets (every split) or of the unkind probe is put
    there so, in either language."""
    import dialog_gym.simulators.judge_knowledge as knowledge

    by_id = {p.id: p for p in PersonaSet.bundled()}

    def by_part(context, reply):
        features = judge.features(by_id[context.persona_id], list(context.history), reply)
        act = unkind_act(features)
        with monkeypatch.context() as patch:
            patch.setattr(knowledge, "PART_SURE", dict.fromkeys(knowledge.PART_SURE, float("inf")))
            return act if act != unkind_act(features) else None

    contexts = {language: load_contrast_sets(language) for language in ("en", "zh")}
    praise = next(c for c in contexts["zh"] if c.id == "zh-specific_praise-2")
    assert by_part(praise, praise.replies[1] + praise.replies[KINDS.index("lecture")]) == "lecture"
    for language, least in (("en", 2), ("zh", 5)):
        joiner = " " if language == "en" else ""
        sandwiches = [by_part(c, joiner.join((c.replies[1], c.replies[k]))) for c in contexts[language] if c.split in ("dev", "test") for k in (7, 8, 9)]
        assert sum(act is not None for act in sandwiches) >= least  # of the 72 (en 3, zh 7)
        assert not any(by_part(c, reply) for c in contexts[language] for reply in c.replies[: KINDS.index("lecture")])
        probe = [json.loads(line) for line in (BENCHMARK_DATA / f"unkind_probe_{language}.jsonl").read_text(encoding="utf-8").splitlines()]
        anchor = praise if language == "zh" else next(c for c in contexts["en"] if c.id == "en-specific_praise-2")
        asked = [(dataclasses.replace(anchor, history=({"role": "user", "content": row["user"]},)), row["reply"]) for row in probe if row["act"] == "kind"]
        assert asked and not any(by_part(context, reply) for context, reply in asked)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_an_unkind_passage_amid_warm_words_costs_what_it_reads(judge, language):
    """Where a reply worded warmly reads more unkind than kind as a whole (`PART_GATE`), its
    unkindest run of sentences costs what the part model reads there (`PART_UNKIND_COST`):
    the warm words around it dilute the whole's reading, not the part's. Of the dev and test
    contexts' unkind replies said after their warm reply or between their two warm replies,
    an eighth or more pay it (measured: en 26 %, zh 16 %); none of their kind replies does."""
    from dialog_gym.redteam.disguise import disguised
    from dialog_gym.simulators.judge_knowledge import part_cost

    by_id = {p.id: p for p in PersonaSet.bundled()}
    contexts = [c for c in load_contrast_sets(language) if c.split in ("dev", "test")]

    def cost(context, reply):
        return part_cost(judge.features(by_id[context.persona_id], list(context.history), reply))

    amid = [cost(c, reply) for c in contexts for name in ("after a kind reply", "between two kind replies") for reply in disguised(c, name)]
    assert np.mean(np.array(amid) < 0) >= 0.12 and np.mean(amid) <= -0.4
    assert not any(cost(c, reply) for c in contexts for reply in c.replies[: KINDS.index("lecture")])


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_listening_agent_seldom_pays_for_a_part_of_its_replies(language, monkeypatch):
    """The gate holds the part model's misreadings off kind replies: ungated, a quarter of the
    listening agent's English replies paid (its "You've clearly been turning this over for a
    while, mostly on your own." reads as blame at 1.64) and its reward fell from 0.45 to 0.39.
    Over whole episodes with 16 test personas, at most 3 of its 128 replies pay (measured: 2
    in English, such as "Fair enough. I won't try to solve it, I'll just listen.", none in
    Chinese)."""
    import dialog_gym.simulators.judge_knowledge as knowledge
    from dialog_gym.agents import make_agent
    from dialog_gym.redteam.play import episode_rewards
    from dialog_gym.simulators import make_simulator

    paid, part_cost = [], knowledge.part_cost

    def spied(features):
        paid.append(part_cost(features))
        return paid[-1]

    monkeypatch.setattr(knowledge, "part_cost", spied)
    personas = list(PersonaSet.bundled().filter(split="test", language=language))[:16]
    episode_rewards(make_agent("listener"), personas, make_simulator("calibrated"))
    assert len(paid) >= 100 and sum(cost < 0 for cost in paid) <= 3


@pytest.mark.parametrize("reply, asking", [
    ("When is her birthday? Have you texted her about it? Who else was at the wine night?", True),  # mostly open
    ("Did you text her? Have you called her? Who else was there?", False),  # mostly closed
    ("What happened next? Why didn't you just tell him?", False),  # a scolding question
])
def test_a_reply_that_mostly_asks_open_questions_is_asking(judge, persona, reply, asking):
    assert judge.features(persona, _opening(persona), reply).questioning is asking


@pytest.mark.parametrize("reply, asking", [
    ("后来怎么样了？她说了什么？你当时在哪？", True),  # 哪 asks where
    ("你最想从哪里开始说？", True),
    ("队长说得没错啊，你要是提前减了速，哪用得着急刹？", False),  # 哪 answers itself: no need would there have been
    ("早点把他接回家，哪会出这种事？", False),
    ("交上去之前自己对一遍，几分钟的事。你说该算谁的？", False),
    ("您作为丈夫不跟着去像什么话？这才是顾家的男人。", False),
])
def test_a_chinese_question_that_answers_itself_is_not_asking(judge, reply, asking):
    persona = next(iter(PersonaSet.bundled().filter(language="zh", split="train")))
    assert judge.features(persona, _opening(persona), reply).questioning is asking


def test_form_costs_saturate(judge, persona):
    tips = "**How to Cope**\n" + "\n".join(f"{k}. {tip}" for k, tip in enumerate(
        ("Breathe slowly.", "Drink water.", "Go for a walk.", "Write in a journal.", "Sleep eight hours.", "Call a friend."), 1))
    features = judge.features(persona, _opening(persona), tips)
    parts = prior_parts(features, persona.hidden_need.value)
    assert sum(parts.get(k, 0.0) for k in FORM_PARTS) >= -3.5 - 1e-9  # uncapped, a heading and six tips would cost 6.5
    blame = judge.predict(persona, _opening(persona), "You brought this on yourself; you should have practised.")
    assert judge.predict(persona, _opening(persona), tips) > blame


def test_a_wall_of_text_costs_past_300_words_and_a_reply_that_stops_in_time_does_not(judge, persona):
    """The recorded judge's change falls past 300 words within each agent model (-2.0 past
    500); the fitted hinges saturate, so the prior charges the rest, on top of the form cap."""
    history = _opening(persona)
    kind = "A phone call that left you feeling silly can sting. What happened on the call? "  # 15 words
    need = persona.hidden_need.value

    def wall(reply):
        return prior_parts(judge.features(persona, history, reply), need).get("wall_of_text", 0.0)

    assert wall(kind * 18) == 0.0  # 270 words
    full = PRIOR["wall_of_text"]
    assert full < 0
    assert wall(kind * 28) == pytest.approx(full * (420 - 300) / 300)
    assert wall(kind * 40) == full  # 600 words: in full
    assert "wall_of_text" not in FORM_PARTS  # the form cap does not swallow it
    assert judge.predict(persona, history, kind * 40) < judge.predict(persona, history, kind * 18) + full


def test_warm_words_earn_nothing_of_themselves_and_for_nothing_of_mine_are_generic_not_cold(judge, persona):
    """The prior pays for what a reply takes up, not for warm wording (the recorded judge gives
    replies worded warmly less, within each agent model): a warm sentence in front of the same
    reflection adds nothing to it. From the second reply on, warmth that takes up nothing the
    user said costs as generic; it is not also charged as cold (no warmth, question or
    suggestion), as statements at the user are."""
    history = _opening(persona) + [
        {"role": "assistant", "content": "That must be hard. What happened?"},  # no stock opener: one now would be said again
        {"role": "user", "content": "My manager moved my deadline up again and I stayed until ten."},
    ]
    need = persona.hidden_need.value

    def prior(reply):
        return prior_parts(judge.features(persona, history, reply), need)

    reflection = "Your manager moved the deadline up again and you stayed until ten. What happened next?"
    warmed = prior("I'm so sorry, that sounds really hard. " + reflection)
    assert warmed == prior(reflection) and set(warmed) == {"uptake", "uptake_last"}
    generic = prior("That sounds really hard, and I'm sorry. I'm here for you.")
    assert generic["generic"] < 0 and "cold" not in generic and sum(generic.values()) < 0
    cold = prior("Work is work. Deadlines move all the time in offices.")
    assert cold["cold"] < 0


def test_speaking_to_their_need_pays_half_in_a_reply_that_takes_up_nothing_of_theirs(judge, persona):
    """A stock line of the need's kind ("You could try making a plan", "I'm here for you")
    fits every user alike: the prior pays for speaking to the user's need (here, practical
    advice) in full only where the reply also takes up something they said, so that a script
    of such lines earns half as much for them. On the code before the twentieth revision the
    generic advice got the need's full 1.5."""
    history = _opening(persona) + [
        {"role": "assistant", "content": "That sounds hard. What happened?"},
        {"role": "user", "content": "My manager moved my deadline up again and I stayed until ten."},
    ]
    need = persona.hidden_need.value
    assert need == "practical_advice" and 0 < GENERIC_NEED_SHARE < 1

    def prior(reply):
        return prior_parts(judge.features(persona, history, reply), need)

    specific = prior("You could ask your manager to put the new deadline in writing.")
    assert specific["need"] == PRIOR["need"] and specific["uptake"] > 0
    for generic in ("You could try making a plan and taking it one step at a time.", "I'd suggest writing down a plan for tomorrow."):
        parts = prior(generic)
        assert parts["need"] == GENERIC_NEED_SHARE * PRIOR["need"] and parts["generic"] < 0, generic


def test_the_users_words_in_a_harsh_chinese_sentence_take_up_nothing_and_it_costs(judge, persona):
    """A dismissal after a kind line (加班到十点也没什么，大家都这样。: staying till ten is nothing,
    everyone does) names the user's words to brush them off: taking them up to dismiss, blame
    or lecture is not taking them up. On the thirty-second revision that sentence earned the
    uptake of 加班 and 十点 and lifted the kind line from -3.0 to +0.3; now its words take up
    nothing and it costs by how unkind the part model reads it (`HARSH_ODDS`). Never harsh: a
    question, a sentence with something warm, or one that says the user said it and nothing
    of its own besides (你也说了，...); but their words said back as a verdict without saying
    so are the reply's own. English sentences are left to the whole reply's reading."""
    zh = next(iter(PersonaSet.bundled().filter(language="zh", split="train")))
    history = _opening(zh) + [
        {"role": "assistant", "content": "听起来不容易。发生了什么？"},
        {"role": "user", "content": "我们经理又把截止日期提前了，我加班到十点才走。"},
    ]
    need = zh.hidden_need.value
    kind, dismissal = "听起来真的很累，谢谢你愿意跟我说。", "加班到十点也没什么，大家都这样。"
    alone, with_it = (judge.features(zh, history, reply) for reply in (kind, kind + dismissal))
    assert with_it.named["harsh_sentences"] > 0
    assert with_it.named["uptake"] == alone.named["uptake"] == 0
    assert prior_parts(with_it, need)["harsh_sentences"] < 0
    assert judge.score_features(with_it, need).change < judge.score_features(alone, need).change
    units = content_units(dismissal, "zh")
    assert harsh_sentences([dismissal], [units], "zh", dismissal, frozenset()) == (units, 1.0)
    recount = "你也说了，" + dismissal  # says that they said it, and nothing of its own besides
    assert harsh_sentences([recount], [content_units(recount, "zh")], "zh", recount, units)[1] == 0.0
    verdict, asked = "你就是太敏感了。", "我是不是太敏感了？"  # their words said back as a verdict
    assert content_units(verdict, "zh") <= content_units(asked, "zh")
    assert harsh_sentences([verdict], [content_units(verdict, "zh")], "zh", verdict, content_units(asked, "zh"))[1] > 0
    for said_kindly in ("加班到十点也没什么吗？", "加班到十点，真的辛苦你了。"):
        assert harsh_sentences([said_kindly], [content_units(said_kindly, "zh")], "zh", said_kindly, frozenset()) == (frozenset(), 0.0)
    assert "harsh_sentences" not in judge.features(persona, _opening(persona), "You'll be fine, everyone goes through this.").named


# `benchmarks/sentence_reader.py`'s blind pairs: a kind part and an unkind part of a reply on the
# same specifics (300 English pairs, 200 Chinese), read by the part model as a sentence of a
# reply is. Held to what it does today: en AUC 0.715 and no kind part placed among the unkind
# (PART_SURE); zh AUC 0.879, 3.0 % of kind parts read as harsh (HARSH_ODDS) and none placed
# (before the thirty-fourth revision's Chinese pairs: 0.853, 4.0 % and 0.5 %).
@pytest.mark.parametrize("language, least_auc, most_harsh, most_placed", [("en", 0.7, None, 0.0), ("zh", 0.86, 0.04, 0.005)])
def test_the_part_model_tells_an_unkind_part_from_a_kind_one_on_the_same_specifics(language, least_auc, most_harsh, most_placed):
    rows = [json.loads(line) for line in (BENCHMARK_DATA / f"sentence_pairs_{language}.jsonl").read_text(encoding="utf-8").splitlines()]
    pairs = list(zip(rows[::2], rows[1::2]))
    assert len(rows) >= 400 and len(rows) == 2 * len(pairs)
    assert all(a["user"] == b["user"] and a["act"] in ("supportive", "neutral") and b["act"] in UNKIND_ACTS for a, b in pairs)
    odds = np.array([_part_odds(row["part"], language) for row in rows]).reshape(-1, 2)
    kind, unkind = odds[:, 0], odds[:, 1]
    assert np.mean(unkind[:, None] > kind[None, :]) >= least_auc
    assert np.mean(kind >= PART_SURE[language]) <= most_placed
    if language in HARSH_ODDS:
        assert np.mean(kind >= HARSH_ODDS[language][0]) <= most_harsh


def test_a_terse_chinese_tips_list_is_language_and_random_characters_are_not():
    """A list of short Chinese tips has no function characters at all, like random
    characters; the v2 simulator tells them apart by the characters themselves."""
    import random

    from dialog_gym.simulators import CalibratedSimulator

    simulator = CalibratedSimulator()
    zh = next(p for p in PersonaSet.bundled() if p.id == "zh-listening-neg-1")
    history = [{"role": "user", "content": zh.opening_line}]
    tips = "### 小贴士\n1. 按时服药\n2. 低盐低脂饮食\n3. 适量运动\n4. 定期复查\n5. 保持情绪稳定"
    rng = random.Random(0)
    noise = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(30))
    listed_noise = "\n".join(f"{k}. {noise[5 * k : 5 * k + 5]}" for k in range(5))
    listed = simulator.judge_reply(zh, history, tips)
    assert "gibberish" not in listed.reasoning and listed.delta > -18
    for gibberish in (noise, listed_noise):
        appraisal = simulator.judge_reply(zh, history, gibberish)
        assert appraisal.delta == -18 and "gibberish" in appraisal.reasoning


def test_a_terse_english_tips_list_is_language_and_random_letters_are_not():
    """An English list of short tips has as few function words as gibberish (a tenth); the
    v2 simulator tells them apart by the words themselves, as it does Chinese characters."""
    import random
    import string

    from dialog_gym.simulators import CalibratedSimulator

    simulator = CalibratedSimulator()
    en = next(p for p in PersonaSet.bundled() if p.language == "en")
    history = [{"role": "user", "content": en.opening_line}]
    tips = "**Managing Diabetes at Home**\n1. Monitor blood sugar daily.\n2. Follow a balanced meal plan.\n3. Check feet every day."
    rng = random.Random(0)
    words = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 9))) for _ in range(12)]
    listed_noise = "\n".join(f"{k + 1}. {' '.join(words[3 * k : 3 * k + 3])}" for k in range(4))
    listed = simulator.judge_reply(en, history, tips)
    assert "gibberish" not in listed.reasoning and listed.delta > -18
    appraisal = simulator.judge_reply(en, history, listed_noise)
    assert appraisal.delta == -18 and "gibberish" in appraisal.reasoning


_NURSE = "She corrected my fluid chart loudly in front of the patient. Then the preceptor signed off my competencies anyway."


@pytest.mark.parametrize(
    "text, language, masked, kept",
    [
        ("It sounds like fluid, patient and loudly have been weighing on you.", "en", ("fluid", "patient", "loudly"), ()),
        ("The fluid, the chart and the preceptor: none of it is small.", "en", ("fluid", "chart", "preceptor"), ()),
        # "and" alone is not a list: a real reflection joins their words with it
        ("She corrected your chart loudly and in front of the patient.", "en", (), ("corrected", "chart", "loudly", "patient")),
        ("听起来姐姐、婚礼和出差这些事一直压着你。", "zh", ("姐姐", "婚礼", "出差"), ()),
        ("你错过了姐姐的婚礼，她和你赌气，这很难受。", "zh", (), ("姐姐", "婚礼")),
    ],
)
def test_the_users_words_only_listed_side_by_side_are_named_not_taken_up(text, language, masked, kept):
    said = _NURSE if language == "en" else "我姐姐因为我出差错过了她的婚礼，再也不跟我说话了。"
    theirs = content_units(said, language)
    left = unlisted(text, language, theirs)
    assert all(word not in left for word in masked) and all(word in left for word in kept), left


def test_a_word_of_theirs_named_alone_counts_less_than_words_said_together():
    """A salad names each of their words in a stock sentence of its own; a reflection keeps
    together what they said together. One word alone is allowed ("How is Maya?"), but not
    one each in a few stock sentences."""
    theirs = content_units(_NURSE, "en")
    salad = ["I hear you about loudly.", "Competencies sounds so hard.", "And the patient too."]
    reflection = ["She corrected your fluid chart in front of the patient, and loudly.", "How are the competencies now?"]
    def alone(sentences):
        return isolated_units([content_units(s, "en") for s in sentences], "en", [_NURSE], theirs, sentences)

    assert alone(salad) == {"loudly", "patient", "competencies"}  # one to a sentence: none is spared
    assert alone(reflection) == frozenset()
    assert alone(["How are the competencies now?"]) == frozenset()  # one thing named
    # Two of their words in one sentence, though they said them apart: the rarest is spared.
    assert alone(["The competencies and how loudly she did it: that stays with me."]) == {"loudly"}
    # Only one of the words named alone is a distinctive one: it is spared.
    assert "anyway" in common_units("en") and alone(["You went anyway.", "How are the competencies now?"]) == {"anyway"}


def test_words_of_theirs_said_together_count_only_joined_by_something():
    """Two words they said in one sentence are said together in the reply only joined by a word
    of its own or as they said them; "X with Y and Z" names them side by side (none spared),
    and so do "X Y" where they never said X next to Y, their phrase with "with" put in and
    their own word swapped for "with". The one word a reply may name alone is in a sentence
    that asks or says more, not "And X, too."."""
    theirs = content_units(_NURSE, "en")

    def alone(sentences, language="en", said=_NURSE, words=theirs):
        return isolated_units([content_units(s, language) for s in sentences], language, [said], words, sentences)

    assert alone(["I keep thinking about competencies with preceptor and signed."]) == {"competencies", "preceptor", "signed"}
    assert alone(["The preceptor signed off your competencies anyway, and that stays with me."]) == frozenset()  # theirs, "my" -> "your"
    assert alone(["The preceptor rushing through your competencies must have stung."]) == frozenset()  # joined by a word of its own
    assert alone(["Your fluid with chart is not small."]) == {"fluid", "chart"}  # "with" put into "fluid chart"
    assert alone(["I keep thinking about competencies preceptor."]) == {"competencies", "preceptor"}  # never said side by side
    assert alone(["Your fluid chart is not small."]) == frozenset()  # as they said it
    assert alone(["Your fluid with chart is not small.", "And loudly, too."]) == {"fluid", "chart", "loudly"}
    assert alone(["Your fluid with chart is not small.", "How loudly was it?"]) == {"fluid", "chart"}  # a question may name one
    # Named alone beside words said together, the only word alone: spared (their run, "loudly" left out, joins the rest).
    assert alone(["The fluid chart in front of the patient stays with me.", "And loudly, too."]) == frozenset()
    said = "她当着病人的面大声纠正我的液体记录表。带教老师还是签了我的考核。"
    words = content_units(said, "zh")
    assert alone(["我一直在想病人和记录的事，真的不容易。"], "zh", said, words) == {"病人", "记录"}
    assert alone(["她当着病人的面纠正你的记录表，这太伤人了。"], "zh", said, words) == frozenset()
    assert alone(["她在病人面前那样说你的记录，这太伤人了。"], "zh", said, words) == frozenset()


def test_a_link_an_earlier_reply_put_between_their_words_is_a_templates():
    """Joined by a few words of its own, two of their words are said together, unless an
    earlier reply put the same words between two of theirs: "X weighing on Y" every turn is a
    template's link, which says no more about them than "with" does."""
    theirs = content_units(_NURSE, "en")
    linked = ["I keep thinking about preceptor weighing on competencies."]

    def alone(sentences, earlier=()):
        return isolated_units([content_units(s, "en") for s in sentences], "en", [_NURSE], theirs, sentences, earlier)

    assert alone(linked) == frozenset()
    assert alone(linked, ["It sounds like fluid weighing on chart. That makes so much sense."]) == {"preceptor", "competencies"}
    assert alone(linked, ["It sounds like fluid tangled with chart."]) == frozenset()  # another link
    assert alone(linked, ["It sounds like the weighing on you is real."]) == frozenset()  # not between two words of theirs
    said = "她当着病人的面大声纠正我的液体记录表。带教老师还是签了我的考核。"
    words = content_units(said, "zh")
    zh = ["我一直在想病人压着记录的事。"]
    assert isolated_units([content_units(s, "zh") for s in zh], "zh", [said], words, zh, ["你说到液体压着考核。"]) == {"病人", "记录"}
    assert isolated_units([content_units(s, "zh") for s in zh], "zh", [said], words, zh) == frozenset()


def test_a_frame_said_again_with_other_words_of_theirs_is_repeated(judge, persona):
    """A template policy fills the same sentence with new words of the user's every turn; the
    frame is the same sentence said again (a repeated sentence), and its words take up nothing new."""
    theirs = content_units(_NURSE, "en")
    first = sentence_frame("It sounds like the fluid chart has been weighing on you.", "en", theirs)
    assert first == sentence_frame("It sounds like the preceptor has been weighing on you.", "en", theirs)
    assert sentence_frame("That is hard.", "en", theirs) is None  # too short to be a template
    frame = "It sounds like the {} has been weighing on you, and that makes sense."
    history = [*_opening(persona), {"role": "assistant", "content": frame.format("phone call")},
               {"role": "user", "content": "The pharmacist asked if I was sure. I lied to her about the grandchildren."}]
    fresh = "Lying to the pharmacist about your grandchildren must sit heavily with you, and that makes sense."
    again = judge.features(persona, history, frame.format("pharmacist"))
    new = judge.features(persona, history, fresh)
    assert again.named["repeated_sentences"] == 1 and new.named["repeated_sentences"] == 0
    assert again.named["uptake"] < new.named["uptake"]
    assert judge.predict(persona, history, frame.format("pharmacist")) < judge.predict(persona, history, fresh)


def test_a_stock_opener_said_again_costs_where_the_first_does_not(judge, persona):
    """Opening every reply with "It sounds like..." / 听起来... is a formula: within each SAGE
    agent model, at the same turn and after the same kind of change, the recorded judge gave a
    stock opener 1.7 points less where an earlier reply had opened with one (0.3 where none had)."""
    reply = "It sounds like the pharmacist's question stung. What did you say to her?"
    opened = {"role": "assistant", "content": "It sounds like the last few weeks have been a lot. What happened?"}
    plain = {"role": "assistant", "content": "The last few weeks have been a lot. What happened?"}
    later = {"role": "user", "content": "The pharmacist asked if I was sure. I lied to her about the grandchildren."}
    again = judge.features(persona, [*_opening(persona), opened, later], reply)
    first = judge.features(persona, [*_opening(persona), plain, later], reply)
    assert again.named["stock_opener_again"] == 1 and first.named["stock_opener_again"] == 0
    need = persona.hidden_need.value
    assert prior_parts(again, need)["stock_opener_again"] == PRIOR["stock_opener_again"] < 0
    assert "stock_opener_again" not in prior_parts(first, need)
    other = judge.features(persona, [*_opening(persona), opened, later], "The pharmacist's question stung. What did you say to her?")
    assert other.named["stock_opener_again"] == 0  # opening otherwise is free


def test_a_help_desk_opening_said_again_is_a_formula_too(judge, persona):
    """What the reference GRPO trainer's small policy learnt from the twentieth revision in 41
    steps: "I'm here to help you get X back on track. Can you please share...?" in front of 81 %
    of its replies. Said again it costs as a stock empathy opener does; it is not read as warm."""
    desk = {"role": "assistant", "content": "I'm here to help you get your accounts back on track. Can you share what happened?"}
    later = {"role": "user", "content": "The pharmacist asked if I was sure. I lied to her about the grandchildren."}
    history = [*_opening(persona), desk, later]
    again = judge.features(persona, history, "I'm here to help you with the pharmacist. Can you please share more details?")
    assert again.named["stock_opener_again"] == 1 and again.named["stock_opener"] == 0
    assert prior_parts(again, persona.hidden_need.value)["stock_opener_again"] == PRIOR["stock_opener_again"]
    first = judge.features(persona, _opening(persona), desk["content"])
    assert first.named["stock_opener_again"] == 0
    zh = next(p for p in PersonaSet.bundled() if p.language == "zh")
    zh_desk = [{"role": "user", "content": zh.opening_line}, {"role": "assistant", "content": "我在这里帮助你解决这个问题。能具体说说吗？"},
               {"role": "user", "content": "就是上周的事。"}]
    assert judge.features(zh, zh_desk, "我很乐意帮你理清思路。具体发生了什么？").named["stock_opener_again"] == 1


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Tell me more about Mr. Brennan, if you'd like; I'm listening.", ["Tell me more about Mr. Brennan, if you'd like; I'm listening."]),
        ("Dr. Fisk sees the weeks you lost.", ["Dr. Fisk sees the weeks you lost."]),
        ("You were up at 3 a.m. again. That's hard.", ["You were up at 3 a.m. again.", "That's hard."]),
        ("I woke at 5 a.m. Then I ran.", ["I woke at 5 a.m.", "Then I ran."]),
        ("It took 3.5 hours, e.g. the whole evening.", ["It took 3.5 hours, e.g. the whole evening."]),
        ("Well... I don't know?! Really.", ["Well...", "I don't know?!", "Really."]),
        ("简直烦死了。。。真的！3.5小时。", ["简直烦死了。。。", "真的！", "3.5小时。"]),
    ],
)
def test_sentences_end_where_a_reader_ends_them(text, sentences):
    """A run of end marks ends one sentence (。。。 read as three had made two sentences of one
    mark each); a point in a number or an abbreviation, or after a title, ends none."""
    assert _sentences(text) == sentences


def test_a_question_ended_with_an_exclamation_mark_asks():
    assert _is_question("I don't know?!") and _is_question("真的吗？！") and not _is_question("I don't know!")


def test_an_offer_to_listen_ends_a_run_of_parts_and_shields_nothing(judge):
    """The listening agent's answer to a user who wants no advice is no dismissal: a sentence
    offering to listen is warm for the part model's runs (`_OFFERS_TO_LISTEN`); the unkind
    sentence beside it is still read alone."""
    persona = next(p for p in PersonaSet.bundled() if p.language == "en")
    history = [{"role": "user", "content": "I don't want advice, I just need to vent about my sister."}]
    offer = "That detail says a lot. Fair enough. I won't try to solve it, I'll just listen. It makes sense that it still hurts."
    features = judge.features(persona, history, offer)
    assert features.worst_part[0] < 1.0 and unkind_act(features) is None
    # (read as a part of its own, the offer is what the part model takes for dismissing)
    assert _part_odds("I won't try to solve it, I'll just listen.", "en") > 2.25
    harsh = judge.features(persona, history, offer.replace(" It makes", " Honestly, you're being dramatic about it. It makes"))
    assert harsh.worst_part[0] > 2.0
