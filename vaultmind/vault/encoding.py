"""Bytes → text, for a note of the vault and a document given to ingest alike.

- A byte order mark says the encoding: UTF-8, UTF-16 or UTF-32 (little or big endian); the mark
  is dropped.
- Without one, UTF-16 and UTF-32 are told by their NUL bytes: in ASCII-heavy text (what
  Windows Notepad saves as "Unicode" without a mark, say) every other byte (UTF-16), or three
  of every four (UTF-32), is NUL, always at the same place in its pair (or four). Such a guess
  is kept only when the text it gives is text (hardly any control characters). Text of another
  script (Greek, Cyrillic, CJK) in UTF-16 has few NULs (its spaces, line breaks and digits),
  all in the high byte of their pair, and CJK prose may have none at all: bytes that are not
  UTF-8, whose NULs (if any) fall in one byte of the pairs (nearly never the other), are UTF-16
  of that order when the text it gives holds no control character, unassigned or private-use
  code point (binary data read so holds many), is not mostly pairs of ASCII bytes (Latin text
  in an 8-bit code page read two bytes at a time), and the bytes are not East Asian text in a
  legacy double-byte code page (GBK, Big5, Shift JIS, EUC), whose pairs read as UTF-16 give
  Hangul or CJK ideographs too. A single byte left over at the end (a cut file) is replaced,
  not taken for binary.
- Bytes that are not UTF-8 may be East Asian text in a legacy code page (GB18030, Big5, Shift
  JIS, EUC-JP, EUC-KR), read in it (`vault.codepages` tells which), tried before UTF-16. Bytes
  that read as words of a European 8-bit code page (`codepages.european`) are neither.
- Otherwise the first 8 KB holding a NUL byte among more control bytes than 5% of them (a
  single one is always stray), or, for bytes that are no text of the above, more than 1%
  control bytes other than NUL (unless the bytes are mostly printable ASCII or read as words of
  a European 8-bit code page: a log pasted with its bells), mean a binary file (`text` is None); a few stray NULs
  (a sync tool's glitch, a paste) leave the text as it is, NULs included, for the caller to
  deal with. The rest is UTF-8, else `fallback` with replacement characters (`bad_byte` says
  where UTF-8 failed).
"""

from __future__ import annotations

import codecs
import unicodedata
from collections import Counter
from dataclasses import dataclass, replace

from vaultmind.vault.codepages import EUROPEAN_NAMES, NAMES, european, european_codec, legacy_codec

SNIFF_BYTES = 8192
_STRAY_CONTROLS = 0.05  # of a file's first 8 KB, at most, in control bytes (NUL …) for text that holds a NUL
_CONTROLS_NOT_UTF8 = 0.01  # … in control bytes but NUL for text that is not UTF-8 (random bytes: a tenth)
_ASCII_TEXT_SHARE = 0.75  # of a text's bytes, at least, printable ASCII for its control bytes not to make it binary (random bytes: 37 %)
_BINARY_MIN_BYTES = 32  # below, too few bytes to tell random bytes from text by their control bytes
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
_CONTROL_BYTES = bytes([*range(1, 9), *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])  # those they do not (but NUL)


@dataclass(frozen=True, slots=True)
class DecodedText:
    text: str | None  # None: a binary file
    encoding: str  # "utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", a legacy code page (`codepages.NAMES`), or the fallback
    bad_byte: int | None = None  # offset of the first byte that could not be decoded (replaced), after the mark
    mark: int = 0  # bytes of the byte order mark dropped from the start

    @property
    def wide(self) -> bool:
        """UTF-16 or UTF-32: text that Obsidian, which reads UTF-8, does not show."""
        return self.encoding.startswith(("utf-16", "utf-32"))

    @property
    def legacy(self) -> bool:
        """Text in a legacy code page (`vault.codepages`), East Asian or European: not UTF-8 either."""
        return self.encoding in NAMES or self.encoding in EUROPEAN_NAMES

    @property
    def name(self) -> str:
        return encoding_name(self.encoding)


def encoding_name(encoding: str) -> str:
    """An encoding of `DecodedText` as people call it: "UTF-16", "GB18030", "Shift JIS", "Windows-1252"."""
    if encoding.startswith(("utf-16", "utf-32")):
        return encoding[:6].upper()
    return NAMES.get(encoding) or EUROPEAN_NAMES.get(encoding, encoding.upper())


