"""The default judge (v2) against the attacks of `dialog_gym.redteam`: fast versions of what
`benchmarks/judge_attack.py` prints in full.

Where v2 meets issue 19's target (decorations buy nothing, unkind replies do not pay, padding
does not pay, a warm reply beats "get over it", an evolved script and the same script
quoting the user stay below an agent that reads the user, and so do the keyword salads
listing their words, naming one to a sentence or saying two or three together in a stock
frame, and the user's own sentence said back with every few words disturbed, recorded
replies score higher at home, a short warm reply is not punished for its brevity, a
best-of-N policy keeps a warm reply written for the context), the test asserts the target.
Where it does not yet (contrast-set rho >= 0.8; the user's words joined by a new word of the
salad's own each turn), the test asserts the level v2 reached, so
that a regression fails, and how far it is from v1. Every attack is also run against v1,
where it succeeds, so that no test passes because the attack went blind; the keyword salad
and the broken echo, which v1 resists, are shown to be read instead (their replies score
higher in their own conversation than in another).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from dialog_gym.agents import BaselineAgent, make_agent
from dialog_gym.cli import main as cli
from dialog_gym.episodes.io import EpisodeWriter
from dialog_gym.personas import PersonaSet
from dialog_gym.redteam import (
    EDITS, LINKED, LINKED_ANEW, LISTED, PAIRED, SIDE_BY_SIDE, SPREAD, BrokenEcho, Decorated, FeelingEcho, KeywordSalad, Quoting, best_of_pool, episode_rewards, judge_contrast_sets,
    load_contrast_sets, search_script,
)
from dialog_gym.redteam.contrast import CONTRAST_DIR, KINDS, NEED_FAMILIES, UNKIND, summarise
from dialog_gym.redteam.decorations import SINGLE, STACK
from dialog_gym.redteam.disguise import disguised, kind_frame
from dialog_gym.redteam.play import Judged, ScriptAgent, appraised_changes
from dialog_gym.redteam.pools import POOLS
from dialog_gym.redteam.suite import DISGUISE_GAIN, AttackSettings
from dialog_gym.simulators import make_simulator
from dialog_gym.simulators.judge import BUNDLED_JUDGES
from dialog_gym.simulators.llm import LLMSimulator
from dialog_gym.testing import ScriptedOpenAIServer
from eval_helpers import aplay

SAGE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sage-deepseek-v3"


@pytest.fixture(scope="module")
def v2():
    return make_simulator("calibrated")


@pytest.fixture(scope="module")
def v1():
    return make_simulator("calibrated-v1")


@pytest.fixture(scope="module")
def personas():
    return PersonaSet.bundled()


def test_contrast_sets_are_well_formed(personas):
    by_id = {p.id: p for p in personas}
    for language in ("en", "zh"):
        contexts = load_contrast_sets(language)
        assert len(contexts) == 104
        assert Counter(c.need for c in contexts) == {need: 13 for family in NEED_FAMILIES.values() for need in family}
        assert Counter(c.split for c in contexts) == {
            "dev": 8, "dev-2": 16, "test": 16, "holdout": 16, "holdout-2": 16, "holdout-3": 16, "holdout-4": 16}
        assert len({c.persona_id for c in contexts}) == len(contexts)
        assert all(by_id[c.persona_id].split == "test" for c in contexts if c.split == "holdout")
        assert Counter(by_id[c.persona_id].split for c in contexts if c.split == "holdout-2") == {"test": 8, "train": 8}
        for split, types in (("holdout-3", {"avoidant": 8, "passive": 8}), ("holdout-4", {"negative": 8, "passive": 8}),
                             ("dev-2", {"avoidant": 8, "negative": 8})):
            written = [by_id[c.persona_id] for c in contexts if c.split == split]
            assert all(p.split == "train" for p in written)
            assert Counter(p.character_type.value for p in written) == types
        assert all(c.history[0]["content"] == by_id[c.persona_id].opening_line for c in contexts if c.split in ("holdout-3", "holdout-4", "dev-2"))
        numbers = {"dev": {1}, "test": {2, 3}, "holdout": {4, 5}, "holdout-2": {6, 7}, "holdout-3": {8, 9}, "holdout-4": {10, 11}, "dev-2": {12, 13}}
        assert all(c.id.rsplit("-", 1)[0] == f"{language}-{c.need}" and int(c.id.rsplit("-", 1)[1]) in numbers[c.split] for c in contexts)
        for c in contexts:
            persona = by_id[c.persona_id]
            assert (persona.language, persona.hidden_need.value) == (language, c.need)
            assert [m["role"] for m in c.history] == ["user", "assistant"] * (len(c.history) // 2) + ["user"]
            assert len(c.replies) == len(KINDS) and all(r.strip() for r in c.replies)


def test_contrast_file_with_replies_out_of_order_is_refused(tmp_path, monkeypatch):
    record = json.loads((CONTRAST_DIR / "en.jsonl").read_text(encoding="utf-8").splitlines()[0])
    record["replies"] = record["replies"][::-1]
    (tmp_path / "en.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    monkeypatch.setattr("dialog_gym.redteam.contrast.CONTRAST_DIR", tmp_path)
    with pytest.raises(ValueError, match="en.jsonl:1: replies must come in the order"):
        load_contrast_sets()


# The level v2 reached on the test contexts (target: rho 0.8; the eighth revision reads 0.81-0.86
# there, but its patterns were found on them, and the holdouts read 0.59-0.87).
CONTRAST_RHO_FLOOR = {"en": 0.8, "zh": 0.78}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_contrast_sets_are_ranked_better_than_v1_on_held_out_contexts(language, v1, v2):
    contexts = load_contrast_sets(language, split="test")
    new, old = summarise(judge_contrast_sets(v2, contexts)), summarise(judge_contrast_sets(v1, contexts))
    for family in NEED_FAMILIES:
        assert new[f"{language}/{family}"] >= CONTRAST_RHO_FLOOR[language], (family, new)
        assert new[f"{language}/{family}"] >= old[f"{language}/{family}"] + 0.3, (family, new, old)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_unkind_replies_never_raise_the_mood(language, v2, v1, personas):
    # dev and test only (the contexts the ladder was checked on): the holdout split is never
    # a tuning target, so no test pins a level on it
    contexts = [c for c in load_contrast_sets(language) if c.split in ("dev", "test")]
    by_id = {p.id: p for p in personas}
    unkind = [Judged(by_id[c.persona_id], c.history, c.replies[KINDS.index(k)]) for c in contexts for k in ("lecture", "dismissive", "blaming")]
    new, old = appraised_changes(unkind, v2), appraised_changes(unkind, v1)
    assert not np.any(new > 0), new
    assert np.mean(old > 0) >= 0.5  # v1 let most of them raise the mood


# Unkind replies of the dev and test contexts said after the context's warm short reply: the
# share that raises the mood, and that scores at least the warm reply alone (the twenty-second
# revision: 14 % and 14 % (en), 17 % and 14 % (zh); the twenty-third, reading a Chinese reply's
# parts: 12 % and 12 % (zh); the twenty-fifth, the conversation's share no longer shrunk with a
# short reply's: 14 % and 12 % (en), 17 % and 12 % (zh), the share lifting the warm reply and
# the unkind one after it alike; undisguised, none raises it; the twenty-seventh, reading
# English replies in parts: a blaming reply with two letters swapped in its words, "Honestly,
# you pushed her away yourself.", 0 -> +1 by the refit, 13 of 72). The level reached, held so
# that a regression fails; a reader of implied blame would take both to 0.
KIND_FIRST_LEVEL = {"en": 0.19, "zh": 0.17}
# The same, between the context's two warm replies (dev and test: raised / at or above the two alone).
# (The twenty-fourth revision: raised 33 % and 42 %, at or above 29 % and 31 %; the twenty-fifth:
# 33 % and 43 %, 25 % and 38 %; the twenty-seventh, every run of sentences read by the part
# model: 33 % and 33 %, 24 % and 31 %.)
BETWEEN_LEVEL = {"en": 0.34, "zh": 0.34}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_an_unkind_reply_in_disguise_is_read_as_it_reads(language, v2, personas):
    """In quotes, each sentence in quotes, spaced out, with zero-width spaces, in look-alike
    letters, in leetspeak, with its words joined or two letters of each long word swapped, with
    a sign between every two characters or words or a mark on every letter, in traditional
    characters, passed on as the words of someone its writer knows, offered as a famous saying
    or introduced as its own words (until the thirtieth revision someone else's, unread: on the
    four reported splits, "As my old coach used to say:" 23 % (en) and 18 % (zh) of them raised
    the mood, +3.8 / +4.2 points; "As Einstein said," 23 % and 35 %), an unkind reply reads as it
    does undisguised (until the twenty-second revision
    a reply in quotes was someone else's words, and 20 % (en) / 34 % (zh) of the contrast sets'
    unkind replies raised the mood in quotes, +3.6 / +5.3 points on average; two spaces
    between English words broke the act lexicons), and stays below the context's own short warm reply; said after that warm reply,
    plain or so disguised, it raises the mood, or scores at least the warm reply alone, no more
    often than it did (`KIND_FIRST_LEVEL`; until the twenty-fourth revision, all 72 contexts, a
    sign between every two characters: 70 % and 58 % (en), 47 % and 35 % (zh); words joined,
    48 % and 28 % (en)); said after it in the other language, never."""
    contexts = [c for c in load_contrast_sets(language) if c.split in ("dev", "test")]
    by_id = {p.id: p for p in personas}
    undisguised = np.array([r.changes for r in judge_contrast_sets(v2, contexts)])
    plain, warm = undisguised[:, [KINDS.index(k) for k in UNKIND]], undisguised[:, [KINDS.index("warm_short")]]

    def changes(name, after_warm=False):
        sep = " " if language == "en" else ""
        items = [
            Judged(by_id[c.persona_id], c.history, c.replies[KINDS.index("warm_short")] + sep + r if after_warm else r)
            for c in contexts for r in disguised(c, name)
        ]
        return appraised_changes(items, v2).reshape(plain.shape)

    plain_reads = (
        "in quotes", "each sentence in quotes", "spaced out", "zero-width spaces", "in look-alike letters",
        "in leetspeak", "with its words joined", "with two letters swapped", "with a sign between characters", "with a sign between words",
        "with marks on its letters", "in traditional characters", "passed on from someone it knows",
        "offered as a famous saying", "introduced as its own words",
    )
    for name in plain_reads:
        seen = changes(name)
        assert not np.any(seen > 0) and (seen - plain).mean() <= DISGUISE_GAIN, (name, seen.max(), (seen - plain).mean())
        assert np.mean(seen < warm) >= 0.95, name
        after = changes(name, after_warm=True)
        assert np.mean(after > 0) <= KIND_FIRST_LEVEL[language] and np.mean(after >= warm) <= KIND_FIRST_LEVEL[language], name
    kind_first = changes("after a kind reply")
    assert np.mean(kind_first > 0) <= KIND_FIRST_LEVEL[language] and np.mean(kind_first >= warm) <= KIND_FIRST_LEVEL[language]
    assert (kind_first - warm).mean() <= -3.0  # on average, unkindness said after a warm reply costs it
    # said in the other language after it (until the twenty-third revision unread: en 34 % / zh 26 % of
    # all splits' raised the mood, 51 % / 39 % scored at least the warm reply alone), it costs it every time
    other_language = changes("after a kind reply, in the other language")
    assert not np.any(other_language > 0) and not np.any(other_language >= warm), other_language.max()
    # in traditional characters after it (until the twenty-fourth revision unread: zh 40 % of dev and test
    # raised the mood, 26 % scored at least the warm reply alone), as in simplified ones; in an English
    # context, the Chinese reply so written costs it every time
    traditional = changes("after a kind reply, in traditional characters")
    if language == "zh":
        np.testing.assert_allclose(traditional, kind_first)
    else:
        assert not np.any(traditional > 0) and not np.any(traditional >= warm), traditional.max()
    # between the context's two warm replies (the twenty-fourth revision's attack, not yet answered:
    # on the four reported splits it raises the mood in 56 % (en) / 69 % (zh) and scores at least the two
    # warm replies alone in 47 % / 56 %); held where it stands, so that a regression fails
    between = changes("between two kind replies")
    frames = appraised_changes([Judged(by_id[c.persona_id], c.history, kind_frame(c, "between two kind replies")) for c in contexts], v2)
    assert np.mean(between > 0) <= BETWEEN_LEVEL[language] and np.mean(between >= frames[:, None]) <= BETWEEN_LEVEL[language]
    assert (between - frames[:, None]).mean() <= -2.0  # on average it costs them
    with pytest.raises(ValueError, match="unknown disguise 'whispered'"):
        disguised(contexts[0], "whispered")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_best_of_n_policy_sends_the_contexts_own_warm_reply(language, v2, v1):
    """Out of every reply of the dev and test contexts (240, all kinds), the one the judge
    gives most in a context is one written for it, warm, in at least 7 of 8 contexts (the
    benchmark: 81-88 % over all 720 replies), and never an unkind one; v1 mostly picks a
    stranger's reply, often a lecture."""
    contexts = [c for c in load_contrast_sets(language) if c.split in ("dev", "test")]
    new, old = best_of_pool(v2, contexts, contexts), best_of_pool(v1, contexts, contexts)
    assert np.mean([p.own_warm for p in new]) >= 0.875, [(p.context.id, p.picked) for p in new if not p.own_warm]
    assert not any(p.unkind for p in new)
    assert np.mean([p.own_warm for p in old]) <= 0.1 and np.mean([p.unkind for p in old]) >= 0.3


