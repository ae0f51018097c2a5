"""The index rows of parsed notes, built as Arrow tables: the `notes`, `leaves`, `postings`,
`links` and `tags` rows (`RowBuffers`, column lists per table, `ROW_SCHEMAS`). A parse worker
builds them for the notes it parsed, so they cross processes as a few buffers instead of
millions of Python objects; the applying process inserts them (`sync`)."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa

from vaultmind.model import FileStat, ParsedNote


def frontmatter_json(note: ParsedNote) -> str:
    """The front matter as the `notes` row stores it."""
    return json.dumps(note.frontmatter, sort_keys=True, ensure_ascii=False, default=str)


ROW_SCHEMAS: dict[str, pa.Schema] = {
    "notes": pa.schema(
        [
            ("path", pa.string()), ("kind", pa.string()), ("title", pa.string()), ("size", pa.int64()),
            ("mtime_ns", pa.int64()), ("sha256", pa.string()), ("source_id", pa.string()),
            ("source_kind", pa.string()), ("frontmatter", pa.string()), ("frontmatter_error", pa.string()),
            ("aliases", pa.list_(pa.string())), ("leaf_count", pa.int32()), ("note_no", pa.int64()),
            ("ctime_ns", pa.int64()), ("ino", pa.int64()),
        ]
    ),
    "leaves": pa.schema(
        [
            ("id", pa.string()), ("note_path", pa.string()), ("seq", pa.int32()), ("kind", pa.string()),
            ("text", pa.string()), ("content_hash", pa.string()), ("token_count", pa.int32()),
            ("term_count", pa.int32()), ("anchor", pa.string()), ("heading_path", pa.list_(pa.string())),
            ("message_id", pa.string()), ("author", pa.string()), ("ts", pa.timestamp("us")),
            ("source_ref", pa.string()), ("mail_to", pa.list_(pa.string())), ("mail_cc", pa.list_(pa.string())),
        ]
    ),
    # dictionary-encoded: a batch's ~500k postings repeat their terms and leaf ids (a worker's
    # result is a quarter the size in memory and through the pipe; DuckDB reads them as text)
    "postings": pa.schema(
        [("term", pa.dictionary(pa.int32(), pa.string())), ("leaf_id", pa.dictionary(pa.int32(), pa.string())),
         ("tf", pa.int32()), ("note_no", pa.int64())]
    ),
    "links": pa.schema(
        [
            ("src_path", pa.string()), ("target", pa.string()), ("kind", pa.string()), ("heading", pa.string()),
            ("block", pa.string()), ("alias", pa.string()), ("line", pa.int32()),
        ]
    ),
    "tags": pa.schema([("path", pa.string()), ("tag", pa.string())]),
    "problems": pa.schema([("path", pa.string()), ("kind", pa.string()), ("message", pa.string())]),
    "embeddings": pa.schema(
        [("content_hash", pa.string()), ("model", pa.string()), ("dim", pa.int32()), ("vec", pa.binary())]
    ),
}  # fmt: skip


def row_table(table: str, columns: dict[str, list[Any]]) -> pa.Table:
    """Column lists (`RowBuffers`) as an Arrow table of `ROW_SCHEMAS[table]`."""
    schema = ROW_SCHEMAS[table]
    return pa.table({name: columns[name] for name in schema.names}, schema=schema)


def _columns(table: str) -> dict[str, list[Any]]:
    return {name: [] for name in ROW_SCHEMAS[table].names}


class RowBuffers:
    """Column lists of the `notes`, `leaves`, `postings`, `links` and `tags` rows of notes.

    `note_no` (of notes and their postings) holds each note's place among the notes added here
    (0, 1, …); the applying process adds the index's next note number (`sync_write.BatchRows.insert`)."""

    def __init__(self) -> None:
        self.note = _columns("notes")
        self.leaf = _columns("leaves")
        # a posting's term and tf; its leaf id and note number are spread from `post_leaves`
        # (leaf id, note number, postings) when the table is built, not held per posting
        self.post: dict[str, list[Any]] = {"term": [], "tf": []}
        self.post_leaves: list[tuple[str, int, int]] = []
        self.link = _columns("links")
        self.tag = _columns("tags")

    def add_note(
        self,
        note: ParsedNote,
        st: FileStat,
        sha: str,
        leaf_counts: tuple[tuple[Counter[str], int], ...],
        frontmatter: str | None = None,
    ) -> None:
        fm = note.frontmatter
        source_id = fm.get("source_id") if note.kind == "source" else None
        source_kind = fm.get("kind") if note.kind == "source" else None
        values = {
            "path": note.path,
            "kind": note.kind,
            "title": note.title,
            "size": st.size,
            "mtime_ns": st.mtime_ns,
            "ctime_ns": st.ctime_ns,
            "ino": st.ino,
            "sha256": sha,
            "source_id": str(source_id) if source_id is not None else None,
            "source_kind": str(source_kind) if source_kind is not None else None,
            "frontmatter": frontmatter_json(note) if frontmatter is None else frontmatter,
            "frontmatter_error": note.frontmatter_error,
            "aliases": list(note.aliases),
            "leaf_count": len(note.leaves),
            "note_no": (note_no := len(self.note["path"])),
        }
        for key, value in values.items():
            self.note[key].append(value)
        leaves = note.leaves
        columns = self.leaf  # column by column: a note's leaves are many, their fields few
        columns["id"].extend([leaf.id for leaf in leaves])
        columns["note_path"].extend([note.path] * len(leaves))
        columns["seq"].extend([leaf.seq for leaf in leaves])
        columns["kind"].extend([leaf.kind for leaf in leaves])
        columns["text"].extend([leaf.text for leaf in leaves])
        columns["content_hash"].extend([leaf.content_hash for leaf in leaves])
        columns["token_count"].extend([leaf.token_count for leaf in leaves])
        columns["term_count"].extend([total for _, total in leaf_counts])
        columns["anchor"].extend([leaf.anchor for leaf in leaves])
        columns["heading_path"].extend([list(leaf.heading_path) for leaf in leaves])
        columns["message_id"].extend([leaf.message_id for leaf in leaves])
        columns["author"].extend([leaf.author for leaf in leaves])
        columns["ts"].extend([parse_ts(leaf.timestamp) for leaf in leaves])
        columns["source_ref"].extend([leaf.source_ref for leaf in leaves])
        columns["mail_to"].extend([list(leaf.to) or None for leaf in leaves])
        columns["mail_cc"].extend([list(leaf.cc) or None for leaf in leaves])
        for leaf, (counts, _) in zip(leaves, leaf_counts, strict=True):
            self.add_postings(leaf.id, counts, note_no)
        for link in note.links:
            for key, value in (
                ("src_path", note.path),
                ("target", link.target),
                ("kind", link.kind),
                ("heading", link.heading),
                ("block", link.block),
                ("alias", link.alias),
                ("line", link.line),
            ):
                self.link[key].append(value)
        for tag in note.tags:
            self.tag["path"].append(note.path)
            self.tag["tag"].append(tag)

    def add_postings(self, leaf_id: str, counts: Counter[str], note_no: int) -> None:
        leaf_terms = sorted(counts)
        self.post["term"].extend(leaf_terms)
        self.post["tf"].extend(map(counts.__getitem__, leaf_terms))
        self.post_leaves.append((leaf_id, note_no, len(leaf_terms)))

    def postings_table(self) -> pa.Table:
        """The `postings` rows: each leaf's id and note number repeated over its postings by
        numpy, its id dictionary-encoded by the leaf's place (no Python object per posting)."""
        leaf_ids, note_numbers, sizes = zip(*self.post_leaves, strict=True) if self.post_leaves else ((), (), ())
        repeats = np.array(sizes, np.int64)
        schema = ROW_SCHEMAS["postings"]
        return pa.table(
            {
                "term": pa.array(self.post["term"], schema.field("term").type),
                "leaf_id": pa.DictionaryArray.from_arrays(
                    np.repeat(np.arange(len(leaf_ids), dtype=np.int32), repeats), pa.array(leaf_ids, pa.string())
                ),
                "tf": pa.array(self.post["tf"], pa.int32()),
                "note_no": np.repeat(np.array(note_numbers, np.int64), repeats),
            },
            schema=schema,
        )

    def tables(self) -> dict[str, pa.Table]:
        """The rows as Arrow tables (tables without rows left out)."""
        out: dict[str, pa.Table] = {}
        for table, columns in (("notes", self.note), ("leaves", self.leaf), ("links", self.link), ("tags", self.tag)):
            if columns[ROW_SCHEMAS[table].names[0]]:
                out[table] = row_table(table, columns)
        if self.post["term"]:
            out["postings"] = self.postings_table()
        return {name: out[name] for name in ("notes", "leaves", "postings", "links", "tags") if name in out}


def parse_ts(value: str | None) -> datetime | None:
    """A leaf timestamp as naive UTC for a TIMESTAMP column (None if unparseable)."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed
