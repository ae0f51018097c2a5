"""The durable work queue: leases, settlement, backoff per failure class, dedupe, crash recovery,
reconcile, and the gray-band importance job against a fake Ollama (through the real client)."""

from __future__ import annotations

import errno
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.fakes import FakeOllama, RecordedRequest, free_port, silent_host
from vaultmind.admission.importance import new_job as importance_job
from vaultmind.cli.main import main
from vaultmind.config import Config, load_config
from vaultmind.errors import IndexBusy, IndexCorrupt
from vaultmind.index.store import Index
from vaultmind.llm.ollama_chat import (
    LlmTransient,
    LlmUnreachable,
    LlmUnrecoverable,
    OllamaChat,
    parse_json_object,
)
from vaultmind.memory import Memory
from vaultmind.queue.failures import BACKOFF, FailureClass, JobFailure, classify
from vaultmind.queue.kinds import JobContext, JobKind
from vaultmind.queue.reconcile import REQUEUE_FAILED_AFTER_MS, reconcile
from vaultmind.queue.status import queue_status
from vaultmind.queue.store import (
    NewJob,
    cancel,
    claim,
    complete,
    enqueue,
    fail,
    get_job,
    now_ms,
    release_running,
    retry,
)
from vaultmind.queue.workers import QueueSettings, WorkerPool, default_kinds

from .conftest import WAIT_S, until
from .test_admission import BORDERLINE, CHAT, MESSAGES, chat_note, make_config

T0 = 1_700_000_000_000  # a fixed clock, in epoch ms


@pytest.fixture
def index() -> Iterator[Index]:
    idx = Index.open(None)
    yield idx
    idx.close()


def add(index: Index, *keys: str, kind: str = "test", max_attempts: int = 3) -> int:
    with index.transaction() as con:
        return enqueue(con, [NewJob(kind, k, {"key": k}, max_attempts=max_attempts) for k in keys], now=T0)


# -- store: enqueue, claim, lease, settle --------------------------------------------------------


def test_dedupe_while_queued_running_or_failed_and_free_after_done(index: Index) -> None:
    assert add(index, "a", "a", "b") == 2
    assert add(index, "a") == 0
    job = claim(index, now=T0, kinds=["test"])
    assert job is not None and job.dedupe_key == "a"
    assert add(index, "a") == 0  # running
    assert complete(index, job, now=T0) == "done"
    assert add(index, "a") == 1  # the key is free again
    b = claim(index, now=T0)
    assert b is not None and b.dedupe_key == "b"
    assert fail(index, b, "unrecoverable", "bad", now=T0) == "failed"
    assert add(index, "b") == 0  # parked: waits for `vaultmind retry`, not for a duplicate


def test_enqueue_adds_only_the_keys_without_a_job_with_their_payloads(index: Index) -> None:
    assert add(index, "a", "b") == 2
    assert add(index, "b", "c", "a", "d", "c") == 2
    rows = index.query("SELECT dedupe_key, payload, status FROM jobs ORDER BY dedupe_key, id")
    assert rows == [(k, f'{{"key": "{k}"}}', "ready") for k in "abcd"]


def test_claim_gives_a_lease_and_only_its_token_settles(index: Index) -> None:
    add(index, "a")
    job = claim(index, now=T0, lease_s=60)
    assert job is not None
    assert (job.status, job.attempts, job.lease_until) == ("running", 1, T0 + 60_000)
    assert claim(index, now=T0) is None  # nothing else ready
    forged = replace(job, lease_token="not-mine")
    assert complete(index, forged, now=T0) == "refused"
    assert fail(index, forged, "transient", "x", now=T0) == "refused"
    assert get_job(index, job.id).status == "running"  # type: ignore[union-attr]
    assert complete(index, job, now=T0) == "done"
    assert complete(index, job, now=T0) == "refused"  # settled once only


def test_crash_lease_expires_and_the_job_is_reclaimed_exactly_once(index: Index) -> None:
    add(index, "a")
    first = claim(index, now=T0, lease_s=30)
    assert first is not None  # … and the worker "dies" here without settling
    assert claim(index, now=T0 + 29_000) is None  # the lease still holds
    second = claim(index, now=T0 + 31_000, lease_s=30)
    assert second is not None and second.id == first.id and second.attempts == 2
    assert claim(index, now=T0 + 31_000) is None  # re-claimed once, not twice
    assert complete(index, first, now=T0 + 32_000) == "refused"  # the dead worker's token is void
    assert complete(index, second, now=T0 + 32_000) == "done"
    assert claim(index, now=T0 + 3_600_000) is None


def test_expired_lease_with_attempts_spent_is_parked(index: Index) -> None:
    add(index, "a", max_attempts=1)
    assert claim(index, now=T0, lease_s=1) is not None
    assert claim(index, now=T0 + 2000) is None
    rows = index.query("SELECT status, failure_class, last_error FROM jobs")
    assert rows[0][0] == "failed" and rows[0][1] == "transient" and "lease expired" in rows[0][2]


def test_startup_releases_jobs_left_running(index: Index) -> None:
    add(index, "a")
    assert claim(index, now=T0, lease_s=3600) is not None
    assert release_running(index, now=T0 + 1) == 1
    again = claim(index, now=T0 + 1)
    assert again is not None and again.attempts == 2


def test_a_job_that_kills_the_process_at_every_start_is_parked_once_its_attempts_are_spent(
    index: Index, tmp_path: Path
) -> None:
    add(index, "a", max_attempts=2)
    for start in range(2):  # each start claims it, and the process dies (kill -9) mid-job
        job = claim(index, now=T0 + start * 1000, lease_s=3600)
        assert job is not None and job.attempts == start + 1
        assert release_running(index, now=T0 + start * 1000 + 500) == 1  # the next start
    assert claim(index, now=T0 + 10_000) is None  # parked, not claimed a third time
    rows = index.query("SELECT status, attempts, failure_class, last_error FROM jobs")
    assert rows[0][:3] == ("failed", 2, "unrecoverable") and "released at start-up" in rows[0][3]
    later = T0 + 10_000 + REQUEUE_FAILED_AFTER_MS + 1
    assert reconcile(index, load_config(tmp_path, embed_provider="none"), [], now=later)["requeued"] == 0  # no fresh attempts 3 h on
    assert claim(index, now=later) is None
    assert retry(index, now=later) == {"requeued": 1, "ids": [job.id]}  # `vaultmind retry` frees it


