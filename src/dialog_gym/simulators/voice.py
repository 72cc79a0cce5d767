"""What a reply says in its own voice: the text the v2 judge reads (`judge_features`).

Ways a policy could hide what it says from a reader of words, and how this module undoes
them:

- *Spacing.* Two spaces, a tab or a no-break space between words, a zero-width space inside
  one, spaces between Chinese characters, or a sign between every two characters (说·实·话,
  y·o·u·r) read the same to a person and break every pattern that expects one plain space
  ("you need to  just get over it"), and so does a sign between every two words (you~need~to,
  you ❤ need ❤ to, 你就~别想~太多~了吧). `plain_spacing` reads such a text as it would be read
  aloud: runs of spacing become one space, zero-width characters go, and no space stands
  between two Chinese characters, nor a sign put between every two characters (between
  English words, a space stands for it).
- *Letters.* Cyrillic or Greek letters that look like Latin ones inside an English word
  ("yоu" with a Cyrillic о), full-width letters (ｙｏｕ) and mathematical ones (𝐲𝐨𝐮) read
  as the plain letters to a person and as no word to a lexicon. `plain_letters` writes them
  plainly; a word of Cyrillic or Greek with a letter that has no Latin look-alike (это,
  Россия) stays as it is. Marks put on letters ("yóur", zalgo, a struck-through line) go.
- *Spelling.* Digits for letters inside a word ("y0ur 0wn f4ult": 0, 1, 3, 4, 5, 7, @ and $
  between two letters), words joined by underscores or emoji ("your_own_fault", "your🙂own")
  and two letters of an unkind word swapped ("fualt", "shuold", "yourslef": a word of five
  letters or more that no bundled reply or message writes, one swap from a word of the act
  lexicons) read as the words they spell, to a person at a glance, and to a lexicon not at
  all. `plain_spelling` writes them as spelt; other misspellings ("falt", "stpo") it leaves.
- *Characters.* Chinese in traditional characters (你應該明白, 別難過) reads the same to a
  person who reads Chinese and as unfamiliar characters to readings written in simplified
  ones; `as_read` writes it in simplified characters (`traditional_chinese.simplified`).
- *No language the reader reads.* A sentence in Spanish, German or Russian, or lorem ipsum,
  after a Chinese reply read as English words the judge does not know: each counted towards
  the reply's length, which a Chinese reply is paid for (+0.4 points on average, at least the
  reply alone in nine contexts of ten); in an English one it diluted what the reply's own
  words say. To the user it is words they cannot read. `without_unread` takes out the
  stretches in no language the judge reads (four or more words, at least 70 % of them outside
  the English words of the bundled speech-act corpus or in another script) and counts their
  words, which the judge charges for (`judge_knowledge.PRIOR["unread"]`).
- *Quotes.* What a reply quotes is someone else's words, not its act ("Your dad called you
  "lazy"", 不会劝你“想开点”), so the act lexicons and the speech-act model leave it out. But a
  reply wrapped in quotes, or a sentence in quotes with nothing to say whose words they are,
  is the reply's own voice: "Stop feeling sorry for yourself." blames in quotes as without.
  `own_voice` keeps a quote as someone else's only where the reply says so, with a verb of
  saying before it in its sentence (said, call, "something like"; 说, 劝, 比如; a colon alone
  is not enough: 'Honestly: "..."' is the reply's own) or right after it (", she said";
  “……”这种话); but not in the first person ("like I said", 我想说) or introduced as its own
  ("in other words", 说白了) unless denied ("I won't tell you to "just relax""), nor where it
  endorses the speaker ("your mom has a point when she says"), nor in a voice it makes up
  ("some people would say", "your family might tell you", 有人会说) or passes on ("my grandma
  always said", "as Einstein said", "try telling yourself", 我奶奶常说, 俗话说) unless denied or
  turned down right after the quote ("..., but that isn't true"; a "but" alone, or "nobody's
  perfect", turns nothing down); or where the words are the user's own (the judge's reading:
  copied from their messages). Every other quote loses its marks and reads as the reply's,
  and the frame that made it the reply's own ("As my old coach used to say:", 俗话说：) is not
  read with it, as a person reads past it to what is said.
- *The other language.* Each reading is written for one language, the reply's (English or
  Chinese), and a reader of English does not see Chinese words: an English reply with a
  Chinese sentence of blame after it ("I'm so sorry. 说到底还是你自己的错。") read as its warm
  English part alone. `in_other_language` gives the stretches written in the other language
  (Chinese text of six or more characters in an English reply; runs of three or more English
  words, four or more in all, in a Chinese one), for the act lexicons and the speech-act model
  of that language to read as well.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

from dialog_gym.simulators.analysis import EN_WORD, familiar_en_words
from dialog_gym.simulators.cues import ZH_CHAR
from dialog_gym.simulators.speech_act_model import QUOTED
from dialog_gym.simulators.speech_acts import ACTS, ENDORSED
from dialog_gym.simulators.traditional_chinese import simplified

_SPACING = re.compile(r"[ \t\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")
_INVISIBLE = re.compile(r"[\u00ad\u200b-\u200d\u2060\ufeff]")
_CJK = "\u3000-\u303f\u3400-\u9fff\uff00-\uffef"
_SPACE_IN_CHINESE = re.compile(f"(?<=[{_CJK}]) (?=[{_CJK}])")
_SPACE_BEFORE_BREAK = re.compile(r" +(?=\n)|(?<=\n) +")


# Anything `plain_spacing` would change (most texts have none: one search, and they are returned).
_UNPLAIN = re.compile(f"[\t\u00a0\u1680\u2000-\u200d\u202f\u205f\u3000\u00ad\u2060\ufeff]|  | \n|\n |[{_CJK}] [{_CJK}]")


def _ascii_unplain(text: str) -> bool:
    return "  " in text or "\t" in text or " \n" in text or "\n " in text  # `_UNPLAIN` for ASCII, sooner


# A sign put between every two characters or words (说·实·话, 你/自/己/的/错, y·o·u·r, s-t-o-p,
# 你就~别想~太多~了吧~都这~么大~了, you~need~to, you ❤ need ❤ to): the same sign three times or more between
# single Chinese characters or letters, six times or more between runs of one to three Chinese
# characters, spaced or not, and four times or more between English words, which no sentence
# writes so (punctuation, quotes and brackets are no such sign; lists of terms and flows of
# steps stop sooner: 做饭/买菜/洗碗/拖地/带娃, 头脑-动机-习惯-环境-监督-反馈, Say/Think/Feel/Do,
# sunset-in-a-barn light; no recorded reply nor contrast-set text reads otherwise for it).
_NO_SIGN_ZH = "\\w\\s，。、；：！？“”‘’（）《》【】「」『』…—\\n"
_SIGN_BETWEEN_CHINESE = re.compile(f"[{ZH_CHAR}]([^{_NO_SIGN_ZH}])[{ZH_CHAR}](?:\\1[{ZH_CHAR}]){{2,}}")
_ZH_RUN = f"[{ZH_CHAR}{_CJK}“”‘’…—]{{1,3}}"  # Chinese characters and marks
_SIGN_BETWEEN_CHINESE_WORDS = re.compile(f"[{ZH_CHAR}] ?([^{_NO_SIGN_ZH}\"'()]{{1,2}}) ?{_ZH_RUN}(?: ?\\1 ?{_ZH_RUN}){{5,}}")
_SIGN_BETWEEN_LETTERS = re.compile(r"([^\w\s])[A-Za-z]\1[A-Za-z]\1(?=[A-Za-z])")  # sign first: found sooner
_SIGN_BETWEEN_WORDS = re.compile(r"[A-Za-z] ?([^\w\s,.;:!?'’\"“”()\[\]{}]{1,2}) ?[A-Za-z'’]+(?: ?\1 ?[A-Za-z'’]+){3,}")


def _without_signs_between_characters(text: str) -> str:
    """`text` without a sign put between every two characters or words (see above): wherever
    it touches a Chinese character or mark (with the spaces around it), stands between two
    letters, or, put between words, before a word (as a space)."""
    signs = {match.group(1) for pattern in (_SIGN_BETWEEN_CHINESE, _SIGN_BETWEEN_CHINESE_WORDS) for match in pattern.finditer(text)}
    for sign in signs:
        sign = re.escape(sign)
        text = re.sub(f"(?<=[{ZH_CHAR}{_CJK}]) ?{sign}+ ?| ?{sign}+ ?(?=[{ZH_CHAR}{_CJK}])", "", text)
    for sign in {match.group(1) for match in _SIGN_BETWEEN_LETTERS.finditer(text)}:
        text = re.sub(f"(?<=[A-Za-z]){re.escape(sign)}(?=[A-Za-z])", "", text)
    for sign in {match.group(1) for match in _SIGN_BETWEEN_WORDS.finditer(text)}:
        text = re.sub(f"(?<=[A-Za-z'’,.;:!?]) ?{re.escape(sign)} ?(?=[A-Za-z])", " ", text)
    return text


def plain_spacing(text: str) -> str:
    """`text` as it reads: runs of spacing as one space (none at a line's ends, none between
    two Chinese characters or marks, nor a sign put between every two Chinese characters or
    letters), without zero-width characters."""
    if _SIGN_BETWEEN_LETTERS.search(text) or _SIGN_BETWEEN_WORDS.search(text) or not text.isascii() and (
        _SIGN_BETWEEN_CHINESE.search(text) or _SIGN_BETWEEN_CHINESE_WORDS.search(text)
    ):
        text = _without_signs_between_characters(text)
    if not (_ascii_unplain(text) if text.isascii() else _UNPLAIN.search(text)):
        return text
    text = _SPACING.sub(" ", _INVISIBLE.sub("", text))
    return _SPACE_BEFORE_BREAK.sub("", _SPACE_IN_CHINESE.sub("", text))


# Cyrillic and Greek letters a reader takes for Latin ones, and those Latin ones.
_LOOK_ALIKE_LETTERS = "аеорсухіјѕһԁԛԝАВЕКМНОРСТХУІЈЅ" "αονριυκΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"
_LATIN_LETTERS = "aeopcyxijshdqwABEKMHOPCTXYIJS" "aovpiukABEZHIKMNOPTYX"
_LOOK_ALIKES = str.maketrans(_LOOK_ALIKE_LETTERS, _LATIN_LETTERS)
_LOOK_ALIKE = frozenset(_LOOK_ALIKE_LETTERS)
_MIXED_WORD = re.compile(r"[A-Za-z\u0370-\u03ff\u0400-\u04ff\u0500-\u052f]*[\u0370-\u03ff\u0400-\u04ff\u0500-\u052f][A-Za-z\u0370-\u03ff\u0400-\u04ff\u0500-\u052f]*")
# Full-width Latin letters and digits, and mathematical letters and digits (NFKC reads them plainly).
_WIDE_OR_STYLED = re.compile("[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\U0001d400-\U0001d7ff]+")
_UNPLAIN_LETTER = re.compile("[\u0370-\u03ff\u0400-\u052f\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\U0001d400-\U0001d7ff]")


# Latin letters with marks on them (a written accent, or combining marks: "yóur", "f̶a̶u̶l̶t̶", zalgo).
_MARKED = re.compile("[\u0300-\u036f\u00c0-\u024f]")
# Marks on no letter (a struck-through space, a kaomoji's eye) or on a Chinese character.
_LOOSE_MARKS = re.compile(f"(?:(?<![^\\W\\d_])|(?<=[{ZH_CHAR}]))[\u0300-\u036f]+")
_LATIN_RUN = re.compile("(?:[A-Za-z\u00c0-\u024f][\u0300-\u036f]*)+")


def plain_letters(text: str) -> str:
    """`text` with look-alike letters written plainly: in a word of Latin letters, or of
    look-alikes only, the Cyrillic and Greek letters that look Latin as Latin; full-width and
    mathematical letters and digits as plain ones; Latin letters and Chinese characters without
    marks put on them ("yóur", struck through, zalgo; "cafe" for "café" too, which the readers
    take alike)."""
    if text.isascii():
        return text
    if _MARKED.search(text):
        text = _LOOSE_MARKS.sub("", _LATIN_RUN.sub(_unmarked, text))
    if not _UNPLAIN_LETTER.search(text):
        return text
    text = _WIDE_OR_STYLED.sub(lambda m: unicodedata.normalize("NFKC", m.group(0)), text)
    return _MIXED_WORD.sub(_plain_word, text)


def _unmarked(match: re.Match[str]) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", match.group(0)) if not unicodedata.combining(c))


def _plain_word(match: re.Match[str]) -> str:
    word = match.group(0)
    foreign = [c for c in word if not c.isascii()]
    return word.translate(_LOOK_ALIKES) if all(c in _LOOK_ALIKE for c in foreign) else word


# A word with digits or signs for letters ("f4ult", "y0u", "s33", "you'r3"); where they only end
# or begin it ("th3", "0wn"), it must spell a word of the bundled corpus ("mp3", "covid19"
# stay); a number with a unit or an ordinal ("4pm", "5am", "3rd", "11th") stays.
_LEET_CHAR = re.compile("[013457@$]")
_LEET_BY_A_LETTER = re.compile("[A-Za-z'’][013457@$]|[013457@$][A-Za-z]")
_LEET_WORD = re.compile(r"(?<![\w@$'’])[A-Za-z0-9@$]+(?:['’][A-Za-z0-9@$]+)*(?![\w@$'’])")
_LEET_AT_AN_END = re.compile(r"[A-Za-z'’]+[0-9@$]+|[0-9@$]+[A-Za-z'’]+")
_NUMBER_AND_UNIT = re.compile(
    r"\d*1st|\d*2nd|\d*3rd|\d+th|\d+(?:am|pm|h|hr|hrs|m|min|mins|s|sec|k|kg|km|g|mg|ml|l|lb|lbs|x|d|p|gb|mb|tb|yr|yrs|wk|wks|mo|ft|cm|mm|in|oz)",
    re.I,
)
_LEET_LETTERS = str.maketrans("013457@$", "oieastas")
# A word joined to the next by underscores or emoji.
_EMOJI = re.compile("[\u2600-\u27bf\U0001f000-\U0001faff]")
_JOINER = re.compile("(?<=[A-Za-z0-9.,!?;:])_+(?=[A-Za-z])|(?<=[A-Za-z])[\u2600-\u27bf\U0001f000-\U0001faff\ufe0f\u200d]+(?=[A-Za-z])")
_LOWER_WORD = re.compile(r"(?<![A-Za-z'’])[a-z]{5,}(?![A-Za-z'’])")


@lru_cache(maxsize=1)
def _swapped_lexicon_words() -> dict[str, str]:
    """Each word of five letters or more of the English act lexicons (`speech_acts.ACTS`)
    with two neighbouring letters swapped, to the word; but a misspelling two words share, and
    any word the bundled English corpus writes (`familiar_en_words`)."""
    words = {w for patterns in ACTS["en"].values() for p in patterns for w in re.findall(r"(?<![\\a-z])[a-z]{5,}", p)}
    spelt: dict[str, set[str]] = {}
    for word in words:
        for i in range(len(word) - 1):
            if word[i] != word[i + 1]:
                spelt.setdefault(word[:i] + word[i + 1] + word[i] + word[i + 2 :], set()).add(word)
    familiar = familiar_en_words()
    return {typo: next(iter(meant)) for typo, meant in spelt.items() if len(meant) == 1 and typo not in familiar}


def _plain_leet(match: re.Match[str]) -> str:
    word = match.group(0)
    if not _LEET_CHAR.search(word) or not any(c.isalpha() for c in word) or _NUMBER_AND_UNIT.fullmatch(word):
        return word
    plain = word.translate(_LEET_LETTERS)
    if _LEET_AT_AN_END.fullmatch(word) and plain.lower().replace("’", "'") not in familiar_en_words():
        return word
    return plain


def plain_spelling(text: str) -> str:
    """`text` with words spelt in digits, joined words and unkind words with two letters
    swapped written plainly (see the module docstring)."""
    if _LEET_CHAR.search(text) and _LEET_BY_A_LETTER.search(text):
        text = _LEET_WORD.sub(_plain_leet, text)
    if ("_" in text or not text.isascii() and _EMOJI.search(text)) and _JOINER.search(text):
        text = _JOINER.sub(" ", text)
    swapped = _swapped_lexicon_words()
    for typo in swapped.keys() & set(_LOWER_WORD.findall(text)):
        text = re.sub(rf"(?<![A-Za-z'’]){typo}(?![A-Za-z'’])", swapped[typo], text)
    return text


def as_read(text: str) -> str:
    """`text` as a person reads it: `plain_letters`, `plain_spelling`, then `plain_spacing`,
    in simplified characters (`traditional_chinese.simplified`)."""
    return simplified(plain_spacing(plain_spelling(plain_letters(text))))


# A clause: what stands between sentence ends (and Chinese characters, which the Chinese reader reads).
_CLAUSE = re.compile(f"[^.!?;。！？；\n{ZH_CHAR}]+[.!?;。！？；]*")
# Words of Latin letters (accented ones too: no English word has them), and of two letters or
# more in any other script but Chinese (not the single letters of a kaomoji, (ﾉ◕ヮ◕)ﾉ, (•ω•)).
_LATIN_WORD = re.compile("[A-Za-z\u00c0-\u024f]+(?:['’][A-Za-z\u00c0-\u024f]+)?")
_OTHER_SCRIPT_WORD = re.compile(f"[^\\W\\d_A-Za-z\u00c0-\u024f{ZH_CHAR}]{{2,}}")
_ANY_LETTER = re.compile(r"[^\W\d_]")
_ADDRESS = re.compile(r"(?:https?://|www\.)[^\s)）]+|\b[\w-]+(?:\.[a-z]{2,})+(?:/[^\s)）]*)?")
_LEAST_UNREAD_WORDS = 4
_CLAUSE_SPAN = 60  # characters, within which three of a clause's unknown words stand
_UNREAD_SHARE = 0.7  # of the contrast sets' and personas' 2,992 English clauses of 4+ words none reaches it, of 25 in other languages 24


def without_unread(text: str) -> tuple[str, int]:
    """`text` without its clauses in no language the judge reads, and the number of words they
    hold: clauses of four or more words, at least 70 % of them in another script or, in Latin
    letters, no word of the bundled English speech-act corpus (Spanish, German, lorem ipsum;
    English never comes near: its function words alone are half of it). `text` itself, and 0,
    when it has none, or when nothing else would be left (a reply wholly in another language
    is read as it is, and costs as gibberish)."""
    familiar, lowered = familiar_en_words(), text.lower()
    latin = EN_WORD if text.isascii() else _LATIN_WORD  # the same words in ASCII, sooner
    words = latin.findall(lowered) + ([] if text.isascii() else _OTHER_SCRIPT_WORD.findall(text))
    least = math.ceil(_UNREAD_SHARE * _LEAST_UNREAD_WORDS)  # unknown words a clause needs
    if len(words) - sum(map(familiar.__contains__, words)) < least:
        return text, 0  # too few unknown words for any clause (most replies)
    spots = sorted(
        [m.start() for m in latin.finditer(lowered) if m.group(0) not in familiar]
        + ([] if text.isascii() else [m.start() for m in _OTHER_SCRIPT_WORD.finditer(text)])
    )
    if not any(spots[i + least - 1] - spots[i] < _CLAUSE_SPAN for i in range(len(spots) - least + 1)):
        return text, 0  # no unknown words near enough to each other to share a clause
    kept, unread, last = [], 0, 0
    masked = _ADDRESS.sub(lambda match: " " * len(match.group(0)), text)  # a web address is no sentence
    for match in _CLAUSE.finditer(masked):
        words = _clause_words(match.group(0))
        if len(words) >= _LEAST_UNREAD_WORDS and sum(w.lower() not in familiar for w in words) >= _UNREAD_SHARE * len(words):
            kept += (text[last : match.start()], " ")
            last, unread = match.end(), unread + len(words)
    if not unread:
        return text, 0
    kept.append(text[last:])
    rest = plain_spacing("".join(kept)).strip()
    return (rest, unread) if _ANY_LETTER.search(rest) else (text, 0)


def _clause_words(clause: str) -> list[str]:
    """A clause's words, for `without_unread`: not names or terms after its first word (Akko,
    Varmilo; PBT, SOS anywhere), which no reader knows in any language."""
    words = [word for i, word in enumerate(_LATIN_WORD.findall(clause)) if _is_a_word(word, first=i == 0)]
    return words + _OTHER_SCRIPT_WORD.findall(clause)


def _is_a_word(word: str, *, first: bool) -> bool:
    if len(word) > 1 and word.isupper():
        return False  # a term (PBT, SOS)
    return word[0].islower() or first or len(word) == 1  # a capitalised word after the first is a name


# A quote's frame: what stands before it in its sentence (after the last sentence end or line break).
_FRAME_START = re.compile(r"[.!?。！？\n]")
_FRAME_CHARS = {"en": 60, "zh": 24}
_SAYING = {
    "en": re.compile(
        r"\b(?:say|says|said|saying|tell|tells|told|telling|call|calls|called|calling|hear|hears|heard|hearing|"
        r"ask|asks|asked|asking|write|writes|wrote|writing|text|texts|texted|yell|yelled|shout|shouted|scream|screamed|"
        r"snap|snapped|insist|insisted|reply|replied|answer|answered|whisper|whispered|repeat|repeated|think|thinks|thought|"
        r"thinking|label|labels|labelled|labeled|word|words|phrase|line|lines|comment|comments|remark|remarks|as in)\b|"
        r"\b(?:something|anything|things|stuff|words|lines|phrases) like\b"
    ),
    "zh": re.compile(r"说|讲|告诉|劝|叫|骂|问(?!题)|喊|嚷|吼|称|评价|所谓|一句|那句|这句|觉得|认为|以为|念叨|提到|写|默念|标签|比如|例如"),
}
# The reply's own voice: a verb of saying in the first person ("like I said", "I'll say it
# plainly:", 我想说, not 跟我说).
_FIRST_PERSON_SAYING = {
    "en": re.compile(
        r"\b(?:i|i'd|i'll|i'm|i've|we|we'd|we'll|let me|let's)\s+(?:\w+\s+)?"
        r"(?:say|said|saying|tell|told|telling|call|calling|write|repeat|think|thought)\b"
    ),
    "zh": re.compile(r"(?<![跟对向给和让听])我(?:们)?(?:想|要|得|就|只|也|还是|必须|不得不|直接|老实|再|常|总){0,2}(?:说|讲|告诉|劝)"),
}
# A voice the reply makes up: what people in general, or anyone at all in a mood of maybe,
# would say ("some people would say", "as they say", "your family might tell you", 有人会说,
# 你家里人可能会说). Voiced without being turned down, it is the reply's own.
_MADE_UP_SPEAKER = {
    "en": re.compile(
        r"\b(?:some(?:one|body| people)?|people|others|anyone|everyone|(?:most|many|a lot of|plenty of) people|folks)\b"
        r".{0,20}?\b(?:would|might|will|could|may|probably|usually|often)\b|\bas (?:they|people) say\b"
        r"|\b(?:would|might|will|could|may|probably)\b(?:\s+\w+)?\s+(?:say|tell|call|think|ask)\b"
    ),
    "zh": re.compile(
        r"(?:有人|别人|人们|大家|旁人|外人|很多人|不少人|有些人|一般人|人家).{0,4}?(?:会|可能|也许|大概|估计|总|往往|肯定)"
        r"|(?:(?<!学)会|可能|也许|大概|估计|肯定)(?:会)?(?:说|讲|告诉|劝|觉得|认为)"
    ),
}
# Words a reply passes on: what its writer heard from someone of their own ("my grandma always
# said", "as my old coach used to say", "a friend of mine", "someone once told me", "I once
# heard", 我奶奶常说, 有个朋友跟我说过), a saying or a quotation it offers ("as the old saying
# goes", "as Einstein said", "in the words of", "a wise man once said", 俗话说, 正如……所说, 用……的话说,
# 一位智者说过), what it asks the user to imagine being told ("imagine a friend telling you",
# 想象有人对你说) or to tell themselves, repeat, write down or remember ("try telling yourself",
# "repeat after me", 对自己说, 记住这句). Not denied or turned down, they are the reply's own:
# what it chose to tell the user. (The user's people, "your dad
# said", 你妈说, and what the user may say to them, report or suggest words, not the reply's act.)
_PEOPLE = (
    r"grand(?:ma|mother|pa|father|parents)|gran|granny|nan|nana|mum|mom|mother|dad|father|parents?|brother|sister|aunt|"
    r"uncle|cousin|friend|coach|teacher|mentor|boss|therapist|counsell?or|doctor|colleague|partner|wife|husband|family|"
    r"folks|pastor|priest|rabbi|imam|professor|trainer|neighbou?r"
)
_PASSED_ON = {
    "en": re.compile(
        rf"\bmy\s+(?:\w+\s+){{0,2}}?(?:{_PEOPLE})s?\b|\b(?:a|one|an old) (?:\w+ )?(?:{_PEOPLE}) of mine\b"
        rf"|\b(?:(?:a|one|an old|some) (?:\w+ )?(?:{_PEOPLE})|someone|somebody)\b.{{0,20}}?\b(?:told|said to|taught|reminded) me\b"
        r"|\bi (?:\w+ )?(?:heard|read|learned|learnt)\b|\b(?:the|an?|that)(?: old)? (?:saying|proverb|adage|expression|quote)\b"
        r"|\bas\s+(?:[\w'’.-]+[\s,]+){1,5}?(?:say|says|said|put it|puts it|wrote|writes)\b|\bin the words of\b"
        r"|\b(?:someone|somebody|(?:a|one) (?:\w+ )?(?:man|woman|person|author|writer|poet|philosopher|psychologist|thinker))"
        r"\s+(?:once\s+)?(?:said|says|wrote|put it)\b"
        r"|\b(?:imagine|picture|pretend)\b.{0,40}?\b(?:tell|tells|telling|told|say|says|saying|said)(?: to)? you\b"
        r"|\b(?:tell|telling|say|saying|remind|reminding) yourself\b|\brepeat after me\b|\bwrite (?:this|it|that|these words)(?: down)?\b"
        r"|\bremember (?:this|these words)\b"
    ),
    "zh": re.compile(
        r"我(?:以前|之前|小时候|从前|上学时|高中|大学)?的?(?:一个|有个|一位|有位)?(?:奶奶|爷爷|外婆|姥姥|外公|姥爷|妈妈|妈|爸爸|爸|父母|"
        r"哥哥|姐姐|弟弟|妹妹|朋友|教练|老师|师父|师傅|导师|领导|老板|同事|医生|咨询师|家人|老公|老婆|爱人|姑姑|舅舅|姨|叔叔|长辈|前辈|邻居)"
        r"|(?:有个|一个|一位|有位)(?:朋友|老师|前辈|长辈|教练|智者|作家|哲人|哲学家|心理学家|名人)|俗话|老话|常言|古人|有句话|名言"
        r"|老人(?:家)?(?:常|总)?说|正如|就像.{0,10}?(?:说|讲|写)|(?:用|套用|借用)(?!你|您|自己).{0,10}?的话(?:来)?(?:说|讲)|有人(?:曾经|曾|早就)?说过"
        r"|(?:想象|假如|假设).{0,10}?(?:对你|跟你|告诉你)|(?:对|跟|告诉|提醒)自己|跟着我(?:一起)?(?:说|念|读)|跟我(?:一起)?(?:念|读)|跟我一起说|(?:写|记)下(?:这句|这些)|记住这句"
    ),
}
# Words with which a reply introduces its own ("in other words", "to put it plainly", "the words
# I'd use", "here's a line for you", "my answer", 换句话说, 说白了, 总之一句话, 讲真的): a saying
# verb or noun with no one else's voice in it.
_OWN_FRAME = {
    "en": re.compile(
        r"\bin other words\b|\b(?:to |let me )?(?:put|say|said|phrase)(?: it| that)?(?: another way| differently| simply| plainly|"
        r" bluntly| frankly| honestly| briefly| shortly)\b|\bword for word\b|\b(?:the )?words? i(?:'d| would| will|'ll)? use\b"
        r"|\bhere(?:'s| is) (?:a|the|my|one) (?:line|word|thing|phrase)\b"
        r"|\bmy (?:\w+ )?(?:answer|reply|response|advice|take|message|point|words?|line)\b"
    ),
    "zh": re.compile(
        r"换句话说|换言之|说白了|说到底|说穿了|说实话|说真的|讲真的|讲实话|直说吧|直白(?:地)?说|坦白(?:地)?说|老实(?:地)?说|"
        r"总之|总而言之|(?:总之|用)?一句话(?:说|讲|概括|总结)|简单(?:来|地)说(?![句声一])|简言之|说句(?:实话|真话|实在话|难听的|不好听的|心里话)|"
        r"我的(?:回答|回复|建议|意思|看法)"
    ),
}
# ... and words the reply endorses (`speech_acts.ENDORSED`).
# A Chinese negation: not 不过 ("but"), 不少, 不错, 不管..., 别人 ("others"), 别的.
_ZH_NEGATION = r"不(?!过|少|错|管|论|仅|但|同|久)|没|别(?!人|的|处)|并非"
_DENIED = {"en": re.compile(r"\b(?:not|never|no one|nobody)\b|n't\b"), "zh": re.compile(_ZH_NEGATION)}
# ... and turned down right after it: a turn, then a word that denies, in the same sentence
# ("..., but grief doesn't work like that", "……，其实这种话帮不上忙"); a "but" alone, or a denial of
# something else ("nobody's perfect", 没有人是完美的), turns nothing down.
_TURNED_DOWN = {
    "en": re.compile(r"[\s,;:—-]*(?:but|though|yet|and|which)\b[^.!?\n]{0,40}?(?:\b(?:not|never)\b|n't\b)"),
    "zh": re.compile(f"[，,、\\s]*(?:但|可是|不过|其实|然而)[^。！？\\n]{{0,12}}?(?:{_ZH_NEGATION})"),
}
_AFTER_CHARS = {"en": 60, "zh": 16}
# A quote mark: not an apostrophe ("don't", "it’s").
_QUOTE_MARK = re.compile(r"[\"“”「」『』‘]|(?<![A-Za-z])['’]|['’](?![A-Za-z])")
_DOUBLE_MARK = re.compile(r"[\"“”「」『』‘]")
_SAYING_AFTER = {
    "en": re.compile(
        r"[,.!?]?\s*(?:he|she|they|someone|somebody|people|everyone|your \w+|his \w+|her \w+|their \w+|[A-Z]\w+)\s+"
        r"(?:said|says|told|tells|asked|wrote|texted|yelled|snapped|would say|might say)\b"
    ),
    "zh": re.compile(r"(?:这种|那种|这样的|那样的|之类的|这类|这句|那句|这些|那些|的)?(?:话|说法|声音|念头|想法|字眼)"),
}


def own_voice(text: str, language: str, theirs: Callable[[str], bool] = lambda quote: False, *, marks: bool = False) -> str:
    """`text` with its quote marks taken off but those of the quotes it reports (see the module
    docstring), for the readers that leave those out, and without the frames that make a quote
    its own ("Like I said, ", "As Einstein said, "); a mark that closes no quote (a quote too
    long, or over a line break, for `QUOTED`) goes too. `theirs(quote)`: whether the words in
    quotes are the user's (the judge's reading: copied from their messages). With `marks`,
    only the frames go: the text as it is said, for the readers of its words and sentences.
    `text` itself where nothing goes."""
    if not _has_quote_mark(text):
        return text
    unmarked = (lambda part: part) if marks else (lambda part: _QUOTE_MARK.sub("", part))
    out, last = [], 0
    for match in QUOTED.finditer(text):
        start, end = match.span()
        own_from = _voice_of_quote(text, start, end, language)
        if own_from is None or theirs(text[start + 1 : end - 1]):
            out += (unmarked(text[last:start]), text[start:end])
            last = end
        elif own_from < start:  # the frame that made it the reply's own is no part of what it says
            out.append(unmarked(text[last : max(last, own_from)]))
            last = start
    out.append(unmarked(text[last:]))
    said = "".join(out)
    return text if said == text else said


def _has_quote_mark(text: str) -> bool:
    """`_QUOTE_MARK.search(text)`, sooner: most replies hold apostrophes only ("it's")."""
    if _DOUBLE_MARK.search(text):
        return True
    for mark in "'’":
        at = text.find(mark)
        while at != -1:
            if not (0 < at < len(text) - 1 and _ascii_letter(text[at - 1]) and _ascii_letter(text[at + 1])):
                return True
            at = text.find(mark, at + 1)
    return False


def _ascii_letter(char: str) -> bool:
    return char.isascii() and char.isalpha()


def _voice_of_quote(text: str, start: int, end: int, language: str) -> int | None:
    """None where the quote at `text[start:end]` is said to be someone's: with a verb of saying
    before it in its sentence or right after it; not the reply's own (endorsed, `speech_acts.ENDORSED`;
    in the first person or introduced as its own, `_OWN_FRAME`, unless denied) nor a voice it
    makes up (people in general) or passes on (`_PASSED_ON`: its own people's, a saying, words
    to imagine or to tell oneself), unless denied or turned down after it. Else where the
    reply's own words begin: at the frame that made the quote its own ("As my old coach used
    to say: "..."", which the readers of its act then read as the words alone, as a person
    does), or at the quote. The frame is the clause that names the voice (`_frame_clause`):
    what the reply says before it in the sentence ("Stop whining, as my grandma always said:
    ...") is its own and read."""
    window = max(0, start - _FRAME_CHARS[language])
    parts = _FRAME_START.split(text[window:start])
    frame = parts[-1].lower()
    after = text[end : end + _AFTER_CHARS[language]].lower()
    if _SAYING[language].search(frame):
        framed, speaker = True, frame
    elif _SAYING_AFTER[language].match(text, end):
        framed, speaker = False, after
    else:
        return start
    # the frame is said in its own sentence: a window without a sentence's start may hold more
    whole = len(parts) > 1 or window == 0

    def own_from(voice: re.Match[str]) -> int:
        return _frame_clause(text, start, frame, voice.start(), whole) if framed else start

    if endorsed := ENDORSED[language].search(speaker):
        return own_from(endorsed)
    denied = bool(_DENIED[language].search(frame))
    if own := _FIRST_PERSON_SAYING[language].search(frame) or _OWN_FRAME[language].search(frame):
        return None if denied else own_from(own)
    if voice := _MADE_UP_SPEAKER[language].search(speaker) or _PASSED_ON[language].search(speaker):
        return None if denied or _TURNED_DOWN[language].match(text, end) else own_from(voice)
    return None


# Where a quote's frame clause begins: after the last clause mark before the words that name
# the voice.
_CLAUSE_MARKS = ",;:，；：、"


def _frame_clause(text: str, start: int, frame: str, voice_at: int, whole: bool) -> int:
    """Where the clause of the frame (`frame`, the lowered text before the quote at `start` in
    its sentence, or in the window before it) that names the voice (at `voice_at` in `frame`)
    begins in `text`: after the last clause mark before it, or at the sentence's start; at the
    quote where the window does not hold the sentence's start (`whole`): a frame that long is
    more likely a misreading than a frame."""
    if not whole:
        return start
    begin = start - len(frame) + max(frame.rfind(mark, 0, voice_at) for mark in _CLAUSE_MARKS) + 1
    return begin + len(text[begin:start]) - len(text[begin:start].lstrip())


OTHER_LANGUAGE = {"en": "zh", "zh": "en"}
# Chinese in an English reply: from a Chinese character on, through Chinese characters,
# Chinese and full-width marks, digits and spaces.
_CHINESE_STRETCH = re.compile(f"[{ZH_CHAR}][{ZH_CHAR}{_CJK}0-9 …—]*")
_CHINESE_CHAR = re.compile(f"[{ZH_CHAR}]")
# English in a Chinese reply: English words joined by spaces and Latin punctuation.
_ENGLISH_STRETCH = re.compile(r"[A-Za-z][A-Za-z'’-]*(?:[,.;:!?)-]*\s+\(?[A-Za-z][A-Za-z'’-]*)*[.!?]?")
_ENGLISH_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_LATIN_LETTER = re.compile("[A-Za-z]")
_LEAST_OTHER = {"en": 6, "zh": 4}  # Chinese characters in an English reply; English words in a Chinese one
_LEAST_ENGLISH_RUN = 3  # a Chinese reply's English terms ("SWOT", "deadline") are no English text


# Titles (《Let It Go》) and what stays quoted after `own_voice` (someone else's words) are no part of what the reply says.
_TITLE = re.compile(r"《[^》\n]{1,100}》")


def in_other_language(text: str, language: str) -> str:
    """What `text`, a reply in `language` ("en" or "zh"), says in the other language: its
    stretches in that language outside quotes and titles, one to a line, or "" when there is
    too little of it to read (under six Chinese characters, or four English words in runs of
    three or more words, each after a space: "support.microsoft.com" is an address)."""
    if text.isascii() if language == "en" else not _LATIN_LETTER.search(text):
        return ""
    text = QUOTED.sub("\n", _TITLE.sub("\n", text))
    if language == "en":
        parts = [m.group(0).strip() for m in _CHINESE_STRETCH.finditer(text)]
        count = sum(len(_CHINESE_CHAR.findall(part)) for part in parts)
    else:
        parts = [m.group(0) for m in _ENGLISH_STRETCH.finditer(text)]
        parts = [part for part in parts if len(_ENGLISH_WORD.findall(part)) >= _LEAST_ENGLISH_RUN]
        count = sum(len(_ENGLISH_WORD.findall(part)) for part in parts)
    return "\n".join(parts) if count >= _LEAST_OTHER[language] else ""
