"""What the chat adapters share: reading files, JSON with line numbers, timestamps, message ids.

Everything here is pure apart from reading the export itself; errors are `IngestError`s naming
the file and the line (or record) where the export went wrong.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from vaultmind.ingest.errors import IngestError, ingest_error
from vaultmind.ingest.mailheaders import FORWARDED
from vaultmind.markdown.render import iso_utc
from vaultmind.vault.encoding import DecodedText, decode_text
from vaultmind.zones import local_to_utc

_DATA_URI_RE = re.compile(r"data:([\w.+-]+/[\w.+-]+)?(?:;[\w.+-]+=[\w.+-]+)*;base64,[A-Za-z0-9+/=\s]{16,}")
_BASE64_RUN_RE = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{200,}={0,2}(?![A-Za-z0-9+/=])")
_INVISIBLE = dict.fromkeys(map(ord, "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\ufeff"))


def read_text(path: Path, data: bytes | None = None) -> str:
    """The text of an export, line endings normalised to LF: UTF-8, or UTF-16 / UTF-32 told by
    their byte order mark or their NUL bytes (a WhatsApp `.txt` or a JSON file re-saved by
    Windows Notepad as "Unicode"), or East Asian text in a legacy code page
    (`vault.encoding.decode_text`); a byte order mark is dropped.
    Anything else (not valid in the encoding it reads as, or binary) is an error naming the line."""
    try:
        raw = data if data is not None else path.read_bytes()
    except OSError as exc:
        raise IngestError(f"cannot read: {exc.strerror or exc}", path=path) from exc
    decoded = decode_text(raw)
    if decoded.bad_byte is not None and (cut := _cut_utf8(raw)) is not None:
        decoded = decode_text(raw[:cut])  # a file cut inside its last character: read up to it
    if decoded.text is None:
        raise ingest_error(path, "a binary file, not text", hint="export the chat as text (UTF-8)")
    if decoded.bad_byte is not None:
        name = decoded.name
        raise ingest_error(path, f"not {name} text", line=_line_of_byte(raw, decoded), hint="export the chat as UTF-8")
    return decoded.text.replace("\r\n", "\n").replace("\r", "\n")


def _cut_utf8(raw: bytes) -> int | None:
    """Where the last, incomplete character of UTF-8 text starts, when it is its only fault: a
    copy or download cut off inside a multi-byte character (an emoji, an accented letter).
    Those bytes say nothing; the rest is read, and the message they ended is cut anyway. A
    lone last byte after ASCII text is not taken for one: a Windows-1252 file whose one accent
    ends it ("café") is refused as before rather than read without it."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data" and exc.end == len(raw):
            return exc.start if len(raw) - exc.start > 1 or not raw[: exc.start].isascii() else None
    return None


def _line_of_byte(raw: bytes, decoded: DecodedText) -> int:
    """The line of the first byte `decoded` could not read (`bad_byte`, counted after the byte
    order mark)."""
    body = raw[decoded.mark :][: decoded.bad_byte]
    return body.decode(decoded.encoding, errors="replace").count("\n") + 1


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# a `\uXXXX` escape of half a UTF-16 surrogate pair without its other half (an emoji an exporter
# cut in two), not itself escaped (`\\ud83d` is a backslash and "ud83d")
_HIGH, _LOW = r"\\u[dD][89abAB][0-9a-fA-F]{2}", r"\\u[dD][c-fC-F][0-9a-fA-F]{2}"
_LONE_SURROGATE_RE = re.compile(rf"(?<!\\)((?:\\\\)*)(?:{_HIGH}(?!{_LOW})|(?<!{_HIGH}){_LOW})")


