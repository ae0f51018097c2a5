"""The durable work queue: the `jobs` table, with leases, attempts, dedupe and typed failures.

A job is `ready` until a worker claims it; the claim (one UPDATE … WHERE id = (SELECT … LIMIT
1) under the Index lock) makes it `running`, bumps `attempts` and hands the worker a lease: a
random token and a deadline. Only the holder of the token can settle the job (`complete`,
`fail`), so a worker that lost its lease — it was too slow, or the process died and the lease
expired — can never overwrite a job that was claimed again since. An expired lease puts the
job back to `ready` at the next claim (or reconcile), and a job left running by a process that
died goes back at its next start (`release_running`); either parks it as failed once its
attempts are spent, so a job that kills the process is not claimed at every start.

Dedupe: a job is not enqueued while another with the same `dedupe_key` is ready, running or
failed (parked jobs wait for `vaultmind retry`; a done or cancelled key frees itself); a
cancelled job retried by id while its key has such a job again is not requeued beside it. Times are
epoch milliseconds; every function takes `now` so tests can move the clock.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import duckdb
import pyarrow as pa

from vaultmind.index.arrow import execute_with, key_table
from vaultmind.index.store import Index
from vaultmind.queue.failures import BACKOFF, FailureClass
from vaultmind.shell import command_line

JobStatus = Literal["ready", "running", "done", "failed", "cancelled"]
ACTIVE = ("ready", "running")
BLOCKING = ("ready", "running", "failed")  # a key with such a job is not enqueued again
DEFAULT_LEASE_S = 300.0
DEFAULT_MAX_ATTEMPTS = 5

_COLUMNS = (
    "id, kind, dedupe_key, payload, status, attempts, max_attempts, defers, available_at, "
    "lease_until, lease_token, last_error, failure_class, created_ms, updated_ms"
)


def now_ms() -> int:
    return int(time.time() * 1000)


def iso_ms(ms: int | None) -> str | None:
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class NewJob:
    kind: str
    dedupe_key: str
    payload: Mapping[str, Any]
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    delay_ms: int = 0


@dataclass(frozen=True, slots=True)
class Job:
    id: int
    kind: str
    dedupe_key: str
    payload_json: str
    status: str
    attempts: int
    max_attempts: int
    defers: int
    available_at: int
    lease_until: int | None
    lease_token: str | None
    last_error: str | None
    failure_class: str | None
    created_ms: int
    updated_ms: int

    def payload(self) -> Any:
        """The parsed payload (raises ValueError when it is not JSON)."""
        return json.loads(self.payload_json)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "dedupe_key": self.dedupe_key,
            "status": self.status,
            "attempts": self.attempts,
            "max_attempts": self.max_attempts,
            "available_at": iso_ms(self.available_at),
            "lease_until": iso_ms(self.lease_until),
            "last_error": self.last_error,
            "failure_class": self.failure_class,
            "payload": self.payload_json,
        }


def _job(row: Sequence[Any]) -> Job:
    return Job(*row)


# -- producing ---------------------------------------------------------------------------------


def enqueue(con: duckdb.DuckDBPyConnection, jobs: Sequence[NewJob], *, now: int) -> int:
    """Add jobs whose dedupe key is free; returns how many were added. Runs in the caller's
    transaction, so a producer can enqueue together with the rows that made the work."""
    seen: dict[str, NewJob] = {}
    for job in jobs:
        seen.setdefault(job.dedupe_key, job)
    if not seen:
        return 0
    # The keys that already have a job are left out before any payload is written: a reconcile
    # offers every wanted job (44k at 50k notes), nearly all of them queued already.
    taken = {
        str(r[0])
        for r in execute_with(
            con,
            f"SELECT DISTINCT j.dedupe_key FROM jobs j JOIN _rows n ON j.dedupe_key = n.k WHERE j.status IN {BLOCKING}",
            rows=key_table(seen),
        ).fetchall()
    }
    keys = sorted(k for k in seen if k not in taken)
    if not keys:
        return 0
    frame = pa.table(
        {
            "kind": pa.array([seen[k].kind for k in keys], pa.string()),
            "dedupe_key": pa.array(keys, pa.string()),
            "payload": pa.array(
                [json.dumps(dict(seen[k].payload), sort_keys=True, ensure_ascii=False) for k in keys],
                pa.string(),
            ),
            "max_attempts": pa.array([seen[k].max_attempts for k in keys], pa.int32()),
            "available_at": pa.array([now + seen[k].delay_ms for k in keys], pa.int64()),
        }
    )
    before = _count(con)
    execute_with(
        con,
        f"""
        INSERT INTO jobs ({_COLUMNS})
        SELECT nextval('jobs_id_seq'), n.kind, n.dedupe_key, n.payload, 'ready', 0, n.max_attempts, 0,
               n.available_at, NULL, NULL, NULL, NULL, ?, ?
        FROM _rows n
        WHERE NOT EXISTS (
            SELECT 1 FROM jobs j WHERE j.dedupe_key = n.dedupe_key AND j.status IN {BLOCKING}
        )
        ORDER BY n.dedupe_key
        """,
        [now, now],
        rows=frame,
    )
    return _count(con) - before


def _count(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT count(*) FROM jobs").fetchone()
    return int(row[0]) if row else 0


# -- claiming ----------------------------------------------------------------------------------


def recover_expired(con: duckdb.DuckDBPyConnection, *, now: int) -> int:
    """Running jobs whose lease ran out go back to ready (or failed, attempts spent: a transient
    failure, given fresh attempts later by `reconcile`)."""
    return _release(
        con,
        "AND lease_until < ?",
        [now],
        now=now,
        error="lease expired: the worker stopped without settling the job (crash or timeout)",
        spent="transient",
    )


def release_running(index: Index, *, now: int) -> int:
    """At start-up: every running job belongs to a process that is gone (one writer per index).
    It goes back to ready — or, its attempts spent, is parked as unrecoverable, so that neither
    the next start nor `reconcile`'s fresh attempts claim it again: a job that crashes the
    process would else be claimed at every start (or every 3 h), a crash loop under a service
    manager. `vaultmind retry` frees it."""
    with index.transaction() as con:
        return _release(
            con,
            "",
            [],
            now=now,
            error="released at start-up: the previous process stopped while running it",
            spent="unrecoverable",
        )


def _release(
    con: duckdb.DuckDBPyConnection, where: str, params: list[Any], *, now: int, error: str, spent: FailureClass
) -> int:
    """The running jobs of `where` back to ready, or parked as failed of the class `spent` when
    their attempts are spent; how many."""
    rows = con.execute(
        f"""
        UPDATE jobs SET
            status = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'ready' END,
            failure_class = CASE WHEN attempts >= max_attempts THEN ? ELSE failure_class END,
            last_error = ?, lease_until = NULL, lease_token = NULL, available_at = ?, updated_ms = ?
        WHERE status = 'running' {where}
        RETURNING id
        """,
        [spent, error, now, now, *params],
    ).fetchall()
    return len(rows)


def claim(
    index: Index,
    *,
    now: int,
    kinds: Sequence[str] | None = None,
    order: Sequence[str] = (),
    lease_s: float = DEFAULT_LEASE_S,
) -> Job | None:
    """Claim the next ready job (of `kinds`, all when None), kinds listed in `order` first."""
    if kinds is not None and not kinds:
        return None
    token = secrets.token_hex(16)
    lease_until = now + int(lease_s * 1000)
    kind_filter = "" if kinds is None else "AND kind IN (SELECT unnest(?::VARCHAR[]))"
    params: list[Any] = [lease_until, token, now, now]
    if kinds is not None:
        params.append(list(kinds))
    params.append(list(order))
    with index.transaction() as con:
        recover_expired(con, now=now)
        row = con.execute(
            f"""
            UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = ?, lease_token = ?,
                updated_ms = ?
            WHERE id = (
                SELECT id FROM jobs
                WHERE status = 'ready' AND available_at <= ? {kind_filter}
                ORDER BY coalesce(list_position(?::VARCHAR[], kind), 1000), available_at, id
                LIMIT 1
            )
            RETURNING {_COLUMNS}
            """,
            params,
        ).fetchone()
    return None if row is None else _job(row)


# -- settling ----------------------------------------------------------------------------------

Settlement = Literal["done", "retry", "deferred", "failed", "refused"]


def complete(index: Index, job: Job, *, now: int, note: str | None = None) -> Settlement:
    """Mark a claimed job done. "refused" when the lease is no longer this worker's."""
    with index.transaction() as con:
        rows = con.execute(
            """
            UPDATE jobs SET status = 'done', lease_until = NULL, lease_token = NULL, last_error = ?,
                failure_class = NULL, updated_ms = ?
            WHERE id = ? AND status = 'running' AND lease_token = ?
            RETURNING id
            """,
            [note, now, job.id, job.lease_token],
        ).fetchall()
    return "done" if rows else "refused"