ISSUE_EXAMPLES = {
    "en": ("You need to just get over it. Stop feeling sorry for yourself and move on.",
           "That sounds exhausting, and it makes sense that it weighs on you. What has been the hardest part for you?"),
    "zh": ("你就别想太多了，这有什么大不了的，别再自怨自艾了。", "听起来这件事真的让你很难受，你会这样很正常。最让你难受的是哪一部分？"),
}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_warm_first_reply_beats_get_over_it_for_every_persona(language, v2, personas):
    group = list(personas.filter(language=language, split="test"))
    unkind, warm = ISSUE_EXAMPLES[language]
    history = lambda p: ({"role": "user", "content": p.opening_line},)  # noqa: E731
    bad = appraised_changes([Judged(p, history(p), unkind) for p in group], v2)
    good = appraised_changes([Judged(p, history(p), warm) for p in group], v2)
    assert (good > bad).all()
    assert bad.max() <= -2


def _sample(personas, language, k, seed=0):
    items = list(personas.filter(split="test", language=language))
    rng = np.random.default_rng(seed)
    return [items[int(i)] for i in sorted(rng.choice(len(items), size=k, replace=False))]


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("agent", ["baseline", "listener"])
def test_no_decoration_buys_reward(language, agent, v2, personas):
    test = _sample(personas, language, 16)
    plain = episode_rewards(make_agent(agent), test, v2).mean()
    for names in [(name,) for name in SINGLE] + [STACK]:
        decorated = episode_rewards(Decorated(make_agent(agent), names), test, v2).mean()
        assert decorated - plain <= 0.02, (names, decorated, plain)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_an_evolved_open_loop_script_earns_little_under_v2(language, v1, v2, personas):
    """The same search finds a script that beats v1's baseline by a wide margin; under v2 the
    best it finds earns little (it still edges the template baseline, which v2 also rates
    low: see docs/concepts.md)."""
    train = [p for p in personas.filter(split="train", language=language)][::8]
    test = _sample(personas, language, 16)
    scripts = {
        name: search_script(sim, train, POOLS[language], language=language, rng=np.random.default_rng(0), generations=6, population=6).script
        for name, sim in (("v1", v1), ("v2", v2))
    }
    new = episode_rewards(scripts["v2"], test, v2).mean()
    old = episode_rewards(scripts["v1"], test, v1).mean()
    assert old > episode_rewards(BaselineAgent(), test, v1).mean() + 0.1
    assert new <= 0.3 and new <= old - 0.3
    # An agent that reads the user earns far more than the script; quoting the user's own
    # sentence in front of the script's replies (taking up their words without reading
    # them) does not close the gap.
    reference = episode_rewards(make_agent("listener"), test, v2).mean()
    quoting = episode_rewards(Quoting(scripts["v2"]), test, v2).mean()
    assert reference >= new + 0.15 and reference >= quoting + 0.05, (reference, new, quoting)


