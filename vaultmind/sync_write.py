"""One apply's transaction: what a batch of the diff changes (`BatchPlan`), its rows
(`BatchRows`: those built where the notes were parsed, and those built here), and the
statements that delete the rows of changed and gone paths, insert the new rows, run the
derivers and set the problems (`write_batch`). Run again as a whole if it rolls back: nothing
outside the index is changed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from vaultmind.index.arrow import execute_with, insert_arrow, key_table
from vaultmind.index.leaf_rows import LEAF_FIELDS, note_fields
from vaultmind.index.resident import LeafDelta
from vaultmind.index.schema import derived_tables
from vaultmind.index.store import Index
from vaultmind.markdown.note import leaf_key
from vaultmind.model import FileStat, ParsedNote, Problem, WrittenNote
from vaultmind.sync_derive import Deriver, Preparing
from vaultmind.sync_note import Loaded
from vaultmind.sync_rows import ROW_SCHEMAS, RowBuffers, row_table
from vaultmind.sync_scan import SCAN_PROBLEMS, as_scan_problem
from vaultmind.vault.scan import ScanResult

RETRIED = ("unreadable", "changed_while_reading")  # a failed read, tried again at every sync
REPLACED = (*RETRIED, "parse_error")  # the problems of a read whose rows are kept, set again by each read
TermCounts = tuple[tuple[Counter[str], int], ...]  # per leaf of a note: term counts, number of terms


@dataclass(slots=True)
class BatchPlan:
    """What one apply changes: the notes to write, the paths whose rows go, the stats to touch,
    the problems to set and clear."""

    write: dict[str, Loaded] = field(default_factory=dict)  # read and parsed: stat, note, counts set
    remove: set[str] = field(default_factory=set)  # paths whose rows go (gone, or no longer indexable)
    touch: dict[str, FileStat] = field(default_factory=dict)
    problems: dict[str, list[Problem]] = field(default_factory=dict)  # path → its current problems
    clear_problems: set[str] = field(default_factory=set)  # paths whose old problems no longer hold
    # paths whose read failed (their rows kept) or read as indexed: only a failed read's problem
    # (`REPLACED`) is replaced, the others (front matter…) are of the bytes indexed and hold
    read_only: set[str] = field(default_factory=set)
    rows: list[dict[str, pa.Table]] = field(default_factory=list)  # Arrow rows of the `in_rows` notes of `write`


def write_batch(
    index: Index,
    con: duckdb.DuckDBPyConnection,
    plan: BatchPlan,
    rows: BatchRows,
    derivers: Sequence[Deriver],
    *,
    chunk_tokens: int,
    rebuild: bool,
    fresh: LoadLeafIds | None,
    scan: ScanResult | None,
) -> list[str]:
    """The statements of one batch's transaction (run again if it rolls back: nothing
    outside the index is changed). Returns the ids of the leaves that went away."""
    if rebuild:
        kept = sorted(fresh.kept) if fresh is not None else []
        clear_for_rebuild(con, kept)
        if fresh is not None and kept:  # the kept notes' leaves are in the table already
            sql = "SELECT id FROM leaves WHERE note_path IN (SELECT path FROM _rows)"
            fresh.add_new([row[0] for row in execute_with(con, sql, rows=key_table(kept, "path")).fetchall()])
        con.execute("DELETE FROM meta WHERE key = 'needs_rebuild'")
        index.set_meta(con, "chunk_tokens", str(chunk_tokens))  # the size leaves are cut at
    changed = sorted(plan.remove | set(plan.write))
    if fresh is not None:  # a rebuild: only the rows it kept can exist (of a note readable after all)
        changed = [path for path in changed if path in fresh.kept]
    written = [note for path in sorted(plan.write) if (note := plan.write[path].written) is not None]
    # a save whose leaf ids no other note holds: the rows of its leaves, old and new, are the ones it inserts
    alone = fresh is None and bool(changed) and not held_elsewhere(con, changed, written)
    removed_ids = delete_paths(con, changed) if changed else []
    if plan.touch:
        _touch(con, plan.touch)
    inserted = rows.insert(con)
    # a rebuild's batch whose leaf ids no earlier batch wrote: its rows are every row of its leaves
    if fresh is not None:
        alone = fresh.add_new(inserted.column("id").to_pylist())
    leaves = inserted if alone else None
    drop_written_blocks(index)
    number = 0
    for deriver in derivers:
        if isinstance(deriver, Preparing):
            prepared = {path: item.prepared[number] for path, item in plan.write.items()}
            number += 1
            deriver.apply(
                con, removed_ids, written, rebuild=rebuild, changed_paths=changed, prepared=prepared, leaves=leaves
            )
        else:
            deriver.apply(con, removed_ids, written, rebuild=rebuild, changed_paths=changed)
        drop_written_blocks(index)
    problem_paths = sorted((plan.clear_problems | set(plan.problems)) - plan.read_only)
    problems = {path: list(found) for path, found in plan.problems.items()}
    if scan is not None:
        con.execute(f"DELETE FROM problems WHERE kind IN ({', '.join(repr(k) for k in SCAN_PROBLEMS)})")
        for problem in scan.problems:
            problems.setdefault(problem.path, []).append(as_scan_problem(problem))
    if problem_paths and not rebuild:
        _with_paths(con, problem_paths, "DELETE FROM problems WHERE path IN (SELECT path FROM _rows)")
    if plan.read_only and not rebuild:
        _with_paths(
            con,
            sorted(plan.read_only),
            f"DELETE FROM problems WHERE path IN (SELECT path FROM _rows) AND kind IN ({', '.join(map(repr, REPLACED))})",
        )
    _insert_problems(con, problems)
    return removed_ids


def drop_written_blocks(index: Index) -> None:
    """Within a batch of a whole-vault load, between its steps (the rows, each deriver, the
    vectors): the blocks of the row groups DuckDB wrote as they filled, and those a step
    read, stay cached until the pool is full, under the next step's own memory (119 MB at
    the peak of a batch at 50k notes)."""
    if index.in_bulk:
        index.drop_cached_blocks()


class BatchRows(RowBuffers):
    """Column buffers for one apply, and the Arrow rows built where notes were parsed, inserted
    with one statement per table."""

    def __init__(self) -> None:
        super().__init__()
        self.leaf_id: list[str] = []
        self._counts: list[tuple[Counter[str], int]] = []  # of each leaf of `add_note`
        self._leaf_note: list[int] = []  # the place of each one's note in the `notes` columns
        self.chunks: list[dict[str, pa.Table]] = []  # rows built by the loader, in path order
        self.leaf_rows = 0

    def add_note(
        self, note: ParsedNote, st: FileStat, sha: str, leaf_counts: TermCounts, frontmatter: str | None = None
    ) -> None:
        super().add_note(note, st, sha, leaf_counts, frontmatter)
        self.leaf_id.extend(leaf.id for leaf in note.leaves)
        self._counts.extend(leaf_counts)
        self._leaf_note.extend([len(self.note["path"]) - 1] * len(note.leaves))
        self.leaf_rows += len(note.leaves)

    def deltas(self) -> list[LeafDelta]:
        """The leaves of `add_note`, each with its term counts and its full row, from the values
        buffered for its insert: the resident leaves take them with the change instead of
        reading them back from the index. Built on demand (a rebuild's batches need none)."""
        fields = ("kind", "title", "source_id", "source_kind", "frontmatter")
        of_note: dict[int, dict[str, Any]] = {}
        out = []
        for i, (note, (counts, total)) in enumerate(zip(self._leaf_note, self._counts, strict=True)):
            if note not in of_note:
                of_note[note] = note_fields(*(self.note[name][note] for name in fields))
            row = {name: self.leaf[name][i] for name in LEAF_FIELDS} | of_note[note]
            out.append(LeafDelta(row["id"], row["content_hash"], counts, total, row))
        return out

    def add_chunk(self, tables: dict[str, pa.Table]) -> None:
        self.chunks.append(tables)
        leaves = tables.get("leaves")
        self.leaf_rows += 0 if leaves is None else leaves.num_rows

    def leaf_texts(self, besides: Collection[str] = ()) -> dict[str, str]:
        """The written leaves' texts by content hash (for embedding), but for the texts of the
        leaves whose ids are in `besides`."""
        out = dict(zip(self.leaf["content_hash"], self.leaf["text"], strict=True))
        for chunk in self.chunks:
            if (table := chunk.get("leaves")) is not None:
                out.update(zip(table.column("content_hash").to_pylist(), table.column("text").to_pylist(), strict=True))
        if besides:
            known = set(besides)
            for leaf_id, content_hash in zip(self.leaf["id"], self.leaf["content_hash"], strict=True):
                if leaf_id in known:
                    out.pop(content_hash, None)
        return out

    def insert(self, con: duckdb.DuckDBPyConnection) -> pa.Table:
        """Insert the rows, numbering the notes from the index's next note number on: each set
        of rows (a worker's, then this one's) numbers its notes from 0 (`RowBuffers`). Returns
        the `leaves` rows inserted."""
        sets = [*self.chunks, self.tables()]
        first = con.execute("SELECT coalesce(max(note_no) + 1, 0) FROM notes").fetchone()
        base = int(first[0]) if first else 0
        parts: dict[str, list[pa.Table]] = {name: [] for name in ("notes", "leaves", "postings", "links", "tags")}
        for rows in sets:
            for name, table in rows.items():
                if name in ("notes", "postings"):
                    table = _shift_note_numbers(table, base)
                parts[name].append(table)
            base += rows["notes"].num_rows if "notes" in rows else 0
        inserted = {
            name: tables[0] if len(tables) == 1 else pa.concat_tables(tables) for name, tables in parts.items() if tables
        }
        for name, table in inserted.items():
            insert_arrow(con, name, table)
        return inserted.get("leaves", ROW_SCHEMAS["leaves"].empty_table())


class LoadLeafIds:
    """The leaf ids a rebuild has written so far, as the sorted hashes of the ids (8 bytes
    each, ~3.4 MB at 50k notes). A batch whose ids none of them matches holds every row of
    its leaves, so the entity deriver need not read them back: with the lookup indexes
    suspended that read scans the `leaves` rows the load wrote so far, on every batch. Two ids
    sharing a hash only cost that read (`add_new` says False)."""

    def __init__(self, kept: Collection[str] = ()) -> None:
        self.hashes: npt.NDArray[np.int64] = np.empty(0, np.int64)
        self.kept = frozenset(kept)  # the notes whose rows the rebuild keeps (`clear_for_rebuild`)

    def add_new(self, ids: Sequence[str]) -> bool:
        """Add `ids`; True when none of them (by its hash) was added before."""
        new = np.unique(np.fromiter(map(hash, ids), np.int64, len(ids)))
        seen = self.hashes
        place = np.searchsorted(seen, new)
        fresh = not np.any(seen[np.minimum(place, len(seen) - 1)] == new) if len(seen) else True
        self.hashes = np.insert(seen, place, new)
        return fresh


def clear_for_rebuild(con: duckdb.DuckDBPyConnection, kept: Sequence[str]) -> None:
    """Empty the derived tables for a rebuild, but for the rows of the notes in `kept` (those
    it cannot list or read): their notes, leaves, postings, links, tags, summaries and problems
    (but those of a failed read, which the rebuild's read sets again) stay, marked to be read again
    (`sha256` '', `mtime_ns` -1) once they can be, since the rebuild did not derive them."""
    tables = derived_tables()
    if not kept:
        for table in tables:
            con.execute(f"DELETE FROM {table}")
        return
    rows = key_table(kept, "path")
    by_path = {
        "notes": "path", "leaves": "note_path", "links": "src_path", "tags": "path", "problems": "path",
        "summaries": "note_path",  # (the other tables, derived from all the rows, are derived again)
    }  # fmt: skip
    execute_with(
        con,
        "DELETE FROM postings WHERE NOT coalesce(note_no IN "
        "(SELECT note_no FROM notes WHERE path IN (SELECT path FROM _rows)), false)",
        rows=rows,
    )
    for table in tables:
        if table in by_path:
            execute_with(con, f"DELETE FROM {table} WHERE {by_path[table]} NOT IN (SELECT path FROM _rows)", rows=rows)
        elif table != "postings":
            con.execute(f"DELETE FROM {table}")
    con.execute(f"DELETE FROM problems WHERE kind IN ({', '.join(map(repr, REPLACED))})")
    execute_with(con, "UPDATE notes SET sha256 = '', mtime_ns = -1 WHERE path IN (SELECT path FROM _rows)", rows=rows)


def _shift_note_numbers(table: pa.Table, by: int) -> pa.Table:
    if not by:
        return table
    column = table.schema.get_field_index("note_no")
    return table.set_column(column, "note_no", pc.add(table.column(column), pa.scalar(by, pa.int64())))


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, columns: dict[str, list[Any]]) -> pa.Table | None:
    """Insert column lists into `table` through one Arrow table (fast, typed, NULL-safe);
    returns that table (None: no rows)."""
    if not columns[ROW_SCHEMAS[table].names[0]]:
        return None
    data = row_table(table, columns)
    insert_arrow(con, table, data)
    return data