def test_reconcile_gives_a_transient_failure_fresh_attempts_after_a_while_and_an_unrecoverable_none(
    index: Index, tmp_path: Path
) -> None:
    add(index, "flaky", "broken", max_attempts=1)
    for _ in range(2):
        job = claim(index, now=T0)
        assert job is not None
        failure_class: FailureClass = "transient" if job.dedupe_key == "flaky" else "unrecoverable"
        assert fail(index, job, failure_class, "it failed", now=T0) == "failed"
    config = load_config(tmp_path, embed_provider="none")
    assert reconcile(index, config, [], now=T0 + REQUEUE_FAILED_AFTER_MS - 1)["requeued"] == 0  # not yet
    assert reconcile(index, config, [], now=T0 + REQUEUE_FAILED_AFTER_MS + 1)["requeued"] == 1
    rows = index.query("SELECT dedupe_key, status, attempts FROM jobs ORDER BY dedupe_key")
    assert rows == [("broken", "failed", 1), ("flaky", "ready", 0)]


def test_concurrent_claims_never_hand_out_a_job_twice(index: Index) -> None:
    add(index, *[f"k{i:02d}" for i in range(30)])
    got: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        while (job := claim(index, now=T0)) is not None:
            with lock:
                got.append(job.id)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == sorted(set(got)) and len(got) == 30


@pytest.mark.parametrize(
    ("failure", "outcome", "attempts", "delay_s"),
    [
        ("lock_busy", "deferred", 0, 1),
        ("transient_io", "retry", 1, 30),
        ("disk_full", "deferred", 0, 300),
        ("corrupt_index", "deferred", 0, 300),
        ("read_only_vault", "deferred", 0, 300),
        ("llm_unreachable", "deferred", 0, 30),
        ("transient", "retry", 1, 60),
        ("unrecoverable", "failed", 1, 0),
    ],
)
def test_backoff_per_failure_class(
    index: Index, failure: Any, outcome: str, attempts: int, delay_s: int
) -> None:
    add(index, "a", max_attempts=5)
    job = claim(index, now=T0)
    assert job is not None
    assert fail(index, job, failure, f"boom: {failure}", now=T0) == outcome
    row = get_job(index, job.id)
    assert row is not None
    assert row.attempts == attempts and row.failure_class == failure and row.last_error == f"boom: {failure}"
    if outcome == "failed":
        assert row.status == "failed"
        return
    assert row.status == "ready" and row.available_at == T0 + delay_s * 1000
    assert claim(index, now=T0 + delay_s * 1000 - 1) is None
    again = claim(index, now=T0 + delay_s * 1000)
    assert again is not None
    fail(index, again, failure, "again", now=T0)
    second = get_job(index, job.id)
    assert second is not None
    assert second.available_at - T0 == int(min(BACKOFF[failure].cap_s, delay_s * 2) * 1000)


def test_counted_failures_run_out_and_deferrals_never_do(index: Index) -> None:
    add(index, "a", max_attempts=3)
    now = T0
    for _ in range(10):  # Ollama down for a long time: no attempt is burned
        job = claim(index, now=now)
        assert job is not None
        assert fail(index, job, "llm_unreachable", "down", now=now) == "deferred"
        now = get_job(index, job.id).available_at  # type: ignore[union-attr]
    assert get_job(index, job.id).attempts == 0  # type: ignore[union-attr]
    outcomes = []
    for _ in range(3):
        job = claim(index, now=now)
        assert job is not None
        outcomes.append(fail(index, job, "transient", "flaky", now=now))
        now = get_job(index, job.id).available_at  # type: ignore[union-attr]
    assert outcomes == ["retry", "retry", "failed"]


def test_classify_maps_errors_to_classes() -> None:
    assert classify(OSError(errno.ENOSPC, "No space left on device")) == "disk_full"
    assert classify(OSError(errno.EROFS, "Read-only file system")) == "read_only_vault"
    assert classify(OSError(errno.EIO, "Input/output error")) == "transient_io"
    assert classify(IndexBusy("busy")) == "lock_busy"
    assert classify(IndexCorrupt("bad")) == "corrupt_index"
    assert classify(duckdb.IOException("IO Error: could not read")) == "transient_io"
    assert classify(duckdb.IOException("Could not set lock on file: Conflicting lock")) == "lock_busy"
    assert classify(duckdb.SerializationException("Serialization Error: corrupt block")) == "corrupt_index"
    assert classify(LlmUnreachable("down")) == "llm_unreachable"
    assert classify(LlmTransient("slow")) == "transient"
    assert classify(LlmUnrecoverable("no model")) == "unrecoverable"
    assert classify(JobFailure("unrecoverable", "bad payload")) == "unrecoverable"
    try:
        try:
            raise OSError(errno.ENOSPC, "full")
        except OSError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert classify(outer) == "disk_full"  # through the cause chain
    assert classify(ValueError("a bug")) == "transient"  # unknown: bounded by max_attempts


def test_retry_requeues_failed_deferred_or_one_job(index: Index) -> None:
    add(index, "a", "b", "c")
    a, b, c = (claim(index, now=T0) for _ in range(3))
    assert a and b and c
    fail(index, a, "unrecoverable", "model missing", now=T0)
    fail(index, b, "llm_unreachable", "down", now=T0)
    fail(index, c, "unrecoverable", "model missing", now=T0)
    assert retry(index, now=T0, job_id=a.id) == {"requeued": 1, "ids": [a.id]}
    assert retry(index, now=T0) == {"requeued": 1, "ids": [c.id]}  # failed only
    assert retry(index, now=T0, deferred=True) == {"requeued": 1, "ids": [b.id]}
    assert queue_status(index, now=T0)["ready"] == 3


def test_retry_of_a_cancelled_job_whose_work_was_queued_again_does_it_once(index: Index) -> None:
    add(index, "a")
    (first,) = (int(r[0]) for r in index.query("SELECT id FROM jobs"))
    with index.transaction() as con:
        assert cancel(con, [first], "its leaf went away", now=T0) == 1
    assert add(index, "a") == 1  # the leaf came back: a reconcile enqueues its key again
    (again,) = (int(r[0]) for r in index.query("SELECT id FROM jobs WHERE status = 'ready'"))
    result = retry(index, now=T0 + 1, job_id=first)
    assert result["requeued"] == 0 and f"#{again} now (ready)" in result["note"]
    assert index.query("SELECT id, status FROM jobs ORDER BY id") == [(first, "cancelled"), (again, "ready")]
    with index.transaction() as con:  # with no other job of its key, the cancelled one is requeued
        con.execute("DELETE FROM jobs WHERE id = ?", [again])
    assert retry(index, now=T0 + 2, job_id=first) == {"requeued": 1, "ids": [first]}


