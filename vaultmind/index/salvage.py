"""Take back from an index file moved to quarantine the rows that are costly to compute again.

What a rebuild derives from the notes is quick to derive again; what its caches hold is not:
every vector (hours through Ollama on a large vault), every NER result, every answer of the
admission's LLM, each kept by content hash and model (`CACHES`). After a quarantine these are read out of
the moved file and copied into the fresh index before anything is rebuilt, so the rebuild finds
them cached.

The moved file is opened read-only by a DuckDB instance of its own (an error there, even one
that invalidates its database, cannot touch the fresh index) and never written. Each table is
read in chunks of rows (`CHUNK_ROWS`): a damaged block fails only the chunks whose rows it
holds, the others are copied. Nothing is trusted that fails a check: the file must have been
written by this version (its migrations this version's, no more and no fewer: a newer one may
give the same columns another meaning, an older one's rows may be of a meaning a later
migration changed or dropped; a file whose migrations do not read gives nothing), the columns
must be those this version writes, each row's keys well formed and its value sound (a vector of as many
elements as its dimension says, all finite, and of its model's dimension). The whole salvage
stops at `SALVAGE_S`, keeping what it copied: a bad file never holds the rebuild up for long. A
file that cannot be opened at all gives nothing.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from vaultmind.index.allocator import prompt_purge, release_freed_memory
from vaultmind.index.arrow import insert_arrow
from vaultmind.index.connection import session
from vaultmind.index.damage import invalidated
from vaultmind.index.meta import put_meta
from vaultmind.index.pool import limit_setting
from vaultmind.index.schema import migrations
from vaultmind.index.vector_codec import matrix_of

log = logging.getLogger(__name__)

# the longest a salvage holds up the rebuild; what it copied by then is kept. 430k vectors and
# as many NER results (a 50k-note vault) took 5–8 s at load 7, 36–40 s at load 15–18 on 2 cores
SALVAGE_S = 120.0
# DuckDB reads a column a vector of 2,048 rows at a time, whatever a filter on rowid asks: a
# chunk of as many, aligned to them, is the least a damaged block can cost
CHUNK_ROWS = 2048
READER_MEMORY = "16MB"  # the reader's buffer pool: it streams chunks, nothing is read twice
# the fresh index's pool while chunks are copied in (it writes each row group as it fills): at
# 430k vectors and as many NER results, a peak of 258–288 MB resident against ~600 MB under its
# usual pool, for no more time
COPY_MEMORY = "32MB"
MAX_DIM = 65_536
BARE_PREFIX = ".salvage-"  # a hard link to a moved file, without its WAL (`_Reader.open`)

_HASH = "regexp_full_match(content_hash, '[0-9a-f]{64}')"  # sha256 of a text, in hex
_MODEL = "length(model) BETWEEN 1 AND 512"


def _sound_vectors(chunk: pa.Table) -> pa.Table:
    """The rows of `chunk` whose vector decodes to as many finite elements as its dimension
    says, not all zero (a checksum guards a block, not what was written into it)."""
    dims = chunk["dim"].to_numpy()
    keep = np.zeros(chunk.num_rows, dtype=bool)
    for width in np.unique(dims):
        rows = np.flatnonzero(dims == width)
        part = chunk.take(pa.array(rows))
        matrix, decoded = matrix_of(part["vec"], part["dim"], int(width))
        keep[rows[decoded]] = np.isfinite(matrix).all(axis=1) & (np.abs(matrix).max(axis=1, initial=0.0) > 0)
    return chunk.filter(pa.array(keep))


@dataclass(frozen=True)
class Cache:
    """A table of rows computed from a text's content, which a rebuild keeps."""

    table: str
    columns: tuple[tuple[str, str], ...]  # (name, DuckDB type), as this version writes them
    key: tuple[str, ...]  # the columns one row is kept by (one row a key)
    sound: str  # SQL a row must meet to be taken
    nouns: tuple[str, str]  # what the notice calls one of its rows, and more
    check: Callable[[pa.Table], pa.Table] | None = None  # the rows of a chunk to take, beyond `sound`