def _with_paths(con: duckdb.DuckDBPyConnection, paths: Sequence[str], sql: str) -> None:
    """Run `sql`, in which `_rows(path)` are `paths`."""
    execute_with(con, sql, rows=key_table(paths, "path"))


def delete_paths(con: duckdb.DuckDBPyConnection, paths: Sequence[str]) -> list[str]:
    """Delete every row derived from `paths`; return the ids of the leaves that went away."""
    table = key_table(paths, "path")

    def run(sql: str, params: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        return execute_with(con, sql, params, rows=table).fetchall()

    removed = [row[0] for row in run("SELECT id FROM leaves WHERE note_path IN (SELECT path FROM _rows) ORDER BY id")]
    found = [row[0] for row in run("SELECT note_no FROM notes WHERE path IN (SELECT path FROM _rows)")]
    numbers = sorted(n for n in found if n is not None)
    if len(numbers) < len(found):  # rows written before notes were numbered: by leaf id
        run(
            "DELETE FROM postings WHERE leaf_id IN (SELECT id FROM leaves WHERE note_path IN "
            "(SELECT path FROM _rows WHERE path IN (SELECT path FROM notes WHERE note_no IS NULL)))"
        )
    if numbers:
        # By note number, within their range: DuckDB skips the row groups outside it (by
        # leaf id, a hash, it read the whole table). Each note deletes its own rows only: a
        # leaf also held by a note that stays (a copied source note) keeps that note's.
        con.execute(
            "DELETE FROM postings WHERE note_no BETWEEN ? AND ? AND note_no IN (SELECT unnest(?::BIGINT[]))",
            [numbers[0], numbers[-1], numbers],
        )
    run("DELETE FROM leaves WHERE note_path IN (SELECT path FROM _rows)")
    run("DELETE FROM links WHERE src_path IN (SELECT path FROM _rows)")
    run("DELETE FROM tags WHERE path IN (SELECT path FROM _rows)")
    run("DELETE FROM notes WHERE path IN (SELECT path FROM _rows)")
    return removed


# what `str.strip` takes off: the characters whose `isspace()` holds, written out (found by a
# pass over every code point, it cost each process that imports this ~0.1 s)
_SPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_SPACE_CLASS = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in _SPACE) + "]"
_PADDED = f"^{_SPACE_CLASS}|{_SPACE_CLASS}$"  # a value `str.strip` changes


