"""Reconcile: make the queue agree with the index, so a crash at any point loses nothing.

The vault is the truth and the index is derived from it, so the work still to do is derivable
too: each job kind says which jobs should exist (`JobKind.wanted`). Reconcile, run at start-up
and periodically (and safe to run any time, from any thread — it holds the Index lock for one
short transaction):

1. returns running jobs whose lease expired to ready (their worker died), and lets each kind
   repair derived rows from work already finished (`JobKind.repair`);
2. enqueues every wanted job that is missing (dedupe keeps it from duplicating one that is
   ready, running or parked as failed);
3. cancels ready and failed jobs nobody wants any more (their target is gone: the leaf was
   deleted, decided meanwhile, or the model changed);
4. gives failed jobs of a transient class fresh attempts after `REQUEUE_FAILED_AFTER_MS`
   (an unrecoverable failure stays parked until `vaultmind retry`, as does a job that stopped
   the process at each of its attempts: `store.release_running`);
5. forgets done and cancelled jobs older than a day.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import duckdb

from vaultmind.index.arrow import execute_with, key_table
from vaultmind.queue.kinds import JobKind
from vaultmind.queue.store import cancel, enqueue, prune, recover_expired

if TYPE_CHECKING:
    from vaultmind.config import Config
    from vaultmind.index.store import Index

REQUEUE_FAILED_AFTER_MS = 3 * 3600 * 1000


def reconcile(index: Index, config: Config, kinds: Sequence[JobKind], *, now: int) -> dict[str, Any]:
    """One reconcile pass; returns what it did (counts). DuckDB runs it on one thread: its
    reads (44k provisional rows at 50k notes, no Ollama) kept a second thread's buffers after
    the pass (in process 42 -> 20 MiB kept, the peak 42 -> 39, no slower). The index's lock is
    held from the setting to its end, so a one-thread scope of another thread (a pooled sync's)
    cannot end in between: it would give its threads back, and this pass then set back its one."""
    created = cancelled = repaired = 0
    with index.lock, index.threads(1), index.transaction() as con:
        expired = recover_expired(con, now=now)
        for kind in kinds:
            if kind.repair is not None:
                repaired += kind.repair(con, config)
            if kind.wanted is None:
                continue
            wanted = kind.wanted(con, config)
            created += enqueue(con, wanted, now=now)
            stale = [  # compared in DuckDB: no Python row per queued job
                int(r[0])
                for r in execute_with(
                    con,
                    "SELECT j.id FROM jobs j ANTI JOIN _rows w ON j.dedupe_key = w.k "
                    "WHERE j.kind = ? AND j.status IN ('ready', 'failed') ORDER BY j.id",
                    [kind.name],
                    rows=key_table(sorted({job.dedupe_key for job in wanted})),
                ).fetchall()
            ]
            del wanted
            cancelled += cancel(con, stale, "target no longer exists (cancelled by reconcile)", now=now)
        requeued = len(
            con.execute(
                """
                UPDATE jobs SET status = 'ready', attempts = 0, defers = 0, available_at = ?, updated_ms = ?
                WHERE status = 'failed' AND coalesce(failure_class, 'transient') <> 'unrecoverable'
                  AND updated_ms < ?
                RETURNING id
                """,
                [now, now, now - REQUEUE_FAILED_AFTER_MS],
            ).fetchall()
        )
        pruned = prune(con, now=now)
    return {
        "expired": expired,
        "created": created,
        "cancelled": cancelled,
        "requeued": requeued,
        "repaired": repaired,
        "pruned": pruned,
    }


def why_unwanted(config: Config, kinds: Sequence[JobKind]) -> Callable[[duckdb.DuckDBPyConnection, str, str], str | None]:
    """Why `retry` by id leaves a job of a kind (its name) and dedupe key alone, None when it
    is still wanted: a reconcile would cancel it (its target is gone), or no worker here runs
    its kind (another version's), so requeued it would sit ready for good. A kind with no
    `wanted` keeps all of its jobs."""
    by_name = {kind.name: kind for kind in kinds}

    def why(con: duckdb.DuckDBPyConnection, kind_name: str, dedupe_key: str) -> str | None:
        kind = by_name.get(kind_name)
        if kind is None:
            return f"is of kind {kind_name!r}, which this vaultmind does not run (its kinds: {', '.join(sorted(by_name))})"
        if kind.wanted is None or any(job.dedupe_key == dedupe_key for job in kind.wanted(con, config)):
            return None
        return (
            "has nothing to do: its target no longer exists (the leaf was deleted or decided meanwhile, "
            "or the model or admission.llm changed)"
        )

    return why
