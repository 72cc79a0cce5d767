"""What the v2 judge knows that recorded LLM-judge dialogues cannot teach it.

Fitted on capable chat models' replies, a judge sees almost no blaming, dismissing or
lecturing, few decorated or scripted replies, and length confounded with who wrote the reply
(the shortest SAGE replies are one model's, and that model is rated low). So the v2 judge
is fitted under three kinds of knowledge:

- *signs* (`required_sign`): form can only cost (headings, bold, emoji, exclamations, stage
  directions, lists, paragraph breaks, length past 100, 200 and 300 words, repeating
  oneself); fit to the conversation can only help (staying with what the user said,
  answering their question);
  unkind acts and empty praise can only cost. A weight the data would give the wrong sign
  is held at zero (`judge_fit` refits without it).
- *a prior* (`prior_parts`): what a person would say of a reply before any data (taking up
  what the user said, their distinctive words in the reply's own words rather than what any
  stock line shares with them or a quote, and their last message above all; speaking to
  their need helps, half as much where the reply takes up nothing of theirs (a stock line of
  the need's kind, "I'm here for you", fits every user alike), warm wording alone does not
  (within each agent model the recorded judge gave the replies an earlier prior paid for it
  2.3 points less than the rest); cold statements (no warmth, no question, no suggestion),
  nothing but questions, referral, report formatting, generic lines, padding (sentences that
  say nothing to the user, sentences said twice), a wall of text past 300 words (outside the
  form cap: the recorded judge's change keeps falling there), turning the talk to oneself,
  opening with stock empathy ("It sounds like...", 听起来...) or a help desk's line ("I'm here
  to help you...") again after a reply that opened so (a formula: the recorded judge's change
  is 1.7 lower there within each agent model), and words in no language the user reads (a
  sentence in Spanish, lorem ipsum: `voice.without_unread` takes them out of what is read)
  cost; stock reassurance, lecturing, dismissing and blaming cost more (lexicons and the
  speech-act model), blaming the more so when the user needs to hear it was not their
  fault), added to the fitted model's prediction and subtracted from the recorded change
  before fitting, so that the data corrects the prior where it has something to say and the
  prior carries the judge where it has not.
- *the ladder* (`unkind_act`, `placed`): a reply that lectures, dismisses or blames (read by
  a lexicon, or, where none finds an act, by the speech-act model: on the whole reply, on a
  part of a warmly worded Chinese one that has nothing warm in it, or on what it says in the
  other language) changes the mood within its act's band (`ACT_BANDS`), below every reply
  that does not (`KIND_FLOOR`), and the worse the act the lower, whatever else it says.
- *saturation*: form costs are capped (`FORM_CAP` for the prior's formatting, idle and
  repeated sentences; the fitted model's form features likewise), so that a poorly formatted
  reply of ordinary length never ranks below an unkind one (a wall of text costs on top).
"""

from __future__ import annotations

import math

from dialog_gym.simulators.judge_features import CUE_FAMILIES, WARM_FAMILIES, JudgeFeatures, PartReading