def whole_characters(path: Path, text: str, warn: Callable[[str], None] | None = None) -> str:
    r"""`text` of a JSON file with each lone surrogate escape (`"\ud83d"`: half an emoji) read as
    U+FFFD (the escape `\ufffd`), said once for the file (`warn`, naming the line of the first):
    decoded as it is, it is no character, and no note could hold it. Escapes are replaced by escapes of the same
    length, so lines and columns stay."""
    found = _LONE_SURROGATE_RE.search(text)
    if found is None:
        return text
    fixed, count = _LONE_SURROGATE_RE.subn(lambda m: m.group(1) + "\\ufffd", text)
    if warn is not None:
        warn(
            f"{path}: line {_line_of(text, found.start())}: {count} lone surrogate escape{'s' if count > 1 else ''} "
            f"(half a character, as {found.group(0)[len(found.group(1)):]}) read as U+FFFD"
        )
    return fixed


def load_json(path: Path, text: str | None = None, warn: Callable[[str], None] | None = None) -> Any:
    """Parse a JSON file; a syntax error names the line; lone surrogates read as U+FFFD
    (`whole_characters`)."""
    text = whole_characters(path, read_text(path) if text is None else text, warn)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ingest_error(path, f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from exc


def json_array_items(path: Path, text: str, warn: Callable[[str], None] | None = None) -> Iterator[tuple[int, Any]]:
    """(line, item) for each item of a top-level JSON array, so errors can name the item's line
    (lone surrogates read as U+FFFD: `whole_characters`)."""
    text = whole_characters(path, text, warn)
    decoder = json.JSONDecoder()
    i = _skip_ws(text, 0)
    if text[i : i + 1] != "[":
        raise ingest_error(path, "expected a JSON array of messages", line=_line_of(text, i))
    i = _skip_ws(text, i + 1)
    if text[i : i + 1] == "]":
        _expect_end(path, text, i + 1)
        return
    while True:
        try:
            item, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise ingest_error(
                path, f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno
            ) from exc
        yield _line_of(text, i), item
        i = _skip_ws(text, end)
        ch = text[i : i + 1]
        if ch == "]":
            _expect_end(path, text, i + 1)
            return
        if ch != ",":
            raise ingest_error(
                path, "invalid JSON: expected ',' or ']' after an item", line=_line_of(text, i)
            )
        i = _skip_ws(text, i + 1)


def jsonl_items(path: Path, text: str, warn: Callable[[str], None] | None = None) -> Iterator[tuple[int, Any]]:
    """(line, object) for each non-blank line of a JSON Lines file. With `warn`, a last line
    that is JSON begun but not ended (`_half_written`), without a line break after it, is left
    out with a warning: a transcript still being written (an agent appends a line at a time), or
    a copy cut short; the lines above it are whole. Any other bad line (one complete but wrong,
    `{…}}`) is an error naming it. Lone surrogates read as U+FFFD (`whole_characters`)."""
    lines = whole_characters(path, text, warn).split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            if warn is not None and number == len(lines) and not text.endswith("\n") and _half_written(line, exc):
                warn(
                    f"{path}: line {number}: the last line is not complete JSON (still being written, or the file "
                    "was cut short?); left out — ingest the file again once it is complete"
                )
                return
            raise ingest_error(path, f"invalid JSON: {exc.msg} (column {exc.colno})", line=number) from exc


def json_items(path: Path, text: str, warn: Callable[[str], None] | None = None) -> tuple[list[tuple[int, Any]], dict[str, Any] | None]:
    """The (line, item) pairs of a JSON file that is an array of items, one object (spread over
    lines or not), or JSON Lines of objects; and that object when the file is one (its one item,
    on line 1). Lone surrogates read as U+FFFD (`whole_characters`)."""
    text = whole_characters(path, text, warn)
    stripped = text.lstrip()
    if stripped.startswith("["):
        return list(json_array_items(path, text)), None
    if stripped.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None  # (JSON Lines)
        if isinstance(data, dict):
            return [(1, data)], data
    return list(jsonl_items(path, text, warn)), None


def top_level_items(path: Path, text: str, key: str, warn: Callable[[str], None] | None = None) -> list[tuple[int, Any]]:
    """(line, item) for each item of the array that the top-level object of `text` (one JSON
    object) holds under `key` (the last, when the key is given twice, as a JSON reader takes it);
    none when it holds no such key. An array of that name inside another value is not it. Lone
    surrogates read as U+FFFD (`whole_characters`)."""
    text = whole_characters(path, text, warn)
    decoder = json.JSONDecoder()
    i = _skip_ws(text, 0) + 1  # (past the object's "{")
    found: int | None = None
    while True:
        i = _skip_ws(text, i)
        if text[i : i + 1] in ("}", ""):
            break
        name, i = decoder.raw_decode(text, i)
        i = _skip_ws(text, i) + 1  # (past the ":")
        start = _skip_ws(text, i)
        _, i = decoder.raw_decode(text, start)
        if name == key:
            found = start
        i = _skip_ws(text, i)
        if text[i : i + 1] == ",":
            i += 1
    if found is None:
        return []
    _, end = decoder.raw_decode(text, found)
    lines_before = text.count("\n", 0, found)
    return [(line + lines_before, item) for line, item in json_array_items(path, text[found:end])]


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\n\r":
        i += 1
    return i


def _expect_end(path: Path, text: str, i: int) -> None:
    i = _skip_ws(text, i)
    if i < len(text):
        raise ingest_error(path, "invalid JSON: extra data after the array", line=_line_of(text, i))


# --- time -----------------------------------------------------------------------------------


# what may follow where a JSON text cut short stops reading: a number, literal or \u escape begun
_CUT_TOKEN_RE = re.compile(r"u[0-9a-fA-F]{0,4}|t(?:r(?:ue?)?)?|f(?:a(?:l(?:se?)?)?)?|n(?:u(?:ll?)?)?|[-+.0-9eE]*")


def _half_written(line: str, error: json.JSONDecodeError) -> bool:
    """Whether `line` is JSON that stops before its end (a prefix of valid JSON): read up to
    where it stops, a string never closed, or a number, literal or escape begun — not JSON with
    something wrong inside or after it."""
    return error.msg.startswith("Unterminated string") or _CUT_TOKEN_RE.fullmatch(line[error.pos :].rstrip()) is not None


REPEAT_STEP = timedelta(minutes=10)  # a step back in time larger than this, in a repeated hour, is its second pass


class LocalClock:
    """Places an export's naive local times in file order. In the hour an autumn clock change
    repeats (02:00–03:00 twice in Europe/Berlin), a naive time is read as its first pass; a
    message that goes back more than `REPEAT_STEP` before the latest one above it, and fits
    after it as the second pass (`fold=1`), is read so: an export in order says which pass it
    is. (A step back of a few minutes is a message sent offline, and stays.) A message further
    back that does not fit so is out of place (its date wrong, sent long ago): it keeps its
    time as read, and the file's order goes on from the messages above it. `unordered` says the
    file was not in order after all: the message after one out of place is behind the latest
    above them too (newest first, sorted by author); then its order says nothing of the pass,
    and `reads` (each time as read, in the order placed) are the times to keep."""

    def __init__(self, tz: tzinfo):
        self.tz = tz
        self.last: datetime | None = None  # the UTC time of the latest message placed in order
        self.unordered = False
        self.reads: list[datetime] = []
        self.stray = False  # the message above was out of place
        self.local = False  # a time placed was a local one, without a zone (`SourceBatch.local_times`)

    def place(self, value: Any, read: datetime) -> datetime:
        """`read` (the UTC time of `value` as `parse_time`/`local_to_utc` read it), or the
        repeated hour's second pass when `value` is a naive local time the file's order puts there."""
        local = _naive(value)
        self.local = self.local or local is not None
        timestamp = read
        behind = self.last is not None and read < self.last - REPEAT_STEP
        self.unordered = self.unordered or (self.stray and behind)  # (two in a row: the file steps back)
        if local is not None and self.last is not None and behind:
            second = local_to_utc(local.replace(fold=1), self.tz)
            if second >= self.last - REPEAT_STEP:
                timestamp = second
        self.reads.append(read)
        self.stray = self.last is not None and timestamp < self.last - REPEAT_STEP
        if not self.stray:
            self.last = timestamp
        return timestamp


def is_local_time(value: Any) -> bool:
    """Whether `value` is a local time without a zone (`parse_time` reads it in the run's zone):
    an ISO 8601 string without an offset or `Z`; epoch seconds and times with a zone are not."""
    return _naive(value) is not None


def _naive(value: Any) -> datetime | None:
    """`value` as a naive local time (a datetime, or an ISO 8601 string without an offset), else None."""
    if isinstance(value, datetime):
        return value if value.tzinfo is None else None
    if not isinstance(value, str) or re.fullmatch(r"-?\d+(?:\.\d+)?", value.strip()):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return parsed if parsed.tzinfo is None else None


def epoch_to_utc(value: float | int | str) -> datetime:
    """Epoch seconds (int, float or decimal string like Slack's `1709542800.000100`) → UTC.

    Values above 10^11 are taken as milliseconds. Decimal strings keep their microseconds exactly.
    """
    if isinstance(value, str):
        whole, _, frac = value.strip().partition(".")
        seconds = int(whole)
        micros = int((frac + "000000")[:6]) if frac else 0
        if abs(seconds) > 10**11:
            return datetime.fromtimestamp(0, UTC) + timedelta(milliseconds=seconds)
        return datetime.fromtimestamp(seconds, UTC) + timedelta(microseconds=micros)
    if abs(value) > 10**11:
        return datetime.fromtimestamp(0, UTC) + timedelta(milliseconds=value)
    return datetime.fromtimestamp(value, UTC)


def parse_time(value: Any, tz: tzinfo = UTC) -> datetime:
    """An ISO 8601 string (naive → `tz`), or epoch seconds/ms as a number or digit string."""
    if isinstance(value, bool):
        raise ValueError("a boolean is not a time")
    if isinstance(value, int | float):
        return epoch_to_utc(value)
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"-?\d+(?:\.\d+)?", text):
            return epoch_to_utc(text)
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
        return local_to_utc(parsed, tz)
    raise ValueError(f"{value!r} is not a time")