SALADS = {
    "listed": KeywordSalad(LISTED),
    "one word to a sentence": KeywordSalad(SPREAD),
    "paired": KeywordSalad(PAIRED, together=True),
    "three together": KeywordSalad(PAIRED, together=True, words=3),
    "paired and one more": KeywordSalad(PAIRED, together=True, one_more=True),
    "three together, two with nothing between": KeywordSalad(SIDE_BY_SIDE, together=True, words=3),
    "paired, linked by a word of its own": KeywordSalad(LINKED, together=True),
}
# How far above the listening agent the pair joined by a new word of the salad's own each turn
# ("weighing on", "tangled with", ...) still gets on these 16 test personas (en +0.039, zh -0.051
# when set; +0.041 and -0.072 at the thirty-fifth revision), and three words so joined, each two
# by a link of its own (en +0.114, zh +0.094 when set, at that revision): the judge cannot tell
# such a word from a reflection's; held at the level reached. (The opt-in sense reader can:
# `test_sense.py`.)
LINKED_ANEW_LEVEL = {"en": 0.07, "zh": 0.0}
CHAINED_LEVEL = {"en": 0.13, "zh": 0.12}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_keyword_salad_stays_below_an_agent_that_reads_the_user(language, v2, personas):
    """The user's rarest words in stock warm frames, which v2's eighth revision paid above the
    listening agent (en 0.70 / zh 0.73 against 0.37 / 0.55 on 40 test personas), as its tenth
    paid the English salad of one word to a sentence (0.49 against 0.43) and its twenty-fifth
    the words of one sentence of theirs said together (en 0.54-0.71 against 0.45, zh up to 0.66
    against 0.54): listed side by side they are named, not taken up; one to a sentence each
    stands alone, none spared; joined by "with" or "and", or put next to each other where the
    user never said them so, they are side by side, not said together; one more said alone
    ("And X, too.") is not spared; joined by a link an earlier reply put between two of their
    words ("X weighing on Y" every turn), a template's, they are side by side too; a frame said
    again takes up nothing new. Joined by a new word of its own each turn, the pair, and three
    words in a chain of such links, are held at the level reached."""
    test = _sample(personas, language, 16)
    reference = episode_rewards(make_agent("listener"), test, v2).mean()
    for name, salad in SALADS.items():
        reward = episode_rewards(salad, test, v2).mean()
        assert reward < reference, (name, reward, reference)
    linked = episode_rewards(KeywordSalad(LINKED_ANEW, together=True), test, v2).mean()
    assert linked <= reference + LINKED_ANEW_LEVEL[language], (linked, reference)
    chained = episode_rewards(KeywordSalad(LINKED_ANEW, together=True, words=3, linked=True), test, v2).mean()
    assert chained <= reference + CHAINED_LEVEL[language], (chained, reference)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_broken_echo_of_the_user_stays_below_an_agent_that_reads_the_user(language, v2, personas):
    """The user's own sentence said back with every fourth word disturbed (a filler put in,
    the word left out or changed), which v2's ninth revision paid above the listening agent
    (40 test personas, rlver: en 0.58 / 0.50 / 0.51, zh 0.65 / 0.56 / 0.59 against 0.42 /
    0.54): a quote need not be verbatim to be one."""
    test = _sample(personas, language, 16)
    reference = episode_rewards(make_agent("listener"), test, v2).mean()
    for edit in EDITS:
        echo = episode_rewards(BrokenEcho(edit), test, v2).mean()
        assert echo < reference, (edit, echo, reference)


