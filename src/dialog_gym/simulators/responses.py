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


# ---------------------------------------------------------------------------------------
# The listening planner's lines (planner.py). Everything above is also the reciting
# planner's (the v0 words) and stays as it is; the listening planner adds the lines below.
# No line asks a question where a passive character would say it (passive users ask none),
# none names a hidden need, and none but the goodbyes reads as leave-taking.

# Reactions of REACTIONS the listening planner leaves out: displeased lines that a judge
# counting the user's pleased words reads as pleased ("thanks for nothing", "exactly the
# kind of thing that makes it worse", "没懂我" holding "懂我").
READ_AS_PLEASED: frozenset[str] = frozenset(
    {"Wow. Thanks for nothing.", "That's exactly the kind of thing that makes it worse.", "呵，真是谢谢你了。", "你根本没懂我的意思。"}
)

# More reactions, by fit and character type, after the three of REACTIONS.
MORE_REACTIONS: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {
    "en": {
        "met": {
            "negative": ("Alright. You actually heard that.", "Okay, that's fair.", "Hm. Not bad.", "Yeah, okay. That lands."),
            "passive": ("Yeah. That's true.", "Mm... yeah, it is like that.", "I think so, yeah.", "That's nice to hear."),
            "avoidant": ("Huh. Okay, yeah.", "That's... actually kind of true.", "I hadn't thought of it like that.", "Maybe, yeah."),
        },
        "ok": {
            "negative": ("I guess.", "Sure, if you say so.", "Fine.", "Mm. Could be."),
            "passive": ("Okay.", "Mm.", "Yeah...", "I don't know, maybe."),
            "avoidant": ("Sure, sure.", "Eh. It's fine.", "Mm, okay.", "Yeah, I guess."),
        },
        "missed": {
            "negative": ("That's not it.", "You're missing the point.", "No. That's not what this is.", "Did you even read what I wrote?"),
            "passive": ("Okay...", "Oh.", "Mm...", "I guess."),
            "avoidant": ("It's fine, whatever.", "Doesn't matter.", "Eh, forget I said anything.", "Yeah, well. Anyway."),
        },
        "hurt": {
            "negative": ("Seriously?", "Unbelievable.", "Right. Good talk.", "Wow, okay."),
            "passive": ("Oh... okay.", "I see.", "Sorry.", "Right..."),
            "avoidant": ("Fine. Forget it.", "Okay, never mind then.", "Whatever. Doesn't matter.", "Cool. Moving on."),
        },
    },
    "zh": {
        "met": {
            "negative": ("嗯，这话还算中听。", "行，这个说得在理。", "这倒是真的。", "你这么说我就明白了。"),
            "passive": ("嗯，是这样的。", "嗯……是有点。", "对。", "听你这么说好一点了。"),
            "avoidant": ("也是……", "这么说好像也对。", "嗯，我之前没这么想过。", "可能吧，是这么回事。"),
        },
        "ok": {
            "negative": ("嗯。", "也许吧。", "就算是吧。", "行。"),
            "passive": ("哦。", "嗯嗯。", "是吧……", "好。"),
            "avoidant": ("还行吧。", "嗯，都行。", "随便吧。", "就那样。"),
        },
        "missed": {
            "negative": ("不是这个意思。", "你没抓到重点。", "我说的不是这个。", "你到底看没看我说的？"),
            "passive": ("嗯……", "哦，好。", "可能吧……", "我不知道。"),
            "avoidant": ("没事。", "不重要。", "哎，就当我没说。", "算了算了。"),
        },
        "hurt": {
            "negative": ("你认真的？", "行，我算是看明白了。", "真行。", "你这话说的。"),
            "passive": ("哦……", "嗯，我知道了。", "对不起。", "好吧……"),
            "avoidant": ("行，不说了。", "无所谓。", "好，跳过。", "那就这样吧。"),
        },
    },
}

