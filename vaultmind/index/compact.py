"""Give back the space an index file has grown by under churn: copy its rows into a new file and
put that file in the old one's place (`compact`).

DuckDB reuses the blocks a checkpoint frees, but a file only grows: under the delete-and-insert
of every save (a note's leaves, postings, vectors, entity rows written again) a 2,000-note
index grew from 27 to 105 MB over 600 rounds of churn, without levelling off, while a fresh
copy of the same rows took 25–29 MB (docs/benchmarks.md, *Index file under churn*). A copy
writes each table's rows once, into full row groups.

The measure of the waste (`waste`) reads no row, only DuckDB's counts: the file's size, the
blocks in use (`PRAGMA database_size`; the others are free, kept for reuse but never given
back), and for each table its blocks and how many of the rows they hold are deleted
(`pragma_storage_info` against `count(*)`). DuckDB never drops the deleted rows of a table
that has an index (no vacuum of a row group then): under churn `leaves` held 59,782 rows for
12,277 live ones, `notes` 9,095 for 2,000, and they grow with every save for good. What the
file holds live is then the blocks in use less each table's blocks' deleted share; a churned
2,000-note index: 77.8 MB, 47.5 MB in use, 28.8 MB live by this measure, 27.5 MB in a fresh
copy. A copy is worth making when the file is more than `WORTH_RATIO` times that and larger
than `WORTH_MIN_BYTES` (a small index is not worth the copy).

Crash-safe at every step, and nothing lost: the copy is written beside the index
(`index.duckdb.compact`), checkpointed, checked against the index (every table's row count,
the tables' and lookup indexes' definitions, the sequences going on from the index's),
flushed to disk; then the index's connection is closed (its checkpoint empties and removes
its WAL) and the copy renamed over it in one `os.replace`, and the directory flushed. A crash
before the rename leaves the old file whole (and a stale copy, removed by the next open or
compaction); after it, the new file whole, with no WAL of the old file's to be replayed on
it. Whatever the table (vectors, NER and LLM caches, the admission queue, `meta`, the
migrations), the schema is copied by `COPY FROM DATABASE … (SCHEMA)` (lookup indexes,
sequences, constraints) and its rows as they are: no row is derived again.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import duckdb

from vaultmind.errors import SyncStopped
from vaultmind.index.connection import ROW_GROUP_ROWS, apply_settings, close_index, settings_of
from vaultmind.model import Progress

log = logging.getLogger(__name__)

COPY_SUFFIX = ".compact"  # the copy being written, beside the index
COPY_ALIAS = "vaultmind_compact"  # the copy's name while it is attached to the index's connection
WORTH_RATIO = 2.0  # a copy is made when the file is this many times what it holds live
WORTH_MIN_BYTES = 32 * 2**20  # … and larger than this
PHASE = "compact"
# DuckDB's buffer pool and threads while the copy is written (then the connection's own again):
# under the index's usual 512 MB pool, one thread less, a 620 MB index at 50k notes took the
# process from 98 to 666 MB resident (a daemon idles at ~430–490 MB there); under these, to
# 207 MB, in 22–35 s instead of 10 (load 2–7). 32 MB ran out of memory copying it.
COPY_SETTINGS = {"memory_limit": "64MB", "threads": "1"}


@dataclass(frozen=True)
class Waste:
    """The index file's size against what it holds live (see the module's docstring)."""

    file_bytes: int
    used_bytes: int  # in the blocks in use
    dead_bytes: int  # of those, the deleted rows' share of each table's blocks

    @property
    def live_bytes(self) -> int:
        return max(1, self.used_bytes - self.dead_bytes)

    @property
    def ratio(self) -> float:
        return self.file_bytes / self.live_bytes

    def worth_compacting(self) -> bool:
        return self.file_bytes > WORTH_MIN_BYTES and self.ratio > WORTH_RATIO

    def to_dict(self) -> dict[str, float | int]:
        return {
            "file_bytes": self.file_bytes,
            "used_bytes": self.used_bytes,
            "live_bytes": self.live_bytes,
            "ratio": round(self.ratio, 2),
        }


def waste(con: duckdb.DuckDBPyConnection, path: Path) -> Waste:
    """The measure of `path`'s waste, read through its open connection `con` (no row read)."""
    cursor = con.execute("SELECT * FROM pragma_database_size() WHERE database_name = current_database()")
    names = [d[0] for d in cursor.description or ()]
    row = dict(zip(names, cursor.fetchone() or (), strict=False))
    block = int(row["block_size"])
    dead = 0.0
    for table in _tables(con):
        stored, blocks = con.execute(
            """SELECT sum(count) FILTER (WHERE column_id = 0 AND column_path = '[0]'),
                      count(DISTINCT block_id) FILTER (WHERE block_id >= 0)
               FROM pragma_storage_info(?)""",
            [table],
        ).fetchone() or (0, 0)
        (live,) = con.execute(f'SELECT count(*) FROM main."{table}"').fetchone() or (0,)
        if stored:
            dead += int(blocks) * block * max(0.0, 1.0 - int(live) / int(stored))
    return Waste(path.stat().st_size, int(row["used_blocks"]) * block, int(dead))


