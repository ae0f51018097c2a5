"""East Asian text in a legacy code page: which one, if any (for `vault.encoding`).

Chinese, Japanese and Korean files written before UTF-8 (or by Windows in its "ANSI" code page)
are GBK/GB18030, Big5, Shift JIS (CP932), EUC-JP or EUC-KR (CP949). None is marked, and their
bytes overlap: GB2312, EUC-JP and EUC-KR share one byte structure, and GBK and CP949 decode
nearly any pair of high bytes. What tells them apart is what the text holds when decoded:

- Korean is Hangul syllables (of the 2350 common ones, KS X 1001) in short words between spaces;
  other text read as Korean gives Hanja or clause-long runs of syllables.
- Japanese writes kana between its kanji (a tenth of its letters at least); Chinese and Korean
  bytes read as Japanese give none, or half-width katakana strewn one by one.
- Simplified Chinese is ideographs of GB2312 (the common set), without kana or Hangul; Big5 or
  Shift JIS bytes read as GBK give rare ideographs of its extensions, or private-use code points.
- Traditional Chinese is ideographs of Big5's common set (level 1).

Each code page is tried in that order, and the first whose reading of the sample is plain text
(no control character, unassigned or private-use code point, few characters that are neither
ASCII nor East Asian, few ideographs alone between ASCII letters) and fits its language wins.
Latin text in Windows-1252 fits none: its accented letters, read so, are lone ideographs or
decode errors. But a few words of European text in an 8-bit code page may read as ideographs
too: Cyrillic (Windows-1251, KOI8-R) and Greek letters are all high bytes, so "МОСКВА" in
Windows-1251 is three GB2312 ideographs, and "ÄÖÜß" two. Bytes that read as words of a European
8-bit code page (`european`) are none of them: each word of one script, in one case, or
capitalised, and no symbol between two letters. East Asian bytes read so give words of mixed
case and symbols between letters (GB2312's lead bytes are capitals in Windows-1251 and -1252,
its trail bytes any letter or symbol).
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

NAMES = {"cp949": "EUC-KR", "euc_jp": "EUC-JP", "cp932": "Shift JIS", "gb18030": "GB18030", "cp950": "Big5"}
# European 8-bit code pages by their common names (`european_codec`)
EUROPEAN_NAMES = {
    **{f"cp125{n}": f"Windows-125{n}" for n in "0123457"},
    "koi8_r": "KOI8-R",
    "mac_roman": "Mac Roman",
}
_OTHER_SHARE = 0.1  # of the non-ASCII characters, at most, neither East Asian nor a symbol of the code page's own
_LONE_SHARE = 0.2  # of the East Asian letters, at most, alone and glued to ASCII letters (an accent read so)
_HANGUL_SHARE = 0.9  # of a Korean text's letters, at least, Hangul syllables
_HANGUL_RUN = 6.0  # syllables a Korean word has, on average, at most (a Chinese clause read so has more)
_KANA_SHARE = 0.1  # of a Japanese text's letters, at least, kana (prose holds a third to a half)
_COMMON_SHARE = 0.9  # of a Chinese text's ideographs (a Korean text's syllables), at least, of the common set
_STRAY_KANA = 0.02  # of a Chinese text's letters, at most, kana (a Japanese name, say)
_HANGUL = range(0xAC00, 0xD7A4)  # syllables
# Syllables of Korean's particles and verb endings, one of which nearly every sentence holds (and
# but a few of the 2350 other text read as Hangul gives)
_PARTICLES = frozenset("이가은는을를에의도로으와과만서께한하합했해니다요고지게기면어아았었것수있없들시습데라나")
_NOT_TEXT = frozenset({"Cc", "Cn", "Co", "Cs"})
_TEXT_CONTROLS = frozenset("\t\n\r\f\v\x1b")


@dataclass(frozen=True, slots=True)
class _Letters:
    """What a reading holds: its East Asian letters by kind, and the characters that count against it."""

    text: str
    hangul: int = 0
    kana: int = 0
    han: int = 0
    other: int = 0  # non-ASCII characters neither East Asian nor a plain symbol
    lone: int = 0  # East Asian letters with no East Asian neighbour, but an ASCII letter or digit (Hangul: two)

    @property
    def letters(self) -> int:
        return self.hangul + self.kana + self.han


def legacy_codec(sample: bytes) -> str | None:
    """The code page (a Python codec name, see `NAMES`) whose reading of `sample` is East Asian
    text of its own language, or None. `sample` is not UTF-8; a pair cut at its end is no error.
    Words of a European 8-bit code page (`european`) are none."""
    if european(sample):
        return None
    for codec, fits in _LANGUAGES:
        try:
            text = codecs.getincrementaldecoder(codec)().decode(sample, final=False)
        except UnicodeDecodeError:
            continue
        letters = _letters(text)
        if letters is not None and letters.letters > 1 and fits(letters):  # one letter tells nothing
            return codec
    return None


def _letters(text: str) -> _Letters | None:
    """The counts of `text` (see `_Letters`), or None when it holds what no text does."""
    kinds = [_kind(ch) for ch in text]
    if "bad" in kinds:
        return None
    lone = 0
    for i, kind in enumerate(kinds):
        if kind in _EAST_ASIAN:
            before, after = kinds[i - 1] if i else "", kinds[i + 1] if i + 1 < len(kinds) else ""
            if before not in _EAST_ASIAN and after not in _EAST_ASIAN:  # glued to an ASCII letter (Hangul: two)
                lone += before == after == "ascii" if kind == "hangul" else "ascii" in (before, after)
    count = kinds.count
    return _Letters(text, count("hangul"), count("kana"), count("han"), count("other"), lone)


_EAST_ASIAN = frozenset({"hangul", "kana", "han", "cjk"})


def _kind(ch: str) -> str:
    code = ord(ch)
    if code < 0x80:
        return "ascii" if ch.isalnum() else "bad" if (ch < " " and ch not in _TEXT_CONTROLS) or ch == "\x7f" else "mark"
    if code in _HANGUL:
        return "hangul"
    if 0x3041 <= code <= 0x30FA:
        return "kana"
    if 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0xF900 <= code <= 0xFAFF:
        return "han"
    category = unicodedata.category(ch)
    if category in _NOT_TEXT or ch == "\ufffd":
        return "bad"
    if 0x3000 <= code <= 0x303F or 0x30FB <= code <= 0x30FF or 0xFF01 <= code <= 0xFF60 or 0xFFE0 <= code <= 0xFFE6:
        return "cjk"  # CJK punctuation and full-width forms
    return "mark" if category[0] in "PSZ" else "other"  # a symbol of the code page (※, →, ①) or a letter of another script


def _plain(letters: _Letters) -> bool:
    non_ascii = sum(1 for ch in letters.text if ch >= "\x80")
    return letters.other <= _OTHER_SHARE * non_ascii and letters.lone <= _LONE_SHARE * letters.letters


def _korean(letters: _Letters) -> bool:
    """Hangul of KS X 1001, in words of a few syllables, one of them a particle or an ending."""
    if not _plain(letters) or letters.hangul < _HANGUL_SHARE * letters.letters:
        return False
    syllables = [ch for ch in letters.text if ord(ch) in _HANGUL]
    if sum(1 for ch in syllables if len(_encoded(ch, "euc_kr")) == 2) < _COMMON_SHARE * len(syllables):
        return False
    runs = "".join(ch if ord(ch) in _HANGUL else " " for ch in letters.text).split()
    return len(syllables) <= _HANGUL_RUN * len(runs) and any(ch in _PARTICLES for ch in syllables)


def _japanese(letters: _Letters) -> bool:
    """Kana between the kanji, no Hangul."""
    return _plain(letters) and not letters.hangul and letters.kana >= _KANA_SHARE * letters.letters


def _chinese(common: Callable[[str], bool]) -> Callable[[_Letters], bool]:
    """Ideographs of the `common` set, hardly any kana, no Hangul."""

    def fits(letters: _Letters) -> bool:
        if not _plain(letters) or letters.hangul or letters.kana > _STRAY_KANA * letters.letters:
            return False
        ideographs = [ch for ch in letters.text if _kind(ch) == "han"]
        return sum(1 for ch in ideographs if common(ch)) >= _COMMON_SHARE * len(ideographs)

    return fits


def _encoded(ch: str, codec: str) -> bytes:
    """`ch` in `codec`, or nothing. (Python's EUC-KR writes the syllables KS X 1001 lacks as
    eight bytes of jamo: the common ones are those of two.)"""
    try:
        return ch.encode(codec)
    except UnicodeEncodeError:
        return b""


def _big5_level1(ch: str) -> bool:
    """Whether `ch` is of Big5's frequently used ideographs (A440-C67E)."""
    pair = _encoded(ch, "cp950")
    return len(pair) == 2 and 0xA440 <= int.from_bytes(pair, "big") <= 0xC67E


