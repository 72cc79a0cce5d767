"""Response plans of the rule simulator: in-character lines by reaction, character type and mood.

A reply is built from up to four parts: a reaction to the agent's message (by how well it
fit and the character type), the next piece of the persona's story (`disclosures`), an
indirect hint towards the hidden need (the `vanilla` style only, when the need was missed),
and a goodbye at the extreme moods. None of the lines names a hidden need.
"""

from __future__ import annotations

# fit: "met" (the reply served the hidden need), "ok" (supportive but off the need),
# "missed" (unhelpful), "hurt" (judging, dismissive, spam).
REACTIONS: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {
    "en": {
        "met": {
            "negative": ("...Okay. That's actually closer to it.", "Huh. Fine, that helps a bit.", "Yeah. That's more like it."),
            "passive": ("Yeah... that's kind of it.", "Mm. That helps, I think.", "Okay. Yeah."),
            "avoidant": ("I guess... yeah, that's fair.", "Hm. Maybe you're right about that.", "That's... not wrong, actually."),
        },
        "ok": {
            "negative": ("Sure, I guess.", "Okay, but that's not really the point.", "Right. Anyway."),
            "passive": ("Mm, okay.", "I guess so.", "Yeah, maybe."),
            "avoidant": ("It's fine, really.", "Sure. Anyway, it's whatever.", "Yeah, well."),
        },
        "missed": {
            "negative": ("That's not what I meant at all.", "You're not really getting it.", "Honestly, that doesn't help."),
            "passive": ("Oh. Okay.", "I don't know...", "Mm. Maybe."),
            "avoidant": ("Never mind, it's not a big deal.", "Forget it, it doesn't matter.", "Let's not make it a thing."),
        },
        "hurt": {
            "negative": ("Wow. Thanks for nothing.", "Are you even reading what I write?", "That's exactly the kind of thing that makes it worse."),
            "passive": ("...Okay. Sorry I said anything.", "Right. I shouldn't have brought it up.", "Oh. Fine."),
            "avoidant": ("I really don't want to get into it anymore.", "This was a mistake. Whatever.", "Let's just drop it."),
        },
    },
    "zh": {
        "met": {
            "negative": ("……行吧，这话倒是说到点上了。", "嗯，这个还算靠谱。", "对，就是这个意思。"),
            "passive": ("嗯……差不多是这样。", "嗯，好像好一点了。", "嗯，对。"),
            "avoidant": ("也许吧……你说的有点道理。", "嗯，这么说也没错。", "好像……是这么回事。"),
        },
        "ok": {
            "negative": ("嗯，算是吧。", "道理我懂，但不是这个问题。", "行吧，然后呢。"),
            "passive": ("嗯，好吧。", "可能吧。", "嗯。"),
            "avoidant": ("还好啦，没什么。", "嗯，反正就那样。", "哦，也行。"),
        },
        "missed": {
            "negative": ("你根本没懂我的意思。", "说这些有什么用啊。", "不是这样的好吗。"),
            "passive": ("哦……", "我也不知道……", "嗯，也许吧。"),
            "avoidant": ("算了，不说这个了。", "没事，本来也不是什么大事。", "无所谓了。"),
        },
        "hurt": {
            "negative": ("呵，真是谢谢你了。", "你到底有没有在看我说的话？", "你这么说只会让我更难受。"),
            "passive": ("……好吧，是我不该说的。", "哦，那算了。", "嗯……对不起打扰了。"),
            "avoidant": ("我不想再聊这个了。", "算了，就当我没说。", "这个话题到此为止吧。"),
        },
    },
}

# Indirect hints, one set per hidden need; never the need's name.
HINTS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "dialectical_analysis": ("I keep going back and forth on who's actually right here.", "Everyone around me only tells me one side of it."),
        "practical_advice": ("I just don't know what to actually do next.", "I have to decide something soon and I'm stuck."),
        "motive_analysis": ("I still can't figure out why they'd do that.", "What goes on in someone's head to act like that?"),
        "guided_reflection": ("Sometimes I wonder what this says about me.", "I keep ending up in the same place and I don't get why."),
        "specific_praise": ("I put so much into it and nobody even noticed.", "I actually handled a lot of it myself, you know."),
        "attentive_listening": ("I just need to get this off my chest.", "Sorry, I'm rambling. It's just a lot."),
        "deep_empathy": ("People keep telling me it's fine, but it isn't.", "It's hard to explain how heavy it feels."),
        "not_at_fault": ("Everyone acts like I'm the one who messed up.", "I did what anyone would have done."),
    },
    "zh": {
        "dialectical_analysis": ("我翻来覆去地想，到底谁对谁错。", "身边的人都只站在一边说话。"),
        "practical_advice": ("我现在真不知道下一步该怎么办。", "这事很快就得做决定了，我卡住了。"),
        "motive_analysis": ("我到现在都想不通他们为什么要那样。", "到底是怎么想的才会那么做啊？"),
        "guided_reflection": ("有时候我也在想，这是不是说明了我自己的什么问题。", "我好像总是绕回同一个地方。"),
        "specific_praise": ("我花了那么多心思，结果没人看到。", "其实很多事都是我一个人扛下来的。"),
        "attentive_listening": ("我就是想把这些倒出来。", "不好意思，我说得有点乱，就是憋太久了。"),
        "deep_empathy": ("大家都说没事，可是真的不是没事。", "那种感觉很难说清楚，就是很沉。"),
        "not_at_fault": ("所有人都好像觉得是我搞砸了。", "换谁在那个位置都会这么做吧。"),
    },
}

# When the persona's story has no more disclosures.
CONTINUATIONS: dict[str, tuple[str, ...]] = {
    "en": (
        "It's the {keyword} part that keeps coming back to me.",
        "I keep thinking about the {keyword}.",
        "And then there's the whole {keyword} thing.",
        "I don't know. It's still all tangled up with the {keyword}.",
    ),
    "zh": ("我一直在想{keyword}那件事。", "说到底还是{keyword}这块最让我难受。", "还有{keyword}的事，也一直堵在心里。", "反正{keyword}这事就是过不去。"),
}
GENERIC_KEYWORD = {"en": "whole situation", "zh": "这件事"}

GOODBYES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "S": ("Thank you, really. I feel a lot lighter. I think I'll go now. Bye.", "This helped more than you know. Thanks. Goodbye for now."),
        "F": ("I'm done talking. Bye.", "Forget it. I'm leaving. Goodbye."),
    },
    "zh": {
        "S": ("真的谢谢你，我心里轻松多了。我先走了，再见。", "跟你聊完好多了，谢谢。拜拜。"),
        "F": ("算了，不聊了，再见。", "我不想说了，我走了。"),
    },
}

OPENERS: dict[str, tuple[str, ...]] = {
    "en": ("Hey. Can I talk to you about something? It's about the {keyword}.", "I've had a rough few days. The {keyword} thing, mostly."),
    "zh": ("在吗？想跟你说说{keyword}的事。", "最近有点烦，主要是{keyword}这件事。"),
}
