"""Two agents in one dialogue: the bundled baseline supporter and a scripted help-seeker.

The seeker is a policy of the PettingZoo env (`dialog_gym.multiagent.empathy_v0`); here a
small script plays it from its persona card, while the rule simulator still appraises
every supporter reply and moves the mood. Swap either function for a model to train a
user simulator or to run self-play.

    python examples/two_agents.py --seed 3 --language zh --seeker-reward shared
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from dialog_gym.agents import BaselineAgent
from dialog_gym.multiagent import empathy_v0

GOODBYE = {
    "en": {"good": "Thanks, that actually helped. I'll head off now, bye.", "bad": "I don't think this is going anywhere. Bye."},
    "zh": {"good": "谢谢你，聊完好多了。我先去忙了，再见。", "bad": "算了，说了你也不懂。再见。"},
}
COOL = {"en": "Hm. That's not really what I meant.", "zh": "嗯……不是这个意思。"}
MORE = {"en": "I keep going over the {keyword} thing.", "zh": "我老是想着{keyword}的事。"}


class ScriptedSeeker:
    """Plays the persona from its card: opens, discloses one detail per turn, leaves at the end.

    It reads only its own observation and info (its persona, the mood the simulator's
    appraisal gave the supporter's reply, whether its next line is the last).
    """

    def __call__(self, observation: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        persona, lang = info["persona"], info["language"]
        turn = info["turn"] if not observation["message"] else info["turn"] + 1
        if not observation["message"]:  # the opening
            return persona.get("opening_line") or persona["disclosures"][0]
        if info["ends_after_reply"] or turn > len(persona["disclosures"]) + 1:
            return GOODBYE[lang]["good" if info["mood"] >= 50 else "bad"]
        disclosures: Sequence[str] = persona["disclosures"]
        line = disclosures[turn - 1] if turn - 1 < len(disclosures) else MORE[lang].format(keyword=persona["keywords"][0])
        if info["emotion_delta"] < 0:
            line = f"{COOL[lang]} {line}" if lang == "en" else f"{COOL[lang]}{line}"
        return line


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--language", choices=("en", "zh"), default="en")
    parser.add_argument("--persona", default=None, help="a persona id (default: drawn with the seed)")
    parser.add_argument("--rules", choices=("rlver", "sage"), default="rlver")
    parser.add_argument("--seeker-reward", choices=("none", "shared", "opposed"), default="shared")
    args = parser.parse_args(argv)

    env = empathy_v0.env(
        rules=args.rules, language=args.language, split=None, seeker_reward=args.seeker_reward, render_mode="ansi"
    )
    supporter, seeker = BaselineAgent(), ScriptedSeeker()
    env.reset(seed=args.seed, options={"persona_id": args.persona} if args.persona else None)
    returns = {agent: 0.0 for agent in env.agents}
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, info = env.last()
        returns[agent] += reward
        if terminated or truncated:
            action = None
        elif agent == "supporter":
            action = supporter(info["messages"])  # sees only the conversation, never the hidden need
        else:
            action = seeker(observation, info)
        env.step(action)

    session = env.unwrapped.session
    print(env.render())
    print(f"hidden need: {session.persona.hidden_need.value} ({session.persona.character_type.value})")
    print("returns: " + ", ".join(f"{agent} {value:.2f}" for agent, value in returns.items()))
    env.close()


if __name__ == "__main__":
    main()