# More indirect hints per hidden need, after the two of HINTS.
MORE_HINTS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "dialectical_analysis": ("Part of me thinks they had a point, and part of me doesn't.", "I can't tell if I'm being fair about this.",
                                 "Maybe I'm only seeing my half of it."),
        "practical_advice": ("I need a plan, not a pep talk.", "I've got to do something by the end of the week.",
                             "Every day I wait, it gets harder to fix."),
        "motive_analysis": ("There has to be a reason they did it like that.", "I keep replaying it, trying to see it from inside their head.",
                            "It's not like them. Or maybe it is, I don't know."),
        "guided_reflection": ("Maybe there's something I keep doing that I can't see.", "I'd like to understand my own part in it, I think.",
                              "I don't want to end up here again."),
        "specific_praise": ("It took a lot to pull that off, and it just vanished.", "Nobody said a word about the part I got right.",
                            "I still go over what I actually managed that day."),
        "attentive_listening": ("I don't need fixing, I just need to say it.", "It helps just saying it out loud.",
                                "Nobody lets me finish a sentence about it."),
        "deep_empathy": ("It's more than just being upset. It's under everything.", "I don't think anyone gets how deep it goes.",
                         "It sits in my chest all day."),
        "not_at_fault": ("I keep going over it and I don't see what else I could have done.", "They're making it sound like it was on me.",
                         "I followed every step I was supposed to."),
    },
    "zh": {
        "dialectical_analysis": ("一半的我觉得他们也有道理，一半不这么觉得。", "我也说不清自己是不是太偏了。", "可能我只看到了我这一半。"),
        "practical_advice": ("我需要的是个能落地的法子，不是打气。", "这周之内我必须得做点什么。", "再拖下去只会更难收拾。"),
        "motive_analysis": ("他们那么做总得有个理由吧。", "我一直在琢磨他们当时心里到底在想什么。", "这不像他们会干的事，又好像就是。"),
        "guided_reflection": ("可能我自己身上有什么一直没看清的东西。", "我想弄明白我自己在这件事里是什么角色。", "我不想再走到这一步了。"),
        "specific_praise": ("那件事我花了多大力气，结果就这么没了声。", "我做对的那部分，一个字都没人提。", "我老想着那天我到底扛下了多少。"),
        "attentive_listening": ("我不用谁来解决，我就想说出来。", "说出来就好受一点。", "每次我一开口就被打断。"),
        "deep_empathy": ("这不只是不开心，是压在最底下的那种。", "我觉得没人知道这事在我心里有多深。", "那种堵着的感觉一整天都在。"),
        "not_at_fault": ("我来回想了很多遍，真不知道我还能怎么做。", "他们说得好像全是我的事一样。", "该走的步骤我一步都没落下。"),
    },
}

# When the story has no more disclosures ({the_keyword}: a detail, with "the" where English
# needs it; {keyword} in Chinese).
LISTENING_CONTINUATIONS: dict[str, tuple[str, ...]] = {
    "en": (
        "It's the {keyword} part that keeps coming back to me.",
        "And then there's the whole {keyword} thing.",
        "I don't know. It's still all tangled up with {the_keyword}.",
        "{The_keyword} is still sitting there.",
        "Every time I think I'm past {the_keyword}, it comes back.",
        "I haven't even told most people about {the_keyword}.",
        "It always comes back to {the_keyword}, somehow.",
    ),
    "zh": CONTINUATIONS["zh"] + ("{keyword}那块，到现在还压着。", "每次以为{keyword}的事过去了，它又冒出来。", "{keyword}的事我都没跟几个人说过。", "绕来绕去还是{keyword}。"),
}

# When the persona has no story details at all (an imported profile with a scene only).
GENERIC_CONTINUATIONS: dict[str, tuple[str, ...]] = {
    "en": ("I don't know. It's all still there.", "It just keeps going round in my head.", "I can't stop thinking about it.",
           "It's been sitting with me all week.", "Some days it's all I think about."),
    "zh": ("我也说不清，反正就是过不去。", "这事一直在我脑子里转。", "我就是老想着这个。", "这几天一直压在心里。", "有时候一整天都在想这个。"),
}

