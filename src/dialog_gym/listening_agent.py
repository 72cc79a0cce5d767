"""`ListeningAgent`: a deterministic reference supporter that answers what the user just said.

Where `BaselineAgent` names one noun phrase and otherwise rotates canned bodies, this agent
reads the user's last message the way a careful human supporter would, with no model: it
says back its most informative detail, names the feeling the user named, takes corrections
and pushback, answers a question put to it and asks about someone or something they named.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from difflib import SequenceMatcher

from dialog_gym._listening_phrases import ANSWERS, POOLS, SOMEONE
from dialog_gym._user_reading import conversation_language, guess_need, noun_phrase
from dialog_gym.simulators.analysis import content_units
from dialog_gym.simulators.cues import EN_FUNCTION_WORDS
from dialog_gym.types import Message

# --- what the user's words do, beyond what they tell ------------------------------------
_MOVES = {
    "pushback": {  # against advice, or "I only want to say it"
        "en": r"tried that|already tried|i've tried|easier said than done|every(?:one|body) (?:says|tells)|need(?:s)? fixing|"
              r"don't (?:want|need) (?:advice|you to fix)|not going to fix|you think i haven't|stop telling me|doesn't fit my "
              r"situation|not where i'm at|i don't think i can do that|just (?:need|want) to (?:say it|talk|vent)|off my chest|"
              r"need to get this out|just listen",
        "zh": r"试过了|说得容易|说得轻巧|别给我(?:出主意|建议)|不用谁来解决|就想说出来|你以为我没想过|解决不了|对不上|不是这个状态|"
              r"倒出来|说出来就好受|做不到|自己会想办法|想找个人说说",
    },
    "correction": {
        "en": r"\bnot really\b|\bnot that\b|that's not (?:it|what|where)|\bmore like\b(?! it)|\bnot quite\b|you(?:'ve)? got it wrong",
        "zh": r"不是这样|不是这个|说的不是|没抓到重点|不是那么回事",
    },
    "hostile": {
        "en": r"good talk|thanks for nothing|doesn't help|not really getting it|you're not listening|why would i tell you|"
              r"you don't get to|not explaining myself|forget it|i'm done|not doing this|never mind|rather not say|"
              r"shouldn't have brought it up",
        "zh": r"你都这么说了|还跟你说什么|不想说了|不想聊|看没看我说的|算了|你不懂|你懂啥|没什么用|没必要跟你解释",
    },
    "advice": {
        "en": r"what (?:should|do|can|would) i (?:do|say)|what would you do|any (?:ideas|advice)|how do i\b|should i\b",
        "zh": r"怎么办|咋办|该怎么|怎么做|我该|有什么办法",
    },
    "enough": {  # nothing more to say, or not that part
        "en": r"^that's all|that's all there is|not much more|said most of it|nothing more to say|rather not go there|"
              r"don't (?:really )?want to (?:get into|go into|talk about)",
        "zh": r"刚才说过了|就这些|没别的了|没什么好说|不想细说|这个就不说了",
    },
    "filler": {  # talk about the talking: nothing to say back
        "en": r"rambling|it's just a lot|(?:i )?don't know|since you(?:'re| )|here's the thing|if you must know|i guess|"
              r"closer to it|kind of it|sorry i said|^(?:sorry|fine|right|okay|ugh|sure)\b",
        "zh": r"说得有点乱|不好意思|怎么说呢|既然你问了|你非要问的话|说白了|唉|行吧|憋太久|我说的那样|说起来|反正|道理我懂|算是吧|然后呢|不知道",
    },
}
_FEELINGS = {  # longest first, so that 心累 wins over 累
    "en": ("angry furious livid frustrated annoyed tired exhausted drained embarrassed ashamed humiliated lonely sad scared "
           "afraid terrified anxious worried nervous stressed overwhelmed guilty jealous numb heartbroken gutted devastated "
           "miserable helpless hopeless invisible rage anger shame guilt dread grief").split(),
    "zh": "空落落 心里空 不甘心 心累 委屈 憋屈 生气 来火 火大 难受 难过 伤心 害怕 丢人 丢脸 焦虑 孤单 孤独 崩溃 失望 很沉 累 慌 烦 懵 堵 怕".split(),
}
_EN_FEELING_NOUNS = frozenset("rage anger shame guilt dread grief".split())
_ZH_FEELING_SHOWN = {"很沉": "心里发沉", "空落落": "心里空落落的", "心里空": "心里发空", "堵": "心里堵", "慌": "心慌", "懵": "发懵"}
_NUMBER = {
    "en": re.compile(r"\d|\b(?:two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|thirty|forty|fifty|hundred|"
                     r"thousand|half|dozen|first|second|third)\b", re.IGNORECASE),
    "zh": re.compile(r"\d|[二两三四五六七八九十百千万]"),
}
_EN_KIN = re.compile(r"\b(?:my|our)\s+((?:best )?(?:dad|father|mum|mom|mother|parents|wife|husband|partner|ex|boss|manager|"
                     r"sister|brother|son|daughter|kids|friend|teacher|tutor|preceptor|landlord|granddaughter|grandson|roommate|"
                     r"flatmate|colleague|coach|neighbou?r|girlfriend|boyfriend|doctor))\b", re.IGNORECASE)
_EN_NOT_NAMES = frozenset("I Mr Mrs Ms Dr Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March "
                          "April May June July August September October November December Christmas English OK".split())
_EN_BEFORE_NOT_NAME = frozenset("a an the at in on to this that from of by for my our his her their".split())
_EN_FAMILY = {"Dad": "your dad", "Mom": "your mom", "Mum": "your mum"}
_ZH_PERSON = re.compile("我(妈|爸|弟|姐|哥|妹|老公|老婆|婆婆|闺女|女儿|儿子|老伴|同桌|室友|老板|领导|同事)|(业主|房东|班主任|助教)")
_ZH_KIN = {"妈": "妈妈", "爸": "爸爸", "弟": "弟弟", "姐": "姐姐", "哥": "哥哥", "妹": "妹妹"}
_EN_SWAP = {"i": "you", "i'm": "you're", "i've": "you've", "i'd": "you'd", "i'll": "you'll", "me": "you", "my": "your",
            "mine": "yours", "myself": "yourself", "we": "you", "we're": "you're", "we've": "you've", "us": "you",
            "our": "your", "ours": "yours"}
_EN_PAST = frozenset("had got sold went made did redid rewrote told sent sat wore drove lost spent kept left took gave came "
                     "felt found thought bought said saw ran put held built cried yelled just paid heard knew wrote read met "
                     "began brought caught taught won broke chose fell forgot hid let meant rode spoke stood threw woke cut quit".split())
# A reply shorter than this (English words, Chinese characters) adds a second detail of the
# user's, a word about the person they keep naming, or a line of presence.
_FULL = {"en": 60, "zh": 60}


def _size(text: str, language: str) -> int:
    return len(text) if language == "zh" else len(text.split())


def _sentences(text: str, language: str) -> list[str]:
    """Sentences of `text`; "Mr. Lowe" does not end one, nor "3 a.m." before a small letter."""
    if language == "zh":
        return [s for s in re.split(r"(?<=[。！？!?；…])", text) if s.strip()]
    parts = [p for p in re.split(r"(?:(?<=[.!?;:])|(?<=[.!?;:]['\"”]))\s+", text.replace("’", "'")) if p]
    merged: list[str] = []
    for part in parts:
        if merged and (re.search(r"\b(?:Mr|Ms|Mrs|Dr|St)\.$", merged[-1]) or re.search(r"\b[ap]\.m\.$", merged[-1]) and part[:1].islower()):
            merged[-1] += " " + part
        else:
            merged.append(part)
    return merged


def _clauses(text: str, language: str) -> list[str]:
    """Short statements of `text` (not questions): sentences, long ones cut at commas and joins."""
    if language == "zh":  # a sentence's clauses, less the question it ends with ("……，凭什么啊？")
        pieces = [[c for c in re.split(r"[，,。！!；;：:…、\s]+", s) if c] for s in _sentences(text, language)]
        pieces = [p[:-1] if s.rstrip().endswith(("？", "?")) else p for p, s in zip(pieces, _sentences(text, language))]
        clauses = (re.sub(r"^(?:就是|其实|然后|反正|可是|但是|而且|所以)", "", c.strip("“”\"")) for p in pieces for c in p)
        return [c for c in clauses if c]
    found = []
    for sentence in _sentences(text, language):
        if sentence.rstrip(" '\"").endswith("?"):
            continue
        pieces = [sentence]
        if len(sentence.split()) > 12:
            pieces = re.split(r",\s+|\s+-+\s+|\s+(?:and|but|so|because)\s+(?=(?:i|i'm|he|she|they|we|my|it)\b)", sentence, flags=re.I)
        for piece in pieces:
            piece = re.sub(r"^(?:(?:and|but|so|then|well|look|honestly|anyway|plus)\b,?\s*)+", "", piece, flags=re.I)
            piece = re.sub(r"\b([ap])\.m$", r"\1.m.", piece.strip(" .!?;:\""))
            piece = piece[1:-1] if len(piece) > 2 and piece[0] == piece[-1] == "'" else piece
            if piece and not re.search(r"\b(?:said|says|goes|asked)$", piece):
                found.append(piece)
    return found


def _second_person(clause: str, language: str, said: str) -> str:
    """The user's clause as the agent says it back: I -> you, 我 -> 你."""
    if language == "zh":
        clause = re.sub("我(妈|爸|弟|姐|哥|妹)(?![妈爸弟姐哥妹])", lambda m: "你" + _ZH_KIN[m.group(1)], clause)
        return clause.replace("咱们", "你们").replace("我", "你")
    clause = re.sub(r"\bI have to\b", "you've got to", re.sub(r"\bI must\b", "you feel you must", clause))
    clause = re.sub(r"\bI am\b", "you are", re.sub(r"\bI was(n't)?\b", lambda m: "you were" + (m.group(1) or ""), clause))
    clause = re.sub(r"\b[A-Za-z]+(?:'[a-z]+)?\b", lambda m: _EN_SWAP.get(m.group().lower(), m.group()), clause)
    first = clause.split()[0]
    lowered = first.lower()
    if lowered in _EN_PAST or (lowered.endswith("ed") and len(lowered) > 4 and lowered not in ("hundred", "speed", "bleed")) \
            or lowered in ("haven't", "can't", "don't", "didn't", "couldn't", "won't", "never"):
        return "you " + lowered + clause[len(first):]
    name = first.split("'")[0]
    if re.search(rf"[a-z,] {re.escape(name)}\b", said) or name in _people([said], "en") or (
            len(re.findall(rf"\b{re.escape(name)}\b", said)) >= 2 and not re.search(rf"\b{re.escape(lowered)}\b", said)):
        return clause  # a name, capitalised wherever the user writes it
    return lowered + clause[len(first):]


