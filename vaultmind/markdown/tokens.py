"""Token estimates without a tokenizer.

`count_tokens` comes close to what real tokenizers give English prose yet never counts fewer
than they give numbers, identifiers, hashes, capitals or non-Latin text, so a chunk that fits
the estimate fits the model. Weights per character, in quarter tokens:

- a space or tab: 0 (tokenizers join the space to the word after it), or 1 after whitespace
  (indentation); a line break: 4;
- a letter starting a run of ASCII letters: 4; inside a run, an uppercase letter: 4 (ALL-CAPS
  and camelCase break into pieces); a lowercase one by where its run started: after whitespace,
  a line break or a non-ASCII character (a word): 0 for the run's 2nd to 6th letters, 2 from
  the 7th (long words take more pieces); after punctuation (paths, links, `+`-joined base64): 1,
  then 2; after a digit or opening the text (hashes, base64, ids): 4;
- a digit: 4 (many tokenizers give every digit its own token); 5 after a letter (hex, base64,
  UUIDs); 8 after whitespace or opening the text (the space before a number is a token of its
  own too);
- any other ASCII character (punctuation): 4;
- a non-ASCII character: 4 for two bytes of UTF-8 (accents, Cyrillic, Greek, Arabic, Hebrew),
  6 for three (CJK, kana, Hangul, Indic scripts, Thai), 16 for four (emoji, rare CJK): a
  character outside a vocabulary falls back to one token per byte.

The total is rounded up. A character's weight depends on the characters before it (back to the
start of its run of letters), and a text's opening weighs the most it can (its first run of
letters counts 4 a letter): a text's count is at most the sum of its parts' counts, so cutting
a text never makes its pieces count less than the whole.

The functions are C-speed: numpy over the text's code points, never a Python loop per
character.
"""

from __future__ import annotations

import re

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
_IN_SPACE = 1  # quarters of whitespace after whitespace
_DIGIT_AFTER_LETTER = 5
_NUMBER_START = 8  # quarters of a digit after whitespace: the whitespace is a token of its own
_THREE_BYTES = 6
_FOUR_BYTES = 16
_SHORT_WORD = 6  # a word's first six letters are about one token
_LONG_WORD_LETTER = 2  # quarters of a lowercase letter of a word from its 7th
_AFTER_PUNCTUATION = 1  # quarters of a lowercase letter (to the 6th) of a run after punctuation

# character classes by code point: ASCII by `_CLASS`, any other by its UTF-8 length
_OTHER, _SPACE, _BREAK, _LOWER, _UPPER, _DIGIT, _TWO, _THREE, _FOUR = range(9)
_OPENING = 9  # the class "before" a text's first character
_CLASS = np.full(129, _TWO, dtype=np.intp)  # code points of 128 and more as 128
_CLASS[:128] = _OTHER
_CLASS[list(b" \t")] = _SPACE
_CLASS[list(b"\n\r\x0b\x0c")] = _BREAK
_CLASS[ord("a") : ord("z") + 1] = _LOWER
_CLASS[ord("A") : ord("Z") + 1] = _UPPER
_CLASS[ord("0") : ord("9") + 1] = _DIGIT
_IS_LETTER = np.zeros(_OPENING + 1, dtype=bool)
_IS_LETTER[[_LOWER, _UPPER]] = True
# quarters of a character by (class before it, its class); a lowercase letter inside a run of
# letters is then weighed by `_IN_RUN` instead
_WEIGHT = np.tile(
    np.array([_FULL, 0, _FULL, _FULL, _FULL, _FULL, _FULL, _THREE_BYTES, _FOUR_BYTES], dtype=np.int64), (_OPENING + 1, 1)
)
_WEIGHT[[_SPACE, _OPENING], _SPACE] = _IN_SPACE
_WEIGHT[[_LOWER, _UPPER], _DIGIT] = _DIGIT_AFTER_LETTER
_WEIGHT[[_SPACE, _OPENING], _DIGIT] = _NUMBER_START
# quarters of a lowercase letter inside a run by (class before the run, its place in the run:
# 1 for the 2nd letter … `_SHORT_WORD` for the 7th and on)
_IN_RUN = np.full((_OPENING + 1, _SHORT_WORD + 1), _FULL, dtype=np.int64)
_IN_RUN[[_SPACE, _BREAK, _TWO, _THREE, _FOUR], 1:_SHORT_WORD] = 0
_IN_RUN[_OTHER, 1:_SHORT_WORD] = _AFTER_PUNCTUATION
_IN_RUN[[_SPACE, _BREAK, _TWO, _THREE, _FOUR, _OTHER], _SHORT_WORD] = _LONG_WORD_LETTER
_LETTER_RUN_RE = re.compile(r"[A-Za-z]+")


def count_tokens(text: str) -> int:
    """A conservative token count (the weights above), rounded up."""
    return (token_quarters(text) + 3) // 4


def token_quarters(text: str) -> int:
    """`count_tokens` before rounding, in quarter tokens. `token_quarters(a + b)` is at most
    `token_quarters(a) + token_quarters(b)`, less by what `b`'s opening weighs less after `a`
    (`opening_discount`)."""
    return int(_weights(text).sum()) if text else 0


def running_quarters(text: str) -> npt.NDArray[np.int64]:
    """`token_quarters(text[:i])` for every i in 0..len(text), in one pass: the tokens of any
    span are then a difference plus its `opening_discount` (a chunker that grows a chunk line
    by line counts it in O(1) instead of again from its start)."""
    out = np.zeros(len(text) + 1, dtype=np.int64)
    if text:
        np.cumsum(_weights(text), out=out[1:])
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
    stop = run.end() if run is not None else start + 1
    return token_quarters(text[start:stop]) - int(running[stop] - running[start])


def _weights(text: str) -> npt.NDArray[np.int64]:
    """The quarters of each character of a non-empty text, by the weights above."""
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    classes = _CLASS[np.minimum(points, 128)]
    classes += points >= 0x800  # three bytes of UTF-8
    classes += points >= 0x10000  # four
    before = np.empty_like(classes)
    before[0] = _OPENING
    before[1:] = classes[:-1]
    weights = _WEIGHT[before, classes]
    in_run = np.flatnonzero((classes == _LOWER) & _IS_LETTER[before])
    if len(in_run):  # each such letter's run: where it started and what came before it
        letter = _IS_LETTER[classes]
        starts = np.flatnonzero(letter & ~_IS_LETTER[before])
        run_start = starts[np.searchsorted(starts, in_run, side="right") - 1]
        place = np.minimum(in_run - run_start, _SHORT_WORD)
        weights[in_run] = _IN_RUN[before[run_start], place]
    return weights