_LANGUAGES: tuple[tuple[str, Callable[[_Letters], bool]], ...] = (
    ("cp949", _korean),
    ("euc_jp", _japanese),
    ("cp932", _japanese),
    ("gb18030", _chinese(lambda ch: bool(_encoded(ch, "gb2312")))),
    ("cp950", _chinese(_big5_level1)),
)


# European 8-bit code pages (Windows' "ANSI" ones, KOI8-R, Mac Roman), each with its letters' script
_EUROPEAN = (
    ("cp1252", "LATIN"),
    ("cp1250", "LATIN"),
    ("cp1254", "LATIN"),
    ("cp1257", "LATIN"),
    ("mac_roman", "LATIN"),
    ("cp1251", "CYRILLIC"),
    ("koi8_r", "CYRILLIC"),
    ("cp1253", "GREEK"),
)
_BEFORE = frozenset("«“„‘‚‹¡¿–—")
_AFTER = frozenset("»”’›…°%€–—")
_IN_WORD = frozenset("'’-·")  # between two letters of a word: l'été, Saint-Étienne, col·lecció
_ODD_WORDS = 0.1  # of the words holding a letter past ASCII, at most, not words of the code page
_WORDS_SURE = 4  # of a sample's words holding a letter past ASCII, at least, to name its code page
_WORDS_READ = 64  # of a sample's words holding a letter past ASCII, those read (enough to tell, and fast)
_RUN_RE = re.compile(r"\S+")


