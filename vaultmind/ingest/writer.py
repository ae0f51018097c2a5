"""The shared writer: adapter batches and documents → canonical source notes in the vault.

Every ingest goes through two phases:

1. **plan** — read the notes already on disk, merge, validate and render every note in memory.
   Nothing is written; a bad message or an unreadable note stops the ingest here.
2. **write** — each note with `vault.atomic.write_atomic` (temp file + fsync + rename), in path
   order, only when its bytes changed. If the OS fails mid-way (disk full), the notes written so
   far are complete and valid; running the same ingest again finishes the job.

Merge rules (docs/ingest.md): a chat/email note is keyed by its path and `source_id`. When the
target note is vaultmind's (its `vaultmind_body_sha256` matches its body), its messages and the
new ones are united by message id (the note's text wins; a different text in the export is
reported as a warning), sorted by (timestamp, message id) and re-rendered. A note the user
edited is never overwritten: messages it does not hold go to a sibling `<stem>.2.md` (the next
free number), which later ingests keep merging into.

A message is never written twice: one already in another note (a day note you renamed, or,
for email, whose Message-IDs are global, a note of another mailbox) counts as known. When a
note of vaultmind's elsewhere holds some of a group's messages, or, for email, the messages it
answers (`SourceBatch.related`: a reply ingested after its thread), or, for email, a note whose
messages answer them (`Message.answers`: a parent ingested after its reply), the group's new
messages join that note instead — a note in `sources/`, wherever it was moved there. A chat
or email note moved out of `sources/` is the user's: its messages are known (a chat's, for its
own source only), never written to; the conversation's new messages go to a note of their own.
A thread the order of ingests left in two notes (a reply naming only a later message came first)
stays in two, each message in one: vaultmind removes no note it wrote.

Documents: one note per `source_id` in `sources/document/<scope>/`, found by its front matter
(so a renamed title keeps its file). Unchanged content (title, body, `source_ref`) is a no-op;
changed content replaces the note with `version` + 1 — unless the note's `source_ref` is
another file that still exists: then it is another document of the same id, and this one is
written under `<id>~2` (`_holding`).
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

from vaultmind.errors import RefuseToClobber, UsageError, VaultError, VaultmindError
from vaultmind.ingest.common import HASHED_ID_RE
from vaultmind.ingest.errors import IngestError
from vaultmind.ingest.model import DocumentInput, IngestReport, QuotedParent, SourceBatch
from vaultmind.ingest.moved import moved_notes, read_bytes
from vaultmind.markdown.chunking import message_leaves
from vaultmind.markdown.frontmatter import body_sha256, split_frontmatter, user_blocks, with_user_keys
from vaultmind.markdown.render import (
    CALLOUT_TYPES,
    Message,
    Quoted,
    SourceMeta,
    iso_utc,
    note_text,
    parse_meta,
    render_note,
    render_source_note,
    to_utc,
)
from vaultmind.vault.atomic import make_folders, write_atomic
from vaultmind.vault.encoding import DecodedText, decode_text, encoding_name
from vaultmind.vault.layout import SOURCES_DIR
from vaultmind.vault.scan import walk_folders

SLUG_MAX = 80
_SLUG_BAD_RE = re.compile(r"[^a-z0-9._-]+")
_DASH_RUN_RE = re.compile(r"-{2,}")
_H1_RE = re.compile(r"#[ \t]+\S")


# --- names ----------------------------------------------------------------------------------


def slugify(text: str, *, max_len: int = SLUG_MAX) -> str:
    """A file or folder name: lowercase `[a-z0-9._-]`, never empty, at most `max_len` chars.

    Accents are folded (`Café` → `cafe`); other characters become `-` (runs collapsed); leading
    and trailing `-` and `.` are trimmed. A name with nothing left (emoji, CJK) becomes `x-` +
    8 hex of its sha256, an empty one `unknown`.
    """
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    slug = _DASH_RUN_RE.sub("-", _SLUG_BAD_RE.sub("-", folded)).strip("-.")
    if not slug:
        if not text.strip():
            return "unknown"
        slug = "x-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    return slug[:max_len].rstrip("-.") or "unknown"


def scope_folder(scope: str) -> str:
    """The folder path of a scope: every `/`-separated segment slugified (`Slack/Acme` → `slack/acme`)."""
    parts = [slugify(part) for part in scope.split("/") if part.strip()]
    return "/".join(parts) or "unknown"


def note_path(batch: SourceBatch, day: str | None = None) -> str:
    """Vault-relative path of a batch's note: by UTC `day` for bucket "day", else `note_name`."""
    folder = f"{SOURCES_DIR}/{batch.meta.kind}/{scope_folder(batch.meta.scope)}"
    if batch.bucket == "day":
        if day is None:
            raise UsageError("a day-bucketed note needs its day")
        return f"{folder}/{day}.md"
    if not batch.note_name:
        raise IngestError(f"batch {batch.meta.source_id!r}: bucket {batch.bucket!r} needs a note_name")
    return f"{folder}/{slugify(batch.note_name)}.md"


def sibling_path(path: str, n: int) -> str:
    """`a/b.md` → `a/b.<n>.md` (n ≥ 2); n = 1 is the path itself."""
    return path if n == 1 else f"{path[:-3]}.{n}.md"


# --- existing notes --------------------------------------------------------------------------


@dataclass(slots=True)
class _Existing:
    path: str
    raw: bytes
    data: dict[str, Any]
    body: str
    owned: bool  # the body still hashes to vaultmind_body_sha256
    frontmatter_ok: bool = True  # its front matter is valid YAML
    _body_hash: str | None = None
    encoding: str = "utf-8"  # "utf-16-le", "gb18030" …: re-saved so (`_read_existing`), read, never rewritten

    @property
    def body_hash(self) -> str:
        """`body_sha256` of its body, computed once (documents compare every note's text)."""
        if self._body_hash is None:
            self._body_hash = body_sha256(self.body)
        return self._body_hash

    @property
    def source_id(self) -> str:
        value = self.data.get("source_id")
        return "" if value is None else str(value)

    def messages(self) -> dict[str, Message]:
        """The messages of a chat/email note, by message id, as they read back."""
        kind = str(self.data.get("kind") or "")
        if kind not in CALLOUT_TYPES:
            return {}
        headers: dict[str, dict[str, str]] = {}  # an email's subject and recipients, by message id
        for meta in _meta_lines(self.body):
            headers.setdefault(meta["id"], meta)
        out: dict[str, Message] = {}
        for leaf in message_leaves(self.body, source_id=self.source_id, callout_types=(CALLOUT_TYPES[kind],)):
            if leaf.message_id is None or leaf.message_id in out or leaf.timestamp is None:
                continue
            try:
                timestamp = to_utc(leaf.timestamp)
            except VaultmindError:
                continue
            out[leaf.message_id] = Message(
                message_id=leaf.message_id,
                author=leaf.author or "",
                timestamp=timestamp,
                text=leaf.text,
                source_ref=leaf.source_ref,
                subject=headers.get(leaf.message_id, {}).get("subject"),
                to=_people(headers.get(leaf.message_id, {}).get("to")),
                cc=_people(headers.get(leaf.message_id, {}).get("cc")),
                answers=tuple((headers.get(leaf.message_id, {}).get("answers") or "").split()),
                edited=headers.get(leaf.message_id, {}).get("edited"),
            )
        return out


def _people(value: str | None) -> tuple[str, ...]:
    """A meta line's `to` / `cc` ("A <a@x>; b@y") as its recipients."""
    return tuple(part.strip() for part in (value or "").split(";") if part.strip())


def _notes_below(root: Path) -> list[Path]:
    """The `.md` files below `root` (hidden folders too; symlinked folders not followed, as
    `Path.rglob` has it), sorted; none when it is no folder."""
    if not root.is_dir():
        return []
    return sorted(folder / name for folder, names in walk_folders(root) for name in names if name.endswith(".md"))


def _read_existing(vault: Path, rel: str) -> _Existing | None:
    """The note at `rel`, or None when nothing is there. Unreadable files count as foreign. A
    note re-saved as UTF-16 or UTF-32 (Windows Notepad's "Unicode"), or in a legacy East Asian
    code page (its "ANSI" on a Chinese, Japanese or Korean Windows), is read as the text it is,
    but is never vaultmind's to rewrite (that would re-encode it): as a note you edited, its
    messages are known and new ones go to a sibling (`_say_wide`)."""
    full = vault / rel
    if not os.path.lexists(full):
        return None
    try:
        raw = full.read_bytes() if full.is_file() and not full.is_symlink() else b""
    except OSError:
        raw = b""
    decoded = decode_text(raw)
    if decoded.text is None or decoded.bad_byte is not None:
        raw, decoded = b"", DecodedText("", "utf-8")
    fm = split_frontmatter(decoded.text or "")
    stored = fm.data.get("vaultmind_body_sha256")
    owned = bool(raw) and decoded.encoding == "utf-8" and isinstance(stored, str) and stored == body_sha256(fm.body)
    return _Existing(rel, raw, fm.data, fm.body, owned, fm.error is None, encoding=decoded.encoding)


