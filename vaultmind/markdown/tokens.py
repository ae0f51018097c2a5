"""Token estimates without a tokenizer.

`count_tokens` comes close to what real tokenizers give English prose yet never counts fewer
than they give numbers, identifiers, hashes, capitals or non-Latin text, so a chunk that fits
the estimate fits the model. Weights per character, in quarter tokens:

- a space or tab: 0 (tokenizers join the space to the word after it), or 1 after a space or
  tab (indentation) or opening the text; a line break: 4;
- a letter starting a run of ASCII letters: 4; inside a run, an uppercase letter: 4 (camelCase
  and capitals break into pieces), but 2 after an uppercase letter among the 2nd to 6th
  letters of a run after a space or tab (an ALL-CAPS word: pieces of about two letters; a
  random run of capitals still counts a token a letter past its 6th, and after a line break,
  punctuation or a digit); a lowercase one by where its run started: after whitespace,
  a line break or a non-ASCII character (a word): 0 for the run's 2nd to 6th letters, 2 from
  the 7th (long words take more pieces); after punctuation (paths, links, `+`-joined base64): 1,
  then 2; after a digit or opening the text (hashes, base64, ids): 4;
- a digit: 4 (many tokenizers give every digit its own token); 5 after a letter (hex, base64,
  UUIDs); 8 after whitespace or opening the text (the space before a number is a token of its
  own too);
- any other ASCII character (punctuation): 4;
- a non-ASCII character: 4 for two bytes of UTF-8 (accents, Cyrillic), but 2 for a Cyrillic
  character (U+0400–U+04FF) after one (Russian, Ukrainian words: the vocabularies hold their
  pieces) and 5 for the other alphabets of two bytes (Greek, Armenian, Hebrew, Arabic: U+0370–
  U+03FF and U+0500–U+07FF, which a vocabulary with few of them gives a token a character and
  more); 6 for three (CJK, kana, Hangul, Indic scripts, Thai), 16 for four (emoji, rare CJK): a
  character outside a vocabulary falls back to one token per byte.

The total is rounded up. A character's weight depends on the characters before it (back to the
start of its run of letters), and a text's opening weighs the most it can (its first run of
letters counts 4 a letter): a text's count is at most the sum of its parts' counts, so cutting
a text never makes its pieces count less than the whole.

The functions are C-speed, never a Python loop per character: a character's class and its
weight by the class before it are `bytes.translate` lookups; a long text (and any running
count) is weighed with numpy over one byte a character, a letter's place in its run found by
looking back at most seven characters (six shifted masks, numpy comparisons), a long run after
a digit by where its 7th letter is and a capital after a capital at its own places; a short one
is summed by `bytes` operations, its runs of letters weighed by a few regex searches over its
classes (no Python step per run). Cyrillic and the other alphabets are looked for by their
UTF-8 lead bytes before any search of the characters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

# The smallest token budget of a leaf: a heading prefix (up to a quarter of the budget) must
# leave room for text. A configured budget below it is an error (`config`).
MIN_CHUNK_TOKENS = 64
# The most characters a token can hold: "Xxxxxx " (a run of six letters after whitespace and a
# space) weighs 4 quarters; nothing holds more characters for its weight. A text of n tokens
# has at most 7n + 7 characters (its opening weighs more).
MAX_CHARS_PER_TOKEN = 7

_FULL = 4  # quarters of a digit, a punctuation mark, a line break, a letter starting a run
_IN_SPACE = 1  # quarters of a space or tab after one
_DIGIT_AFTER_LETTER = 5
_NUMBER_START = 8  # quarters of a digit after whitespace: the whitespace is a token of its own
_THREE_BYTES = 6
_FOUR_BYTES = 16
_SHORT_WORD = 6  # a word's first six letters are about one token
_LONG_WORD_LETTER = 2  # quarters of a lowercase letter of a word from its 7th
_AFTER_PUNCTUATION = 1  # quarters of a lowercase letter (to the 6th) of a run after punctuation
_CAPS_IN_WORD = 2  # quarters of an uppercase letter after one, to a run's 6th after a space
_CYRILLIC_AFTER_CYRILLIC = 2  # quarters of a Cyrillic character after one (a word's letters)
_OTHER_SCRIPT = 5  # quarters of a Greek, Armenian, Hebrew, Arabic … character (two bytes)

# character classes by code point: ASCII by `_CLASS`, any other by its UTF-8 length
_OTHER, _SPACE, _BREAK, _LOWER, _UPPER, _DIGIT, _TWO, _THREE, _FOUR = range(9)
_OPENING = 9  # the class "before" a text's first character
_CLASSES = _OPENING + 1
_CLASS = np.full(129, _TWO, dtype=np.uint8)  # code points of 128 and more as 128
_CLASS[:128] = _OTHER
_CLASS[list(b" \t")] = _SPACE
_CLASS[list(b"\n\r\x0b\x0c")] = _BREAK
_CLASS[ord("a") : ord("z") + 1] = _LOWER
_CLASS[ord("A") : ord("Z") + 1] = _UPPER
_CLASS[ord("0") : ord("9") + 1] = _DIGIT
_CLASS_OF_BYTE = bytes(_CLASS.tolist()) + bytes([_TWO] * 127)  # by `bytes.translate`: 128 and on as two bytes
# quarters of a character by (class before it, its class); a lowercase letter inside a run of
# letters is then weighed by `_IN_RUN` instead
_WEIGHT = np.zeros((_CLASSES, _CLASSES), dtype=np.int64)  # (no character is of class _OPENING)
_WEIGHT[:, :_OPENING] = [_FULL, 0, _FULL, _FULL, _FULL, _FULL, _FULL, _THREE_BYTES, _FOUR_BYTES]
_WEIGHT[[_SPACE, _OPENING], _SPACE] = _IN_SPACE
_WEIGHT[[_LOWER, _UPPER], _DIGIT] = _DIGIT_AFTER_LETTER
_WEIGHT[[_SPACE, _OPENING], _DIGIT] = _NUMBER_START
_WEIGHT[[_LOWER, _UPPER], _LOWER] = 0  # (by `_IN_RUN`)
# quarters of a lowercase letter inside a run by (class before the run, its place in the run:
# 1 for the 2nd letter … `_SHORT_WORD` for the 7th and on)
_IN_RUN = np.full((_CLASSES, _SHORT_WORD + 1), _FULL, dtype=np.uint8)
_IN_RUN[[_SPACE, _BREAK, _TWO, _THREE, _FOUR], 1:_SHORT_WORD] = 0
_IN_RUN[_OTHER, 1:_SHORT_WORD] = _AFTER_PUNCTUATION
_IN_RUN[[_SPACE, _BREAK, _TWO, _THREE, _FOUR, _OTHER], _SHORT_WORD] = _LONG_WORD_LETTER
# the tables as `bytes.translate` tables (a byte's value, by the byte)
_WEIGHT_OF_PAIR = bytes(_WEIGHT.ravel().tolist()) + bytes(256 - _CLASSES * _CLASSES)
_LETTER_RUN_RE = re.compile(r"[A-Za-z]+")
# for `token_quarters` of a short text, by `bytes`
_SHORT_TEXT = 512
_OPENING_BYTE = bytes([_OPENING])
_WEIGHTS = sorted(set(_WEIGHT_OF_PAIR) - {0})  # the weights a character can have before `_IN_RUN`
_CLASS_OF_MARK = _CLASS_OF_BYTE[: ord("?")] + bytes([_TWO]) + _CLASS_OF_BYTE[ord("?") + 1 :]  # "?" marks a non-ASCII character
_TIMES_CLASSES = bytes(min(b * _CLASSES, 255) for b in range(256))  # (class before, class) a byte, as their sum
# a run's 7th letter on, in the classes with every class but a letter's as 0: each match then
# starts at a run's opening (a search for one byte, not an attempt at every letter)
_LETTER_OF_CLASS = bytes(c if c in (_LOWER, _UPPER) else 0 for c in range(256))
_LONG_RUN_RE = re.compile(b"\x00[%c%c]{%d}([%c%c]+)" % (_LOWER, _UPPER, _SHORT_WORD, _LOWER, _UPPER))
# a run after punctuation or a digit: its 2nd to 6th letters, and (after a digit) its 7th on
# with what its lowercase letters weigh more than `_LONG_RUN_RE` counts (by `_IN_RUN`)
_WORD_AFTER = [
    (re.compile(b"%c[%c%c]([%c%c]{1,%d})" % (before, _LOWER, _UPPER, _LOWER, _UPPER, _SHORT_WORD - 1)), int(_IN_RUN[before, 1]))
    for before in (_OTHER, _DIGIT)
]
_LONG_AFTER_DIGIT_RE = re.compile(b"%c[%c%c]{%d}([%c%c]+)" % (_DIGIT, _LOWER, _UPPER, _SHORT_WORD, _LOWER, _UPPER))
_LONG_AFTER_DIGIT = int(_IN_RUN[_DIGIT, _SHORT_WORD]) - _LONG_WORD_LETTER
assert int(_IN_RUN[_OTHER, _SHORT_WORD]) == _LONG_WORD_LETTER  # a long run after punctuation: as a word's
_DIGIT_BYTE = bytes([_DIGIT])
_TWO_BYTE = bytes([_TWO])
# a lowercase letter's quarters in a run's 2nd to 6th letters, by the class before the run
_BACK = _SHORT_WORD + 1  # how far back a letter's place in its run is looked for
_LOWER_IN_RUN_PAIRS = [before * _CLASSES + _LOWER for before in (_LOWER, _UPPER)]
# the classes before a run whose 2nd to 6th lowercase letters weigh more than nothing, by weight
_SHORT_IN_RUN = [
    (weight, [c for c in range(_CLASSES) if c not in (_LOWER, _UPPER) and _IN_RUN[c, 1] == weight])
    for weight in sorted(set(_IN_RUN[:, 1].tolist()) - {0})
]
assert (_IN_RUN[:, 1:_SHORT_WORD] == _IN_RUN[:, 1:2]).all()  # the same for each of them
# an uppercase letter after one (by pair), the class before a run where it weighs less (by
# class); for a short text, such a run's opening pair then its 2nd to 6th letters' pairs, the
# uppercase after one counted
_CAPS_AFTER = (_SPACE,)
_CAPS_PAIR = _UPPER * _CLASSES + _UPPER


def _pair_set(pairs: list[int]) -> bytes:
    return b"[" + b"".join(re.escape(bytes([pair])) for pair in pairs) + b"]"


_CAPS_IN_WORD_RE = re.compile(
    _pair_set([before * _CLASSES + letter for before in _CAPS_AFTER for letter in (_LOWER, _UPPER)])
    + _pair_set([before * _CLASSES + letter for before in (_LOWER, _UPPER) for letter in (_LOWER, _UPPER)])
    + b"{1,%d}" % (_SHORT_WORD - 1)
)
# Cyrillic characters (two bytes of UTF-8), more than one in a row
_CYRILLIC_RUN_RE = re.compile("[\u0400-\u04ff]{2,}")
_CYRILLIC_FIRST, _CYRILLIC_POINTS = 0x400, 0x100
# the other alphabets of two bytes: Greek and Coptic, then Armenian to NKo (Latin's accents and
# combining marks, and Cyrillic, are not among them)
_OTHER_SCRIPT_RE = re.compile("[\u0370-\u03ff\u0500-\u07ff]+")
_OTHER_SCRIPT_RANGES = ((0x370, 0x400), (0x500, 0x800))
# whether a text may hold either, by the first bytes of their UTF-8 (searches for one byte,
# not a regex's attempt at every character)
_CYRILLIC_LEADS = [bytes([lead]) for lead in range(0xD0, 0xD4)]
_OTHER_SCRIPT_LEADS = [bytes([lead]) for lead in (*range(0xCD, 0xD0), *range(0xD4, 0xE0))]


def _scripts(utf8: bytes) -> tuple[bool, bool]:
    """Whether a text (as UTF-8) may hold Cyrillic, and characters of `_OTHER_SCRIPT_RE`."""
    return any(lead in utf8 for lead in _CYRILLIC_LEADS), any(lead in utf8 for lead in _OTHER_SCRIPT_LEADS)
# as Python lists, for `opening_discount`'s one character
_OPENING_WEIGHT: list[int] = _WEIGHT[_OPENING].tolist()
_CLASS_OF_POINT: list[int] = _CLASS.tolist()


def count_tokens(text: str) -> int:
    """A conservative token count (the weights above), rounded up."""
    return (token_quarters(text) + 3) // 4


def token_quarters(text: str) -> int:
    """`count_tokens` before rounding, in quarter tokens. `token_quarters(a + b)` is at most
    `token_quarters(a) + token_quarters(b)`, less by what `b`'s opening weighs less after `a`
    (`opening_discount`)."""
    if not text or len(text) >= _SHORT_TEXT:
        return int(_weights(text).sum(dtype=np.int64)) if text else 0
    # a short text by `bytes` (numpy's fixed cost is larger): a non-ASCII character as "?",
    # what three and four bytes weigh more added after
    if text.isascii():
        ascii_text = text.encode("ascii")
        classes = ascii_text.translate(_CLASS_OF_BYTE)
    else:
        ascii_text = text.replace("?", "!").encode("ascii", "replace")
        classes = ascii_text.translate(_CLASS_OF_MARK)
    befores = (_OPENING_BYTE + classes[:-1]).translate(_TIMES_CLASSES)
    pairs = (int.from_bytes(befores, "little") + int.from_bytes(classes, "little")).to_bytes(len(classes), "little")
    weights = pairs.translate(_WEIGHT_OF_PAIR)
    total = sum(weight * weights.count(weight) for weight in _WEIGHTS)  # (`bytes.count` is C-speed, `sum` of the bytes not)
    # a lowercase letter inside a run of letters: from its run's 7th letter on, 2 (a word's); a
    # run after punctuation or a digit, or opening the text, weighs more
    marked = _DIGIT_BYTE + classes  # the opening weighs as a digit before a run
    total += _LONG_WORD_LETTER * b"".join(_LONG_RUN_RE.findall(marked.translate(_LETTER_OF_CLASS))).count(_LOWER)
    for word_re, quarters in _WORD_AFTER:
        total += quarters * b"".join(word_re.findall(marked)).count(_LOWER)
    total += _LONG_AFTER_DIGIT * b"".join(_LONG_AFTER_DIGIT_RE.findall(marked)).count(_LOWER)
    # an ALL-CAPS word's uppercase letters after its first, to the 6th, weigh less (after a space)
    if _CAPS_PAIR in pairs:  # (a search for one byte, by its value)
        total -= (_FULL - _CAPS_IN_WORD) * b"".join(_CAPS_IN_WORD_RE.findall(pairs)).count(_CAPS_PAIR)
    utf8 = text.encode("utf-8", "surrogatepass")
    if len(ascii_text) != len(utf8):
        has_cyrillic, has_other_script = _scripts(utf8)
        if has_cyrillic:
            cyrillic = _CYRILLIC_RUN_RE.findall(text)
            total -= (_FULL - _CYRILLIC_AFTER_CYRILLIC) * (len("".join(cyrillic)) - len(cyrillic))
        if has_other_script:
            total += (_OTHER_SCRIPT - _FULL) * len("".join(_OTHER_SCRIPT_RE.findall(text)))
        four = len(text.encode("utf-16-le", "surrogatepass")) // 2 - len(text)  # a surrogate pair each
        non_ascii = len(text) - len(text.encode("ascii", "ignore"))
        three = len(utf8) - (len(text) - non_ascii) - 2 * non_ascii - 2 * four
        total += (_THREE_BYTES - _FULL) * three + (_FOUR_BYTES - _FULL) * four
    return total


def running_quarters(text: str) -> npt.NDArray[np.int64]:
    """`token_quarters(text[:i])` for every i in 0..len(text), in one pass: the tokens of any
    span are then a difference plus its `opening_discount` (a chunker that grows a chunk line
    by line counts it in O(1) instead of again from its start)."""
    out = np.zeros(len(text) + 1, dtype=np.int64)
    if text:
        np.cumsum(_weights(text), dtype=np.int64, out=out[1:])
    return out


def opening_discount(text: str, start: int, running: npt.NDArray[np.int64], end: int | None = None) -> int:
    """The quarters `text[start:end]` counts more alone than inside `text` (`running` is
    `running_quarters(text)`): `token_quarters(text[start:end])` is
    `running[end] - running[start]` plus this. Only its opening differs: its first character,
    or its first run of letters, which opening a text counts 4 a letter."""
    end = len(text) if end is None else end
    if start <= 0 or start >= end:
        return 0
    run = _LETTER_RUN_RE.match(text, start, end)
    if run is not None:
        return _FULL * (run.end() - start) - int(running[run.end()] - running[start])
    point = ord(text[start])
    alone = _OPENING_WEIGHT[_CLASS_OF_POINT[min(point, 128)] + (point >= 0x800) + (point >= 0x10000)]
    if any(first <= point < stop for first, stop in _OTHER_SCRIPT_RANGES):
        alone += _OTHER_SCRIPT - _FULL
    return alone - int(running[start + 1] - running[start])


def _any_of(values: npt.NDArray[np.uint8], wanted: Sequence[int]) -> npt.NDArray[np.bool_]:
    """Where `values` is one of `wanted` (a comparison each: `np.isin` would gather by a table)."""
    found: npt.NDArray[np.bool_] = values == wanted[0]
    for value in wanted[1:]:
        found |= values == value
    return found


def _weights(text: str) -> npt.NDArray[np.uint8]:
    """The quarters of each character of a non-empty text, by the weights above (every table
    lookup a `bytes.translate`)."""
    cyrillic_after: npt.NDArray[np.bool_] | None = None  # a Cyrillic character after one, by the second
    other_script: npt.NDArray[np.bool_] | None = None  # a character of `_OTHER_SCRIPT_RE`
    if text.isascii():  # a byte a character
        class_bytes = text.encode("ascii").translate(_CLASS_OF_BYTE)
    else:  # a non-ASCII character as "?" (of two bytes), then by its UTF-8 length when longer
        class_bytes = text.replace("?", "!").encode("ascii", "replace").translate(_CLASS_OF_MARK)
        utf8 = text.encode("utf-8", "surrogatepass")
        longer = len(utf8) != len(text) + class_bytes.count(_TWO_BYTE)
        if longer or any(_scripts(utf8)):
            points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
            cyrillic = (points - _CYRILLIC_FIRST) < _CYRILLIC_POINTS  # (below the first wraps around)
            cyrillic_after = cyrillic[1:] & cyrillic[:-1]
            other_script = np.zeros(len(points), dtype=np.bool_)
            for first, stop in _OTHER_SCRIPT_RANGES:
                other_script |= (points - first) < stop - first
            if longer:
                class_bytes = (np.frombuffer(class_bytes, dtype=np.uint8) + (points >= 0x800) + (points >= 0x10000)).tobytes()
    classes = np.frombuffer(class_bytes, dtype=np.uint8)
    pairs = np.empty(len(classes), dtype=np.uint8)  # (class before, class) as one byte
    pairs[0] = _OPENING * _CLASSES
    np.multiply(classes[:-1], _CLASSES, out=pairs[1:])
    pairs += classes
    pair_bytes = pairs.tobytes()
    weights = np.frombuffer(pair_bytes.translate(_WEIGHT_OF_PAIR), dtype=np.uint8)
    if cyrillic_after is not None and other_script is not None:
        weights = weights + other_script * np.uint8(_OTHER_SCRIPT - _FULL)
        weights[1:] -= cyrillic_after * np.uint8(_FULL - _CYRILLIC_AFTER_CYRILLIC)
    lower_in_run = _any_of(pairs, _LOWER_IN_RUN_PAIRS)
    any_caps = _CAPS_PAIR in pair_bytes
    if not lower_in_run.any() and not any_caps:
        return weights
    # a letter inside a run, by its place in it: the class before the run is the first
    # character not a letter found looking back (the opening as a digit before a run)
    marked = _DIGIT_BYTE * _BACK + class_bytes  # character i at `_BACK` + i
    n = len(classes)
    marked_classes = np.frombuffer(marked, dtype=np.uint8)
    letter = (marked_classes == _LOWER) | (marked_classes == _UPPER)
    short = np.zeros(len(marked), dtype=np.uint8)  # by the class before: what such letters weigh
    for weight, befores in _SHORT_IN_RUN:
        short += _any_of(marked_classes, befores) * np.uint8(weight)
    looking = letter[_BACK:] & letter[_BACK - 1 : -1]  # in a run, its opening not yet found
    extra = np.zeros(n, dtype=np.uint8)
    for place in range(1, _SHORT_WORD):
        before = slice(_BACK - 1 - place, _BACK - 1 - place + n)  # the character `place` + 1 back
        opened = looking & ~letter[before]
        extra += short[before] * opened
        looking &= letter[before]
    # what remains is the 7th letter of a run on: a word's weight, more in a run after a digit
    # (the 7th letters with a digit 7 back, each up to the end of its stretch of long letters)
    extra += looking * np.uint8(_LONG_WORD_LETTER)
    seventh = np.flatnonzero(looking & (marked_classes[:n] == _DIGIT))
    if len(seventh):
        ends = np.flatnonzero(looking[:-1] & ~looking[1:]) + 1
        if looking[-1]:
            ends = np.append(ends, n)
        lengths = ends[np.searchsorted(ends, seventh)] - seventh
        in_long = np.arange(int(lengths.sum()), dtype=np.int64)  # their places, one stretch after another
        in_long += np.repeat(seventh - (np.cumsum(lengths) - lengths), lengths)
        extra[in_long] += np.uint8(_LONG_AFTER_DIGIT)
    extra *= lower_in_run  # (an upper-case letter in a run weighs by `_WEIGHT`, less in a word)
    weights = weights + extra
    if any_caps:  # an uppercase letter after one: its run's opening looked for at its places only
        at = np.flatnonzero(pairs == _CAPS_PAIR)
        found = np.zeros(len(at), dtype=np.bool_)
        in_word = np.zeros(len(at), dtype=np.bool_)  # the 2nd to 6th letters of a run after a space
        for place in range(1, _SHORT_WORD):
            back = at + (_BACK - 1 - place)
            opened = ~found & ~letter[back]
            in_word |= opened & _any_of(marked_classes[back], _CAPS_AFTER)
            found |= opened
        weights[at[in_word]] -= np.uint8(_FULL - _CAPS_IN_WORD)
    return weights