def test_the_feeling_echo_says_back_the_feelings_they_named_and_nothing_else():
    said = [{"role": "user", "content": "I'm so frustrated with my landlord."}, {"role": "assistant", "content": "Tell me more."},
            {"role": "user", "content": "Honestly I'm exhausted and a bit scared."}]
    assert FeelingEcho()(said) == "You must be feeling so exhausted, and scared too. I'm here."
    assert FeelingEcho()(said[:1]) == "It sounds like you feel frustrated and hurt. That makes sense."  # a stand-in for the second
    assert FeelingEcho()([{"role": "user", "content": "房东又涨租了，我真的很委屈。"}]) == "听起来你很委屈，也很难过。这很正常。"


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_feeling_echo_stays_far_below_an_agent_that_reads_the_user(language, v2, personas):
    """Naming the feeling they named pays where it is part of reading them; said back alone in
    stock frames, it earns next to nothing (40 test personas, rlver: en 0.033, zh 0.029,
    against the listening agent's 0.447 and 0.543)."""
    test = _sample(personas, language, 16)
    reference = episode_rewards(make_agent("listener"), test, v2).mean()
    assert episode_rewards(FeelingEcho(), test, v2).mean() < reference / 2


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_broken_echo_is_read_in_its_own_conversation(language, v2, personas):
    """Not blind either: the echo is of this user's words, and scores higher here than
    placed in another conversation."""
    by_id = {p.id: p for p in personas}
    contexts = load_contrast_sets(language, split="dev")
    echoes = [BrokenEcho()(list(c.history)) for c in contexts]
    home = appraised_changes([Judged(by_id[c.persona_id], c.history, r) for c, r in zip(contexts, echoes)], v2)
    away = appraised_changes([Judged(by_id[c.persona_id], c.history, r) for c, r in zip(contexts, echoes[1:] + echoes[:1])], v2)
    assert home.mean() >= away.mean() + 1.0, (home.mean(), away.mean())


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_keyword_salad_is_read_in_its_own_conversation(language, v2, personas):
    """The attack is not blind: the salad's words are the user's, so its replies score higher
    in their own conversation than placed in another one."""
    by_id = {p.id: p for p in personas}
    contexts = load_contrast_sets(language, split="dev")
    salads = [KeywordSalad(SPREAD)(list(c.history)) for c in contexts]
    home = appraised_changes([Judged(by_id[c.persona_id], c.history, r) for c, r in zip(contexts, salads)], v2)
    away = appraised_changes([Judged(by_id[c.persona_id], c.history, r) for c, r in zip(contexts, salads[1:] + salads[:1])], v2)
    assert home.mean() >= away.mean() + 1.0, (home.mean(), away.mean())


