"""What DuckDB's errors say of the index file: invalidated (every later statement fails), or
damaged (a block that cannot be read), as against errors that say nothing of the file (a full
disk, a lock held elsewhere, a file this user may not write), which must leave it where it is.
`Index.replaced_when_broken` moves a file aside for the first two."""

from __future__ import annotations

from pathlib import Path

import duckdb

from vaultmind.errors import by_ctrl_c, chain

# DuckDB's errors for every statement after a fatal one, and for a checkpoint that failed (whole
# sentences: DuckDB quotes values in other errors, "Could not convert string '…'", and a note's
# words must not read as these)
INVALIDATED = (
    "database has been invalidated because of a previous fatal error",
    "has been invalidated because checkpointing failed",
    "The database has been invalidated.",
)
# DuckDB's errors for a damaged file, met only when a statement reads the damaged block: a block
# whose checksum does not match (bit rot, a bad copy) or whose contents cannot be decoded, and
# one past the end of the file (one cut short by a half-done copy or a full disk; said with the
# file's name, see `damaged`). Only of these kinds: DuckDB's others quote values
# ("Could not convert string '…'"), a note's words or a question among them.
BAD_BLOCK = "Corrupt database file"
SHORT_READ = "Could not read enough bytes from file"
DAMAGE_ERRORS = (duckdb.IOException, duckdb.InternalException, duckdb.SerializationException)
HEADER_BYTES = 3 * 4096  # DuckDB's file header and its two database headers, before the first block


def invalidated(exc: BaseException) -> bool:
    """Whether `exc` (or what caused it) left DuckDB's database invalidated: every later
    statement fails until the file is opened anew."""
    return any(
        isinstance(e, duckdb.FatalException) or (isinstance(e, duckdb.Error) and any(said in str(e) for said in INVALIDATED))
        for e in chain(exc)
    )


def interrupted(exc: BaseException) -> bool:
    """Whether `exc` is an interruption rather than a fault of the file: Ctrl-C (in any of its
    guises, `by_ctrl_c`), or a statement DuckDB was asked to stop."""
    return by_ctrl_c(exc) or any(isinstance(e, duckdb.InterruptException) for e in chain(exc))


def damaged(exc: BaseException, path: Path) -> bool:
    """Whether `exc` (or what caused it) is DuckDB meeting a damaged block of the index file at
    `path`: a checksum that does not match, or a read past the end of that file (a read short
    of another file's end, a spilled temporary one, says nothing of the index)."""
    return any(
        isinstance(e, DAMAGE_ERRORS) and (BAD_BLOCK in str(e) or f'{SHORT_READ} "{path}"' in str(e))
        for e in chain(exc)
    )


class TruncatedIndex(Exception):
    """The index file is shorter than its blocks in use need (`check_length`)."""


def check_length(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Raise `TruncatedIndex` when the file at `path` is too short to hold its blocks in use.
    A file cut short (a half-done copy, a disk that filled while it was copied) opens, as
    DuckDB reads only its headers and metadata then; its first read of a missing block fails,
    whatever the command. Checked on open, where such a file is moved aside before any command
    meets it. Only for a file opened without a WAL: replaying one may add blocks not yet written.

    A file as long as all the blocks its header counts (`total_blocks`) is whole, and needs no
    more (the case of almost every open). A shorter one may be sound: DuckDB cuts free blocks
    off the end of its file yet still counts them, so an index that held many rows and then
    few is shorter than that count. Only then is the last block in use looked up (0.15 s at
    50k notes), and the file taken for one cut short when it ends before that block does."""
    row = con.execute(
        "SELECT block_size, total_blocks FROM pragma_database_size() WHERE database_name = current_database()"
    ).fetchone()
    if row is None:
        return
    block_size, size = int(row[0]), path.stat().st_size
    if size >= HEADER_BYTES + block_size * int(row[1]):
        return
    try:
        needed = HEADER_BYTES + block_size * (last_block_in_use(con) + 1)
    except duckdb.Error as exc:  # listing the segments read a block past the end
        if not damaged(exc, path):
            raise
        raise TruncatedIndex(f"the file is {size:,} bytes, a block it lists lies past its end: it was cut short") from exc
    if size < needed:
        raise TruncatedIndex(f"the file is {size:,} bytes, its blocks in use need {needed:,}: it was cut short")


def last_block_in_use(con: duckdb.DuckDBPyConnection) -> int:
    """The highest id of a block the database reads: of its metadata, or of a table's column
    segments (a segment's further blocks too); -1 when none. The blocks of lookup indexes are
    not listed by DuckDB: a file cut within those alone is met when a statement reads them."""
    tables = [name for (name,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT temporary").fetchall()]
    parts = ["SELECT max(block_id) FROM pragma_metadata_info()"] + [
        "SELECT greatest(max(block_id), max(list_max(additional_block_ids))) "
        f"FROM pragma_storage_info('\"{name.replace(chr(34), chr(34) * 2)}\"')"
        for name in tables
    ]
    found = [int(b) for (b,) in con.execute(" UNION ALL ".join(parts)).fetchall() if b is not None]
    return max(found, default=-1)
