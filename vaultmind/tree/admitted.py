"""The summaries follow admission: a summary over a leaf admission no longer keeps is stale.

Admission decisions change outside a sync when the LLM answers for a leaf (a gray one, or one
the rules decided while no Ollama answered: `admission.reask`); `tree.follow.follow_admission` resolves
the summaries over such leaves again in that transaction, as the tree deriver would. When
admission's settings change, every decision is taken again in the sync, and the tree deriver
resolves every summary once (`changed`, `seen`: the fingerprint it last resolved under), so an
incremental sync gives the rows of a cold rebuild.
"""

from __future__ import annotations

import duckdb

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