def decode_text(data: bytes, fallback: str = "utf-8") -> DecodedText:
    """The text of `data` (see the module doc); `fallback` decodes what is not UTF-8."""
    for bom, encoding in _BOMS:
        if data.startswith(bom) and (encoding != "utf-32-le" or len(data) % 4 == 0):
            return replace(_decoded(data[len(bom) :], encoding, fallback=""), mark=len(bom))
    sample = data[:SNIFF_BYTES]
    if b"\x00" not in sample:  # the common case: UTF-8 text, decoded once
        plain = _decoded(data, "utf-8", fallback=fallback)
        if plain.bad_byte is None and (not sample.isascii() or not _control_bytes(sample)):
            return plain  # past ASCII: no UTF-16 reads as UTF-8 (`_reads_as_utf8`)
        if plain.bad_byte is None:  # ASCII bytes holding control bytes: perhaps UTF-16 CJK
            return _script_without_bom(data) or plain
        return _legacy(data, sample) or _script_without_bom(data) or _european(_text_or_binary(plain, sample), data)
    guess = _wide_without_bom(sample)
    if guess is not None:
        decoded = _decoded_wide(data, guess)
        if decoded.text is not None and _looks_like_text(_whole(decoded, len(data))):
            return decoded
    script = _script_without_bom(data)
    if script is not None:
        return script
    plain = _decoded(data, "utf-8", fallback=fallback)
    if plain.bad_byte is not None:
        plain = _legacy(data, sample) or plain
    return _european(_text_or_binary(plain, sample), data)


def _european(decoded: DecodedText, data: bytes) -> DecodedText:
    """`decoded` — text that is not UTF-8 (nor a legacy East Asian code page) read with
    replacement characters or the fallback — read in the European 8-bit code page it is in
    instead, if any (`codepages.european_codec`: Windows-1251 or KOI8-R Cyrillic would lose
    every letter)."""
    if decoded.text is None or decoded.encoding in NAMES or (decoded.encoding == "utf-8" and decoded.bad_byte is None):
        return decoded
    codec = european_codec(data[:SNIFF_BYTES].replace(b"\x00", b""))
    return decoded if codec is None else _decoded(data, codec, fallback=codec)


def _control_bytes(sample: bytes) -> bool:
    """Whether `sample` holds a control byte text files do not (but NUL): deleting them is a
    table look-up per byte (a regular expression's search takes five times as long)."""
    return len(sample.translate(None, _CONTROL_BYTES)) < len(sample)


def _text_or_binary(decoded: DecodedText, sample: bytes) -> DecodedText:
    """`decoded`, or a binary file (bytes that no text encoding explains: compressed data, an
    image), told by the control bytes of its first 8 KB (`sample`) but tabs, line breaks and
    escapes. Text may hold a few stray NULs (a sync tool's glitch): NULs among more control
    bytes than 5 % of the sample make it binary, a single one never. Text that is not UTF-8 (nor
    UTF-16 nor a legacy code page: an 8-bit code page, Windows-1252 say) holds hardly any other:
    more than 1 % (random bytes hold a tenth) make it binary too, once the sample is long
    enough to tell, unless it reads as text all the same (`_reads_as_words`)."""
    controls = sum(1 for byte in sample if (byte < 32 or byte == 127) and byte not in _TEXT_BYTES)
    nuls = sample.count(0)
    if nuls and controls > max(_STRAY_CONTROLS * len(sample), 1):
        return DecodedText(None, "")
    strays = controls - nuls
    unread = decoded.bad_byte is not None and not decoded.legacy  # not UTF-8, nor a legacy code page
    many = len(sample) >= _BINARY_MIN_BYTES and strays > max(_CONTROLS_NOT_UTF8 * len(sample), 1)
    if unread and many and not _reads_as_words(sample.replace(b"\x00", b"")):
        return DecodedText(None, "")
    return decoded


def _reads_as_words(sample: bytes) -> bool:
    """Whether `sample`, not UTF-8 and holding control bytes, is text all the same: mostly
    printable ASCII (a log pasted with its bells and backspaces, a DOS file's ^Z, Windows-1252
    text with a few accents: random bytes are a third ASCII), or words of a European 8-bit code
    page (`codepages.european`: Cyrillic or Greek text is mostly high bytes)."""
    ascii_text = sum(1 for byte in sample if 32 <= byte < 127 or byte in _TEXT_BYTES)
    return ascii_text >= _ASCII_TEXT_SHARE * len(sample) or european(sample)


