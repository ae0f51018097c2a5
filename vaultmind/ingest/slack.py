"""Slack workspace exports: a folder (or its `.zip`) with `channels.json`, `users.json`,
`groups.json`, `dms.json`, `mpims.json` and one folder of `YYYY-MM-DD.json` day files per
conversation. A single JSON array of Slack messages (one channel) is read too.

- one batch per conversation: channels and private channels by name (their folder named by
  their name, or by their id), DMs and group DMs by their members' names; notes by UTC day under `sources/chat/slack/<team>/<conversation>/`;
- authors: user ids resolved through `users.json` (real name, else display name, else handle);
  mentions `<@U…>`, `<#C…|name>`, `<!here>` and links `<url|label>` become readable text;
- thread replies stay in their day note; their `source_ref` carries the thread:
  `slack://archives/<channel id>/p<ts>?thread_ts=<parent ts>`;
- system messages (joins, leaves, topic/purpose/name changes, pins, deleted-message tombstones,
  …) are dropped: only plain messages and the subtypes in `KEPT_SUBTYPES` are kept;
- shared files become `[file: title]` lines (else its name, its type, "a file"); message id = the message's `ts`; an edited
  message carries its edit time (`edited.ts`): a later export of an edit shows its text, the
  text before kept below it.
"""

from __future__ import annotations

import re
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultmind.ingest.common import as_str, epoch_to_utc, json_array_items, load_json, read_text
from vaultmind.ingest.errors import IngestError, ingest_error
from vaultmind.ingest.model import SourceBatch
from vaultmind.markdown.render import Message, SourceMeta, iso_utc

KEPT_SUBTYPES = frozenset({"", "bot_message", "me_message", "file_share", "thread_broadcast"})
ALONE_TEAM = "workspace"  # the team of a channel file whose messages name none
META_FILES = ("channels.json", "groups.json", "mpims.json", "dms.json", "users.json")
_DAY_RE = re.compile(r"\d{4}-\d{2}-\d{2}\.json")
_ANGLE_RE = re.compile(r"<([^<>\n]+)>")
_THREAD_FILE_RE = re.compile(r"(.+)_thread_\d+(?:\.\d+)?")


class _Export:
    """Read access to an export folder or zip: `read(rel)` and `days(folder)`; a zip is closed
    when the block using it ends (`with`). `warn`: what to say of how a file was read."""

    def __init__(self, path: Path, warn: Callable[[str], None] | None = None):
        self.path = path
        self.warn = warn
        self.zip: zipfile.ZipFile | None = None
        self.prefix = ""
        if path.is_file():
            try:
                self.zip = zipfile.ZipFile(path)
            except (zipfile.BadZipFile, OSError) as exc:
                raise IngestError("not a Slack export folder or zip", path=path) from exc
            names = self.zip.namelist()
            marker = next((n for n in sorted(names, key=len) if n.rsplit("/", 1)[-1] in META_FILES), None)
            if marker is not None and "/" in marker:
                self.prefix = marker.rsplit("/", 1)[0] + "/"

    def __enter__(self) -> _Export:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.zip is not None:
            self.zip.close()

    def where(self, rel: str) -> Path:
        return Path(f"{self.path}/{rel}") if self.zip is None else Path(f"{self.path}:{self.prefix}{rel}")

    def text(self, rel: str) -> str | None:
        if self.zip is None:
            full = self.path / rel
            return read_text(full) if full.is_file() else None
        try:
            data = self.zip.read(self.prefix + rel)
        except KeyError:
            return None
        return read_text(self.where(rel), data)

    def folders(self) -> list[str]:
        if self.zip is None:
            return sorted(p.name for p in self.path.iterdir() if p.is_dir())
        found = {
            n[len(self.prefix) :].split("/", 1)[0]
            for n in self.zip.namelist()
            if n.startswith(self.prefix) and n[len(self.prefix) :].count("/") == 1
        }
        return sorted(found)

    def days(self, folder: str) -> list[str]:
        if self.zip is None:
            base = self.path / folder
            return sorted(f"{folder}/{p.name}" for p in base.iterdir() if _DAY_RE.fullmatch(p.name))
        prefix = f"{self.prefix}{folder}/"
        return sorted(
            n[len(self.prefix) :]
            for n in self.zip.namelist()
            if n.startswith(prefix) and _DAY_RE.fullmatch(n[len(prefix) :])
        )


@dataclass(slots=True)
class _Conversation:
    id: str
    folder: str
    title: str
    scope_name: str
    members: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Names:
    users: dict[str, str] = field(default_factory=dict)
    channels: dict[str, str] = field(default_factory=dict)
    # users no users.json lists (a Slack Connect channel's members from another workspace, any
    # user of a channel file read alone), named by the `user_profile` their own messages carry
    outside: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class _Mentioning:
    """A message that mentions a user users.json does not list, read before the export's other
    messages could name them: read again once they have (`_name_outside`)."""

    messages: list[Message]
    index: int
    path: Path
    line: int
    item: dict[str, Any]
    channel_id: str
    earlier: dict[str, list[str]]


def parse_slack(path: Path, *, warn: Callable[[str], None] | None = None) -> list[SourceBatch]:
    """Parse a Slack workspace export folder or zip, or a single channel's message array.

    One day file of an export folder (`<export>/<channel>/YYYY-MM-DD.json` beside the export's
    `users.json` or `channels.json`) is read as that day of the whole export: the same source
    id, authors and mentions, so ingesting it and then the export writes each message once."""
    if path.is_file() and path.suffix.lower() == ".json":
        root = path.parent.parent
        if _DAY_RE.fullmatch(path.name) and any((root / name).is_file() for name in META_FILES):
            return _parse_export(root, warn, only=f"{path.parent.name}/{path.name}")
        return _parse_channel_file(path, warn)
    return _parse_export(path, warn)


def _parse_export(path: Path, warn: Callable[[str], None] | None, only: str | None = None) -> list[SourceBatch]:
    """The batches of an export folder or zip; with `only` (a day file's path in it), of that day."""
    if not path.is_dir() and not path.is_file():
        raise IngestError("no such file or folder", path=path)
    with _Export(path, warn) as export:
        return _read_export(export, only)


def _read_export(export: _Export, only: str | None) -> list[SourceBatch]:
    path = export.path
    users = _load_list(export, "users.json")
    names = _Names(users={u["id"]: _user_name(u) for u in users if isinstance(u.get("id"), str)})
    conversations: list[_Conversation] = []
    for meta_file in ("channels.json", "groups.json", "mpims.json"):
        for entry in _load_list(export, meta_file):
            cid, name = as_str(entry.get("id")), as_str(entry.get("name"))
            if not cid or not name:
                continue
            names.channels[cid] = name
            if meta_file == "mpims.json":
                members = [names.users.get(m, m) for m in entry.get("members") or [] if isinstance(m, str)]
                title = "Group DM " + ", ".join(members) if members else name
                conversations.append(_Conversation(cid, name, title, name))
            else:
                conversations.append(_Conversation(cid, name, f"#{name}", name))
    for entry in _load_list(export, "dms.json"):
        cid = as_str(entry.get("id"))
        if not cid:
            continue
        members = sorted({names.users.get(m, m) for m in entry.get("members") or [] if isinstance(m, str)})
        label = ", ".join(members) or cid
        conversations.append(_Conversation(cid, cid, f"DM {label}", "dm-" + "-".join(members or [cid])))
    folders = set(export.folders())
    for conv in conversations:  # a folder named by the channel's id (slackdump, Enterprise Grid)
        if conv.folder not in folders and conv.id in folders:
            conv.folder = conv.id
    listed = {c.folder for c in conversations}
    for folder in sorted(folders):  # conversations missing from the metadata files: by their folder
        if folder not in listed and export.days(folder):
            conversations.append(_Conversation(folder, folder, f"#{folder}", folder))
    if not conversations and not users:
        raise IngestError(
            "not a Slack export: no channels.json, users.json or conversation folders", path=path
        )
    read: list[tuple[_Conversation, list[Message], dict[str, list[str]]]] = []
    mentioning: list[_Mentioning] = []
    team_votes: Counter[str] = Counter()  # the messages' own team, when users.json has none
    for conv in sorted(conversations, key=lambda c: (c.scope_name, c.id)):
        messages: list[Message] = []
        earlier: dict[str, list[str]] = {}  # by ts: its texts as earlier vaultminds read it
        for rel in export.days(conv.folder) if conv.folder in folders else []:
            if only is not None and rel != only:
                continue
            text = export.text(rel) or "[]"
            for line, item in json_array_items(export.where(rel), text, export.warn):
                if isinstance(item, dict) and isinstance(item.get("team"), str) and item["team"]:
                    team_votes[item["team"]] += 1
                message = _message(export.where(rel), line, item, conv.id, names, earlier)
                _learn_outside(item, names)  # (a join carries the joiner's profile too)
                if message is not None:
                    if _mentions_outside(item, names):
                        mentioning.append(_Mentioning(messages, len(messages), export.where(rel), line, item, conv.id, earlier))
                    messages.append(message)
        if messages:
            read.append((conv, messages, earlier))
    _name_outside(mentioning, names)
    team = _team(users, export, team_votes)
    before = export.path.stem  # the team an earlier vaultmind read from an export without team_id
    legacy = before != team and not any(isinstance(u.get("team_id"), str) and u["team_id"] for u in users)
    return [
        SourceBatch(
            meta=SourceMeta(
                kind="chat",
                source_id=f"slack:{team}/{conv.id}",
                scope=f"slack/{team}/{conv.scope_name}",
                title=conv.title,
            ),
            messages=tuple(messages),
            legacy_source_id=f"slack:{before}/{conv.id}" if legacy else None,
            legacy_scope=f"slack/{before}/{conv.scope_name}" if legacy else None,
            by_name=_by_name(team, conv),
            earlier_texts=_readings(earlier),
        )
        for conv, messages, earlier in read
    ]


