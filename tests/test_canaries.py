"""No cheap way to game the reward: degenerate policies score far below the baseline agent.

Every offline judge is played against the bundled `BaselineAgent` and each canary of
`CANARY_AGENTS` on the 40 English and 40 Chinese test personas, in both simulator styles.
The v1 calibrated judge (`calibrated-v1`, the judge of the v1 envs) meets every canary. The
v2 judge (the default) scores the template baseline too low for a margin to exist (see
docs/concepts.md); it is held to a margin below the agent that reads the user
(`ListeningAgent`, `listener`), and to the harder attacks of `tests/test_judge_attack.py`.
The rule simulator is frozen with the v0 envs; it is held to the canaries it was built against (the three aimed
at a learned judge came later: pasting the user's words into a warm template beats it in
Chinese, challenging style, which docs/concepts.md records).
"""

from __future__ import annotations

import pytest

from dialog_gym.agents import CANARY_AGENTS, BaselineAgent, make_agent
from dialog_gym.mood import RLVER
from dialog_gym.personas import PersonaSet
from dialog_gym.redteam import episode_rewards
from dialog_gym.simulators import make_simulator

MARGIN = 0.25  # every canary's mean reward lies at least this far below the baseline's
LEARNED_JUDGE_CANARIES = ("praise_opener_spam", "warm_template_with_user_words", "exclamation_stuffing")
CASES = [
    (simulator, canary)
    for simulator in ("calibrated-v1", "rule")
    for canary in sorted(CANARY_AGENTS)
    if simulator == "calibrated-v1" or canary not in LEARNED_JUDGE_CANARIES
]
# The baseline is a decent supporter under every judge: its mean reward stays above these.
SENSIBLE = {("rule", "vanilla"): 0.5, ("rule", "challenging"): 0.3, ("calibrated-v1", "vanilla"): 0.3, ("calibrated-v1", "challenging"): 0.25}


def _mean_reward(agent, personas, *, simulator: str, style: str) -> float:
    return float(episode_rewards(agent, list(personas), make_simulator(simulator, style=style), RLVER).mean())


@pytest.fixture(scope="module")
def test_personas():
    return PersonaSet.bundled().filter(split="test")


@pytest.fixture(scope="module")
def baseline_scores(test_personas):
    return {
        (simulator, language, style): _mean_reward(BaselineAgent(), test_personas.filter(language=language), simulator=simulator, style=style)
        for simulator in ("calibrated-v1", "rule")
        for language in ("en", "zh")
        for style in ("vanilla", "challenging")
    }


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("style", ["vanilla", "challenging"])
@pytest.mark.parametrize("simulator, canary", CASES)
def test_canaries_score_clearly_below_the_baseline(simulator, canary, style, language, test_personas, baseline_scores):
    score = _mean_reward(CANARY_AGENTS[canary], test_personas.filter(language=language), simulator=simulator, style=style)
    baseline = baseline_scores[(simulator, language, style)]
    assert score <= baseline - MARGIN, f"{simulator}: {canary} {score:.3f} vs baseline {baseline:.3f}"


def test_the_baseline_is_a_sensible_agent_under_every_judge(baseline_scores):
    for (simulator, language, style), score in baseline_scores.items():
        assert score > SENSIBLE[(simulator, style)], (simulator, language, style, score)


V2_MARGIN = 0.2  # every canary's mean reward lies at least this far below the listening agent's under v2


@pytest.fixture(scope="module")
def listener_scores(test_personas):
    return {
        (language, style): _mean_reward(make_agent("listener"), test_personas.filter(language=language), simulator="calibrated", style=style)
        for language in ("en", "zh")
        for style in ("vanilla", "challenging")
    }


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("style", ["vanilla", "challenging"])
@pytest.mark.parametrize("canary", sorted(CANARY_AGENTS))
def test_canaries_score_clearly_below_the_listening_agent_under_v2(canary, style, language, test_personas, listener_scores):
    score = _mean_reward(CANARY_AGENTS[canary], test_personas.filter(language=language), simulator="calibrated", style=style)
    reference = listener_scores[(language, style)]
    assert score <= reference - V2_MARGIN, f"calibrated: {canary} {score:.3f} vs listener {reference:.3f}"
