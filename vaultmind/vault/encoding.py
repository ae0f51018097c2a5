"""Bytes → text, for a note of the vault and a document given to ingest alike.

- A byte order mark says the encoding: UTF-8, UTF-16 or UTF-32 (little or big endian); the mark
  is dropped.
- Without one, UTF-16 and UTF-32 are told by their NUL bytes: in ASCII-heavy text (what
  Windows Notepad saves as "Unicode" without a mark, say) every other byte (UTF-16), or three
  of every four (UTF-32), is NUL, always at the same place in its pair (or four). Such a guess
  is kept only when the text it gives is text (hardly any control characters).
- Otherwise a NUL byte in the first 8 KB means a binary file (`text` is None) — for a caller
  that allows stray NULs (`binary_share`), only when control bytes are more than that share of
  those 8 KB — and the rest is UTF-8, else `fallback` with replacement characters (`bad_byte`
  says where UTF-8 failed).
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, replace

SNIFF_BYTES = 8192
_BOMS = (  # UTF-32's marks first: UTF-16 LE's is the start of UTF-32 LE's
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_WIDE_NUL_SHARE = 0.5  # of the high bytes (UTF-16) that are NUL in ASCII-heavy text, at least
_CONTROL_SHARE = 0.01  # of a guessed wide text's characters that may be controls or U+FFFD, at most
_TEXT_CONTROLS = frozenset("\t\n\r\f\v")
_TEXT_BYTES = frozenset(b"\t\n\r\f\v\x1b")  # control bytes text files hold


@dataclass(frozen=True, slots=True)
class DecodedText:
    text: str | None  # None: a binary file
    encoding: str  # "utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", or the fallback
    bad_byte: int | None = None  # offset of the first byte that could not be decoded (replaced), after the mark
    mark: int = 0  # bytes of the byte order mark dropped from the start

    @property
    def wide(self) -> bool:
        """UTF-16 or UTF-32: text that Obsidian, which reads UTF-8, does not show."""
        return self.encoding.startswith(("utf-16", "utf-32"))


def decode_text(data: bytes, fallback: str = "utf-8", binary_share: float = 0.0) -> DecodedText:
    """The text of `data` (see the module doc); `fallback` decodes what is not UTF-8; a sample
    with a NUL byte whose control bytes are more than `binary_share` of it is binary."""
    for bom, encoding in _BOMS:
        if data.startswith(bom) and (encoding != "utf-32-le" or len(data) % 4 == 0):
            return replace(_decoded(data[len(bom) :], encoding, fallback=""), mark=len(bom))
    guess = _wide_without_bom(data[:SNIFF_BYTES])
    if guess is not None:
        decoded = _decoded(data, guess, fallback="")
        if decoded.text is not None and _looks_like_text(decoded.text):
            return decoded
    sample = data[:SNIFF_BYTES]
    if b"\x00" in sample and sum(1 for byte in sample if byte < 32 and byte not in _TEXT_BYTES) > binary_share * len(sample):
        return DecodedText(None, "")
    return _decoded(data, "utf-8", fallback=fallback)


def _decoded(data: bytes, encoding: str, fallback: str) -> DecodedText:
    try:
        return DecodedText(data.decode(encoding), encoding)
    except UnicodeDecodeError as exc:
        used = fallback or encoding
        return DecodedText(data.decode(used, errors="replace"), used, exc.start)


def _wide_without_bom(sample: bytes) -> str | None:
    """UTF-32 or UTF-16 (and which byte order) that the NUL bytes of `sample` show, if any."""
    if len(sample) >= 8 and b"\x00" in sample:
        sample4 = sample[: len(sample) - len(sample) % 4]
        lanes = [_nul_share(sample4[i::4]) for i in range(4)]
        if lanes[0] < 0.1 and min(lanes[2:]) > 0.95:
            return "utf-32-le"
        if lanes[3] < 0.1 and min(lanes[:2]) > 0.95:
            return "utf-32-be"
    if len(sample) >= 4 and b"\x00" in sample:
        sample2 = sample[: len(sample) - len(sample) % 2]
        even, odd = _nul_share(sample2[0::2]), _nul_share(sample2[1::2])
        if odd >= _WIDE_NUL_SHARE and even < 0.1:
            return "utf-16-le"
        if even >= _WIDE_NUL_SHARE and odd < 0.1:
            return "utf-16-be"
    return None


def _nul_share(lane: bytes) -> float:
    return lane.count(0) / len(lane) if lane else 0.0


def _looks_like_text(text: str) -> bool:
    bad = sum(1 for ch in text if (ch < " " and ch not in _TEXT_CONTROLS) or ch in "\x7f\ufffd")
    return bad <= _CONTROL_SHARE * len(text)
