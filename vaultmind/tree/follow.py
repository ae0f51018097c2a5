"""Summaries following a change of admission made outside a sync (see `tree.admitted`)."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from vaultmind.index.arrow import execute_with, key_table
from vaultmind.tree.deriver import TreeDeriver, parents_sql


def follow_admission(con: duckdb.DuckDBPyConnection, leaf_ids: Sequence[str]) -> bool:
    """Resolve again the summaries over leaves whose admission decision changed outside a sync
    (the LLM answered for a leaf the rules had decided), and those above them: a level-1
    summary over a leaf now dropped turns stale, and is re-sealed without it. Whether any of
    the leaves is in a summary (most are in none: a gray leaf is never buffered before its
    decision, a dropped one never)."""
    ids = sorted(set(leaf_ids))
    if not ids or not execute_with(con, parents_sql(len(ids)), rows=key_table(ids)).fetchone():
        return False  # (a leaf is a child of level-1 summaries only)
    TreeDeriver().apply(con, ids, [], rebuild=False)
    return True
