"""The generic chat format (docs/ingest.md): a JSON array, a JSON object or JSON Lines of messages.

    [{"id": "m1", "author": "Alice", "timestamp": "2024-03-04T09:00:00Z", "text": "Hi",
      "source_ref": "https://…", "thread": "t1", "attachments": ["plan.pdf"],
      "conversation": "team"}]

or `{"platform": "…", "conversation": "…", "title": "…", "messages": [ … ]}`, or one message
object per line. Messages are grouped by conversation (the message's `conversation`, else the
file's, else the file name) into day notes under `sources/chat/<platform>/<conversation>/`.
"""

from __future__ import annotations

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
    json_items,
    parse_time,
    read_text,
    strip_invisible,
    top_level_items,
)
from vaultmind.ingest.errors import ingest_error
from vaultmind.ingest.model import SourceBatch
from vaultmind.markdown.render import Message, SourceMeta, chat_ref

DEFAULT_PLATFORM = "chat"


def parse_generic(path: Path, *, tz: tzinfo = UTC, warn: Callable[[str], None] | None = None) -> list[SourceBatch]:
    """Parse one generic chat file (`.json` array/object or `.jsonl`)."""
    text = read_text(path)
    platform, default_conv, title = DEFAULT_PLATFORM, path.stem, None
    items, data = json_items(path, text, warn)
    if data is not None:
        items, platform, default_conv, title = _object_items(path, text, data)
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


def _object_items(path: Path, text: str, data: dict[str, Any]) -> tuple[list[tuple[int, Any]], str, str, str | None]:
    if "messages" not in data and "author" in data:  # JSON Lines with a single message
        return [(1, data)], DEFAULT_PLATFORM, path.stem, None
    if not isinstance(data.get("messages"), list):
        raise ingest_error(path, 'expected a "messages" array in the object', line=1)
    # the object's own "messages", item by item, so each message knows its line (a "messages"
    # array inside another of its values, which comes first in the text, is not it)
    items = top_level_items(path, text, "messages")
    platform = as_str(data.get("platform")) or DEFAULT_PLATFORM
    conv = as_str(data.get("conversation")) or path.stem
    return items, platform, conv, as_str(data.get("title"))


class _Ids:
    """The message ids of one file. A message's `id` as text, else one derived from its content
    (`MessageIds`). `1` (a number) and `"1"` (a string) read alike: when both name messages of one
    conversation that differ, the later one in the file is `1~number` (or `1~string`), with a
    warning, rather than being taken for the first and lost; an id used one way only keeps its
    text, as it always had. An id given again to a message that differs (its author, time or
    text) names another message: it is `1~2` (then `1~3` …), with a warning — before, it was
    counted as known and lost. The same message listed twice is one."""

    def __init__(self, path: Path, warn: Callable[[str], None] | None):
        self.path = path
        self.warn = warn
        self.derived = MessageIds()
        # (conversation, id) → each message it was given to: (kind, content, the id it got)
        self.given: dict[tuple[str, str], list[tuple[str, tuple[str, datetime, str], str]]] = {}

    def __call__(self, line: int, conv: str, raw: Any, author: str, timestamp: datetime, text: str) -> str:
        given = as_str(raw)
        if not given:
            return self.derived(author, timestamp, text)
        kind = "string" if isinstance(raw, str) else "number"
        content = (author, timestamp, text)
        seen = self.given.setdefault((conv, given), [])
        same = next((assigned for _, earlier, assigned in seen if earlier == content), None)
        if same is not None:
            return same
        if not seen:
            assigned = given
        elif all(k != kind for k, _, _ in seen):
            assigned = f"{given}~{kind}"
            self._say(line, conv, f"message id {raw!r} (a {kind}) is also the id of an earlier message (a {seen[0][0]})", assigned)
        else:
            assigned = f"{given}~{len(seen) + 1}"
            self._say(line, conv, f"message id {raw!r} is also the id of an earlier message that differs", assigned)
        seen.append((kind, content, assigned))
        return assigned

    def _say(self, line: int, conv: str, what: str, assigned: str) -> None:
        if self.warn is not None:
            self.warn(
                f"{self.path}: line {line}: {what} of conversation {conv!r}; kept as message {assigned!r} "
                "(give each message an id of its own)"
            )


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