def european(sample: bytes) -> bool:
    """Whether `sample` (not UTF-8) reads as words of a European 8-bit code page (see the
    module doc): of its first words holding a letter past ASCII (`_WORDS_READ`), hardly any is
    of letters of two scripts or of mixed case ("ИёАЗ", "ÎÒÃÇÔÚ" is one case but "ÎÒÃÇÔÚº¼"
    holds a symbol). A code page is left at the first words too many that are not its own."""
    return any(_reading(sample, codec, script) is not None for codec, script in _EUROPEAN)


def european_codec(sample: bytes) -> str | None:
    """The European 8-bit code page `sample` (not UTF-8) is in, or None: the first of
    `_EUROPEAN` it reads as words of (`european`) — at least `_WORDS_SURE` of them —, a Latin
    one only when most of its words with an accented letter hold an ASCII letter too ("Café").
    Cyrillic or Greek read in a Latin code page are words of accented letters alone ("Ïðèâåò"
    for "Привет" in Windows-1251), and Latin read in a Cyrillic one mixes two scripts in a
    word ("Cafй")."""
    for codec, script in _EUROPEAN:
        words = _reading(sample, codec, script)
        if words is not None and len(words) < _WORDS_SURE:
            return None  # a few words read as several code pages ("ÄÖÜß" is "ДЦЬЯ" in Windows-1251)
        if words is not None and (script != "LATIN" or 2 * _with_ascii(words) > len(words)):
            return codec
    return None


def _reading(sample: bytes, codec: str, script: str) -> list[str] | None:
    """The words holding a letter past ASCII that `sample` read in `codec` gives (its first
    `_WORDS_READ`), when hardly any is not a word of `script`; else None."""
    try:
        text = sample.decode(codec)
    except UnicodeDecodeError:
        return None
    words: list[str] = []
    odd = 0
    for word in _words(text):
        if word.isascii() or not any(ch.isalpha() and not ch.isascii() for ch in word):
            continue
        words.append(word)
        odd += not _word_of(word, script)
        if len(words) == _WORDS_READ or odd > _ODD_WORDS * _WORDS_READ:
            break
    return words if words and odd <= _ODD_WORDS * len(words) else None


def _with_ascii(words: list[str]) -> int:
    return sum(1 for word in words if any(ch.isascii() and ch.isalpha() for ch in word))


def _words(text: str) -> Iterator[str]:
    """The runs of `text` between spaces, without the punctuation European text puts before a
    word ("«Ça", "¿Qué", "(20") or after it ("va?»", "20°C,", "5€"): the rest, symbols included,
    is the word."""
    for match in _RUN_RE.finditer(text):
        run = match.group()
        start, end = 0, len(run)
        while start < end and (run[start] in _BEFORE or (run[start].isascii() and not run[start].isalnum())):
            start += 1
        while end > start and (run[end - 1] in _AFTER or (run[end - 1].isascii() and not run[end - 1].isalnum())):
            end -= 1
        if start < end:
            yield run[start:end]


def _word_of(word: str, script: str) -> bool:
    """Whether `word` is a word of `script`: its letters (ASCII ones too for Latin), combining
    marks, digits and the joiners of `_IN_WORD` only, and each part between digits ("3ème",
    "1º") all lower or upper case, or capitalised. A word of no letter past ASCII ("20°C") is
    one of any."""
    for part in "".join(" " if "0" <= ch <= "9" else ch for ch in word).split():
        cases = ""
        for ch in part:
            if ch in _IN_WORD or unicodedata.category(ch) == "Mn":
                continue
            if not ch.isalpha() or (ch.isascii() and script != "LATIN"):
                return False
            if not ch.isascii() and not _script_of(ch).startswith(script):
                return False
            if ch.isupper() or ch.islower():  # ª, º and ß have no capital
                cases += "U" if ch.isupper() else "l"
        if "U" in cases[1:] and "l" in cases:
            return False
    return True


@cache
def _script_of(ch: str) -> str:
    """The Unicode name of `ch` (its script's name first), looked up once per letter."""
    return unicodedata.name(ch, "")
