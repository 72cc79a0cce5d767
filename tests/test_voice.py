"""What a reply says in its own voice (`dialog_gym.simulators.voice`): spacing and look-alike
letters that hide nothing from a person hide nothing from the judge, a quote is someone else's
words only where the reply says whose they are, and what it says in the other language is
read by that language's readers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialog_gym.personas import PersonaSet
from dialog_gym.redteam.contrast import load_contrast_sets
from dialog_gym.simulators.calibrated import CalibratedSimulator
from dialog_gym.simulators.judge import CalibratedJudge
from dialog_gym.simulators import speech_act_model
from dialog_gym.simulators.judge_features import judge_features
from dialog_gym.simulators.judge_knowledge import unkind_act
from dialog_gym.simulators.traditional_chinese import simplified, traditional
from dialog_gym.simulators.voice import (
    as_read,
    in_other_language,
    own_voice,
    plain_letters,
    plain_spacing,
    plain_spelling,
    without_unread,
)


def test_plain_spacing_reads_a_text_as_it_reads():
    assert plain_spacing("you  need\tto\u00a0just ge\u200bt over it  \n  ok") == "you need to just get over it\nok"
    assert plain_spacing("你 就 是 想 太 多 了 ， 别 矫 情") == "你就是想太多了，别矫情"
    assert plain_spacing("I'm here.  你好 world") == "I'm here. 你好 world"  # a space beside a Latin word stays
    assert plain_spacing("Line one\n\nLine two") == "Line one\n\nLine two"  # paragraphs are kept


@pytest.mark.parametrize("sign", ["·", "/", "🙂", "|"])
def test_plain_spacing_reads_chinese_with_a_sign_between_every_two_characters(sign):
    blame = "说实话，这都是你自己的错，别再自怨自艾了。"
    assert plain_spacing(sign.join(blame)) == blame


@pytest.mark.parametrize("sign", ["~", " ❤ ", "❤️", "/", " | ", "*"])
def test_plain_spacing_reads_words_with_a_sign_between_every_two(sign):
    """Until the twenty-ninth revision a sign between every two English words broke every
    lexicon pattern (dev and test contrast sets, "~": 3 % of the unkind replies raised the mood,
    +1.4 points on average over undisguised), and one between every two Chinese characters was
    read only between single characters (every two: +0.4)."""
    blame = "Honestly, this is your own fault and you need to stop complaining about it."
    assert plain_spacing(blame.replace(" ", sign)) == blame
    chinese = "说实话，这都是你自己的错，别再自怨自艾了，谁让你当初不听劝呢。"
    assert plain_spacing(sign.join(chinese[i : i + 2] for i in range(0, len(chinese), 2))) == chinese


@pytest.mark.parametrize(
    "text",
    [
        "做饭/买菜/洗碗/拖地/带娃", "从“头脑-动机-习惯-环境-监督-反馈”六个维度", "the Say/Think/Feel/Do map", "sunset-in-a-barn light",
        "I'm here for you 💛 Take care 💛 You matter.",
    ],
)
def test_plain_spacing_leaves_lists_of_terms_and_steps_as_they_are(text):
    assert plain_spacing(text) == text


@pytest.mark.parametrize("text", ["约翰·史密斯说的", "早/中/晚都可以", "苹果、香蕉、橘子、梨", "加油💪加油💪加油"])
def test_plain_spacing_leaves_a_sign_that_does_not_stand_between_every_two_characters(text):
    assert plain_spacing(text) == text


@pytest.mark.parametrize(
    "text, read",
    [
        ("Hónestly, this is yóur ówn fáult", "Honestly, this is your own fault"),
        ("".join(c + "\u0301" if c.isalpha() else c for c in "your own fault"), "your own fault"),  # zalgo
        ("".join(c + "\u0336" for c in "your fault"), "your fault"),  # struck through
        ("你\u0301自\u0301己\u0301的\u0301错", "你自己的错"),
        ("café, naïve; йод, и\u0306", "cafe, naive; йод, и\u0306"),  # marks of other scripts stay
    ],
)
def test_plain_letters_reads_letters_without_the_marks_put_on_them(text, read):
    assert plain_letters(text) == read


def test_plain_letters_reads_look_alike_letters_as_the_letters_they_look_like():
    assert plain_letters("Hоnеstly, yоu brоught this оn yоursеlf.") == "Honestly, you brought this on yourself."  # Cyrillic о, е
    assert plain_letters("Just gеt οver it") == "Just get over it"  # Cyrillic е, Greek ο
    assert plain_letters("ｇｅｔ ｏｖｅｒ 𝐢𝐭 ２ｘ") == "get over it 2x"  # full-width and mathematical letters
    assert plain_letters("Честно говоря, это твоя вина.") == "Честно говоря, это твоя вина."  # Russian stays Russian
    assert plain_letters("你好，世界！（真的）") == "你好，世界！（真的）"  # Chinese marks are full-width and stay
    assert as_read("yоu  need to  gеt over it") == "you need to get over it"


@pytest.mark.parametrize(
    "text, read",
    [
        ("說實話，這都是你自己的錯，別再抱怨了。", "说实话，这都是你自己的错，别再抱怨了。"),
        ("你應該明白", "你应该明白"),  # a few traditional characters where the lexicons look
        ("我爲你難過，裏面的話", "我为你难过，里面的话"),  # variants
        ("看著他們，想著過去；這本著作很著名，進步顯著", "看着他们，想着过去；这本著作很著名，进步显著"),
        ("別找藉口了，這份慰藉很難得", "别找借口了，这份慰藉很难得"),
        ("你甚麼都反覆想，彷彿", "你什么都反复想，仿佛"),
    ],
)
def test_simplified_reads_traditional_characters_as_simplified(text, read):
    assert simplified(text) == read


@pytest.mark.parametrize("text", ["著名的慰藉，显著的覆盖", "听起来你很难过。", "It's not your fault.", "我们"])
def test_simplified_leaves_a_simplified_text_as_it_is(text):
    assert simplified(text) is text


def test_simplified_reads_back_every_bundled_chinese_contrast_reply_written_traditionally():
    """The table one way and the other: no character of the bundled Chinese contrast sets (replies
    and conversations) is lost (checked by hand against OpenCC on the recorded replies too; see
    `traditional_chinese`)."""
    texts = [t for c in load_contrast_sets("zh") for t in (*c.replies, *(m["content"] for m in c.history))]
    written = [traditional(t) for t in texts]
    assert sum(w != t for w, t in zip(written, texts)) >= 0.95 * len(texts)
    assert [simplified(w) for w in written] == texts


@pytest.mark.parametrize(
    "text, read, unread",
    [
        ("I hear you. Lorem ipsum dolor sit amet, consectetur adipiscing elit.", "I hear you.", 8),
        ("我理解你。Sinceramente, esto es culpa tuya. 你愿意多说说吗？", "我理解你。你愿意多说说吗？", 5),
        ("That sounds hard. Честно говоря, ты сам виноват, хватит себя жалеть.", "That sounds hard.", 8),
        ("Stell dich nicht so an. Das ist doch keine große Sache.", "Stell dich nicht so an.", 5),  # 3 of 5 unknown: read
        ("Two all-nighters gluing balsa wood is a lot.", None, 0),  # English never comes near
        ("比如 Keychron、Akko、Varmilo 这些品牌，PBT 和 ABS 的键帽。", None, 0),  # names and terms
        ("微软官方学习中心(support.microsoft.com/zh-cn/excel)有免费教程。", None, 0),  # an address
        ("我特别懂你的心情呢！(ﾉ◕ヮ◕)ﾉ*:･ﾟ✧ (´｡• ω •｡`)", None, 0),  # kaomoji
        ("Lorem ipsum dolor sit amet, consectetur adipiscing elit.", None, 0),  # nothing else: read as it is
    ],
)
def test_without_unread_takes_out_what_is_in_no_language_the_judge_reads(text, read, unread):
    assert without_unread(text) == (text if read is None else read, unread)


@pytest.mark.parametrize(
    "text, read",
    [
        ("H0n3stly, th1s is y0ur 0wn f4ult. L3t m3 b3 blunt, you'r3 t0 blam3.", "Honestly, this is your own fault. Let me be blunt, you're to blame."),
        ("this_is_your_own_fault", "this is your own fault"),
        ("this🙂is🙂your🙂own🙂fault", "this is your own fault"),
        ("Honestly, it's your own fualt; you shuold stop feeling sorry for yourslef.", "Honestly, it's your own fault; you should stop feeling sorry for yourself."),
    ],
)
def test_plain_spelling_reads_words_as_they_are_spelt(text, read):
    assert plain_spelling(text) == read


@pytest.mark.parametrize(
    "text",
    [
        "See you at 4pm on the 2nd, or 5am on the 11th; 2-4h, 3p, mp3, covid19, R2D2, win10, $5, @sam, 24/7, 1990s.",
        "Hard—really hard. _This_ matters, and so does snake case.",
        "今天__月__日，我允许自己______。",
        "Two all-nighters gluing balsa wood, then soup and pork chops.",  # words no lexicon has, left as they are
    ],
)
def test_plain_spelling_leaves_numbers_names_and_blanks(text):
    assert plain_spelling(text) == text


def test_no_bundled_text_is_read_as_in_no_language_or_respelt():
    """The contrast sets (replies and conversations), the personas' openings and the speech-act
    corpora (12,956 texts, English and Chinese; SAGE's 4,789 recorded replies none either):
    no clause is taken out as unread, and no word is spelt otherwise."""
    texts = [t for lang in ("en", "zh") for c in load_contrast_sets(lang) for t in (*c.replies, *(m["content"] for m in c.history))]
    texts += [p.opening_line for p in PersonaSet.bundled()]
    for lang in ("en", "zh"):
        path = Path(speech_act_model.__file__).parent / "speech_act_corpus" / f"{lang}.jsonl"
        texts += [t for line in path.read_text(encoding="utf-8").splitlines() for t in json.loads(line).values() if isinstance(t, str)]
    assert len(texts) > 12_000
    assert [t for t in texts if without_unread(as_read(t))[1]] == []
    assert [t for t in texts if plain_spelling(t) != t] == []


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
        ('Like I said, "it\'s your own fault."', "it's your own fault."),  # in the first person
        ("“你就是想太多了，别矫情了。”", "你就是想太多了，别矫情了。"),
        ("我想说：“这都是你自己的错。”", "这都是你自己的错。"),
        ("我还是想说：“你就是太敏感了。”", "你就是太敏感了。"),
        # a voice the reply makes up, not turned down
        ('That sounds hard. Some people would say, "you brought this on yourself."', "That sounds hard. you brought this on yourself."),
        ("这确实难。有人会说：“这都是你自找的。”", "这确实难。这都是你自找的。"),
        ('Some would say "it was your own fault", but that\'s life.', "it was your own fault, but that's life."),
        ("别人会说：“你就是太玻璃心。”不过这也正常。", "你就是太玻璃心。不过这也正常。"),  # 别人 and 不过 deny nothing
        ('Your family would probably say, "you brought this on yourself."', "you brought this on yourself."),
        ('Some would say "it was your own fault", but nobody\'s perfect.', "it was your own fault, but nobody's perfect."),
        ("你家里人可能会说：“你太矫情了。”", "你太矫情了。"),
        ("有人会说：“都怪你自己。”没有人是完美的。", "都怪你自己。没有人是完美的。"),
        # passed on from the writer's own people, or as a saying, not turned down (until the
        # thirtieth revision someone else's: "As my old coach used to say:" in front of the contrast
        # sets' unkind replies raised the mood in 23 % (en) and 18 % (zh) of them, +3.8 / +4.2 points)
        ('My grandma always said, "you made your bed, now lie in it."', "you made your bed, now lie in it."),
        ('As my old coach used to say: "quit whining."', "quit whining."),
        ('A friend of mine once told me, "you get what you tolerate."', "you get what you tolerate."),
        ('As the old saying goes, "you reap what you sow."', "you reap what you sow."),
        ("我奶奶常说：“自己选的路，跪着也要走完。”", "自己选的路，跪着也要走完。"),
        ("有个朋友跟我说过：“想太多就是矫情。”", "想太多就是矫情。"),
        ("俗话说：“一个巴掌拍不响。”", "一个巴掌拍不响。"),
        # a saying, words to imagine being told or to tell oneself, or words the reply introduces as its
        # own (until the thirtieth revision someone else's: "In other words:" in front of the contrast
        # sets' unkind replies raised the mood in 12 % (en) of the dev and test ones, 讲真的： in 24 % (zh))
        ('As Einstein said, "stop wallowing."', "stop wallowing."),
        ('Imagine a good friend telling you: "get over it."', "get over it."),
        ('Try telling yourself: "quit whining."', "quit whining."),
        ('In other words: "you brought this on yourself."', "you brought this on yourself."),
        ('The words I\'d use: "stop complaining."', "stop complaining."),
        ("正如爱因斯坦所说：“别再矫情了。”", "别再矫情了。"),
        ("试着对自己说：“别再自怨自艾了。”", "别再自怨自艾了。"),
        ("讲真的：“这都是你自找的。”", "这都是你自找的。"),
        ('Repeat after me: "I brought this on myself."', "I brought this on myself."),
        ("记住这句：“吃不了苦就别抱怨。”", "吃不了苦就别抱怨。"),
        ("能跟我说说，让你觉得“累”的是哪些方面吗？", None),  # the user's words, to me
        ("要学会说“不”，不用每次都答应。", None),  # 学会说 is no voice it makes up
        ('可以用孩子能听懂的话，简单直接地说，比如"爷爷不会再回来了"。', None),  # words of a child's, not a quotation
        ("总之一句话：“你就是想太多。”", "你就是想太多。"),
        # endorsed: its speaker said to be right (the user's being right endorses nothing quoted)
        ('Your mom has a point when she says: "you brought this on yourself."', "you brought this on yourself."),
        ("你妈说得对：“都是你自己惯的。”", "都是你自己惯的。"),
        ("别人会跟你说，而且他们没说错：“你就是太玻璃心。”", "别人会跟你说，你就是太玻璃心。"),  # the clause that endorses goes
        # only the clause that names the voice is its frame: what the reply says before it is read
        ('Stop whining, as my grandma always said: "Be kind to yourself."', "Stop whining, Be kind to yourself."),
        ("都怪你自己，我奶奶常说：“对自己好一点。”", "都怪你自己，对自己好一点。"),
        ('You\'re right that your dad called you "lazy", and that was unfair.', None),
        ("你说得对，你爸骂你“懒”确实不公平。", None),
        # someone else's: said to be theirs, before or after, or denied in the first person
        ('My dad used to say "toughen up", but that never helped anyone.', None),
        ("你妈说“你就是懒”，这话太伤人了。", None),
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


@pytest.mark.parametrize(
    "spell",
    [lambda t: t.translate(str.maketrans("oea", "034")), lambda t: t.replace(" ", "_"), lambda t: t.replace("fault", "fualt").replace("should", "shuold")],
    ids=["leetspeak", "joined", "swapped"],
)
def test_the_judge_reads_blame_spelt_otherwise_as_blame(persona, spell):
    judge = CalibratedJudge.load()
    history = ({"role": "user", "content": persona.opening_line},)
    warm = "That sounds exhausting, and it makes sense that it weighs on you."
    blame = " Honestly, this is your own fault. You should have seen it coming."
    plain = judge_features(persona, history, warm + blame, version=2)
    assert judge_features(persona, history, warm + spell(blame), version=2).acts == plain.acts
    assert judge.predict(persona, history, warm + spell(blame)) == pytest.approx(judge.predict(persona, history, warm + blame))


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


@pytest.mark.parametrize(
    "language, warm, said, term",
    [
        (
            "zh", "听起来这件事真的让你很难受，我能理解你的感受。", "He's stressed, men cope differently, end of story.",
            "可以用 Google Data Studio 或 Excel Power Query 把账目理一理。",
        ),
        (
            "en", "That sounds exhausting, and it makes sense that it weighs on you.", "工作上的事，谁都会遇到，没什么大不了",
            "The helpline of the 北京心理危机研究与干预中心 is open at night.",
        ),
    ],
)
def test_something_said_in_the_other_language_costs_as_a_reply_in_it_does(language, warm, said, term):
    """A warm reply followed by a sentence in the other language that reads as nothing worse
    than dismissive (until the twenty-ninth revision: in 4 % of the Chinese contrast sets'
    contexts an English unkind reply so said raised the mood, in 7 % it scored at least the warm
    reply alone) costs what a whole reply in that language costs; a term or a name in it
    (the only kind in all but one of SAGE's recorded replies with such a part) costs nothing."""
    persona = next(p for p in PersonaSet.bundled() if p.language == language and p.split == "test")
    history = ({"role": "user", "content": persona.opening_line},)
    simulator = CalibratedSimulator()
    sep = " " if language == "en" else ""
    alone, mixed, named = (simulator.judge_reply(persona, history, r) for r in (warm, warm + sep + said, warm + sep + term))
    assert "in another language" in mixed.reasoning and mixed.delta <= alone.delta - 4
    assert "in another language" not in named.reasoning and "in another language" not in alone.reasoning
    assert judge_features(persona, history, warm + sep + said, version=2).other_part.prose
    assert not judge_features(persona, history, warm + sep + term, version=2).other_part.prose


def test_the_judge_reads_traditional_characters_as_simplified_ones():
    """Until the twenty-fourth revision, a reply in traditional characters read as unfamiliar
    characters: a warm one cost (the Chinese contrast sets' warm replies written so by OpenCC:
    -0.90 on average against +1.47), and unkindness said so after a warm reply went unread
    (45 % of those sandwiches raised the mood, 26 % in simplified characters)."""
    persona = next(p for p in PersonaSet.bundled() if p.language == "zh" and p.split == "test")
    judge = CalibratedJudge.load()
    history = ({"role": "user", "content": persona.opening_line},)
    warm = "听起来这件事真的让你很难受，我能理解你的感受。你愿意多说说最让你难过的是哪一部分吗？"
    blame = "说实话，这都是你自己的错，你应该明白，别再抱怨了。"
    for reply in (warm, blame, warm + blame):
        assert judge_features(persona, history, traditional(reply), version=2) == judge_features(persona, history, reply, version=2)
        assert judge.predict(persona, history, traditional(reply)) == judge.predict(persona, history, reply)
    assert judge.predict(persona, history, warm + traditional(blame)) < min(0.0, judge.predict(persona, history, warm) - 3.0)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_sentence_in_a_language_the_user_does_not_read_costs(language):
    """Until the twenty-fourth revision a Spanish or German sentence, or lorem ipsum, after a
    warm Chinese reply counted towards its length, which a Chinese reply is paid for: +0.4
    points on average over the contrast sets' warm replies, at least the warm reply alone in
    nine contexts of ten. Now it is not read, and it costs."""
    persona = next(p for p in PersonaSet.bundled() if p.language == language and p.split == "test")
    judge = CalibratedJudge.load()
    history = ({"role": "user", "content": persona.opening_line},)
    warm = "听起来这件事真的让你很难受，我能理解你的感受。" if language == "zh" else "That sounds exhausting, and it makes sense that it weighs on you."
    for tail in ("Lorem ipsum dolor sit amet, consectetur adipiscing elit.", "Lo siento mucho, de verdad; estoy aquí contigo y te escucho."):
        seen, plain = judge_features(persona, history, warm + " " + tail, version=2), judge_features(persona, history, warm, version=2)
        assert seen.unread >= 6 and seen.named == plain.named and seen.words == plain.words
        assert judge.predict(persona, history, warm + " " + tail) < judge.predict(persona, history, warm) - 1.0


def test_with_marks_only_the_frame_that_made_a_quote_its_own_goes():
    assert own_voice('In other words: "get over it."', "en", marks=True) == '"get over it."'
    assert own_voice("我奶奶常说：“吃不了苦就别抱怨。”", "zh", marks=True) == "“吃不了苦就别抱怨。”"
    reported = 'Your dad called you "lazy", and that stung.'
    assert own_voice(reported, "en", marks=True) is reported


@pytest.mark.parametrize(
    "frame",
    ['As Einstein said, "{}"', 'As my old coach used to say: "{}"', 'In other words: "{}"', 'My grandma always said, "{}"'],
)
def test_a_frame_that_makes_a_quote_its_own_takes_up_none_of_the_users_words(persona, frame):
    # The user said "said", "used" and "other"; the frame's words are no uptake of theirs.
    history = (
        {"role": "user", "content": "I got a C in participation. My teacher said it was fair, other people said I overreact, and I used to get top marks."},
    )
    reply = "A C in participation? That's maybe ten percent of the grade. You still got top marks elsewhere. This is such a non-issue."
    plain = judge_features(persona, history, reply, version=2)
    framed = judge_features(persona, history, frame.format(reply), version=2)
    for name in ("uptake", "uptake_last", "on_topic", "echo", "idle_sentences", "repeated_sentences"):
        assert framed.named[name] == pytest.approx(plain.named[name], abs=0.02), name
    assert framed.words == plain.words  # nor is it any of the reply's words


def test_a_quotes_closing_mark_after_its_sentence_end_is_no_sentence(persona):
    # The marks at the ends of lines had counted as idle sentences, and two of them as one said twice.
    history = ({"role": "user", "content": persona.opening_line},)
    reply = 'Try telling yourself "I did what I could."\nAnd maybe "It is okay to rest."\nOr even "One step at a time."\n'
    quoted, plain = (judge_features(persona, history, text, version=2) for text in (reply, reply.replace('"', "")))
    assert quoted.named["repeated_sentences"] == plain.named["repeated_sentences"] == 0
    assert quoted.named["idle_sentences"] == plain.named["idle_sentences"]


@pytest.mark.parametrize(
    ("language", "framed", "plain"),
    [
        ("en", 'Stop whining and get over it, as my grandma always said: "Take good care of yourself."',
         "Stop whining and get over it. Take good care of yourself."),
        ("zh", "你太矫情了，都怪你自己，我奶奶常说：“照顾好自己。”", "你太矫情了，都怪你自己。照顾好自己。"),
    ],
)
def test_what_a_reply_says_before_a_frame_in_its_sentence_is_read(language, framed, plain):
    # Until the thirty-second revision the whole sentence before the quote was its frame, unread.
    persona = next(p for p in PersonaSet.bundled() if p.language == language and p.split == "test")
    history = ({"role": "user", "content": persona.opening_line},)
    seen, said = judge_features(persona, history, framed, version=2), judge_features(persona, history, plain, version=2)
    assert seen.acts == said.acts and (seen.acts["dismiss"] or seen.acts["blame"])


@pytest.mark.parametrize(
    ("language", "user", "quoted", "stock", "reflected"),
    [
        ("en", "My landlord kept my whole deposit and says the scratches on the floor were my fault.",
         'You said: "My landlord kept my whole deposit and says the scratches on the floor were my fault."',
         "I'm so sorry. That sounds really hard.",
         "Losing the whole deposit over scratches you didn't make would make anyone furious."),
        ("zh", "房东扣了我全部押金，还说地板上的划痕是我弄的。", "你说：“房东扣了我全部押金，还说地板上的划痕是我弄的。”",
         "真的很抱歉，听起来好难受。", "押金全被扣，还把不是你弄的划痕算到你头上，换谁都会气。"),
    ],
)
def test_the_users_words_said_back_in_quote_marks_take_up_nothing(language, user, quoted, stock, reflected):
    # Until the thirty-second revision a quote of their longest sentence counted a third of saying
    # its words: enough to lift a fixed script past the listening agent in Chinese.
    persona = next(p for p in PersonaSet.bundled() if p.language == language and p.split == "test")
    history = ({"role": "user", "content": user},)
    sep = " " if language == "en" else ""
    echo = judge_features(persona, history, quoted + sep + stock, version=2).named
    alone = judge_features(persona, history, stock, version=2).named
    own = judge_features(persona, history, reflected + sep + stock, version=2).named
    assert echo["uptake"] == alone["uptake"] and echo["takes_up_nothing"] == 1.0
    assert own["uptake"] > echo["uptake"]
