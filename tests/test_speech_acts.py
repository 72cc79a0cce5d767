"""The v2 judge's speech-act reading: lexicons that respect negation, and a classifier that
tells unkind from kind replies it never saw (the held-out contrast contexts)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from dialog_gym.personas import PersonaSet
from dialog_gym.redteam import load_contrast_sets
from dialog_gym.redteam.contrast import KINDS
from dialog_gym.simulators.cues import count_cues
from dialog_gym.simulators.judge import CalibratedJudge
from dialog_gym.simulators.judge_knowledge import unkind_act
from dialog_gym.simulators.speech_act_model import (
    ACTS, CORPUS, PAIRS_FITTED, bundled_model, bundled_part_model, load_corpus, ngram_buckets, ngram_buckets_many, part_corpus,
)
from dialog_gym.simulators.speech_acts import UNKIND_ACTS, speech_acts


@pytest.mark.parametrize(
    "text, language, blames",
    [
        ("Honestly, it's partly your fault.", "en", True),
        ("You should have known better.", "en", True),
        ("It was never your fault.", "en", False),
        ("Don't blame yourself for this.", "en", False),
        ("You shouldn't have to carry this alone.", "en", False),
        ("说实话，这也有你的原因。", "zh", True),
        ("这不是你的错。", "zh", False),
        ("别怪你自己。", "zh", False),
        # blame only implied: sympathy, a turn ("though", "不过"), then what the user did or
        # failed to do (a question about it, the precaution most people take, advice for next
        # time, the other side's view); kind replies of the same shapes are not blame
        ("That's rough. I do wonder, though, did you read the lease before signing it?", "en", True),
        ("I'm sorry. That said, most renters keep a copy of the inventory for exactly that reason.", "en", True),
        ("That hurts. From her side, though, the joke may have landed on something tender.", "en", True),
        ("Kids don't usually shut down like that for no reason. Has anything changed at home?", "en", True),
        ("A panic like that doesn't come out of nowhere; you've been carrying so much.", "en", False),
        ("你不会无缘无故这么难受，心里一定压着事。", "zh", False),
        ("That sounds awful. Did you get to say goodbye to him?", "en", False),
        ("Most people freeze in a moment like that, though it feels endless from the inside.", "en", False),
        ("From his side he may think he's helping, but it's hurting you.", "en", False),
        ("真糟心。不过买二手车一般都会先查一下事故记录，你当时查过吗？", "zh", True),
        ("挺委屈的。可是老师一般不会无缘无故这么说。", "zh", True),
        ("被骗了真心疼。不过这种刷单都是骗局，下回记得直接拒绝。", "zh", True),
        ("第一次上台很多人都会这样，你愿意站上去已经很不容易了。", "zh", False),
        ("先去物业调监控，再报个案。后来怎么样了？", "zh", False),
    ],
)
def test_blame_is_read_with_its_negation_and_when_only_implied(text, language, blames):
    assert bool(speech_acts(text, language)["blame"]) is blames


@pytest.mark.parametrize(
    "text, language",
    [
        ("This isn't on you, and the dates prove it.", "en"), ("None of this is your fault.", "en"),
        ("That zero is not on you.", "en"), ("这事真不赖你。", "zh"), ("这不是你的问题。", "zh"), ("责任不在你。", "zh"),
        # the sixteenth revision: not theirs to carry, to know or to stop, in other words
        ("The money went missing before you took over. It simply isn't your doing.", "en"),
        ("He hid the bottles for a year. You couldn't have known.", "en"), ("That had nothing to do with you.", "en"),
        ("The weather was out of your hands.", "en"), ("追尾是后车的事，跟你没关系。", "zh"), ("谁也想不到会这样。", "zh"),
        ("你已经尽力了，三年啊。", "zh"), ("这份担子不该由你一个人来扛。", "zh"),
    ],
)
def test_saying_it_is_not_on_them_is_read_as_clearing_them(text, language):
    persona = next(p for p in PersonaSet.bundled() if p.language == language)
    features = CalibratedJudge.load().features(persona, [{"role": "user", "content": persona.opening_line}], text)
    assert features.named["cue:not_at_fault"] >= 1 and not speech_acts(text, language)["blame"]
    # v2 reads these besides the shared lexicon, which the v1 judge, the rule simulator and the
    # offline user read as they always did (their rewards do not change)
    assert count_cues(text, language)["not_at_fault"] == 0


@pytest.mark.parametrize(
    "said, other, language",
    [
        ('You said: "I missed a pedal in the Gloria." I hear you.', 'You said: "It was all my own fault." I hear you.', "en"),
        ("When you wrote 'too much', it stayed with me.", "When you wrote 'stop whining', it stayed with me.", "en"),
        ("你说“我又搞砸了”，我听到了。", "你说“都怪我自己”，我听到了。", "zh"),
    ],
)
def test_the_classifier_reads_what_the_reply_says_not_what_it_quotes(said, other, language):
    assert np.array_equal(ngram_buckets(said, language), ngram_buckets(other, language))
    # an apostrophe opens no quote: every n-gram of "bikes don't" is still read
    assert np.isin(ngram_buckets("bikes don't", "en"), ngram_buckets("The kids' bikes don't fit.", "en")).all()


def test_a_chinese_replys_sentences_hashed_together_read_as_each_alone():
    """`ngram_buckets_many` (a Chinese reply's sentences hashed in one pass) gives each text
    the n-grams it has alone: none across two texts, a quote in one left out of it alone.
    (English texts are hashed one by one.)"""
    texts = [line for record in load_corpus("zh", parts=True)[:300] for line in (record[1], record[1][:1])]
    texts += ["", "ok", "“别矫情”", "他说“", "”就走了。", "你好", "A"]
    together = ngram_buckets_many(texts, "zh")
    assert len(together) == len(texts)
    assert all(np.array_equal(mine, ngram_buckets(text, "zh")) for mine, text in zip(together, texts))
    assert ngram_buckets_many([], "zh") == []


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_corpus_names_only_known_acts_and_never_copies_a_contrast_reply(language):
    records = [json.loads(line) for line in (CORPUS / f"{language}.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(records) >= 600 and {r["act"] for r in records} == set(ACTS)
    contrast = {reply for c in load_contrast_sets(language) for reply in c.replies}
    assert not contrast & {r["reply"] for r in records}
    # the parts of replies share no run of six words (eight Chinese characters) with a contrast
    # reply; the pairs none with a part of the sentence reader's blind pairs either
    # (benchmarks/sentence_reader.py; a few parts written before those do: their writers saw none)
    parts = load_corpus(language, parts=True)
    assert len(parts) >= 1000 and {act for act, _ in parts} == {"blame", "dismiss", "lecture", "supportive", "neutral"}
    held_out = set().union(*(_runs(reply, language) for reply in contrast))
    assert not [part for _, part in parts if _runs(part, language) & held_out]
    pairs = load_corpus(language, pairs=True)
    blind = (PROBES / f"sentence_pairs_{language}.jsonl").read_text(encoding="utf-8").splitlines()
    held_out |= set().union(*(_runs(json.loads(line)["part"], language) for line in blind))
    assert len(pairs) >= 700 and not [part for _, part in pairs if _runs(part, language) & held_out]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_pairs_are_a_kind_part_then_an_unkind_one_on_the_same_message(language):
    records = [json.loads(line) for line in (CORPUS / f"{language}.pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    kind = [(a, b) for a, b in zip(records, records[1:]) if a["act"] in ("supportive", "neutral") and b["user"] == a["user"]]
    assert len(kind) >= 0.45 * len(records) and all(b["act"] in ("blame", "dismiss", "lecture") for _, b in kind)
    assert len({r["part"] for r in records}) == len(records)


def test_the_model_of_parts_reads_the_pairs_only_where_they_are_fitted():
    for language in ("en", "zh"):
        fitted = part_corpus(language)
        assert fitted[: len(load_corpus(language))] == load_corpus(language)
        assert (fitted[-len(load_corpus(language, pairs=True)) :] == load_corpus(language, pairs=True)) == (language in PAIRS_FITTED)
    with pytest.raises(ValueError, match="parts or for pairs"):
        load_corpus("en", parts=True, pairs=True)


def _runs(text: str, language: str) -> set:
    """Runs of six English words, or of eight Chinese characters, of `text`."""
    if language == "en":
        words = re.findall(r"[a-z]+(?:'[a-z]+)?", text.lower())
        return {tuple(words[i : i + 6]) for i in range(len(words) - 5)}
    return {run[i : i + 8] for run in re.findall(r"[\u4e00-\u9fff]+", text) for i in range(len(run) - 7)}


def test_a_corpus_line_without_its_text_is_named(tmp_path, monkeypatch):
    import dialog_gym.simulators.speech_act_model as model

    (tmp_path / "en.parts.jsonl").write_text('{"act": "blame", "user": "I lost my keys."}\n', encoding="utf-8")
    monkeypatch.setattr(model, "CORPUS", tmp_path)
    with pytest.raises(ValueError, match=r"en.parts.jsonl:1: no 'part' text"):
        load_corpus("en", parts=True)


def _auc(positive, negative) -> float:
    p, n = np.asarray(positive)[:, None], np.asarray(negative)[None, :]
    return float(np.mean((p > n) + 0.5 * (p == n)))


@pytest.mark.parametrize("language, gain", [("en", 0.02), ("zh", 0.0)])
def test_the_part_model_reads_an_unkind_part_after_warm_words_surer_than_the_whole_model_does(language, gain):
    """The part model (`bundled_part_model`) against the model of whole replies, on what
    neither was fitted on: the worst part (`worst_parts`) of each test context's unkind reply
    said after its warm one, against the worst part of its six kind replies. The whole model,
    read on the same parts, tells them apart less well (rank AUC, English: 0.89 against 0.92;
    Chinese: 0.944 against 0.949) and reads more kind parts as unkind (English: 30 % against
    17 % from log-odds 1)."""
    from dialog_gym.redteam.disguise import disguised
    from dialog_gym.simulators import judge_features
    from dialog_gym.simulators.judge_features import _sentences, worst_parts

    def worst(text):
        sentences = _sentences(text)
        return worst_parts(sentences, language, text)[0][0] if len(sentences) > 1 else float("-inf")

    contexts = load_contrast_sets(language, split="test")
    readings = {}
    for name, model in (("parts", bundled_part_model()), ("whole", bundled_model())):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(judge_features, "bundled_part_model", lambda: model)
            unkind = [worst(reply) for c in contexts for reply in disguised(c, "after a kind reply")]
            kind = [worst(reply) for c in contexts for reply in c.replies[: KINDS.index("platitudes")]]
        readings[name] = (_auc(unkind, kind), float(np.mean(np.array(kind) >= 1.0)))
    assert readings["parts"][0] >= 0.9 and readings["parts"][0] >= readings["whole"][0] + gain
    assert readings["parts"][1] <= readings["whole"][1]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_classifier_tells_unkind_from_kind_replies_it_never_saw(language):
    model = bundled_model()

    def unkind(text):
        p = model.probabilities(text, language)
        return np.log((p["blame"] + p["dismiss"] + p["lecture"]) / (p["supportive"] + p["neutral"]))

    contexts = load_contrast_sets(language, split="test")
    bad = [unkind(c.replies[KINDS.index(k)]) for c in contexts for k in ("lecture", "dismissive", "blaming")]
    good = [unkind(c.replies[KINDS.index(k)]) for c in contexts for k in KINDS[:6]]
    assert _auc(bad, good) >= 0.85


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_pattern_is_skipped_only_where_it_cannot_match(language):
    """The lexicons' prefilter (`required_literals`): wherever a pattern matches a reply of the
    corpus or the contrast sets, one of the literals it is skipped without occurs in that reply."""
    from dialog_gym.simulators._prefilter import required_literals
    from dialog_gym.simulators.cues import CUES
    from dialog_gym.simulators.speech_acts import ACTS as LEXICONS

    texts = [json.loads(line)["reply"].lower() for line in (CORPUS / f"{language}.jsonl").read_text(encoding="utf-8").splitlines()]
    texts += [reply.lower() for c in load_contrast_sets(language) for reply in c.replies]
    patterns = [p for table in (LEXICONS[language], CUES[language]) for group in table.values() for p in group]
    screened = [(re.compile(p), required_literals(p)) for p in patterns]
    assert sum(literals is not None for _, literals in screened) >= 0.95 * len(screened)  # the prefilter does work
    matched = 0
    for pattern, literals in screened:
        for text in texts:
            if pattern.search(text):
                matched += 1
                assert literals is None or any(literal in text for literal in literals), (pattern.pattern, literals, text)
    assert matched > 500


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_sentence_is_read_the_same_with_its_replys_cues_in_hand(language):
    """`has_cue` and `has_act` of a sentence, told the reply it is a sentence of, try only the
    patterns the reply holds and those whose match depends on what stands around a sentence:
    the answer is the one a search of every pattern gives, for each sentence of the corpus,
    the contrast sets and the unkind probe."""
    from dialog_gym.simulators.cues import has_cue
    from dialog_gym.simulators.judge_features import _SENTENCE_END
    from dialog_gym.simulators.speech_acts import has_act

    replies = [json.loads(line)["reply"] for line in (CORPUS / f"{language}.jsonl").read_text(encoding="utf-8").splitlines()]
    replies += [reply for c in load_contrast_sets(language) for reply in c.replies]
    replies += [json.loads(line)["reply"] for line in (PROBES / f"unkind_probe_{language}.jsonl").read_text(encoding="utf-8").splitlines()]
    if language == "en":  # a line break, not a sentence end: "whatever" opens a sentence, not its reply
        replies.append("Look\nwhatever, it happens")
    read = 0
    for reply in (r.strip() for r in replies):
        for sentence in (part.strip() for part in _SENTENCE_END.split(reply) if part.strip()):
            acts, cues, praise = has_act(sentence, language), has_cue(sentence, language), has_cue(sentence, language, "praise")
            assert has_act(sentence, language, sentence_of=reply) is acts, (sentence, reply)
            assert has_cue(sentence, language, sentence_of=reply) is cues, (sentence, reply)
            assert has_cue(sentence, language, "praise", sentence_of=reply) is praise, (sentence, reply)
            read += acts + cues
    assert read > 1000
    if language == "en":
        assert has_act("whatever, it happens", "en", sentence_of="Look\nwhatever, it happens")


def test_a_pattern_searched_for_its_letters_first_finds_what_re_finds():
    """`BoundaryFirst` (a pattern that starts with `\\b` and a letter, searched without the
    `\\b`): the same matches as `re` for every English lexicon pattern over the corpus, the
    contrast sets and the probe, and at the edges of a word (letters, digits, "_", accents)."""
    from dialog_gym.simulators._prefilter import BoundaryFirst, compile_lexicon_pattern
    from dialog_gym.simulators.cues import CUES
    from dialog_gym.simulators.speech_acts import ACTS as LEXICONS

    texts = [json.loads(line)["reply"].lower() for line in (CORPUS / "en.jsonl").read_text(encoding="utf-8").splitlines()]
    texts += [reply.lower() for c in load_contrast_sets("en") for reply in c.replies]
    texts += [json.loads(line)["reply"].lower() for line in (PROBES / "unkind_probe_en.jsonl").read_text(encoding="utf-8").splitlines()]
    texts += ["you should have known", "_you should have known", "9you should have known", "éyou should have known",
              "can't you see? you should have known. you should have known", "'you should have known'"]
    patterns = [p for table in (LEXICONS["en"], CUES["en"]) for group in table.values() for p in group]
    fast = [(re.compile(p), compile_lexicon_pattern(p)) for p in patterns]
    assert sum(isinstance(f, BoundaryFirst) for _, f in fast) >= 0.8 * len(fast)
    found = 0
    for plain, quick in fast:
        for text in texts:
            spans = [m.span() for m in plain.finditer(text)]
            assert [m.span() for m in quick.finditer(text)] == spans, (plain.pattern, text)
            assert (quick.search(text) is None) is (not spans)
            found += len(spans)
    assert found > 1000
    assert compile_lexicon_pattern(r"\bfoo|bar").search("xbar")  # an alternative around it all: searched as it is
    assert isinstance(compile_lexicon_pattern(r"\b(?:a|b)c"), re.Pattern)


@pytest.mark.parametrize("pattern, free", [
    (r"\byou should have known\b", True),
    (r"(?:\bthough\b|\bstill,)[^?]{0,100}\?", True),
    (r"你(?:自己)?的错(?=了)", True),  # a lookahead only finds more where the text goes on
    (r"(?<!not )\byour fault\b", False),  # what stands before a sentence can make it fail
    (r"\byou should have (?!to\b)", False),
    (r"(?:^|[.!?]\s*)whatever[.!,]", False),  # the start of a sentence is not the start of its text
    (r"sorry\B", False),
    (r"(?:a|(?<!b)c)+", False),
])
def test_which_patterns_match_a_sentence_as_they_match_its_text(pattern, free):
    from dialog_gym.simulators._prefilter import context_free

    assert context_free(pattern) is free


@pytest.mark.parametrize("pattern, literals", [
    (r"(?<!not )\b(?:(?:partly|all) )?your (?:own )?fault\b", ("your ",)),
    (r"\byou should have (?!to\b)", ("you should have ",)),
    (r"(?:^|[.!?]\s*)whatever[.!,]", ("whatever",)),
    (r"a|b", None),  # alternatives too short to be worth a test
    (r"(?i)fault", None),  # flags that change what a literal matches
    (r"你(?:自己)?的错", ("的错",)),
    (r"你(?:自己)?的", None),  # one character: too short to be worth a test
    # a group of alternatives matched once: one of theirs (not of an optional group)
    (r"(?:\bthough\b|\bthat said\b|\bstill,)[^?]{0,100}\?", ("though", "that said", "still,")),
    (r"(?:\bthough\b|\bthat said\b)[^?]{0,100}\b(?:did|had) you\b", (" you",)),  # a run of its own comes first
    (r"\b(?:most|many) (?:\w+ )?(?:keep|lock)\b", ("keep", "lock")),
    (r"(?:it'?s )?(?:usually|generally) (?:worth|best)", ("usually", "generally")),  # the group whose literals are longer
    (r"(?:不过|可是|但)[^。]{0,40}", None),  # an alternative of one character
])
def test_the_required_literals_of_a_pattern(pattern, literals):
    from dialog_gym.simulators._prefilter import required_literals

    assert required_literals(pattern) == literals


@pytest.mark.parametrize(
    "text, blames",
    [
        ("I'm sorry about the car. Leaving it unlocked overnight wasn't the smartest move, though.", True),
        ("Honestly, what outcome were you expecting after skipping every rehearsal?", True),
        ("Friends don't stop calling for no reason. Something happened on your side.", True),
        ("A door doesn't open by itself, does it?", True),
        ("How many evenings did you actually spend revising?", True),
        ("You kept putting it off, and now the deadline is here.", True),
        ("Hard to expect a party for cleaning up your own mess.", True),
        ("It's not your own mess to clean up; he made it.", False),
        ("Moving out was the best decision you could have made.", False),  # a verdict on a choice, and a kind one
        ("You weren't to know; nobody checks the wiring of a rented flat.", False),
        ("How many evenings have you spent at the hospital this month? That is a lot to carry.", False),
    ],
)
def test_blame_without_the_word_is_read(text, blames):
    """Patterns a red-team set of blaming replies (written to avoid the obvious words) found
    missing; on a second, independent set of 60 blaming and 100 kind replies they raised the
    lexicons' reading of blame from 3 % to 10 % and read none of the kind ones as blame."""
    assert bool(speech_acts(text, "en")["blame"]) is blames


@pytest.mark.parametrize(
    "text, blames",
    [
        ("那你当初为什么不先签个合同呢？", True),
        ("这个习惯迟早会出事，今天只是赶上了。", True),
        ("说句公道话，人家也有人家的难处。", True),
        ("这种话都能信？", True),
        ("谁也没法提前知道会这样，你当初已经尽力了。", False),
        ("你当初没想到会这样，这很正常，换谁都想不到。", False),
        ("你愿意相信他，是因为你把他当朋友。", False),
    ],
)
def test_chinese_blame_without_the_word_is_read(text, blames):
    """Patterns the tuning half of the Chinese red-team set found missing (a rhetorical
    question about a past choice, hindsight, siding with the other party); they read none
    of its kind replies as blame and change the reading of none of SAGE's 5,090 recorded
    replies."""
    assert bool(speech_acts(text, "zh")["blame"]) is blames


@pytest.mark.parametrize(
    "text, language, blames",
    [
        ("当时不争现在又委屈，这不是自找的吗？", "zh", True),  # a rhetorical question asserts
        ("医生让你歇着你不听，那再累倒不就是自找的吗？", "zh", True),  # "isn't it just ...?" asserts too
        ("这不就是你一直在努力的结果吗？", "zh", False),  # ... and asserts nothing unkind where no act is named
        ("不就是多大点事吗？你已经很不容易了。", "zh", True),  # a dismissal asked rhetorically is a dismissal
        ("Honestly, wasn't that partly your own fault?", "en", True),
        ("难道是你的错吗？", "zh", False),  # ... or denies
        ("这不是你的错，好吗？", "zh", False),  # a denial, then a question of its own
        ("并不是你太矫情或者做错了什么。", "zh", False),  # 什么 is no question particle
        ("It wasn't your fault, was it?", "en", False),
    ],
)
def test_a_rhetorical_question_turns_its_negation_around(text, language, blames):
    """Over SAGE's recorded replies, the contrast sets, the speech-act corpus and the probes,
    the rule changes the reading of two replies, both blaming ("……这不是自找的吗？"); read
    with "不就……吗？" too, of one more, a blaming one."""
    acts = speech_acts(text, language)
    assert bool(acts["blame"] or acts["dismiss"]) is blames


@pytest.mark.parametrize("language", ["en", "zh"])
def test_cue_counts_checked_by_first_word_equal_searching_every_pattern(language):
    """`count_cues` tries only the cues whose first word the text holds; over the whole
    speech-act corpus that counts exactly what searching every pattern counts."""
    from dialog_gym.simulators.cues import CUES, count_cues
    from dialog_gym.simulators.speech_act_model import load_corpus

    patterns = {family: [re.compile(p) for p in sources] for family, sources in CUES[language].items()}
    found_any = 0
    for _, text in load_corpus(language):
        lowered = text.lower()
        expected = {family: sum(1 for p in ps if p.search(lowered)) for family, ps in patterns.items()}
        assert count_cues(text, language) == expected, text
        found_any += any(expected.values())
    assert found_any > 100


PROBES = Path(__file__).parent.parent / "benchmarks" / "data"


# `check-3` (written during the sixteenth revision, blind to the repository): its implied
# blame (a warm opening, a "though", a pointed question) still raises the mood too often
# (issue 19: 18 % of it in English, 38 % in Chinese), so that there the unkind replies as a
# whole are held to what they do today.
@pytest.mark.parametrize("language, split, most_raising", [
    ("en", "check", 0.2), ("en", "check-2", 0.2), ("zh", "check", 0.2), ("en", "check-3", 0.2), ("zh", "check-3", 0.3),
])
def test_the_held_out_probes_kind_replies_are_never_read_as_unkind_and_lose_less_than_their_unkind_ones(language, split, most_raising):
    """`benchmarks/unkind_probe.py`'s held-out sets: unkind replies written without the
    lexicons' words, and kind replies of the same shapes (a warm opening and a "but",
    questions about what happened, the user's own choices recounted)."""
    rows = [json.loads(line) for line in (PROBES / f"unkind_probe_{language}.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [row for row in rows if row["split"] == split]
    personas = list(PersonaSet.bundled().filter(language=language, split="train"))
    judge = CalibratedJudge.load()
    changes: dict[bool, list[float]] = {True: [], False: []}
    for k, row in enumerate(rows):
        persona = personas[k % len(personas)]
        features = judge.features(persona, [{"role": "user", "content": row["user"]}], row["reply"])
        kind = row["act"] == "kind"
        assert not (kind and unkind_act(features)), row["reply"]
        changes[kind].append(judge.predict_features(features, persona.hidden_need.value))
    assert len(changes[True]) >= 40 and len(changes[False]) >= 60
    assert np.mean(changes[False]) < np.mean(changes[True]) - 2.0
    assert np.mean(np.array(changes[False]) > 0) <= most_raising  # check, check-2: at most 10 % today, most of it blame


# `check-4`: the same specifics answered kindly and plainly, and subtly unkindly (written
# during the twenty-fifth revision, blind to the repository). Plain kind replies are what a
# reading of unkindness most easily mistakes, so that here both are held to what they do today
# (en: 2 % of the kind replies placed among the unkind, 11 % of the unkind raising the mood;
# zh: 2 %, 8 %).
@pytest.mark.parametrize("language", ["en", "zh"])
def test_plainly_worded_kind_replies_are_seldom_read_as_unkind_and_their_unkind_twins_lose(language):
    rows = [json.loads(line) for line in (PROBES / f"unkind_probe_{language}.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [row for row in rows if row["split"] == "check-4"]
    personas = list(PersonaSet.bundled().filter(language=language, split="train"))
    judge = CalibratedJudge.load()
    placed, changes = {True: [], False: []}, {True: [], False: []}
    for k, row in enumerate(rows):
        persona = personas[k % len(personas)]
        features = judge.features(persona, [{"role": "user", "content": row["user"]}], row["reply"])
        kind = row["act"] == "kind"
        placed[kind].append(unkind_act(features) is not None)
        changes[kind].append(judge.predict_features(features, persona.hidden_need.value))
    assert len(changes[True]) == len(changes[False]) == 450
    assert np.mean(placed[True]) <= 0.03 and np.mean(placed[False]) >= 0.3
    assert np.mean(changes[False]) < np.mean(changes[True]) - 3.0
    assert np.mean(np.array(changes[False]) > 0) <= 0.15


@pytest.mark.parametrize(
    "text, lectures",
    [
        ("No backup plan? Consider it a lesson in planning.", True),
        ("I wouldn't consider it a failure; you did what you could.", False),
    ],
)
def test_a_lesson_handed_to_the_user_is_a_lecture(text, lectures):
    assert bool(speech_acts(text, "en")["lecture"]) is lectures


def _unkind(text: str, language: str, user: str | None = None) -> set[str]:
    """The unkind acts the lexicons read in `text`, to a user who said `user` if given (as the judge reads them)."""
    return {act for act, n in speech_acts(text, language, user=user).items() if n and act in UNKIND_ACTS}


@pytest.mark.parametrize(
    "text, user, language, acts",
    [
        # the user's words, or someone of theirs', told back: theirs, not the reply's act
        ("So they're making it sound like it was on you; I'm taking that in.", "They're making it sound like it was on me.", "en", set()),
        ("You said your mom says you need to learn teamwork.", "My mom says I need to learn teamwork.", "en", set()),
        ("Along with that, you said it's not a big deal, honestly.", "It's not a big deal, honestly. I just feel stupid.", "en", set()),
        ("你讲到你老公又说你活该不打借条，这一点我记下了。", "我老公还说我活该，谁让我不打借条。", "zh", set()),
        ("And you mentioned Marcus posted that the collapse was all on you.", "Marcus posted that the collapse was all on me.", "en", set()),
        ("我注意到你说这周之内你必须得做点什么。", "这周之内我必须得做点什么。", "zh", set()),
        # ... but words the user never said, the writer's own voice, anyone's, or the frame left behind
        ("Your dad says it's your own fault, and honestly he has a point.", "My dad's been on at me all week.", "en", {"blame"}),
        ("I'd say the breakup was on you.", "They're making it sound like the breakup was on me.", "en", {"blame"}),
        ("Your mom says your parents will get over it.", "I haven't told my parents yet.", "en", {"dismiss"}),
        ("你说你太敏感了。", "我是不是太敏感了？", "zh", {"dismiss"}),  # their question told back as a verdict
        ("你妈说你就是矫情。", "我妈总嫌我事多。", "zh", {"dismiss"}),
        ("I do think the breakup was on you.", "They're making it sound like the breakup was on me.", "en", {"blame"}),
        ("It feels like the breakup was on you.", "They're making it sound like the breakup was on me.", "en", {"blame"}),
        ("You said so, and I think the breakup was on you.", "They say the breakup was on me.", "en", {"blame"}),
        ("He says it's your own fault. He's right.", "My dad says it's my own fault.", "en", {"blame"}),
        ("You think it's your own fault - and it is your own fault.", "I think it's my own fault.", "en", {"blame"}),
        ("我妈也说你活该。", "我老公还说我活该。", "zh", {"blame"}),
        ("你老公说你活该，他说得对。", "我老公还说我活该。", "zh", {"blame"}),
        ("Some would say you need to learn teamwork.", "My mom says I need to learn teamwork.", "en", {"lecture"}),
        ("You said it's not a big deal, and it's not a big deal. Move on.", "It's not a big deal, honestly.", "en", {"dismiss"}),
        ("说白了，你活该。", "我老公还说我活该。", "zh", {"blame"}),
    ],
)
def test_the_users_words_told_back_are_not_the_replys_act(text, user, language, acts):
    assert _unkind(text, language, user) == acts
    without = _unkind(text, language)  # without the user's words in hand, each reads unkind, every act read
    assert without and without >= acts


@pytest.mark.parametrize(
    "text, language, acts",
    [
        ("Both are real: the next fall could be worse, and you're the one who pictures it.", "en", set()),
        ("It could be much worse if it goes untreated, so please see someone.", "en", set()),
        ("Could be worse, at least it wasn't the house.", "en", {"dismiss"}),
        ("Don't cry. Could be worse.", "en", {"dismiss"}),
        ("Eh, could be worse.", "en", {"dismiss"}),
        ("I don't care, big deal.", "en", {"dismiss"}),
        ("Things could always be worse, you know.", "en", {"dismiss"}),
        ("How many guests did you move on the seating chart?", "en", set()),
        ("There's no deadline, and you can move on at whatever pace is yours.", "en", set()),
        ("Once you've owned it, it's okay to move on.", "en", set()),
        ("It was a pretty poor move on his part.", "en", set()),
        ("Fix it and move on.", "en", {"dismiss"}),
        ("Just move on with your life.", "en", {"dismiss"}),
        ("Sounds like you're overthinking it.", "en", {"dismiss"}),
        ("I think you've brought this distance on yourself.", "en", {"blame"}),
        ("You probably should have checked first.", "en", {"blame"}),
        ("If he drinks too much, you're kind of part of the problem.", "en", {"blame"}),
        ("You're definitely not part of the problem.", "en", set()),
        ("You have not brought this on yourself.", "en", set()),
        ("So much of this was on you to carry alone.", "en", set()),
        ("There's nothing wrong with feeling sorry for yourself.", "en", set()),
        ("Instead of feeling sorry for yourself, call her.", "en", {"lecture"}),
        ("期中考试而已，又不是高考。", "zh", {"dismiss"}),
        ("不要哭，期中考试而已", "zh", {"dismiss"}),
        ("只是猜测而已。", "zh", set()),
        ("先看看而已。", "zh", set()),
        ("我随口说说而已。", "zh", set()),
        ("当妈的一定要有主见。", "zh", {"lecture"}),
        ("当妈的都会担心。", "zh", set()),
        ("做父母的要操心的事太多了。", "zh", set()),
        ("可是女人一定要学会善待自己。", "zh", {"lecture"}),
        ("你男人要是再这样，就离开他。", "zh", set()),
        ("男人得了抑郁症也是病。", "zh", set()),
        ("这不是自己找罪受吗？", "zh", {"blame"}),
        ("这个谎是你自己逼出来的。", "zh", {"blame"}),
    ],
)
def test_the_thirty_sixth_revisions_lexicon(text, language, acts):
    assert _unkind(text, language) == acts


def test_the_judge_reads_a_recount_of_the_users_words_as_theirs():
    persona = next(p for p in PersonaSet.bundled() if p.language == "en")
    history = [{"role": "user", "content": "Everyone at work is making it sound like it was on me."}]
    told_back = "So they're making it sound like it was on you. That sounds really lonely."
    judge = CalibratedJudge.load()
    assert not judge.features(persona, history, told_back).acts.get("blame")
    # the same words to a user who never said them are the reply's own
    assert judge.features(persona, [{"role": "user", "content": "Work has been awful lately."}], told_back).acts.get("blame")