def held_elsewhere(con: duckdb.DuckDBPyConnection, changed: Sequence[str], written: Sequence[WrittenNote]) -> bool:
    """Whether a note outside `changed` may hold a leaf id of `changed`'s notes as they are in
    the index (asked before their rows go) or of `written`. A leaf id is a hash of its note's
    key (`leaf_key`: a source note's `source_id` as a stripped string, else its path), so such
    a note has one of their keys as its path, or as its stripped `source_id` (in lower case
    when it is "True" or "False": a `true` is stored so). It errs only towards yes (a
    `source_id` that is a list keys by path). The paths are looked up by the `notes_path`
    index and the source ids scanned (~4 MiB at 50k notes), where looking a long note's leaf
    ids up in `leaves` scanned that table (+27 MiB and 0.3-0.7 s for a note of 267 leaves)."""
    sid = "CASE WHEN regexp_matches(source_id, $2) THEN trim(source_id, $1) ELSE source_id END"
    sql = f"SELECT rowid, {sid} FROM notes WHERE path IN (SELECT unnest($3::VARCHAR[]))"
    found = con.execute(sql, [_SPACE, _PADDED, sorted(changed)]).fetchall()
    own = {row[0] for row in found}
    keys = {leaf_key(note.path, note.kind, note.frontmatter) for note in written} | set(changed)
    keys |= {key for row in found if row[1] is not None for key in (row[1], row[1].lower())}
    by_path = con.execute("SELECT rowid FROM notes WHERE path IN (SELECT unnest(?::VARCHAR[]))", [sorted(keys)])
    if any(row[0] not in own for row in by_path.fetchall()):
        return True
    by_source = (
        f"SELECT rowid FROM notes WHERE source_id IS NOT NULL AND ({sid} IN (SELECT unnest($3::VARCHAR[])) "
        "OR source_id IN ('True', 'False') AND lower(source_id) IN (SELECT unnest($3::VARCHAR[])))"
    )
    return any(row[0] not in own for row in con.execute(by_source, [_SPACE, _PADDED, sorted(keys)]).fetchall())


def _touch(con: duckdb.DuckDBPyConnection, touch: dict[str, FileStat]) -> None:
    paths = sorted(touch)
    frame = pa.table(
        {
            "path": pa.array(paths, pa.string()),
            "size": pa.array([touch[p].size for p in paths], pa.int64()),
            "mtime_ns": pa.array([touch[p].mtime_ns for p in paths], pa.int64()),
            "ctime_ns": pa.array([touch[p].ctime_ns for p in paths], pa.int64()),
            "ino": pa.array([touch[p].ino for p in paths], pa.int64()),
        }
    )
    execute_with(
        con,
        "UPDATE notes SET size = t.size, mtime_ns = t.mtime_ns, ctime_ns = t.ctime_ns, ino = t.ino "
        "FROM _rows t WHERE notes.path = t.path",
        rows=frame,
    )


def _insert_problems(con: duckdb.DuckDBPyConnection, problems: dict[str, list[Problem]]) -> None:
    cols: dict[str, list[Any]] = {"path": [], "kind": [], "message": []}
    for path in sorted(problems):
        for problem in problems[path]:
            cols["path"].append(problem.path)
            cols["kind"].append(problem.kind)
            cols["message"].append(problem.message)
    insert_rows(con, "problems", cols)

