"""Token estimates without a tokenizer.

`count_tokens` is deliberately conservative: it should never under-count what a real BPE
tokenizer produces for prose, code or CJK, so a chunk that fits the estimate fits the model.
Weights per character: ASCII letters and digits 0.5, ASCII whitespace 0.25, everything else
(ASCII punctuation, any non-ASCII character such as CJK, accents or emoji) 1.0; total rounded up.

The functions are C-speed: they count with `str.encode` / `bytes.translate` (or numpy, for
the running count of a whole text), never a Python loop per character.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

# The smallest token budget of a leaf: a heading prefix (up to a quarter of the budget) must
# leave room for text. A configured budget below it is an error (`config`).
MIN_CHUNK_TOKENS = 64

_ALNUM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_SPACE = b" \t\n\r\x0b\x0c"


def count_tokens(text: str) -> int:
    """A conservative token count: 0.5/alnum + 0.25/whitespace + 1.0/other char, rounded up."""
    return (token_quarters(text) + 3) // 4


def token_quarters(text: str) -> int:
    """`count_tokens` before rounding, in quarter tokens: exact and additive over concatenation."""
    if not text:
        return 0
    ascii_bytes = text.encode("ascii", "ignore")
    n_ascii = len(ascii_bytes)
    other = len(text) - n_ascii  # non-ASCII characters
    rest = ascii_bytes.translate(None, _ALNUM)  # ASCII but not alphanumeric: a quarter of prose
    alnum = n_ascii - len(rest)
    space = len(rest) - len(rest.translate(None, _SPACE))
    other += len(rest) - space
    return 2 * alnum + space + 4 * other


_QUARTERS = np.full(129, 4, dtype=np.int64)  # by code point, all non-ASCII as 128
_QUARTERS[list(_ALNUM)] = 2
_QUARTERS[list(_SPACE)] = 1


def running_quarters(text: str) -> npt.NDArray[np.int64]:
    """`token_quarters(text[:i])` for every i in 0..len(text), in one pass: the tokens of any
    span are then a difference (a chunker that grows a chunk line by line counts it in O(1)
    instead of again from its start)."""
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    out = np.zeros(len(points) + 1, dtype=np.int64)
    np.cumsum(_QUARTERS[np.minimum(points, 128)], out=out[1:])
    return out


def approx_tokens(text: str) -> int:
    """The common rough estimate: one token per four characters, rounded up."""
    return (len(text) + 3) // 4
