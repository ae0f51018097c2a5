"""The summaries follow admission: a summary over a leaf admission no longer keeps is stale.

Admission decisions change outside a sync when the LLM answers for a leaf (a gray one, or one
the rules decided while no Ollama answered: `admission.reask`); `follow_admission` resolves the
summaries over such leaves again in that transaction, as the tree deriver would. When
admission's settings change, every decision is taken again in the sync, and the tree deriver
resolves every summary once (`changed`, `seen`: the fingerprint it last resolved under), so an
incremental sync gives the rows of a cold rebuild.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from vaultmind.index.arrow import execute_with, key_table
from vaultmind.index.meta import put_meta

ADMISSION_POLICY = "admission_policy"  # the admission deriver's meta key: its settings' fingerprint
ADMISSION_SEEN = "trees_admission_policy"  # that fingerprint, as the summaries were last resolved under


def changed(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether admission's fingerprint differs from the one the summaries were resolved under."""
    seen = con.execute(
        "SELECT max(value) FILTER (WHERE key = ?) IS NOT DISTINCT FROM max(value) FILTER (WHERE key = ?) FROM meta",
        [ADMISSION_POLICY, ADMISSION_SEEN],
    ).fetchone()
    return seen is None or not seen[0]


def seen(con: duckdb.DuckDBPyConnection) -> None:
    """Record the admission fingerprint the summaries were resolved under (when it changed)."""
    policy = con.execute("SELECT value FROM meta WHERE key = ?", [ADMISSION_POLICY]).fetchone()
    if policy is None:
        con.execute("DELETE FROM meta WHERE key = ?", [ADMISSION_SEEN])
    else:
        put_meta(con, ADMISSION_SEEN, str(policy[0]))


def follow_admission(con: duckdb.DuckDBPyConnection, leaf_ids: Sequence[str]) -> bool:
    """Resolve again the summaries over leaves whose admission decision changed outside a sync
    (the LLM answered for a leaf the rules had decided), and those above them: a level-1
    summary over a leaf now dropped turns stale, and is re-sealed without it. Whether any of
    the leaves is in a summary (most are in none: a gray leaf is never buffered before its
    decision, a dropped one never)."""
    from vaultmind.tree import deriver  # (which imports this module)

    ids = sorted(set(leaf_ids))
    if not ids or not execute_with(con, deriver._parents_sql(len(ids)), rows=key_table(ids)).fetchone():
        return False  # (a leaf is a child of level-1 summaries only)
    deriver.TreeDeriver().apply(con, ids, [], rebuild=False)
    return True