def _text_of(raw: bytes) -> str:
    """A note's text to look into (its meta lines, its front matter): UTF-8, or what a byte order
    mark or NUL bytes say (`vault.encoding`); what does not decode, replaced."""
    decoded = decode_text(raw)
    return decoded.text if decoded.text is not None else raw.decode("utf-8", errors="replace")


# The front matter keys vaultmind writes in source notes; any other key of a note vaultmind owns
# (a tag, an alias, a property added in Obsidian) is the user's and is kept when the note is
# rewritten.
GENERATED_KEYS = frozenset(
    """vaultmind kind source_id scope title subject participants time_start time_end messages version
    source_ref vaultmind_body_sha256""".split()
)
def _carries(note: _Existing) -> bool:
    """Whether the front matter keys vaultmind does not write can be carried into a rewrite of
    `note` as they are: written alone, they read back as the same values (else the note is
    treated as one you edited: new messages go to a sibling, and it is left as it is)."""
    mine = {k: v for k, v in note.data.items() if k not in GENERATED_KEYS}
    blocks = user_blocks(_text_of(note.raw), GENERATED_KEYS)
    if not mine and not any(line.strip() and not line.lstrip().startswith("#") for b in blocks for line in b.split("\n")):
        return True
    alone = split_frontmatter("---\n" + "".join(blocks) + "---\n")
    return note.frontmatter_ok and alone.error is None and alone.data == mine


# --- the plan -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Write:
    path: str
    data: bytes
    expect: bytes | None  # the bytes we read (overwrite only if still there); None: a new file
    added: tuple[str, ...] = ()  # the ids of the messages it adds
    replaced: int = 0


@dataclass(slots=True)
class _Plan:
    vault: Path
    zone: tzinfo = UTC  # the days of day notes, the times callouts show
    report: IngestReport = field(default_factory=IngestReport)
    writes: list[_Write] = field(default_factory=list)
    claimed: set[str] = field(default_factory=set)
    cache: dict[str, _Existing | None] = field(default_factory=dict)
    scanned: dict[str, dict[str, list[tuple[str, str]]]] = field(default_factory=dict)  # `placed`
    answered: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # `answering`
    moved_out: dict[str, dict[str, list[tuple[str, str]]]] = field(default_factory=dict)  # `placed_outside`
    sources: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # `source_folders`
    all_documents: list[_Existing] | None = None  # `_all_doc_notes`
    listed: dict[str, list[str]] = field(default_factory=dict)  # `listing`
    documents: dict[str, str | None] = field(default_factory=dict)  # id → source_ref, written by this ingest
    # source id → (the messages its notes already held, the new ones): `_shifted`
    timed: dict[str, tuple[list[Message], list[Message]]] = field(default_factory=dict)

    def listing(self, folder: str) -> list[str]:
        """The names of the notes in `folder` (not below it), read once."""
        if folder not in self.listed:
            full = self.vault / folder
            names = [p.name for p in full.iterdir() if p.name.endswith(".md") and not p.name.startswith(".")] if full.is_dir() else []
            self.listed[folder] = sorted(names)
        return self.listed[folder]

    def existing(self, rel: str) -> _Existing | None:
        if rel not in self.cache:
            self.cache[rel] = _read_existing(self.vault, rel)
        return self.cache[rel]

    def placed(self, folder: str) -> dict[str, list[tuple[str, str]]]:
        """Message id → (path, source_id) of the notes under `folder` that hold it (read once)."""
        if folder not in self.scanned:
            found: dict[str, list[tuple[str, str]]] = {}
            answered: dict[str, list[str]] = {}
            root = self.vault / folder
            for full in _notes_below(root):
                rel = full.relative_to(self.vault).as_posix()
                note = self.cache.get(rel) or _read_existing(self.vault, rel)  # not kept: only its ids are
                if note is None or not note.source_id:
                    continue
                for meta in _meta_lines(_text_of(note.raw)):
                    found.setdefault(meta["id"], []).append((rel, note.source_id))
                    for answer in meta.get("answers", "").split():
                        answered.setdefault(answer, []).append(rel)
            self.scanned[folder] = found
            self.answered[folder] = answered
        return self.scanned[folder]

    def answering(self, folder: str) -> dict[str, list[str]]:
        """Message id → the notes under `folder` whose messages answer it without holding it (an
        email's `answers`: a reply ingested before its parent)."""
        self.placed(folder)
        return self.answered[folder]

    def placed_outside(self, kind: str) -> dict[str, list[tuple[str, str]]]:
        """Message id → (path, source_id) of the `kind` source notes vaultmind wrote that were
        moved out of `sources/<kind>/`: to another folder of `sources/` (still vaultmind's), or
        out of `sources/`, dragged into a folder of yours in Obsidian (yours now, never written
        to, but their messages are in the vault). Every note outside `sources/<kind>/` and
        hidden folders is looked at (`ingest.moved`: by its first bytes), once per ingest and
        only when asked: when messages are not found under `sources/<kind>/` (`_elsewhere`)."""
        if kind not in self.moved_out:
            found: dict[str, list[tuple[str, str]]] = {}
            for rel, source_id in moved_notes(self.vault, kind):
                for message_id in _message_ids(read_bytes(self.vault / rel)):
                    found.setdefault(message_id, []).append((rel, source_id))
            self.moved_out[kind] = found
        return self.moved_out[kind]

    def source_folders(self, platform: str) -> dict[str, list[str]]:
        """Source id → the folders under `platform` whose first note (by name) is of that source:
        one note read per folder, once per ingest."""
        if platform not in self.sources:
            found: dict[str, list[str]] = {}
            root = self.vault / platform
            for here, files in walk_folders(root, hidden=False) if root.is_dir() else ():
                first = min((f for f in files if f.endswith(".md")), default=None)
                if first is None:
                    continue
                folder = here.relative_to(self.vault).as_posix()
                source_id = _head_source_id(here / first)
                if source_id:
                    found.setdefault(source_id, []).append(folder)
            self.sources[platform] = {source_id: sorted(folders) for source_id, folders in found.items()}
        return self.sources[platform]

    def keep_user_edited(self, paths: Sequence[str]) -> None:
        for path in paths:
            if path not in self.report.kept_user_edited:
                self.report.kept_user_edited.append(path)


@dataclass(slots=True)
class _Group:
    """The incoming messages of one (target note, source)."""

    meta: SourceMeta
    base: str
    messages: dict[str, Message] = field(default_factory=dict)
    related: set[str] = field(default_factory=set)
    quoted: dict[str, QuotedParent] = field(default_factory=dict)
    earlier: dict[str, str] = field(default_factory=dict)  # `SourceBatch.earlier_texts`
    edited: set[str] = field(default_factory=set)  # `SourceBatch.edited`
    known_in: set[str] = field(default_factory=set)  # `SourceBatch.known_in`
    replaced: dict[str, str] | None = None  # `SourceBatch.replaced`
    # each branched export's view: (the messages it holds, on its branch or off it; its `replaced`)
    views: list[tuple[frozenset[str], dict[str, str]]] = field(default_factory=list)
    batches: set[int] = field(default_factory=set)  # the exports (by their place in the ingest) seen
    held_by: dict[str, set[int]] = field(default_factory=dict)  # the exports that hold each message


def _head_source_id(path: Path) -> str | None:
    """The `source_id` of a source note, from its front matter when that ends in the first 8 KB
    (as vaultmind writes it): a platform's folders are told apart by one such read each."""
    data = _head_frontmatter(path)
    value = None if data is None else data.get("source_id")
    return None if value is None else str(value)


def _head_frontmatter(path: Path) -> dict[str, Any] | None:
    """The front matter of a note when it ends in its first 8 KB (as vaultmind writes it)."""
    try:
        with path.open("rb") as f:
            head = _text_of(f.read(8192))
    except OSError:
        return None
    end = head.find("\n---", 3)
    if not head.startswith("---") or end < 0:
        return None
    return split_frontmatter(head[: end + 4] + "\n").data


def _message_ids(raw: bytes) -> list[str]:
    """The message ids of a source note's meta lines (read without parsing the note)."""
    return [meta["id"] for meta in _meta_lines(_text_of(raw))]


def _meta_lines(text: str) -> Iterator[dict[str, str]]:
    """The attributes of each message's meta line (`> %% vaultmind id="…" … %%`) in `text`
    (its line ends LF or CRLF: a note a sync tool or git gave Windows line ends)."""
    for line in text.split("\n"):
        if line.startswith("> %%"):
            meta = parse_meta(line[2:].rstrip("\r"))
            if meta and "id" in meta:
                yield meta


def _normalize(message: Message, meta: SourceMeta) -> Message:
    if not isinstance(message.message_id, str) or not message.message_id.strip():
        raise IngestError(f"source {meta.source_id!r}: a message has no id (author {message.author!r})")
    try:
        timestamp = to_utc(message.timestamp)
    except VaultmindError as exc:
        raise IngestError(
            f"source {meta.source_id!r}, message {message.message_id!r}: {exc.message}"
        ) from exc
    text = message.text.replace("\r\n", "\n").replace("\r", "\n")
    return replace(message, timestamp=timestamp, text=text, source_ref=message.source_ref or None)