def test_queue_status_reports_depth_and_causes(index: Index) -> None:
    add(index, "a", "b", "c")
    a, b = claim(index, now=T0), claim(index, now=T0)
    assert a and b
    fail(index, a, "llm_unreachable", "cannot connect to Ollama", now=T0)
    fail(index, b, "unrecoverable", "no model 'llama3.2'", now=T0)
    status = queue_status(index, now=T0)
    assert (status["depth"], status["ready"], status["deferred"], status["failed"]) == (2, 1, 1, 1)
    assert status["health"] == "error"
    causes = {(c["state"], c["failure_class"]): c for c in status["causes"]}
    assert causes[("deferred", "llm_unreachable")]["error"] == "cannot connect to Ollama"
    assert "ollama serve" in causes[("deferred", "llm_unreachable")]["meaning"]
    assert "vaultmind retry" in causes[("failed", "unrecoverable")]["meaning"]


def test_one_unrecoverable_failure_among_many_larger_causes_is_an_error_and_listed(index: Index) -> None:
    """Causes list the ten largest groups; health is read from every job, and a failure that
    needs you is listed first, however many larger groups of deferrals there are."""
    keys = [f"k{i:02d}" for i in range(23)]
    add(index, *keys)
    jobs = [claim(index, now=T0) for _ in keys]
    for i in range(11):
        for job in jobs[2 * i : 2 * i + 2]:
            assert job is not None
            fail(index, job, "llm_unreachable", f"deferred cause {i}", now=T0)
    assert jobs[22] is not None
    fail(index, jobs[22], "unrecoverable", "no model 'llama3.2'", now=T0)
    status = queue_status(index, now=T0)
    assert status["health"] == "error"
    assert len(status["causes"]) == 10
    assert status["causes"][0]["failure_class"] == "unrecoverable"
    assert status["first_cause"] == "no model 'llama3.2'"


# -- the worker pool with a plain job kind -----------------------------------------------------------


def test_worker_pool_runs_jobs_in_threads_and_settles_errors(tmp_path: Path, index: Index) -> None:
    seen: list[str] = []

    def run(ctx: JobContext, job: Any) -> str | None:
        key = job.payload()["key"]
        if key == "bad":
            raise JobFailure("unrecoverable", "cannot do bad")
        seen.append(key)
        return None

    config = load_config(tmp_path, embed_provider="none")
    pool = WorkerPool(
        config, index=index, kinds=[JobKind("test", run)], settings=QueueSettings(workers=2, poll_s=0.02)
    )
    add(index, "x", "y", "bad")
    pool.start()
    try:
        for _ in range(200):
            if queue_status(index)["depth"] == 0:
                break
            threading.Event().wait(0.02)
    finally:
        pool.stop(timeout_s=5)
    assert sorted(seen) == ["x", "y"]
    status = queue_status(index)
    assert (status["done"], status["failed"]) == (2, 1)
    assert status["causes"][0]["error"] == "cannot do bad"


def test_a_job_still_running_when_the_pool_stops_is_put_back_and_never_lost(tmp_path: Path, index: Index) -> None:
    """The stop's wait runs out while a job blocks: the job is ready again, its attempt not
    counted, its last error saying why, and the blocked worker's late settlement changes
    nothing. It was left marked running, taken at each next start for a dead process's job
    with an attempt spent, and parked as unrecoverable once they ran out: lost until a retry."""
    blocking = [True]
    started, release = threading.Event(), threading.Event()
    finished: list[int] = []

    def run(ctx: JobContext, job: Any) -> str | None:
        if blocking[0]:
            started.set()
            release.wait(60)
        finished.append(job.id)
        return None

    config = load_config(tmp_path, embed_provider="none")
    add(index, "slow", max_attempts=2)
    stopped: list[WorkerPool] = []
    for _ in range(3):  # more stops than the job has attempts
        started.clear()
        pool = WorkerPool(config, index=index, kinds=[JobKind("test", run)], settings=QueueSettings(workers=1, poll_s=0.02))
        pool.start()
        assert started.wait(30)
        pool.stop(timeout_s=0.2)
        stopped.append(pool)
        (job,) = index.query("SELECT status, attempts, failure_class, last_error FROM jobs")
        assert job[:3] == ("ready", 0, None) and "put back by a stop" in job[3]
        assert queue_status(index)["ready"] == 1
    release.set()  # the blocked workers end now: their settlements are refused
    assert until(lambda: [p.counts["refused"] for p in stopped] == [1, 1, 1]), [p.counts for p in stopped]
    assert len(finished) == 3 and sum(p.counts["done"] for p in stopped) == 0
    assert index.query("SELECT status, attempts FROM jobs") == [("ready", 0)]
    blocking[0] = False
    pool = WorkerPool(config, index=index, kinds=[JobKind("test", run)])
    assert pool.drain(timeout_s=20) == 1
    assert index.query("SELECT status FROM jobs") == [("done",)]


def test_unknown_kinds_are_never_claimed(tmp_path: Path, index: Index) -> None:
    add(index, "a", kind="retired_kind")
    pool = WorkerPool(load_config(tmp_path), index=index, kinds=[JobKind("test", lambda c, j: None)])
    assert pool.run_once() is False
    assert queue_status(index)["ready"] == 1


def test_a_closed_llm_gate_is_probed_by_one_job_per_backoff(tmp_path: Path, index: Index) -> None:
    """Ollama down with a long queue: one job finds out, the gate closes, and no other LLM job
    is claimed until the backoff has passed; then one job probes again. Plain jobs go on."""
    clock = [T0]
    tried: list[str] = []
    up = [False]

    def ask_llm(ctx: JobContext, job: Any) -> str | None:
        tried.append(job.payload()["key"])
        if not up[0]:
            raise LlmUnreachable("cannot connect to Ollama")
        ctx.model_answered()  # (as the chat client does when the model answers)
        return None

    kinds = [JobKind("llm", ask_llm, llm_bound=True), JobKind("test", lambda c, j: None)]
    pool = WorkerPool(load_config(tmp_path), index=index, kinds=kinds, clock=lambda: clock[0])
    add(index, *(f"q{i}" for i in range(50)), kind="llm")
    assert pool.drain(timeout_s=20) == 1  # the first job finds Ollama down
    assert pool.status()["llm_gate"] == "closed" and len(tried) == 1
    add(index, "plain")
    assert pool.drain(timeout_s=20) == 1  # work without the LLM is not held up
    untouched = index.scalar("SELECT count(*) FROM jobs WHERE kind = 'llm' AND attempts = 0 AND defers = 0")
    assert untouched == 49

    clock[0] += int(BACKOFF["llm_unreachable"].delay_s(1) * 1000) + 1
    assert pool.drain(timeout_s=20) == 1  # one probe after the backoff, still down: closed again
    assert len(tried) == 2 and pool.status()["llm_gate"] == "closed"

    up[0] = True
    clock[0] += int(BACKOFF["llm_unreachable"].delay_s(2) * 1000) + 1
    assert pool.drain(timeout_s=20) == 50  # the probe succeeds: the gate opens for every job
    assert pool.status()["llm_gate"] == "open" and sorted(set(tried)) == sorted(f"q{i}" for i in range(50))
    assert queue_status(index)["depth"] == 0