def read_time(path: Path, where: str, value: Any, tz: tzinfo = UTC, *, what: str = "time") -> datetime:
    """`parse_time` of a message's time; one that cannot be read is an error naming the file and
    `where` ("chat 'Team', message 12")."""
    try:
        return parse_time(value, tz)
    except (ValueError, OverflowError, OSError) as exc:
        raise ingest_error(path, f"{where}: cannot read the {what} {value!r}") from exc


# --- ids and text ---------------------------------------------------------------------------


HASHED_ID_RE = re.compile(r"h-[0-9a-f]{16}")  # an id of `MessageIds`


def cut_short(text: str, whole: str) -> bool:
    """Whether `text` is `whole` cut short (a copy of a message whose file was cut off inside
    it): its start, and shorter."""
    return len(text) < len(whole) and whole.startswith(text)


# what a cut multipart email loses first, after its text: its later parts, listed on its last
# line, and the messages it forwards as attachments, each under its header (`mailheaders.forwarded_header`)
_LOST_PARTS_RE = re.compile(rf"[ \t]*\n[ \t]*\n(?!Attachments: |---------- {FORWARDED} ----------\n)")


def mail_cut_short(text: str, whole: str) -> bool:
    """`cut_short`, for an email: not when `whole` goes on after `text` with a paragraph of its
    own. A copy a mail server or a list extended (a disclaimer, a footer the quotes logic does
    not cut) is no copy cut short: a file cut off stops inside a line, or after one, or loses
    the parts of a multipart message below its text (its `Attachments:` line, a message it
    forwards as an attachment, under its "Forwarded message" header) — or it stops
    inside an attachment: its text whole (or cut so), the file it was cut in listed smaller
    (`_files_cut_short`), those after it not at all."""
    if cut_short(text, whole) and _LOST_PARTS_RE.match(whole, len(text)) is None:
        return True
    own, files = _attachments_split(text)
    whole_own, whole_files = _attachments_split(whole)
    if not files or not whole_files or not _files_cut_short(files, whole_files):
        return False
    return own == whole_own or mail_cut_short(own, whole_own)


