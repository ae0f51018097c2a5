"""Re-ask: the gray leaves the rules decided while no Ollama answered are asked again once one does.

With no Ollama at the host (none installed yet, not started) or the worker pool's LLM gate
closed, a gray leaf is decided by the rules (`importance.without_llm`) so nothing waits. That
decision is provisional (`importance.PROVISIONAL`: stage `fallback`, reason "LLM not reachable
…"; status counts them): once a model answers, each is asked as a gray leaf would have been,
and the answer decides — cached by content like every answer, so a rebuild gives the same rows.
A leaf newly kept joins its tree's buffer; one newly dropped leaves the summary it was sealed
in, which turns stale and is re-sealed without it (`tree.follow.follow_admission`). A note is
never written here.

Bounded, so a vault of 50k notes does not flood Ollama nor hold the index's lock: each
reconcile pass (at the start of the workers, then every `[queue] reconcile_s`) queues at most
`[admission] reask_per_pass` of them (200; 0 never re-asks), the newest first (by the time of
their messages), one `llm_reask` job each, run by the workers one LLM call at a time like any
LLM job (`[queue] llm_concurrency`), after the gray leaves still waiting. While no model is
known to answer, a pass queues one job only, the probe: when a model answers it, the rest of
the pass is queued at once; when it finds none (or the gate is closed), the pass ends — its
queued jobs are cancelled, the decisions stay the rules' — and nothing waits or shows as a
fault. What is known is kept in `meta` (`STATE_KEY`), so a restart resumes where it was; a
model is known to answer by its name, so one switched to (`[ollama] chat_model`) is probed
first like any model not heard yet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb

from vaultmind.admission.importance import (
    PROMPT_HASH,
    PROVISIONAL,
    TASK,
    answer_and_text,
    apply_answer,
    ask,
    job_target,
    policy_of,
    repair_rows,
    store_answer,
)
from vaultmind.index.meta import put_meta
from vaultmind.queue.kinds import JobContext, JobKind
from vaultmind.queue.store import Job, NewJob, cancel, enqueue
from vaultmind.tree.follow import follow_admission

if TYPE_CHECKING:
    from vaultmind.config import Config

KIND = "llm_reask"
# meta: "answered:MODEL" once a re-ask heard MODEL answer, "away" once one found none
STATE_KEY = "admission_reask"
ANSWERED, AWAY = "answered", "away"


def dedupe_key(model: str, content_hash: str) -> str:
    return f"reask:{model}:{PROMPT_HASH}:{content_hash}"


def newest_provisional(con: duckdb.DuckDBPyConnection, model: str, limit: int) -> list[str]:
    """The contents of up to `limit` provisional decisions with no answer cached for `model`,
    the newest message first.

    The cached answers are left out by `NOT IN` over the model's answers, not a correlated
    `NOT EXISTS`: DuckDB gathers the latter's rows (44k provisional ones at 50k notes, no Ollama)
    for a join of their own, and a reconcile pass read 35 MiB more for a moment (22 with `NOT
    IN`), beside a daemon's saves and NER catch-up. Both columns are NOT NULL: the same rows."""
    rows = con.execute(
        f"""
        SELECT a.content_hash FROM admission a
        LEFT JOIN leaves l ON l.id = a.leaf_id AND l.note_path = a.note_path
        WHERE {PROVISIONAL.format(t="a.")} AND a.content_hash NOT IN (
            SELECT c.content_hash FROM llm_cache c WHERE c.task = ? AND c.model = ? AND c.prompt_hash = ?)
        GROUP BY a.content_hash ORDER BY max(l.ts) DESC NULLS LAST, a.content_hash LIMIT ?
        """,
        [TASK, model, PROMPT_HASH, limit],
    ).fetchall()
    return [str(r[0]) for r in rows]


def known_state(con: duckdb.DuckDBPyConnection) -> str | None:
    row = con.execute("SELECT value FROM meta WHERE key = ?", [STATE_KEY]).fetchone()
    return None if row is None else str(row[0])


def answered(model: str) -> str:
    """The state once a re-ask heard `model` answer."""
    return f"{ANSWERED}:{model}"


def _remember(con: duckdb.DuckDBPyConnection, state: str) -> None:
    if known_state(con) != state:
        put_meta(con, STATE_KEY, state)


def wanted(con: duckdb.DuckDBPyConnection, config: Config) -> list[NewJob]:
    """This pass's jobs: the newest `reask_per_pass` provisional decisions when a model is known
    to answer, else the newest one alone (the probe)."""
    policy = policy_of(config)
    if not policy.llm or policy.reask_per_pass == 0:
        return []
    known = known_state(con) == answered(policy.llm_model)
    return _jobs(con, policy.llm_model, policy.reask_per_pass if known else 1)


def _jobs(con: duckdb.DuckDBPyConnection, model: str, limit: int) -> list[NewJob]:
    """Jobs for the newest `limit` provisional decisions. Their order is the claim order: each
    is due a millisecond after the one before it, the last one now (all due at once)."""
    hashes = newest_provisional(con, model, limit) if limit > 0 else []
    return [
        NewJob(KIND, dedupe_key(model, h), {"content_hash": h, "model": model, "prompt_hash": PROMPT_HASH},
               delay_ms=rank - len(hashes))
        for rank, h in enumerate(hashes)
    ]  # fmt: skip


def run(ctx: JobContext, job: Job) -> str | None:
    target = job_target(ctx, job)
    if isinstance(target, str):
        return target
    content_hash, model, policy = target
    answer, text = answer_and_text(ctx, content_hash, model, PROVISIONAL)
    if text is None:
        return "target gone: no decision by rules has this content any more"
    asked = answer is None
    if answer is None:
        answer = ask(ctx, text)  # no Ollama there: the pool runs `without_llm` instead
    with ctx.index.transaction() as con:
        store_answer(con, content_hash, model, answer, ctx.clock())
        changed = apply_answer(con, content_hash, answer, model, policy, rows=PROVISIONAL)
        resealed = follow_admission(con, changed)
        queued = 0
        if asked and known_state(con) != answered(model):  # the probe heard the model: the rest of the pass
            _remember(con, answered(model))
            queued = enqueue(con, _jobs(con, model, policy.reask_per_pass - 1), now=ctx.clock())
    note = f"asked again: {len(changed)} decision(s) changed" + ("; the summaries over them follow" if resealed else "")
    return note + (f"; a model answers: {queued} more queued" if queued else "")


def without_llm(ctx: JobContext, job: Job) -> str:
    """No model answers (none at the host, or the gate is closed): the pass ends, its queued
    jobs are cancelled and the rules' decisions stand until a later pass finds one."""
    now = ctx.clock()
    with ctx.index.transaction() as con:
        _remember(con, AWAY)
        queued = [
            int(r[0])
            for r in con.execute(
                "SELECT id FROM jobs WHERE kind = ? AND status = 'ready' AND id <> ? ORDER BY id", [KIND, job.id]
            ).fetchall()
        ]
        cancel(con, queued, "no LLM answers: asked again at a later pass", now=now)
    return "no LLM answers: the rules' decisions stand, asked again once one does"


def repair(con: duckdb.DuckDBPyConnection, config: Config) -> int:
    """Provisional decisions whose content has an answer cached now (another leaf with the same
    text was asked) take it."""
    return repair_rows(con, config, PROVISIONAL)


def reask_kind() -> JobKind:
    return JobKind(KIND, run, llm_bound=True, max_attempts=5, wanted=wanted, repair=repair, without_llm=without_llm)