def test_a_model_that_answered_opens_the_gate_though_its_job_then_failed(tmp_path: Path, index: Index) -> None:
    """Ollama back after an outage: the probe's model answers, but the job then fails on what
    it said (an answer it cannot use, retried later). Ollama is there: the gate opens, its
    backoff back at the shortest, as after any answer. Before, only a job that ended well
    opened it: the gate stayed as down, each next LLM job probing alone, and the next outage
    closed it for a doubled backoff."""
    clock = [T0]
    ollama = ["down"]

    def ask_llm(ctx: JobContext, job: Any) -> str | None:
        if ollama[0] == "down":
            raise LlmUnreachable("cannot connect to Ollama")
        ctx.model_answered()
        raise LlmTransient("the model's answer is no JSON object")

    pool = WorkerPool(load_config(tmp_path), index=index, kinds=[JobKind("llm", ask_llm, llm_bound=True)], clock=lambda: clock[0])
    add(index, "q0", "q1", kind="llm")
    assert pool.run_once() and pool.status()["llm_gate"] == "closed"  # the first try finds Ollama down
    clock[0] += int(BACKOFF["llm_unreachable"].delay_s(1) * 1000) + 1
    ollama[0] = "answers"
    assert pool.run_once()  # the probe: the model answers, the job fails and is retried later
    assert index.scalar("SELECT count(*) FROM jobs WHERE last_error LIKE '%no JSON%'") == 1
    ollama[0] = "down"
    assert pool.run_once() and pool.status()["llm_gate"] == "closed"  # a new outage
    clock[0] += int(BACKOFF["llm_unreachable"].delay_s(1) * 1000) + 1
    assert pool.status()["llm_gate"] == "open"  # closed for the shortest backoff, not twice that
    pool.close()


def test_one_job_probes_a_gate_whose_backoff_passed_while_the_other_workers_wait(tmp_path: Path, index: Index) -> None:
    """With room for several LLM calls (`llm_concurrency` 3), a worker that finds the probe
    running claims no LLM job, and leaves the probe's mark as it was: it had cleared it, so the
    next worker started a second probe of an Ollama that is down."""
    clock = [T0]
    tried: list[str] = []
    probing, release = threading.Event(), threading.Event()

    def ask_llm(ctx: JobContext, job: Any) -> str | None:
        tried.append(job.payload()["key"])
        if len(tried) == 1:
            raise LlmUnreachable("cannot connect to Ollama")
        probing.set()
        release.wait(30)  # the probe waits for Ollama's answer
        ctx.model_answered()
        return None

    settings = QueueSettings(llm_concurrency=3)
    pool = WorkerPool(load_config(tmp_path), index=index, kinds=[JobKind("llm", ask_llm, llm_bound=True)], settings=settings, clock=lambda: clock[0])
    add(index, *(f"q{i}" for i in range(5)), kind="llm")
    assert pool.drain(timeout_s=20) == 1 and pool.status()["llm_gate"] == "closed"
    clock[0] += int(BACKOFF["llm_unreachable"].delay_s(1) * 1000) + 1
    probe = threading.Thread(target=pool.run_once, daemon=True)
    probe.start()
    try:
        assert probing.wait(30)
        assert pool.run_once() is False  # the probe runs: this worker waits
        assert pool.run_once() is False, "a second probe started"
        assert len(tried) == 2
    finally:
        release.set()
        probe.join(30)
    assert pool.status()["llm_gate"] == "open"


# -- the gray band against a fake Ollama (real client) -------------------------------------------------


def json_responder(importance: float) -> Any:
    def respond(request: RecordedRequest) -> str:
        return json.dumps({"importance": importance, "reason": "a personal event worth keeping"})

    return respond


def gray_vault(vault: Path) -> None:
    chat_note(vault, CHAT, MESSAGES)


def llm_config(vault: Path, host: str) -> Config:
    return make_config(vault, f'[ollama]\nhost = "{host}"\ntimeout_s = 5\n')


def gray_row(memory: Memory) -> tuple[Any, ...]:
    return memory.index.query(
        "SELECT a.decision, a.stage, a.llm_importance, a.reason FROM admission a JOIN leaves l "
        "ON l.id = a.leaf_id AND l.note_path = a.note_path WHERE l.text = ?",
        [BORDERLINE],
    )[0]


def test_gray_leaf_is_decided_once_and_the_answer_cached(vault: Path) -> None:
    gray_vault(vault)
    with (
        FakeOllama(responder=json_responder(0.8)) as fake,
        Memory.open(llm_config(vault, fake.host)) as memory,
    ):
        memory.sync()
        assert gray_row(memory)[0] == "gray"
        pool = WorkerPool(memory.config, memory)
        assert pool.drain(timeout_s=20) == 1
        pool.close()
        chats = fake.requests_to("/api/chat")
        assert len(chats) == 1
        body = chats[0].body
        assert body["model"] == "llama3.2" and body["stream"] is False and body["format"]["type"] == "object"
        assert body["options"]["temperature"] == 0 and BORDERLINE in body["messages"][-1]["content"]
        decision, stage, importance, reason = gray_row(memory)
        assert (decision, stage, importance) == ("admitted", "llm", 0.8)
        assert "LLM importance 0.80" in reason and "ollama:llama3.2" in reason
        rows = memory.index.query("SELECT * FROM admission ORDER BY leaf_id")

        memory.reindex()  # the cache survives; the deriver consults it
        assert memory.index.query("SELECT * FROM admission ORDER BY leaf_id") == rows
        write_copy = vault / "sources/chat/slack/acme/general/copy.md"
        write_copy.write_text((vault / CHAT).read_text(encoding="utf-8"), encoding="utf-8")
        memory.sync()  # same content elsewhere: decided from the cache
        assert pool.reconcile()["created"] == 0
        assert pool.drain(timeout_s=5) == 0
        assert len(fake.requests_to("/api/chat")) == 1  # never asked twice
        pool.close()
        assert memory.index.scalar("SELECT count(*) FROM admission WHERE stage = 'llm'") == 2


