"""Admission: decide, without an LLM outside a narrow gray band, what is worth remembering.

Every leaf of a source note (chat, email, document) gets one `admission` row: `admitted`,
`dropped` (with the reason kept for diagnosis) or `gray` (the LLM is asked once, cached by
content hash; see `importance`). Leaves of the user's own notes are always admitted ("user
note": they are the owner's own writing). Summary and entity notes are vaultmind's output and
get no row.

Lifecycle of a leaf: pending → admitted → buffered → sealed, or pending → dropped. A gray leaf
is pending until the LLM decides.

**Dropped leaves stay searchable.** The vault is the truth and the user may ask about anything,
so admission never removes a leaf from the index: every leaf stays searchable and citable.
Admission decides what goes into the summary trees: dropped leaves are never buffered or
summarized; gray leaves are searchable like any other and wait (pending) for the LLM before
they may enter a tree.

Modules: `signals` (cheap signals), `decide` (score, thresholds, reasons), `deriver` (the sync
hook writing rows), `importance` (the gray-band LLM job and its cache), `reask` (the decisions
the rules took while no Ollama answered, asked again once one does), `explain`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vaultmind.index.store import Index


def admission_status(index: Index) -> dict[str, Any]:
    """Counts of admission decisions, and the most common drop reasons (for `status`)."""
    counts = {"admitted": 0, "dropped": 0, "gray": 0}
    for decision, n in index.query("SELECT decision, count(*) FROM admission GROUP BY 1 ORDER BY 1"):
        counts[str(decision)] = int(n)
    by_stage = {
        str(stage): int(n)
        for stage, n in index.query("SELECT stage, count(*) FROM admission GROUP BY 1 ORDER BY 1")
    }
    reasons = [
        {"reason": str(kind), "count": int(n)}
        for kind, n in index.query(
            """
            SELECT CASE WHEN contains(reason, 'chitchat') THEN 'chitchat'
                        WHEN starts_with(reason, 'score ') THEN 'low score'
                        WHEN starts_with(reason, 'LLM importance') THEN 'LLM: not important'
                        WHEN starts_with(reason, 'LLM not reachable') THEN 'by rules: LLM not reachable'
                        ELSE 'other' END AS kind, count(*) AS n
            FROM admission WHERE decision = 'dropped' GROUP BY 1 ORDER BY n DESC, kind
            """
        )
    ]
    # gray leaves decided by the rules for want of an Ollama to ask (information, not a fault)
    by_rules = int(index.scalar("SELECT count(*) FROM admission WHERE starts_with(reason, 'LLM not reachable')") or 0)
    return {**counts, "by_stage": by_stage, "drop_reasons": reasons, "by_rules": by_rules}