# The prior, in mood points: what a person would say of a reply before any data. Its form
# costs (formatting, idle and repeated sentences, a wall of text), referral and stock
# reassurance are half what they were first: recorded replies are full of them, the recorded
# judge hardly follows them, and their signs keep the data from taking them back, so at full
# size the fitted model learned to cancel them elsewhere (held out by agent model: turn r
# 0.41 -> 0.42, model rho 0.09 -> 0.60 with the negatives at half weight; docs/concepts.md).
PRIOR = {
    "uptake": 4.0,  # times the share (0..1) of "takes up what I said" (3 distinctive words of mine)
    "uptake_last": 2.5,  # times the share of my last message taken up (what I just said, not only earlier)
    "need": 1.5,  # speaks to what I need (the need's cue family); `GENERIC_NEED_SHARE` of it if it takes up nothing of mine
    "only_questions": -1.0,  # nothing but questions
    "cold": -1.5,  # no warmth, no question, no suggestion: statements at me
    "referral": -0.75,  # sends me to a professional or a hotline
    "formatted": -1.0,  # a list, headings or bold: a report, not a person
    "generic": -1.0,  # takes up nothing of mine, from the second reply on
    "generic_late": -1.5,  # and again from the fourth
    "curt": -2.0,  # under 4 words
    "praise_unanchored": -1.5,  # praise for things I never mentioned
    "self_focus": -1.5,  # turns the talk to themselves ("me too, when I was...")
    "idle_sentence": -0.375,  # each sentence beyond the second that says nothing to me (at most 6 count)
    "repeated_sentence": -1.0,  # each sentence said twice in one reply, or a frame of an earlier reply said again
    "wall_of_text": -0.75,  # a reply past `WALL_WORDS`[0] words, in full from `WALL_WORDS`[1]
    "stock_opener_again": -1.0,  # "It sounds like..." / 听起来... / "I'm here to help you..." again, after a reply that opened so
    "harsh_sentence": -1.5,  # a sentence with nothing warm that the part model reads as unkind (`judge_features.HARSH_ODDS`; 3 at most)
    "unread": -2.0,  # words I cannot read: a sentence in a language I do not speak, or in none (`voice.without_unread`)
}
# A line of the need's kind that takes up nothing the user said ("I'm here for you", "You
# could try making a plan") fits every user alike: it earns this share of the need's pay. Not
# none, because the reading of what a reply takes up misses paraphrase ("Both rents up in one
# week?" for "my rent's going up") and Chinese words of one character (包, 酸): of the contrast
# sets' short warm replies it reads 9 of 72 English and 11 of 72 Chinese as taking up nothing.
GENERIC_NEED_SHARE = 0.5
# A wall of text: the recorded judge's change falls past 300 words within each agent model
# (-1.3 at 300-500, -2.0 past 500), further than the fitted model's saturating hinges follow.
WALL_WORDS = (300.0, 600.0)
# Unkind acts, per matched pattern (at most two count per act).
ACT_COSTS = {"platitude": 1.0, "lecture": 4.0, "dismiss": 5.0, "blame": 6.0}
BLAME_WHEN_NOT_AT_FAULT = 4.0  # extra, per pattern, for a user who needs to hear it was not their fault
CURT_WORDS = 4.0
# The speech-act model's log-odds of unkind (or stock) against kind replies: its cost ramps
# from the first number to the second (kind replies of the contrast sets' dev and test contexts
# and of the probe's tuning half: 0.3 at their 75th percentile; unkind replies' median 1.3-1.5).
# (Three unkind acts against two kind ones: a reply the model knows nothing about reads +0.4.)
MODEL_UNKIND_COST, MODEL_UNKIND_RAMP = -7.0, (0.3, 1.1)
MODEL_BLAME_COST, MODEL_BLAME_RAMP = -3.0, (0.0, 0.9)  # blame costs more than the other unkind acts
WARM_DOUBT = 0.75  # a warm reply the lexicons find nothing wrong with: the model's cost, scaled
QUESTION_DOUBT = 0.4  # a reply that mostly asks, which the lexicons find nothing wrong with: the model's cost, scaled
MODEL_PLATITUDE_COST, MODEL_PLATITUDE_RAMP = -1.0, (0.2, 1.0)
# The ladder: a reply that lectures, dismisses or blames changes the mood within its act's band,
# below every reply that does not, and the worse the act, the lower (mildest first); the
# speech-act model alone reads an act from these log-odds of it against kind replies.
SEVERITY = ("lecture", "dismiss", "blame")
ACT_BANDS = {"lecture": (-7.5, -6.0), "dismiss": (-8.75, -7.5), "blame": (-10.0, -8.75)}
# Per language, above every kind reply of the contrast sets' dev and test contexts that the
# gates of `unkind_act` leave to the model (en: 0.83, "This week, ask your advisor to...";
# zh: 0.68), so that the model alone never puts a kind reply under every kind one.
MODEL_ACT_SURE = {"en": 1.0, "zh": 0.75}
# A reply worded warmly, or mostly asking, that reads unkind as a whole (past the start of
# `MODEL_UNKIND_RAMP`) is put on the ladder by a part of it that is neither
# (`JudgeFeatures.worst_part`, read by the part model) that reads unkind from these log-odds:
# per language, above every kind reply of the contrast sets (every split) and of the unkind
# probe (English: 2.16, "It's completely fine to be upset about it."; Chinese: 1.57), and above
# all but 4 of SAGE's 4,789 recorded replies; 3 (English) and 7 (Chinese) of the 72 unkind
# replies of the contrast sets' dev and test contexts said after their warm reply.
PART_SURE = {"en": 2.25, "zh": 1.75}
# What a part of a reply worded warmly (or mostly asking) reads unkind from costs, in a reply
# that reads more unkind than kind as a whole (`PART_GATE`, log-odds): the warm words around
# the part dilute the whole's reading, not the part's, and no doubt is taken off. Of the
# contrast sets' kind replies (every split) 2 of 1,008 pay anything by it; of their unkind
# replies said after a warm one or between two, 12-33 % per language and split. Ungated, or
# from log-odds 1.0, it cost a quarter of the listening agent's English replies (its stock
# "You've clearly been turning this over for a while, mostly on your own." reads as blame).
PART_UNKIND_COST, PART_UNKIND_RAMP = -5.0, (1.75, 2.5)
PART_GATE = 0.0
KIND_FLOOR = (-3.0, -5.75)  # a reply that is not unkind: below the first, squashed toward the second
# Form saturates: report formatting, idle and repeated sentences together cost the prior at
# most this much (a tips list is poor support, not worse than blaming), and the fitted model's
# form features at most `FITTED_FORM_CAP` (judge.LinearModel).
FORM_CAP = 3.5
FORM_PARTS = ("formatted", "idle_sentences", "repeated_sentences")
# The cue families that speak to each hidden need.
NEED_FAMILIES = {
    "dialectical_analysis": ("dialectical_analysis",), "practical_advice": ("advice",), "motive_analysis": ("motive_analysis",),
    "guided_reflection": ("guided_reflection",), "specific_praise": ("praise", "specific_anchor"),
    "attentive_listening": ("invitation", "reflection"), "deep_empathy": ("deep_empathy", "emotion_word"),
    "not_at_fault": ("not_at_fault",),
}
_FORM_COSTS = (
    "headers", "bold", "emoji", "stage_directions", "exclamations", "exclamation_opener", "exclamation_opener_unwarranted",
    "praise_opener", "list_lines", "numbered_lines", "length_over_100", "length_over_200", "length_over_300",
    "repeats_earlier_reply", "paragraphs",
)
_ALWAYS_COSTS = (
    "stock_opener_again", "takes_up_nothing", "ignores_question", "praise_unanchored", "referral", "unkind_score", "idle_sentences", "repeated_sentences",
    "harsh_sentences",
)
_COSTLY_FAMILIES = ("judging", "lecturing", "platitude", "self_focus")
_HELPS = ("on_topic", "uptake", "uptake_last", "answers_question", "echo")
_KINDS = ("negative", "passive", "avoidant", "emotional")