def test_no_ollama_decides_the_gray_band_by_rules_and_the_queue_stays_healthy(vault: Path) -> None:
    """No Ollama at the host (none installed): the gray leaf's job finds nothing to ask and
    decides it by the rules, as `[admission] llm = false` would, the reason saying why; the
    queue is healthy, status counts it as decided by rules. Before, the leaf stayed gray and
    held back from the trees, and the queue said "degraded" from the first `serve`. With
    Ollama there, the next gray leaf is the LLM's to decide."""
    gray_vault(vault)
    with Memory.open(llm_config(vault, f"http://127.0.0.1:{free_port()}")) as memory:
        stats = memory.sync()
        assert stats.leaves_written == 4
        with WorkerPool(memory.config, memory) as pool:
            assert pool.drain(timeout_s=20) == 1
            assert pool.status()["llm_gate"] == "closed"  # it reached no LLM
        decision, stage, importance, reason = gray_row(memory)
        assert (decision, stage, importance) == ("admitted", "fallback", None)
        assert reason.startswith("LLM not reachable at http://127.0.0.1:") and "admission by rules" in reason
        assert memory.index.query("SELECT status, attempts, failure_class FROM jobs") == [("done", 1, None)]
        status = queue_status(memory.index)
        assert status["health"] == "ok" and status["causes"] == []
        assert memory.status()["admission"]["by_rules"] == 1
        chat_note(vault, CHAT.replace("2024-03-04", "2024-03-05"), [(who, text.replace("deer", "geese"), "") for who, text, _ in MESSAGES])
        assert memory.sync().added == 1

    with (
        FakeOllama(responder=json_responder(0.2)) as fake,
        Memory.open(llm_config(vault, fake.host)) as memory,
    ):
        with WorkerPool(memory.config, memory) as pool:
            pool.drain(timeout_s=20)
        assert len(fake.requests_to("/api/chat")) == 1  # the new gray leaf, not the decided one
        assert gray_row(memory)[:2] == ("admitted", "fallback")
        assert memory.index.scalar("SELECT count(*) FROM admission WHERE stage = 'llm' AND decision = 'dropped'") == 1


def ask_for_a_summary(ctx: JobContext, job: Any) -> str | None:
    """An LLM job of another kind (a summary's, say): it needs the model's answer, or waits."""
    ctx.chat().chat_json("Summarise.", str(job.payload()["key"]))
    return None


def test_a_closed_llm_gate_leaves_no_gray_leaf_undecided(vault: Path) -> None:
    """The gate closed by another LLM job that found Ollama down: the gray leaf's job is still
    claimed and decides it by the rules, asking nothing, and the gate stays closed. Before, no
    worker claimed it while the gate was closed, and the leaf stayed gray, out of the trees."""
    host = f"http://127.0.0.1:{free_port()}"
    config = make_config(vault, f'[ollama]\nhost = "{host}"\ntimeout_s = 5\n\n[trees]\nsummarizer = "ollama"\n')
    with Memory.open(config) as memory:
        kinds = [*default_kinds(), JobKind("summary", ask_for_a_summary, llm_bound=True)]
        with WorkerPool(memory.config, memory, kinds=kinds) as pool:
            with memory.index.transaction() as con:
                enqueue(con, [NewJob("summary", "s1", {"key": "s1"})], now=now_ms())
            assert pool.drain(timeout_s=20) == 1 and pool.status()["llm_gate"] == "closed"
            gray_vault(vault)
            memory.sync()
            assert pool.drain(timeout_s=20) == 1
            assert pool.status()["llm_gate"] == "closed"
        decision, stage, _, reason = gray_row(memory)
        assert (decision, stage) == ("admitted", "fallback") and reason.startswith(f"LLM not reachable at {host}")
        assert memory.index.query("SELECT kind, status FROM jobs ORDER BY id") == [("summary", "ready"), ("llm_importance", "done")]
        assert memory.status()["admission"]["gray"] == 0


def test_while_the_gate_is_closed_gray_leaves_ask_nothing_and_a_probe_that_reaches_ollama_reopens_it(vault: Path) -> None:
    """Ollama found down by another job: the gray leaf is decided by the rules without a
    request; once the backoff has passed, the next gray leaf's job probes, the model answers,
    the LLM decides it and the gate opens again."""
    clock = [now_ms()]

    def summary_finds_no_ollama(ctx: JobContext, job: Any) -> str | None:
        raise LlmUnreachable("cannot connect to Ollama")

    with FakeOllama(responder=json_responder(0.2)) as fake, Memory.open(llm_config(vault, fake.host)) as memory:
        kinds = [*default_kinds(), JobKind("summary", summary_finds_no_ollama, llm_bound=True)]
        with WorkerPool(memory.config, memory, kinds=kinds, clock=lambda: clock[0]) as pool:
            with memory.index.transaction() as con:
                enqueue(con, [NewJob("summary", "s1", {"key": "s1"})], now=clock[0])
            assert pool.drain(timeout_s=20) == 1 and pool.status()["llm_gate"] == "closed"
            gray_vault(vault)
            memory.sync()
            clock[0] = now_ms()  # the gray leaf's job is due; the gate's backoff has not passed
            assert pool.drain(timeout_s=20) == 1
            assert pool.status()["llm_gate"] == "closed" and fake.requests_to("/api/chat") == []
            assert gray_row(memory)[:2] == ("admitted", "fallback")
            chat_note(vault, CHAT.replace("2024-03-04", "2024-03-05"), [(who, text.replace("deer", "geese"), "") for who, text, _ in MESSAGES])
            memory.sync()
            clock[0] += int(BACKOFF["llm_unreachable"].delay_s(1) * 1000) + 1
            assert pool.run_once()  # the probe: the gray leaf's job, first in claim order
            assert len(fake.requests_to("/api/chat")) == 1 and pool.status()["llm_gate"] == "open"
        assert memory.index.scalar("SELECT count(*) FROM admission WHERE stage = 'llm' AND decision = 'dropped'") == 1