def fail(index: Index, job: Job, failure_class: FailureClass, message: str, *, now: int) -> Settlement:
    """Settle a claimed job that failed: retry with backoff, defer, or park it as failed."""
    policy = BACKOFF[failure_class]
    attempts, defers = job.attempts, job.defers
    if not policy.retry:
        status, outcome, available = "failed", "failed", now
    elif policy.counts_attempt:
        defers = 0
        if attempts >= job.max_attempts:
            status, outcome, available = "failed", "failed", now
        else:
            status, outcome = "ready", "retry"
            available = now + int(policy.delay_s(attempts) * 1000)
    else:
        attempts = max(0, attempts - 1)  # the claim's bump is given back: this says nothing about the job
        defers += 1
        status, outcome = "ready", "deferred"
        available = now + int(policy.delay_s(defers) * 1000)
    with index.transaction() as con:
        rows = con.execute(
            """
            UPDATE jobs SET status = ?, attempts = ?, defers = ?, available_at = ?, lease_until = NULL,
                lease_token = NULL, last_error = ?, failure_class = ?, updated_ms = ?
            WHERE id = ? AND status = 'running' AND lease_token = ?
            RETURNING id
            """,
            [
                status,
                attempts,
                defers,
                available,
                message[:2000],
                failure_class,
                now,
                job.id,
                job.lease_token,
            ],
        ).fetchall()
    return outcome if rows else "refused"  # type: ignore[return-value]


