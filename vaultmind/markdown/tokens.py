"""Token estimates without a tokenizer.

`count_tokens` is deliberately conservative: it should never under-count what a real BPE
tokenizer produces for prose, code or CJK, so a chunk that fits the estimate fits the model.
Weights per character: ASCII letters and digits 0.5, ASCII whitespace 0.25, everything else
(ASCII punctuation, any non-ASCII character such as CJK, accents or emoji) 1.0; total rounded up.

Both functions are C-speed: they count with `str.encode` / `bytes.translate`, never a Python
loop per character.
"""

from __future__ import annotations

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


def approx_tokens(text: str) -> int:
    """The common rough estimate: one token per four characters, rounded up."""
    return (len(text) + 3) // 4
