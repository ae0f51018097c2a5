"""What a sync reads of one file, before anything touches the index.

`load_note` is the whole per-file work: read (re-reading if the file changes underneath),
sha256, decode, `parse_note`, the term counts of every leaf, the stored front matter, and what
the derivers can do from the parsed note alone (`sync_derive.Preparing`: admission decisions, entity
mentions). It is a pure function of the file's bytes (and of the registry the entity work was
handed), so where it runs does not change a single row: `load_many` does it for a batch of
files, in this process or in a parse worker (`sync_load.Loader`), and builds the batch's rows
there (`sync_rows`)."""

from __future__ import annotations

import hashlib
import logging
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from vaultmind.entities.extract import parse_author
from vaultmind.index.lexical import term_counts
from vaultmind.markdown.note import parse_note
from vaultmind.model import FileStat, ParsedNote, Pickled, Problem, WrittenNote
from vaultmind.sync_rows import RowBuffers, frontmatter_json
from vaultmind.vault.read import decode_note, read_note

log = logging.getLogger(__name__)

Preparer = Callable[[ParsedNote, str], Any]
"""A deriver's pure per-note work (`sync_derive.Preparing`): (parsed note, its front matter as
stored) → what the deriver's `apply` takes for the note. Must pickle (it runs in workers)."""


@dataclass(slots=True)
class Loaded(Pickled):
    """What a sync needs to know about one file it read."""

    path: str
    stat: FileStat | None  # None: the file is gone
    problem: Problem | None = None  # from reading (too large, unreadable, …)
    keep_rows: bool = False  # the file could not be observed: keep what the index has
    sha: str | None = None  # None: not read
    same: bool = False  # the bytes hash to the indexed sha256: nothing else was done
    decode_problem: Problem | None = None
    conflict: Problem | None = None  # the text holds a merge conflict left unresolved
    note: ParsedNote | None = None  # None: not text (binary), not parsed, or its rows built (`in_rows`)
    written: WrittenNote | None = None  # of `note`, what the derivers read; None: not parsed
    counts: tuple[tuple[Counter[str], int], ...] = ()  # per leaf: term counts, number of terms
    frontmatter_json: str = "{}"  # the `notes.frontmatter` value
    prepared: tuple[Any, ...] = ()  # per preparer: its result for the note
    in_rows: bool = False  # its rows are in the `Batch.rows` built where it was parsed (no `note`, `counts`)


@dataclass(slots=True)
class Batch:
    """The loaded files of one batch, in order, and the index rows of the parsed ones (`in_rows`)
    as Arrow tables, in the same order: built in the workers, they cross processes as a few
    buffers instead of millions of Python objects (the term counts of every leaf)."""

    loaded: list[Loaded] = field(default_factory=list)
    rows: list[dict[str, pa.Table]] = field(default_factory=list)


def load_note(
    vault: Path,
    path: str,
    max_bytes: int,
    chunk_tokens: int,
    indexed_sha: str | None,
    preparers: Sequence[Preparer] = (),
    zone: str = "",
) -> Loaded:
    """Read, hash and (when its hash is not `indexed_sha`) parse one note; `zone`: the vault's
    `[ingest] timezone`, which its local `date:` is read in ("": this machine's)."""
    result = read_note(vault, path, max_bytes)
    loaded = Loaded(path, result.stat, result.problem, result.keep_rows)
    if result.data is None or result.stat is None or (result.problem is not None and result.keep_rows):
        return loaded
    loaded.sha = hashlib.sha256(result.data).hexdigest()
    if loaded.sha == indexed_sha:
        loaded.same = True
        return loaded
    text, loaded.decode_problem = decode_note(path, result.data)
    if text is None:
        return loaded
    loaded.conflict = merge_conflict(path, text)
    try:
        note = parse_note(path, text, chunk_tokens=chunk_tokens, zone=zone)
        loaded.counts = note_term_counts(note)
        loaded.frontmatter_json = frontmatter_json(note)
        loaded.prepared = tuple(prepare(note, loaded.frontmatter_json) for prepare in preparers)
    except Exception as exc:  # one note the parser cannot take must not stop a sync or the watcher
        log.warning("could not parse %s (%s: %s); what the index held for it is kept", path, type(exc).__name__, exc)
        log.debug("could not parse %s", path, exc_info=True)
        loaded.counts, loaded.prepared = (), ()
        loaded.problem = Problem(
            path,
            "parse_error",
            f"vaultmind could not parse this note ({type(exc).__name__}: {exc}); what the index held "
            "for it is kept — please report this note's shape",
        )
        loaded.keep_rows = True
        return loaded
    loaded.note, loaded.written = note, WrittenNote.of(note)
    return loaded