# Said before the answer to a question, by tone (warm: the reply landed, or the mood is
# high; plain; grudging: the reply missed) and character type. "" answers straight away.
ANSWER_LEADS: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {
    "en": {
        "warm": {
            "negative": ("", "Okay, since you're actually asking.", "Fine. Here's the thing.", "Right, so."),
            "passive": ("", "Um, well...", "Mm.", "I guess..."),
            "avoidant": ("", "It's kind of a long story, but okay.", "I don't usually talk about this, but okay.", "Well... okay."),
        },
        "plain": {
            "negative": ("", "Well.", "Look.", "Honestly?"),
            "passive": ("", "Mm.", "Um.", "I guess..."),
            "avoidant": ("", "I mean...", "It's not a big thing, really.", "Eh."),
        },
        "grudging": {
            "negative": ("", "If you must know:", "Ugh. Fine.", "Since you asked."),
            "passive": ("", "I don't know...", "Mm... I guess."),
            "avoidant": ("", "It's not a big deal, honestly.", "Doesn't matter much.", "I guess..."),
        },
    },
    "zh": {
        "warm": {
            "negative": ("", "行，既然你真想知道。", "说起来，", "是这样的，"),
            "passive": ("", "嗯……", "其实……", "就是……"),
            "avoidant": ("", "说来话长，", "我一般不跟人说这个，", "嗯……好吧，"),
        },
        "plain": {
            "negative": ("", "怎么说呢，", "说白了，", "反正，"),
            "passive": ("", "嗯，", "就是……", "嗯……"),
            "avoidant": ("", "也没什么，", "其实也还好，", "就是，"),
        },
        "grudging": {
            "negative": ("", "你非要问的话，", "唉，行吧，", "既然你问了，"),
            "passive": ("", "我也不知道……", "嗯……"),
            "avoidant": ("", "也不是什么大事，", "无所谓啦，", "就那样吧，"),
        },
    },
}

# Not answering a question (avoidant or passive characters when a reply missed).
DEFLECTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "negative": ("I don't want to go into that right now.", "That's not the point.", "Does that even matter?"),
        "passive": ("I don't know.", "I'm not sure, really.", "I don't really know how to say it.", "I haven't thought about it."),
        "avoidant": ("I don't really want to get into that part.", "Eh, it doesn't matter.", "I'd rather not go there right now.",
                     "That part's not a big deal. Honestly."),
    },
    "zh": {
        "negative": ("这个我现在不想说。", "这不是重点。", "说这个有意义吗？"),
        "passive": ("我也不知道。", "说不上来……", "我没想过。", "不知道怎么说。"),
        "avoidant": ("这个就不说了吧。", "没什么好说的，真的。", "这个先不提了。", "这个不重要，真的。"),
    },
}

# A question after a reply that hurt: no answer.
REFUSALS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "negative": ("Why would I tell you anything after that?", "No. You don't get to ask me that now.", "I'm not explaining myself to you."),
        "passive": ("I'd rather not say.", "It doesn't matter now.", "I don't want to talk about that."),
        "avoidant": ("I'm not getting into it.", "Nope. Not doing this.", "Can we just not."),
    },
    "zh": {
        "negative": ("你都这么说了，我还跟你说什么？", "不想说。", "我没必要跟你解释。"),
        "passive": ("我不想说了。", "说了也没用。", "不说这个了吧。"),
        "avoidant": ("这个我不想聊。", "跳过吧。", "别问了。"),
    },
}

# A question about a topic the user has already said everything about.
EXHAUSTED: dict[str, tuple[str, ...]] = {
    "en": ("I already told you about that.", "That's all there is, really.", "There's not much more to it than what I said.",
           "I've said most of it already."),
    "zh": ("这个我刚才说过了。", "就这些了，真的。", "也没别的了，就是我说的那样。", "该说的我都说了。"),
}

