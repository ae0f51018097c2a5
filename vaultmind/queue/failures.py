"""Typed job failures: what went wrong, whether to retry, and how long to wait.

Every exception a job (or the worker loop) meets is classified once, by `classify`:

| class | typical cause | retried | attempt counted | backoff |
|---|---|---|---|---|
| `lock_busy` | another process holds the index | yes | no | 1 s, doubling, max 30 s |
| `transient_io` | EIO, a file vanished, an I/O hiccup | yes | yes | 30 s, doubling, max 10 min |
| `disk_full` | ENOSPC / EDQUOT | yes | no | 5 min |
| `corrupt_index` | the index file is damaged | yes | no | 5 min; the pool pauses and reports it (quarantine + rebuild) |
| `read_only_vault` | EROFS / EACCES writing the vault | yes | no | 5 min, doubling, max 1 h |
| `llm_unreachable` | Ollama is not running | yes (deferred) | no | 30 s, doubling, max 10 min |
| `transient` | Ollama timeout or HTTP 5xx, unexpected errors | yes | yes | 1 min, doubling, max 1 h |
| `unrecoverable` | bad payload, model not pulled, HTTP 4xx | no | — | parked as failed until `vaultmind retry` |

"Attempt counted" failures burn one of the job's `max_attempts`; when they run out the job is
parked as failed (its class kept, so `status` can say why). The others only defer: they say
nothing about the job itself, so they never use up attempts — an Ollama that is down for a
week loses no work.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import duckdb

from vaultmind.errors import IndexBusy, IndexCorrupt, VaultmindError
from vaultmind.shell import command_line

FailureClass = Literal[
    "lock_busy",
    "transient_io",
    "disk_full",
    "corrupt_index",
    "read_only_vault",
    "llm_unreachable",
    "transient",
    "unrecoverable",
]

@dataclass(frozen=True, slots=True)
class Backoff:
    base_s: float
    cap_s: float
    counts_attempt: bool
    retry: bool = True

    def delay_s(self, n: int) -> float:
        """Delay before the next try after the n-th (1-based) failure of this kind."""
        return float(min(self.cap_s, self.base_s * 2.0 ** min(max(0, n - 1), 64)))  # no overflow after many


BACKOFF: dict[FailureClass, Backoff] = {
    "lock_busy": Backoff(1.0, 30.0, counts_attempt=False),
    "transient_io": Backoff(30.0, 600.0, counts_attempt=True),
    "disk_full": Backoff(300.0, 300.0, counts_attempt=False),
    "corrupt_index": Backoff(300.0, 300.0, counts_attempt=False),
    "read_only_vault": Backoff(300.0, 3600.0, counts_attempt=False),
    "llm_unreachable": Backoff(30.0, 600.0, counts_attempt=False),
    "transient": Backoff(60.0, 3600.0, counts_attempt=True),
    "unrecoverable": Backoff(0.0, 0.0, counts_attempt=True, retry=False),
}


class JobFailure(VaultmindError):
    """Raised by a job handler to fail with an explicit class (e.g. an unparseable payload)."""

    code = "job_failure"

    def __init__(self, failure_class: FailureClass, message: str, *, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.failure_class: FailureClass = failure_class


_CORRUPT_MARKERS = (
    "corrupt",
    "not a valid duckdb database",
    "checksum",
    "invalid block",
    "failed to read database header",
    "wal file",
)


def classify(exc: BaseException) -> FailureClass:
    """The failure class of an exception raised by a job or by the queue itself."""
    from vaultmind.llm.ollama_chat import LlmTransient, LlmUnreachable, LlmUnrecoverable

    if isinstance(exc, JobFailure):
        return exc.failure_class
    if isinstance(exc, LlmUnreachable):
        return "llm_unreachable"
    if isinstance(exc, LlmTransient):
        return "transient"
    if isinstance(exc, LlmUnrecoverable):
        return "unrecoverable"
    if isinstance(exc, IndexBusy):
        return "lock_busy"
    if isinstance(exc, IndexCorrupt):
        return "corrupt_index"
    if isinstance(exc, OSError):
        return _classify_os(exc)
    if isinstance(exc, duckdb.Error):
        return _classify_duckdb(exc)
    cause = exc.__cause__ or exc.__context__
    if cause is not None and cause is not exc:
        inner = classify(cause)
        if inner != "transient":
            return inner
    return "transient"


def _classify_os(exc: OSError) -> FailureClass:
    code = exc.errno
    if code in (errno.ENOSPC, errno.EDQUOT):
        return "disk_full"
    if code in (errno.EROFS, errno.EACCES, errno.EPERM):
        return "read_only_vault"
    return "transient_io"


def _classify_duckdb(exc: duckdb.Error) -> FailureClass:
    text = str(exc).lower()
    if "lock" in text and ("conflicting" in text or "could not set lock" in text):
        return "lock_busy"
    if "no space left" in text or "disk is full" in text or "disk full" in text:
        return "disk_full"
    if "read-only" in text or "read only" in text:
        return "read_only_vault"
    if isinstance(exc, duckdb.SerializationException | duckdb.FatalException) or any(
        marker in text for marker in _CORRUPT_MARKERS
    ):
        return "corrupt_index"
    if isinstance(exc, duckdb.IOException):
        return "transient_io"
    if isinstance(exc, duckdb.TransactionException):
        return "lock_busy"
    if isinstance(exc, duckdb.PermissionException):
        return "read_only_vault"
    return "transient"


def describe(failure_class: str, vault: Path | None = None) -> str:
    """What a failure class means for the user (shown by `vaultmind queue` / `status`); the
    commands it names are for `vault` (without it: for the vault of the current folder)."""
    return {
        "lock_busy": "the index was busy; retrying shortly",
        "transient_io": "an I/O error; retrying with backoff",
        "disk_full": "the disk is full; free space and the work resumes",
        "corrupt_index": f"the index is damaged; run `{command_line('reindex', vault=vault)}` (it is rebuilt from the vault)",
        "read_only_vault": "the vault is read-only; make it writable and the work resumes",
        "llm_unreachable": "Ollama is not reachable; the work waits (start `ollama serve`; without it, "
        f"set [trees] summarizer = \"fallback\" and run `{command_line('sync', vault=vault)}`, restarting a running "
        f"`{command_line('serve', vault=vault)}` first, "
        "for extractive summaries)",
        "transient": "a temporary error; retrying with backoff",
        "unrecoverable": f"retrying cannot help until you act; fix the cause, then `{command_line('retry', vault=vault)}`",
    }.get(failure_class, failure_class)
