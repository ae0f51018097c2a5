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

The functions are C-speed: they count with `str.encode` / `bytes.translate` / `bytes.count` (or
numpy, for the running count of a whole text), never a Python loop per character.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

# The smallest token budget of a leaf: a heading prefix (up to a quarter of the budget) must
# leave room for text. A configured budget below it is an error (`config`).
MIN_CHUNK_TOKENS = 64

_LOWER = b"abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
_LETTERS = _LOWER + _UPPER
_SPACE = b" \t\n\r\x0b\x0c"
_FULL = 4  # quarters of a digit, a punctuation mark, a letter out of a word, a two-byte character
_WORD_LETTER = 2  # quarters of a letter that starts or continues a word
_NUMBER_START = 7  # quarters of a digit after whitespace: the whitespace is a token of its own
_THREE_BYTES = 6
_FOUR_BYTES = 16
_DIGITS = b"0123456789"
# each ASCII byte as its class: " " whitespace, "l" lowercase, "u" uppercase, "d" digit, "o"
# other; a pair of classes is then counted with `bytes.count`
_CLASS_OF = bytes(
    ord(" ") if b in _SPACE else ord("l") if b in _LOWER else ord("u") if b in _LETTERS else ord("d") if b in _DIGITS else ord("o")
    for b in range(256)
)
_NOT_LOWER = bytes.maketrans(b"ud", b"oo")  # the classes that end a lowercase run but whitespace


def count_tokens(text: str) -> int:
    """A conservative token count (the weights above), rounded up."""
    return (token_quarters(text) + 3) // 4


def token_quarters(text: str) -> int:
    """`count_tokens` before rounding, in quarter tokens. `token_quarters(a + b)` is at most
    `token_quarters(a) + token_quarters(b)`, less only by what the character opening `b` weighs
    less after the end of `a` than opening a text (`opening_discount`)."""
    if not text:
        return 0
    three = four = 0
    if text.isascii():
        classes = text.encode("ascii").translate(_CLASS_OF)
    else:  # a non-ASCII character as "?" (other): it breaks a word
        classes = text.encode("ascii", "replace").translate(_CLASS_OF)
        non_ascii = len(text) - len(text.encode("ascii", "ignore"))
        four = len(text.encode("utf-16-le", "surrogatepass")) // 2 - len(text)  # a surrogate pair each
        three = len(text.encode("utf-8", "surrogatepass")) - (len(text) - non_ascii) - 2 * non_ascii - 2 * four
    space = classes.count(b" ")
    lower_starts = classes.count(b" l")  # (a pair of two classes never overlaps another)
    lower_runs = lower_starts + classes.translate(_NOT_LOWER).count(b"ol") + (classes[:1] == b"l")
    # a lowercase letter after one (all of a run's but its first), or a letter after whitespace
    word_letters = classes.count(b"l") - lower_runs + lower_starts + classes.count(b" u")
    number_starts = classes.count(b" d") + (classes[:1] == b"d")
    return (
        space
        + _FULL * (len(text) - space)
        - (_FULL - _WORD_LETTER) * word_letters
        + (_NUMBER_START - _FULL) * number_starts
        + (_THREE_BYTES - _FULL) * three
        + (_FOUR_BYTES - _FULL) * four
    )


# character classes by code point: ASCII by `_CLASS`, any other by its UTF-8 length
_OTHER, _SPACE_C, _LOWER_C, _UPPER_C, _DIGIT_C, _TWO_C, _THREE_C, _FOUR_C = range(8)
_OPENING = 8  # the row of `_WEIGHT` for a text's first character (no class before it)
_CLASS = np.full(129, _TWO_C, dtype=np.uint8)  # code points of 128 and more as 128
_CLASS[:128] = _OTHER
_CLASS[list(_SPACE)] = _SPACE_C
_CLASS[list(_LOWER)] = _LOWER_C
_CLASS[list(_UPPER)] = _UPPER_C
_CLASS[list(_DIGITS)] = _DIGIT_C
# quarters of a character by (class before it, its class); a row more for opening the text
_WEIGHT = np.tile(np.array([_FULL, 1, _FULL, _FULL, _FULL, _FULL, _THREE_BYTES, _FOUR_BYTES], dtype=np.int64), (_OPENING + 1, 1))
_WEIGHT[_SPACE_C, [_LOWER_C, _UPPER_C]] = _WORD_LETTER
_WEIGHT[_LOWER_C, _LOWER_C] = _WORD_LETTER
_WEIGHT[[_SPACE_C, _OPENING], _DIGIT_C] = _NUMBER_START
_WEIGHT_BY_PAIR = _WEIGHT.ravel()
# what a character weighs less after one of each class than opening a text, as Python lists
# (`opening_discount` looks up one pair at a time)
_DISCOUNT: list[list[int]] = (_WEIGHT[_OPENING] - _WEIGHT).tolist()
_CLASS_OF_POINT: list[int] = _CLASS.tolist()


def opening_discount(text: str, start: int) -> int:
    """The quarters `text[start]` weighs less after the character before it than opening a
    text: `token_quarters` of a span from `start` is the running count's difference plus this."""
    if start <= 0 or start >= len(text):
        return 0
    before, here = (_CLASS_OF_POINT[min(ord(c), 128)] for c in text[start - 1 : start + 1])
    return _DISCOUNT[before][here]


def running_quarters(text: str) -> npt.NDArray[np.int64]:
    """`token_quarters(text[:i])` for every i in 0..len(text), in one pass: the tokens of any
    span are then a difference plus its `opening_discount` (a chunker that grows a chunk line
    by line counts it in O(1) instead of again from its start)."""
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    classes = _CLASS[np.minimum(points, 128)]
    classes += points >= 0x800  # three bytes of UTF-8
    classes += points >= 0x10000  # four
    pairs = np.empty(len(points), dtype=np.intp)  # (class before, class) as one index
    pairs[:1] = _OPENING * _WEIGHT.shape[1]
    np.multiply(classes[:-1], _WEIGHT.shape[1], out=pairs[1:], dtype=np.intp)
    pairs += classes
    out = np.zeros(len(points) + 1, dtype=np.int64)
    np.cumsum(_WEIGHT_BY_PAIR[pairs], out=out[1:])
    return out
