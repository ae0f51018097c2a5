"""A table's row groups kept full before a large append into it (`refill_last_group`).

DuckDB stores a table in row groups of `ROW_GROUP_ROWS` rows; an append never adds to a row
group already in the file, it starts new ones after it. At each checkpoint DuckDB's vacuum
merges adjacent row groups whose rows fit in fewer groups, rewriting them in memory first.
A part-filled row group in the file followed by a small one (a save's few vectors) and then
a large append is merged with the small one: at 50k notes the `embeddings` table's groups were
3 × 122,880, 59,947 and 30 rows, and the checkpoint after 86,580 new vectors rewrote the
59,977 rows of the last two, the peak of the whole reindex (see
docs/benchmarks.md, *A reindex of an upgraded index*).

Moving the rows after the table's last full group to its end, in the transaction of the
append and ahead of the new rows, leaves the emptied groups to be dropped by the checkpoint
(which drops a group without live rows without rewriting anything) and writes the moved rows
with the new ones into full groups. DuckDB alone, that table shape and 86,580 new vectors in
one transaction: the high-water mark 172 → 701 MiB before, 172 → 350 MiB with the move (the
move itself +84 MiB, its blocks then dropped; nothing rewritten at the checkpoint). The moved
rows get other row ids; their values stay as they were.

Outside a load's one transaction (a large sync of edits, whose vectors are committed batch by
batch) the move is done the same way, a transaction per `MOVE_ROWS` (`fill_last_group`), with
no checkpoint until the vectors are appended."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import duckdb

from vaultmind.index.connection import ROW_GROUP_ROWS

if TYPE_CHECKING:
    from vaultmind.index.store import Index

log = logging.getLogger(__name__)

MOVE_ROWS = ROW_GROUP_ROWS // 2  # rows moved per statement (`move_rows`)


def group_sizes(con: duckdb.DuckDBPyConnection, table: str) -> list[int]:
    """Rows of each of the table's row groups, in order (deleted rows not yet checkpointed
    away included)."""
    rows = con.execute(
        """SELECT row_group_id, sum(count) FROM pragma_storage_info(?)
           WHERE column_id = 0 AND column_path = '[0]' GROUP BY row_group_id ORDER BY row_group_id""",
        [table],
    ).fetchall()
    return [int(count) for _, count in rows]


def refill_last_group(con: duckdb.DuckDBPyConnection, table: str, coming: int) -> int:
    """Before `coming` rows are appended to `table` in the transaction of `con`: move the rows
    after its last full row group to its end, when the append is at least as large as they
    are or as what their group lacks to be full (a smaller one leaves them where they are: the
    vacuum then merges nothing large, and the move would cost more than it saves). Returns
    how many rows were moved."""
    start, end = rows_to_move(con, table, coming)
    for at in range(start, end, MOVE_ROWS):
        move_rows(con, table, at, min(end, at + MOVE_ROWS))
    return end - start


def fill_last_group(index: Index, table: str, coming: int) -> int:
    """`refill_last_group` for an index: in a bulk load's transaction as there; outside one,
    each `MOVE_ROWS` moved in a transaction of their own (a copy and its original's delete
    commit together: a failure between two leaves every row once), so that no commit appends
    as many rows as make `Index.transaction` checkpoint. The moved rows then stay in memory
    beside the appended ones until the caller's checkpoint, which must come after the append
    (`Index.deferred_checkpoints`): a checkpoint between them would write the moved rows as
    the part-filled group they were. Returns how many rows were moved."""
    with index.lock:
        start, end = rows_to_move(index.con, table, coming)
    for at in range(start, end, MOVE_ROWS):
        with index.transaction() as con:
            move_rows(con, table, at, min(end, at + MOVE_ROWS))
    return end - start


def rows_to_move(con: duckdb.DuckDBPyConnection, table: str, coming: int) -> tuple[int, int]:
    """The row ids [start, end) after `table`'s last full row group, when `coming` new rows
    are worth moving them for (see `refill_last_group`); an empty range when not."""
    sizes = group_sizes(con, table)
    full = max((i + 1 for i, size in enumerate(sizes) if size >= ROW_GROUP_ROWS), default=0)
    start, end = sum(sizes[:full]), sum(sizes)
    tail = end - start
    if not tail or coming < min(tail, ROW_GROUP_ROWS - tail):
        return start, start
    log.debug("%s: %d rows after its last full row group moved ahead of %d new ones", table, tail, coming)
    return start, end


def move_rows(con: duckdb.DuckDBPyConnection, table: str, start: int, end: int) -> None:
    """Append a copy of the rows [start, end) of `table` and delete them where they were. A
    statement moves at most `MOVE_ROWS`: a larger INSERT … SELECT is written as row groups
    of its own (the moved rows would stay a part-filled group), a smaller one is appended
    where the next rows go."""
    con.execute(f"INSERT INTO {table} SELECT * FROM {table} WHERE rowid >= ? AND rowid < ?", [start, end])
    con.execute(f"DELETE FROM {table} WHERE rowid >= ? AND rowid < ?", [start, end])