def _legacy(data: bytes, sample: bytes) -> DecodedText | None:
    """`data` in the legacy East Asian code page its `sample` is in (`vault.codepages`), or None;
    a byte past the sample that does not decode is replaced, said by `bad_byte`."""
    codec = legacy_codec(sample.replace(b"\x00", b""))  # a stray NUL is no part of a pair
    return None if codec is None else _decoded(data, codec, fallback=codec)


def _decoded(data: bytes, encoding: str, fallback: str) -> DecodedText:
    try:
        return DecodedText(data.decode(encoding), encoding)
    except UnicodeDecodeError as exc:
        used = fallback or encoding
        return DecodedText(data.decode(used, errors="replace"), used, exc.start)


def _decoded_wide(data: bytes, encoding: str) -> DecodedText:
    """`data` in a UTF-16 or UTF-32 `encoding`; a last unit cut short (an odd byte at the end)
    is one replacement character, said by `bad_byte` (and not counted against the text)."""
    cut = len(data) % (4 if encoding.startswith("utf-32") else 2)
    if cut:
        whole = _decoded(data[:-cut], encoding, fallback="")
        if whole.bad_byte is None and whole.text is not None:
            return DecodedText(whole.text + "\ufffd", encoding, len(data) - cut)
    return _decoded(data, encoding, fallback="")


def _whole(decoded: DecodedText, size: int) -> str:
    """The text of `decoded` (of `size` bytes) without the replacement character of a last unit cut short."""
    text = decoded.text or ""
    cut = decoded.bad_byte is not None and decoded.bad_byte >= size - 3 and text.endswith("\ufffd")
    return text[:-1] if cut else text


_UTF8_CONTROL_SHARE = 0.05  # of UTF-8 text's bytes, at most, control bytes other than NUL and a text's own
_NOT_TEXT = frozenset({"Cn", "Co", "Cs"})  # unassigned, private use, surrogate
_SCRIPT_MIN_BYTES = 16  # below, too few characters to tell text from bytes
_SCRIPT_SURE_BYTES = 64  # below, a text's letters must be of one script (random bytes pass too often)
_SCRIPTS = 4  # of the scripts of a text's letters (CJK, HIRAGANA, KATAKANA, LATIN), at most; one is a third of them
_VARIETY = 16  # different characters a text holds at least (or a quarter of its length)
_ASCII_PAIRS_SHARE = 0.5  # of UTF-16 text's characters, at most, two printable ASCII bytes (CJK: about 1 in 5)


def _script_without_bom(data: bytes) -> DecodedText | None:
    """UTF-16 text of a script other than Latin, without a byte order mark (see the module doc),
    or None: the byte order whose text is text, the likelier one first (`_byte_orders`)."""
    sample = data[:SNIFF_BYTES]
    sample = sample[: len(sample) - len(sample) % 2]
    if len(sample) < _SCRIPT_MIN_BYTES or _reads_as_utf8(sample):
        return None
    if b"\x00" not in sample and (european(sample) or _legacy_double_byte(sample)):
        return None
    for encoding in _byte_orders(sample):
        decoded = _decoded_wide(data, encoding)
        if decoded.bad_byte is not None and decoded.bad_byte < len(data) - 1:
            continue
        text = _whole(decoded, len(data))
        if _script_text(text, _SCRIPTS if len(data) >= _SCRIPT_SURE_BYTES else 1):
            return decoded
    return None


def _byte_orders(sample: bytes) -> tuple[str, str]:
    """UTF-16's byte orders, the likelier first for `sample`: the high bytes of the pairs are
    those that hold more of the NULs or, with none, fewer different values (a script's block:
    0x30 for kana, 0x4E-0x9F for ideographs), where the low bytes take nearly any."""
    even, odd = sample[0::2], sample[1::2]
    if (odd.count(0), -len(set(odd))) >= (even.count(0), -len(set(even))):
        return "utf-16-le", "utf-16-be"
    return "utf-16-be", "utf-16-le"


_LEGACY_DOUBLE_BYTE = ("gb2312", "big5", "shift_jis", "euc_kr", "euc_jp")
_LONELY_SHARE = 0.2  # of a legacy text's characters, at most, of another kind than both neighbours