def _details(text: str, language: str, mine: set[str], said: str) -> list[str]:
    """Clauses of `text` that bring content the agent has not said, most informative first
    (numbers, feelings, people, the user's own doings), turned around; none repeats another's."""
    ranked: list[tuple[float, int, str, frozenset[str]]] = []
    for index, clause in enumerate(_clauses(text, language)):
        new = content_units(clause, language) - mine
        size = len(clause) if language == "zh" else len(clause.split())
        low, high = (4, 18) if language == "zh" else (3, 14)
        addressed = "你" in clause if language == "zh" else re.search(r"\byou(?:r|'re)?\b", clause, re.IGNORECASE)
        meta = any(re.search(_MOVES[k][language], clause, re.IGNORECASE) for k in ("pushback", "correction", "hostile", "filler"))
        quotes = clause.count("“") + clause.count("”") + len(re.findall(r"(?<![A-Za-z])'|'(?![A-Za-z])", clause))
        turned = _second_person(clause, language, said).rstrip("，。")
        if _pastes(turned, text) and language == "en":  # say back less of a short message: its object, or its start
            tail = re.search(r"(?<=\s)(?:a|an|the|your|every|all|\d+)\s+\w.*", turned)
            heads = [" ".join(turned.split()[:n]) for n in range(len(turned.split()) - 1, 3, -1)]
            shorter = ([tail.group()] if tail and len(tail.group().split()) >= 3 else []) + [
                re.sub(r"(?:\s+(?:" + "|".join(EN_FUNCTION_WORDS) + r"))+$", "", h) for h in heads]
            turned = next((t for t in shorter if len(t.split()) >= 3 and not _pastes(t, text)), turned)
        if not new or size < low or addressed or meta or quotes % 2 or _pastes(turned, text):
            continue
        own = "我" in clause if language == "zh" else re.search(r"\b(?:i|i'm|i've|my|me)\b", clause, re.IGNORECASE)
        score = len(new) + 2 * bool(_NUMBER[language].search(clause)) + 2 * bool(_feeling(clause, language))
        score += bool(_people([clause], language)) + bool(own) - max(0, size - high) / 2
        ranked.append((score, index, turned, new))
    chosen: list[tuple[str, frozenset[str]]] = []
    for _, _, turned, new in sorted(ranked, reverse=True):
        if all(not (new & units) for _, units in chosen):
            chosen.append((turned, new))
    return [turned for turned, _ in chosen]


