"""What the work queue holds, for `vaultmind status`, `vaultmind queue` and `GET /v1/queue`:
its depth by status and kind, the causes of failed and waiting jobs (what needs you first), and
the health they add up to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vaultmind.index.store import Index
from vaultmind.queue.failures import describe
from vaultmind.queue.store import iso_ms, now_ms


def queue_status(index: Index, *, vault: Path | None = None, now: int | None = None) -> dict[str, Any]:
    """Queue depth, failures and their causes, for `vaultmind status` / `vaultmind queue`; the
    commands the causes' meanings name are for `vault`."""
    now = now_ms() if now is None else now
    counts: dict[str, int] = {s: 0 for s in ("ready", "deferred", "running", "failed", "done", "cancelled")}
    by_kind: dict[str, dict[str, int]] = {}
    for kind, status, waiting, n in index.query(
        """
        SELECT kind, status, status = 'ready' AND available_at > ?, count(*)
        FROM jobs GROUP BY ALL ORDER BY ALL
        """,
        [now],
    ):
        key = "deferred" if waiting else str(status)
        counts[key] = counts.get(key, 0) + int(n)
        kind_counts = by_kind.setdefault(str(kind), {})
        kind_counts[key] = kind_counts.get(key, 0) + int(n)
    causes = []
    for state, cls, error, n, next_at in index.query(
        """
        SELECT * FROM (
            SELECT CASE WHEN status = 'failed' THEN 'failed' ELSE 'deferred' END AS state, failure_class,
                   last_error, count(*) AS n, min(available_at) AS next_at
            FROM jobs
            WHERE status = 'failed' OR (status IN ('ready', 'running') AND failure_class IS NOT NULL)
            GROUP BY ALL
        )  -- what needs you (an unrecoverable failure) first, then the largest groups
        ORDER BY state = 'failed' AND failure_class = 'unrecoverable' DESC, n DESC, state, failure_class, last_error
        LIMIT 10
        """
    ):
        causes.append(
            {
                "state": state,
                "failure_class": cls,
                "count": int(n),
                "error": error,
                "meaning": describe(str(cls), vault) if cls else None,
                # None: due now (a waiting job's backoff has passed; a closed LLM gate holds it back)
                "next_try": iso_ms(int(next_at)) if state == "deferred" and next_at > now else None,
            }
        )
    # Health from every job, not only the causes listed (the ten largest groups, those that
    # need you first): one unrecoverable failure among many deferrals is still an error. A job
    # waiting after a failure stays a cause once its backoff has passed, until a try succeeds:
    # with Ollama down, the one job that probes it is all that says so (the others wait unclaimed).
    unrecoverable, deferred_failures = index.query(
        """
        SELECT count(*) FILTER (WHERE status = 'failed' AND failure_class = 'unrecoverable'),
               count(*) FILTER (WHERE status IN ('ready', 'running') AND failure_class IS NOT NULL)
        FROM jobs
        """
    )[0]
    troubled = counts["failed"] > 0 or deferred_failures > 0
    health = "error" if unrecoverable else "degraded" if troubled else "ok"
    return {
        "depth": counts["ready"] + counts["deferred"] + counts["running"],
        **counts,
        "by_kind": by_kind,
        "health": health,
        "first_cause": causes[0]["error"] if causes else None,
        "causes": causes,
    }
