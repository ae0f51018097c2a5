"""Damage a real DuckDB index file as a disk or a copy would: blocks garbled (bit rot, a bad
copy) or the file cut short (a half-done copy, a disk that filled meanwhile)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from vaultmind.index.damage import HEADER_BYTES


def blocks_of(path: Path, table: str, column: str | None = None) -> list[int]:
    """The blocks that hold rows of `table` (of its `column` alone, when given), in order."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute(
            "SELECT block_id FROM pragma_storage_info(?) WHERE block_id >= 0 AND (? IS NULL OR column_name = ?)",
            [table, column, column],
        ).fetchall()
    finally:
        con.close()
    return sorted({int(b) for (b,) in rows})


def garble(path: Path, blocks: list[int]) -> None:
    """Overwrite what follows the checksum of each of `blocks`: the file opens, a read of what
    they hold fails."""
    con = duckdb.connect(str(path), read_only=True)
    block_size = int(con.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0])  # type: ignore[index]
    con.close()
    with path.open("r+b") as file:
        for block in blocks:
            file.seek(HEADER_BYTES + block * block_size + 8)
            file.write(b"\xa5" * 4096)


def garble_blocks_of(path: Path, table: str) -> None:
    """Garble every block that holds rows of `table`."""
    blocks = blocks_of(path, table)
    assert blocks, f"{table} has rows in the file"
    garble(path, blocks)


def cut_after_metadata(path: Path) -> int:
    """Cut the file short after its last metadata block: it opens (DuckDB reads only the
    headers and metadata then), and its data blocks are gone. The length it was cut to."""
    con = duckdb.connect(str(path), read_only=True)
    last_metadata = max(
        int(row[0]) for row in con.execute("SELECT block_id FROM pragma_metadata_info()").fetchall()
    )
    block_size, blocks = con.execute("SELECT block_size, total_blocks FROM pragma_database_size()").fetchone()  # type: ignore[misc]
    con.close()
    assert last_metadata + 1 < blocks, "data blocks follow the metadata"
    length = HEADER_BYTES + (last_metadata + 1) * int(block_size)
    with path.open("r+b") as file:
        file.truncate(length)
    return length