CACHES = (
    Cache(
        "embeddings",
        (("content_hash", "VARCHAR"), ("model", "VARCHAR"), ("dim", "INTEGER"), ("vec", "BLOB")),
        ("content_hash", "model"),
        f"{_HASH} AND {_MODEL} AND dim BETWEEN 1 AND {MAX_DIM} AND octet_length(vec) IN (2 * dim, 4 * dim)",
        ("embedding", "embeddings"),
        _sound_vectors,
    ),
    Cache(
        "ner_cache",
        (("content_hash", "VARCHAR"), ("model", "VARCHAR"), ("spans", "VARCHAR")),
        ("content_hash", "model"),
        f"{_HASH} AND {_MODEL} AND json_valid(spans) AND json_type(spans) = 'ARRAY'",
        ("NER result", "NER results"),
    ),
    Cache(
        "llm_cache",
        (
            ("task", "VARCHAR"), ("content_hash", "VARCHAR"), ("model", "VARCHAR"),
            ("prompt_hash", "VARCHAR"), ("answer", "VARCHAR"), ("created_ms", "BIGINT"),
        ),
        ("task", "content_hash", "model", "prompt_hash"),
        f"{_HASH} AND {_MODEL} AND length(task) BETWEEN 1 AND 64 AND regexp_full_match(prompt_hash, '[0-9a-f]{{12}}') "
        "AND created_ms >= 0",
        ("LLM answer", "LLM answers"),
    ),
)
# `meta` keys that describe the vectors kept (the window each model's texts were read in), kept
# with them: without it, the next sync would drop the vectors of long texts as read otherwise
VECTOR_META = "embed_window:%"


@dataclass(frozen=True)
class Salvaged:
    """Rows copied from the moved file, by table."""

    rows: dict[str, int]

    def said(self) -> str | None:
        """"kept 48,210 embeddings and 310 LLM answers from it" (None: nothing was kept)."""
        parts = [f"{n:,} {c.nouns[n != 1]}" for c in CACHES if (n := self.rows.get(c.table, 0))]
        if not parts:
            return None
        listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        return f"kept {listed} from it"


def salvage(source: Path, con: duckdb.DuckDBPyConnection, budget_s: float = SALVAGE_S) -> Salvaged:
    """Copy what reads of the caches of the index file at `source` (moved aside, never written)
    into the fresh index `con`, within `budget_s`."""
    deadline = time.monotonic() + budget_s
    rows: dict[str, int] = {}
    try:
        with prompt_purge(), _Reader.open(source) as reader, reader.interrupted_at(deadline):
            for cache in CACHES if _written_by_this_version(reader) else ():
                if time.monotonic() >= deadline:
                    log.warning("salvage of %s stopped after %.0f s", source, budget_s)
                    break
                rows[cache.table] = _copy_table(reader, con, cache, deadline)
            if rows.get("embeddings"):
                _copy_vector_meta(reader, con)
    except (duckdb.Error, OSError) as exc:
        log.warning("the salvage of %s ended early: %s", source, _first_line(exc))
    release_freed_memory()
    salvaged = Salvaged(rows)
    if salvaged.said():
        log.warning("%s (%s)", salvaged.said(), source)
    return salvaged