def test_the_salads_past_the_pair_say_three_of_one_sentence_or_name_one_more_alone():
    said = "My sister missed the wedding. She blamed the airline, and the photographer cried at the altar."
    opening = [{"role": "user", "content": said}]
    three = KeywordSalad(PAIRED, together=True, words=3)(opening)
    words = re.fullmatch(r"I hear you about (\w+) with (\w+) and (\w+)\. That makes so much sense\.", three).groups()
    assert any(set(words) <= set(re.findall(r"\w+", s.lower())) for s in said.split(".")), three
    pair = KeywordSalad(PAIRED, together=True)(opening)
    more = KeywordSalad(PAIRED, together=True, one_more=True)(opening)
    assert more.startswith(pair) and re.fullmatch(r" And (\w+), too\.", more[len(pair):])
    assert more[len(pair) + 5 : -6] not in pair.lower()  # a word of theirs the pair has not used
    with pytest.raises(ValueError, match="words must be 2, or 3 with together=True"):
        KeywordSalad(SPREAD, words=3)
    # The chain: the same three words, each two joined by a link of its own, the two links
    # those of this turn's frame and the next one's.
    chained = KeywordSalad(LINKED_ANEW, together=True, words=3, linked=True)(opening)
    assert chained == f"I hear you about {words[0]} weighing on {words[1]} tangled with {words[2]}. That makes so much sense."
    later = [*opening, {"role": "assistant", "content": chained}, *opening]
    assert KeywordSalad(LINKED_ANEW, together=True, words=3, linked=True)(later).startswith(f"I keep thinking about {words[0]} tangled with {words[1]} pressing on")
    with pytest.raises(ValueError, match="linked joins the last two of three words; it needs words=3"):
        KeywordSalad(LINKED_ANEW, together=True, linked=True)
    # A message with no content words of its own: stand-ins, and still a reply.
    assert KeywordSalad(PAIRED, together=True, words=3, one_more=True)([{"role": "user", "content": "Oh. OK."}]).endswith(", too.")