_ATTACHMENTS_LINE = "\n\nAttachments: "
# one file of an `Attachments:` line: `name (type, size)`, as `email.attachments_line` writes it
_ATTACHMENT_RE = re.compile(r"(.+?) \(([^\s(),]+/[^\s(),]+), (\d+(?:\.\d)?) (B|KB|MB)\)(?:, |\Z)")
_SIZE_UNITS = {"B": 1, "KB": 1024, "MB": 1024 * 1024}


def _attachments_split(text: str) -> tuple[str, list[tuple[str, str, float]]]:
    """An email's text without its last paragraph when that lists its attachments, and the
    files it lists: (name, type, size in bytes); the text and no files when it lists none."""
    at = text.rfind(_ATTACHMENTS_LINE)
    line = text[at + len(_ATTACHMENTS_LINE) :] if at >= 0 else ""
    if not line or "\n" in line:
        return text, []
    found = list(_ATTACHMENT_RE.finditer(line))
    if "".join(m[0] for m in found) != line:  # (not a line vaultmind wrote: a text of its own)
        return text, []
    return text[:at], [(m[1], m[2], float(m[3]) * _SIZE_UNITS[m[4]]) for m in found]


def _files_cut_short(files: list[tuple[str, str, float]], whole: list[tuple[str, str, float]]) -> bool:
    """Whether the attachments `files` are `whole`'s listed by a copy cut inside one of them:
    the same files up to the last, that one of the same name and type and no larger, fewer in
    all or that one smaller."""
    *before, last = files
    if len(files) > len(whole) or before != whole[: len(before)]:
        return False
    name, kind, size = whole[len(before)]
    return last[:2] == (name, kind) and last[2] <= size and (len(files) < len(whole) or last[2] < size)