def put_back(index: Index, job: Job, reason: str, *, now: int) -> bool:
    """A claimed job its worker has not finished, ready again now without counting its
    attempt (a stop that could not wait for it: nothing is known against the job), `reason`
    its last error; its worker's settlement is refused from then on. False when the lease is
    no longer that worker's."""
    with index.transaction() as con:
        rows = con.execute(
            """
            UPDATE jobs SET status = 'ready', attempts = greatest(attempts - 1, 0), available_at = ?,
                lease_until = NULL, lease_token = NULL, last_error = ?, updated_ms = ?
            WHERE id = ? AND status = 'running' AND lease_token = ?
            RETURNING id
            """,
            [now, reason, now, job.id, job.lease_token],
        ).fetchall()
    return bool(rows)


# -- managing ----------------------------------------------------------------------------------


def cancel(con: duckdb.DuckDBPyConnection, ids: Sequence[int], reason: str, *, now: int) -> int:
    """Cancel ready or failed jobs (never a running one: its worker settles it)."""
    if not ids:
        return 0
    rows = execute_with(
        con,
        """
        UPDATE jobs SET status = 'cancelled', last_error = ?, updated_ms = ?
        WHERE id IN (SELECT id FROM _rows) AND status IN ('ready', 'failed')
        RETURNING id
        """,
        [reason, now],
        rows=key_table(ids, "id", pa.int64()),
    ).fetchall()
    return len(rows)


# Why a job of a kind (its name) and dedupe key is not requeued by id, None when it is still
# wanted (`reconcile.why_unwanted`: its target is gone, or no worker here runs its kind)
WhyUnwanted = Callable[[duckdb.DuckDBPyConnection, str, str], str | None]


