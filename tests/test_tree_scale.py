"""The trees' scale benchmark (`--scale`), and the summaries an incremental sync derives when
one note or many summaries at once change, equal to a cold rebuild's."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.bench.tree_scale import bench_tree_scale, fold
from vaultmind.bench.tree_vault import write_chat_vault
from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.tree.deriver import _FEW_CHILDREN, SummaryRow, load_rows

EXTRA = {"admission.llm": False, "entities.ner_model": "off", "trees.l0_tokens": 100, "trees.fanout": 2}


@pytest.mark.slow
def test_the_scale_benchmark_folds_what_a_seal_would_write(tmp_path: Path) -> None:
    result = bench_tree_scale(tmp_path / "bench", messages=120, passes=1)
    assert result["leaves"] == 120
    assert result["summaries_per_level"]["1"] == 60 and result["summaries"] == sum(
        result["summaries_per_level"].values()
    )
    # digests and links as a seal writes them: nothing stale, before or after a cold reindex
    assert result["stale"] == 0 and result["stale_after_reindex"] == 0
    assert result["seals"] >= 2 and result["seal_s_per_seal"] > 0  # the engine seals on top of it
    for key in (
        "tree_states_s",
        "seal_idle_s",
        "level_buffer_s",
        "sync_one_source_s",
        "resolve_all_s",
        "reindex_s",
    ):
        assert isinstance(result[key], float) and result[key] > 0


def _rows(memory: Memory) -> list[SummaryRow]:
    with memory.index.lock:
        return load_rows(memory.index.con)


@pytest.mark.slow
def test_an_incremental_sync_derives_the_rows_of_a_cold_rebuild(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    write_chat_vault(root, 2 * (_FEW_CHILDREN + 20), 0)
    with Memory.open(load_config(root, embed_provider="none", extra=EXTRA)) as memory:
        memory.sync()
        fold(memory, 2, 2)
        assert not any(row.stale for row in _rows(memory))
        # one message edited: its level-1 summary and every ancestor go stale, nothing else
        source = sorted((root / "sources").rglob("*.md"))[-1]
        text = source.read_text(encoding="utf-8")
        source.write_text(text.rstrip("\n") + " (edited)\n", encoding="utf-8")
        memory.sync_paths([source.relative_to(root).as_posix()])
        stale = [row for row in _rows(memory) if row.stale]
        assert [row.level for row in stale] == list(range(1, len(stale) + 1)) and len(stale) >= 2
        incremental = _rows(memory)
        memory.reindex()
        assert _rows(memory) == incremental
        # more level-1 summaries edited at once than the few looked for in the children lists
        edited = sorted((root / "summaries").rglob("L1/*.md"))
        assert len(edited) > _FEW_CHILDREN
        for path in edited:
            path.write_text(path.read_text(encoding="utf-8") + "A line of mine.\n", encoding="utf-8")
        memory.sync_paths([p.relative_to(root).as_posix() for p in edited])
        incremental = _rows(memory)
        assert sum(row.user_edited for row in incremental) == len(edited)
        memory.reindex()
        assert _rows(memory) == incremental
