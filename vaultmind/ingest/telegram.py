"""Telegram Desktop JSON exports: one chat (`result.json` with `messages`) or the whole account
(`chats.list[]`, plus `left_chats.list[]`).

- one batch per chat, notes by UTC day under `sources/chat/telegram/<chat name>/`;
- `type: "service"` messages (joins, pins, calls, title changes) are dropped;
- rich text (`text` as a list of strings and entities) is flattened to plain text; `text_link`
  entities become Markdown links; media become a line like `[photo]`, `[file: report.pdf]`,
  `[voice message]`, or the sticker's emoji; a poll its question and a line per answer with
  its votes, a shared contact its name and number, a location its point (and a venue's name
  and address);
- time: `date_unixtime` (UTC) when present, else `date` read as local time in `tz` (in the
  hour an autumn clock change repeats, by the file's order: `LocalClock`);
- message id: Telegram's id; `source_ref`: `telegram://chat/<chat id>/<message id>`;
- a message edited in Telegram carries its edit time (`edited_unixtime`, else `edited` read as
  `date` is): a later export of an edit shows its text, the text before kept below it
  (`revisions.apply_edit`), and an older export changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

from vaultmind.ingest.common import LocalClock, MessageIds, as_str, load_json, read_time
from vaultmind.ingest.errors import ingest_error
from vaultmind.ingest.model import SourceBatch
from vaultmind.markdown.render import Message, SourceMeta, iso_utc


def parse_telegram(path: Path, *, tz: tzinfo = UTC, warn: Callable[[str], None] | None = None) -> list[SourceBatch]:
    """Parse a Telegram Desktop JSON export (a single chat or the whole account)."""
    data = load_json(path, warn=warn)
    if not isinstance(data, dict):
        raise ingest_error(path, "expected a Telegram export object", line=1)
    chats: list[Any] = []
    if isinstance(data.get("messages"), list):
        chats.append(data)
    for key in ("chats", "left_chats"):
        group = data.get(key)
        if isinstance(group, dict) and isinstance(group.get("list"), list):
            chats.extend(group["list"])
    if not chats:
        raise ingest_error(path, 'no "messages" and no "chats.list" in this export', line=1)
    batches = []
    for index, chat in enumerate(chats):
        batch = _chat(path, index, chat, tz, single=len(chats) == 1)
        if batch is not None:
            batches.append(batch)
    return batches


def _chat(path: Path, index: int, chat: Any, tz: tzinfo, *, single: bool) -> SourceBatch | None:
    if not isinstance(chat, dict) or not isinstance(chat.get("messages"), list):
        raise ingest_error(path, 'a chat must be an object with a "messages" list', record=index)
    # a chat without a name: "Saved Messages", else by its id (its place in the export changes
    # with every export: Telegram lists chats by recent activity)
    saved = chat.get("type") == "saved_messages"
    name = (
        as_str(chat.get("name"))
        or ("Saved Messages" if saved else None)
        or (path.stem if single else f"chat-{as_str(chat.get('id')) or index + 1}")
    )
    chat_id = as_str(chat.get("id")) or name
    ids = MessageIds()
    clock = LocalClock(tz)  # (an export without `date_unixtime`: local times, in order)
    messages: list[Message] = []
    clocked: list[int] = []  # the messages whose time the clock placed (no `date_unixtime`)
    earlier: list[tuple[str, str]] = []  # (id, the text an earlier vaultmind gave it)
    for number, item in enumerate(chat["messages"]):
        message = _message(path, name, number, item, chat_id, clock, ids)
        if message is not None:
            if not _said(item, "date_unixtime"):
                clocked.append(len(messages))
            messages.append(message)
            before = _earlier_text(item, message.text)
            if before is not None:
                earlier.append((message.message_id, before))
    if clock.unordered:  # (not in time order: each time as read, its first pass in a repeated hour)
        for at, read in zip(clocked, clock.reads, strict=True):
            messages[at] = replace(messages[at], timestamp=read)
    if not messages:
        return None
    meta = SourceMeta(kind="chat", source_id=f"telegram:{chat_id}", scope=f"telegram/{name}", title=name)
    return SourceBatch(meta=meta, messages=tuple(messages), local_times=bool(clocked), earlier_texts=tuple(earlier))


def _message(
    path: Path, chat: str, number: int, item: Any, chat_id: str, clock: LocalClock, ids: MessageIds
) -> Message | None:
    where = f"chat {chat!r}, message {number}"
    if not isinstance(item, dict):
        raise ingest_error(path, f"{where}: a message must be an object")
    if item.get("type", "message") != "message":
        return None
    tz = clock.tz
    read = _time(path, where, item, tz)  # (a derived id hashes this reading, as it always did)
    text = _text(item, _media(item))
    if not text.strip():
        return None
    author = as_str(item.get("from")) or ("Deleted Account" if "from" in item else as_str(item.get("actor")))
    author = author or as_str(item.get("from_id")) or "unknown"
    # (a message without Telegram's id: the id hashes the text as vaultmind read it before)
    message_id = as_str(item.get("id")) or ids(author, read, _text(item, _media(item, before=True)))
    timestamp = read if _said(item, "date_unixtime") else clock.place(item.get("date"), read)
    ref = f"telegram://chat/{chat_id}/{message_id}" if as_str(item.get("id")) else None
    edited = _time(path, where, item, tz, edit=True) if _said(item, "edited_unixtime") or _said(item, "edited") else None
    return Message(
        message_id=message_id,
        author=author,
        timestamp=timestamp,
        text=text,
        source_ref=ref,
        edited=iso_utc(edited) if edited is not None else None,
    )


def _text(item: dict[str, Any], media: str) -> str:
    """The message's text: its own, its media's line below it, and who wrote it first when it
    was forwarded (the one who forwarded it is its author here)."""
    text = flatten_text(item.get("text"))
    if media:
        text = f"{text}\n{media}" if text.strip() else media
    forwarded = as_str(item.get("forwarded_from"))
    if forwarded and text.strip():
        text = f"[forwarded from {forwarded}]\n{text}"
    return text


def _earlier_text(item: dict[str, Any], text: str) -> str | None:
    """The text vaultmind gave a poll, a contact or a location before it kept what they say
    (`[poll: question]`, `[contact]`, `[location]`), when it differs from `text`: a note
    written then holds that one, known as this message (`SourceBatch.earlier_texts`)."""
    before = _text(item, _media(item, before=True))
    return before if before != text and before.strip() else None


def _said(item: dict[str, Any], key: str) -> bool:
    """Whether `item` gives a value for `key`: an empty one (`"edited": null` or `""`) says
    nothing, and a message with an empty edit time is read as unedited (it stopped the ingest)."""
    return item.get(key) not in (None, "")


def _time(path: Path, where: str, item: dict[str, Any], tz: tzinfo, *, edit: bool = False) -> datetime:
    """When the message was sent (`date_unixtime`, else `date` in `tz`), or, `edit`, last edited
    (`edited_unixtime`, else `edited`)."""
    key = "edited" if edit else "date"
    value = item.get(f"{key}_unixtime")
    zone: tzinfo = UTC
    if not _said(item, f"{key}_unixtime"):
        value, zone = item.get(key), tz
    if value is None:
        raise ingest_error(path, f'{where}: no "{key}_unixtime" or "{key}"')
    return read_time(path, where, value, zone, what=f"{'edit ' if edit else ''}time")


def flatten_text(value: Any) -> str:
    """Telegram's `text` (a string, or a list of strings and `{type, text, href?}` entities)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return ""
    out = []
    for part in value:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            text = as_str(part.get("text")) or ""
            href = as_str(part.get("href"))
            out.append(
                f"[{text}]({href})" if part.get("type") == "text_link" and href and href != text else text
            )
    return "".join(out)


