"""A save's lookup of which of its texts have a vector (`sync_embed.embed_missing`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from vaultmind.config import load_config
from vaultmind.embed.providers import create_embedder
from vaultmind.index.store import Index
from vaultmind.sync_embed import BACKLOG_MEMORY_LIMIT, embed_missing

STORED = 700_000  # vectors of other texts: their hash column is more than the lookup's pool


def _cached_table_blocks(index: Index) -> int:
    return int(index.scalar("SELECT memory_usage_bytes FROM duckdb_memory() WHERE tag = 'BASE_TABLE'"))


@pytest.mark.slow
def test_a_save_finds_every_stored_vector_and_only_those_without_caching_the_hash_column(
    tmp_path: Path,
) -> None:
    """The texts with a vector for the model are not embedded again; a text with a vector of
    another model only, or none, is. The lookup scans the whole hash column (~14 MB of blocks
    here) under a small pool: it leaves next to none of it cached (before, all of it stayed
    until the save dropped it)."""
    vault = tmp_path / "vault"
    vault.mkdir()
    embedder = create_embedder(load_config(vault, embed_provider="static"))
    assert embedder is not None
    model = embedder.model_id
    index = Index.open(tmp_path / "index.duckdb")
    try:
        with index.transaction() as con:  # of the model's dimension (blobs too short to read: never read here)
            con.execute(
                """INSERT INTO embeddings SELECT sha256('text ' || i), ?, ?, '\\x00\\x00\\x00\\x00'::BLOB
                   FROM range(?) t(i)""",
                [model, embedder.dim, STORED],
            )
            con.execute(
                "INSERT INTO embeddings VALUES (sha256('elsewhere'), 'another-model', 2, '\\x00\\x00\\x00\\x00'::BLOB)"
            )
        index.checkpoint()
        stored = {
            str(h): f"text {i}"
            for i, h in index.query("SELECT i, sha256('text ' || i) FROM range(0, ?, 99_991) t(i)", [STORED])
        }
        others = {
            str(index.scalar("SELECT sha256(?)", [t])): t
            for t in ("elsewhere", "a new text", "another new one")
        }
        index.drop_cached_blocks()
        cached = _cached_table_blocks(index)
        into: dict[str, npt.NDArray[np.float32]] = {}
        embedded = embed_missing(index, embedder, 16, None, stored | others, into=into)
        assert embedded == 3 and set(into) == set(others)
        assert index.scalar("SELECT count(*) FROM embeddings WHERE model = ?", [model]) == STORED + 3
        assert _cached_table_blocks(index) - cached < 4 * 2**20  # the column's blocks: ~14 MB
    finally:
        index.close()


def test_a_whole_vault_sync_counts_the_texts_without_a_vector_under_a_small_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every whole-vault sync (a daemon's reconcile) first counts the texts without a vector:
    an anti join holding every stored vector's hash. It runs on one DuckDB thread under a small
    pool, so the join spills instead of adding to what a serving daemon holds (at 50k notes,
    nothing missing: +68 MiB before, +19 MiB under the pool). The real `small_pool_read` runs
    it; the test only records the pool and the threads the count ran under."""
    vault = tmp_path / "vault"
    vault.mkdir()
    embedder = create_embedder(load_config(vault, embed_provider="static"))
    assert embedder is not None
    index = Index.open(tmp_path / "index.duckdb")
    try:
        with index.transaction() as con:
            con.execute(
                """INSERT INTO leaves (id, note_path, seq, kind, text, content_hash, token_count, term_count,
                                       anchor, heading_path)
                   SELECT 'leaf-' || i, 'note.md', i, 'paragraph', 'text ' || i, sha256('text ' || i),
                          2, 2, '', []::VARCHAR[]
                   FROM range(3) t(i)"""
            )
        seen: list[tuple[str, Any]] = []
        small_pool_read = index.small_pool_read

        def recorded(read: Callable[[], Any], limit: str) -> Any:
            def under_the_pool() -> Any:
                seen.append((limit, index.con.execute("SELECT current_setting('threads')").fetchone()))
                return read()

            return small_pool_read(under_the_pool, limit)

        monkeypatch.setattr(index, "small_pool_read", recorded)
        assert embed_missing(index, embedder, 64, None) == 3
        assert seen == [(BACKLOG_MEMORY_LIMIT, (1,))]
        with index.bulk():  # a load's own pass: under the pool of its transaction
            assert embed_missing(index, embedder, 64, None) == 0
        assert len(seen) == 1
    finally:
        index.close()
