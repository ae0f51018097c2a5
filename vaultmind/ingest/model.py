"""What every adapter produces and the writer consumes.

An adapter parses an export (pure: bytes/text in, batches out, errors naming file and line)
into `SourceBatch`es. The writer (`ingest/writer.py`) turns batches into canonical source
notes — atomically, idempotently, merging by message id — and never overwrites a note the
user has edited.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from vaultmind.markdown.render import Message, SourceMeta, note_text

Bucket = Literal["day", "thread", "whole"]
"""How a batch is split into notes: chat by day (of the vault's `[ingest] timezone`), email by
thread, documents whole (a note over the vault's cap continues in numbered parts: `ingest.parts`)."""


@dataclass(frozen=True, slots=True)
class SourceBatch:
    """Messages of one source scope (a channel, a thread, a conversation…)."""

    meta: SourceMeta
    messages: tuple[Message, ...]
    bucket: Bucket = "day"
    note_name: str | None = None  # file stem when bucket is "thread"/"whole"
    related: tuple[str, ...] = ()  # ids of messages it answers that it does not hold (an email's In-Reply-To)
    quoted: tuple[QuotedParent, ...] = ()  # what messages quoted of the messages they answer, cut from their text
    # (message id, the text an earlier vaultmind gave it, read otherwise now: an email's nameless
    # inline image was not listed): a note holding that text holds the message as it was read
    # then — known, kept as it is, without a warning that it differs (a message may have several:
    # read so, with what it quoted put back below it, or without)
    earlier_texts: tuple[tuple[str, str], ...] = ()
    # (message id, the time an earlier vaultmind gave it, read otherwise now: an email's Date
    # whose zone it read as UTC): a note vaultmind wrote holding it at that time is re-dated
    earlier_times: tuple[tuple[str, datetime], ...] = ()
    # what to say of how the export was read (a date order guessed) when an ingest writes one
    # of its messages: an export ingested again, its messages known, says nothing
    said_if_written: tuple[str, ...] = ()
    # messages the export marks as edited ("<This message was edited>"), on platforms whose ids
    # hash the text: each replaces the one message of its author and time that it no longer holds
    edited: tuple[str, ...] = ()
    # the source id, scope and note name an earlier vaultmind gave the batch: its notes keep
    # them when they are there (`matching.as_earlier`)
    legacy_source_id: str | None = None
    legacy_scope: str | None = None
    legacy_note_name: str | None = None
    # the folder its source's notes are in, which an earlier vaultmind named otherwise (letters
    # no accent makes were left out): its notes join them there (`matching.in_earlier_folder`)
    folder: str | None = None
    known_in: tuple[str, ...] = ()  # set by the writer: earlier ids of this source whose notes' messages are known
    # set by the writer: (the name its notes give an author, the name the export gives them) of
    # an author renamed since (a number saved as a contact: `reexport.author_renames`)
    renamed_authors: tuple[tuple[str, str], ...] = ()
    # a conversation known by its name only (a Slack channel's file given alone carries no channel
    # id): a source of its platform in a folder of its name is this conversation (`matching._by_name`)
    name_only: bool = False
    local_times: bool = False  # its times carry no zone (WhatsApp, Signal…): read in the run's zone (`--tz`)
    # the (source id, scope) the conversation gets when ingested by its name only (`name_only`):
    # notes written so are this conversation's (`matching._by_name`)
    by_name: tuple[tuple[str, str], ...] = ()
    # (message id, why) of the messages the export holds off the branch it shows (ChatGPT: an
    # answer regenerated, a prompt edited): one a note already holds is marked so, on its last
    # line, and a message of the branch shown loses such a mark (`revisions.mark_replaced`).
    # None: the platform has no branches
    replaced: tuple[tuple[str, str], ...] | None = None
    # ids of its messages that no other conversation's message has (Claude Code's `uuid`s): one
    # another session of its platform holds is known there, not written again (a session resumed
    # repeats the earlier one's turns: `agent_resumed`)
    unique_ids: frozenset[str] = frozenset()
    # a line chat whose day/month order was inferred (WhatsApp without --date-order): the chat
    # read the other way (`date_orders.keep_held_order`)
    other_order: OtherOrder | None = None

    def held_as(self, message: Message, held: Message | None) -> bool:
        """Whether `held`, a message a note holds, is `message` as a note says it: its text
        now or one an earlier vaultmind read it as (`earlier_texts`: the agent's injected
        context kept in a user's turn, say)."""
        if held is None:
            return False
        said = note_text(held.text)
        return said == note_text(message.text) or any(
            message_id == message.message_id and said == note_text(text) for message_id, text in self.earlier_texts
        )


@dataclass(frozen=True, slots=True)
class OtherOrder:
    """How a line chat whose date order was inferred reads the other way: a vault that holds
    the chat read so keeps that reading, and its messages are not written again."""

    read: str  # the order the export was read in: "DMY" or "MDY"
    other: str  # the other one
    messages: tuple[Message | None, ...]  # `SourceBatch.messages` read so (None: its date does not read so)
    guess: str  # what `said_if_written` says of the order guessed ("" when the dates settle it)
    settled: bool  # the dates settle the order (a day above 12, or only one order in time)


@dataclass(frozen=True, slots=True)
class QuotedParent:
    """The quoted parent cut from an email's text. The writer puts it back, below the message's
    own text, when none of the messages it answers is in the ingest or the vault: a reply
    exported without its thread keeps what it answered."""

    message_id: str
    answers: tuple[str, ...]  # the message it quotes: In-Reply-To, else the last of References
    text: str


@dataclass(frozen=True, slots=True)
class DocumentInput:
    """A document source (kind "document"): replaced as a whole when its content changes."""

    source_id: str
    scope: str
    title: str
    body: str  # Markdown
    modified: str | None = None  # ISO 8601
    source_ref: str | None = None
    legacy_source_id: str | None = None  # the id an earlier vaultmind gave it: its note keeps it
    id_given: bool = False  # `source_id` comes from the file (its front matter): files sharing it are one document
    name: str | None = None  # the file's name without extension, as written: a new note is named after it
    folders: tuple[str, ...] = ()  # its folders as written (the scope's, unslugified): its notes' folders
    said: tuple[str, ...] = ()  # the warnings about its file (encoding, front matter): not said again while it is unchanged


DatedBy = Literal["Date", "Received", "from-line", "file-name", "mtime", ""]  # "": no date anywhere


@dataclass(frozen=True, slots=True)
class DatedOtherwise:
    """An email without a usable `Date:` header, and what dated it (`ingest/maildates.py`)."""

    file: str  # the .eml, mbox or Maildir folder that holds it
    named: str  # the message in it: "message 3 <a1@example.com>"; "" for an .eml
    message_id: str  # its id (Message-ID, or "nomid-…"); "" when left out
    by: DatedBy
    at: datetime | None  # None: left out


def kept_edits_said(path: str, went: str, sibling: str = "") -> str:
    """What an ingest says of a note the user edited, which it left alone: where what it
    brought (`went`: "the new version went", "new messages went") was written instead (the
    `sibling` note, when one is named)."""
    return f"kept your edits in {path} ({went} to a sibling note{f', {sibling}' if sibling else ''})"


@dataclass(slots=True)
class IngestReport:
    """What an ingest did: vault-relative paths written, and what was already there."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    kept_user_edited: list[str] = field(default_factory=list)  # notes the user edited: left alone
    messages_added: int = 0
    added_ids: set[str] = field(default_factory=set)  # the ids of the messages added
    messages_known: int = 0
    messages_edited: int = 0  # earlier texts replaced by their edited version
    documents_replaced: int = 0
    warnings: list[str] = field(default_factory=list)
    dated: list[DatedOtherwise] = field(default_factory=list)  # emails without a usable Date header, as parsed
    local_zone: str | None = None  # the zone local export times written were read in (`--tz`, else UTC)
    local_zone_named: bool = False  # that zone was named (`--tz`, `[ingest] timezone`), not UTC by default
    vault_clock: str = "UTC"  # the zone whose days day notes are and whose clock callouts show (`[ingest] timezone`)
    said_before: set[str] = field(default_factory=set)  # warnings about documents already ingested and unchanged
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (from, to): notes given their file's name

    def to_sync(self) -> tuple[list[str], list[str]]:
        """The paths the index is brought in step with after the ingest, and those `gone`. The
        unchanged notes too: a run cut short (killed, or its daemon was) may have written them
        without indexing them; running it again finishes the job (an indexed note costs a stat).
        `gone`: the places renamed notes left, which the index forgets — not there on purpose, so
        never reported `missing`, whether a daemon's watcher synced them first or not."""
        paths = sorted({*self.written, *self.unchanged})
        return paths, sorted({old for old, _ in self.renamed} - set(paths))
