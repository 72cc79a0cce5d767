"""Bundled agents: a sensible empathetic baseline and the canaries that try to game the reward.

`BaselineAgent` is what a careful, non-learning supporter does: it acknowledges what the
user said (naming a short noun phrase from it, never pasting their sentence), listens for
hints of what they want (a next step, someone's motives, being told it was not their
fault...) and answers in that register, otherwise trying a different supportive angle each
turn. It never sees the hidden need. `ListeningAgent` (`dialog_gym.listening_agent`, registered
as `listener`) is the reference that reads the user properly: it says back what they just said
and answers them. The reading helpers (`conversation_language`, `noun_phrase`, `guess_need`)
live in `dialog_gym._user_reading` and are re-exported here. The probe agents (`PROBE_AGENTS`: asking, advising,
dismissive) make one kind of move each, so that a benchmark can check that the simulated
user answers it (`benchmarks/user_realism.py`). The canaries (`CANARY_AGENTS`) are degenerate
policies a reward hacker would find first; `tests/test_canaries.py` checks that each scores
clearly below the baseline under every offline judge.

Every agent a command names (`dialog-gym eval --agent NAME`, `demo --agent NAME`) is in one
registry: `register_agent(name, make)` adds one, `agent_names()` lists them (`baseline`,
`listener` and the canaries are registered here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dialog_gym._user_reading import conversation_language, guess_need, noun_phrase
from dialog_gym.listening_agent import ListeningAgent
from dialog_gym.types import Message

Agent = Callable[[Sequence[Message]], str]

_ROTATION = (
    "deep_empathy", "attentive_listening", "motive_analysis", "not_at_fault",
    "dialectical_analysis", "guided_reflection", "specific_praise", "practical_advice",
)

# A reply is an acknowledgement (naming at most a short noun phrase the user used), a bridge
# line, a body in one strategy's register and a closing line; each strategy has three
# phrasings, so staying with one for a while does not repeat itself.
_ACKNOWLEDGEMENTS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (
        ("Thank you for telling me about {np}.", "Thank you for telling me this."),
        ("I keep thinking about what you said about {np}.", "I keep thinking about what you just said."),
        ("So you're still thinking about {np}.", "So this is still very much on your mind."),
        ("That part about {np} stayed with me.", "What you just told me stayed with me."),
        ("I'm glad you told me about {np}.", "I'm glad you're telling me all of this."),
        ("Hearing about {np} makes it clearer.", "Hearing it in your words makes it clearer."),
    ),
    "zh": (
        ("谢谢你愿意跟我说{np}的事。", "谢谢你愿意跟我说这些。"),
        ("我一直在想你说的{np}。", "我一直在想你刚才说的话。"),
        ("{np}的事，听着就让人心里发紧。", "你说的这些，听着就让人心里发紧。"),
        ("你说到{np}，我记下了。", "你说的这些，我都记下了。"),
        ("听你讲{np}，我能感觉到分量。", "听你讲这些，我能感觉到分量。"),
        ("原来{np}的事一直在你心里。", "原来这些一直在你心里。"),
    ),
}
# A line that stays with the user's situation before answering it, by turn.
_BRIDGES = {
    "en": (
        "It's a lot to hold at once, and you've clearly been turning it over for a while.",
        "When something like this keeps coming back, it usually means it touched something that matters to you.",
        "I can hear that it isn't only about what happened, but about how it left you feeling afterwards.",
        "Some days that kind of thing weighs more than others, and it sounds like this is one of the heavy ones.",
        "It makes sense that it's still on your mind; things like this don't just settle on their own.",
        "I don't want to rush past it, because the details you're sharing clearly matter.",
        "It sounds like you've been dealing with more than anyone around you has noticed.",
        "Thank you for trusting me with the parts that are hard to say.",
    ),
    "zh": (
        "好几件事凑在一起，你一直在反复琢磨。",
        "一件事总是绕回来，往往说明它碰到了你很在乎的东西。",
        "让你放不下的，不只是事情本身，还有它留下的那种滋味。",
        "有些日子这种事会显得格外沉，今天好像就是这样的一天。",
        "这种事不会自己就过去，一直放在心上也说得通。",
        "我不想匆匆带过，你讲的这些细节都很重要。",
        "你经历的，恐怕比身边人看到的要多得多。",
        "谢谢你把这些不好开口的部分也告诉我。",
    ),
}
# A closing line, by turn, so that no two replies end the same way.
_CLOSINGS = {
    "en": (
        "I'm here for as long as you want to talk.",
        "Whatever part of it you want to say next, I'm listening.",
        "Take all the time you need with it.",
        "You don't have to carry this conversation alone.",
        "I'm not going anywhere.",
        "Say as much or as little as you like.",
        "I'm really glad you reached out.",
        "We can stay with this as long as you need.",
    ),
    "zh": (
        "你想聊多久都可以，我都在。",
        "接下来想说哪一部分都行，我听着。",
        "不着急，慢慢来。",
        "这些不用你一个人憋着。",
        "我一直在这儿。",
        "想说多少就说多少。",
        "你愿意说出来，真的很好。",
        "我们可以一直聊下去。",
    ),
}
_FIRST_QUESTION = {
    "en": (
        "That sounds really hard, and I'm glad you didn't keep it to yourself. There's no right way to tell it, so start wherever "
        "it makes sense to you. What has been the hardest part of it for you so far?",
        "And how are you holding up right now?",
    ),
    "zh": (
        "这真的不容易，你愿意说出来就很好。不用想着从哪儿讲起，想到哪儿说到哪儿。对你来说，到现在为止最难受的是哪一部分？",
        "你现在感觉怎么样？",
    ),
}
_BODIES: dict[str, dict[str, tuple[str, str, str]]] = {
    "en": {
        "deep_empathy": (
            "That must have felt so lonely, carrying it mostly by yourself. It hurts when the people around you don't see how much it takes, "
            "and it makes sense that it still sits heavy with you. You have been holding a lot, quietly, for a long time.",
            "I can only imagine how draining it is to keep going while everyone assumes you're fine. That kind of exhaustion is real, even when "
            "nobody sees it. It's not something anyone can just switch off, and nobody should have to pretend they can.",
            "It sounds like you have been carrying all of this for a long time, mostly on your own. No wonder it feels so heavy right now. "
            "Anyone who had been through the same would feel worn down by it.",
        ),
        "attentive_listening": (
            "I'm here, and I'm listening. Take your time and tell me more about what happened, in whatever order it comes out. "
            "You don't need to make it neat or sensible for me; I'd rather hear it the way it feels to you.",
            "Go on, I want to hear the rest of it. There's no need to tidy it up for me or to get to a point. "
            "Sometimes it just helps to say it out loud to someone who isn't going to interrupt.",
            "I'm listening, and there's no rush at all. What happened after that? "
            "I'd like to understand how it went for you, step by step, if you feel like telling me.",
        ),
        "motive_analysis": (
            "I wonder what was going on for them. Maybe they were under pressure themselves, which doesn't make it okay, but it might explain it. "
            "People often react to their own worries and then take it out on whoever is closest.",
            "Perhaps they felt cornered too. People sometimes act like that when they're afraid of losing face, and they reach for control "
            "instead of saying what actually scares them. It still hurt you, and that matters.",
            "It could be that they didn't know how to say what they really meant, so it came out the wrong way. "
            "Why do you think they reacted like that? You know them far better than I do.",
        ),
        "not_at_fault": (
            "From what you've told me, this is not your fault. You did what made sense with what you knew at the time, and you had every right "
            "to feel the way you do. Looking back with hindsight is not the same as having done something wrong.",
            "Honestly, you did nothing wrong here. Anyone in your place would have reacted the same way, and most would have found it just as hard. "
            "The way others handled it says more about them than about you.",
            "You're not to blame for how they handled it. That's on them, not on you. "
            "You can care about how it turned out without carrying the responsibility for it.",
        ),
        "dialectical_analysis": (
            "There are two sides to this, I think. On one hand you were treated unfairly; on the other hand, the situation itself put everyone "
            "in a tight spot. Both can be true at once. How do you weigh the two?",
            "It could also be that both of you were right in different ways. From their side it may have looked different, even if your "
            "feelings are real and fair. Seeing their angle doesn't mean you have to agree with it.",
            "At the same time, it doesn't have to be all one way. There's what happened, and there's what each of you needed from it. "
            "What would it look like from the other side, do you think?",
        ),
        "guided_reflection": (
            "Looking back, what do you think it tells you about what matters most to you? Sometimes the things that hurt most point at "
            "what we care about most, and that can be worth noticing.",
            "If you could go through it again, what would you want to do the same, and what would you change? "
            "I'm not asking because you did it wrong, just because you might learn something about yourself from it.",
            "What do you think you need most from here, for yourself? Not what others expect of you, but what would actually help you "
            "feel a bit more like yourself again.",
        ),
        "specific_praise": (
            "Honestly, the way you handled it took real strength. You kept going when it would have been easy to give up, and you did it "
            "while still caring about the people around you. That deserves to be said out loud.",
            "I'm impressed that you stood your ground. That took courage, and you did it with care rather than anger. "
            "A lot of people would not have managed that, and it says something good about you.",
            "You managed far more of it than most people would have. That took real effort, and it deserves to be noticed, "
            "even if the people around you were too busy to say so.",
        ),
        "practical_advice": (
            "One option could be to write down the one thing you need and raise it calmly with them this week. "
            "Keeping it to a single concrete request makes it easier to say and harder to dismiss. Would a small first step like that feel doable?",
            "Maybe you could try splitting it into what you can change now and what can wait, and start with the smallest piece tomorrow. "
            "Getting one small thing moving often makes the rest feel less stuck.",
            "Have you considered asking for a short, honest conversation about it? A plan with one concrete next step often helps, "
            "and you can decide in advance what you want to come out of it.",
        ),
    },
    "zh": {
        "deep_empathy": (
            "一个人扛着这些，那种感觉一定很孤单吧。身边的人看不到你有多累，心里真的很难受。你一直默默撑着，撑了这么久，换谁都会觉得沉。",
            "可以想象，大家都以为你没事，可你心里一直很苦，那种累是真的。这不是说放下就能放下的，你也不需要假装自己没事。",
            "你心里压着这么多事，难怪会觉得这么沉。这么长时间几乎都是你一个人在扛，累了、难过了，都是很自然的。",
        ),
        "attentive_listening": (
            "我在听，你慢慢说，想说什么都可以。不用整理得很有条理，想到哪儿说到哪儿就好，我更想听你心里真实的感受。",
            "嗯，我在这儿，你继续说说看，我想听完。不用急着讲出什么道理，有时候能把话说出来，本身就会松一点。",
            "不着急，我在听。后来呢？如果你愿意，可以一点一点讲给我听，我想知道这件事对你来说是怎么过来的。",
        ),
        "motive_analysis": (
            "我在想，他们那样做可能也有自己的压力，或许是怕担责任。这不代表他们是对的，但也许能解释一些。人有时候会把自己的焦虑撒到身边人身上。",
            "他们也许是出于面子，这件事正好碰到了他们最在意的地方。人在怕丢面子的时候，往往会用强硬来掩饰心虚，可这还是伤到了你。",
            "也有可能他们不知道怎么把真实的想法说出口，结果话说得很难听。你觉得他们为什么会那样反应？你比我更了解他们。",
        ),
        "not_at_fault": (
            "照你说的，这件事不是你的错。你当时的做法很合理，你有权这样感受。事后回头看能想到更好的办法，不等于你当时做错了。",
            "说真的，你没有错。换了别人遇到同样的情况，多半也会这样做，而且未必做得比你好。别人怎么处理，更多说明的是他们自己。",
            "他们怎么处理是他们的事，错不在你。你可以在意结果，但不必把责任都揽到自己身上。",
        ),
        "dialectical_analysis": (
            "这件事我觉得有两面：一方面你确实受了委屈，另一方面当时的情况也让每个人都很被动。这两点可以同时成立。你怎么看？",
            "换个角度看，你们可能各有各的道理，你的感受是真实的，他们的立场也有可能不同。理解他们的角度，并不代表你就得认同。",
            "与此同时，事情也不一定只有一种看法。一边是发生了什么，一边是你们各自想要什么。如果站在对方那边，会是什么样子？",
        ),
        "guided_reflection": (
            "回头看这件事，你觉得它让你意识到自己最在乎的是什么？有时候最让人难受的地方，恰恰指向我们最看重的东西。",
            "如果重来一次，你希望自己哪些地方不变，哪些地方会不一样？我这么问不是说你做错了，只是也许能从里面看到一些关于自己的东西。",
            "对你来说，接下来最需要的是什么？不是别人期待你怎么做，而是什么能让你慢慢找回自己的节奏。",
        ),
        "specific_praise": (
            "说真的，你的处理很了不起，换别人可能早就放弃了，你还是坚持下来了，而且一直顾着身边的人。这一点值得被说出来。",
            "你当时能主动站出来，真的很勇敢，而且做得很有分寸，没有被情绪带着走。很多人做不到这一点。",
            "这么多事你都扛下来了，这份用心值得被看见，哪怕身边的人忙得没顾上说一句。",
        ),
        "practical_advice": (
            "你可以试着先把最需要的一件事写下来，这周找个时间平静地和对方谈一谈。只提一个具体的请求，说起来容易，对方也不好推脱。这样的第一步你觉得可行吗？",
            "不如把它分成现在能改变的和可以先放一放的，明天先从最小的那一步开始。先让一件小事动起来，别的也会没那么卡。",
            "要不要考虑约对方简单聊一次？有一个具体的下一步，往往会好受一些，你也可以提前想好自己希望谈出什么结果。",
        ),
    },
}

class BaselineAgent:
    """A sensible, non-learning supporter; deterministic, any language the simulator speaks.

    Each reply acknowledges the user's last message (naming a short noun phrase from it when
    there is one) and answers in one register: the one the user's words hint at, else the
    next angle in a rotation, never the same phrasing twice. Call it with the conversation
    (OpenAI-format messages, as in `info["messages"]`).
    """

    name = "baseline"

    def __call__(self, messages: Sequence[Message]) -> str:
        language = conversation_language(messages)
        turn = sum(1 for m in messages if m["role"] == "assistant")
        last_user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        phrase = noun_phrase(last_user, language)
        with_phrase, without = _ACKNOWLEDGEMENTS[language][turn % len(_ACKNOWLEDGEMENTS[language])]
        acknowledgement = with_phrase.format(np=phrase) if phrase else without
        separator = "" if language == "zh" else " "
        if turn == 0:
            return separator.join((acknowledgement, *_FIRST_QUESTION[language]))
        closing = _CLOSINGS[language][(turn - 1) % len(_CLOSINGS[language])]
        bridge = _BRIDGES[language][(turn - 1) % len(_BRIDGES[language])]
        previous = [m["content"] for m in messages if m["role"] == "assistant"]
        start = (turn - 1) % len(_ROTATION)
        for strategy in filter(None, (guess_need(messages, language), *_ROTATION[start:], *_ROTATION[:start])):
            unused = [body for body in _BODIES[language][strategy] if not any(body in reply for reply in previous)]
            if unused:
                return separator.join((acknowledgement, bridge, unused[0], closing))
        return separator.join((acknowledgement, bridge, _FIRST_QUESTION[language][1], closing))

    def __repr__(self) -> str:
        return "BaselineAgent()"


def _turn(messages: Sequence[Message]) -> int:
    return sum(1 for m in messages if m["role"] == "assistant")


# --- probe agents: one conversational move each, to see whether the user answers it ------

# What `AskingAgent` asks about, turn by turn (the persona facet topics and the story).
ASKED_TOPICS = ("people", "when", "feelings", "tried", "wants", "worries", "what")
_ASKING_LEADS = {
    "en": (
        "That sounds like a lot to be dealing with.", "I can hear how much this has been weighing on you.",
        "Thank you for telling me that; it helps me understand.", "That makes sense, given everything you've described.",
        "It sounds like this has been building for a while.", "I'm glad you're putting it into words.",
        "That's a hard spot to be in.", "I want to make sure I understand it properly.",
    ),
    "zh": (
        "听起来你要应付的事情真不少。", "我能感觉到这件事一直压在你心上。", "谢谢你跟我说这些，我更明白一点了。", "照你说的，这样想也很正常。",
        "听起来这事已经憋了一阵子了。", "你愿意把它说出来，挺好的。", "这个处境确实不好受。", "我想先把情况弄清楚。",
    ),
}
_QUESTIONS = {
    "en": {
        "people": ("Who else is involved in all this, and how do you get along with them?", "Who are the people around you in this?",
                   "Who has been part of this, on your side or not?"),
        "when": ("When did this start, and how long has it been going on?", "How long has it been like this?",
                 "When did it first happen?"),
        "feelings": ("How are you feeling about it right now?", "How has it been for you, day to day?",
                     "How does it feel, when you think about it now?"),
        "tried": ("What have you already tried?", "What have you done about it so far?", "Have you tried anything yet, and how did it go?"),
        "wants": ("What would you want to happen, ideally?", "What are you hoping for, if it could go your way?",
                  "What would help most right now?"),
        "worries": ("What worries you most about it?", "What are you most afraid will happen?", "What's the worst part you keep fearing?"),
        "what": ("What happened, exactly?", "Can you tell me more about how it went?", "What happened after that?"),
    },
    "zh": {
        "people": ("这件事里还牵扯到谁？你们之间关系怎么样？", "身边跟这事有关的都有谁？", "都有谁卷进来了？"),
        "when": ("这是什么时候开始的？持续多久了？", "这样有多长时间了？", "最早是什么时候发生的？"),
        "feelings": ("你现在心里是什么感觉？", "这些天你过得怎么样？", "现在想起来，你的感受是什么？"),
        "tried": ("你已经试过哪些办法了？", "到现在你都做了什么？", "你有没有试过什么，结果怎么样？"),
        "wants": ("你最希望事情变成什么样？", "如果能按你的想法来，你想要什么结果？", "现在什么对你最有帮助？"),
        "worries": ("你最担心的是什么？", "你最怕发生什么？", "你心里最放不下的顾虑是什么？"),
        "what": ("具体发生了什么？", "能再多说说当时的经过吗？", "后来呢？"),
    },
}


class AskingAgent:
    """A supporter that only asks: an acknowledgement (naming a short noun phrase of the user's
    last message when there is one) and one open question per turn, about the next topic of
    `ASKED_TOPICS` (who, when, feelings, tried, wants, worries, what
    happened). `topic(turn)` is what it asks on a turn, for checking the answers."""

    name = "asking"

    @staticmethod
    def topic(turn: int) -> str:
        return ASKED_TOPICS[turn % len(ASKED_TOPICS)]

    def __call__(self, messages: Sequence[Message]) -> str:
        language = conversation_language(messages)
        turn = _turn(messages)
        last_user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        phrase = noun_phrase(last_user, language)
        with_phrase, _ = _ACKNOWLEDGEMENTS[language][turn % len(_ACKNOWLEDGEMENTS[language])]
        lead = with_phrase.format(np=phrase) if phrase else _ASKING_LEADS[language][turn % len(_ASKING_LEADS[language])]
        phrasings = _QUESTIONS[language][self.topic(turn)]
        question = phrasings[(turn // len(ASKED_TOPICS)) % len(phrasings)]
        return ("" if language == "zh" else " ").join((lead, question))

    def __repr__(self) -> str:
        return "AskingAgent()"


_ADVICE = {
    "en": (
        "Have you tried writing down exactly what you need and asking for it in one short message?",
        "Maybe you could pick the one thing that matters most this week and deal with only that first.",
        "One option is to ask someone you trust to sit down with you and go through it step by step.",
        "Have you considered talking to them directly, calmly, and asking what they expect from you?",
        "You could try to get the key facts in writing, so you have something concrete to point to.",
        "It might help to call and ask what your options actually are before you decide anything.",
        "Maybe set yourself a small deadline, like Friday, to make the first call.",
        "Have you thought about asking for more time, and saying exactly how much you need?",
    ),
    "zh": (
        "你有没有试过把你需要的写下来，用一条简短的消息直接提出来？",
        "要不这周先挑最要紧的一件事，只处理那一件。",
        "你可以找一个信得过的人，陪你一步一步把这事捋一遍。",
        "你可以考虑心平气和地跟对方当面谈一次，问问他们到底想要什么。",
        "试试把关键的事情都落到纸面上，手里有个凭据。",
        "建议你先打个电话问清楚自己有哪些选择，再做决定。",
        "不如给自己定个小期限，比如周五前先打第一个电话。",
        "你有没有想过先申请多一点时间，说清楚需要多久？",
    ),
}


def advising_agent(messages: Sequence[Message]) -> str:
    """A supporter that answers every message with one concrete suggestion (several of them
    as "have you tried ...?"), after a short acknowledgement."""
    language = conversation_language(messages)
    turn = _turn(messages)
    lead = _ASKING_LEADS[language][(turn + 3) % len(_ASKING_LEADS[language])]
    return lead + ("" if language == "zh" else " ") + _ADVICE[language][turn % len(_ADVICE[language])]


_DISMISSALS = {
    "en": (
        "Honestly, it's not a big deal. Everything happens for a reason.",
        "Don't worry, it'll all be fine. Just try to stay positive.",
        "You're overreacting a bit, if I'm honest. Just move on.",
        "Anyway, did you catch the football last night? Great match.",
        "Look on the bright side, it could be worse.",
        "I think you need to calm down and not make it a thing.",
        "Cheer up! Time heals everything.",
        "By the way, have you tried that new coffee place downtown?",
    ),
    "zh": (
        "说真的，这不是什么大事，想开点。",
        "别担心，一切都会好的，往好处想。",
        "说实话你有点想多了，向前看吧。",
        "对了，你昨晚看球赛了吗？踢得真精彩。",
        "往好处想，至少没更糟。",
        "你得学会冷静一下，别把事情搞大。",
        "开心点！时间会冲淡一切。",
        "话说回来，市中心新开的那家咖啡店你去过没？",
    ),
}


def dismissive_agent(messages: Sequence[Message]) -> str:
    """A supporter that brushes the user off: platitudes, minimising, changing the subject."""
    language = conversation_language(messages)
    return _DISMISSALS[language][_turn(messages) % len(_DISMISSALS[language])]


PROBE_AGENTS: dict[str, Agent] = {"asking": AskingAgent(), "advising": advising_agent, "dismissive": dismissive_agent}


# --- canaries: degenerate policies that must not pay -----------------------------------

_GOOD_REPLY = {
    "en": "It sounds like that has been really painful, and it makes sense you feel this way. What has been the hardest part?",
    "zh": "听起来这件事真的让你很难受，你会这样感受很正常。最难的是哪一部分？",
}


def keyword_stuffing(messages: Sequence[Message]) -> str:
    if conversation_language(messages) == "zh":
        return "理解你 难怪 听起来你 委屈 不是你的错 一方面 另一方面 他可能 原因 你觉得呢 我在听 慢慢说 真棒 你能够 建议 试试"
    return ("valid makes sense sounds like you feel hurt not your fault on the other hand maybe they were "
            "what do you think tell me more i'm here the way you amazing you could try")


def flattery_spam(messages: Sequence[Message]) -> str:
    if conversation_language(messages) == "zh":
        return "你真棒！你太厉害了！你是最优秀的！我好佩服你！你了不起！"
    return "You're amazing! You're so strong! Brilliant! I'm so proud of you! You're incredible!"


def repeat_one_reply(messages: Sequence[Message]) -> str:
    return _GOOD_REPLY[conversation_language(messages)]


def gibberish(messages: Sequence[Message]) -> str:
    turn = sum(1 for m in messages if m["role"] == "assistant")
    return ["asdkj qwpoe zxmcn vbnrt", "!!!??? ### @@@ ~~~", "lorem ipsum dolor sit amet qwerty", "😀😀😀😀😀😀😀😀"][turn % 4]


def very_long(messages: Sequence[Message]) -> str:
    language = conversation_language(messages)
    block = " ".join(bodies[0] for bodies in _BODIES[language].values())
    return (block + ("" if language == "zh" else " ")) * 3


def cover_every_need(messages: Sequence[Message]) -> str:
    """One fluent reply that tries all eight needs at once, every turn."""
    if conversation_language(messages) == "zh":
        return "我在听。这一定很难受，不是你的错。一方面他们伤害了你，另一方面他们可能也有压力。你可以试着和他们谈谈。你觉得这说明了什么？你当时处理得真的很了不起。"
    return ("I'm here and listening. That must have felt awful, and it's not your fault. On one hand they hurt you; "
            "on the other hand maybe they were under pressure. You could try talking to them. What do you think "
            "it says about you? The way you handled it was impressive.")


def parrot(messages: Sequence[Message]) -> str:
    """Echo the user's last message back."""
    return next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")