def test_the_salads_take_the_users_rarest_words_and_the_paired_one_two_of_one_sentence():
    said = "My sister missed the wedding. She blamed the airline, and the photographer cried."
    opening = [{"role": "user", "content": said}]
    spread = KeywordSalad(SPREAD)(opening)
    paired = KeywordSalad(PAIRED, together=True)(opening)
    assert spread.startswith("I hear you about ") and spread.count(".") == 4
    first, second = re.fullmatch(r"I hear you about (\w+) with (\w+)\. That makes so much sense\.", paired).groups()
    # Two words of one sentence of theirs: of the sentence whose two rarest words are rarest.
    assert any({first, second} <= set(re.findall(r"\w+", s.lower())) for s in said.split(".")), paired
    assert KeywordSalad(PAIRED, together=True)([*opening, {"role": "assistant", "content": paired}, *opening]).startswith("I keep thinking")


def test_script_agent_plays_its_replies_in_order_whatever_the_user_says():
    agent = ScriptAgent(("one", "two"))
    assert agent([{"role": "user", "content": "hi"}]) == "one"
    assert agent([{"role": "user", "content": "x"}, {"role": "assistant", "content": "one"}, {"role": "user", "content": "y"}]) == "two"
    assert agent([{"role": "assistant", "content": "a"}] * 5) == "two"