def test_a_gray_leaf_decided_by_rules_keeps_the_gate_closed(vault: Path) -> None:
    """The gray leaf's job found no Ollama and decided it by the rules: it reached no LLM, so
    the gate closes as after any unreachable Ollama, and the next LLM job waits for the
    backoff. Before, the job counted as an answer and re-opened the gate: every such job let
    the other LLM jobs knock at the absent Ollama again."""
    gray_vault(vault)
    with Memory.open(llm_config(vault, f"http://127.0.0.1:{free_port()}")) as memory:
        memory.sync()
        kinds = [*default_kinds(), JobKind("summary", ask_for_a_summary, llm_bound=True)]
        with WorkerPool(memory.config, memory, kinds=kinds) as pool:
            assert pool.drain(timeout_s=20) == 1
            assert gray_row(memory)[:2] == ("admitted", "fallback")
            assert pool.status()["llm_gate"] == "closed"
            with memory.index.transaction() as con:
                enqueue(con, [NewJob("summary", "s1", {"key": "s1"})], now=now_ms())
            assert pool.drain(timeout_s=20) == 0  # not claimed before the backoff has passed
        assert memory.index.query("SELECT status, attempts FROM jobs WHERE kind = 'summary'") == [("ready", 0)]


def test_an_llm_job_that_ends_without_asking_leaves_the_gate_to_the_next_probe(tmp_path: Path, index: Index) -> None:
    """Ollama down: after the backoff, the probe claimed is a job that ends without asking the
    model (stale: its model or prompt changed; a cached answer; its target gone). It proves
    nothing, so the gate stays as it was: the next LLM job probes, finds Ollama still down, and
    the gate closes for the next, longer backoff. Before, such a job re-opened the gate and
    reset its backoff: every LLM job knocked at the absent Ollama again, the backoff back at
    its shortest."""
    clock = [T0]
    config = load_config(tmp_path)
    kinds = [*default_kinds(), JobKind("summary", ask_for_a_summary, llm_bound=True)]
    config = replace(config, ollama_host=f"http://127.0.0.1:{free_port()}", ollama_timeout_s=5.0)
    pool = WorkerPool(config, index=index, kinds=kinds, clock=lambda: clock[0])
    with index.transaction() as con:
        enqueue(con, [NewJob("summary", "s1", {"key": "s1"})], now=T0)
    assert pool.drain(timeout_s=20) == 1 and pool.status()["llm_gate"] == "closed"  # Ollama is down
    clock[0] += int(BACKOFF["llm_unreachable"].delay_s(1) * 1000) + 1
    with index.transaction() as con:  # a gray leaf's job for a model no longer configured: stale
        enqueue(con, [importance_job("an-old-model", "0" * 64)], now=clock[0])
    assert pool.run_once()  # the probe: the importance job, first in claim order
    assert index.scalar("SELECT last_error FROM jobs WHERE kind = 'llm_importance'").startswith("stale")
    assert pool.run_once()  # so the summary probes next, and finds Ollama still down
    assert index.scalar("SELECT defers FROM jobs WHERE kind = 'summary'") == 2
    clock[0] += int(BACKOFF["llm_unreachable"].delay_s(1) * 1000) + 1
    assert pool.status()["llm_gate"] == "closed"  # the second backoff, twice as long
    pool.close()


def test_a_connect_that_times_out_is_no_ollama_either(vault: Path) -> None:
    """A host that never accepts is as absent as one that refuses: the gray leaf is decided by
    the rules instead of failing after five full timeouts."""
    gray_vault(vault)
    with silent_host() as host, Memory.open(make_config(vault, f'[ollama]\nhost = "{host}"\ntimeout_s = 1\n')) as memory:
        memory.sync()
        with WorkerPool(memory.config, memory) as pool:
            assert pool.drain(timeout_s=20) == 1
        assert gray_row(memory)[:2] == ("admitted", "fallback")
        assert queue_status(memory.index)["health"] == "ok"


def test_a_job_whose_llm_call_outlasts_lease_s_is_never_claimed_twice(vault: Path) -> None:
    """`[queue] lease_s` shorter than an answer: the lease still outlasts the LLM call (at
    least twice `[ollama] timeout_s`), so a second worker does not take the job for a dead
    worker's and ask the model again."""
    gray_vault(vault)
    with (
        FakeOllama(responder=json_responder(0.9), delay_s=1.5) as fake,
        Memory.open(llm_config(vault, fake.host)) as memory,
    ):
        memory.sync()
        settings = QueueSettings(workers=2, llm_concurrency=2, lease_s=0.3, poll_s=0.02)
        pool = WorkerPool(memory.config, memory, settings=settings)
        _work_until_empty(memory, pool, tries=400)
        assert len(fake.requests_to("/api/chat")) == 1
        assert pool.status()["processed"]["refused"] == 0
        assert gray_row(memory)[0] == "admitted"


def test_llm_gate_full_means_no_llm_job_is_claimed(vault: Path) -> None:
    gray_vault(vault)
    with Memory.open(make_config(vault)) as memory:
        memory.sync()
        pool = WorkerPool(memory.config, memory)
        assert pool._llm.acquire(blocking=False)  # another worker holds the only LLM permit
        try:
            assert pool.run_once() is False  # nothing claimable without the LLM: no blocking, no defer
        finally:
            pool._llm.release()
        assert memory.index.query("SELECT status, attempts, defers FROM jobs") == [("ready", 0, 0)]


def test_llm_calls_run_without_holding_the_index_lock(vault: Path) -> None:
    gray_vault(vault)
    free: list[bool] = []
    holder: dict[str, Memory] = {}

    def respond(request: RecordedRequest) -> str:
        acquired = holder["memory"].index.lock.acquire(timeout=2)
        free.append(acquired)
        if acquired:
            holder["memory"].index.lock.release()
        return json.dumps({"importance": 0.9, "reason": "x"})

    with FakeOllama(responder=respond) as fake, Memory.open(llm_config(vault, fake.host)) as memory:
        holder["memory"] = memory
        memory.sync()
        pool = WorkerPool(memory.config, memory, settings=QueueSettings(workers=2, poll_s=0.02))
        _work_until_empty(memory, pool, tries=250)
        assert free == [True]
        assert gray_row(memory)[0] == "admitted"


def test_missing_model_fails_unrecoverable_with_a_hint(vault: Path) -> None:
    gray_vault(vault)
    with (
        FakeOllama(chat_models=("other-model",)) as fake,
        Memory.open(llm_config(vault, fake.host)) as memory,
    ):
        memory.sync()
        with WorkerPool(memory.config, memory) as pool:
            pool.drain(timeout_s=20)
        status = queue_status(memory.index)
        assert status["failed"] == 1 and status["health"] == "error"
        cause = status["causes"][0]
        assert cause["failure_class"] == "unrecoverable" and "llama3.2" in cause["error"]
        assert gray_row(memory)[0] == "gray"