# The lines git (and other merge tools) write around the two sides of a conflict it left
_OURS = re.compile(r"^<{7}(?: |\r?$)", re.MULTILINE)
_BETWEEN = re.compile(r"^={7}\r?$", re.MULTILINE)
_THEIRS = re.compile(r"^>{7}(?: |\r?$)", re.MULTILINE)


def merge_conflict(path: str, text: str) -> Problem | None:
    """A warning when a note holds a merge conflict left unresolved: a `<<<<<<<` line, then a
    `=======` line, then a `>>>>>>>` line. The note is indexed as it is, both sides included."""
    ours = _OURS.search(text)
    between = _BETWEEN.search(text, ours.end()) if ours else None
    if between is None or _THEIRS.search(text, between.end()) is None:
        return None
    return Problem(
        path,
        "merge_conflict",
        "holds a merge conflict left unresolved (<<<<<<< … ======= … >>>>>>>); indexed as it is, "
        "both sides and the markers included — resolve it in the note",
    )


def _recipient_name(recipient: str) -> str:
    person = parse_author(recipient)
    if person is None:
        return recipient
    return person.name or person.email.split("@", 1)[0] or recipient


def note_term_counts(note: ParsedNote) -> tuple[tuple[Counter[str], int], ...]:
    """Each leaf's search terms and their number: its text's, and for the first leaf also the
    words a note is named by outside its text — an email thread's subject (kept in the front
    matter, not in any message), the title of a note of yours whose first leaf does not open
    with it (as its heading, or as a properties leaf's first line) — so they find it. An email's
    leaf also has its recipients' names (of an address alone, the part before the "@")."""
    counts = [term_counts(leaf.text) for leaf in note.leaves]
    for k, leaf in enumerate(note.leaves):
        if leaf.to or leaf.cc:
            found, total = counts[k]
            extra, more = term_counts(" ".join(map(_recipient_name, (*leaf.to, *leaf.cc))))
            counts[k] = (found + extra, total + more)
    fm = note.frontmatter
    named = fm.get("subject") if note.kind == "source" and fm.get("kind") == "email" else None
    if note.kind == "user" and note.leaves:
        # not when the leaf opens with it: as its heading, or as a properties leaf's first line
        lead = note.leaves[0]
        opens = lead.heading_path[:1] == (note.title,) or lead.text.split("\n", 1)[0] == note.title
        named = None if opens else note.title
    if counts and isinstance(named, str) and named.strip():
        found, total = counts[0]
        extra, more = term_counts(named)
        counts[0] = (found + extra, total + more)
    return tuple(counts)


def load_many(
    vault: Path,
    paths: Sequence[str],
    max_bytes: int,
    chunk_tokens: int,
    shas: Sequence[str | None],
    preparers: Sequence[Preparer],
    rows: bool = False,
    zone: str = "",
) -> Batch:
    """`load_note` of each path; with `rows`, the rows of the parsed notes are built here too
    (`Batch.rows`), and their parsed notes and term counts dropped (`Loaded.written` stays)."""
    out = Batch([load_note(vault, p, max_bytes, chunk_tokens, s, preparers, zone) for p, s in zip(paths, shas, strict=True)])
    if rows:
        buffers = RowBuffers()
        for item in out.loaded:
            if item.note is not None and item.stat is not None and item.sha is not None:
                buffers.add_note(item.note, item.stat, item.sha, item.counts, item.frontmatter_json)
                item.note, item.counts = None, ()
                item.in_rows = True
        out.rows.append(buffers.tables())
    return out
