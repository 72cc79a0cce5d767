"""The figures of benchmarks/user_realism.py, held on a small sample of the bundled personas:
the offline user answers what it is asked, depends on what the agent does, never repeats a
line, never names its need, and speaks more variedly than the 0.x planner did."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from dialog_gym.agents import PROBE_AGENTS, AskingAgent, BaselineAgent
from dialog_gym.mood import RLVER, is_goodbye
from dialog_gym.personas import PersonaSet
from dialog_gym.simulators import make_simulator
from dialog_gym.eval.realism import (
    action_dependence,
    answers_question,
    distinct_n,
    leaks_need,
    ngram_count,
    play_episode,
    repeated_lines,
)

AGENTS = {"baseline": BaselineAgent(), **PROBE_AGENTS}


def _personas(language, n=8):
    personas = PersonaSet.bundled().filter(language=language)
    return [personas[i] for i in range(0, len(personas), len(personas) // n)][:n]


@pytest.fixture(scope="module", params=["en", "zh"])
def played(request):
    language = request.param
    out = {}
    for planner in ("reciting", "listening"):
        simulator = make_simulator("calibrated", planner=planner)

        async def run():
            return [await play_episode(simulator, p, agent, RLVER, seed=k, name=name)
                    for name, agent in AGENTS.items() for k, p in enumerate(_personas(language))]

        out[planner] = (simulator, asyncio.run(run()))
    return language, out


def test_questions_are_answered_with_persona_facts(played):
    """Of the questions a user stays for (a goodbye, at a mood the judge brought below 10,
    answers nothing), at least 80 % get one of the persona's facts on that topic."""
    language, out = played
    for planner, target in (("listening", 0.8), ("reciting", None)):
        asked = answered = 0
        for episode in out[planner][1]:
            if episode.agent == "asking":
                for turn, _, answer in episode.exchanges():
                    verdict = answers_question(episode.persona, AskingAgent.topic(turn), answer)
                    if verdict is not None and not is_goodbye(answer):
                        asked += 1
                        answered += verdict
        assert asked >= 30
        if target is not None:
            assert answered / asked >= target, (language, answered, asked)
        else:
            assert answered / asked < 0.2  # the 0.x planner never answered a question


def test_no_repeated_lines_no_leaks_and_more_varied_words(played):
    language, out = played
    episodes = out["listening"][1]
    assert sum(repeated_lines(e.user_lines(), language) for e in episodes) == 0
    assert sum(repeated_lines(e.user_lines(), language) for e in out["reciting"][1]) > 0
    assert not [line for e in episodes for line in e.user_lines()[1:] if leaks_need(e.persona, line)]
    words = {p: [line for e in out[p][1] for line in e.user_lines()[1:]] for p in out}
    budget = min(ngram_count(words[p], language) for p in words)
    assert distinct_n(words["listening"], language, budget=budget) > distinct_n(words["reciting"], language, budget=budget) + 0.05


def test_the_answer_depends_on_the_kind_of_reply(played):
    language, out = played
    figures = {}
    for planner, (simulator, episodes) in out.items():
        states = [(e.persona, e.history[: 1 + 2 * cut], e.moods[cut - 1]) for e in episodes if e.agent == "baseline"
                  for cut in (1, 2) if len(e.moods) > cut]
        figures[planner] = asyncio.run(action_dependence(simulator, states, RLVER))
    assert figures["listening"]["pairs_differ"] >= 0.85 and figures["listening"]["same_fit_pairs_differ"] >= 0.8
    assert figures["reciting"]["same_fit_pairs_differ"] == 0.0  # the frozen words depend on the fit and the mood bucket alone


def test_play_answers_a_question_typed_on_stdin():
    persona = PersonaSet.bundled().get("en-advice-neg-1")
    question = "That sounds exhausting, and it makes sense it weighs on you. Who else is involved in this, and how do you get along with them?"
    result = subprocess.run(
        [sys.executable, "-m", "dialog_gym", "play", "--env", "RLVER-Empathy-v2", "--persona", persona.id, "--seed", "0"],
        input=f"{question}\nHave you tried calling a couple of other repair shops for a cheaper quote?\n/quit\n",
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    out = " ".join(result.stdout.split())  # the terminal wraps long lines
    answers = out.split("you> ")[1:3]
    assert len(answers) == 2 and all(a.startswith("user ") for a in answers), out
    assert any(" ".join(line.split()) in answers[0] for line in persona.facets.people), answers[0]
    assert any(" ".join(line.split()) in answers[1] for line in persona.facets.tried), answers[1]  # tried that, and how it went