def _pastes(clause: str, message: str) -> bool:
    """Whether saying `clause` back would paste most of a short `message` (over half of it, verbatim)."""
    match = SequenceMatcher(None, message, clause, autojunk=False).find_longest_match(0, len(message), 0, len(clause))
    return match.size >= 0.55 * len(message.strip())


def _feeling(text: str, language: str) -> str | None:
    """The last feeling word the user owns in `text` (not negated, not a guess echoed as a question)."""
    found = None
    sentences = _sentences(text, language)
    for i, sentence in enumerate(sentences):
        denied = i + 1 < len(sentences) and re.match(r"\s*(?:not really|no\b)", sentences[i + 1], re.IGNORECASE)
        if sentence.rstrip().endswith(("?", "？")) or denied:
            continue
        for word in _FEELINGS[language]:
            for m in re.finditer(word if language == "zh" else rf"\b{word}\b", sentence, re.IGNORECASE):
                before = sentence[: m.start()]
                negated = (re.search("[不没别]$|不是.?$", before) if language == "zh"
                           else {"not", "n't", "never", "no", "than"} & set(re.findall(r"[a-z]+|n't", before.lower())[-3:]))
                if not negated and (found is None or (i, m.start()) > found[:2]):
                    found = (i, m.start(), word)
    return found[2] if found else None