def _sort_key(message: Message) -> tuple[datetime, str]:
    return (to_utc(message.timestamp), message.message_id)


def _group_batches(batches: Sequence[SourceBatch], report: IngestReport, zone: tzinfo) -> list[_Group]:
    groups: dict[tuple[str, str], _Group] = {}
    for batch_no, batch in enumerate(batches):
        meta = batch.meta
        if meta.kind not in CALLOUT_TYPES:
            raise IngestError(
                f"source {meta.source_id!r}: batches hold chat or email messages, not {meta.kind!r}"
            )
        if not meta.source_id:
            raise IngestError("a batch has an empty source_id")
        single = None if batch.bucket == "day" else note_path(batch)
        folder = f"{SOURCES_DIR}/{meta.kind}/{scope_folder(meta.scope)}"
        quoted = {quote.message_id: quote for quote in batch.quoted}
        earlier = dict(batch.earlier_texts)
        for message in batch.messages:
            msg = _normalize(message, meta)
            day = to_utc(msg.timestamp).astimezone(zone).date().isoformat() if single is None else None
            base = single or f"{folder}/{day}.md"
            group = groups.get((base, meta.source_id))
            if group is None:
                title = f"{meta.title} · {day}" if day else meta.title
                group = groups[(base, meta.source_id)] = _Group(replace(meta, title=title), base)
            group.related.update(batch.related)
            group.known_in.update(batch.known_in)
            if batch.replaced is not None and batch_no not in group.batches:  # once per export
                group.batches.add(batch_no)
                group.replaced = {**(group.replaced or {}), **dict(batch.replaced)}
                held = frozenset(m.message_id for m in batch.messages) | {message_id for message_id, _ in batch.replaced}
                group.views.append((held, dict(batch.replaced)))
            if msg.message_id in batch.edited:
                group.edited.add(msg.message_id)
            group.held_by.setdefault(msg.message_id, set()).add(batch_no)
            seen = group.messages.get(msg.message_id)
            if seen is None:
                group.messages[msg.message_id] = msg
                if msg.message_id in quoted:
                    group.quoted[msg.message_id] = quoted[msg.message_id]
                if msg.message_id in earlier:
                    group.earlier[msg.message_id] = earlier[msg.message_id]
            else:
                report.messages_known += 1
                edit = _edit(seen, msg) or _edit(msg, seen)  # (exports of an edited message, in either order)
                if edit is not None:
                    group.messages[msg.message_id] = edit
                elif seen.text != msg.text and note_text(msg.text) not in _versions(note_text(seen.text)):
                    report.warnings.append(
                        f"{base}: message {msg.message_id!r} appears twice in the export with different text; kept the first"
                    )
    for group in groups.values():
        _newest_view(group)
    return [groups[key] for key in sorted(groups)]


def _newest_view(group: _Group) -> None:
    """Of several exports of one branched conversation in one ingest (ChatGPT), the one that
    holds every message the others hold is the newest: its branch is the one shown, and what
    it holds off that branch is marked (`replaced`), even a message an older export showed.
    When none holds all the others', their views stay merged."""
    if len(group.views) < 2:
        return
    every = frozenset().union(*(held for held, _ in group.views))
    newest = [replaced for held, replaced in group.views if held == every]
    if newest:
        group.replaced = newest[-1]


def _elsewhere(plan: _Plan, group: _Group) -> dict[str, list[str]]:
    """Message id → the notes outside the group's own (its path and siblings) that hold it, or
    hold a message it answers: of its source for chat, of any mailbox for email. A chat's
    notes are looked for in its folder and in the folders of its platform that hold the same
    source (the chat renamed on its platform: `telegram/wohnung-team/` and, since, `telegram/
    wg-lindenstrasse/`), or, when its folder is gone (renamed in Obsidian), under its
    platform's (`sources/chat/irc/`). Never another source's: one person's "Happy new year!"
    sent to two chats in the same minute has one hashed id in both. When some of the messages
    are not found so, they are looked for anywhere else in the vault too (`placed_outside`): a
    note moved out of `sources/<kind>/` (out of `sources/`, into a folder of yours, a note is
    yours, never written to, but its messages are known)."""
    kind = group.meta.kind
    folder = f"{SOURCES_DIR}/email" if kind == "email" else group.base.rsplit("/", 1)[0]
    parts = folder.split("/")
    folders = [folder]
    if kind != "email" and len(parts) > 3:
        platform = "/".join(parts[:3])
        if not (plan.vault / folder).is_dir():
            folders = [platform]
        else:
            sources = plan.source_folders(platform)
            for source_id in sorted({group.meta.source_id, *group.known_in}):
                folders += [f for f in sources.get(source_id, ()) if f not in folders]
    ids = sorted({*group.messages, *group.related})
    pools = [(plan.placed(f), False) for f in folders]
    if any(not any(_of_group(group, source_id) for placed, _ in pools for _, source_id in placed.get(i, ())) for i in ids):
        pools.append((plan.placed_outside(kind), True))  # (every message found: a note moved elsewhere adds nothing)
    stem = group.base[:-3]
    out: dict[str, list[str]] = {}
    for placed, moved in pools:
        for message_id in ids:
            for path, source_id in placed.get(message_id, ()):
                own = path == group.base or (path.startswith(stem + ".") and path[len(stem) + 1 : -3].isdigit())
                if not own and _of_group(group, source_id, moved=moved):
                    out.setdefault(message_id, []).append(path)
    return out


def _of_group(group: _Group, source_id: str, *, moved: bool = False) -> bool:
    """Whether a note of `source_id` holds the group's conversation: any for email, whose
    Message-IDs are global; for chat, its source's, or an earlier id's (`known_in`). A Slack
    note `moved` out of `sources/`, where its channel's other names are not looked for (a
    channel renamed, or named by its file alone), counts for any channel of its workspace that
    shares a message's `ts` with it."""
    if group.meta.kind == "email" or source_id == group.meta.source_id or source_id in group.known_in:
        return True
    own = group.meta.source_id
    slack = own.startswith("slack:") and source_id.startswith("slack:")
    return moved and slack and source_id.rsplit("/", 1)[0] == own.rsplit("/", 1)[0]


def _own_note(plan: _Plan, group: _Group) -> bool:
    """Whether a chat group's own note is there, of its source: a day's (written on any clock),
    a conversation's or a session's. It is the group's note; a home elsewhere is for a note
    renamed or moved (or an email thread)."""
    if group.meta.kind == "email":
        return False
    note = plan.existing(group.base)
    return note is not None and note.source_id == group.meta.source_id and str(note.data.get("kind")) == group.meta.kind


def _home(plan: _Plan, group: _Group, elsewhere: dict[str, list[str]]) -> _Existing | None:
    """The note of vaultmind's in `sources/` outside the group's own that holds most of its
    messages (or the messages it answers), or, for email, whose messages answer them (a reply
    ingested before its parent), when there is one: the group's new messages join it."""
    counts: dict[str, int] = {}
    for paths in [*elsewhere.values(), *_answering(plan, group).values()]:
        for path in paths:
            counts[path] = counts.get(path, 0) + 1
    for path in sorted(counts, key=lambda p: (-counts[p], p)):
        note = plan.existing(path) if path.startswith(SOURCES_DIR + "/") else None
        if note is not None and note.owned and str(note.data.get("kind")) == group.meta.kind and path not in plan.claimed and _carries(note):
            return note
    return None


def _answering(plan: _Plan, group: _Group) -> dict[str, list[str]]:
    """Of an email group's messages and the messages they answer: id → the thread notes outside
    the group's own whose messages answer it and that do not hold it (a reply ingested before
    its parent, or beside another reply to it). By References, such a message is of their thread."""
    if group.meta.kind != "email":
        return {}
    answering = plan.answering(f"{SOURCES_DIR}/email")
    stem = group.base[:-3]
    out: dict[str, list[str]] = {}
    for message_id in sorted({*group.messages, *group.related}):
        for path in answering.get(message_id, ()):
            if path != group.base and not (path.startswith(stem + ".") and path[len(stem) + 1 : -3].isdigit()):
                out.setdefault(message_id, []).append(path)
    return out


def _thread_base(plan: _Plan, group: _Group) -> str:
    """An email thread's note: its planned path, unless a note of vaultmind's there holds
    another thread (same subject and day, no message in common): then the path with the hash of
    its first message, as when both threads come in one ingest."""
    note = plan.existing(group.base)
    if note is None or not note.owned or note.source_id != group.meta.source_id:
        return group.base
    ids = {*group.messages} | group.related
    held = note.messages()
    if set(held) & ids or any(answer in ids for message in held.values() for answer in message.answers):
        return group.base
    first = min(group.messages.values(), key=_sort_key).message_id
    return f"{group.base[:-3]}-{hashlib.sha256(first.encode('utf-8', 'surrogatepass')).hexdigest()[:6]}.md"


_NUMBERED = " (*)"  # a legacy source id ending so: any download number, " (1)", " (2)" …