class _Reader:
    """A read-only connection to the moved file, in a DuckDB instance of its own; opened again
    when an error invalidated its database (the next chunk may read sound blocks)."""

    def __init__(self, path: Path, cleanup: Callable[[], None]):
        self.path = path
        self.cleanup = cleanup
        self.con = _connect_read_only(path)

    @classmethod
    @contextmanager
    def open(cls, source: Path) -> Iterator[_Reader]:
        """A reader of `source`; when its WAL cannot be replayed, of the file without it (its
        last checkpoint), through a hard link beside it that has no WAL (a copy where the
        filesystem has no hard links; the file and its WAL are kept as they are)."""
        for stale in source.parent.glob(f"{BARE_PREFIX}*"):  # left by a process that ended mid-salvage
            stale.unlink(missing_ok=True)
        try:
            reader = cls(source, lambda: None)
        except duckdb.Error:
            if not Path(f"{source}.wal").exists():
                raise
            bare = source.with_name(f"{BARE_PREFIX}{source.name}")
            try:
                _link_or_copy(source, bare)
                reader = cls(bare, lambda: bare.unlink(missing_ok=True))
            except BaseException:
                bare.unlink(missing_ok=True)
                raise
        try:
            yield reader
        finally:
            with suppress(duckdb.Error):
                reader.con.close()
            reader.cleanup()

    def reopen(self) -> None:
        """A new connection in place of one whose database an error invalidated; when none
        can be made, the closed one stays, and every later read fails at once."""
        with suppress(duckdb.Error):
            self.con.close()
        with suppress(duckdb.Error):
            self.con = _connect_read_only(self.path)

    @contextmanager
    def interrupted_at(self, deadline: float) -> Iterator[None]:
        """A statement still running at `deadline` is interrupted (a chunk that reads slowly).
        Only the reader's connection, whichever it is by then: the fresh index's is never
        touched, and one closed (`reopen` could make none) is left be."""
        timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._interrupt)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
            timer.join()  # no thread left behind the salvage

    def _interrupt(self) -> None:
        with suppress(duckdb.Error):
            self.con.interrupt()


def _link_or_copy(source: Path, target: Path) -> None:
    """`target` names the file at `source`: a hard link (nothing copied), or where the
    filesystem has none (FAT, exFAT, some network shares) a copy."""
    try:
        os.link(source, target)
    except OSError:
        target.unlink(missing_ok=True)
        shutil.copyfile(source, target)


def _written_by_this_version(reader: _Reader) -> bool:
    """Whether the moved file's migrations are exactly this version's (see the module's
    docstring); False, said in the log, when they are not or do not read."""
    try:
        applied = [str(r[0]) for r in reader.con.execute("SELECT name FROM migrations ORDER BY seq").fetchall()]
    except duckdb.Error as exc:
        log.warning("nothing salvaged of %s: its migrations could not be read (%s)", reader.path, _first_line(exc))
        return False
    if applied != [name for name, _ in migrations()]:
        log.warning("nothing salvaged of %s: it was written by another version of vaultmind", reader.path)
        return False
    return True


def _connect_read_only(path: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(path), read_only=True)
    session(con)
    con.execute(f"SET memory_limit = '{READER_MEMORY}'")
    con.execute("SET threads = 1")
    return con


def _copy_table(reader: _Reader, con: duckdb.DuckDBPyConnection, cache: Cache, deadline: float) -> int:
    """Copy the sound rows of `cache`'s table that read, chunk by chunk, in one transaction of
    the fresh index; how many it keeps (0 when its columns are not this version's)."""
    try:
        last = _last_rowid(reader, cache)
    except duckdb.Error as exc:
        log.warning("%s could not be read back: %s", cache.table, _first_line(exc))
        if invalidated(exc):
            reader.reopen()
        return 0
    if last is None:
        return 0
    con.execute("BEGIN TRANSACTION")
    try:
        lost = 0
        with _copy_pool(con):
            for start in range(0, last + 1, CHUNK_ROWS):
                if time.monotonic() >= deadline:
                    break
                chunk = _read_chunk(reader, cache, start)
                if chunk is None:
                    lost += 1
                    continue
                insert_arrow(con, cache.table, cache.check(chunk) if cache.check else chunk)
        kept = _keep_one_a_key(con, cache)
        con.execute("COMMIT")
    except duckdb.Error as exc:  # the fresh index could not take them: the table stays empty
        with suppress(duckdb.Error):
            con.execute("ROLLBACK")
        log.warning("could not copy %s into the fresh index: %s", cache.table, _first_line(exc))
        return 0
    except BaseException:
        with suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise
    if lost:
        log.warning("%s: %d chunk(s) of up to %d rows could not be read back", cache.table, lost, CHUNK_ROWS)
    return kept


