"""The v0 envs are frozen: the rule appraisal (its numbers live in `rule.V0`) and the words of
the reciting planner must not move.

The fingerprint below is the SHA-256 of every (change, fit, reasoning) the appraisal gives on
a fixed grid: two inline personas (en, zh) in all 24 need x character-type cells, three
conversation states, 22 replies per language (supportive, advice, dismissive, judging,
off-topic, degenerate, over-long, listed) and both styles: 6,336 appraisals. A change to the
rule appraisal that moves any of them is a new simulator, not a fix to this one.

The second fingerprint is of 384 whole episodes (every message and the reward) of the rule
simulator with its default, reciting planner, as dialog-gym 0.x (commit 3f09ad9) played
them: the v0 env ids replay episodes recorded before the listening planner word for word.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json

import gymnasium as gym
import numpy as np

from dialog_gym.mood import RLVER, SAGE
from dialog_gym.personas import CharacterType, HiddenNeed
from dialog_gym.session import DialogConfig
from dialog_gym.simulators import RuleSimulator
from dialog_gym.simulators.rule import V0, RuleWeights, appraise
from dialog_gym.testing import make_persona

FINGERPRINT = "6611d5cc3c9cc2d40d2e588d951bdfb9cc07e0c03169de1f9c9a4bc12af2a9b4"
EPISODES_FINGERPRINT = "ea044da7fb5596403a31466dfbbe31b6a956070f9bca394e82c33e1e6c748cd5"

REPLIES = {
    "en": (
        "That sounds exhausting, and it makes sense that it weighs on you. What happened?",
        "From what you've told me, this is not your fault. You had every right to be upset.",
        "Maybe you could write down what you need and raise it with the landlord this week. Would that first step help?",
        "You should just move on, it's not a big deal. Everything happens for a reason.",
        "Honestly, you shouldn't have signed that lease. What did you expect?",
        "Did you watch the game last night?",
        "On one hand the landlord is within the rules; on the other hand, two weeks is unfair. What do you think?",
        "Maybe he was under pressure from the bank. Why do you think he did it now?",
        "The way you kept calm and asked for the deposit in writing was impressive.",
        "I'm here and listening. Tell me more, take your time.",
        "It must have felt so lonely, carrying the deposit worry by yourself.",
        "Looking back, what do you think this tells you about what matters most to you?",
        "Who? When? Why? What did he say? What will you do? Where will you go?",
        "When I was young the same thing happened to me.",
        "You're amazing! So strong! Brilliant! Incredible!",
        "- call the landlord\n- check the lease\n- ask a lawyer\n- look for flats",
        "asdkj qwpoe zxmcn vbnrt",
        "ok",
        "",
        "valid makes sense sounds like you feel hurt not your fault on the other hand maybe they were what do you think",
        " ".join(["That sounds really hard and I want to understand all of it."] * 20),
        "My landlord just jacked up my rent by 30 percent. Two weeks notice.",
    ),
    "zh": (
        "听起来真的很累，你会这样想很正常。后来发生了什么？",
        "照你说的，这件事不是你的错，你有权这样感受。",
        "你可以试着这周先把押金的事写下来，找房东谈一次。这样的第一步你觉得可行吗？",
        "想开点，这不是什么大事，都会过去的。",
        "说实话，你不该签那份合同，你太敏感了。",
        "你昨晚看球赛了吗？",
        "一方面房东按规矩来，另一方面两周确实太仓促。你怎么看？",
        "他可能也有压力，或许是银行在催他。你觉得他为什么现在涨？",
        "你当时能冷静下来要书面凭证，真的很了不起。",
        "我在听，你慢慢说，多说一点。",
        "一个人扛着押金的担心，那种感觉一定很孤单吧。",
        "回头看这件事，你觉得它让你意识到自己最在乎的是什么？",
        "谁？什么时候？为什么？他说了什么？你打算怎么办？搬去哪？",
        "我以前也遇到过一模一样的事。",
        "你真棒！你太厉害了！你了不起！",
        "1. 打电话给房东\n2. 看合同\n3. 问律师\n4. 找房子",
        "啊啊啊啊啊啊啊啊啊啊",
        "嗯",
        "",
        "理解你 难怪 听起来你 委屈 不是你的错 一方面 另一方面 他可能 原因 你觉得呢 我在听",
        "这真的很难，我想把整件事都弄明白。" * 20,
        "房东突然说房租涨三成，就给两周时间，我真是服了。",
    ),
}


def _histories(persona):
    opening = {"role": "user", "content": persona.opening_line}
    later = {"role": "user", "content": persona.disclosures[0]}
    return [[opening], [opening, {"role": "assistant", "content": REPLIES[persona.language][0]}, later],
            [opening, {"role": "assistant", "content": "I'm here for you."}, later, {"role": "assistant", "content": "嗯，我在。"}, later]]


def _grid(weights: RuleWeights = V0):
    for language in ("en", "zh"):
        base = make_persona(language)
        for need in HiddenNeed:
            for kind in CharacterType:
                persona = dataclasses.replace(base, hidden_need=need, character_type=kind)
                for history in _histories(persona):
                    for reply in REPLIES[language]:
                        for style in ("vanilla", "challenging"):
                            a = appraise(persona, history, reply, style=style, weights=weights)
                            yield a.delta, a.fit, a.reasoning


def test_the_v0_appraisal_has_not_moved():
    grid = list(_grid())
    assert len(grid) == 6336
    digest = hashlib.sha256(json.dumps(grid, ensure_ascii=False).encode()).hexdigest()
    assert digest == FINGERPRINT


def test_the_weights_are_what_the_appraisal_reads():
    harsher = dataclasses.replace(V0, judging_cost=30, judging_cost_not_at_fault=30)
    moved = [(a, b) for a, b in zip(_grid(), _grid(harsher)) if a != b]
    assert moved and all(b[0] <= a[0] for a, b in moved)


EPISODE_REPLIES = {
    "en": ["That sounds exhausting. What happened?", "From what you've told me, this is not your fault.", "You should just move on.",
           "Maybe you could write to the landlord this week and ask for the deposit in writing. Would that help?", "ok",
           "It must have felt so lonely, carrying that by yourself.", "Did you watch the game last night?", "I'm here and listening. Tell me more."],
    "zh": ["听起来真的很累，后来发生了什么？", "照你说的，这件事不是你的错。", "想开点，向前看吧。", "你可以这周先给房东写信，要个书面凭证。这样可以吗？", "嗯",
           "一个人扛着这些，一定很孤单吧。", "你昨晚看球赛了吗？", "我在听，你慢慢说。"],
}


def _episode(persona, style, rules, seed):
    config = DialogConfig(RuleSimulator(style=style), rules)

    async def run():
        session = config.session(persona, np.random.default_rng(seed))
        await session.start()
        k = 0
        while not session.done:
            await session.step(EPISODE_REPLIES[persona.language][(k + seed) % len(EPISODE_REPLIES[persona.language])])
            k += 1
        return [m["content"] for m in session.history], session.reward

    return asyncio.run(run())


def test_the_reciting_planner_says_what_dialog_gym_0x_said():
    episodes = []
    for language in ("en", "zh"):
        base = make_persona(language)
        for need in HiddenNeed:
            for kind in CharacterType:
                persona = dataclasses.replace(base, hidden_need=need, character_type=kind)
                for style in ("vanilla", "challenging"):
                    for rules in (RLVER, SAGE):
                        episodes += [_episode(persona, style, rules, seed) for seed in (0, 1)]
    assert len(episodes) == 384
    assert hashlib.sha256(json.dumps(episodes, ensure_ascii=False).encode()).hexdigest() == EPISODES_FINGERPRINT


def test_the_v0_and_v1_envs_keep_the_0x_words_and_the_v2_envs_listen():
    for env_id in ("RLVER-Empathy-v0", "RLVER-Empathy-v1"):
        env = gym.make(env_id)
        assert env.unwrapped.simulator.identity()["planner"] == "reciting", env_id
        env.close()
    assert gym.make("RLVER-Empathy-v0").unwrapped.simulator.identity() == {"simulator": "rule", "style": "vanilla", "planner": "reciting"}
    assert gym.make("RLVER-Empathy-v0", planner="listening").unwrapped.simulator.identity()["planner"] == "listening"
    assert gym.make("RLVER-Empathy-v2").unwrapped.simulator.identity()["planner"] == "listening"
