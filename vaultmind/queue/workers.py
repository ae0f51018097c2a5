"""The worker pool: N threads that claim, run and settle jobs, with a bounded LLM gate.

    pool = WorkerPool(config, memory)   # or WorkerPool(config, index=index)
    pool.start()                        # releases leases left by a dead process, reconciles, starts threads
    pool.notify()                       # after a sync: wake idle workers now
    pool.stop()                         # finishes the jobs in hand, then returns

or `with WorkerPool(config, memory) as pool: pool.drain()` to work the queue in this thread.

DuckDB work (claim, handler reads and writes, settlement) is serialised by the Index lock and
kept short; LLM calls run without it. At most `queue.llm_concurrency` LLM calls run at
once, the summarizer's seals counted (`llm.slots`): a worker that cannot take an LLM permit *without waiting* claims only jobs that need no
LLM, so nothing ever blocks on the gate. When Ollama is unreachable the gate closes for a
backoff (30 s doubling to 10 min) and no LLM job is claimed; once the backoff has passed, one
job probes Ollama while the others wait for its outcome: an answer of the model reopens the
gate (a job that ended without asking, stale or answered from the cache, leaves the next job
to probe), a connection failure closes it for the next, longer backoff (a queue of 40k jobs is never
walked through one failed connection at a time). An LLM job whose kind can do without the LLM
(`JobKind.without_llm`: a gray admission leaf, decided by the rules) does so when its try finds
no Ollama, and is claimed while the gate is closed to do so at once: none waits for Ollama,
and none re-opens the gate (its try closes it as any unreachable Ollama does). A corrupt
index pauses the pool and is reported (the index is quarantined and rebuilt when it is next
opened: `vaultmind reindex`).

Settings (`[queue]` in `.vaultmind/config.toml`): `workers` (3), `llm_concurrency` (1),
`lease_s` (300; never less than twice `[ollama] timeout_s` + 60 s, so a job's slow LLM call
keeps its lease), `poll_s` (1.0), `reconcile_s` (600).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vaultmind.admission.importance import importance_kind
from vaultmind.admission.reask import reask_kind
from vaultmind.errors import ConfigError, by_ctrl_c
from vaultmind.index.allocator import release_freed_memory
from vaultmind.llm.ollama_chat import LlmCancelled
from vaultmind.llm.slots import llm_slots
from vaultmind.queue.failures import BACKOFF, classify
from vaultmind.queue.kinds import JobContext, JobKind
from vaultmind.queue.reconcile import reconcile
from vaultmind.queue.store import Job, claim, complete, fail, now_ms, put_back, release_running
from vaultmind.shell import command_line

if TYPE_CHECKING:
    from vaultmind.config import Config
    from vaultmind.index.store import Index
    from vaultmind.memory import Memory

log = logging.getLogger(__name__)

LEASE_MARGIN_S = 60.0  # a job's lease: at least twice the LLM timeout and this, whatever `lease_s` says
WAIT_STEP_S = 0.1  # a stop's wait looks this often whether it is told to give up


def join_within(threads: Sequence[threading.Thread], seconds: float, give_up: threading.Event | None = None) -> bool:
    """Wait up to `seconds` for `threads` to end, and no longer once `give_up` is set (a second
    Ctrl-C while the daemon stops). Whether they all ended."""
    deadline = time.monotonic() + seconds
    for thread in threads:
        while thread.is_alive() and not (give_up is not None and give_up.is_set()):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            thread.join(min(left, WAIT_STEP_S))
    return not any(thread.is_alive() for thread in threads)


@dataclass(frozen=True, slots=True)
class QueueSettings:
    workers: int = 3
    llm_concurrency: int = 1
    lease_s: float = 300.0
    poll_s: float = 1.0
    reconcile_s: float = 600.0

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> QueueSettings:
        def get(name: str, default: float, *, integer: bool) -> Any:
            value = extra.get(f"queue.{name}", default)
            ok = (
                not isinstance(value, bool)
                and isinstance(value, int if integer else int | float)
                and value > 0
            )
            if not ok:
                kind = "a positive integer" if integer else "a positive number"
                raise ConfigError(f"[queue] {name} = {value!r} must be {kind}", path=".vaultmind/config.toml")
            return value

        return cls(
            workers=get("workers", 3, integer=True),
            llm_concurrency=get("llm_concurrency", 1, integer=True),
            lease_s=float(get("lease_s", 300.0, integer=False)),
            poll_s=float(get("poll_s", 1.0, integer=False)),
            reconcile_s=float(get("reconcile_s", 600.0, integer=False)),
        )


def default_kinds() -> tuple[JobKind, ...]:
    """The kinds vaultmind ships, in claim order (downstream work first; a gray leaf waiting
    for the LLM before a decision by rules asked again)."""
    return (importance_kind(), reask_kind())


class WorkerPool:
    def __init__(
        self,
        config: Config,
        memory: Memory | None = None,
        *,
        index: Index | None = None,
        kinds: Sequence[JobKind] | None = None,
        settings: QueueSettings | None = None,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        if index is None:
            if memory is None:
                raise TypeError("WorkerPool needs a Memory or an Index")
            index = memory.index
        self.config = config
        self.index = index
        self.settings = settings or QueueSettings.from_extra(config.extra)
        self.kinds: tuple[JobKind, ...] = tuple(kinds) if kinds is not None else default_kinds()
        self._by_name = {k.name: k for k in self.kinds}
        self._order = [k.name for k in self.kinds]
        self._llm_kinds = [k.name for k in self.kinds if k.llm_bound]
        self._plain_kinds = [k.name for k in self.kinds if not k.llm_bound]
        self._without_llm_kinds = [k.name for k in self.kinds if k.llm_bound and k.without_llm is not None]
        self.clock = clock
        # A job makes one LLM call, bounded by `[ollama] timeout_s`: its lease outlasts that call,
        # so a slow answer is never taken for a dead worker's job and claimed a second time.
        self.lease_s = max(self.settings.lease_s, 2 * config.ollama_timeout_s + LEASE_MARGIN_S)
        self._llm = llm_slots(config.vault, self.settings.llm_concurrency)  # the seals' too
        self._gate_lock = threading.Lock()
        self._gate_closed_until = 0
        self._gate_failures = 0
        self._probing = False  # a job is testing a gate that was closed (the others wait)
        self._wake = threading.Condition()
        self._stop = threading.Event()
        self.context = JobContext(index, config, clock, stopping=self._stop)  # a stop cuts its LLM calls
        self._threads: list[threading.Thread] = []
        self._hand_lock = threading.Lock()
        self._in_hand: dict[int, Job] = {}  # the jobs being run, by id
        self._let_go: set[int] = set()  # those a stop put back while their worker still ran them
        self._paused_until = 0
        self.blocked: str | None = None  # why the pool is paused, if it is
        self.last_reconcile: dict[str, Any] | None = None
        self._counts_lock = threading.Lock()
        self.counts: dict[str, int] = {"done": 0, "retry": 0, "deferred": 0, "failed": 0, "refused": 0}

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        if self._threads:
            raise RuntimeError("WorkerPool already started")
        self._stop.clear()
        released = release_running(self.index, now=self.clock())
        if released:
            log.info("queue: %d job(s) left running by a previous process are ready again", released)
        self.reconcile()
        for n in range(self.settings.workers):
            thread = threading.Thread(target=self._worker, name=f"vaultmind-worker-{n + 1}", daemon=True)
            self._threads.append(thread)
        self._threads.append(
            threading.Thread(target=self._scheduler, name="vaultmind-reconcile", daemon=True)
        )
        for thread in self._threads:
            thread.start()

    def stop(self, timeout_s: float | None = None, give_up: threading.Event | None = None) -> None:
        """Stop claiming; wait for the jobs in hand (bounded by the LLM timeout), and no longer
        once `give_up` is set. A job's LLM call in flight ends at once (`JobContext`), and the
        job is put back without its attempt counted. A job still running then is put back, ready for the next start
        without its attempt counted (it was not left marked running, to be taken at the next
        start for the job of a process that died, an attempt spent each time), and said."""
        self._stop.set()
        self.notify()
        wait = timeout_s if timeout_s is not None else self.config.ollama_timeout_s + 5.0
        began = time.monotonic()
        if not join_within(self._threads, wait, give_up):
            self._put_back_in_hand(time.monotonic() - began)  # (less than `wait` when `give_up` was set)
        self._threads = []
        self.context.close()

    def _put_back_in_hand(self, waited_s: float) -> None:
        with self._hand_lock:
            jobs = sorted(self._in_hand.values(), key=lambda job: job.id)
        for job in jobs:
            reason = f"put back by a stop that could not wait for it (still running after {waited_s:.1f} s); no attempt counted"
            try:
                if put_back(self.index, job, reason, now=self.clock()):
                    with self._hand_lock:
                        self._let_go.add(job.id)
                    log.warning("job #%d %s was still running when the workers stopped; it is ready again", job.id, job.kind)
            except Exception as exc:  # the index cannot be written: the next start releases it
                log.warning("job #%d %s was still running when the workers stopped and stays marked so: %s", job.id, job.kind, exc)

    def close(self) -> None:
        """Stop the threads if started, and close the shared LLM client."""
        if self._threads:
            self.stop()
        self.context.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def notify(self) -> None:
        """Wake idle workers (new work was enqueued)."""
        with self._wake:
            self._wake.notify_all()

    @property
    def running(self) -> bool:
        return bool(self._threads) and not self._stop.is_set()

    def reconcile(self) -> dict[str, Any]:
        report = reconcile(self.index, self.config, self.kinds, now=self.clock())
        # A pass builds a Python object per wanted job (44k at 50k notes, Ollama absent): hand
        # what it freed back to the OS (a serving daemon idled 17 MB lower with this).
        release_freed_memory()
        self.last_reconcile = report
        if report["created"] or report["expired"] or report["requeued"]:
            self.notify()
        return report

    def status(self) -> dict[str, Any]:
        now = self.clock()
        with self._gate_lock:
            gate_until = self._gate_closed_until
        with self._counts_lock:
            counts = dict(self.counts)
        return {
            "workers": self.settings.workers,
            "running": self.running,
            "llm_concurrency": self.settings.llm_concurrency,
            "llm_gate": "closed" if gate_until > now else "open",
            "blocked": self.blocked,
            "processed": counts,
            "last_reconcile": self.last_reconcile,
        }

    # -- one job ---------------------------------------------------------------------------

    def run_once(self) -> bool:
        """Claim and run one job in this thread. False when nothing was ready."""
        now = self.clock()
        permit = bool(self._llm_kinds) and self._llm.acquire(blocking=False)
        with self._gate_lock:
            down = self._gate_failures > 0  # the last try found no Ollama
            usable = permit and self._gate_closed_until <= now and not self._probing
            probe = usable and down
            if probe:  # (only set here: a worker that finds a probe running must not clear its mark)
                self._probing = True
        if permit and not usable:
            self._llm.release()
            permit = False
        try:
            if permit:
                kinds = self._plain_kinds + self._llm_kinds
            else:  # with no Ollama, the LLM jobs that can do without it do so (a gray leaf by the rules)
                kinds = self._plain_kinds + (self._without_llm_kinds if down else [])
            job = claim(self.index, now=now, kinds=kinds, order=self._order, lease_s=self.lease_s)
            if job is None:
                return False
            kind = self._by_name[job.kind]
            if permit and not kind.llm_bound:
                self._llm.release()
                permit = False
            with self._hand_lock:
                self._in_hand[job.id] = job
            try:
                self._run(job, kind, asks=permit or not kind.llm_bound)
            finally:
                with self._hand_lock:
                    self._in_hand.pop(job.id, None)
            return True
        finally:
            if permit:
                self._llm.release()
            if probe:
                with self._gate_lock:
                    self._probing = False

    def drain(self, *, timeout_s: float = 60.0, on_job: Callable[[int], None] | None = None) -> int:
        """Run jobs in this thread until none is ready now (or `timeout_s`); returns how many ran.
        `on_job(ran)` after each job (a command's progress)."""
        import time

        deadline = time.monotonic() + timeout_s
        ran = 0
        while time.monotonic() < deadline and self.run_once():
            ran += 1
            if on_job is not None:
                on_job(ran)
        return ran

    def _run(self, job: Job, kind: JobKind, *, asks: bool) -> None:
        try:
            note = self._handle(job, kind, asks=asks)
        except LlmCancelled:  # the stop cut its LLM call: nothing is known against the job
            if put_back(self.index, job, "its LLM call was given up for a stop; no attempt counted", now=self.clock()):
                log.info("job #%d %s: its LLM call was given up for the stop; it is ready again", job.id, job.kind)
            return
        except KeyboardInterrupt:  # Ctrl-C of `queue --run`: the run stops, the job is no failure
            self._put_back_for_ctrl_c(job)
            raise
        except Exception as exc:
            if by_ctrl_c(exc):  # the same Ctrl-C, turned by DuckDB or a library into an error of its own
                self._put_back_for_ctrl_c(job)
                raise
            failure = classify(exc)
            message = str(exc) or type(exc).__name__
            outcome = fail(self.index, job, failure, message, now=self.clock())
            if kind.llm_bound and failure == "llm_unreachable":
                self._close_gate()
            if failure == "corrupt_index":
                self._corrupt(exc)
            level = logging.INFO if outcome in ("deferred", "retry") else logging.WARNING
            log.log(level, "job #%d %s: %s (%s) → %s", job.id, job.kind, message, failure, outcome)
        else:
            outcome = complete(self.index, job, now=self.clock(), note=note)
        if outcome == "refused":
            with self._hand_lock:
                let_go = job.id in self._let_go
                self._let_go.discard(job.id)
            if let_go:
                log.info("job #%d %s ended after the stop put it back; it runs again", job.id, job.kind)
            else:
                log.warning("job #%d %s: lease lost before settling; its new holder settles it", job.id, job.kind)
        with self._counts_lock:
            self.counts[outcome] = self.counts.get(outcome, 0) + 1

    def _put_back_for_ctrl_c(self, job: Job) -> None:
        """`job` ready again, no attempt counted: else it stayed in hand (`running`, an attempt
        counted) until its lease ran out, for a keypress that says nothing against it."""
        with suppress(Exception):  # (a statement Ctrl-C ended may leave the index unusable for now)
            put_back(self.index, job, "stopped by Ctrl-C; no attempt counted", now=self.clock())

    def _handle(self, job: Job, kind: JobKind, *, asks: bool) -> str | None:
        """Run `job`'s handler; an LLM job claimed while the gate is closed (`asks` false), or
        whose try finds no Ollama, runs its kind's `without_llm` instead; such a job reached no
        LLM, so it leaves the gate closed (the try closes it), never re-opens it. Nor does an
        LLM job that ended without the model's answer (stale, answered from the cache, its
        target gone): only an answer heard in its run (`JobContext.answers_heard`) opens it,
        else a stale probe let every LLM job knock at an Ollama still down; an answer opens it
        though the job then fails on it (a failure that finds no Ollama closes it again)."""
        if kind.without_llm is not None and not asks:
            return kind.without_llm(self.context, job)
        if not kind.llm_bound:
            return kind.run(self.context, job)
        heard = self.context.answers_heard()
        try:
            note = kind.run(self.context, job)
        except Exception as exc:
            self._open_gate_if_answered(heard)
            if kind.without_llm is None or classify(exc) != "llm_unreachable":
                raise
            self._close_gate()
            log.info("job #%d %s: %s; done without the LLM", job.id, job.kind, str(exc) or type(exc).__name__)
            return kind.without_llm(self.context, job)
        self._open_gate_if_answered(heard)
        return note

    # -- the LLM gate ----------------------------------------------------------------------

    def _close_gate(self) -> None:
        with self._gate_lock:
            self._gate_failures += 1
            delay = BACKOFF["llm_unreachable"].delay_s(self._gate_failures)
            self._gate_closed_until = self.clock() + int(delay * 1000)

    def _open_gate_if_answered(self, heard: int) -> None:
        """Open the gate when this thread heard the model answer since it had heard `heard`
        answers: Ollama is there."""
        if self.context.answers_heard() > heard:
            self._open_gate()

    def _open_gate(self) -> None:
        with self._gate_lock:
            self._gate_failures = 0
            self._gate_closed_until = 0

    def _corrupt(self, exc: BaseException) -> None:
        self.blocked = f"index corrupt: {exc}; run `{command_line('reindex', '--vault', self.config.vault)}`"
        self._paused_until = self.clock() + int(BACKOFF["corrupt_index"].delay_s(1) * 1000)
        log.error("queue paused: %s", self.blocked)

    # -- threads ---------------------------------------------------------------------------

    def _worker(self) -> None:
        while not self._stop.is_set():
            if self._paused_until:
                if self._paused_until > self.clock():
                    self._sleep(self.settings.poll_s)
                    continue
                self._paused_until = 0
                self.blocked = None
            try:
                ran = self.run_once()
            except Exception as exc:  # the queue itself failed (claim or settle): back off by class
                failure = classify(exc)
                log.warning("queue: %s (%s); backing off", exc, failure)
                if failure == "corrupt_index":
                    self._corrupt(exc)
                    continue
                self._sleep(BACKOFF[failure].delay_s(1) if BACKOFF[failure].retry else self.settings.poll_s)
                continue
            if not ran:
                self._sleep(self.settings.poll_s)

    def _scheduler(self) -> None:
        while not self._stop.wait(self.settings.reconcile_s):
            try:
                self.reconcile()
            except Exception as exc:
                log.warning("queue: reconcile failed: %s (%s); will retry", exc, classify(exc))

    def _sleep(self, seconds: float) -> None:
        with self._wake:
            if not self._stop.is_set():
                self._wake.wait(timeout=seconds)