@contextmanager
def _copy_pool(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """The fresh index under `COPY_MEMORY`, each row group written as it fills, for a while;
    then its pool as it was (the rows kept are sorted out and committed under it). Set through
    a connection of its own: a limit below what is pinned fails, and a failed statement on
    `con` would abort its transaction."""
    with con.cursor() as other:
        pool, groups = other.execute(
            "SELECT current_setting('memory_limit'), current_setting('write_buffer_row_group_count')"
        ).fetchone() or ("", "")
        with suppress(duckdb.Error):  # a pool that cannot be lowered stays as it is
            other.execute(f"SET memory_limit = '{COPY_MEMORY}'")
        other.execute("SET write_buffer_row_group_count = 1")
        try:
            yield
        finally:
            other.execute(f"SET memory_limit = '{limit_setting(str(pool))}'")
            other.execute(f"SET write_buffer_row_group_count = {int(groups)}")


def _last_rowid(reader: _Reader, cache: Cache) -> int | None:
    """The highest rowid of the table (rowids are not stored: no data block is read), or None
    when it is missing, empty, or not of the columns this version writes."""
    found = reader.con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = current_database() "
        "AND schema_name = 'main' AND table_name = ? ORDER BY column_index",
        [cache.table],
    ).fetchall()
    if [(str(n), str(t)) for n, t in found] != list(cache.columns):
        return None
    row = reader.con.execute(f"SELECT max(rowid) FROM {cache.table}").fetchone()
    return None if row is None or row[0] is None else int(row[0])


def _read_chunk(reader: _Reader, cache: Cache, start: int) -> pa.Table | None:
    """The sound rows of one chunk of rowids; None when a block they are in cannot be read (or
    the read was interrupted at the deadline)."""
    columns = ", ".join(name for name, _ in cache.columns)
    try:
        return reader.con.execute(
            f"SELECT {columns} FROM {cache.table} WHERE rowid >= ? AND rowid < ? AND {cache.sound} ORDER BY rowid",
            [start, start + CHUNK_ROWS],
        ).to_arrow_table()
    except duckdb.Error as exc:
        if invalidated(exc):
            reader.reopen()
        return None


def _keep_one_a_key(con: duckdb.DuckDBPyConnection, cache: Cache) -> int:
    """Leave one row a key (the first copied), and of vectors only those of their model's
    dimension (most of its vectors'); the rows kept."""
    key = ", ".join(cache.key)
    table = cache.table
    if cache.table == "embeddings":
        con.execute(
            """DELETE FROM embeddings WHERE (model, dim) NOT IN (
                   SELECT DISTINCT ON (model) model, dim FROM (
                       SELECT model, dim, count(*) AS n FROM embeddings GROUP BY model, dim)
                   ORDER BY model, n DESC, dim)"""
        )
    # told by 64-bit hashes of the keys (at 430k vectors the set of whole keys took ~70 MB);
    # two keys of one hash only make the exact pass below run for nothing
    total, hashed = con.execute(f"SELECT count(*), count(DISTINCT hash({key})) FROM {table}").fetchone() or (0, 0)
    if total == hashed:
        return int(total)
    con.execute(f"DELETE FROM {table} WHERE rowid NOT IN (SELECT min(rowid) FROM {table} GROUP BY {key})")
    return int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # type: ignore[index]


def _copy_vector_meta(reader: _Reader, con: duckdb.DuckDBPyConnection) -> None:
    """Copy the `meta` rows that describe the vectors kept (`VECTOR_META`), when they read."""
    try:
        rows = reader.con.execute("SELECT key, value FROM meta WHERE key LIKE ?", [VECTOR_META]).fetchall()
    except duckdb.Error:
        return
    for key, value in rows:
        if isinstance(value, str) and value.isdigit():
            put_meta(con, key, value)


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
