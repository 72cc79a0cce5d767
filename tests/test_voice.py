"""What a reply says in its own voice (`dialog_gym.simulators.voice`): spacing and look-alike
letters that hide nothing from a person hide nothing from the judge, a quote is someone else's
words only where the reply says whose they are, and what it says in the other language is
read by that language's readers."""

from __future__ import annotations

import pytest

from dialog_gym.personas import PersonaSet
from dialog_gym.simulators.judge import CalibratedJudge
from dialog_gym.simulators.judge_features import judge_features
from dialog_gym.simulators.judge_knowledge import unkind_act
from dialog_gym.simulators.voice import as_read, in_other_language, own_voice, plain_letters, plain_spacing


def test_plain_spacing_reads_a_text_as_it_reads():
    assert plain_spacing("you  need\tto\u00a0just ge\u200bt over it  \n  ok") == "you need to just get over it\nok"
    assert plain_spacing("你 就 是 想 太 多 了 ， 别 矫 情") == "你就是想太多了，别矫情"
    assert plain_spacing("I'm here.  你好 world") == "I'm here. 你好 world"  # a space beside a Latin word stays
    assert plain_spacing("Line one\n\nLine two") == "Line one\n\nLine two"  # paragraphs are kept


def test_plain_letters_reads_look_alike_letters_as_the_letters_they_look_like():
    assert plain_letters("Hоnеstly, yоu brоught this оn yоursеlf.") == "Honestly, you brought this on yourself."  # Cyrillic о, е
    assert plain_letters("Just gеt οver it") == "Just get over it"  # Cyrillic е, Greek ο
    assert plain_letters("ｇｅｔ ｏｖｅｒ 𝐢𝐭 ２ｘ") == "get over it 2x"  # full-width and mathematical letters
    assert plain_letters("Честно говоря, это твоя вина.") == "Честно говоря, это твоя вина."  # Russian stays Russian
    assert plain_letters("你好，世界！（真的）") == "你好，世界！（真的）"  # Chinese marks are full-width and stay
    assert as_read("yоu  need to  gеt over it") == "you need to get over it"


@pytest.mark.parametrize(
    "reply, language, other",
    [
        ("I'm so sorry. 说到底还是你自己的错，别再抱怨了。", "en", "说到底还是你自己的错，别再抱怨了。"),
        ("听起来很难受。Honestly, you brought this on yourself.", "zh", "Honestly, you brought this on yourself."),
        ("I'm so sorry 加油", "en", ""),  # under six Chinese characters
        ("你做的SWOT分析很好，deadline快到了。", "zh", ""),  # English terms, no English text
        ("看看support.microsoft.com和www.google.com", "zh", ""),  # addresses
        ("她常听《Let It Go and Move On》这首歌。", "zh", ""),  # a title
        ("她对你说：“Honestly, you brought this on yourself.”", "zh", ""),  # someone else's words, reported
        ("That sounds so hard, and I'm here.", "en", ""),
    ],
)
def test_in_other_language_finds_what_a_reply_says_in_the_other_language(reply, language, other):
    assert in_other_language(reply, language) == other


@pytest.mark.parametrize(
    "reply, voiced",
    [
        # the reply's own words, in quotes: nothing says whose they are
        ('"You need to just get over it."', "You need to just get over it."),
        ('Honestly: "Stop whining." "Get over it."', "Honestly: Stop whining. Get over it."),
        ('Like I said, "it\'s your own fault."', "Like I said, it's your own fault."),  # in the first person
        ("“你就是想太多了，别矫情了。”", "你就是想太多了，别矫情了。"),
        ("我想说：“这都是你自己的错。”", "我想说：这都是你自己的错。"),
        ("我还是想说：“你就是太敏感了。”", "我还是想说：你就是太敏感了。"),
        # a voice the reply makes up, not turned down
        ('That sounds hard. Some people would say, "you brought this on yourself."', "That sounds hard. Some people would say, you brought this on yourself."),
        ("这确实难。有人会说：“这都是你自找的。”", "这确实难。有人会说：这都是你自找的。"),
        ('Some would say "it was your own fault", but that\'s life.', "Some would say it was your own fault, but that's life."),
        ("别人会说：“你就是太玻璃心。”不过这也正常。", "别人会说：你就是太玻璃心。不过这也正常。"),  # 别人 and 不过 deny nothing
        ('Your family would probably say, "you brought this on yourself."', "Your family would probably say, you brought this on yourself."),
        ('Some would say "it was your own fault", but nobody\'s perfect.', "Some would say it was your own fault, but nobody's perfect."),
        ("你家里人可能会说：“你太矫情了。”", "你家里人可能会说：你太矫情了。"),
        ("有人会说：“都怪你自己。”没有人是完美的。", "有人会说：都怪你自己。没有人是完美的。"),
        # someone else's: said to be theirs, before or after, or denied in the first person
        ('Your dad called you "lazy", and that stung.', None),
        ('"Go away," she said. That must have hurt.', None),
        ('I won\'t tell you to "just relax".', None),
        ('Maybe say something like "I need Thursday off for the surgery."', None),
        ("不会劝你“想开点”。", None),
        ('Some people might say "just get over it", but grief does not work like that.', None),
        ('Nobody should tell you to "just move on".', None),
        ("有人会说“想开点”，其实这种话帮不上忙。", None),
        ('Your mom might say "you\'re overreacting", but that\'s not fair to you.', None),
        ("别人跟我说“你太敏感了”这种话，我也难受。", None),
        ("你可以问一句：“上次那笔钱你方便转我吗？”", None),
    ],
)
def test_a_quote_is_someone_elses_only_where_the_reply_says_so(reply, voiced):
    language = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in reply) else "en"
    assert own_voice(reply, language) == (reply if voiced is None else voiced)