def _legacy_double_byte(sample: bytes) -> bool:
    """Whether `sample` (which holds no NUL) is East Asian text in a legacy double-byte code
    page: its pairs, read as UTF-16, give Hangul syllables or CJK ideographs too (GB2312's
    commonest hanzi, lead bytes 0xB0-0xD7, read so are Hangul). Such text decodes in its code
    page to plain text; UTF-16 text, decoded so, gives control characters (its low bytes take
    any value) or ASCII letters and half-width kana strewn one by one between ideographs."""
    for codec in _LEGACY_DOUBLE_BYTE:
        try:
            text = codecs.getincrementaldecoder(codec)().decode(sample, final=False)  # a pair cut at the end is no error
        except UnicodeDecodeError:
            continue
        if _plain(text):
            return True
    return False


def _plain(text: str) -> bool:
    """Whether `text` is mostly East Asian characters (else its UTF-16 reading is mostly pairs of
    ASCII bytes, refused anyway), holds no control character, and few characters of a kind
    (ASCII, half-width, other) unlike both their neighbours (spaces aside: Korean puts them
    between words)."""
    if any(ch < " " and ch not in _TEXT_CONTROLS for ch in text):
        return False
    kinds = [0 if ch < "\x80" else 1 if "\uff61" <= ch <= "\uff9f" else 2 for ch in text if not ch.isspace()]
    if kinds.count(0) * 2 > len(kinds):
        return False
    lonely = sum(1 for before, kind, after in zip(kinds, kinds[1:], kinds[2:], strict=False) if before != kind != after)
    return lonely <= _LONELY_SHARE * len(kinds)


# A CJK text mixes these: Japanese writes kanji, kana and full-width letters in one sentence.
_CJK_SCRIPTS = frozenset({"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "FULLWIDTH", "HALFWIDTH"})
_KANA_BLOCK = range(0x3000, 0x3100)  # CJK punctuation, hiragana, katakana: high byte 0x30, an ASCII "0"


def _script_text(text: str, at_most: int) -> bool:
    """Whether `text`, read as UTF-16, is text: no control character, unassigned or private-use
    code point, not mostly pairs of ASCII characters (ASCII bytes read two by two give CJK
    ideographs: "Bush hid the facts"; kana, whose high byte is an ASCII "0", are no such pair),
    not a few characters over and over (a binary pattern), and letters of at most `at_most`
    scripts (CJK's kanji, kana and full-width letters counted as one), a third of them at
    least of one (binary data read so gives letters of many)."""
    if any((ch < " " and ch not in _TEXT_CONTROLS) or ch == "\x7f" or unicodedata.category(ch) in _NOT_TEXT for ch in text):
        return False
    paired = sum(1 for ch in text if _ascii_pair(ord(ch)))
    if paired > _ASCII_PAIRS_SHARE * len(text) or len(set(text)) < min(_VARIETY, len(text) / 4):
        return False
    scripts = Counter(_script(ch) for ch in text if ch.isalpha())
    return 0 < len(scripts) <= at_most and scripts.most_common(1)[0][1] * 3 >= scripts.total()


def _ascii_pair(code: int) -> bool:
    return 0x20 <= code >> 8 <= 0x7E and 0x20 <= code & 0xFF <= 0x7E and code not in _KANA_BLOCK


def _script(ch: str) -> str:
    script = unicodedata.name(ch, "?").split(" ", 1)[0]
    return "CJK" if script in _CJK_SCRIPTS else script


def _reads_as_utf8(sample: bytes) -> bool:
    """Whether `sample` is UTF-8 text, NULs aside: valid (but for a character cut at its end),
    and holding a character past ASCII (UTF-16 text hardly ever reads as UTF-8's multi-byte
    sequences: a note with a bell and an accent is UTF-8) or hardly any other control byte
    (UTF-16 Greek or Cyrillic, read so, is ASCII bytes, half of them control bytes)."""
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason != "unexpected end of data" or exc.start < len(sample) - 3:
            return False
    if not sample.isascii():
        return True
    controls = sum(1 for byte in sample if (byte < 32 or byte == 127) and byte and byte not in _TEXT_BYTES)
    return controls <= _UTF8_CONTROL_SHARE * len(sample)


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