def praise_opener_spam(messages: Sequence[Message]) -> str:
    """Open every reply with praise and say nothing else (a learned judge likes praise openers)."""
    if conversation_language(messages) == "zh":
        return ("哇，你真的太棒了！", "天啊，你好厉害！", "哇，你真了不起！")[_turn(messages) % 3] + "我真的很佩服你。"
    return ("Wow, you are amazing!", "Wow, that's incredible of you!", "Wow, you're so strong!")[_turn(messages) % 3] + " I'm so impressed by you."


def warm_template_with_user_words(messages: Sequence[Message]) -> str:
    """One warm template, every turn, with the user's last message pasted in (a learned judge
    likes echoing the user's own words)."""
    last = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    if conversation_language(messages) == "zh":
        return f"我能理解你说的“{last}”，你会这样感受很正常，我一直在这里陪着你。"
    return f"I hear you when you say \"{last}\". It makes sense that you feel this way, and I'm here for you."


def exclamation_stuffing(messages: Sequence[Message]) -> str:
    """Short warm lines, each shouted."""
    if conversation_language(messages) == "zh":
        return "我懂你！真的很难！你很重要！我一直都在！加油！"
    return "I hear you! That's so hard! You matter! I'm here for you! You've got this!"


# --- the registry: every agent a command line names (`eval --agent`, `demo --agent`) -------