def is_form_cost(name: str) -> bool:
    """The named feature is a matter of form (formatting, decoration, length past 100 words,
    repeating oneself), alone or crossed with a character type or emotional needs."""
    head, _, tail = name.partition(":")
    return name in _FORM_COSTS or (head in _KINDS and tail in _FORM_COSTS)


def required_sign(name: str) -> int:
    """-1 if the named feature may only lower the mood, +1 if it may only raise it, else 0."""
    head, _, tail = name.partition(":")
    if is_form_cost(name) or name in _ALWAYS_COSTS or head == "act":
        return -1
    if head == "cue" and tail in _COSTLY_FAMILIES:
        return -1
    if head == "fit":
        need, _, family = tail.partition(":")
        if family in _COSTLY_FAMILIES:
            return -1
        if family == need or (need == "specific_praise" and family == "praise"):
            return 1
    if name in _HELPS:
        return 1
    return 0


def prior_parts(features: JudgeFeatures, need: str) -> dict[str, float]:
    """The prior's share of one reply's change, by cause (mood points); empty below version 2."""
    if features.version < 2:
        return {}
    named = features.named
    cue = {family: named.get(f"cue:{family}", 0.0) for family in CUE_FAMILIES}
    worded_warmly = _worded_warmly(named)
    asks = named.get("questions", 0) > 0
    formatted = named.get("list_lines", 0) >= 2 or named.get("headers", 0) >= 1 or named.get("bold", 0) >= 1
    turn = round(named.get("turn", 0.0) * 9) - 1  # agent replies before this one
    generic = named.get("takes_up_nothing", 0.0) > 0
    # Warmth for nothing I said is a formula (but not cold); warmth earns nothing of itself, but
    # the speech-act model's cost of a warm reply is doubted (`WARM_DOUBT`, below).
    warm = worded_warmly and (turn == 0 or not generic)
    parts = {
        "uptake": PRIOR["uptake"] * named.get("uptake", 0.0),
        "uptake_last": PRIOR["uptake_last"] * named.get("uptake_last", 0.0),
        "need": PRIOR["need"] * any(cue[f] for f in NEED_FAMILIES.get(need, ())) * (GENERIC_NEED_SHARE if generic else 1.0),
        "only_questions": PRIOR["only_questions"] * named.get("only_questions", 0.0),
        "cold": PRIOR["cold"] * (not worded_warmly and not asks and not cue["advice"]),
        "act:referral": PRIOR["referral"] * bool(features.acts.get("referral")),
        "formatted": PRIOR["formatted"] * formatted,
        "generic": PRIOR["generic"] * (generic and turn >= 1),
        "generic_late": PRIOR["generic_late"] * (generic and turn >= 3),
        "curt": PRIOR["curt"] * (0 < features.words < CURT_WORDS),
        "praise_unanchored": PRIOR["praise_unanchored"] * named.get("praise_unanchored", 0.0),
        "self_focus": PRIOR["self_focus"] * bool(cue["self_focus"]),
        "idle_sentences": PRIOR["idle_sentence"] * min(6.0, named.get("idle_sentences", 0.0)),
        "repeated_sentences": PRIOR["repeated_sentence"] * min(3.0, named.get("repeated_sentences", 0.0)),
        "wall_of_text": PRIOR["wall_of_text"] * _ramp(features.words, *WALL_WORDS),
        "stock_opener_again": PRIOR["stock_opener_again"] * named.get("stock_opener_again", 0.0),
        "harsh_sentences": PRIOR["harsh_sentence"] * min(3.0, named.get("harsh_sentences", 0.0)),
        "unread": PRIOR["unread"] * bool(features.unread),
    }
    form = sum(parts[k] for k in FORM_PARTS)
    if form < -FORM_CAP:
        for k in FORM_PARTS:
            parts[k] *= FORM_CAP / -form
    for act, cost in ACT_COSTS.items():
        parts[f"act:{act}"] = -cost * min(2, features.acts.get(act, 0))
    if need == "not_at_fault":
        parts["act:blame"] -= BLAME_WHEN_NOT_AT_FAULT * min(2, features.acts.get("blame", 0))
    # What the speech-act model reads, where the lexicons found less.
    lexicon = parts["act:blame"] + parts["act:dismiss"] + parts["act:lecture"]
    model = min(_model_cost(features, need, warm, bool(lexicon)), part_cost(features))
    platitude = features.platitude
    other = features.other_part  # what it says in the other language, read as a reply of its own
    if other is not None:
        model = min(model, _model_cost(other, need, _worded_warmly(other.named), bool(lexicon)))
        platitude = max(platitude, other.platitude)
    parts["unkind"] = min(0.0, model - lexicon)
    parts["act:platitude"] = min(parts["act:platitude"], MODEL_PLATITUDE_COST * _ramp(platitude, *MODEL_PLATITUDE_RAMP))
    return {cause: float(value) for cause, value in parts.items() if value}