@dataclass(frozen=True)
class Compacted:
    """The index's bytes on disk (file and WAL, `on_disk`) before and after, and the rows copied by table."""

    before_bytes: int
    after_bytes: int
    rows: dict[str, int]

    def to_dict(self) -> dict[str, object]:
        return {"before_bytes": self.before_bytes, "after_bytes": self.after_bytes, "rows": dict(self.rows)}


def on_disk(path: Path) -> int:
    """The index's bytes on disk: its file and its WAL. The file alone misleads across a
    compaction, whose opening checkpoint first folds the WAL into it: a daemon's log said
    "26.8 → 29.0 MB" for a compaction that gave back 8 MB of file and WAL together."""
    wal = Path(f"{path}.wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def copy_path(path: Path) -> Path:
    return path.with_name(path.name + COPY_SUFFIX)


def remove_stale_copy(path: Path) -> None:
    """A copy (and its WAL) left by a compaction that did not finish: never the index's data."""
    copy = copy_path(path)
    for leftover in (copy, Path(f"{copy}.wal")):
        leftover.unlink(missing_ok=True)


def compact(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    reopen: Callable[[dict[str, str]], object],
    progress: Progress | None = None,
    stopping: threading.Event | None = None,
) -> Compacted:
    """Copy the index open on `con` at `path` into a new file and rename that over it; what was
    done. The caller holds every use of `con` off meanwhile (the index's lock). On an error
    before `con` is closed, the old file stays in place and `con` open on it; once it is
    closed, `reopen` opens whichever file is in place with `con`'s settings, whatever happens
    next (a failed rename leaves the old one). Once `stopping` is set (a daemon
    stopping) it is given up before the next table's rows, `SyncStopped`: at 50k notes the
    copy takes up to a minute, which the daemon's exit would otherwise wait for."""
    step = progress or (lambda phase, done, total: None)
    before = on_disk(path)
    remove_stale_copy(path)
    copy = copy_path(path)
    con.execute("CHECKPOINT")
    tables = _tables(con)
    total = len(tables) + 2  # each table's rows, the copy checked and flushed, the old file closed, the rename
    settings = settings_of(con)

    def next_table(done: int) -> None:
        _unless_stopping(stopping)
        step(PHASE, done, total)

    try:
        apply_settings(con, COPY_SETTINGS)
        _write_copy(con, copy, tables, next_table)
        rows = _checked_copy(con, copy, tables)
        _flush(copy)
    except BaseException:
        _detach(con)
        remove_stale_copy(path)
        apply_settings(con, settings)
        raise
    step(PHASE, len(tables), total)
    close_index(con)  # its checkpoint: the WAL emptied and removed
    replaced = False
    try:
        if Path(f"{path}.wal").exists():  # a WAL left would be replayed on the copy: keep the old file
            log.warning("compaction of %s given up: its WAL was not emptied by the close", path)
        else:
            step(PHASE, len(tables) + 1, total)
            os.replace(copy, path)
            replaced = True
            _flush_folder(path.parent)
            step(PHASE, total, total)
    finally:
        if not replaced:
            remove_stale_copy(path)
        reopen(settings)
    after = on_disk(path)
    log.info("compacted %s: %.1f → %.1f MB (with its WAL)", path, before / 2**20, after / 2**20)
    return Compacted(before, after, rows)


def _unless_stopping(stopping: threading.Event | None) -> None:
    if stopping is not None and stopping.is_set():
        raise SyncStopped("the daemon is stopping: the index was not compacted (it is as it was)")


def _tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' "
        "AND NOT temporary ORDER BY table_name"
    ).fetchall()
    return [str(r[0]) for r in rows]