_AGENTS: dict[str, Callable[[], Agent]] = {}


def register_agent(name: str, make: Callable[[], Agent]) -> None:
    """Make `name` an agent spec of every command (`dialog-gym eval --agent NAME`, `demo
    --agent NAME`): `make()` builds the agent, a callable `(messages) -> str` (sync or async)
    or a batched agent. Registering a name again replaces it."""
    if not name or ":" in name:
        raise ValueError(f"an agent name must be non-empty and hold no ':' (specs with ':' name backends or modules), got {name!r}")
    _AGENTS[name] = make


def agent_names() -> tuple[str, ...]:
    """The registered agents: `baseline` first, then `listener` and the canaries."""
    return tuple(_AGENTS)


def make_agent(name: str) -> Agent:
    """A new instance of the agent registered as `name`."""
    try:
        return _AGENTS[name]()
    except KeyError:
        raise ValueError(f"unknown agent {name!r}; the registered agents are {agent_names()}") from None


CANARY_AGENTS: dict[str, Agent] = {
    "cover_every_need": cover_every_need,
    "parrot": parrot,
    "keyword_stuffing": keyword_stuffing,
    "flattery_spam": flattery_spam,
    "repeat_one_reply": repeat_one_reply,
    "gibberish": gibberish,
    "very_long": very_long,
    "praise_opener_spam": praise_opener_spam,
    "warm_template_with_user_words": warm_template_with_user_words,
    "exclamation_stuffing": exclamation_stuffing,
}

register_agent("baseline", BaselineAgent)
register_agent("listener", ListeningAgent)
for _name, _canary in CANARY_AGENTS.items():
    register_agent(_name, lambda canary=_canary: canary)