def _parse_channel_file(path: Path, warn: Callable[[str], None] | None) -> list[SourceBatch]:
    """One channel's messages: `<channel>.json`, slackdump's `<channel>_thread_<ts>.json`, or one
    `<channel>/YYYY-MM-DD.json` day file away from its export (user ids then stay unresolved)."""
    thread = _THREAD_FILE_RE.fullmatch(path.stem)
    channel = thread.group(1) if thread else path.stem
    if _DAY_RE.fullmatch(path.name) and path.parent.name:  # one day file of an export folder
        channel = path.parent.name
    text = read_text(path)
    names = _Names()
    messages: list[Message] = []
    earlier: dict[str, list[str]] = {}
    team_votes: Counter[str] = Counter()
    mentioning: list[_Mentioning] = []
    for line, item in json_array_items(path, text, warn):
        if isinstance(item, dict) and isinstance(item.get("team"), str):
            team_votes[item["team"]] += 1
        message = _message(path, line, item, channel, names, earlier)
        _learn_outside(item, names)
        if message is not None:
            if _mentions_outside(item, names):
                mentioning.append(_Mentioning(messages, len(messages), path, line, item, channel, earlier))
            messages.append(message)
    _name_outside(mentioning, names)
    team = _most_common(team_votes) or ALONE_TEAM
    meta = SourceMeta(
        kind="chat", source_id=f"slack:{team}/{channel}", scope=f"slack/{team}/{channel}", title=f"#{channel}"
    )
    batch = SourceBatch(meta=meta, messages=tuple(messages), name_only=True, earlier_texts=_readings(earlier))
    return [batch] if messages else []


def _by_name(team: str, conv: _Conversation) -> tuple[tuple[str, str], ...]:
    """The (source id, scope) a conversation of an export gets when its file or folder is
    ingested alone (`_parse_channel_file`: named by its folder, of its messages' team, else of
    `workspace`): the writer continues the notes written so (`SourceBatch.by_name`)."""
    if conv.folder == conv.id:
        return ()
    teams = [team] if team == ALONE_TEAM else [team, ALONE_TEAM]
    return tuple((f"slack:{t}/{conv.folder}", f"slack/{t}/{conv.folder}") for t in teams)


def _load_list(export: _Export, rel: str) -> list[dict[str, Any]]:
    text = export.text(rel)
    if text is None:
        return []
    data = load_json(export.where(rel), text, export.warn)
    if not isinstance(data, list):
        raise ingest_error(export.where(rel), "expected a JSON array", line=1)
    return [item for item in data if isinstance(item, dict)]


def _user_name(user: dict[str, Any]) -> str:
    profile = user.get("profile") if isinstance(user.get("profile"), dict) else {}
    assert isinstance(profile, dict)
    for value in (
        profile.get("real_name"),
        user.get("real_name"),
        profile.get("display_name"),
        user.get("name"),
    ):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return str(user.get("id"))


