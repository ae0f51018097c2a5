"""Loopback-API routes for the queue and for `explain` (the daemon merges them into its routes).

POST /v1/explain        {"leaf_id": str} → explain_leaf
GET  /v1/queue          → queue_status + admission counts (+ the jobs not done, up to 50)
POST /v1/queue/retry    {"job_id": int?, "failed": bool?, "deferred": bool?} → {requeued, ids}
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultmind.arguments import whole_number
from vaultmind.errors import UsageError

if TYPE_CHECKING:
    from vaultmind.config import Config
    from vaultmind.index.store import Index
    from vaultmind.memory import Memory

Route = Callable[["Memory", dict[str, Any]], Any]


def queue_report(index: Index, *, vault: Path | None = None, jobs: bool = True) -> dict[str, Any]:
    from vaultmind.admission import admission_status
    from vaultmind.queue.status import queue_status
    from vaultmind.queue.store import list_jobs

    report = queue_status(index, vault=vault)
    report["admission"] = admission_status(index)
    if jobs:
        report["jobs"] = [
            j.to_dict() for j in list_jobs(index, statuses=("ready", "running", "failed"), limit=50)
        ]
    return report


def retry_request(index: Index, body: dict[str, Any], *, config: Config) -> dict[str, Any]:
    """`{"job_id"?, "failed"?, "deferred"?}`: `store.retry`, a job asked by id requeued only
    while the kinds vaultmind runs still want its work (`reconcile.why_unwanted`)."""
    from vaultmind.queue.reconcile import why_unwanted
    from vaultmind.queue.store import now_ms, retry
    from vaultmind.queue.workers import default_kinds

    job_id = whole_number(body.get("job_id"), "'job_id'")
    failed = body.get("failed", True)
    deferred = body.get("deferred", False)
    if not isinstance(failed, bool) or not isinstance(deferred, bool):
        raise UsageError("'failed' and 'deferred' must be true or false")
    return retry(
        index, now=now_ms(), job_id=job_id, failed=failed, deferred=deferred, vault=config.vault,
        why_unwanted=why_unwanted(config, default_kinds()),
    )  # fmt: skip


def _explain(memory: Memory, body: dict[str, Any]) -> Any:
    from vaultmind.admission.explain import explain_leaf

    leaf_id = body.get("leaf_id")
    if not isinstance(leaf_id, str):
        raise UsageError("'leaf_id' must be a string")
    from vaultmind.tree.settings import TreeSettings

    return explain_leaf(memory.index, leaf_id, TreeSettings.from_extra(memory.config.extra))


ROUTES: dict[tuple[str, str], Route] = {
    ("POST", "/v1/explain"): _explain,
    ("GET", "/v1/queue"): lambda m, b: queue_report(m.index, vault=m.config.vault),
    ("POST", "/v1/queue/retry"): lambda m, b: retry_request(m.index, b, config=m.config),
}