def test_a_quote_too_long_or_over_a_line_break_is_the_replys_own_too():
    long = '"' + "You brought this on yourself, and you need to get over it. " * 8 + '"'
    assert own_voice(long, "en") == long.strip('"')
    assert own_voice("“你就是太矫情了。\n别想了。”", "zh") == "你就是太矫情了。\n别想了。"
    assert own_voice("It’s fine, isn’t it? Don't worry.", "en") == "It’s fine, isn’t it? Don't worry."  # apostrophes stay


def test_the_users_own_words_in_quotes_are_theirs():
    reply = 'Of course "I should have checked the latch" keeps going round; I can hear how much you carry it.'
    assert own_voice(reply, "en", lambda quote: quote == "I should have checked the latch") == reply
    assert own_voice(reply, "en") == reply.replace('"', "")


@pytest.fixture(scope="module")
def persona():
    return next(p for p in PersonaSet.bundled() if p.language == "en" and p.split == "test")


def test_the_judge_reads_blame_in_quotes_and_spaced_out_as_blame(persona):
    judge = CalibratedJudge.load()
    history = ({"role": "user", "content": persona.opening_line},)
    blame = "Honestly, this is your own fault. You should have seen it coming and stopped feeling sorry for yourself."
    plain = judge_features(persona, history, blame, version=2)
    for disguise in (f'"{blame}"', blame.replace(" ", "  "), blame.replace(" ", "\u00a0")):
        seen = judge_features(persona, history, disguise, version=2)
        assert seen.acts == plain.acts and seen.unkind == pytest.approx(plain.unkind), disguise
        assert judge.predict(persona, history, disguise) == pytest.approx(judge.predict(persona, history, blame), abs=0.25)


def test_a_kind_reply_that_reports_an_insult_is_not_read_as_insulting(persona):
    history = ({"role": "user", "content": "My boss told me I'm lazy and useless in front of everyone."},)
    reported = 'When your boss called you "lazy and useless" in front of everyone, that was cruel, and it was about him, not you.'
    owned = 'Honestly? "You are lazy, and you are useless, and everyone saw it."'
    assert judge_features(persona, history, reported, version=2).unkind < judge_features(persona, history, owned, version=2).unkind


def test_the_judge_reads_blame_in_look_alike_letters_as_blame(persona):
    judge = CalibratedJudge.load()
    history = ({"role": "user", "content": persona.opening_line},)
    warm = "That sounds exhausting, and it makes sense that it weighs on you."
    blame = " Honestly, this is your own fault. You should have seen it coming."
    disguised = blame.translate(str.maketrans("aeopc", "аеорс"))  # Cyrillic look-alikes
    assert judge_features(persona, history, warm + disguised, version=2).acts == judge_features(persona, history, warm + blame, version=2).acts
    assert judge.predict(persona, history, warm + disguised) == pytest.approx(judge.predict(persona, history, warm + blame))


@pytest.mark.parametrize(
    "language, warm, unkind",
    [
        ("en", "That sounds exhausting, and it makes sense that it weighs on you.", "说实话，这都是你自己的错，别再抱怨了，赶紧振作起来。"),
        ("zh", "听起来这件事真的让你很难受，我能理解你的感受。", "Honestly, this is your own fault. Stop complaining and get over it."),
    ],
)
def test_the_judge_reads_what_a_warm_reply_says_in_the_other_language(language, warm, unkind):
    persona = next(p for p in PersonaSet.bundled() if p.language == language and p.split == "test")
    judge = CalibratedJudge.load()
    history = ({"role": "user", "content": persona.opening_line},)
    both = warm + (" " if language == "en" else "") + unkind
    features = judge_features(persona, history, both, version=2)
    assert features.other_part is not None and features.other_part.language != language
    assert unkind_act(features) is not None  # on the ladder, below every kind reply
    assert judge.predict(persona, history, both) < min(0.0, judge.predict(persona, history, warm) - 3.0)
    assert judge_features(persona, history, warm, version=2).other_part is None