def _most_common(votes: Counter[str]) -> str | None:
    if not votes:
        return None
    return sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


_EXPORT_NAME_RE = re.compile(r"\s+slack export\b.*$", re.IGNORECASE)


def _team(users: list[dict[str, Any]], export: _Export, messages: Counter[str]) -> str:
    """The workspace's id: its users' `team_id`, else its messages' `team`, else the export's
    name without Slack's "Slack export <dates>" tail ("Acme Slack export Jun 1 2024 - Jun 30
    2024" → "Acme"), so next month's export is the same workspace."""
    votes = Counter(u["team_id"] for u in users if isinstance(u.get("team_id"), str) and u["team_id"])
    return _most_common(votes) or _most_common(messages) or _EXPORT_NAME_RE.sub("", export.path.stem) or export.path.stem


def _message(
    path: Path, line: int, item: Any, channel_id: str, names: _Names, earlier: dict[str, list[str]]
) -> Message | None:
    """One message of an export, None for one not kept; `earlier` takes its text as an earlier
    vaultmind read it, when that differs (`SourceBatch.earlier_texts`)."""
    if not isinstance(item, dict):
        raise ingest_error(path, "a Slack message must be a JSON object", line=line)
    if item.get("type", "message") != "message":
        return None
    subtype = item.get("subtype") or ""
    if subtype not in KEPT_SUBTYPES or item.get("hidden"):
        return None
    ts = as_str(item.get("ts"))
    if not ts or not re.fullmatch(r"\d+(?:\.\d+)?", ts):
        raise ingest_error(path, 'message has no valid "ts"', line=line)
    own = _readable(as_str(item.get("text")) or "", names)
    attached = _attached(item, names)
    text = "\n\n".join(filter(None, [own.strip("\n"), attached])) if own.strip() else attached
    # earlier readings: a bot's attachments below a text of its own were left out; a file was
    # written by its title or name alone, else "[file: file]"
    alone = own if own.strip() else attached
    files = [f for f in item.get("files") or [] if isinstance(f, dict)]
    lines = [_file_line(f) for f in files]
    readings = [_with_files(alone, [f"[file: {_file_name(f) or 'file'}]" for f in files]), _with_files(alone, lines)]
    text = _with_files(text, lines)
    if said := [reading for reading in dict.fromkeys(readings) if reading != text]:
        earlier[ts] = said
    if not text.strip():
        return None
    ref = f"slack://archives/{channel_id}/p{ts.replace('.', '')}"
    thread_ts = as_str(item.get("thread_ts"))
    if thread_ts and thread_ts != ts:
        ref += f"?thread_ts={thread_ts}"
    return Message(
        message_id=ts,
        author=_author(item, names),
        timestamp=epoch_to_utc(ts),
        text=text,
        source_ref=ref,
        edited=_edited(item),
    )


def _readings(earlier: dict[str, list[str]]) -> tuple[tuple[str, str], ...]:
    return tuple((ts, text) for ts, texts in sorted(earlier.items()) for text in texts)


def _attached(item: dict[str, Any], names: _Names) -> str:
    """The text of a message's attachments (a bot's post: a pull request's title and body, an
    alert), link previews left out (an attachment unfurling a link: `from_url`, `original_url`)
    unless the message has no text of its own, when they are all it says."""
    attachments = [a for a in item.get("attachments") or [] if isinstance(a, dict)]
    if (as_str(item.get("text")) or "").strip():
        attachments = [a for a in attachments if not (a.get("from_url") or a.get("original_url"))]
    texts = [a.get("text") or a.get("fallback") for a in attachments]
    return "\n".join(_readable(t, names) for t in texts if isinstance(t, str) and t.strip())


def _file_name(file: dict[str, Any]) -> str:
    return as_str(file.get("title")) or as_str(file.get("name")) or ""


# a file Slack no longer shows: deleted, or beyond a free workspace's history limit
_FILE_GONE = {"tombstone": "deleted", "hidden_by_limit": "hidden by the workspace's plan"}