def test_server_errors_are_retried_and_bad_answers_fall_back(vault: Path) -> None:
    gray_vault(vault)
    with (
        FakeOllama(responder=lambda r: "I think it matters a lot!", failure="500", failure_times=1) as fake,
        Memory.open(llm_config(vault, fake.host)) as memory,
    ):
        memory.sync()
        with WorkerPool(memory.config, memory) as pool:
            assert pool.drain(timeout_s=20) == 1
            job = memory.index.query("SELECT status, attempts, failure_class FROM jobs")[0]
            assert job == ("ready", 1, "transient")
            retry(memory.index, now=now_ms(), deferred=True)
            assert pool.drain(timeout_s=20) == 1
        decision, stage, importance, reason = gray_row(memory)
        assert stage == "fallback" and importance is None and "no usable answer" in reason
        assert decision in ("admitted", "dropped")
        answer = json.loads(memory.index.scalar("SELECT answer FROM llm_cache"))
        assert answer["error"] and "I think it matters" in answer["raw"]


def test_reconcile_recreates_lost_jobs_and_cancels_orphans(vault: Path) -> None:
    gray_vault(vault)
    with Memory.open(make_config(vault)) as memory:
        memory.sync()
        with memory.index.transaction() as con:
            con.execute("DELETE FROM jobs")  # e.g. the index was quarantined and rebuilt
        pool = WorkerPool(memory.config, memory)
        assert pool.reconcile()["created"] == 1
        assert pool.reconcile()["created"] == 0  # never duplicated
        (vault / CHAT).unlink()
        memory.sync()
        report = pool.reconcile()
        assert report["cancelled"] == 1
        assert memory.index.query("SELECT status FROM jobs") == [("cancelled",)]


