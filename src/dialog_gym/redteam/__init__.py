"""Attacks on a reward: what a policy would do to max a simulator without supporting anyone.

A simulated user is both the environment and the reward, so the cheapest way to max it is
what RL will find. These attacks run against any simulator (offline, a judge file, an LLM
one through a backend) in English and Chinese; `benchmarks/judge_attack.py` prints them as
one table, and the tests hold a fast version of each against the default judge.

- `search.search_script`: open-loop scripts (the same replies in every episode) evolved
  over phrase pools (`pools`) on training personas, reported on test personas;
- `decorations`: exclamation openers, empty headings, bold, emoji, lecturing or "me too"
  lines, padding, added to a decent agent's replies, one at a time and stacked; and
  `Quoting`, the user's own sentence pasted in front of a script's reply;
- `salad.KeywordSalad`: the user's rarest words in stock warm frames, listed, one to a
  sentence, or two or three they said together joined by "with", by nothing or by a word of
  its own ("weighing on", or a new one each turn, between two of them or each two of three),
  or the two and one more alone (taking up their words without saying anything about them);
- `echo.BrokenEcho`: the user's own sentence said back with every few words disturbed (a
  filler put in, a word left out or changed), so that it is no verbatim quote; and
  `echo.FeelingEcho`, the feelings they named said back in stock frames;
- `disguise`: unkind replies that read the same to a person in quotes, spaced out or after
  a warm reply, in its language or the other (`disguised`), which should gain nothing;
- `recorded.context_swap`: recorded replies scored in their own and in a foreign dialogue;
- `contrast`: replies of known relative quality, per hidden need, in both languages, and
  `contrast.best_of_pool`: the reply a best-of-N policy would keep, out of every one of them;
- `recorded.length_curve`: the change by reply length, recorded and judged;
- `suite.run_attacks`: all of them against one simulator, as the rows of one table with their
  targets (`dialog-gym attack`, `benchmarks/judge_attack.py`).
"""

from dialog_gym.redteam.contrast import best_of_pool, judge_contrast_sets, load_contrast_sets
from dialog_gym.redteam.decorations import DECORATIONS, Decorated, Quoting
from dialog_gym.redteam.disguise import AFTER_A_KIND_REPLY, AMID_KIND_WORDS, DISGUISES, disguised, kind_frame
from dialog_gym.redteam.echo import EDITS, BrokenEcho, FeelingEcho
from dialog_gym.redteam.play import Judged, ScriptAgent, appraised_changes, episode_rewards
from dialog_gym.redteam.salad import LINKED, LINKED_ANEW, LISTED, PAIRED, SIDE_BY_SIDE, SPREAD, KeywordSalad
from dialog_gym.redteam.search import search_script

__all__ = [
    "AFTER_A_KIND_REPLY",
    "AMID_KIND_WORDS",
    "BrokenEcho",
    "DECORATIONS",
    "DISGUISES",
    "Decorated",
    "EDITS",
    "FeelingEcho",
    "Judged",
    "KeywordSalad",
    "LINKED",
    "LINKED_ANEW",
    "LISTED",
    "PAIRED",
    "Quoting",
    "SIDE_BY_SIDE",
    "SPREAD",
    "ScriptAgent",
    "appraised_changes",
    "best_of_pool",
    "disguised",
    "episode_rewards",
    "judge_contrast_sets",
    "kind_frame",
    "load_contrast_sets",
    "search_script",
]