# Advice the user already tried: the lead before what happened, or a reminder.
TRIED_THAT: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "negative": ("Yeah, tried that.", "Been there, done that.", "Already did.", "Tried it."),
        "passive": ("I kind of tried that already.", "I did try that...", "I tried something like that."),
        "avoidant": ("Yeah, I tried that. Didn't really go anywhere.", "Did that already. It's fine.", "Been through that already."),
    },
    "zh": {
        "negative": ("试过了。", "早试过了。", "这个我干过了。", "试了，没戏。"),
        "passive": ("这个……我试过了。", "我试过的。", "差不多的我试过。"),
        "avoidant": ("试过了，也就那样。", "这个做过了，没事。", "早弄过了。"),
    },
}
TOLD_YOU_TRIED: dict[str, tuple[str, ...]] = {
    "en": ("I told you, I already did that.", "Like I said, I did that already.", "I already said I tried that."),
    "zh": ("我刚说了，试过了。", "前面说过了，这个我做过。", "说了呀，这个试过了。"),
}
# "Have you tried X?" when X is not among what the user tried.
NOT_TRIED: dict[str, tuple[str, ...]] = {
    "en": ("Not that exactly.", "Not that, no.", "Not that one.", "No, not that."),
    "zh": ("那倒没有。", "这个没试过。", "那个还没。", "没有，不过……"),
}
# Advice that does not fit: said before what the user already tried, or alone.
PUSHBACK_LEADS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "negative": ("Easier said than done.", "You think I haven't thought of that?", "Yeah, everyone says that."),
        "passive": ("Maybe...", "I don't know if that would work.", "I'm not sure."),
        "avoidant": ("Yeah, maybe.", "I guess. It's complicated.", "It's not that simple."),
    },
    "zh": {
        "negative": ("说得轻巧。", "你以为我没想过？", "这话谁都会说。"),
        "passive": ("可能吧……", "我不知道行不行。", "不太好说。"),
        "avoidant": ("嗯，再说吧。", "没那么简单。", "哎，挺复杂的。"),
    },
}
PUSHBACKS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "negative": ("That's not going to fix anything.", "That's not where I'm at.", "That doesn't fit my situation at all."),
        "passive": ("I don't think I can do that.", "I don't know. Maybe not.", "That seems like a lot."),
        "avoidant": ("I'll figure it out. It's fine.", "Maybe later. It's not urgent.", "I'd rather not make it a whole thing."),
    },
    "zh": {
        "negative": ("这解决不了什么。", "我现在不是这个状态。", "这跟我的情况对不上。"),
        "passive": ("我可能做不到。", "我不知道，可能不行吧。", "这个有点难。"),
        "avoidant": ("我自己会想办法的，没事。", "以后再说吧，不着急。", "不想搞得那么大。"),
    },
}
# Advice that fits: taking it up, then a follow-up (questions for those who ask them).
TAKE_UPS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "negative": ("Okay. That I could actually do.", "Alright, that's a real idea.", "Huh. Nobody's said that one yet.", "Okay, that's doable."),
        "passive": ("I could maybe try that.", "Okay... I could do that, I think.", "Maybe I could do that."),
        "avoidant": ("Hm. That might actually work.", "Okay, maybe. That's not crazy.", "I guess I could try that."),
    },
    "zh": {
        "negative": ("行，这个倒是能试试。", "嗯，这还算句实在话。", "这个之前倒没人说过。", "这个能办。"),
        "passive": ("那我……试试看吧。", "嗯，好像可以。", "也许我能做到。"),
        "avoidant": ("嗯……这个好像可以。", "也许吧，这个不算离谱。", "那我试试也行。"),
    },
}
FOLLOW_UPS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "negative": ("And if they just say no?", "Where do I even start with that?", "What do I say first?", "How long does that even take?"),
        "passive": ("I'd have to work up to it.", "I don't really know how to start, though.", "I'd need to think about when."),
        "avoidant": ("I'd have to figure out how to bring it up.", "Not sure when I'd even do that, though.", "And if it goes badly?"),
    },
    "zh": {
        "negative": ("那他们要是不理我呢？", "那我第一步先干啥？", "这得多久啊？", "那我开口先说什么？"),
        "passive": ("就是不太知道怎么开始。", "我得慢慢来。", "我得想想什么时候去。"),
        "avoidant": ("就是不知道怎么开口。", "也不知道什么时候去弄。", "万一搞砸了呢？"),
    },
}

# A guessed feeling the persona's words bear out ({word}: the guess), or one they correct
# ({guess}: the agent's word; {true}: the feeling the persona names most).
CONFIRMS: dict[str, tuple[str, ...]] = {
    "en": ("Yeah. {Word}, that's about right.", "{Word}... yeah.", "Yeah, {word}. That's part of it.", "{Word}. Yeah, pretty much."),
    "zh": ("对，就是{word}。", "嗯，{word}，是有一点。", "是挺{word}的。", "{word}……嗯，是。"),
}
CORRECTIONS: dict[str, tuple[str, ...]] = {
    "en": ("Not {guess}, exactly. More {true}.", "I wouldn't say {guess}. It's more that I'm {true}.", "{Guess}? Not really. {True}, more like."),
    "zh": ("也不是{guess}，更多是{true}。", "说{guess}倒不至于，就是{true}。", "{guess}谈不上，主要是{true}。"),
}
CORRECTIONS_UNKNOWN: dict[str, tuple[str, ...]] = {
    "en": ("Not {guess}, exactly.", "I wouldn't call it {guess}.", "{Guess}? No, not really."),
    "zh": ("也不是{guess}。", "{guess}倒谈不上。", "说{guess}不太对。"),
}
FEELING_WORDS: dict[str, dict[str, str]] = {
    "en": {"anger": "angry", "sadness": "sad", "fear": "scared", "shame": "ashamed", "hurt": "hurt", "tired": "worn out",
           "lonely": "alone in it", "frustration": "stuck", "numb": "numb"},
    "zh": {"anger": "生气", "sadness": "难过", "fear": "害怕", "shame": "丢人", "hurt": "委屈", "tired": "累", "lonely": "孤单",
           "frustration": "憋屈", "numb": "麻木"},
}

