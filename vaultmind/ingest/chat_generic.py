"""The generic chat format (docs/ingest.md): a JSON array, a JSON object or JSON Lines of messages.

    [{"id": "m1", "author": "Alice", "timestamp": "2024-03-04T09:00:00Z", "text": "Hi",
      "source_ref": "https://…", "thread": "t1", "attachments": ["plan.pdf"],
      "conversation": "team"}]

or `{"platform": "…", "conversation": "…", "title": "…", "messages": [ … ]}`, or one message
object per line. Messages are grouped by conversation (the message's `conversation`, else the
file's, else the file name) into day notes under `sources/chat/<platform>/<conversation>/`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any
from urllib.parse import quote

from vaultmind.ingest.common import (
    LocalClock,
    MessageIds,
    as_str,
    json_array_items,
    jsonl_items,
    parse_time,
    read_text,
    strip_invisible,
)
from vaultmind.ingest.errors import ingest_error
from vaultmind.ingest.model import SourceBatch
from vaultmind.markdown.render import Message, SourceMeta, chat_ref

DEFAULT_PLATFORM = "chat"


def parse_generic(path: Path, *, tz: tzinfo = UTC, warn: Callable[[str], None] | None = None) -> list[SourceBatch]:
    """Parse one generic chat file (`.json` array/object or `.jsonl`)."""
    text = read_text(path)
    stripped = text.lstrip()
    platform, default_conv, title = DEFAULT_PLATFORM, path.stem, None
    if stripped.startswith("["):
        items = list(json_array_items(path, text))
    elif stripped.startswith("{") and _is_single_object(text):
        items, platform, default_conv, title = _object_items(path, text)
    else:
        items = list(jsonl_items(path, text, warn))
    if not items:
        raise ingest_error(path, "no messages in the file", line=1)

    ids = _Ids(path, warn)
    clocks: dict[str, LocalClock] = {}  # per conversation: a file may list one after the other
    by_conv: dict[str, list[Message]] = {}
    for line, item in items:
        parsed = _message(path, line, item, default_conv, platform, tz, clocks, ids)
        if parsed is not None:
            by_conv.setdefault(parsed[0], []).append(parsed[1])
    for conv, clock in clocks.items():
        if clock.unordered:  # (not in time order: each time as read, its first pass in a repeated hour)
            by_conv[conv] = [replace(m, timestamp=read) for m, read in zip(by_conv[conv], clock.reads, strict=True)]
    batches = []
    for conv in sorted(by_conv):
        meta = SourceMeta(
            kind="chat",
            source_id=f"{platform}:{conv}",
            scope=f"{platform}/{conv}",
            title=title if title and len(by_conv) == 1 else conv,
        )
        batches.append(SourceBatch(meta=meta, messages=tuple(by_conv[conv]), local_times=clocks[conv].local))
    return batches


def _is_single_object(text: str) -> bool:
    """True when the file is one JSON object (possibly spread over lines), not JSON Lines."""
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def _object_items(path: Path, text: str) -> tuple[list[tuple[int, Any]], str, str, str | None]:
    data = json.loads(text)
    if "messages" not in data and "author" in data:  # JSON Lines with a single message
        return [(1, data)], DEFAULT_PLATFORM, path.stem, None
    if not isinstance(data.get("messages"), list):
        raise ingest_error(path, 'expected a "messages" array in the object', line=1)
    # re-read the array item by item so each message knows its line
    key = re.search(r'"messages"\s*:\s*\[', text)
    assert key is not None
    open_at = key.end() - 1
    _, end = json.JSONDecoder().raw_decode(text, open_at)
    lines_before = text.count("\n", 0, open_at)
    items = [(line + lines_before, item) for line, item in json_array_items(path, text[open_at:end])]
    platform = as_str(data.get("platform")) or DEFAULT_PLATFORM
    conv = as_str(data.get("conversation")) or path.stem
    return items, platform, conv, as_str(data.get("title"))


class _Ids:
    """The message ids of one file. A message's `id` as text, else one derived from its content
    (`MessageIds`). `1` (a number) and `"1"` (a string) read alike: when both name messages of one
    conversation that differ, the later one in the file is `1~number` (or `1~string`), with a
    warning, rather than being taken for the first and lost; an id used one way only keeps its
    text, as it always had."""

    def __init__(self, path: Path, warn: Callable[[str], None] | None):
        self.path = path
        self.warn = warn
        self.derived = MessageIds()
        self.first: dict[tuple[str, str], tuple[str, tuple[str, datetime, str]]] = {}

    def __call__(self, line: int, conv: str, raw: Any, author: str, timestamp: datetime, text: str) -> str:
        given = as_str(raw)
        if not given:
            return self.derived(author, timestamp, text)
        kind = "string" if isinstance(raw, str) else "number"
        first_kind, first_content = self.first.setdefault((conv, given), (kind, (author, timestamp, text)))
        if first_kind == kind or first_content == (author, timestamp, text):
            return given
        distinct = f"{given}~{kind}"
        if self.warn is not None:
            self.warn(
                f"{self.path}: line {line}: message id {raw!r} (a {kind}) is also the id of an earlier "
                f"message (a {first_kind}) of conversation {conv!r}; kept as message {distinct!r} "
                "(give each message an id of its own)"
            )
        return distinct


def _message(
    path: Path,
    line: int,
    item: Any,
    default_conv: str,
    platform: str,
    tz: tzinfo,
    clocks: dict[str, LocalClock],
    ids: _Ids,
) -> tuple[str, Message] | None:
    if not isinstance(item, dict):
        raise ingest_error(path, "a message must be a JSON object", line=line)
    author = as_str(item.get("author"))
    if not author or not author.strip():
        raise ingest_error(path, 'message has no "author"', line=line)
    if "timestamp" not in item:
        raise ingest_error(path, 'message has no "timestamp"', line=line)
    try:
        read = parse_time(item["timestamp"], tz)  # (a derived id hashes this reading, as it always did)
    except (ValueError, OverflowError, OSError) as exc:
        raise ingest_error(
            path, f"timestamp {item['timestamp']!r} is not ISO 8601 or epoch seconds", line=line
        ) from exc
    if "text" not in item:
        raise ingest_error(path, 'message has no "text"', line=line)
    raw_text = item["text"] if item["text"] is not None else ""
    if not isinstance(raw_text, str):
        raise ingest_error(path, '"text" must be a string', line=line)
    text = strip_invisible(raw_text)
    attachments = item.get("attachments") or []
    if not isinstance(attachments, list):
        raise ingest_error(path, '"attachments" must be a list', line=line)
    lines = [_attachment(path, line, a) for a in attachments]
    if lines:
        text = "\n".join([text, *lines]) if text else "\n".join(lines)
    if not text.strip():
        return None  # an empty message: nothing to remember
    conv = as_str(item.get("conversation")) or default_conv
    message_id = ids(line, conv, item.get("id"), author, read, text)
    timestamp = clocks.setdefault(conv, LocalClock(tz)).place(item["timestamp"], read)
    source_ref = as_str(item.get("source_ref"))
    thread = as_str(item.get("thread"))
    if thread:
        base = source_ref or chat_ref(platform, conv, message_id)
        source_ref = f"{base}{'&' if '?' in base else '?'}thread={quote(thread, safe='')}"
    return conv, Message(
        message_id=message_id, author=author.strip(), timestamp=timestamp, text=text, source_ref=source_ref
    )


def _attachment(path: Path, line: int, value: Any) -> str:
    if isinstance(value, str):
        return f"[attachment: {value}]"
    if isinstance(value, dict):
        name = as_str(value.get("name")) or as_str(value.get("title")) or "file"
        url = as_str(value.get("url"))
        return f"[attachment: {name} {url}]" if url else f"[attachment: {name}]"
    raise ingest_error(path, "an attachment must be a string or an object with a name", line=line)