def _earlier(plan: _Plan, batch: SourceBatch) -> SourceBatch:
    """`batch` under the source id (scope, note) an earlier vaultmind gave it, when its notes are
    there: a day-bucketed source when a folder of its platform holds that source (a Slack
    workspace named by its export's folder, a WhatsApp chat by a numbered download, a Slack
    channel ingested by its name alone: `_by_name`) — or, when the new id has notes too, with
    the earlier ids' messages known (`known_in`) — another when its note holds the batch's first
    message, same id and text (an agent transcript named by its file alone). Not written a
    second time under the new id."""
    legacy = batch.legacy_source_id
    if not batch.messages or not (legacy or batch.by_name or batch.name_only):
        return batch
    scope = batch.legacy_scope or batch.meta.scope
    if batch.bucket == "day":
        platform = "/".join(f"{SOURCES_DIR}/{batch.meta.kind}/{scope_folder(scope)}".split("/")[:3])
        sources = plan.source_folders(platform)
        before: list[tuple[str, str]] = []  # (source id, scope)
        if legacy and legacy.endswith(_NUMBERED):  # "whatsapp:Dinner (*)": a download numbered (1), (2) … before
            stem = legacy[: -len(_NUMBERED)]
            numbers = sorted(s[len(stem) :] for s in sources if s.startswith(stem) and re.fullmatch(r" \(\d{1,2}\)", s[len(stem) :]))
            before = [(stem + n, batch.meta.scope + n) for n in numbers] + _case_renamed(plan, batch, stem, sources)
        elif legacy and sources.get(legacy):
            before = [(legacy, scope)]
        before += [kin for kin in _by_name(plan, batch, sources) if kin not in before]
        if not before:
            return batch
        if sources.get(batch.meta.source_id):  # its own notes too: theirs and the earlier ones' messages are known
            return replace(batch, known_in=tuple(i for i, _ in before))
        (legacy, scope), *rest = before  # (its own id's messages known too: in a note moved out of sources/)
        known = (batch.meta.source_id, *(i for i, _ in rest))
        return replace(batch, meta=replace(batch.meta, source_id=legacy, scope=scope), known_in=known)
    if not legacy:
        return batch
    earlier = replace(
        batch, meta=replace(batch.meta, source_id=legacy, scope=scope), note_name=batch.legacy_note_name or batch.note_name
    )
    note = plan.existing(note_path(earlier))
    first = batch.messages[0]
    held = note.messages().get(first.message_id) if note is not None and note.source_id == legacy else None
    return earlier if held is not None and note_text(held.text) == note_text(first.text) else batch


