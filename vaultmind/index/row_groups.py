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
rows get other row ids; their values stay as they were."""

from __future__ import annotations

import logging

import duckdb

log = logging.getLogger(__name__)

ROW_GROUP_ROWS = 122_880  # DuckDB's row group size (its default, which the index keeps)
# rows moved per statement: a larger INSERT … SELECT is written as row groups of its own (the
# moved rows would stay a part-filled group), a smaller one is appended where the next rows go
MOVE_ROWS = 16_384


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
    sizes = group_sizes(con, table)
    full = max((i + 1 for i, size in enumerate(sizes) if size >= ROW_GROUP_ROWS), default=0)
    start, end = sum(sizes[:full]), sum(sizes)
    tail = end - start
    if not tail or coming < min(tail, ROW_GROUP_ROWS - tail):
        return 0
    for at in range(start, end, MOVE_ROWS):
        span = [at, min(end, at + MOVE_ROWS)]
        con.execute(f"INSERT INTO {table} SELECT * FROM {table} WHERE rowid >= ? AND rowid < ?", span)
    con.execute(f"DELETE FROM {table} WHERE rowid >= ? AND rowid < ?", [start, end])
    log.debug("%s: %d rows after its last full row group moved ahead of %d new ones", table, tail, coming)
    return tail