def _model_cost(reading: "JudgeFeatures | PartReading", need: str, warm: bool, lexicon: bool) -> float:
    """What the speech-act model's reading of a reply (or of its part in the other language)
    costs, where the lexicons found less: less where it is worded warmly (`warm`) or clears
    the user, or mostly asks, and the lexicons found no act (`lexicon`)."""
    clears = clears_user(reading)
    model = MODEL_UNKIND_COST * _ramp(unkind_reading(reading, clears), *MODEL_UNKIND_RAMP)
    if not clears:
        model += MODEL_BLAME_COST * (2 if need == "not_at_fault" else 1) * _ramp(reading.blame, *MODEL_BLAME_RAMP)
    if (warm or clears) and not lexicon:
        model *= WARM_DOUBT  # a warm reply the lexicons find nothing wrong with: the model alone is less sure
    if reading.questioning and not lexicon:
        model *= QUESTION_DOUBT  # mostly questions: the model reads short asking replies as curt
    return model


def part_cost(features: JudgeFeatures) -> float:
    """What the unkindest part of a reply worded warmly or mostly asking costs, where the
    whole reads more unkind than kind (`PART_UNKIND_COST`, `PART_GATE`; of dismissing and
    lecturing only in one that clears the user)."""
    if not (features.questioning or _worded_warmly(features.named)) or features.unkind <= PART_GATE:
        return 0.0
    odds, _ = features.worst_part_unblaming if clears_user(features) else features.worst_part
    return PART_UNKIND_COST * _ramp(odds, *PART_UNKIND_RAMP)


def _worded_warmly(named: dict[str, float]) -> bool:
    """The reply validates, reflects, names a feeling or invites the user on (a cue of
    `WARM_FAMILIES`, which hold the emotion words, or a stock warm opener)."""
    return any(named.get(f"cue:{family}") for family in WARM_FAMILIES) or bool(named.get("stock_opener"))


