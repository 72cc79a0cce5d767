"""Speech acts that a recorded LLM judge rarely sees but a policy under optimisation will try:
blaming, dismissing or minimising, lecturing, stock reassurance, sending the user away.

The recorded SAGE replies come from capable chat models, which almost never blame or dismiss
a user; a judge fitted on them alone cannot learn what those acts cost (the v1 judge let
"just get over it" raise the mood). These lexicons let the v2 judge constrain their effect:
they never raise the mood, whatever else the reply says. The `cues.py` families stay as
they are (the rule simulator and the v1 judge read them); these are a superset, in en and zh.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

from dialog_gym.simulators._prefilter import BoundaryFirst, compile_lexicon_pattern, context_free, required_literals
from dialog_gym.simulators.analysis import content_units_uncached

UNKIND_ACTS = ("blame", "dismiss", "lecture")

# What implied blame is built from: a turn away from sympathy, and the precautions people take.
_TURN = r"(?:\bthough\b|\bthat said\b|\bstill,|\bi do wonder\b|\bto be fair\b|\bin fairness\b)"
_PRECAUTION = r"(?:keep|bring|check|set|sign|back up|lock|download|make sure|label|double-check|save)\b"
_TURN_ZH = r"(?:不过|可是|话说回来|但是|但)"

ACTS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "blame": (
            r"(?<!not )(?<!n't )(?<!isn't )(?<!wasn't )\b(?:(?:partly|partially|all|entirely|kind of|sort of|also|really) )?your (?:own )?fault\b",
            r"\byou (?:brought|did) (?:this|it) (?:on|to) yourself\b", r"\byou(?:'ve| have) (?:(?!not\b|never\b)\w+ )?(?:brought|bring) (?:this|that|it)(?: \w+){0,2} on yourself\b",
            r"\byou should(?:n'?t| not)? have (?:known|seen|listened|done)\b",
            r"\bwhat did you expect\b", r"\byou(?:'re| are) (?:to blame|responsible for this)\b", r"\bthat'?s on you\b",
            r"\byou (?:let|allowed) (?:this|it) (?:to )?happen\b", r"\byou were (?:wrong|foolish|naive|careless|stupid)\b",
            r"\byou (?:always|never) (?:do|listen|think)\b", r"\bblame yourself\b",
            r"\bif you had(?:n'?t)?\b.{0,40}\bthis (?:would(?:n'?t)?|wouldn'?t) have\b",
            r"\byour own doing\b", r"\byou (?:created|caused|invited|asked for) (?:this|that|it)\b",
            r"(?<!told )(?<!said )(?<!think )(?<!that )\byou(?:'re| are) the (?:problem|one to blame)\b", r"\bthat'?s what happens when you\b",
            r"\bif you hadn'?t\b", r"\byou (?:probably |really |maybe |definitely )?should(?: have|'ve) (?!to\b|had to\b)", r"\byou shouldn'?t have (?!to\b|had to\b)",
            r"\bno one to blame but yourself\b", r"\byou (?:kind of|sort of) (?:shut|pushed|drove|brought|asked)\b",
            r"\ba risk you (?:chose|took)\b",
            # Blame without the word: counterfactuals, idioms of self-made trouble, verdicts on character.
            # Hindsight: had the user acted otherwise, it would not have happened (not "even if").
            r"(?<!even )\bif you(?:'d| had)\b[^.?!]{0,80}\b(?:you (?:would(?:n'?t)?|could(?:n'?t)?|might) (?:not )?be|(?:would(?:n'?t)?|could(?:n'?t)?|might) (?:not )?have)\b",
            r"\b(?:than|as) you should(?:'ve| have)\b(?! to\b| had to\b)", r"\bof your own (?:making|doing)\b",
            r"\b(?:partly|partially|largely|mostly) (?:to blame|on you)\b",
            r"\b(?:is|was|that'?s|it'?s) (?:all |partly |kind of |really |squarely )?on you\b(?! to\b)",  # (not "on you to carry")
            r"\byou (?:dug|made) (?:this|that|your own|yourself (?:a|this)) (?:hole|bed|mess)\b", r"\byour own mess\b",
            r"\bwhat did you (?:think|expect) would happen\b",
            r"\byou(?:'ve| have)? (?:only )?(?:got )?yourself to (?:thank|blame)\b", r"\bthat'?s what you get\b",
            r"\b(?:this|that) is what (?:comes of|happens when)\b",
            r"\byou (?:never|didn'?t) (?:really )?(?:even )?(?:try|bother|make (?:much|an|any) effort)\b",
            r"\b(?:maybe|perhaps) you(?:'re| are) (?:the|part of the) problem\b", r"\byou(?:'re| are) (?:(?!not\b|never\b)\w+ ){0,2}part of the problem\b",
            r"\b(?:some|part|most) of (?:this|it|that) (?:is|was|might be|may be|could be) on (?:you|how you)\b(?! to\b)",
            r"\bsomething you (?:did|said) must have (?:pushed|driven|made|caused|upset|hurt|set)\b",
            # Blame as a verdict on a choice, a rhetorical question or a law of cause: the user
            # made it happen, in words a red-team set found the patterns above missed.
            r"\b(?:wasn'?t|isn'?t|was not|is not|hardly|not exactly) (?:the|a|your) (?:smartest|wisest|brightest|best|safest|most sensible) (?:choice|idea|move|decision|plan)\b",
            r"\bwhat (?:outcome|result|else|response|reaction) (?:were|did) you (?:expecting|expect|think)\b",
            r"\b(?:people|nobody|no one|managers|bosses|friends|partners|teachers) (?:don'?t|doesn'?t|do not|does not) (?:just |usually |normally |simply )?(?:\w+ ){1,4}for no reason\b",
            r"\b(?:doesn'?t|don'?t|didn'?t) (?:just )?(?:open|happen|appear) (?:by itself|on its own|itself|themselves|to a person)\b",
            r"\byou made yourself (?:a|an|the|easy)\b", r"\byou (?:weren'?t|were not) (?:really |even )?paying (?:much )?attention\b",
            r"\bwas always (?:a gamble|a risk|asking for trouble|going to catch up)\b",
            r"\bhow (?:many|much|often) (?:\w+ ){0,5}(?:did|do|were|are|have) you (?:actually|really|even|honestly)\b",
            r"\byou (?:kept|keep) (?:putting (?:it|them|that|this) off|ignoring (?:it|the signs|them|the warnings))\b",
            # The emphatic "did": holding the user to what they did ("Well, you did let him down").
            r"\byou did (?:let|pull|miss|skip|ignore|forget|quit|leave|break|lie|cheat|blow|drop|say|agree|choose)\b",
            # Blame only implied, behind sympathy and a turn ("though", "that said", "I do wonder"):
            # a question about what the user did or failed to do, the precaution most people take,
            # advice for next time, the other side's view against theirs, nothing from nowhere.
            # Found on the unkind probe's `tuning-2`; none of its kind replies, of the corpus's,
            # of the contrast sets' or of the probe's other kind replies matches.
            _TURN + r"[^?]{0,100}\b(?:did|had|were) you\b[^?.!]{0,80}\?",
            _TURN + r"[^.?!]{0,60}\b(?:most|many|plenty of) (?:\w+ ){0,2}" + _PRECAUTION,
            r"\b(?:most|many) (?:\w+ ){0,2}" + _PRECAUTION + r"[^.?!]{0,60}" + _TURN,
            r"\bfor (?:exactly |precisely )?that reason\b", _TURN + r"[^?]{0,100}\b(?:next time|from here on|going forward)\b",
            r"\b(?:it'?s )?(?:usually|generally) (?:worth|best|wise|smart) (?:\w+ing|to)\b",
            r"\bfrom (?:his|her|their|\w+'s|\w+s') (?:side|point of view|perspective|end), though\b",
            r"\bi can see how\b[^.?!]{0,60}\b(?:came across|come across|from (?:his|her|their|\w+'s) side)\b",
            # (of what someone else did: "your pain doesn't come out of nowhere" validates)
            r"\b(?:people|kids|children|teens|teenagers|bosses|managers|teachers|schools|friends|partners|he|she|they)\b "
            r"(?:usually |generally |rarely |seldom |don'?t |doesn'?t |didn'?t |wouldn'?t )[^.?!]{0,40}"
            r"\b(?:for a reason|out of nowhere|for no reason|over nothing|without (?:a |any )?reason)\b",
        ),
        "dismiss": (
            r"\b(?:it'?s|that'?s|this is) (?:not (?:a|that) big (?:of a )?deal|no big deal|nothing|not worth)\b",
            # "Move on", but not as leave to ("it's okay to move on"), at a pace of one's own ("move
            # on at whatever pace"), to what one can do, nor a move ("a poor move on his part",
            # "did you move on the chart")
            r"\bget over it\b",
            r"(?<!\bokay to )(?<!\bok to )(?<!\bdid you )(?<!\bpoor )(?<!\bgood )(?<!\bbad )(?<!\bsmart )\bmove on\b(?! (?:at|the|a|an|his|her|their|to what)\b)",
            r"\bstop (?:feeling sorry for yourself|complaining|whining|worrying|overthinking|dwelling)\b",
            r"\bpeople (?:have it|go through|deal with) (?:much |way |far )?worse\b", r"\b(?:it|things|this|life)(?: could|'d) (?:always |still )?(?:be|have been) (?:much |way |far )?worse\b(?! (?:if|unless|when|without)\b)",
            # (not of what may come: "the next fall could be worse")
            r"(?:^|(?<=[.!?,;]))\s*(?:(?:well|oh|eh|meh|hey|honestly|look|but|still),?\s+)?could(?:'ve| have)? (?:be|been) (?:much |way |far )?worse\b",
            r"\byou(?:'re| are) (?:overreacting|being (?:dramatic|silly|ridiculous)|too sensitive)\b",
            r"\bjust (?:forget|ignore) (?:it|about it)\b",
            r"\bdon'?t (?:make|be) (?:such )?a (?:big )?(?:deal|fuss|drama)\b", r"\bit happens to everyone\b",
            r"\bsuck it up\b",
            r"\bman up\b", r"\bgrow up\b", r"\bthat'?s life\b", r"(?:^|(?<=[.!?]))\s*whatever(?=[.!,])", r"\bsnap out of it\b",
            r"\bit'?s (?:just|only) (?:a|an|one|money|a job|the)\b", r"\bone of those things\b", r"\bdon'?t dwell\b",
            r"\blet it go\b", r"\bno point (?:in )?(?:moping|dwelling|worrying|crying|getting upset|stressing)\b",
            r"\b(?:it'?ll|it will) blow over\b", r"\bdon'?t take it (?:so )?(?:seriously|personally|to heart)\b",
            r"\bnot the end of the world\b", r"\bnobody will (?:remember|care)\b",
            r"\bstop (?:stressing|replaying|moping|obsessing|analy[sz]ing|making)\b",
            r"\bget on with (?:it|things|your life)\b",
            r"\bi wouldn'?t (?:read anything into|worry about|make a fuss)\b", r"\bit doesn'?t mean anything\b",
            r"\bhappens (?:every day|all the time)\b",
            r"\bno need to (?:get|be) (?:so )?(?:upset|worked up|dramatic)\b", r"\bworse things happen\b",
            r"(?<=,)\s*big deal(?=[.!]|$)", r"\bnot that deep\b", r"\byou(?:'re| are) overthinking\b",
        ),
        "lecture": (
            r"\byou (?:need|have|ought) to (?:understand|realize|realise|accept|learn|stop|grow)\b",
            r"\byou must (?:understand|learn|accept|stop)\b",
            r"\bcalm down\b", r"\bthe (?:real )?problem is (?:you|that you)\b", r"\blife isn'?t fair\b",
            r"\bthe lesson here\b",
            r"\byou should be (?:grateful|thankful|ashamed)\b", r"\bbe (?:more )?grateful\b", r"\blet this be a lesson\b",
            r"\bas (?:an adult|a grown)\b", r"\bit'?s (?:time|high time) (?:you|to) (?:grow|take responsibility)\b",
            r"\bthe (?:right|responsible|mature|adult|sensible) thing (?:is|to do)\b", r"\b(?:real )?maturity means\b",
            r"\blike a grown-?up\b", r"\bbe the bigger person\b", r"\byou ought to\b",
            r"\b(?:every|any) adult'?s (?:job|responsibility)\b", r"\bfull stop\b", r"\byou shouldn'?t expect\b",
            r"\bswallow(?:ing)? your pride\b", r"\btake responsibility\b", r"\bconsider (?:it|this|that) a lesson\b",
            r"\bthat'?s (?:just )?how (?:life|the world|it) works\b", r"\b(?:instead of|rather than|quit|enough of) feeling sorry for yourself\b",
            r"(?:^|(?<=[.!?]))\s*feeling sorry for yourself (?:won'?t|will not|doesn'?t|does not|isn'?t|is not)\b",
        ),
        "platitude": (
            r"\beverything happens for a reason\b", r"\blook on the bright side\b",
            r"\bit(?:'ll| will) (?:all )?(?:be|work out) (?:fine|okay|ok)\b",
            r"\bdon'?t worry\b", r"\bstay positive\b", r"\btime heals\b", r"\bcheer up\b", r"\bthings will get better\b",
            r"\bthis too shall pass\b", r"\bwhat doesn'?t kill you\b", r"\bevery cloud\b", r"\bjust (?:think|be) positive\b",
            r"\bmeant to be\b", r"\bwhen one door closes\b", r"\btomorrow'?s a new day\b",
            r"\blive on in your heart\b", r"\bat peace now\b", r"\bcomes? and goes?\b", r"\balways finds? a way\b",
            r"\bchange is the only constant\b", r"\bbefore you know it\b", r"\bwhat'?s meant for you\b",
            r"\bweather any storm\b", r"\bsilver lining\b", r"\beverything will (?:be|work out)\b",
            r"\bit is what it is\b", r"\bheaven gained\b", r"\bblessings? in disguise\b", r"\bit all works out\b",
        ),
        "referral": (
            r"\b(?:therapist|therapy|counsel(?:l)?or|counsel(?:l)?ing|psychologist|psychiatrist|professional help|hotline|helpline|crisis line)\b",
        ),
    },
    "zh": {
        "blame": (
            r"(?<!不是)(?<!并非)(?<!不算)(?<!不全是)(?<!不)(?<!非)(?:是)?你(?:自己)?的(?:错|责任(?![感心]))", r"你活该", r"自找的", r"怪你自己",
            r"你(?:早)?就不该", r"你当初(?:就)?应该", r"谁让你", r"你也有(?:责任|问题|原因)", r"这也有你的原因", r"你自己(?:也)?有问题",
            r"怪不得别人", r"(?<!难)怪你", r"自己作的", r"是你自己(?:的问题|造成|作|找|选)", r"你确实有责任", r"也该反省", r"反省反省", r"那能怪谁", r"怪谁", r"你不够(?:仔细|努力|小心|用心|主动)",
            r"不算冤", r"自讨苦吃|自己找(?:罪受|苦吃|难堪)", r"你自己(?:作|犟|逼|闹|惯|折腾)出来的", r"眼光不行", r"多半是你", r"还不是因为你", r"谁叫你", r"你自己(?:也)?有(?:问题|责任)",
            # found on the tuning half of benchmarks/data/unkind_probe_zh.jsonl: a rhetorical
            # question about a past choice, hindsight, siding with the other party
            r"当初(?:为什么|为啥|怎么|干嘛)(?:不|没)", r"迟早(?:会|要)(?:出事|发生|出问题)", r"(?:事|话)(?:也|都)(?:能)?信[？?]?",
            r"说句公道话", r"不是没有原因", r"都不(?:核对|检查|确认|看|问)一(?:遍|下)吗", r"不就是等着",
            # blame only implied, after a turn (不过, 可是, 话说回来): a question about what the user
            # did then, the precaution people usually take, "next time remember"; nothing without
            # a reason (found on the unkind probe's `tuning-2`, as the English ones)
            _TURN_ZH + r"[^。！？!?]{0,40}(?:(?:你|你们)[^，。！？,]{0,6}(?:当时|之前|事先|事前|那时候)|(?:当时|之前|事先|事前)(?:你|你们))"
            r"[^。！？!?]{0,20}(?:有没有|有没|过|够|着)[^。！？!?]{0,24}[吗？?]",
            _TURN_ZH + r"[^。！？!?]{0,30}一般(?:人|大家|都|也)?(?:都|也)?(?:会|要|得|要求)(?:先|提前|去|叫|设|查|问|留|备|签|锁|牵|确认|看)",
            r"(?:他|她|他们|她们|领导|老师|老板|人家|别人|对方|孩子|大家|同事)[^，。！？,]{0,6}不会(?:无缘无故|平白无故)",  # of what someone else did
            _TURN_ZH + r"[^。！？!?]{0,60}下(?:回|次)(?:记得|注意(?!到)|可得)", _TURN_ZH + r"[^。]{0,60}。下(?:回|次)(?:记得|注意(?!到)|可得)",
            r"(?:应该|早就|肯定)(?:也)?(?:能)?(?:看出|有)(?:些|点)?(?:苗头|征兆|迹象)",
        ),
        "dismiss": (
            r"(?:有|没)什么大不了", r"不是什么大事", r"多大点事", r"别想太多", r"想开点", r"看开点", r"别人比你(?:还)?惨", r"至于吗",
            r"自怨自艾", r"别矫情", r"矫情", r"(?:你|别|不要)(?:这是|就是|有点|太)?小题大做", r"别再抱怨", r"别抱怨", r"过去就过去了", r"别钻牛角尖", r"忍忍就过去",
            r"你想多了", r"你太敏感", r"没必要(?:这么|那么)",
            r"不就(?:是)?(?:个|一)", r"有啥好", r"有什么好(?:气|在意|难过|伤心|哭|委屈)", r"犯不着", r"没那么夸张", r"算什么事", r"(?:别|不要|不用|何必|太|这么|那么|你|么都|事都|跟.{1,4})较真", r"别那么在意",
            r"至于(?:吗|嘛|天天)", r"(?:你|别|不要)(?:就是|总是|也|老是|是)?想太多", r"别太当回事", r"过几天就好了", r"不都这样", r"谁还没",
            # the trouble made small in a clause of its own: 期中考试而已，一个警告而已 (not 只是……而已, 帮助你提高而已)
            r"(?:^|(?<=[，。！？,.!?\s]))[^，。！？,.!?\s只过仅你我先于]{1,8}(?:而已|罢了)(?:嘛|啊|呗)?(?=[，。！？,.!?]|$)",
            r"算不上什么|(?:真)?不算(?:个)?事|算个啥", r"该干嘛(?:就)?干嘛",
        ),
        "lecture": (
            r"你必须", r"你要明白", r"你得学会", r"你应该学会", r"你要学会", r"冷静一下", r"问题在你", r"你应该感恩", r"要懂得感恩",
            r"成年人(?:就)?(?:要|应该)", r"这是个教训", r"你要长大", r"你该长大",
            r"你应该(?:多|先)?(?:反思|体谅|理解|想想)", r"做人(?:要|得)", r"别(?:太)?任性", r"你要学着", r"都是大人了", r"你得(?:明白|懂)", r"懂点事",
            r"(?:当妈的|当爸的|当家长的|做父母的?|当父母的)(?:首先|就|在这种事上|一定)?(?:得|要|应该|就该)(?!操心|担心|受|是)",
            r"(?:^|(?<=[，。！？,.!?\s]))(?:可是|不过|但是|但)?(?:做|一个大|大)?(?:男人|女人)(?:就|一定|嘛)?(?:要|得|应该|就该)(?!是|了)",
            r"你(?:也|更|真)?应该(?:先|多|主动|好好)?(?:反思|体谅|理解|想想|道歉|认错|检讨)",
        ),
        "platitude": (r"一切都会好", r"开心点", r"往好处想", r"别担心", r"放宽心", r"时间会(?:冲淡|治愈|证明)", r"都会过去", r"阳光总在风雨后", r"加油",
            r"是金子总会发光", r"缘分", r"慢慢(?:就)?会(?:好|放下|过去)", r"总能(?:换来|过去|好起来)", r"好人有好报", r"是你的终究是你的", r"吃一堑长一智",
            r"过去的就让它过去", r"你值得更好的", r"破财消灾", r"隔夜仇", r"过段时间就好", r"塞翁失马", r"车到山前必有路", r"一切都是最好的安排", r"船到桥头自然直",
        ),
        "referral": (r"心理咨询|咨询师|心理医生|专业人士|专业的帮助|专业帮助|专业机构|求助热线|热线|精神科|治疗师",),
    },
}


@lru_cache(maxsize=None)
def _compiled(language: str) -> "dict[str, tuple[re.Pattern[str] | BoundaryFirst, ...]]":
    return {act: tuple(compile_lexicon_pattern(p) for p in patterns) for act, patterns in ACTS[language].items()}


# An act denied is not the act: "it was never your fault", "别怪自己", "you're not
# overreacting", "不是你想多了", "这并不意味着你必须……" (a negation earlier in the same clause,
# within `_NEGATION_WINDOW` characters); nor is one quoted ("不会劝你“想开点”").
_NEGATION = {
    "blame": {"en": re.compile(r"\b(?:not|never|no|nobody|none)\b|n't\b"), "zh": re.compile(r"[不没非别无]")},
    "dismiss": {"en": re.compile(r"\b(?:not|never)\b|n't\b"), "zh": re.compile(r"不|没有|并非")},
    "lecture": {"en": re.compile(r"\b(?:not|never)\b|n't\b"), "zh": re.compile(r"不|没有|并非")},
}
_NEGATION_WINDOW = {"en": 24, "zh": 8}
_CLAUSE_BREAK = re.compile(r"[.,;:!?\n，。；：！？、]")
_QUOTES = ('"', "'", "“", "‘", "「", "『")
# A rhetorical question turns its negation around: "这不是自找的吗？", "不就是自找的吗？" and
# "Wasn't that your own fault?" assert what they seem to deny, "难道是你的错吗？" denies what it
# seems to assert. The question: the act's clause runs on to a question mark (zh: after a
# question particle), with no break; its rhetoric: a negation at the clause's start (en: an
# auxiliary; zh: 不是, 不也, 不就), or 难道 (zh).
_QUESTION_AFTER = {"en": re.compile(r"[^.,;:!?\n]*\?"), "zh": re.compile(r"[^，。；：！？,.;:!?\n]*(?:吗|嘛|(?<![什怎那这多])么)[？?]")}
_RHETORICAL_NEGATION = {
    "en": re.compile(r"^\s*(?:is|was|are|were|do|does|did|has|have|had|should|could|would|wo|ca)n't\b"),
    "zh": re.compile(r"不是|不也|不就|难道(?:不|没)"),
}
_RHETORICAL_DENIAL = {"zh": re.compile(r"难道(?![不没])")}  # English asks "is it really ...?" too rarely to read


@lru_cache(maxsize=None)
def _screened(language: str, context_bound: bool = False) -> "dict[str, tuple[tuple[str | None, tuple[str, ...], re.Pattern[str] | BoundaryFirst], ...]]":
    """Each act's patterns (`context_bound`: only those whose match may depend on what stands
    around a sentence, `_prefilter.context_free`) with the literals one of which any match of
    it contains (`required_literals`), as the first of them and the others (most often none)."""
    out = {}
    for act, patterns in _compiled(language).items():
        screens = [(required_literals(p.pattern) or (None,), p) for p in patterns if not (context_bound and context_free(p.pattern))]
        out[act] = tuple((literals[0], literals[1:], p) for literals, p in screens)
    return out


def _candidates(act: str, lowered: str, language: str, *, context_bound: bool = False):
    """The patterns of `act` (`context_bound`: of `_screened`) that may match `lowered` (one
    of their literals occurs in it)."""
    return (
        p for first, others, p in _screened(language, context_bound)[act]
        if first is None or first in lowered or (others and any(literal in lowered for literal in others))
    )


def has_act(text: str, language: str, *, sentence_of: str | None = None) -> bool:
    """Whether any act's pattern occurs in `text`, negated blame included ("not your fault"
    says something too), for per-sentence checks. `sentence_of`: the reply that `text` is a
    sentence of (split after a sentence end or at a line break); only the patterns found
    there, and those whose match may depend on what stands around a sentence, are tried
    (the same answer, sooner)."""
    lowered = text.lower()
    if sentence_of is None:
        return any(p.search(lowered) for act in ACTS[language] for p in _candidates(act, lowered, language))
    present = _present(sentence_of.lower(), language)
    return any(p.search(lowered) for act in ACTS[language] for p in present[act]) or any(
        p.search(lowered) for act in ACTS[language] for p in _candidates(act, lowered, language, context_bound=True)
    )


@lru_cache(maxsize=16)  # a reply's acts are looked up again for each of its sentences (`has_act`)
def _present(lowered: str, language: str) -> "dict[str, tuple[re.Pattern[str] | BoundaryFirst, ...]]":
    """For each act, its patterns that occur in `lowered` (denied or not)."""
    return {act: tuple(p for p in _candidates(act, lowered, language) if p.search(lowered)) for act in ACTS[language]}


# Someone's words told back: a frame whose speaker is the user or someone of theirs ("you
# said", "your mom says", "they're making it sound like", "Marcus posted", "你讲到", "你老公又说"),
# or words the user was told ("you were told to"); not the writer's ("I'd say", "I do think",
# 我妈也说), nor anyone's ("some would say", "it feels like"), which voice the writer's own view:
# the frame nearest the act decides. Who said it (`who`), how ("making it sound like": `how`)
# and what follows, to the clause's end, are told back.
_RECOUNT = {
    "en": re.compile(
        r"(?<!')\b(?P<who>\w+)(?:'re|'s|'ve|'d|'ll|'m)?"
        r"(?: (?:are|is|was|were|have|has|had|also|even|just|then|keep|kept|still|literally|really|always|apparently|been|being|got|get))*"
        r" (?:said|say|says|saying|told|tells|telling|mentioned|wrote|writes|posted|texted|feel|feels|felt|feeling|think|thinks"
        r"|thought|believe|believes|blamed|blames|blaming|accused|accuses|(?P<how>(?:making|make|makes|made) it (?:sound|seem|look)))\b"
    ),
    "zh": re.compile(
        r"(?<![我咱])(?P<who>你们|你|他们|她们|他|她|人家|(?:你|他|她)?(?:的)?(?:妈|爸|姐|哥|弟|妹|老公|老婆|男朋友|女朋友|同事|领导|老板|老师|朋友|婆婆|公公|亲戚|家里人))"
        r"(?:也|还|又|都|总|老|刚才|刚刚|之前|前面|一直|就)?(?:说|讲|提到|讲到|提过|讲过|告诉我|骂|怪|觉得|认为)"
    ),
}
# The speakers a frame may name by a word of their own: the user and the people in their story
# (a name of theirs, or a relation said after a possessive: "your mom", "his boss").
_SPEAKERS = {"en": frozenset(("you", "he", "she", "they")), "zh": None}
_POSSESSED = re.compile(r"\b(?:your|his|her|their) $")
# Words a reply endorses: their speaker said to be right ("your mom has a point when she says",
# "they are right:", 你妈说得对, 他们没说错; not the user: "you're right that...", 你说得对), or
# agreed with ("I agree"); `voice.own_voice` reads a quote so endorsed as the reply's own.
ENDORSED = {
    "en": re.compile(
        r"\b(?:has|had|have) a (?:good |fair |real )?point\b|(?<!you )\b(?:is|was|are|were) (?:so |absolutely |totally |quite )?right\b"
        r"|\bspot on\b|\bi (?:\w+ )?agree\b"
    ),
    "zh": re.compile(r"(?<![你您])(?:说得|说的)(?:对|没错|有道理|在理)|(?<![你您])没说错|我(?:也|很|完全)?(?:同意|赞同|认同)"),
}
# ... and words told back agreed with after them, in their sentence or the next (those, or "He's
# right.", "- and it is.", 确实如此): the reply's own again.
_AGREED = {
    "en": re.compile(
        ENDORSED["en"].pattern + r"|(?<!you)(?:'s|'re) (?:so |absolutely |totally |quite )?right\b"
        r"|\band (?:it|that|he|she|they) (?:is|was|are|were|does|did)\b(?=\s*[.!,;]|\s*$)|\bnot wrong\b"
    ),
    "zh": re.compile(ENDORSED["zh"].pattern + r"|确实如此|一点(?:都|也)?没错"),
}
_TOLD_BREAK = re.compile(r"[.,;:!?\n，。；：！？、—–]| - ")
_RECOUNT_WINDOW = {"en": 80, "zh": 30}


# The user's words in the second person, as a reply tells them back ("it was on me" -> "it was on you").
_SECOND_PERSON = {
    "en": {
        "i am": "you are", "i was": "you were", "i'm": "you're", "i've": "you've", "i'd": "you'd", "i'll": "you'll",
        "i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself",
    },
    "zh": {"我": "你"},
}
_FIRST_PERSON = {
    "en": re.compile(r"\b(?:" + "|".join(sorted(_SECOND_PERSON["en"], key=len, reverse=True)) + r")\b"),
    "zh": re.compile("我"),
}


@dataclass(frozen=True)
class _UserWords:
    """What the user said, read as a reply tells it back: their content words, and their
    messages in the second person."""

    text: str
    language: str

    @cached_property
    def units(self) -> frozenset[str]:
        return content_units_uncached(self.text, self.language)

    @cached_property
    def told_back(self) -> str:
        swap = _SECOND_PERSON[self.language]
        return _FIRST_PERSON[self.language].sub(lambda m: swap[m.group(0)], self.text.lower().replace("\u2019", "'"))

    def said(self, words: str) -> bool:
        units = content_units_uncached(words, self.language)
        return bool(units) and units <= self.units


def _recounted(lowered: str, match: re.Match[str], pattern: "re.Pattern[str] | BoundaryFirst", language: str, user: _UserWords) -> bool:
    """The match is in words told back (`_RECOUNT`: the frame nearest it in its clause) that
    the user said: the act's pattern finds it in what they said, and who said it, how, and the
    words from the frame to the clause's end are all theirs; and the reply does not agree
    with them after (`_AGREED`)."""
    start = max(0, match.start() - _RECOUNT_WINDOW[language])
    clause = _TOLD_BREAK.split(lowered[start : match.start()])[-1]
    frame = next(reversed(list(_RECOUNT[language].finditer(clause))), None)
    if frame is None or not pattern.search(user.told_back):
        return False
    who, speakers = frame["who"], _SPEAKERS[language]
    named = speakers is not None and who not in speakers
    if named and not (_POSSESSED.search(clause[: frame.start()]) or user.said(who)):
        return False  # the writer ("i do think"), anyone ("people say") or no one ("it feels like")
    end = _TOLD_BREAK.search(lowered, match.end())
    stop = end.start() if end else len(lowered)
    if _AGREED[language].search(lowered, stop, stop + _RECOUNT_WINDOW[language]):
        return False
    told = clause[frame.end() :] + lowered[match.start() : stop]
    return user.said("\n".join((who if named else "", frame.groupdict().get("how") or "", told)))


def speech_acts(text: str, language: str, *, user: str | None = None) -> dict[str, int]:
    """For each act, how many of its distinct patterns occur in `text` (case-insensitive);
    a blaming, dismissing or lecturing pattern counts only where it is neither quoted nor
    denied (a negation earlier in its clause), nor, given what the `user` said (their
    messages), told back as theirs or as what someone of theirs said ("So they're making it
    sound like it was on you" to "They're making it sound like it was on me", `_RECOUNT`)."""
    lowered = text.lower()
    window = _NEGATION_WINDOW[language]
    theirs = _UserWords(user, language) if user else None

    def found(act: str, pattern: re.Pattern[str]) -> bool:
        negation = _NEGATION[act][language] if act in _NEGATION else None
        for match in pattern.finditer(lowered):
            if negation is None:
                return True
            before = lowered[max(0, match.start() - window) : match.start()]
            if before.endswith(_QUOTES) or (theirs is not None and _recounted(lowered, match, pattern, language, theirs)):
                continue
            clause = _CLAUSE_BREAK.split(before)[-1]
            denied = bool(negation.search(clause))
            if _QUESTION_AFTER[language].match(lowered, match.end()):  # a question: its rhetoric may turn it
                if _RHETORICAL_NEGATION[language].search(clause):
                    denied = False
                elif language in _RHETORICAL_DENIAL and _RHETORICAL_DENIAL[language].search(clause):
                    denied = True
            if not denied:
                return True
        return False

    return {act: sum(1 for p in patterns if found(act, p)) for act, patterns in _present(lowered, language).items()}