def _people(texts: Sequence[str], language: str) -> list[str]:
    """Everyone the user names in `texts`, in order ("your dad", "Aiden", "Mr. Harlow", "你妈妈")."""
    found: list[tuple[int, int, str]] = []
    for k, text in enumerate(texts):
        if language == "zh":
            found += [(k, m.start(), "你" + _ZH_KIN.get(m.group(1), m.group(1)) if m.group(1) else m.group(2)) for m in _ZH_PERSON.finditer(text)]
            continue
        found += [(k, m.start(), "your " + m.group(1).lower()) for m in _EN_KIN.finditer(text)]
        found += [(k, m.start(), m.group()) for m in re.finditer(r"\b(?:Mr|Ms|Mrs|Dr)\.? [A-Z][a-z]+", text)]
        for m in re.finditer(r"\b[A-Z][a-z]{2,}\b", text):
            words = text[: m.start()].split()
            if words and words[-1][-1] not in ".!?:'\"" and words[-1].rstrip(",").islower() and m.group() not in _EN_NOT_NAMES \
                    and words[-1].rstrip(",") not in _EN_BEFORE_NOT_NAME and words[-1] not in ("Mr.", "Ms.", "Mrs.", "Dr."):
                found.append((k, m.start(), _EN_FAMILY.get(m.group(), m.group())))
    return [name for _, _, name in sorted(found)]


def _main_person(users: Sequence[str], language: str) -> str | None:
    """The person the user talks about most, the one in their last message winning a tie; not
    someone who has died (no "how are things with them now")."""
    gone = r"\b(?:late|died|passed|gone|funeral)\b" if language == "en" else r"走了|去世|过世|没了|埋"
    mourned = {name for u in users for s in _sentences(u, language) if re.search(gone, s) for name in _people([s], language)}
    counts = Counter(name for name in _people(users, language) if name not in mourned)
    recent = set(_people(users[-1:], language))
    return max(counts, key=lambda name: (counts[name] + 0.5 * (name in recent), name), default=None)