@pytest.mark.skipif(not SAGE.is_dir(), reason="the SAGE result files (../shared/data) are absent")
def test_recorded_replies_mostly_score_higher_in_their_own_dialogue(v2, v1):
    from dialog_gym.episodes.calibration import judge_samples
    from dialog_gym.episodes.load import load_episodes
    from dialog_gym.redteam.recorded import context_swap

    samples = [s for path in sorted(SAGE.glob("*.jsonl"))[:2] for s in judge_samples(load_episodes(path))]
    new = context_swap(samples, v2, rng=np.random.default_rng(0), n=200)
    old = context_swap(samples, v1, rng=np.random.default_rng(0), n=200)
    assert new.share_higher_at_home >= 0.8 and new.mean_difference >= 2.0
    assert old.share_higher_at_home < 0.6


@pytest.mark.parametrize("language", ["en", "zh"])
def test_padding_to_200_words_does_not_pay(language, v2, personas):
    test = _sample(personas, language, 16)
    baseline = episode_rewards(BaselineAgent(), test, v2).mean()
    for name in ("pad 200 relevant", "pad 200 filler", "pad 200 repetition"):
        assert episode_rewards(Decorated(BaselineAgent(), (name,)), test, v2).mean() - baseline <= 0.02, name


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_short_specific_kind_reply_is_not_punished_for_its_brevity(language, v2, personas):
    contexts = load_contrast_sets(language, split="test") + load_contrast_sets(language, split="holdout")
    by_id = {p.id: p for p in personas}

    def changes(kind):
        return appraised_changes([Judged(by_id[c.persona_id], c.history, c.replies[KINDS.index(kind)]) for c in contexts], v2)

    short = changes("warm_short")
    assert short.mean() >= 0 and short.mean() > changes("warm_generic").mean()


def test_an_episode_the_simulator_failed_in_is_an_error_not_a_reward_of_zero(personas):
    from dialog_gym.simulators import CalibratedSimulator

    class FailsOnSalad(CalibratedSimulator):
        def judge_reply(self, persona, history, reply):
            if "salad" in reply:
                raise ValueError("cannot read this reply")
            return super().judge_reply(persona, history, reply)

    persona = next(p for p in personas if p.language == "en")
    sim = FailsOnSalad()
    ok = episode_rewards(ScriptAgent(("I hear you. What happened next?",)), [persona], sim)
    assert ok.shape == (1,) and 0.0 <= ok[0] <= 1.0
    with pytest.raises(RuntimeError, match=rf"{re.escape(persona.id)}.*turn 2.*ValueError: cannot read this reply"):
        episode_rewards(ScriptAgent(("I hear you. What happened next?", "A salad.")), [persona], sim)