def _write_copy(con: duckdb.DuckDBPyConnection, copy: Path, tables: list[str], done: Callable[[int], None]) -> None:
    """The schema (tables, indexes, sequences, views), then each table's rows, then a
    checkpoint of the copy; detached after."""
    source = _source(con)
    con.execute(f"ATTACH '{_quoted(copy)}' AS {COPY_ALIAS} (ROW_GROUP_SIZE {ROW_GROUP_ROWS})")
    try:
        con.execute(f'COPY FROM DATABASE "{source}" TO {COPY_ALIAS} (SCHEMA)')
        for n, table in enumerate(tables):
            done(n)
            con.execute(f'INSERT INTO {COPY_ALIAS}.main."{table}" SELECT * FROM main."{table}"')
        con.execute(f"CHECKPOINT {COPY_ALIAS}")
    finally:
        _detach(con)


# what must be alike in the copy beyond each table's rows, by database (the sequences: `_sequences`)
_ALIKE = {
    "indexes": "SELECT table_name, index_name, sql FROM duckdb_indexes() WHERE database_name = ? ORDER BY ALL",
    "tables": "SELECT table_name, sql FROM duckdb_tables() WHERE database_name = ? ORDER BY ALL",
}


def _checked_copy(con: duckdb.DuckDBPyConnection, copy: Path, tables: list[str]) -> dict[str, int]:
    """Every table's rows counted in the copy, read back from its file, against the index's,
    and its tables, indexes and sequences alike; the counts (a RuntimeError when anything
    differs or a table is missing)."""
    con.execute(f"ATTACH '{_quoted(copy)}' AS {COPY_ALIAS} (READ_ONLY)")
    try:
        rows: dict[str, int] = {}
        for table in tables:
            (ours,) = con.execute(f'SELECT count(*) FROM main."{table}"').fetchone() or (0,)
            (theirs,) = con.execute(f'SELECT count(*) FROM {COPY_ALIAS}.main."{table}"').fetchone() or (-1,)
            if ours != theirs:
                raise RuntimeError(f"the compacted copy of {table} has {theirs} rows, the index {ours}")
            rows[table] = int(ours)
        for what, sql in _ALIKE.items():
            ours, theirs = (con.execute(sql, [db]).fetchall() for db in (_source(con), COPY_ALIAS))
            if ours != theirs:
                raise RuntimeError(f"the compacted copy's {what} differ from the index's")
        if not _sequences_go_on(con):
            raise RuntimeError("the compacted copy's sequences are behind the index's")
        return rows
    finally:
        _detach(con)


def _sequences_go_on(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the copy has the index's sequences, each at or past the index's last value: it
    never hands out an id the index has. (A copied sequence starts at the index's next value,
    which DuckDB shows as its last: one more than the index's.)"""
    sql = "SELECT sequence_name, last_value FROM duckdb_sequences() WHERE database_name = ?"
    ours, theirs = (dict(con.execute(sql, [db]).fetchall()) for db in (_source(con), COPY_ALIAS))
    return ours.keys() == theirs.keys() and all((theirs[k] or 0) >= (v or 0) for k, v in ours.items())


def _source(con: duckdb.DuckDBPyConnection) -> str:
    return str(con.execute("SELECT current_database()").fetchone()[0])  # type: ignore[index]


def _detach(con: duckdb.DuckDBPyConnection) -> None:
    with suppress(duckdb.Error):
        con.execute(f"DETACH DATABASE IF EXISTS {COPY_ALIAS}")


def _flush(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _flush_folder(folder: Path) -> None:
    """The rename on disk (where the system lets a folder be flushed)."""
    with suppress(OSError):
        _flush(folder)


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")