def _file_line(file: dict[str, Any]) -> str:
    """A shared file's line: `[file: <its title or name>]`; one without (a deleted file, one
    hidden by the workspace's plan) by its type (`[file: PDF]`), else `[file: a file]`, and why
    Slack does not show it."""
    name = _file_name(file) or as_str(file.get("pretty_type")) or as_str(file.get("filetype")) or "a file"
    gone = _FILE_GONE.get(as_str(file.get("mode")) or "")
    return f"[file: {name}{', ' + gone if gone else ''}]"


def _with_files(text: str, lines: list[str]) -> str:
    return "\n".join([text, *lines]) if text.strip() else "\n".join(lines)


def _edited(item: dict[str, Any]) -> str | None:
    """When the message was last edited (`edited.ts`), as ISO 8601 UTC: a later export of an
    edit shows its text, the text before kept below it (`revisions.apply_edit`)."""
    edited = item.get("edited")
    ts = as_str(edited.get("ts")) if isinstance(edited, dict) else None
    return iso_utc(epoch_to_utc(ts)) if ts and re.fullmatch(r"\d+(?:\.\d+)?", ts) else None


def _author(item: dict[str, Any], names: _Names) -> str:
    user = as_str(item.get("user"))
    if user and user in names.users:
        return names.users[user]
    profile = _profile_name(item)
    if profile is not None:
        return profile
    bot = item.get("bot_profile")
    for value in (item.get("username"), bot.get("name") if isinstance(bot, dict) else None, user):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return "unknown"


def _profile_name(item: dict[str, Any]) -> str | None:
    """The name a message's `user_profile` gives its author (real name, else display name, else
    user name)."""
    profile = item.get("user_profile")
    if isinstance(profile, dict):
        for key in ("real_name", "display_name", "name"):
            value = profile.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


_MENTION_RE = re.compile(r"<@([^<>|\n]+)")


def _learn_outside(item: Any, names: _Names) -> None:
    """Learn the name of a user users.json does not list from their message's `user_profile`
    (the first one read names them)."""
    user = as_str(item.get("user")) if isinstance(item, dict) else None
    if user and user not in names.users and user not in names.outside:
        name = _profile_name(item)
        if name is not None:
            names.outside[user] = name


def _mentions_outside(item: dict[str, Any], names: _Names) -> bool:
    """Whether a message mentions a user users.json does not list (to read it again once the
    export has named them: `_name_outside`)."""
    texts = [item.get("text"), *(a.get("text") or a.get("fallback") for a in item.get("attachments") or [] if isinstance(a, dict))]
    return any(m not in names.users for t in texts if isinstance(t, str) for m in _MENTION_RE.findall(t))


def _name_outside(mentioning: list[_Mentioning], names: _Names) -> None:
    """The messages that mention a user users.json does not list, read again with the names the
    whole export's messages gave such users: `@U0EXT9` reads `@Priya Raman` (a Slack Connect
    channel's guest), wherever her messages are. The text before, and the texts earlier
    vaultminds wrote, all with the id (read before, with users.json's names only), stay known as
    the message (`SourceBatch.earlier_texts`); no vaultmind wrote an earlier reading with the name."""
    if not names.outside:
        return
    both = _Names(users={**names.outside, **names.users}, channels=names.channels)
    for m in mentioning:
        before = m.messages[m.index]
        message = _message(m.path, m.line, m.item, m.channel_id, both, {})
        if message is None or message.text == before.text:
            continue
        m.messages[m.index] = message
        m.earlier[message.message_id] = list(dict.fromkeys([*m.earlier.get(message.message_id, []), before.text]))


def _readable(text: str, names: _Names) -> str:
    """Slack mrkdwn → plain text: mentions resolved, links as Markdown, entities unescaped."""

    def repl(match: re.Match[str]) -> str:
        target, _, label = match.group(1).partition("|")
        if target.startswith("@"):
            return "@" + (label or names.users.get(target[1:], target[1:]))
        if target.startswith("#"):
            return "#" + (label or names.channels.get(target[1:], target[1:]))
        if target.startswith("!"):
            return label or "@" + target[1:].split("^", 1)[0]
        if label and label != target:
            return f"[{label}]({target})"
        return target.removeprefix("mailto:")

    if "<" in text:
        text = _ANGLE_RE.sub(repl, text)
    if "&" in text:  # Slack escapes exactly these three
        text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return text
