"""Token estimates without a tokenizer.

`count_tokens` is deliberately conservative: it should never under-count what a real
tokenizer produces for prose, code, numbers, identifiers or non-Latin text, so a chunk that
fits the estimate fits the model. Weights per character, in quarter tokens:

- ASCII whitespace: 1;
- an ASCII letter that continues a lowercase word (a lowercase letter after a lowercase
  letter) or starts a word (after whitespace): 2;
- any other ASCII letter (after a digit, punctuation, an uppercase letter or a non-ASCII
  character, or opening the text): 4 — tokenizers break hashes, base64, UUIDs, ALL-CAPS and
  camelCase into pieces of one or two characters;
- an ASCII digit or punctuation mark: 4 — many tokenizers give every digit its own token; a
  digit after whitespace (or opening the text): 7, for the whitespace before a number is a
  token of its own too;
- a non-ASCII character: 4 for two bytes of UTF-8 (accents, Cyrillic, Greek, Arabic, Hebrew),
  6 for three (CJK, kana, Hangul, Indic scripts, Thai), 16 for four (emoji, rare CJK): a
  character outside a vocabulary falls back to one token per byte.

The total is rounded up. A character's weight depends on the one before it, and a text's first
character weighs the most it can: a text's count is at most the sum of its parts' counts, so
cutting a text never makes its pieces count less than the whole.

The functions are C-speed: they count with `str.encode` / `bytes.translate` / `re` (or numpy,
for the running count of a whole text), never a Python loop per character.
"""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt

# The smallest token budget of a leaf: a heading prefix (up to a quarter of the budget) must
# leave room for text. A configured budget below it is an error (`config`).
MIN_CHUNK_TOKENS = 64

_LOWER = b"abcdefghijklmnopqrstuvwxyz"
_LETTERS = _LOWER + _LOWER.upper()
_SPACE = b" \t\n\r\x0b\x0c"
_FULL = 4  # quarters of a digit, a punctuation mark, a letter out of a word, a two-byte character
_WORD_LETTER = 2  # quarters of a letter that starts or continues a word
_NUMBER_START = 7  # quarters of a digit after whitespace: the whitespace is a token of its own
_THREE_BYTES = 6
_FOUR_BYTES = 16
_LOWER_RUN_RE = re.compile(rb"[a-z]+")
_WORD_START_RE = re.compile(rb"\s[A-Za-z]")
_NUMBER_START_RE = re.compile(rb"\s[0-9]")
_DIGITS = b"0123456789"


def count_tokens(text: str) -> int:
    """A conservative token count (the weights above), rounded up."""
    return (token_quarters(text) + 3) // 4


def token_quarters(text: str) -> int:
    """`count_tokens` before rounding, in quarter tokens. `token_quarters(a + b)` is at most
    `token_quarters(a) + token_quarters(b)`, less only by what the character opening `b` weighs
    less after the end of `a` than opening a text (`opening_discount`)."""
    if not text:
        return 0
    ascii_bytes = text.encode("ascii", "replace")  # a non-ASCII character as "?": it breaks a word
    non_ascii = len(text) - len(text.encode("ascii", "ignore"))
    utf16_units = len(text.encode("utf-16-le", "surrogatepass")) // 2
    four = utf16_units - len(text)  # astral characters: a surrogate pair each
    three = len(text.encode("utf-8", "surrogatepass")) - (len(text) - non_ascii) - 2 * non_ascii - 2 * four
    space = len(ascii_bytes) - len(ascii_bytes.translate(None, _SPACE))
    lower = len(ascii_bytes) - len(ascii_bytes.translate(None, _LOWER))
    word_letters = lower - len(_LOWER_RUN_RE.findall(ascii_bytes)) + len(_WORD_START_RE.findall(ascii_bytes))
    number_starts = len(_NUMBER_START_RE.findall(ascii_bytes)) + (ascii_bytes[:1] in _DIGITS)
    return (
        space
        + _FULL * (len(text) - space)
        - (_FULL - _WORD_LETTER) * word_letters
        + (_NUMBER_START - _FULL) * number_starts
        + (_THREE_BYTES - _FULL) * three
        + (_FOUR_BYTES - _FULL) * four
    )


def opening_discount(text: str, start: int) -> int:
    """The quarters `text[start]` weighs less after the character before it than opening a
    text: `token_quarters` of a span from `start` is the running count's difference plus this."""
    if start <= 0 or start >= len(text):
        return 0
    here, before = text[start].encode("ascii", "replace"), text[start - 1].encode("ascii", "replace")
    if here in _LETTERS and (before in _SPACE or (here in _LOWER and before in _LOWER)):
        return _FULL - _WORD_LETTER
    if here in _DIGITS and before not in _SPACE:
        return _NUMBER_START - _FULL
    return 0


# character classes by code point (all beyond ASCII folded into three by UTF-8 length)
_OTHER, _SPACE_C, _LOWER_C, _UPPER_C, _DIGIT_C, _TWO_C, _THREE_C, _FOUR_C = range(8)
_CLASS = np.full(128, _OTHER, dtype=np.int8)
_CLASS[list(_SPACE)] = _SPACE_C
_CLASS[list(_LOWER)] = _LOWER_C
_CLASS[list(_LOWER.upper())] = _UPPER_C
_CLASS[list(_DIGITS)] = _DIGIT_C
_BASE = np.array([_FULL, 1, _FULL, _FULL, _FULL, _FULL, _THREE_BYTES, _FOUR_BYTES], dtype=np.int64)


def running_quarters(text: str) -> npt.NDArray[np.int64]:
    """`token_quarters(text[:i])` for every i in 0..len(text), in one pass: the tokens of any
    span are then a difference plus its `opening_discount` (a chunker that grows a chunk line
    by line counts it in O(1) instead of again from its start)."""
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    classes = np.where(
        points < 128,
        _CLASS[np.minimum(points, 127)],
        np.where(points < 0x800, _TWO_C, np.where(points < 0x10000, _THREE_C, _FOUR_C)),
    ).astype(np.int8)
    weights = _BASE[classes]
    after_space = np.empty(len(points), dtype=bool)  # opening the text counts as after whitespace
    after_space[:1] = True
    after_space[1:] = classes[:-1] == _SPACE_C
    weights[(classes == _DIGIT_C) & after_space] = _NUMBER_START
    if len(points) > 1:
        here, before = classes[1:], classes[:-1]
        letter = (here == _LOWER_C) | (here == _UPPER_C)
        word = letter & ((before == _SPACE_C) | ((here == _LOWER_C) & (before == _LOWER_C)))
        weights[1:][word] = _WORD_LETTER
    out = np.zeros(len(points) + 1, dtype=np.int64)
    np.cumsum(weights, out=out[1:])
    return out


def approx_tokens(text: str) -> int:
    """The common rough estimate: one token per four characters, rounded up."""
    return (len(text) + 3) // 4