def _case_renamed(plan: _Plan, batch: SourceBatch, stem: str, sources: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(source id, scope) of a WhatsApp chat whose name differs from `stem` (the batch's id) only
    in case — a contact renamed "alice" → "Alice", a file renamed — and which shares most of the
    messages either holds in the span both cover (a WhatsApp export holds the whole chat; their
    ids hash author, time and text): the same chat, whose messages were otherwise all written
    again beside its notes. Two chats so named that share a message or two ("ok" sent to both in
    one minute, a greeting forwarded to each) stay two."""
    ours = {message.message_id: to_utc(message.timestamp) for message in batch.messages}
    found = []
    for source_id in sorted(sources):
        if source_id == stem or source_id.casefold() != stem.casefold():
            continue
        notes = (
            plan.existing(f"{folder}/{path.name}")
            for folder in sources[source_id]
            for path in sorted((plan.vault / folder).glob("*.md"))
        )
        theirs = {
            message_id: to_utc(message.timestamp)
            for note in notes
            if note is not None and note.source_id == source_id
            for message_id, message in note.messages().items()
        }
        if theirs and _mostly_shared(ours, theirs):
            found.append((source_id, source_id.replace(":", "/", 1)))
    return found


def _mostly_shared(ours: dict[str, datetime], theirs: dict[str, datetime]) -> bool:
    """Whether two sets of messages (id → UTC time) share more than half of those each holds in
    the span both cover: one chat read twice, not two chats with a message alike."""
    start, end = max(min(ours.values()), min(theirs.values())), min(max(ours.values()), max(theirs.values()))
    shared = len(ours.keys() & theirs.keys())
    return all(2 * shared > sum(start <= at <= end for at in side.values()) for side in (ours, theirs))


def _by_name(plan: _Plan, batch: SourceBatch, sources: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(source id, scope) of the notes that hold `batch`'s conversation under another id because
    one of the two ingests knew it by its name only (a Slack channel's file given alone: no
    channel id): the ids it has so (`SourceBatch.by_name`), and, for a batch `name_only`, the
    sources of its platform whose folder has its name (`slack/t9/general`). Each only of the
    batch's own workspace (its source id up to the last `/`), or holding one of its messages:
    `slack:workspace/general`, a channel file without a team, is not every workspace's #general."""
    own = batch.meta.source_id
    found = [(i, scope) for i, scope in batch.by_name if i != own and sources.get(i)]
    if batch.name_only:
        folder = f"{SOURCES_DIR}/{batch.meta.kind}/{scope_folder(batch.meta.scope)}"
        depth, name = folder.count("/"), folder.rsplit("/", 1)[-1]
        for source_id, folders in sorted(sources.items()):
            here = [f for f in folders if f.count("/") == depth and f.rsplit("/", 1)[-1] == name]
            if source_id != own and here and (scope := _scope_of(plan, here[0])):
                found.append((source_id, scope))
    workspace = own.rsplit("/", 1)[0]
    ids = sorted({message.message_id for message in batch.messages})

    def holds_one(source_id: str) -> bool:
        placed = [plan.placed(f) for f in sources[source_id]]
        return any(s == source_id for held in placed for i in ids for _, s in held.get(i, ()))

    named = [(i, scope) for i, scope in found if i.rsplit("/", 1)[0] == workspace or holds_one(i)]
    return named + [kin for kin in _sharing(plan, batch, sources) if kin[0] not in {i for i, _ in named}]


def _sharing(plan: _Plan, batch: SourceBatch, sources: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(source id, scope) of the sources whose notes of the days of `batch`'s messages (on the
    vault's clock, or UTC's) hold one of them: the conversation under another name (a Slack
    channel renamed between its file and its export; Slack's message ids are the channel's).
    For a batch of an export (`by_name`), only the sources of its workspace (or of one its
    `by_name` names) known by their name (their id ends in their folder's name): a channel's
    file; for a channel's file (`name_only`), any source — as one of a same-named folder is
    joined when it holds one of its messages (`_by_name`): a file's messages may name no team."""
    own = batch.meta.source_id
    workspaces = {own.rsplit("/", 1)[0], *(i.rsplit("/", 1)[0] for i, _ in batch.by_name)}
    ids = {message.message_id for message in batch.messages}
    days: set[str] = set()
    for message in batch.messages:  # its day on the vault's clock, and in UTC (another clock's)
        at = to_utc(message.timestamp)
        days.update({at.astimezone(plan.zone).date().isoformat(), at.date().isoformat()})
    found: list[tuple[str, str]] = []
    for source_id, folders in sorted(sources.items()):
        if source_id == own or (not batch.name_only and source_id.rsplit("/", 1)[0] not in workspaces):
            continue
        for folder in folders:
            if not batch.name_only and slugify(source_id.rsplit("/", 1)[-1]) != folder.rsplit("/", 1)[-1]:
                continue
            rels = [f"{folder}/{name}" for name in plan.listing(folder) if name.split(".", 1)[0] in days]
            notes = (plan.cache.get(rel) or _read_existing(plan.vault, rel) for rel in rels)  # not kept: only its ids are
            held = next((n for n in notes if n is not None and n.source_id == source_id and ids & set(_message_ids(n.raw))), None)
            if held is not None:
                found.append((source_id, str(held.data.get("scope") or "")))
                break
    return [(i, scope) for i, scope in found if scope]


def _joined(batches: Sequence[SourceBatch], report: IngestReport) -> list[SourceBatch]:
    """The batches of one ingest, each conversation known by its name only (`SourceBatch.
    name_only`: a Slack channel's file) given with its export joined to the export's batch, as
    when they come in two ingests (`_by_name`): the export's batch whose `by_name` names it (of
    its workspace), or that shares a message with it (the channel renamed, or a file whose
    messages name no team). Its messages the export does not hold join the export's batch,
    under the channel's id; one both hold is the export's (with its names), known. Files of
    one channel without its export that share a message are joined too, into the one with the
    most messages."""
    out = _one_name(batches)
    for lone in [batch for batch in out if batch.name_only]:
        kin = [(shared, -n) for n, batch in enumerate(out) if (shared := _kinship(lone, batch)) is not None]
        if kin:
            out = _join(out, lone, out[-max(kin)[1]], report)
    for lone in [batch for batch in out if batch.name_only]:  # files of one channel, without its export
        ids = {m.message_id for m in lone.messages}
        sharing = [b for b in out if b.name_only and b.meta.kind == lone.meta.kind and ids & {m.message_id for m in b.messages}]
        best = min(sharing, key=lambda b: (-len(b.messages), b.meta.source_id), default=lone)
        if best is not lone and any(b is lone for b in out):
            out = _join(out, lone, best, report)
    return out


def _join(batches: list[SourceBatch], lone: SourceBatch, into: SourceBatch, report: IngestReport) -> list[SourceBatch]:
    """`batches` with `lone`'s messages that `into` does not hold joined to `into` (the others
    known), and `lone` left out."""
    held = {message.message_id for message in into.messages}
    joined = replace(into, messages=(*into.messages, *(m for m in lone.messages if m.message_id not in held)))
    report.messages_known += sum(1 for m in lone.messages if m.message_id in held)
    return [joined if batch is into else batch for batch in batches if batch is not lone]


def _one_name(batches: Sequence[SourceBatch]) -> list[SourceBatch]:
    """The batches of one ingest, the exports of a conversation renamed between them (a Slack
    channel's export as #general and as #announcements: one source id, two scopes) under the
    name of the one with the newest message, so each day is one note; each knows the names of
    all (`by_name`)."""
    scopes: dict[str, set[str]] = {}
    for batch in batches:
        if batch.by_name:
            scopes.setdefault(batch.meta.source_id, set()).add(batch.meta.scope)
    renamed = {source_id for source_id, names in scopes.items() if len(names) > 1}
    if not renamed:
        return list(batches)
    out = list(batches)
    for source_id in sorted(renamed):
        mine = [batch for batch in out if batch.by_name and batch.meta.source_id == source_id]
        newest = max(mine, key=lambda b: (max(to_utc(m.timestamp) for m in b.messages), b.meta.scope))
        names = tuple(dict.fromkeys(kin for batch in mine for kin in batch.by_name))
        out = [
            replace(batch, meta=newest.meta, by_name=names) if batch.by_name and batch.meta.source_id == source_id else batch
            for batch in out
        ]
    return out


def _kinship(lone: SourceBatch, batch: SourceBatch) -> int | None:
    """How many messages `lone` (known by its name only) shares with `batch` of an export, when
    `batch` is its conversation (`_joined`); else None."""
    if batch.name_only or not batch.by_name or batch.meta.kind != lone.meta.kind:
        return None
    shared = len({m.message_id for m in lone.messages} & {m.message_id for m in batch.messages})
    named = lone.meta.source_id in {i for i, _ in batch.by_name}
    same = lone.meta.source_id.rsplit("/", 1)[0] == batch.meta.source_id.rsplit("/", 1)[0]
    return shared if shared or (named and same) else None


def _scope_of(plan: _Plan, folder: str) -> str | None:
    """The `scope` the first note (by name) of a source folder gives."""
    names = sorted(p.name for p in (plan.vault / folder).glob("*.md") if not p.name.startswith("."))
    note = plan.existing(f"{folder}/{names[0]}") if names else None
    value = note.data.get("scope") if note is not None else None
    return None if value is None else str(value)


def _replace_edited(plan: _Plan, group: _Group, current: dict[str, Message], new: dict[str, Message]) -> int:
    """An edited message (its export says so) whose id hashes its text is a new id (WhatsApp):
    it is the note's one message by the same author at the same time that the export no longer
    holds — the text before the edit. That message keeps its id and shows the new text, the one
    before quoted below it (`_with_before`: nothing is lost); the new id is not written (a later
    ingest knows it, `_same_messages`). With none, or several such messages, the edit is a new
    message. Returns the number of the note's messages changed so."""
    changed = 0
    for message_id in sorted(group.edited & new.keys()):
        edit = new[message_id]
        at = to_utc(edit.timestamp)
        before = [
            old.message_id
            for old in current.values()
            if old.message_id not in group.messages and old.author == edit.author and to_utc(old.timestamp) == at
        ]
        if len(before) == 1:
            old = current[before[0]]
            current[before[0]] = replace(old, text=_with_before(note_text(edit.text), note_text(old.text), None))
            del new[message_id]
            plan.report.messages_edited += 1
            changed += 1
    return changed


def _complete_cut(plan: _Plan, path: str, group: _Group, current: dict[str, Message], new: dict[str, Message]) -> int:
    """A message an earlier export cut short (a WhatsApp or Signal file cut in its last
    message: a copy or download cut off) had another id, hashing the text as far as it went.
    A new message whose id hashes its text is that message completed when the note holds, as
    its last message, one by the same author at the same time, under a hashed id the export no
    longer holds, whose text the new one's starts with — and the new one is the export's only
    new message by that author at that time (with another, "This message was deleted" say, the
    note's message is one deleted since, and "ok" is no cut "ok, see you"): that message keeps
    its id and takes the whole text (nothing is lost: the cut text is its start), and the new id
    is not written (a later ingest knows it, `_same_messages`). Returns the number of the
    note's messages so completed."""
    if not current:
        return 0
    last = max(to_utc(message.timestamp) for message in current.values())
    at_last = [(message.author, message_id) for message_id, message in new.items() if to_utc(message.timestamp) == last]
    changed = 0
    for message_id in sorted(new):
        whole = new[message_id]
        at, text = to_utc(whole.timestamp), note_text(whole.text)
        if at != last or not HASHED_ID_RE.fullmatch(message_id) or sum(a == whole.author for a, _ in at_last) > 1:
            continue
        cut = [
            old.message_id
            for old in current.values()
            if old.message_id not in group.messages
            and HASHED_ID_RE.fullmatch(old.message_id)
            and old.author == whole.author
            and to_utc(old.timestamp) == at
            and len(note_text(old.text)) < len(text)
            and text.startswith(note_text(old.text))
        ]
        if len(cut) == 1:
            current[cut[0]] = replace(current[cut[0]], text=whole.text)
            del new[message_id]
            changed += 1
            plan.report.warnings.append(
                f"{path}: message {cut[0]!r} was cut short in an earlier export (its file ended inside it); "
                "completed with its whole text from this one"
            )
    return changed


def _completed(message_id: str, said: str, export: Message) -> bool:
    """Whether a note's message `said` is `export` (an export's text of it, under a hashed id)
    completed since (`_complete_cut`): the export was cut short inside it."""
    own = note_text(export.text)
    return HASHED_ID_RE.fullmatch(message_id) is not None and len(own) < len(said) and said.startswith(own)


# below an edited message's text (Telegram), its text before the edit, quoted: "[edited <UTC
# time>, the text before:]" and the quoted lines, themselves holding any earlier edit's
_EDIT_MARK_RE = re.compile(r"\n\n\[edited(?: [^\]\n]*)?, the text before:\]\n((?:>[^\n]*(?:\n|\Z))+)\Z")


def _edit_time(value: str | None) -> datetime | None:
    """A message's `edited` time (None: never edited, or not readable)."""
    try:
        return to_utc(value) if value else None
    except VaultmindError:
        return None


def _versions(text: str) -> list[str]:
    """The texts a message has shown, newest first: its text, then those before each edit
    (`_edit`), as its note keeps them."""
    out = []
    while (mark := _EDIT_MARK_RE.search(text)) is not None:
        out.append(text[: mark.start()])
        text = "\n".join(line[2:] if line.startswith("> ") else line[1:] for line in mark.group(1).rstrip("\n").split("\n"))
    out.append(text)
    return out


def _edit(held: Message, export: Message) -> Message | None:
    """`held` (a note's message, or an earlier export's of this ingest) as a later edit of it
    shows it: `export`'s text, and below it, quoted under `[edited <time>, the text before:]`,
    `held`'s whole text (its own earlier versions included: nothing is lost); the id stays.
    None when `export` is no later edit than `held` (not edited, or edited before `held`'s
    edit: an older export changes nothing) or holds `held`'s text already."""
    later, before = _edit_time(export.edited), _edit_time(held.edited)
    if later is None or (before is not None and later <= before):
        return None
    own, said = note_text(export.text), note_text(held.text)
    if said == own or said in _versions(own)[1:]:
        return None if said == own else export
    return replace(export, text=_with_before(own, said, export.edited))


def _with_before(own: str, said: str, edited: str | None) -> str:
    """A message's text `own` with the text before its edit, `said`, quoted below it under
    `[edited <UTC time>, the text before:]` (`[edited, the text before:]` when the export does
    not say when: WhatsApp)."""
    quoted = "\n".join(f"> {line}" if line else ">" for line in said.split("\n"))
    return f"{own}\n\n[edited{' ' + edited if edited else ''}, the text before:]\n{quoted}"


_REPLACED_RE = re.compile(r"\n\n\[replaced: [^\]\n]*\]")
_REPLACED_END_RE = re.compile(_REPLACED_RE.pattern + r"\Z")


def _marked(text: str, own: str) -> bool:
    """Whether `text` (a message in a note) is `own` (its text, as the export gives it) with the
    mark `_mark_replaced` puts after it, as its own last paragraph: a message whose own text
    ends in such a line (a vaultmind note pasted into ChatGPT) is not taken for marked."""
    return text.startswith(own) and _REPLACED_RE.fullmatch(text, len(own)) is not None


def _mark_replaced(group: _Group, current: dict[str, Message]) -> int:
    """Mark in `current` (a note's messages) those the export holds off the branch it shows
    (`SourceBatch.replaced`: a ChatGPT answer regenerated, a prompt edited) with a last line
    `[replaced: why]`, so a reader and the memory can tell them from what was said after; a
    message of the branch shown loses such a mark (switched back to in ChatGPT). Only an export
    that holds every message of the note changes a mark: an older one, which does not know the
    messages that came after it, changes none. Nothing is removed from the note. The number of
    messages changed."""
    if group.replaced is None or not set(current) <= {*group.messages, *group.replaced}:
        return 0
    changed = 0
    for message_id, message in sorted(current.items()):
        text = note_text(message.text)
        why = group.replaced.get(message_id)
        shown = group.messages.get(message_id)
        if why is not None and _REPLACED_END_RE.search(text) is None:  # (a text of its own so ending reads as marked)
            current[message_id] = replace(message, text=f"{text}\n\n[replaced: {why}]")
        elif shown is not None and _marked(text, own := note_text(shown.text)):
            current[message_id] = replace(message, text=own)
        else:
            continue
        changed += 1
    return changed


def _readings(message: Message, quote: QuotedParent | None, earlier: str | None) -> set[str]:
    """The texts a note may hold for `message` as it is: its text, with the quoted parent put
    back below it (`QuotedParent`), and each so as an earlier vaultmind read it (`earlier`)."""
    texts = [message.text] if earlier is None else [message.text, earlier]
    return {note_text(text) for text in texts} | (
        {note_text(f"{text}\n\n{quote.text}") for text in texts} if quote is not None else set()
    )


def _unanswered(plan: _Plan, group: _Group, quote: QuotedParent) -> bool:
    """None of the messages `quote`'s message answers is in the group or in a note of the vault:
    what it quoted is put back below its text (see `QuotedParent`)."""
    if any(answered in group.messages for answered in quote.answers):
        return False
    if any(answered in plan.placed(f"{SOURCES_DIR}/{group.meta.kind}") for answered in quote.answers):
        return False
    return not any(answered in plan.placed_outside(group.meta.kind) for answered in quote.answers)


def _meta_of(note: _Existing, fallback: SourceMeta) -> SourceMeta:
    """The conversation a note of vaultmind's says it holds (to re-render it as it is); what it
    does not say, from `fallback`."""
    data = note.data
    subject = data.get("subject")
    return replace(
        fallback,
        source_id=note.source_id,
        scope=str(data.get("scope") or fallback.scope),
        title=str(data.get("title") or fallback.title),
        subject=str(subject) if subject is not None else fallback.subject,
    )


def _same_messages(group: _Group, held: dict[str, Message]) -> set[str]:
    """The incoming messages of `group` that are a message already `held` (by its notes) or
    given by an earlier export of this ingest, under another id: a hashed id (`MessageIds`)
    hashes the text as the export has it, and two exports of a chat may differ by a control
    character in it (a stray NUL, a bell) that no note keeps. Such a message is one of the same
    author, time and text as its note keeps it, held by no export that holds it (two identical
    messages of one minute in an export stay two); the first id stays, the ids of messages
    already written never change."""
    classes: dict[tuple[str, datetime, str], list[set[int]]] = {}  # the exports (-1: the notes) holding each message
    same: set[str] = set()
    incoming = ((message_id, message) for message_id, message in group.messages.items() if message_id not in held)
    for message_id, message in [*held.items(), *incoming]:
        if not HASHED_ID_RE.fullmatch(message_id):
            continue
        exports = group.held_by.get(message_id, set()) | ({-1} if message_id in held else set())
        author, at = " ".join(note_text(message.author).split()), to_utc(message.timestamp)
        # a held message edited since (`_replace_edited`) is each text it showed
        texts = _versions(note_text(message.text)) if message_id in held else [note_text(message.text)]
        for text in texts:
            for holders in classes.setdefault((author, at, text), []):
                if not holders & exports:
                    holders |= exports
                    same.add(message_id)
                    break
            else:
                classes[(author, at, text)].append(exports)
    return same - held.keys()


def _plan_group(plan: _Plan, group: _Group) -> None:
    report = plan.report
    target: _Existing | None = None
    user_edited: list[_Existing] = []
    free: str | None = None
    elsewhere = _elsewhere(plan, group)
    # a chat's own note (a day's, a conversation's), when it is there, is its note: messages of
    # the day another clock's day note holds, or a copy elsewhere in sources/, stay there
    # (known), its new ones join its own (a home elsewhere is for a note renamed or moved, or an
    # email thread)
    home = None if _own_note(plan, group) else _home(plan, group, elsewhere)
    meta = group.meta
    own: set[str] = set()  # with a home elsewhere, the messages of the group's own notes stay there
    if home is not None:  # a day note you renamed; an email thread ingested before
        target = home
        meta = _meta_of(home, group.meta)
        n = 1
        while (note := plan.existing(sibling_path(group.base, n))) is not None:
            if note.source_id == group.meta.source_id:
                own.update(note.messages())
            n += 1
    base = _thread_base(plan, group) if meta.kind == "email" and home is None else group.base
    n = 1
    taken: set[str] = set()  # messages of its own notes another group of this ingest writes to
    while free is None and home is None:
        path = sibling_path(base, n)
        n += 1
        if path in plan.claimed:
            held = plan.existing(path)
            if held is not None and held.source_id == group.meta.source_id:
                taken.update(held.messages())
            continue
        note = plan.existing(path)
        if note is None:
            free = path
        elif note.source_id == group.meta.source_id and str(note.data.get("kind")) == group.meta.kind:
            ours = note.owned and _carries(note)  # (properties it could not carry: yours, as an edit)
            if ours and target is None:
                target = note
            elif not ours:
                user_edited.append(note)
            else:  # vaultmind's too (the note before it was yours, and is vaultmind's again): known
                taken.update(note.messages())
        elif note.source_id in group.known_in and str(note.data.get("kind")) == group.meta.kind:
            taken.update(note.messages())  # its conversation under an earlier id (`known_in`): known

    known = own | taken | {message_id for note in user_edited for message_id in note.messages()}
    known.update(  # already written in another note: not again
        message_id for message_id, paths in elsewhere.items() if target is None or set(paths) - {target.path}
    )
    for moved in sorted({p for paths in elsewhere.values() for p in paths if not p.startswith(SOURCES_DIR + "/")}):
        if moved not in report.unchanged:  # yours, and it holds some of the export: indexed with the rest
            report.unchanged.append(moved)
    current = target.messages() if target is not None else {}
    changed = _mark_replaced(group, current)  # messages of the note whose text changes
    yours = {message_id: message for note in user_edited for message_id, message in note.messages().items()}
    known |= _same_messages(group, {**yours, **current})
    new: dict[str, Message] = {}
    for message_id, message in group.messages.items():
        mine = current.get(message_id)
        quote = group.quoted.get(message_id)
        quoting = replace(message, text=f"{message.text}\n\n{quote.text}") if quote is not None else message
        if mine is not None:
            report.messages_known += 1
            said = note_text(mine.text)
            if group.replaced is not None and _marked(said, note_text(message.text)):  # a mark of `_mark_replaced` is no change of its text
                said = note_text(message.text)
            if said in _readings(message, quote, group.earlier.get(message_id)):
                continue
            edit = _edit(mine, message)
            if edit is not None:  # edited since the note was written: the new text, the one before kept below it
                current[message_id] = edit
                report.messages_edited += 1
                changed += 1
            elif note_text(message.text) not in _versions(said) and not _completed(message_id, said, message):
                # (an older export's text before an edit, or cut short: known)
                where = target.path if target is not None else base
                report.warnings.append(
                    f"{where}: message {message_id!r} differs from the note; kept the note's text"
                )
        elif message_id in known:
            report.messages_known += 1
        else:
            new[message_id] = quoting if quote is not None and _unanswered(plan, group, quote) else message
            if group.replaced is not None and (why := group.replaced.get(message_id)) is not None:
                # shown by an older export of this ingest, off the newest's branch: marked at once
                new[message_id] = replace(message, text=f"{note_text(message.text)}\n\n[replaced: {why}]")
    # held messages the export no longer holds: all of them, when it was read in another zone
    plan.timed.setdefault(group.meta.source_id, ([], []))[0].extend(
        message for message_id, message in current.items() if message_id not in group.messages
    )
    plan.timed[group.meta.source_id][1].extend(new.values())
    if target is not None and group.edited & new.keys():
        changed += _replace_edited(plan, group, current, new)
    if target is not None and new:
        changed += _complete_cut(plan, target.path, group, current, new)
    if target is None and not new:
        return
    if new and user_edited:
        plan.keep_user_edited([note.path for note in user_edited])
    merged = sorted([*current.values(), *new.values()], key=_sort_key)
    data = render_source_note(meta, merged, plan.zone).encode("utf-8")
    if new:
        _say_moved_out(plan, group, elsewhere, len(new), target.path if target is not None else free)
        wide = [note.path for note in user_edited] + [p for paths in elsewhere.values() for p in paths]
        _say_wide(plan, wide, f"its messages are known, and {len(new)} new message(s) are written to {target.path if target is not None else free}")
    if target is not None:
        plan.claimed.add(target.path)
        if not new and not changed:  # nothing to add: the note stays as it is, its front matter included
            report.unchanged.append(target.path)
        else:
            plan.writes.append(_Write(target.path, with_user_keys(data, target.raw, GENERATED_KEYS), target.raw, added=tuple(new)))
        return
    assert free is not None
    plan.claimed.add(free)
    plan.writes.append(_Write(free, data, None, added=tuple(new)))


def _say_moved_out(plan: _Plan, group: _Group, elsewhere: dict[str, list[str]], added: int, path: str | None) -> None:
    """Warn, once per note, that a note moved out of `sources/` holds part of a conversation (a
    chat's day, an email thread) whose new messages are written to `path`: the moved note is
    yours, left as it is."""
    what = "email thread" if group.meta.kind == "email" else "chat"
    whole = "thread" if group.meta.kind == "email" else f"conversation ({group.meta.source_id})"
    for moved in sorted({p for paths in elsewhere.values() for p in paths if not p.startswith(SOURCES_DIR + "/")}):
        said = f"{moved}: this {what} note is outside sources/, so it is yours and left as it is;"
        if not any(w.startswith(said) for w in plan.report.warnings):
            plan.report.warnings.append(
                f"{said} its messages are known, and {added} new message(s) of its {whole} are written to {path}"
            )


def _say_wide(plan: _Plan, paths: Sequence[str], what: str) -> None:
    """Warn, once per note, that a note of `paths` re-saved as UTF-16 or UTF-32, or in a legacy
    East Asian code page, is read but not written to, and `what` was done instead."""
    for path in sorted(set(paths)):
        note = plan.existing(path)
        if note is None or note.encoding == "utf-8":
            continue
        said = f"{path}: saved as {encoding_name(note.encoding)} text, not UTF-8"
        if not any(w.startswith(said) for w in plan.report.warnings):
            plan.report.warnings.append(
                f"{said} (as Windows Notepad can), so vaultmind does not write to it: {what}; "
                "re-save it as UTF-8 to read it in Obsidian"
            )


# --- documents ------------------------------------------------------------------------------


def _doc_body(doc: DocumentInput) -> str:
    """The body a document's note holds: line breaks as \\n, no control characters (as the note
    is written, so an unchanged file compares equal: a form feed had made a new version each time)."""
    body = note_text(doc.body).strip("\n")
    first = next((line for line in body.split("\n") if line.strip()), "")
    title = " ".join(doc.title.split())
    if title and not _H1_RE.match(first):
        body = f"# {title}\n\n{body}" if body else f"# {title}"
    return body + "\n" if body else ""


def _render_document(doc: DocumentInput, version: int, time_start: str | None, time_end: str | None) -> bytes:
    items: list[tuple[str, Any]] = [
        ("vaultmind", "source"),
        ("kind", "document"),
        ("source_id", doc.source_id),
        ("scope", doc.scope),
        ("version", version),
        ("title", " ".join(doc.title.split()) or doc.source_id),
    ]
    if time_start and time_end:
        items.append(("time_start", Quoted(time_start)))
        items.append(("time_end", Quoted(time_end)))
    if doc.source_ref:
        items.append(("source_ref", doc.source_ref))
    return render_note(items, _doc_body(doc)).encode("utf-8")


def document_note_bytes(doc: DocumentInput) -> int:
    """About the size of the note a document is written as (a later version's number and times
    may add a few bytes)."""
    return len(_render_document(doc, 1, doc.modified, doc.modified)) + 64


def _doc_notes(plan: _Plan, folder: str) -> list[_Existing]:
    full = plan.vault / folder
    if not full.is_dir():
        return []
    names = sorted(p.name for p in full.iterdir() if p.name.endswith(".md") and not p.name.startswith("."))
    notes = [plan.existing(f"{folder}/{name}") for name in names]
    return [note for note in notes if note is not None and str(note.data.get("kind")) == "document"]


def _all_doc_notes(plan: _Plan) -> list[_Existing]:
    """Every document note under `sources/document/` (read once per ingest)."""
    if plan.all_documents is None:
        root = plan.vault / SOURCES_DIR / "document"
        rels = [p.relative_to(plan.vault).as_posix() for p in _notes_below(root)]
        notes = [plan.existing(rel) for rel in rels if not any(part.startswith(".") for part in rel.split("/"))]
        plan.all_documents = [note for note in notes if note is not None and str(note.data.get("kind")) == "document"]
    return plan.all_documents


def _int(value: Any, default: int) -> int:
    try:
        return max(int(value), 1)
    except (TypeError, ValueError):
        return default


def _plan_document(plan: _Plan, doc: DocumentInput, folder_notes: list[_Existing]) -> None:
    report = plan.report
    try:
        modified = iso_utc(doc.modified) if doc.modified else None
    except VaultmindError as exc:
        raise IngestError(f"document {doc.source_id!r}: modified {doc.modified!r} is not ISO 8601") from exc
    folder = f"{SOURCES_DIR}/document/{scope_folder(doc.scope)}"
    ident, mine = _holding(plan, doc, folder_notes)
    if ident != doc.source_id:
        if not mine and ident.startswith(doc.source_id + "~"):  # said once, when first written so
            report.warnings.append(
                f"document {doc.source_id!r}: that id holds another file; {doc.source_ref} is written as {ident!r}"
            )
        doc = replace(doc, source_id=ident)
    plan.documents[doc.source_id] = doc.source_ref
    target = next((note for note in mine if note.owned and _carries(note)), None)
    user_edited = [note for note in mine if not (note.owned and _carries(note))]
    new_body = _doc_body(doc)
    title = " ".join(doc.title.split()) or doc.source_id
    latest = max((_int(note.data.get("version"), 1) for note in mine), default=0)

    def same_as(note: _Existing, body_hash: str) -> bool:
        """The same title and body; the same source, or the same file elsewhere (`_new_place`)."""
        ref = note.data.get("source_ref") or None
        return (
            body_hash == body_sha256(new_body)
            and str(note.data.get("title") or "") == title
            and (ref == (doc.source_ref or None) or (_file_ref(doc.source_ref) and (ref is None or _file_ref(ref))))
        )

    if target is not None:
        plan.claimed.add(target.path)
        if same_as(target, target.body_hash):
            if _new_place(target, doc.source_ref):  # moved (or written before its file was recorded): the file's new place, same version
                version = _int(target.data.get("version"), 1)
                start, end = _opt_str(target.data.get("time_start")), _opt_str(target.data.get("time_end"))
                data = _render_document(doc, version, start or modified, end or modified)
                plan.writes.append(_Write(target.path, with_user_keys(data, target.raw, GENERATED_KEYS), target.raw))
            else:
                report.unchanged.append(target.path)
            return
        start = target.data.get("time_start")
        time_start = str(start) if start else modified
        data = _render_document(
            doc, latest + 1, time_start, modified or _opt_str(target.data.get("time_end"))
        )
        plan.writes.append(_Write(target.path, with_user_keys(data, target.raw, GENERATED_KEYS), target.raw, replaced=1))
        return
    if any(same_as(note, str(note.data.get("vaultmind_body_sha256") or "")) for note in user_edited):
        return  # the user edited vaultmind's version of this very content: nothing new
    if user_edited:  # a sibling of the user's note: <stem>.2.md, <stem>.3.md …
        plan.keep_user_edited([note.path for note in user_edited])
        base, name = user_edited[0].path, sibling_path
    else:  # a new document: <slug>.md, or <slug>-2.md … when another document has that name
        stem = slugify(title if title != doc.source_id else doc.source_id.rsplit("/", 1)[-1].split(":")[-1])
        base, name = f"{folder}/{stem}.md", _numbered_path
    n = 1
    while (path := name(base, n)) in plan.claimed or plan.existing(path) is not None:
        n += 1
    plan.claimed.add(path)
    _say_wide(plan, [note.path for note in user_edited], f"its next version is written to {path}")
    start = _opt_str(user_edited[0].data.get("time_start")) if user_edited else None
    data = _render_document(doc, latest + 1, start or modified, modified)
    plan.writes.append(_Write(path, data, None, replaced=1 if user_edited else 0))


def _holding(plan: _Plan, doc: DocumentInput, folder_notes: list[_Existing]) -> tuple[str, list[_Existing]]:
    """The id `doc` is written under and the notes that hold it, looked for in its folder, else
    anywhere under `sources/document/` (a note moved in Obsidian):

    1. a note that holds this very file (`source_ref`), whatever its id (the file given alone
       after its folder was: another derived id), else one whose file is gone and whose text is
       this file's (the file moved or renamed);
    2. its own id, or its earlier one (`legacy_source_id`), unless their notes hold another file
       that still exists and another text: then it is another document of the same name
       (`notes/q3.md` of two folders called `work/meeting-notes` and `home/meeting-notes`),
       never replaced by this one — a copy of the same text is the same document;
    3. the first free `<id>~2`, `<id>~3` ….

    A `source_id` the file gives itself (front matter) is the document's, whichever file holds
    it: its note, as before."""
    if doc.id_given:  # the file names its document: whatever file holds that id, this is its next version
        mine = [note for note in folder_notes if note.source_id == doc.source_id]
        return doc.source_id, mine or [note for note in _all_doc_notes(plan) if note.source_id == doc.source_id]
    ids = [doc.source_id, *([doc.legacy_source_id] if doc.legacy_source_id else [])]
    body = body_sha256(_doc_body(doc))
    if _file_ref(doc.source_ref):  # the file found again by its place, or, moved, by its text
        anywhere = _all_doc_notes(plan)
        same = [n for n in anywhere if n.data.get("source_ref") == doc.source_ref]
        if not same:  # a note whose file is gone and whose text is this one's: the file moved or was renamed
            same = [
                n
                for n in anywhere
                if _file_ref(str(n.data.get("source_ref") or ""))
                and n.body_hash == body
                and not _file_path(str(n.data["source_ref"])).exists()
            ]
        if same:
            ident = min(same, key=lambda n: n.path).source_id
            return ident, [n for n in anywhere if n.source_id == ident]

    def family(notes: list[_Existing]) -> list[_Existing]:
        return [n for n in notes if n.source_id in ids or n.source_id.startswith(doc.source_id + "~")]

    pools = [folder_notes] if family(folder_notes) else [folder_notes, _all_doc_notes(plan)]
    if _file_ref(doc.source_ref):
        for notes in pools:
            for note in family(notes):
                if note.data.get("source_ref") == doc.source_ref:
                    return note.source_id, [n for n in notes if n.source_id == note.source_id]
    taken = False
    for notes in pools:
        for ident in ids:
            mine = [note for note in notes if note.source_id == ident]
            if mine or ident in plan.documents:
                if _other_file(plan, ident, mine, doc.source_ref, body):
                    taken = taken or ident == doc.source_id  # a legacy id of another file is just not this one's
                    continue
                return ident, mine
    if not taken:
        return doc.source_id, []
    n = 2
    while True:
        ident = f"{doc.source_id}~{n}"
        mine = [note for note in folder_notes if note.source_id == ident] or [
            note for note in _all_doc_notes(plan) if note.source_id == ident
        ]
        if not _other_file(plan, ident, mine, doc.source_ref, body):
            return ident, mine
        n += 1


def _other_file(plan: _Plan, ident: str, notes: list[_Existing], ref: str | None, body: str) -> bool:
    """Whether `ident` holds a file other than `ref` (a `file:` URI) that still exists, with
    another text (`body`, its hash): written by this ingest, or by an earlier one (the
    `source_ref` of its notes)."""
    if not _file_ref(ref):
        return False
    if ident in plan.documents:
        return plan.documents[ident] != ref
    if any(note.body_hash == body for note in notes):
        return False
    refs = {str(note.data.get("source_ref") or "") for note in notes}
    return ref not in refs and any(_file_ref(other) and _file_path(other).exists() for other in refs)


def _new_place(note: _Existing, ref: str | None) -> bool:
    """`ref`, a `file:` URI, is a new place for the file of `note`: it records none (written
    before documents recorded their file), or one that no longer exists (the file moved). A
    note whose file still exists elsewhere keeps it: this is a copy."""
    old = note.data.get("source_ref") or None
    if not _file_ref(ref) or old == ref:
        return False
    return old is None or (_file_ref(str(old)) and not _file_path(str(old)).exists())


def _file_ref(ref: str | None) -> bool:
    return bool(ref) and str(ref).startswith("file:")


def _file_path(ref: str) -> Path:
    return Path(url2pathname(urlparse(ref).path))


def _numbered_path(path: str, n: int) -> str:
    return path if n == 1 else f"{path[:-3]}-{n}.md"


def _opt_str(value: Any) -> str | None:
    return str(value) if value else None


# --- writing --------------------------------------------------------------------------------


def _execute(plan: _Plan) -> IngestReport:
    report = plan.report
    writes = sorted(plan.writes, key=lambda w: w.path)
    for done, item in enumerate(writes):
        full = plan.vault / item.path
        try:
            make_folders(full.parent)
            if item.expect is not None:
                try:
                    current = full.read_bytes()
                except FileNotFoundError:
                    current = None
                if current != item.expect:
                    report.warnings.append(
                        f"{item.path}: changed on disk during the ingest; left alone (run the ingest again)"
                    )
                    continue
                write_atomic(full, item.data, overwrite=True)
            else:
                write_atomic(full, item.data, overwrite=False)
        except RefuseToClobber:
            report.warnings.append(
                f"{item.path}: appeared on disk during the ingest; left alone (run the ingest again)"
            )
            continue
        except OSError as exc:
            raise VaultError(
                f"cannot write ({exc.strerror or exc}); {done} of {len(writes)} notes were written, each complete",
                path=full,
                hint="fix the cause and run the same ingest again: it continues where it stopped",
            ) from exc
        report.written.append(item.path)
        report.messages_added += len(item.added)
        report.added_ids.update(item.added)
        report.documents_replaced += item.replaced
    report.unchanged.sort()
    return report


def write_batches(vault: Path, batches: Sequence[SourceBatch], *, zone: tzinfo = UTC) -> IngestReport:
    """Write chat/email batches as source notes (merging, idempotent; see the module doc). Day
    notes are days of `zone` (the vault's `[ingest] timezone`), as the times their callouts show."""
    plan = _Plan(Path(vault), zone=zone)
    groups = _group_batches([_earlier(plan, batch) for batch in _joined(batches, plan.report)], plan.report, zone)
    # the groups whose messages live in another note (a day note renamed) last: that note is
    # first its own group's, which then holds what it holds
    homed = [not _own_note(plan, g) and _home(plan, g, _elsewhere(plan, g)) is not None for g in groups]
    for group in [g for g, h in zip(groups, homed, strict=True) if not h] + [g for g, h in zip(groups, homed, strict=True) if h]:
        _plan_group(plan, group)
    for source_id, (held, new) in sorted(plan.timed.items()):
        if (found := _shifted(held, new)) is not None:
            shift, repeated = found
            hours = shift.total_seconds() / 3600
            raise IngestError(
                f"{source_id}: {repeated} messages would be written again, {abs(hours):g} h "
                f"{'later' if hours > 0 else 'earlier'} than the same messages already in the vault: "
                "the export was read in another time zone than when it was first ingested. Nothing was written",
                hint="ingest it with the --tz it was first ingested with (or [ingest] timezone); to move "
                "its messages to another zone, delete its notes first",
            )
    return _execute(plan)


SHIFT_SHARE = 0.8  # of the messages a zone mix-up could repeat, the share repeated at one offset
SHIFT_MIN = 3  # and at least this many different texts


def _shifted(held: Sequence[Message], new: Sequence[Message]) -> tuple[timedelta, int] | None:
    """The offset and the number of messages repeated, when the same export read in another time
    zone repeats the messages the vault holds: of the messages whose ids hash their time (`h-…`,
    no platform id: a local time read in another zone gives another UTC time, so another id),
    most of those `held` that the export no longer holds under their ids (a mix-up moves every
    one), or of the new ones when fewer, come again (same author, same text) one whole number
    of quarter hours apart, with one offset for all and at least `SHIFT_MIN` different texts. A
    bot that posts the same texts every hour (its earlier posts still in the export), or a
    platform's own ids, are never taken for a mix-up."""
    held = [m for m in held if m.message_id.startswith("h-")]
    new = [m for m in new if m.message_id.startswith("h-")]
    if min(len(held), len(new)) < SHIFT_MIN:
        return None
    times: dict[tuple[str, str], list[datetime]] = {}
    for message in held:
        times.setdefault((message.author, note_text(message.text)), []).append(to_utc(message.timestamp))
    offsets: dict[timedelta, list[tuple[str, str]]] = {}
    for message in new:
        key = (message.author, note_text(message.text))
        at = to_utc(message.timestamp)
        for shift in {at - then for then in times.get(key, ())}:
            if shift and abs(shift) <= timedelta(hours=14) and not shift % timedelta(minutes=15):
                offsets.setdefault(shift, []).append(key)
    if not offsets:
        return None
    shift, keys = max(offsets.items(), key=lambda item: (len(item[1]), -abs(item[0])))
    repeated = len(keys) >= SHIFT_SHARE * min(len(held), len(new)) and len(set(keys)) >= SHIFT_MIN
    return (shift, len(keys)) if repeated else None


def write_documents(vault: Path, docs: Sequence[DocumentInput]) -> IngestReport:
    """Write documents as source notes: one per `source_id`, `version` + 1 on each change."""
    plan = _Plan(Path(vault))
    # two files of one derived id are two documents — unless one is a copy of the other's text;
    # files giving themselves one id are one document, the last one given
    latest: dict[tuple[str, str], DocumentInput] = {}
    texts: set[tuple[str, str]] = set()
    for doc in docs:
        if not doc.source_id:
            raise IngestError(f"document {doc.title!r} has an empty source_id")
        own_file = _file_ref(doc.source_ref) and not doc.id_given
        key = (doc.source_id, (doc.source_ref or "") if own_file else "")
        text = (doc.source_id, body_sha256(_doc_body(doc)))
        if own_file and text in texts and key not in latest:
            continue  # a copy (a backup folder beside the original): the same document
        texts.add(text)
        if key in latest:
            plan.report.warnings.append(f"document {doc.source_id!r} given more than once; kept the last")
        latest[key] = doc
    folders: dict[str, list[_Existing]] = {}
    for key in sorted(latest):
        doc = latest[key]
        folder = f"{SOURCES_DIR}/document/{scope_folder(doc.scope)}"
        if folder not in folders:
            folders[folder] = _doc_notes(plan, folder)
        _plan_document(plan, doc, folders[folder])
    return _execute(plan)