class MessageIds:
    """Deterministic ids for messages without a platform id.

    sha256 of (author, UTC time, text, n) where n counts earlier identical triples in the same
    export, so two identical "ok" at the same minute stay two messages, and overlapping exports
    of the same chat give the same ids.
    """

    def __init__(self, prefix: str = "h"):
        self.prefix = prefix
        self.seen: dict[tuple[str, str, str], int] = {}

    def __call__(self, author: str, timestamp: datetime, text: str) -> str:
        key = (author, iso_utc(timestamp), text)
        n = self.seen.get(key, 0)
        self.seen[key] = n + 1
        digest = hashlib.sha256("\0".join([*key, str(n)]).encode("utf-8")).hexdigest()
        return f"{self.prefix}-{digest[:16]}"


def strip_invisible(text: str) -> str:
    """Drop the direction marks and BOMs some apps sprinkle into exports."""
    return text.translate(_INVISIBLE)


def strip_base64(text: str) -> str:
    """Replace data URIs (`[image]` for images, `[data]` otherwise) and long base64 runs (`[data]`)."""

    def data_uri(match: re.Match[str]) -> str:
        mime = (match.group(1) or "").lower()
        return "[image]" if mime.startswith("image/") else "[data]"

    return _BASE64_RUN_RE.sub("[data]", _DATA_URI_RE.sub(data_uri, text))


def as_str(value: Any) -> str | None:
    """A JSON string or number as text; None for anything else."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str | int | float):
        return str(value)
    return None