def test_a_retry_of_a_job_whose_target_is_gone_says_so_rather_than_requeue_it(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`vaultmind retry ID` of a job cancelled because its leaf went away said "requeued 1 job",
    and the next `vaultmind queue` (its reconcile) cancelled it again. A job whose work is
    still wanted is requeued as before."""
    gray_vault(vault)
    with Memory.open(make_config(vault)) as memory:
        memory.sync()
        pool = WorkerPool(memory.config, memory)
        pool.reconcile()
        [(wanted_id,)] = memory.index.query("SELECT id FROM jobs")
        fail(memory.index, claim(memory.index, now=now_ms()), "unrecoverable", "model missing", now=now_ms())
    assert main(["retry", str(wanted_id), "--vault", str(vault), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"requeued": 1, "ids": [wanted_id]}
    (vault / CHAT).unlink()
    with Memory.open(make_config(vault)) as memory:
        memory.sync()
        assert WorkerPool(memory.config, memory).reconcile()["cancelled"] == 1
    assert main(["retry", str(wanted_id), "--vault", str(vault)]) == 0
    said = capsys.readouterr().out
    assert f"job #{wanted_id} (cancelled) has nothing to do: its target no longer exists" in said and "requeued" not in said, said
    assert main(["queue", "--vault", str(vault), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cancelled"] == 1
    with Memory.open(make_config(vault)) as memory:
        assert memory.index.query("SELECT status, last_error FROM jobs") == [("cancelled", "target no longer exists (cancelled by reconcile)")]


def test_a_retry_of_a_job_of_a_kind_this_vaultmind_does_not_run_says_so_rather_than_requeue_it(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A job of a kind no worker of this vaultmind claims (another version's): requeued by
    `vaultmind retry ID`, it said "requeued 1 job" and then sat ready for good, as no reconcile
    cancels a kind it does not know either."""
    from vaultmind.queue.store import NewJob, enqueue

    with Memory.open(make_config(vault)) as memory, memory.index.transaction() as con:
        enqueue(con, [NewJob("summarize_old", "summarize_old:n1", {})], now=now_ms())
        con.execute("UPDATE jobs SET status = 'failed'")
        [(job_id,)] = con.execute("SELECT id FROM jobs").fetchall()
    assert main(["retry", str(job_id), "--vault", str(vault)]) == 0
    said = capsys.readouterr().out
    assert f"job #{job_id} (failed) is of kind 'summarize_old', which this vaultmind does not run" in said, said
    assert "requeued" not in said, said
    with Memory.open(make_config(vault)) as memory:
        assert memory.index.query("SELECT status FROM jobs") == [("failed",)]


def test_reconcile_repairs_rows_from_a_warm_cache(vault: Path) -> None:
    gray_vault(vault)
    with (
        FakeOllama(responder=json_responder(0.7)) as fake,
        Memory.open(llm_config(vault, fake.host)) as memory,
    ):
        memory.sync()
        with memory.index.transaction() as con:  # an answer cached, rows not updated (interrupted run)
            from vaultmind.admission import importance

            content_hash = con.execute(
                "SELECT content_hash FROM admission WHERE decision = 'gray'"
            ).fetchone()
            assert content_hash is not None
            importance.store_answer(
                con, content_hash[0], "ollama:llama3.2", {"importance": 0.7, "reason": "r"}, T0
            )
        report = reconcile(memory.index, memory.config, WorkerPool(memory.config, memory).kinds, now=T0 * 2)
        assert report["repaired"] == 1 and report["cancelled"] == 1
        assert gray_row(memory)[:3] == ("admitted", "llm", 0.7)
        assert not fake.requests_to("/api/chat")


def test_queue_and_retry_commands(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gray_vault(vault)
    with FakeOllama(failure="500") as fake:  # Ollama fails: the job waits to be tried again
        llm_config(vault, fake.host)
        assert main(["queue", "--run", "--vault", str(vault), "--json", "--timeout", "30"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ran"] == 1 and report["deferred"] == 1 and report["admission"]["gray"] == 1
    assert main(["queue", "--list", "--vault", str(vault)]) == 0
    out = capsys.readouterr().out
    assert "deferred 1" in out and "transient" in out and "HTTP 500" in out and "llm_importance" in out
    assert main(["retry", "--all", "--vault", str(vault), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["requeued"] == 1
    assert main(["retry", "999", "--vault", str(vault)]) == 4


def test_queue_run_shows_its_progress(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`queue --run` works the queue in the foreground, up to 10 minutes of LLM calls, and had
    said nothing until it ended; it shows the jobs run against those ready when it started."""
    monkeypatch.setattr("vaultmind.cli.output.PROGRESS_AFTER_S", 0.0)  # (every run counts as long)
    gray_vault(vault)
    llm_config(vault, f"http://127.0.0.1:{free_port()}")
    assert main(["queue", "--run", "--vault", str(vault), "--json", "--timeout", "30"]) == 0
    captured = capsys.readouterr()
    ran = json.loads(captured.out)["ran"]
    assert ran >= 1 and f"vaultmind: queue jobs {ran}/{ran} (100%)" in captured.err, captured.err


# -- the chat wrapper -----------------------------------------------------------------------------------


def test_chat_json_parses_defensively() -> None:
    assert parse_json_object('{"importance": 0.5}') == {"importance": 0.5}
    assert parse_json_object('Sure! ```json\n{"importance": 0.5, "reason": "x"}\n``` done') == {
        "importance": 0.5,
        "reason": "x",
    }
    from vaultmind.llm.ollama_chat import LlmBadAnswer

    with pytest.raises(LlmBadAnswer):
        parse_json_object("no json here {broken")


def test_a_stop_that_gave_up_waiting_says_how_long_it_waited_not_its_bound(tmp_path: Path, index: Index) -> None:
    """A second Ctrl-C makes a stop give up its wait for a job still running: the job, put
    back, said "still running after 125 s" (the wait's bound, `[ollama] timeout_s` + 5) though
    the stop had not waited at all."""
    started, release = threading.Event(), threading.Event()

    def run(ctx: JobContext, job: Any) -> str | None:
        started.set()
        release.wait(WAIT_S)
        return None

    add(index, "slow")
    pool = WorkerPool(load_config(tmp_path, embed_provider="none"), index=index, kinds=[JobKind("test", run)], settings=QueueSettings(workers=1, poll_s=0.02))
    pool.start()
    hurry = threading.Event()
    hurry.set()  # the second Ctrl-C came already
    try:
        assert started.wait(WAIT_S)
        pool.stop(timeout_s=120.0, give_up=hurry)
        [(status, reason)] = index.query("SELECT status, last_error FROM jobs")
        found = re.search(r"still running after ([\d.]+) s", reason)
        assert status == "ready" and found is not None, reason
        assert float(found.group(1)) < 120.0, reason
    finally:
        release.set()
    assert until(lambda: pool.counts["refused"] == 1), pool.counts  # its worker's settlement, refused


def ask(host: str, timeout_s: float = 2.0) -> None:
    chat = OllamaChat("llama3.2", host=host, timeout_s=timeout_s)
    try:
        chat.chat_json("s", "u")
    finally:
        chat.close()


def test_chat_errors_are_classified() -> None:
    with pytest.raises(LlmUnreachable):
        ask(f"http://127.0.0.1:{free_port()}")
    with FakeOllama(failure="hang") as fake, pytest.raises(LlmTransient, match="did not answer"):
        ask(fake.host, 0.3)
    with FakeOllama(failure="garbage") as fake, pytest.raises(LlmTransient):
        ask(fake.host)
    with FakeOllama(chat_models=()) as fake, pytest.raises(LlmUnrecoverable, match="ollama pull"):
        ask(fake.host)


def test_backoff_stays_capped_after_thousands_of_failures() -> None:
    """The gate counts every failed try while Ollama is down; the delay stays at its cap."""
    backoff = BACKOFF["llm_unreachable"]
    assert backoff.delay_s(1) == backoff.base_s
    assert backoff.delay_s(5_000) == backoff.cap_s


def _work_until_empty(memory: Memory, pool: WorkerPool, *, tries: int) -> None:
    """Run `pool` until the queue is empty (`tries` polls of 20 ms at most), then stop it."""
    pool.start()
    try:
        for _ in range(tries):
            if queue_status(memory.index)["depth"] == 0:
                break
            threading.Event().wait(0.02)
    finally:
        pool.stop(timeout_s=10)


def test_a_stop_cuts_a_jobs_llm_call_at_once_and_puts_the_job_back_without_an_attempt(
    tmp_path: Path, index: Index
) -> None:
    """A keep-or-drop question in flight held `vaultmind stop` for up to `[ollama] timeout_s`
    + 5 s (a service manager's restart too); the summarizer's call was cut at once already."""

    def run(ctx: JobContext, job: Any) -> str | None:
        ctx.chat().chat([{"role": "user", "content": "keep or drop?"}])
        return None

    with FakeOllama(failure="hang") as fake:
        config = load_config(tmp_path, embed_provider="none").with_(ollama_host=fake.host, ollama_timeout_s=20.0)
        add(index, "slow", max_attempts=2)
        kind = JobKind("test", run, llm_bound=True)
        pool = WorkerPool(config, index=index, kinds=[kind], settings=QueueSettings(workers=1, poll_s=0.02))
        pool.start()
        assert until(lambda: len(fake.requests_to("/api/chat")) == 1)
        began = time.monotonic()
        pool.stop()
        assert time.monotonic() - began < 5
    (job,) = index.query("SELECT status, attempts, failure_class, last_error FROM jobs")
    assert job[:3] == ("ready", 0, None) and "given up for a stop" in job[3]
    assert pool.counts["refused"] == pool.counts["failed"] == pool.counts["retry"] == 0


def test_ctrl_c_in_a_job_of_queue_run_stops_the_run_and_counts_no_attempt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C in a job of `queue --run` (where it lands depends on DuckDB's threads) either
    stopped the run but left the job in hand (shown as running, an attempt counted, claimed
    again only once its lease ran out), or, turned by DuckDB into an error of its own, was
    taken for the job's failure while the run went on with every other job. The run stops
    now, and the job is put back, ready, with no attempt counted."""
    import signal

    import vaultmind.queue.workers as workers

    ran: list[str] = []

    def run(ctx: JobContext, job: Any) -> None:
        ran.append(job.dedupe_key)
        if len(ran) == 1:  # a real SIGINT while DuckDB runs a statement of this job
            ctx.index.con.create_function(
                "ctrl_c", lambda: signal.raise_signal(signal.SIGINT) or 0, [], "INTEGER", side_effects=True
            )
            ctx.index.query("SELECT ctrl_c()")

    vault = tmp_path / "vault"
    assert main(["init", str(vault)]) == 0
    with Index.open(vault / ".vaultmind" / "index.duckdb") as index:
        add(index, "a", "b", "c")
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    monkeypatch.setattr(workers, "default_kinds", lambda: (JobKind("test", run),))
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
    try:
        code = main(["queue", "--run", "--vault", str(vault), "--json"])
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert code == 130 and "interrupted" in capsys.readouterr().err
    assert ran == ["a"], ran
    with Index.open(vault / ".vaultmind" / "index.duckdb") as index:
        jobs = index.query("SELECT dedupe_key, status, attempts, failure_class FROM jobs ORDER BY dedupe_key")
    assert jobs == [("a", "ready", 0, None), ("b", "ready", 0, None), ("c", "ready", 0, None)], jobs