def retry(
    index: Index,
    *,
    now: int,
    job_id: int | None = None,
    failed: bool = True,
    deferred: bool = False,
    vault: Path | None = None,
    why_unwanted: WhyUnwanted | None = None,
) -> dict[str, Any]:
    """Requeue jobs now with fresh attempts: one job by id, failed ones, and/or deferred ones;
    the command an error names is for `vault` (without it: for the vault of the current folder).
    A job asked by id whose work is no longer wanted (`why_unwanted`: its target is gone, or
    no worker runs its kind) is not requeued but said so: requeued, it was cancelled again by
    the next reconcile, or sat ready for good, after `retry` had said "requeued"."""
    with index.transaction() as con:
        if job_id is not None:
            row = con.execute("SELECT status, kind, dedupe_key FROM jobs WHERE id = ?", [job_id]).fetchone()
            if row is None:
                from vaultmind.errors import NotFound

                raise NotFound(f"no job #{job_id}", hint=f"`{command_line('queue', '--list', vault=vault)}` lists the jobs")
            if row[0] in ("running", "done"):
                return {"requeued": 0, "ids": [], "note": f"job #{job_id} is {row[0]}; nothing to retry"}
            twin = _live_twin(con, job_id)
            if twin is not None:  # a cancelled job whose key was enqueued again since: that one does the work
                return {"requeued": 0, "ids": [], "note": f"job #{job_id}'s work is job #{twin[0]} now ({twin[1]})"}
            why = why_unwanted(con, str(row[1]), str(row[2])) if why_unwanted is not None else None
            if why is not None:
                return {"requeued": 0, "ids": [], "note": f"job #{job_id} ({row[0]}) {why}; nothing to retry"}
            where, params = "id = ?", [job_id]
        else:
            parts = []
            if failed:
                parts.append("status = 'failed'")
            if deferred:
                parts.append("(status = 'ready' AND available_at > ?)")
            if not parts:
                return {"requeued": 0, "ids": []}
            where = " OR ".join(parts)
            params = [now] if deferred else []
        ids = [
            int(r[0])
            for r in con.execute(
                f"""
                UPDATE jobs SET status = 'ready', attempts = 0, defers = 0, available_at = ?, lease_until = NULL,
                    lease_token = NULL, updated_ms = ?
                WHERE {where}
                RETURNING id
                """,
                [now, now, *params],
            ).fetchall()
        ]
    return {"requeued": len(ids), "ids": sorted(ids)}


def _live_twin(con: duckdb.DuckDBPyConnection, job_id: int) -> tuple[int, str] | None:
    """Another job with `job_id`'s dedupe key that is ready, running or failed (its id and
    status): requeuing `job_id` beside it would do the same work twice."""
    row = con.execute(
        f"""
        SELECT j.id, j.status FROM jobs j, jobs me
        WHERE me.id = ? AND j.dedupe_key = me.dedupe_key AND j.id <> me.id AND j.status IN {BLOCKING}
        ORDER BY j.id LIMIT 1
        """,
        [job_id],
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def prune(con: duckdb.DuckDBPyConnection, *, now: int, keep_ms: int = 24 * 3600 * 1000) -> int:
    """Forget done and cancelled jobs older than `keep_ms`."""
    rows = con.execute(
        "DELETE FROM jobs WHERE status IN ('done', 'cancelled') AND updated_ms < ? RETURNING id",
        [now - keep_ms],
    ).fetchall()
    return len(rows)


def get_job(index: Index, job_id: int) -> Job | None:
    row = index.query(f"SELECT {_COLUMNS} FROM jobs WHERE id = ?", [job_id])
    return _job(row[0]) if row else None


def list_jobs(index: Index, *, statuses: Sequence[str] | None = None, limit: int = 50) -> list[Job]:
    if statuses is None:
        rows = index.query(f"SELECT {_COLUMNS} FROM jobs ORDER BY id LIMIT ?", [limit])
    else:
        rows = index.query(
            f"SELECT {_COLUMNS} FROM jobs WHERE status IN (SELECT unnest(?::VARCHAR[])) ORDER BY id LIMIT ?",
            [list(statuses), limit],
        )
    return [_job(r) for r in rows]
