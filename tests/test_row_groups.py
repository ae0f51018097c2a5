"""A table's row groups kept full before a large append (`index.row_groups`), on real DuckDB
files: the shapes are DuckDB's own, read back from `pragma_storage_info`."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import duckdb
import numpy as np
import numpy.typing as npt
import pytest

from vaultmind.config import load_config
from vaultmind.embed.base import Embedder
from vaultmind.embed.providers import create_embedder
from vaultmind.errors import EmbedError
from vaultmind.index.row_groups import ROW_GROUP_ROWS, group_sizes, refill_last_group
from vaultmind.index.store import Index
from vaultmind.memory import Memory
from vaultmind.sync_embed import embed_missing

RG = ROW_GROUP_ROWS
# the 50k case's shape, at DuckDB's default groups of 122,880 rows, scaled to the index's
PART = 59_947 * RG // 122_880  # a part-filled group
COMING = 86_580 * RG // 122_880  # the new vectors


def _append(con: duckdb.DuckDBPyConnection, start: int, count: int, model: str = "another-model") -> None:
    """`count` vectors of texts numbered from `start` (blobs of the row's number: each tells
    its row)."""
    con.execute(
        """INSERT INTO embeddings SELECT sha256('text ' || i), ?, 2, encode(i::VARCHAR)
           FROM range(?, ?) t(i)""",
        [model, start, start + count],
    )


def _stored(index: Index) -> set[tuple[str, str, int, bytes]]:
    return {(str(h), str(m), int(d), bytes(v)) for h, m, d, v in index.query("SELECT * FROM embeddings")}


def _new_leaves(index: Index, count: int) -> None:
    """`count` leaves of texts without a vector ("new text 0", …)."""
    with index.transaction() as con:
        con.execute(
            """INSERT INTO leaves (id, note_path, seq, kind, text, content_hash, token_count, term_count,
                                   anchor, heading_path)
               SELECT 'leaf-' || i, 'note.md', i, 'paragraph', 'new text ' || i, sha256('new text ' || i),
                      3, 3, '', []::VARCHAR[]
               FROM range(?) t(i)""",
            [count],
        )


def _static_embedder(tmp_path: Path) -> Embedder:
    vault = tmp_path / "vault"
    vault.mkdir()
    embedder = create_embedder(load_config(vault, embed_provider="static"))
    assert embedder is not None
    return embedder


def _index_with_groups(path: Path, *sizes: int) -> Index:
    """An index whose `embeddings` table has row groups of `sizes` rows, each appended and
    checkpointed on its own (as a load and later saves leave them)."""
    index = Index.open(path)
    start = 0
    for size in sizes:
        with index.transaction() as con:
            _append(con, start, size)
        index.checkpoint()
        start += size
    assert group_sizes(index.con, "embeddings") == list(sizes)
    return index


@pytest.mark.slow
def test_a_large_append_after_a_part_filled_group_lands_in_full_groups_and_loses_nothing(
    tmp_path: Path,
) -> None:
    """The shape of the 50k case (a part-filled group, a save's few rows, then many new
    vectors): the rows after the last full group are moved ahead of the new ones, so the
    checkpoint finds full groups and one last part-filled one, and merges nothing. Every
    vector is still there, under the same content hash, with the same bytes."""
    index = _index_with_groups(tmp_path / "index.duckdb", RG, PART, 30)
    try:
        before = _stored(index)
        with index.transaction() as con:
            assert refill_last_group(con, "embeddings", COMING) == PART + 30
            _append(con, RG + PART + 30, COMING)
        index.checkpoint()
        assert group_sizes(index.con, "embeddings") == [RG, RG, PART + 30 + COMING - RG]
        after = _stored(index)
        assert before <= after and len(after) == len(before) + COMING
        assert index.scalar("SELECT count(*) FROM embeddings") == RG + PART + 30 + COMING
    finally:
        index.close()


@pytest.mark.slow
def test_an_append_smaller_than_the_last_group_and_its_gap_moves_nothing(tmp_path: Path) -> None:
    """A few new vectors (a save's) after a half-filled group: nothing is moved, and the
    checkpoint does not merge that group with them either."""
    index = _index_with_groups(tmp_path / "index.duckdb", RG, PART)
    try:
        with index.transaction() as con:
            assert refill_last_group(con, "embeddings", 256) == 0
            _append(con, RG + PART, 256)
        index.checkpoint()
        assert group_sizes(index.con, "embeddings") == [RG, PART, 256]
        with index.transaction() as con:  # a table of full groups only: nothing to move
            assert refill_last_group(con, "embeddings", 0) == 0
    finally:
        index.close()


@pytest.mark.slow
def test_the_backlog_of_a_whole_vault_load_fills_the_last_group_of_the_embeddings(tmp_path: Path) -> None:
    """The vectors a whole-vault load leaves to its own pass (`embed_missing` in the load's
    transaction) are appended after the rows of the table's part-filled last group, moved
    ahead of them: 100 texts fill it, the rest starts the next group."""
    embedder = _static_embedder(tmp_path)
    index = _index_with_groups(tmp_path / "index.duckdb", RG, RG - 100)
    try:
        before = _stored(index)
        _new_leaves(index, 150)
        with index.bulk():
            assert embed_missing(index, embedder, 64, None) == 150
        assert group_sizes(index.con, "embeddings") == [RG, RG, 50]
        after = _stored(index)
        assert before <= after and len(after) == len(before) + 150
        assert index.scalar("SELECT count(*) FROM embeddings") == len(after), "a moved vector kept twice"
        mine = index.query("SELECT content_hash, dim FROM embeddings WHERE model = ?", [embedder.model_id])
        assert {str(h) for h, _ in mine} == {
            str(h) for (h,) in index.query("SELECT sha256('new text ' || i) FROM range(150) t(i)")
        }
        assert {int(d) for _, d in mine} == {embedder.dim}
    finally:
        index.close()


class _FailingAfter:
    """An embedder answering its first `calls` batches as `inner` does, then failing (a
    provider that went away in the middle of a load)."""

    def __init__(self, inner: Embedder, calls: int) -> None:
        self.inner, self.calls = inner, calls

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if self.calls <= 0:
            raise EmbedError("the provider stopped answering")
        self.calls -= 1
        return np.asarray(self.inner.embed(texts), dtype=np.float32)


@pytest.mark.slow
def test_a_load_whose_vectors_fail_after_the_move_keeps_every_vector_once(tmp_path: Path) -> None:
    """The move is part of the load's transaction: the provider failing after it and a batch
    of new vectors rolls all of it back. The index reopened holds each vector it held, once,
    in the groups it had; the next load moves them again and stores the new ones."""
    embedder = _static_embedder(tmp_path)
    path = tmp_path / "index.duckdb"
    index = _index_with_groups(path, RG, RG - 100)
    try:
        before = _stored(index)
        _new_leaves(index, 150)
        index.checkpoint()
        with pytest.raises(EmbedError), index.bulk():
            embed_missing(index, _FailingAfter(embedder, 1), 64, None)
    finally:
        index.close()
    index = Index.open(path)
    try:
        assert _stored(index) == before
        assert index.scalar("SELECT count(*) FROM embeddings") == len(before)
        assert group_sizes(index.con, "embeddings") == [RG, RG - 100]
        with index.bulk():
            assert embed_missing(index, embedder, 64, None) == 150
        assert index.scalar("SELECT count(*) FROM embeddings") == len(before) + 150
        assert (
            index.scalar("SELECT count(*) FROM (SELECT DISTINCT content_hash, model FROM embeddings)")
            == len(before) + 150
        )
    finally:
        index.close()


@pytest.mark.slow
def test_vectors_embedded_outside_a_whole_vault_load_move_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A save's vectors, or a backlog embedded outside a load's transaction, are committed as
    they come: the rows of the part-filled group stay where they are (the move is for a load's
    one transaction only), and the new ones follow them."""
    embedder = _static_embedder(tmp_path)
    index = _index_with_groups(tmp_path / "index.duckdb", RG, RG - 100)
    try:
        before = _stored(index)
        _new_leaves(index, 150)
        with caplog.at_level(logging.DEBUG, logger="vaultmind.index.row_groups"):
            assert embed_missing(index, embedder, 256, None) == 150
        assert not [r for r in caplog.records if r.name == "vaultmind.index.row_groups"], "rows moved"
        index.checkpoint()
        assert group_sizes(index.con, "embeddings") == [RG, RG - 100, 150]
        assert (
            _stored(index) >= before and index.scalar("SELECT count(*) FROM embeddings") == len(before) + 150
        )
    finally:
        index.close()


def _write_notes(vault: Path, count: int, start: int = 0) -> None:
    """`count` notes of one text each."""
    for i in range(start, start + count):
        text = f"# Note {i}\n\nNote {i} tells of the walk named quillon{i} along the river.\n"
        (vault / f"note {i}.md").write_text(text, encoding="utf-8")


def _memory_with_groups(tmp_path: Path, *sizes: int) -> Memory:
    """A vault's memory (static embeddings) whose `embeddings` table holds another model's
    vectors in row groups of `sizes` rows, and one note indexed."""
    vault = tmp_path / "vault"
    vault.mkdir()
    memory = Memory.open(load_config(vault, embed_provider="static"))
    start = 0
    for size in sizes:
        with memory.index.transaction() as con:
            _append(con, start, size)
        memory.index.checkpoint()
        start += size
    _write_notes(vault, 1)
    memory.sync()
    return memory


@pytest.mark.slow
def test_a_large_sync_of_edits_writes_its_vectors_into_full_groups(tmp_path: Path) -> None:
    """A sync of many changed files that is not a load (a daemon catching up on edits made
    while it was down) writes its vectors after its rows, the rows after the table's last full
    row group moved ahead of them and one checkpoint after the last: every group but the last
    is full, so no checkpoint merges (rewrites in memory) the part-filled one. Before, each
    batch's vectors were committed after it: [RG, RG - 100, 1, …], the part-filled groups left
    for the vacuum to merge. Every vector stays, once."""
    memory = _memory_with_groups(tmp_path, RG, RG - 100)
    try:
        index = memory.index
        assert group_sizes(index.con, "embeddings") == [RG, RG - 100, 1]
        before = _stored(index)
        _write_notes(memory.config.vault, 130, start=1)
        memory.syncer.vectors_after_files = 100
        assert memory.sync().embedded == 130
        index.checkpoint()
        sizes = group_sizes(index.con, "embeddings")
        assert sizes[:2] == [RG, RG] and len(sizes) == 3, sizes
        after = _stored(index)
        assert before <= after and len(after) == len(before) + 130
        assert index.scalar("SELECT count(*) FROM embeddings") == len(after), "a moved vector kept twice"
        hits = memory.search("quillon114")["hits"]
        assert hits and hits[0]["note_path"] == "note 114.md"
    finally:
        memory.close()


@pytest.mark.slow
def test_a_sync_of_fewer_files_embeds_each_batch_as_it_comes(tmp_path: Path) -> None:
    """Below the threshold a sync's vectors are written with each batch, as a save's are:
    nothing is moved."""
    memory = _memory_with_groups(tmp_path, RG, RG - 100)
    try:
        _write_notes(memory.config.vault, 130, start=1)
        assert memory.sync().embedded == 130
        memory.index.checkpoint()
        assert group_sizes(memory.index.con, "embeddings")[:2] == [RG, RG - 100]
    finally:
        memory.close()