def _deed(users: Sequence[str], language: str, previous: str) -> str | None:
    """Something concrete the user did ("you made a Gantt chart on day one"), not praised yet."""
    deeds = []
    for text in users:
        for clause in _clauses(text, language):
            turned = _second_person(clause, language, "")
            done = (re.search("你[^你]{2,14}[了过]", turned) and len(turned) <= 20 if language == "zh"
                    else re.match(r"you (?:\w+ed|" + "|".join(_EN_PAST) + r")\b", turned) and len(turned.split()) <= 14)
            meta = any(re.search(_MOVES[k][language], clause, re.IGNORECASE) for k in ("pushback", "filler"))
            if done and not meta and turned.lower() not in previous.lower() and not re.search(r"nobody|没人", turned):
                deeds.append((len(content_units(turned, language)) + 2 * bool(_NUMBER[language].search(turned)), turned))
    return max(deeds)[1] if deeds else None


def _fresh(pool: Sequence[str], turn: int, said: set[str], language: str, slots: dict[str, str]) -> str | None:
    """The first phrasing of `pool`, from this turn's on, whose slots are filled and none of
    whose sentences the agent has said before."""
    for k in range(len(pool)):
        line = pool[(turn + k) % len(pool)]
        if any("{" + name in line.lower() and not slots.get(name) for name in "cfptd"):
            continue
        text = line.format(**slots, **{name.upper(): value[:1].upper() + value[1:] for name, value in slots.items()})
        if not any(s.strip() in said for s in _sentences(text, language)):
            return text
    return None


def _answer(last: str, language: str) -> list[str]:
    """Phrasings of a brief, honest stance on a question the user put to the agent, if they asked one."""
    def addressed(sentence: str) -> bool:
        if language == "zh":
            return bool(re.search(r"[?？]\s*$", sentence) and "你" in sentence or "评评理" in sentence)
        to_me = re.search(r"\byou\b|^\W*(?:am|was|is|does|did|do|should|would|could|can) (?:i|it|that|this)\b", sentence, re.I)
        return sentence.rstrip().endswith("?") and len(sentence.split()) > 2 and bool(to_me)

    rhetorical = "|".join(_MOVES[k][language] for k in ("pushback", "advice", "hostile"))
    asked = [s for s in _sentences(last, language) if addressed(s) and not re.search(rhetorical, s, re.IGNORECASE)]
    for pattern, answers in ANSWERS[language] if asked else ():
        m = re.search(pattern, asked[-1], re.IGNORECASE)
        if m:
            return [answer.format(*(g.lower() for g in m.groups())) for answer in answers]
    return []