def _media(item: dict[str, Any], *, before: bool = False) -> str:
    """The line a message's media adds; `before`, as vaultmind wrote it before a poll, a contact
    and a location said what they hold (`[poll: question]`, `[contact]`, `[location]`)."""
    if "photo" in item:
        return "[photo]"
    media_type = as_str(item.get("media_type"))
    if media_type == "sticker":
        return as_str(item.get("sticker_emoji")) or "[sticker]"
    if media_type:
        return f"[{media_type.replace('_', ' ')}]"
    if "file" in item:
        name = as_str(item.get("file_name")) or (as_str(item.get("file")) or "file").rsplit("/", 1)[-1]
        return f"[file: {name}]"
    poll = item.get("poll")
    if isinstance(poll, dict):
        return f"[poll: {as_str(poll.get('question')) or ''}]" if before else _poll(poll)
    if "location_information" in item:
        return "[location]" if before else _location(item)
    if "place_name" in item and not before:  # (a venue without a point)
        return _location(item)
    if "contact_information" in item:
        return "[contact]" if before else _contact(item.get("contact_information"))
    return ""


def _poll(poll: dict[str, Any]) -> str:
    """`[poll: question]` and a line per answer with its votes (`voters`: how many), the one
    you chose (`chosen`) said: the decision a poll records is in its answers."""
    lines = [f"[poll{' (closed)' if poll.get('closed') is True else ''}: {as_str(poll.get('question')) or ''}]"]
    answers = poll.get("answers")
    for answer in answers if isinstance(answers, list) else []:
        if not isinstance(answer, dict):
            continue
        votes = as_str(answer.get("voters")) or "0"
        chosen = ", your vote" if answer.get("chosen") is True else ""
        lines.append(f"- {as_str(answer.get('text')) or ''}: {votes} vote{'' if votes == '1' else 's'}{chosen}")
    return "\n".join(lines)


def _location(item: dict[str, Any]) -> str:
    """`[location: name, address (latitude, longitude)]`, as far as the export gives them (a
    venue has a name and an address; a location sent `null` has no point)."""
    point = item.get("location_information")
    where = ""
    if isinstance(point, dict) and as_str(point.get("latitude")) and as_str(point.get("longitude")):
        where = f"{as_str(point.get('latitude'))}, {as_str(point.get('longitude'))}"
    place = ", ".join(part for part in (as_str(item.get("place_name")), as_str(item.get("address"))) if part)
    said = f"{place} ({where})" if place and where else place or where
    return f"[location: {said}]" if said else "[location]"


def _contact(info: Any) -> str:
    """`[contact: name, phone number]`, as far as the export gives them."""
    if not isinstance(info, dict):
        return "[contact]"
    name = " ".join(part for part in (as_str(info.get("first_name")), as_str(info.get("last_name"))) if part)
    said = ", ".join(part for part in (name, as_str(info.get("phone_number"))) if part)
    return f"[contact: {said}]" if said else "[contact]"