# An off-topic reply.
CONFUSED: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "negative": ("What? I'm trying to tell you about the whole {keyword} thing.", "Are you even paying attention? I was talking about {the_keyword}.",
                     "Okay, that's random."),
        "passive": ("Oh... okay.", "Um. I was talking about {the_keyword}, but okay.", "Oh. I thought we were talking about {the_keyword}."),
        "avoidant": ("Uh, okay. Sure.", "Ha. Yeah, anyway.", "Sure, let's talk about anything but {the_keyword}."),
    },
    "zh": {
        "negative": ("啊？我在说{keyword}的事呢。", "……你有在听吗，我说的是{keyword}。", "这跟我说的有什么关系？"),
        "passive": ("哦……好吧。", "嗯……我刚才是在说{keyword}。", "哦，我以为我们在说{keyword}。"),
        "avoidant": ("呃，好吧。", "哈，行吧，反正也没什么。", "也行，不说{keyword}也好。"),
    },
}
# More than two questions at once.
OVERWHELMED: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "negative": ("One thing at a time, okay?", "That's a lot of questions.", "Slow down."),
        "passive": ("That's... a lot of questions.", "Um. I don't know where to start.", "That's a lot."),
        "avoidant": ("Whoa, that's a lot.", "Slow down a little.", "That's a lot of questions at once."),
    },
    "zh": {
        "negative": ("一下问这么多……", "你一个一个问嘛。", "慢点问。"),
        "passive": ("问这么多，我不知道从哪说起。", "嗯……太多了。", "我不知道先说哪个。"),
        "avoidant": ("哎，问得也太多了。", "慢点慢点。", "一下子问这么多啊。"),
    },
}
# Picking up a detail of the story the agent named ({detail}).
PICKUP_LEADS: dict[str, tuple[str, ...]] = {
    "en": ("Yeah, {the_detail}.", "{The_detail}. Don't get me started.", "Funny you mention {the_detail}.", "{The_detail}, right."),
    "zh": ("对，{detail}。", "说到{detail}，", "{detail}啊……", "嗯，{detail}，"),
}
# Before the user's view, when asked for it.
OPINION_LEADS: dict[str, tuple[str, ...]] = {
    "en": ("I don't know what to think, honestly.", "I keep going around in circles on that.", "Good question. I don't know.", "I wish I knew."),
    "zh": ("说实话我也不知道该怎么想。", "这个我想了很多遍了。", "我也说不好。", "我要是知道就好了。"),
}

# Words that would name a hidden need (besides its name and descriptions): no line the
# offline user says contains them. A trailing * marks an English stem.
NEED_TERMS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "dialectical_analysis": ("dialectic*", "analys*", "analyz*", "several sides"),
        "practical_advice": ("practical*", "advice", "advise*", "workable", "predicament"),
        "motive_analysis": ("motive*", "motivation*", "analys*", "analyz*"),
        "guided_reflection": ("reflect*", "self-reflection", "guided", "guidance"),
        "specific_praise": ("praise*", "compliment*"),
        "attentive_listening": ("attentive*", "listen", "listened", "listening", "listener", "vent", "venting"),
        "deep_empathy": ("empath*", "simple comfort"),
        "not_at_fault": ("fault*", "blame*", "blaming"),
    },
    "zh": {
        "dialectical_analysis": ("辩证", "分析"),
        "practical_advice": ("建议", "困境"),
        "motive_analysis": ("动机", "分析", "原因"),
        "guided_reflection": ("反思", "引导", "成长"),
        "specific_praise": ("夸奖", "表扬", "称赞", "夸夸", "夸我"),
        "attentive_listening": ("倾听", "倾诉", "宣泄", "听我说"),
        "deep_empathy": ("共情", "感同身受"),
        "not_at_fault": ("没有错", "不是我的错", "我没错", "错不在我", "不怪我"),
    },
}