class ListeningAgent:
    """A deterministic, non-learning supporter that answers what the user just said (en and zh).

    Each reply, in this order: an apology when the user turned on it, else a brief answer
    when they put a question to it (an honest stance, not a fact it cannot know); taking a
    correction in their word; a reflection of the most informative clause of their last
    message that it has not said back before, pronouns turned ("I rewrote it at 3 a.m." ->
    "you rewrote it at 3 a.m."), or of an earlier one; the feeling they named, named back;
    then one line in the register they hint at (`guess_need`): one small suggestion tied to
    their words when they ask what to do, a plain "not your fault", praise of something they
    said they did, wondering about the person they talk about. After they push back on
    advice or say they just want to say it, it stops suggesting and listens (only asking it
    outright gets one suggestion again). Early on, with nothing else to go on, it stays with
    how the thing must feel. A reply still short gets a second detail of theirs (only when
    no register is called for), a word about the person they keep naming, or a line of
    presence. It ends with at most one question or invitation, about the person or thing
    they mentioned or in the register they hint at, and never says a sentence twice in an
    episode. The first reply reflects what they opened with and asks what happened.
    """

    name = "listener"

    def __call__(self, messages: Sequence[Message]) -> str:
        language = conversation_language(messages)
        turn = sum(1 for m in messages if m["role"] == "assistant")
        users = [m["content"] for m in messages if m["role"] == "user"] or [""]
        last, previous = users[-1], " ".join(m["content"] for m in messages if m["role"] == "assistant")
        said = {s.strip() for m in messages if m["role"] == "assistant" for s in _sentences(m["content"], language)}
        mine = set().union(*(content_units(m["content"], language) for m in messages if m["role"] == "assistant"))
        move = {key: bool(re.search(p[language], last, re.IGNORECASE)) for key, p in _MOVES.items()}
        person = _main_person(users, language)
        owned = [t for t in (noun_phrase(u, language) for u in reversed(users)) if t and t.startswith(("your", "你"))]
        topic = next((t for t in owned if not _people([t.replace("your", "my").replace("你", "我")], language)), None)
        details = _details(last, language, mine, " ".join(users))
        detail, also = (details + ["", ""])[:2]
        earlier = next((d[0] for d in (_details(u, language, mine, " ".join(users)) for u in reversed(users[:-1])) if d), "")
        feeling = _feeling(last, language) or ""
        slots = {"c": detail or "", "f": _ZH_FEELING_SHOWN.get(feeling, feeling) if language == "zh" else feeling,
                 "p": person or "", "t": topic or "", "d": _deed(users, language, previous + " " + " ".join(details[:2])) or ""}

        def pick(pool: str, **extra: str) -> str | None:
            return _fresh(POOLS[language][pool], turn, said, language, {**slots, **extra})

        parts = [pick("apology") if move["hostile"] else _fresh(_answer(last, language), turn, said, language, slots)]
        if turn == 0:
            feel = pick("feeling_noun" if feeling in _EN_FEELING_NOUNS else "feeling") if feeling else None
            return self._join([*parts, pick("opening") or pick("opening_plain"), feel, pick("opening_question")], language)
        if move["enough"]:
            parts.append(pick("enough"))
        parts.append(pick("reflect") or pick("recall", c=earlier))
        if move["correction"] and not move["hostile"]:
            named_in_correction = any(feeling and feeling in s.lower() and re.search(_MOVES["correction"][language], s, re.I)
                                      for s in _sentences(last, language))
            parts.append(pick("corrected") if named_in_correction else pick("corrected_plain"))
        elif feeling:
            parts.append(pick("feeling_noun" if feeling in _EN_FEELING_NOUNS else "feeling"))
        need = guess_need(messages, language)
        no_advice = any(re.search(_MOVES["pushback"][language], u, re.IGNORECASE) for u in users)
        fallback = {k: slots[k] or v for k, v in SOMEONE[language].items()}
        if move["advice"] and not move["pushback"]:
            need = "practical_advice"
            parts.append(pick(need, p=fallback["p"], t=noun_phrase(last, language) or fallback["t"]))
        elif move["pushback"]:
            need = "attentive_listening"
            if not any(re.search(_MOVES["pushback"][language], u, re.IGNORECASE) for u in users[:-1]):
                parts.append(pick("listening"))
        elif need == "practical_advice" and no_advice:
            need = "attentive_listening"
        elif need:
            parts.append(pick(need, t=fallback["t"]))
        elif turn <= 3 and not feeling and not move["correction"]:  # early, nothing to go on yet: stay with how it must feel
            parts.append(pick("early_empathy"))
        named_now = slots["p"] if person and person in last else ""
        for pool, extra in (("also", {"c": "" if need else also}), ("about_person", {"p": named_now}), ("presence", {}), ("presence", {})):
            if _size(self._join(parts, language), language) < _FULL[language]:
                parts.append(pick(pool, **extra))
                said.update(_sentences(parts[-1] or "", language))
        order = ("ask_person", "ask_topic") if turn % 2 or (person and person in last) else ("ask_topic", "ask_person")
        asks = (f"ask_{need}",) * bool(need and f"ask_{need}" in POOLS[language]) + order + ("ask",)
        parts.append(next(filter(None, map(pick, asks)), None))
        return self._join(parts, language)

    @staticmethod
    def _join(parts: Sequence[str | None], language: str) -> str:
        text = ("" if language == "zh" else " ").join(p for p in parts if p)
        text = re.sub(r"([.?])(['\"”])[.]", r"\1\2", re.sub(r"[!！]", "。" if language == "zh" else ".", text))
        return re.sub(r"\.\.(?!\.)", ".", text)

    def __repr__(self) -> str:
        return "ListeningAgent()"