def clears_user(features: "JudgeFeatures | PartReading") -> bool:
    """The reply tells the user it was not their fault, or praises something of theirs it
    names (anchored praise: "What you did for Baba Olena was remarkable..."), and blames them
    nowhere (no blame lexicon matches)."""
    named = features.named
    return bool(named.get("cue:not_at_fault") or named.get("cue:praise")) and not features.acts.get("blame")


def unkind_reading(features: "JudgeFeatures | PartReading", clears: bool | None = None) -> float:
    """The speech-act model's log-odds of unkind against kind; for a reply that clears the
    user (`clears`: `clears_user`, if computed already), of dismissing and lecturing only
    (the model reads "not your fault", and what the user did told back as praise, as the
    words of blame: what they did, in the second person)."""
    if not (clears_user(features) if clears is None else clears):
        return features.unkind
    return math.log(max(math.exp(features.unkind) - math.exp(features.blame), 1e-6))


def _ramp(x: float, low: float, high: float) -> float:
    return min(1.0, max(0.0, (x - low) / (high - low)))


def prior_change(features: JudgeFeatures, need: str) -> float:
    return float(sum(prior_parts(features, need).values()))


def unkind_act(features: "JudgeFeatures | PartReading") -> str | None:
    """The worst unkind act of the reply (`SEVERITY`): the worst a lexicon finds, else the one
    the speech-act model reads with confidence (`MODEL_ACT_SURE`, and above stock
    reassurance; not in a reply that mostly asks or is worded warmly, nor blame in one that
    clears the user, `clears_user`: there the model's reading costs through `prior_parts`
    alone, since a kind reply read as unkind would otherwise fall below every kind one; but
    one of them that reads somewhat unkind as a whole is read in parts, and a part with
    nothing warm that reads unkind with confidence, `PART_SURE`, places it), else
    the act of its part in the other language read as a reply of its own (`other_part`: a
    warm reply does not excuse what it says in a language its warm words are not in); None
    for a reply that is not unkind (and below version 2)."""
    if features.version < 2:
        return None
    found = [act for act in SEVERITY if features.acts.get(act, 0)]
    if found:
        return found[-1]
    other = features.other_part
    if features.questioning or _worded_warmly(features.named):
        if features.unkind > MODEL_UNKIND_RAMP[0]:
            odds, act = features.worst_part_unblaming if clears_user(features) else features.worst_part
            if odds >= PART_SURE[features.language]:  # a part of it, with nothing warm, reads unkind with confidence
                return act
        return unkind_act(other) if other is not None else None
    odds = {"lecture": features.lecture, "dismiss": features.dismiss, "blame": -math.inf if clears_user(features) else features.blame}
    act = max(odds, key=odds.__getitem__)
    if odds[act] >= max(MODEL_ACT_SURE.get(features.language, 1.0), features.platitude):
        return act
    return unkind_act(other) if other is not None else None


def placed(change: float, features: JudgeFeatures, change_range: tuple[float, float] = (-10.0, 10.0)) -> float:
    """`change` placed on the ladder: an unkind reply's within its act's band (`ACT_BANDS`,
    in order of `change` over `change_range`), any other reply's above every band (below
    `KIND_FLOOR[0]` squashed toward `KIND_FLOOR[1]`); unchanged below version 2. The bands
    and the floor are set for a judge whose changes reach down to -10, and scale with
    `change_range`'s lower end."""
    if features.version < 2:
        return change
    act = unkind_act(features)
    if act is not None:
        return placed_as(change, act, change_range)
    knee, floor = (_scale(change_range) * bound for bound in KIND_FLOOR)
    return change if change >= knee else knee - (knee - floor) * math.tanh((knee - change) / (knee - floor))


def placed_as(change: float, act: str, change_range: tuple[float, float] = (-10.0, 10.0)) -> float:
    """`change` placed within the band of the unkind `act` (`ACT_BANDS`, in order of `change`
    over `change_range`; see `placed`)."""
    first, last = change_range
    low, high = (_scale(change_range) * bound for bound in ACT_BANDS[act])
    return low + (high - low) * (min(last, max(first, change)) - first) / (last - first)


def _scale(change_range: tuple[float, float]) -> float:
    return max(-change_range[0], 1.0) / 10.0  # a range that never goes below zero still puts unkind replies under it
