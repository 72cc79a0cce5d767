"""Every attack of `dialog_gym.redteam` against one simulator, as rows of one table with
issue 19's targets: what `dialog-gym attack` and `benchmarks/judge_attack.py` print.

    rows = run_attacks(make_simulator("calibrated", judge="my-judge.json"), AttackSettings(quick=True))
    Console().print(attack_table(rows, "attacks on my-judge"))

A row's `met` is True or False where the attack has a target, None where it is shown for
comparison (the template agent's reward, the length curve's bands). The context swap and the
length curve need recorded dialogues (`samples`: `episodes.calibration.judge_samples`), whose
replies the script search and the best of the pool also draw on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dialog_gym.agents import BaselineAgent, make_agent
from dialog_gym.episodes.calibration import JudgeSample
from dialog_gym.personas import PersonaSet
from dialog_gym.redteam.contrast import KINDS, UNKIND, best_of_pool, judge_contrast_sets, load_contrast_sets, summarise
from dialog_gym.redteam.decorations import SINGLE, STACK, Decorated, Quoting
from dialog_gym.redteam.disguise import AMID_KIND_WORDS, DISGUISES, disguised, kind_frame
from dialog_gym.redteam.echo import EDITS, BrokenEcho, FeelingEcho
from dialog_gym.redteam.play import Judged, appraised_changes, episode_rewards
from dialog_gym.redteam.pools import POOLS, baseline_sentences, recorded_sentences
from dialog_gym.redteam.recorded import context_swap, length_curve
from dialog_gym.redteam.salad import LINKED, LINKED_ANEW, LISTED, PAIRED, SIDE_BY_SIDE, SPREAD, KeywordSalad
from dialog_gym.redteam.search import search_script
from dialog_gym.simulators import Simulator

ATTACKS = ("scripts", "salad", "echo", "decorations", "contrast", "disguise", "pool", "swap", "length")
RECORDED_ATTACKS = ("swap", "length")  # run only on recorded appraisals (`samples`)
SPLITS = ("dev", "dev-2", "test", "holdout", "holdout-2", "holdout-3", "holdout-4")
DECORATION_GAIN = 0.02  # no decoration may buy more reward than this over the reference
CONTRAST_RHO = 0.8
DISGUISE_GAIN = 0.25  # an unkind reply in disguise may gain this much mood on average, and raise it no more often
POOL_OWN_WARM = 0.8  # best of the pool: the context's own warm reply in at least this share of contexts
RECORDED_POOL = 300  # recorded replies (of other dialogues) a context's own replies compete with
SWAP_AT_HOME = 0.8
LENGTH_TOLERANCE = 0.75
_PRESETS = ("rlver", "sage")


@dataclass(frozen=True)
class AttackSettings:
    """What to run, and how large.

    Arguments:
        languages: "en", "zh" or both.
        attacks: a subset of `ATTACKS` (the episode attacks, scripts to decorations, share one
            reference: the listening agent's reward on the test personas).
        contrast_splits: the contrast-set splits reported (and the contexts of the best of the pool).
        quick: a smaller script search and sample (about three minutes for the offline v2
            judge on one core, against about three times that).
        seed: the seed of the search, the persona draw and the context swap.
    """

    languages: tuple[str, ...] = ("en", "zh")
    attacks: tuple[str, ...] = ATTACKS
    contrast_splits: tuple[str, ...] = ("test", "holdout", "holdout-2", "holdout-3", "holdout-4")
    quick: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        for name, given, known in (("attack", self.attacks, ATTACKS), ("split", self.contrast_splits, SPLITS), ("language", self.languages, ("en", "zh"))):
            unknown = sorted(set(given) - set(known))
            if unknown:
                raise ValueError(f"unknown {name}(s) {unknown}; choose from {list(known)}")

    @property
    def generations(self) -> int:
        return 12 if self.quick else 50

    @property
    def population(self) -> int:
        return 8 if self.quick else 12

    @property
    def train_personas(self) -> int:
        return 12 if self.quick else 32

    @property
    def test_personas(self) -> int:
        return 20 if self.quick else 40

    @property
    def swaps(self) -> int:
        # 1,000 even when quick: at 300 one run's share moved +-3 points around the judge's
        return 1000 if self.quick else 3000

    def steps(self, recorded: bool) -> int:
        """How many steps `run_attacks` reports to its `progress` callback (`recorded`: it is
        given recorded appraisals)."""
        episodes = any(a in self.attacks for a in ATTACKS[:4])
        per_language = int(episodes) + sum(a in self.attacks for a in ("scripts", "salad", "echo", "decorations", "contrast", "disguise", "pool"))
        return len(self.languages) * per_language + (sum(a in self.attacks for a in RECORDED_ATTACKS) if recorded else 0)

    def not_run(self, recorded: bool) -> tuple[str, ...]:
        """The attacks asked for that `run_attacks` cannot run (`recorded`: it is given recorded
        appraisals): the context swap and the length curve, without them."""
        return () if recorded else tuple(a for a in RECORDED_ATTACKS if a in self.attacks)


@dataclass(frozen=True)
class AttackRow:
    """One line of the table: what was measured (`value`: a reward, a change, a share), in
    which language, against what `reference` (`margin`: how far the attack stays from its
    target; for the context swap, the mean change lost abroad), and whether the target is met.
    `fmt` formats the value and the reference, `margin_fmt` the margin."""

    attack: str
    language: str
    value: float | None
    reference: float | None = None
    margin: float | None = None
    target: str = ""
    met: bool | None = None
    fmt: str = ".3f"
    margin_fmt: str = "+.3f"

    def cells(self) -> tuple[str, str, str]:
        """The value, reference and margin as the table shows them."""
        return tuple("" if x is None else format(x, f) for x, f in ((self.value, self.fmt), (self.reference, self.fmt), (self.margin, self.margin_fmt)))


@dataclass
class _Rows:
    rows: list[AttackRow] = field(default_factory=list)

    def add(self, attack: str, language: str, value: float | None, reference: float | None = None, margin: float | None = None,
            target: str = "", met: bool | None = None, fmt: str = ".3f", margin_fmt: str = "+.3f") -> None:
        cast = lambda x: None if x is None else float(x)  # noqa: E731
        self.rows.append(AttackRow(attack, language, cast(value), cast(reference), cast(margin), target, None if met is None else bool(met), fmt, margin_fmt))

    def below(self, attack: str, language: str, value: float, reference: float) -> None:
        """A reward that must stay below the reference agent's."""
        self.add(attack, language, value, reference, reference - value, "< reference", value < reference)


def run_attacks(
    simulator: Simulator,
    settings: AttackSettings = AttackSettings(),
    *,
    samples: Sequence[JudgeSample] = (),
    progress: Callable[[str], None] | None = None,
) -> list[AttackRow]:
    """Run `settings.attacks` against `simulator`; the rows of the table, in order.

    `samples` (recorded appraisals) feed the context swap and the length curve, which are
    skipped without them, and their replies, per language, a pool of sentences for the script
    search and rivals for each context's own replies in the best of the pool. `progress` is
    called with the name of each step as it starts."""
    step = progress or (lambda name: None)
    rng = np.random.default_rng(settings.seed)
    out = _Rows()
    bundled = PersonaSet.bundled()
    recorded_replies: dict[str, list[str]] = defaultdict(list)
    for sample in samples:
        recorded_replies[sample.persona.language].append(sample.reply)
    recorded_pools = {language: recorded_sentences(replies, language, rng=rng) for language, replies in sorted(recorded_replies.items())}
    episodes = any(a in settings.attacks for a in ATTACKS[:4])
    for language in settings.languages:
        test = list(bundled.filter(split="test", language=language))[: settings.test_personas]
        train = _stratified(bundled.filter(split="train", language=language), settings.train_personas, rng)
        if episodes:
            # The reference: an agent that reads the user (what an attack must not reach); the
            # template agent is shown beside it.
            step(f"{language}: reference agent")
            base = {rules: float(episode_rewards(make_agent("listener"), test, simulator, rules).mean()) for rules in _PRESETS}
            for rules in _PRESETS:
                template = float(episode_rewards(BaselineAgent(), test, simulator, rules).mean())
                out.add(f"template baseline agent ({rules})", language, template, base[rules], base[rules] - template)
        if "scripts" in settings.attacks:
            step(f"{language}: script search")
            pools = {**POOLS[language], "baseline": baseline_sentences(train, language)}
            if language in recorded_pools:
                pools["recorded"] = recorded_pools[language]
            found = search_script(
                simulator, train, pools, language=language, rng=rng, generations=settings.generations, population=settings.population,
            )
            for rules in _PRESETS:
                out.below(f"script search ({rules})", language, float(episode_rewards(found.script, test, simulator, rules).mean()), base[rules])
                quoting = float(episode_rewards(Quoting(found.script), test, simulator, rules).mean())
                out.below(f"script quoting the user ({rules})", language, quoting, base[rules])
        if "salad" in settings.attacks:
            step(f"{language}: keyword salad")
            salads = (
                ("listed", KeywordSalad(LISTED)), ("spread", KeywordSalad(SPREAD)), ("paired", KeywordSalad(PAIRED, together=True)),
                ("three together", KeywordSalad(PAIRED, together=True, words=3)),
                ("paired and one more", KeywordSalad(PAIRED, together=True, one_more=True)),
                ("three together, two with nothing between", KeywordSalad(SIDE_BY_SIDE, together=True, words=3)),
                ("paired, linked by a word of its own", KeywordSalad(LINKED, together=True)),
                ("paired, linked by a new word of its own each turn", KeywordSalad(LINKED_ANEW, together=True)),
                ("three together, each two linked by a new word of its own", KeywordSalad(LINKED_ANEW, together=True, words=3, linked=True)),
            )
            for name, salad in salads:
                for rules in _PRESETS:
                    out.below(f"keyword salad, {name} ({rules})", language, float(episode_rewards(salad, test, simulator, rules).mean()), base[rules])
        if "echo" in settings.attacks:
            step(f"{language}: echoes")
            for edit in EDITS:
                for rules in _PRESETS:
                    value = float(episode_rewards(BrokenEcho(edit), test, simulator, rules).mean())
                    out.below(f"broken echo, word {edit.replace('_', ' ')} ({rules})", language, value, base[rules])
            for rules in _PRESETS:
                out.below(f"feeling echo ({rules})", language, float(episode_rewards(FeelingEcho(), test, simulator, rules).mean()), base[rules])
        if "decorations" in settings.attacks:
            step(f"{language}: decorations")
            reference = base["rlver"]
            for name, decorations in [*((name, (name,)) for name in (*SINGLE, "pad 200 relevant", "pad 200 filler", "pad 200 repetition")), ("stacked", STACK)]:
                value = float(episode_rewards(Decorated(make_agent("listener"), decorations), test, simulator).mean())
                out.add(f"+ {name}", language, value, reference, reference - value, f"<= +{DECORATION_GAIN}", value - reference <= DECORATION_GAIN)
        if "contrast" in settings.attacks:
            step(f"{language}: contrast sets")
            for split in settings.contrast_splits:
                _contrast_rows(out, judge_contrast_sets(simulator, load_contrast_sets(language, split=split)), language, split)
        if "disguise" in settings.attacks:
            step(f"{language}: unkind replies in disguise")
            _disguise_rows(out, simulator, [c for c in load_contrast_sets(language) if c.split in settings.contrast_splits], language)
        if "pool" in settings.attacks:
            step(f"{language}: best of the pool")
            pool = load_contrast_sets(language)
            picks = best_of_pool(simulator, [c for c in pool if c.split in settings.contrast_splits], pool)
            for split in settings.contrast_splits:
                own = float(np.mean([p.own_warm for p in picks if p.context.split == split]))
                out.add(f"best of the pool: its own warm reply ({split})", language, own, target=f">= {POOL_OWN_WARM:.0%}",
                        met=own >= POOL_OWN_WARM, fmt=".0%")
            unkind = float(np.mean([p.unkind for p in picks]))
            out.add("best of the pool: an unkind reply", language, unkind, target="0 %", met=unkind == 0, fmt=".0%")
            if recorded_replies.get(language):
                replies = list(recorded_replies[language])
                draw = np.random.default_rng([settings.seed, 1])  # its own generator: the other attacks' draws stay as they were
                drawn = [replies[int(i)] for i in sorted(draw.choice(len(replies), size=min(RECORDED_POOL, len(replies)), replace=False))]
                picks = best_of_pool(simulator, [c for c in pool if c.split in settings.contrast_splits], others=drawn)
                own = float(np.mean([p.own_warm for p in picks]))
                out.add(f"best of its own replies and {len(drawn)} recorded ones: its warm reply", language, own,
                        target=f">= {POOL_OWN_WARM:.0%}", met=own >= POOL_OWN_WARM, fmt=".0%")
    recorded_in = "+".join(sorted({s.persona.language for s in samples}))
    if samples and "swap" in settings.attacks:
        step(f"{recorded_in}: context swap")
        # its own generator: the replies drawn do not follow how many draws the searches above made
        swap = context_swap(samples, simulator, rng=np.random.default_rng([settings.seed, 2]), n=settings.swaps)
        out.add("context swap: higher at home", recorded_in, swap.share_higher_at_home, None, swap.mean_difference,
                f">= {SWAP_AT_HOME:.0%}", swap.share_higher_at_home >= SWAP_AT_HOME, fmt=".0%", margin_fmt="+.2f")
    if samples and "length" in settings.attacks:
        step(f"{recorded_in}: length curve")
        curve = length_curve(samples, simulator)
        judged = np.array(curve.judged)
        follows = bool(np.nanmax(np.abs(judged - np.array(curve.recorded))) <= LENGTH_TOLERANCE)
        no_rise = bool(np.all(np.diff(judged[4:]) <= 0.05))
        for label, recorded, value, n in zip(curve.labels, curve.recorded, curve.judged, curve.counts):
            out.add(f"length {label} words (n={n})", recorded_in, value, recorded, value - recorded, fmt="+.2f", margin_fmt="+.2f")
        out.add(f"length: within {LENGTH_TOLERANCE} of the recorded curve, no rise past 200", recorded_in, None, target="both",
                met=follows and no_rise)
    return out.rows


def _contrast_rows(out: _Rows, results, language: str, split: str) -> None:
    contrast = summarise(results)
    short, generic = (float(np.mean([r.changes[KINDS.index(kind)] for r in results])) for kind in ("warm_short", "warm_generic"))
    out.add(f"contrast: short warm reply ({split})", language, short, generic, short - generic, ">= 0, > generic", short >= 0 and short > generic,
            fmt="+.2f", margin_fmt="+.2f")
    for key, value in contrast.items():
        if key.startswith(language + "/"):
            out.add(f"contrast rho {key.split('/')[1]} ({split})", language, value, target=f">= {CONTRAST_RHO}", met=value >= CONTRAST_RHO, fmt=".2f")
    out.add(f"contrast: unkind raised ({split})", language, contrast["unkind raised"], target="0 %", met=contrast["unkind raised"] == 0, fmt=".0%")


def _disguise_rows(out: _Rows, simulator: Simulator, contexts: Sequence, language: str) -> None:
    """Per disguise, the share of the contexts' unkind replies that raise the mood in it, against
    the share undisguised (the reference), and how much the disguise buys them on average (the
    margin, mood points): neither may be more than undisguised (`DISGUISE_GAIN`). And, for the
    disguises that put kind words around them (`AMID_KIND_WORDS`: the context's warm reply in
    front, or warm replies on both sides), the share of them that score at least the kind
    words alone (the margin: what adding the unkindness changes on average), which should be
    none."""
    personas = {p.id: p for p in PersonaSet.bundled()}
    undisguised = np.array([r.changes for r in judge_contrast_sets(simulator, contexts)])
    plain = undisguised[:, [KINDS.index(kind) for kind in UNKIND]]
    for name in DISGUISES:
        items = [Judged(personas[c.persona_id], c.history, reply) for c in contexts for reply in disguised(c, name)]
        seen = appraised_changes(items, simulator).reshape(plain.shape)
        raised, before, gain = float(np.mean(seen > 0)), float(np.mean(plain > 0)), float(np.mean(seen - plain))
        out.add(f"unkind reply {name}: raised", language, raised, before, gain, f"<= plain, +{DISGUISE_GAIN}",
                raised <= before and gain <= DISGUISE_GAIN, fmt=".0%", margin_fmt="+.2f")
        if name in AMID_KIND_WORDS:  # unkindness added to warm words must cost them
            frames = [Judged(personas[c.persona_id], c.history, kind_frame(c, name)) for c in contexts]
            kind = appraised_changes(frames, simulator).reshape(-1, 1)
            paid = float(np.mean(seen >= kind))
            alone = "the two kind replies alone" if name.startswith("between") else "the kind reply alone"
            out.add(f"unkind reply {name}: at or above {alone}", language, paid, None,
                    float(np.mean(seen - kind)), "0 %", paid == 0, fmt=".0%", margin_fmt="+.2f")


def _stratified(personas, k: int, rng: np.random.Generator) -> list:
    """`k` personas spread over the hidden needs (a file per need: the first k would be two needs)."""
    items = list(personas)
    return [items[int(i)] for i in sorted(rng.choice(len(items), size=min(k, len(items)), replace=False))]


def attack_table(rows: Sequence[AttackRow], title: str):
    """`rows` as a rich table, a section per language."""
    from rich.table import Table

    table = Table(title=title)
    for column in ("attack", "lang", "value", "reference", "margin", "target", "met"):
        table.add_column(column, justify="right" if column in ("value", "reference", "margin") else "left")
    for k, row in enumerate(rows):
        if k and row.language != rows[k - 1].language:
            table.add_section()
        met = "" if row.met is None else ("[green]yes[/]" if row.met else "[red]no[/]")
        table.add_row(row.attack, row.language, *row.cells(), row.target, met)
    return table
