"""The plan of one ingest: the notes it will write, the notes on disk it has read (each read once),
where their messages are held, and the incoming messages grouped by note (`Group`). Everything is
decided here in memory before anything is written (see `ingest.writer`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path

from vaultmind.ingest.held import (
    Existing,
    head_source_id,
    message_ids,
    meta_lines,
    notes_below,
    read_existing,
    text_of,
)
from vaultmind.ingest.model import IngestReport, QuotedParent
from vaultmind.ingest.moved import moved_notes, read_bytes
from vaultmind.markdown.render import Message, SourceMeta
from vaultmind.vault.encoding import encoding_name
from vaultmind.vault.scan import walk_folders


@dataclass(slots=True)
class Write:
    path: str
    data: bytes
    expect: bytes | None  # the bytes we read (overwrite only if still there); None: a new file
    added: tuple[str, ...] = ()  # the ids of the messages it adds
    replaced: int = 0
    # a note renamed (`document_names`): the path it leaves, whose bytes are `expect`, removed
    # once `path`, a new file, is written
    moved_from: str | None = None


@dataclass(slots=True)
class Plan:
    vault: Path
    zone: tzinfo = UTC  # the days of day notes, the times callouts show
    note_cap: int | None = None  # the vault's cap on a note it indexes, in bytes (`[vault] max_file_mb`): `ingest.parts`
    report: IngestReport = field(default_factory=IngestReport)
    writes: list[Write] = field(default_factory=list)
    claimed: set[str] = field(default_factory=set)
    cache: dict[str, Existing | None] = field(default_factory=dict)
    scanned: dict[str, dict[str, list[tuple[str, str]]]] = field(default_factory=dict)  # `placed`
    answered: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # `answering`
    moved_out: dict[str, dict[str, list[tuple[str, str]]]] = field(default_factory=dict)  # `placed_outside`
    sources: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # `source_folders`
    all_documents: list[Existing] | None = None  # `documents_plan._all_doc_notes`
    link_targets: dict[str, set[str]] | None = None  # `document_names.linked`
    # the notes a move killed mid-way left (`document_names.half_moved`): (path, the bytes read,
    # the path it moved to), removed once the writes are done, if still those bytes
    left: list[tuple[str, bytes, str]] = field(default_factory=list)
    listed: dict[str, list[str]] = field(default_factory=dict)  # `listing`
    documents: dict[str, str | None] = field(default_factory=dict)  # id → source_ref, written by this ingest
    # the new document notes' paths in lower case: `Note.md` and `note.md` are one file on macOS and Windows
    folded: set[str] = field(default_factory=set)
    # source id → (the messages its notes already held, the new ones): `zone_shift.shifted`
    timed: dict[str, tuple[list[Message], list[Message]]] = field(default_factory=dict)
    # (the ids of an export's messages, what to say of how it was matched when one of them is written)
    said_if_written: list[tuple[frozenset[str], str]] = field(default_factory=list)

    def listing(self, folder: str) -> list[str]:
        """The names of the notes in `folder` (not below it), read once."""
        if folder not in self.listed:
            full = self.vault / folder
            names = [p.name for p in full.iterdir() if p.name.endswith(".md") and not p.name.startswith(".")] if full.is_dir() else []
            self.listed[folder] = sorted(names)
        return self.listed[folder]

    def existing(self, rel: str) -> Existing | None:
        if rel not in self.cache:
            self.cache[rel] = read_existing(self.vault, rel)
        return self.cache[rel]

    def placed(self, folder: str) -> dict[str, list[tuple[str, str]]]:
        """Message id → (path, source_id) of the notes under `folder` that hold it (read once)."""
        if folder not in self.scanned:
            found: dict[str, list[tuple[str, str]]] = {}
            answered: dict[str, list[str]] = {}
            root = self.vault / folder
            for full in notes_below(root):
                rel = full.relative_to(self.vault).as_posix()
                note = self.cache.get(rel) or read_existing(self.vault, rel)  # not kept: only its ids are
                if note is None or not note.source_id:
                    continue
                for meta in meta_lines(text_of(note.raw)):
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
        only when asked: when messages are not found under `sources/<kind>/` (`matching.held_elsewhere`)."""
        if kind not in self.moved_out:
            found: dict[str, list[tuple[str, str]]] = {}
            for rel, source_id in moved_notes(self.vault, kind):
                for message_id in message_ids(read_bytes(self.vault / rel)):
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
                source_id = head_source_id(here / first)
                if source_id:
                    found.setdefault(source_id, []).append(folder)
            self.sources[platform] = {source_id: sorted(folders) for source_id, folders in found.items()}
        return self.sources[platform]

    def keep_user_edited(self, paths: Sequence[str]) -> None:
        for path in paths:
            if path not in self.report.kept_user_edited:
                self.report.kept_user_edited.append(path)


@dataclass(slots=True)
class Group:
    """The incoming messages of one (target note, source)."""

    meta: SourceMeta
    base: str
    messages: dict[str, Message] = field(default_factory=dict)
    related: set[str] = field(default_factory=set)
    quoted: dict[str, QuotedParent] = field(default_factory=dict)
    earlier: dict[str, tuple[str, ...]] = field(default_factory=dict)  # `SourceBatch.earlier_texts`
    earlier_times: dict[str, datetime] = field(default_factory=dict)  # `SourceBatch.earlier_times`
    edited: set[str] = field(default_factory=set)  # `SourceBatch.edited`
    known_in: set[str] = field(default_factory=set)  # `SourceBatch.known_in`
    unique_ids: set[str] = field(default_factory=set)  # `SourceBatch.unique_ids`
    renamed: dict[str, str] = field(default_factory=dict)  # `SourceBatch.renamed_authors`
    seconds: bool = False  # an export of it writes seconds (`reexport.has_seconds`)
    replaced: dict[str, str] | None = None  # `SourceBatch.replaced`
    # each branched export's view: (the messages it holds, on its branch or off it; its `replaced`)
    views: list[tuple[frozenset[str], dict[str, str]]] = field(default_factory=list)
    batches: set[int] = field(default_factory=set)  # the exports (by their place in the ingest) seen
    held_by: dict[str, set[int]] = field(default_factory=dict)  # the exports that hold each message
    # each export's newest message (of all its days): the later an export ends, the newer it is
    ends: dict[int, datetime] = field(default_factory=dict)


def say_wide(plan: Plan, paths: Sequence[str], what: str) -> None:
    """Warn, once per note, that a note of `paths` re-saved as UTF-16 or UTF-32, or in a legacy
    East Asian code page, or holding a byte that is not text, is read but not written to, and
    `what` was done instead."""
    for path in sorted(set(paths)):
        note = plan.existing(path)
        if note is None or (note.encoding == "utf-8" and note.bad_line is None):
            continue
        if note.bad_line is not None:
            said = f"{path}: line {note.bad_line} holds a byte that is not {encoding_name(note.encoding)} text"
            why = "so vaultmind does not write to it (that would lose the byte)"
        else:
            said = f"{path}: saved as {encoding_name(note.encoding)} text, not UTF-8"
            why = "(as Windows Notepad can), so vaultmind does not write to it"
        if not any(w.startswith(said) for w in plan.report.warnings):
            fix = "mend that line" if note.bad_line is not None else "re-save it as UTF-8 to read it in Obsidian"
            plan.report.warnings.append(f"{said} {why}: {what}; {fix}")
