"""Instagram and Facebook Messenger JSON exports ("Download your information", format JSON):
one `message_1.json` (then `message_2.json` …) per conversation, in a folder of its own under
`messages/inbox/`:

    {"participants": [{"name": "Jane Doe"}, …], "title": "Jane Doe",
     "thread_path": "inbox/janedoe_1234567890",
     "messages": [{"sender_name": "Jane Doe", "timestamp_ms": 1579294140000, "content": "Hi!",
                   "photos": [{"uri": "…"}], "share": {"link": "…"}, "reactions": […]}, …]}

- one batch per conversation: `source_id` `<platform>:<thread>`, the thread being the last part
  of `thread_path` (it stays when a group is renamed), else the title, else the folder the file
  is in (`message_1.json` names nothing); the notes' title is the conversation's `title`;
- the export writes each byte of a text's UTF-8 as a character of its own (`Ã©` for `é`,
  Meta's export does so to this day): a text that reads back as UTF-8 so is read so
  (`_fixed`); one that does not (a real `Ã©`) stays as it is;
- time: `timestamp_ms` (UTC); messages are listed newest first, and the writer sorts them;
- no message id: `h-` + a hash of author, time and text (`MessageIds`), as for WhatsApp; the
  index cites `chat://<platform>/<thread>/<id>` (`render.derived_ref`);
- media add a line each: `[photo]`, `[video]`, `[voice message]`, `[GIF]`, `[file: name]`,
  `[sticker]`, a shared post's link (`[shared: https://…]`) followed by its caption
  (`share_text`, after its owner's name when the export gives it: `natgeo: …`); a message with
  neither text nor media (an unsent one, a reaction's notice without text) is left out;
  reactions are no messages and are dropped (the export has no read receipts), and so are the
  messages that say one and nothing else, without media ("Liked a message", "Reacted ❤️ to
  your message");
- a shared post's caption was dropped by earlier versions: the id still hashes the text without
  it, and that text is the message as an earlier vaultmind read it (`SourceBatch.earlier_texts`),
  so notes written before keep their messages, known, as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from vaultmind.ingest.common import MessageIds, as_str, load_json, read_time
from vaultmind.ingest.errors import ingest_error
from vaultmind.ingest.model import SourceBatch
from vaultmind.markdown.render import Message, SourceMeta

_PART_FILE_RE = re.compile(r"message_\d+", re.IGNORECASE)
_MEDIA = (("photos", "[photo]"), ("videos", "[video]"), ("audio_files", "[voice message]"), ("gifs", "[GIF]"))
# a reaction the export writes as a message of its own, beside the `reactions` of the message
# reacted to (an English download's words)
_REACTION_RE = re.compile(r"Liked a message|Reacted \S{1,16} to your message")


def parse_instagram(path: Path, *, platform: str = "instagram", warn: Callable[[str], None] | None = None) -> list[SourceBatch]:
    """Parse one conversation file of an Instagram (or, `platform="messenger"`, a Facebook
    Messenger) export."""
    data = load_json(path, warn=warn)
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise ingest_error(path, 'expected an object with a "messages" list', line=1)
    title = _fixed(as_str(data.get("title")) or "")
    thread = (as_str(data.get("thread_path")) or "").rstrip("/").rsplit("/", 1)[-1]
    folder = path.parent.name if _PART_FILE_RE.fullmatch(path.stem) and path.parent.name else path.stem
    name = thread or title or folder
    ids = MessageIds()
    messages = []
    earlier: list[tuple[str, str]] = []
    for number, item in enumerate(data["messages"]):
        message = _message(path, number, item, ids, earlier)
        if message is not None:
            messages.append(message)
    if not messages:
        return []
    meta = SourceMeta(kind="chat", source_id=f"{platform}:{name}", scope=f"{platform}/{name}", title=title or name)
    return [SourceBatch(meta=meta, messages=tuple(messages), earlier_texts=tuple(earlier))]


def _message(
    path: Path, number: int, item: Any, ids: MessageIds, earlier: list[tuple[str, str]]
) -> Message | None:
    """One message, None for one with neither text nor media; `earlier` takes its text as an
    earlier vaultmind read it (without a shared post's caption), when that differs."""
    where = f"message {number}"
    if not isinstance(item, dict):
        raise ingest_error(path, f"{where}: a message must be an object")
    author = _fixed(as_str(item.get("sender_name")) or "") or "unknown"
    timestamp = _time(path, where, item.get("timestamp_ms"))
    lines = [text] if (text := _fixed(as_str(item.get("content")) or "")).strip() else []
    media = _media(item)
    if not media and _REACTION_RE.fullmatch(text.strip()):
        return None  # a reaction, no message (as on every platform)
    lines += media
    before = "\n".join(lines)
    body = "\n".join([*lines, *_caption(item, text)])
    if not body.strip():
        return None
    message_id = ids(author, timestamp, before if before.strip() else body)  # (the id an earlier vaultmind gave it)
    if before.strip() and before != body:
        earlier.append((message_id, before))
    return Message(message_id=message_id, author=author, timestamp=timestamp, text=body)


def _time(path: Path, where: str, value: Any) -> datetime:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ingest_error(path, f'{where}: no "timestamp_ms" (milliseconds since 1970)')
    return read_time(path, where, value / 1000)  # (epoch seconds, as it always read them)


def _media(item: dict[str, Any]) -> list[str]:
    """A line for each photo, video, voice message, GIF, file, sticker and shared link."""
    out = [mark for key, mark in _MEDIA if isinstance(item.get(key), list) for _ in item[key]]
    files = item.get("files")
    if isinstance(files, list):
        for file in files:
            uri = as_str(file.get("uri")) if isinstance(file, dict) else None
            out.append(f"[file: {_fixed(uri.rsplit('/', 1)[-1]) if uri else 'a file'}]")
    if isinstance(item.get("sticker"), dict):
        out.append("[sticker]")
    share = item.get("share")
    link = as_str(share.get("link")) if isinstance(share, dict) else None
    if link:
        out.append(f"[shared: {link}]")
    return out


def _caption(item: dict[str, Any], text: str) -> list[str]:
    """The caption of a shared post or reel (`share.share_text`), after its owner's name when
    the export gives it (`natgeo: …`); none when there is no caption, or it is the message's
    `text` already."""
    share = item.get("share")
    caption = _fixed(as_str(share.get("share_text")) or "").strip() if isinstance(share, dict) else ""
    if not caption or caption == text.strip():
        return []
    owner = _fixed(as_str(share.get("original_content_owner")) or "").strip() if isinstance(share, dict) else ""
    return [f"{owner}: {caption}" if owner else caption]


def _fixed(text: str) -> str:
    """`text` as written: Meta's exports write each byte of its UTF-8 as a character
    (U+0000–U+00FF), so "café" reads "cafÃ©". Such a text, which reads back as UTF-8, is read
    so; any other stays as it is."""
    if text.isascii():
        return text
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text