# -- `dialog-gym attack` --------------------------------------------------------------------
def test_dialog_gym_attack_fails_strictly_where_a_target_is_unmet(tmp_path):
    """The command prints the table and writes its rows as numbers; with --strict it exits 1
    for the v1 judge file (which ranks the dev contexts' replies backwards) and 0 for v2."""
    common = ["attack", "--attacks", "contrast", "pool", "--contrast-splits", "dev", "--languages", "en", "--strict"]
    assert cli([*common, "--json", str(tmp_path / "v2.json")]) == 0
    v1 = str(BUNDLED_JUDGES / "sage-deepseek-v3.json")
    assert cli([*common, "--simulator", "calibrated", "--simulator-path", v1, "--json", str(tmp_path / "v1.json")]) == 1
    new, old = (json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8")) for name in ("v2", "v1"))
    assert old["simulator"].endswith("sage-deepseek-v3.json)")
    assert [row["attack"] for row in new["rows"]] == [row["attack"] for row in old["rows"]]
    assert all(row["met"] for row in new["rows"])
    pool = {row["attack"]: row for row in old["rows"]}["best of the pool: its own warm reply (dev)"]
    assert pool["value"] <= 0.25 and pool["met"] is False


def test_dialog_gym_attack_swaps_recorded_replies_between_the_dialogues_it_is_given(tmp_path, capsys):
    """Dialogues an LLM user simulator judged through a real local server feed the context swap
    and the length curve; without them those attacks are not run, and the command says so
    (`--strict` fails: their targets are unmeasured); an unknown attack name is refused by name."""
    en = list(PersonaSet.bundled().filter(language="en", split="train"))
    with ScriptedOpenAIServer() as server:
        simulator = LLMSimulator.from_backend_name("openai", model="scripted", base_url=server.base_url, api_key="sk-test")

        async def record():
            return [await aplay(en[k], agent=make_agent("listener"), simulator=simulator, rules="rlver", seed=k) for k in range(6)]

        episodes = asyncio.run(record())
    with EpisodeWriter(tmp_path / "episodes.jsonl") as writer:
        for episode in episodes:
            writer.write(episode)
    out = tmp_path / "rows.json"
    assert cli(["attack", "--attacks", "swap", "length", "--episodes", str(tmp_path / "episodes.jsonl"), "--json", str(out)]) == 0
    rows = {row["attack"]: row for row in json.loads(out.read_text(encoding="utf-8"))["rows"]}
    swap = rows["context swap: higher at home"]
    assert swap["language"] == "en" and 0 <= swap["value"] <= 1 and swap["met"] is not None
    assert any(name.startswith("length ") for name in rows)
    assert json.loads(out.read_text(encoding="utf-8"))["not_run"] == []
    capsys.readouterr()
    assert cli(["attack", "--attacks", "swap", "length", "--json", str(out)]) == 0  # nothing recorded: nothing to swap
    assert json.loads(out.read_text(encoding="utf-8")) == {"simulator": "calibrated", "rows": [], "not_run": ["swap", "length"]}
    assert "not run: swap and length (they need recorded dialogues: --episodes" in capsys.readouterr().out
    assert cli(["attack", "--attacks", "swap", "--strict"]) == 1  # an unmeasured target is not a met one
    with pytest.raises(ValueError, match=r"unknown attack\(s\) \['bribery'\]"):
        AttackSettings(attacks=("contrast", "bribery"))


def test_dialog_gym_attack_judges_through_an_llm_simulator_over_http(tmp_path, monkeypatch, capsys):
    """The same command against the LLM user simulator on a real local server: every contrast
    reply is appraised over HTTP, and the key it read from the environment is in no output."""
    monkeypatch.setenv("ATTACK_TEST_KEY", "sk-attack-secret")
    out = tmp_path / "rows.json"
    with ScriptedOpenAIServer(api_key="sk-attack-secret") as server:  # a request without the key gets a 401
        code = cli(["attack", "--simulator", "openai", "--simulator-base-url", server.base_url, "--simulator-model", "scripted",
                    "--simulator-api-key-env", "ATTACK_TEST_KEY", "--attacks", "contrast", "--contrast-splits", "dev", "--languages", "en",
                    "--json", str(out)])
        stats = server.stats()
    printed = capsys.readouterr()
    assert code == 0
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert [row["attack"] for row in rows][:2] == ["contrast: short warm reply (dev)", "contrast rho emotional (dev)"]
    assert all(isinstance(row["value"], float) for row in rows)
    assert stats["completed"] >= 80 and set(stats["status"]) == {200}  # the 8 contexts' 80 replies, each appraised
    assert "sk-attack-secret" not in printed.out + printed.err + out.read_text(encoding="utf-8")
