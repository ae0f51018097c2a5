"""The gray band: ask the LLM, once per content, how worth remembering a leaf is.

A gray leaf gets one `llm_importance` job, deduped by content hash (+ model + prompt hash).
The worker asks Ollama for `{"importance": 0..1, "reason": "…"}` (strict JSON, temperature 0),
stores the answer in `llm_cache` — which survives reindex — and, in the same transaction,
updates every gray admission row with that content. The deriver consults the same cache, so
a cold rebuild gives the same rows once the cache is warm, and never asks twice.

No Ollama at the configured host (none installed, or not started; or the worker pool's LLM gate
closed, when a try found none) → the worker pool runs `without_llm` instead of asking: every
gray leaf is decided by the rules, its score against the middle of the band (`decide.by_rules`;
the reason says "LLM not reachable … admission by rules"), as with `[admission] llm = false`:
nothing waits, and status tells it as information, not as a degraded queue. That decision is not cached: a cold
rebuild asks again; and it is provisional (`PROVISIONAL`): once a model answers, `reask` asks
about it, a bounded pass at a time. Ollama answering badly or too slowly → the job is retried (`queue.failures`).
A model that answers without usable JSON is a result too: it is cached, and the leaf is
decided by its cheap score.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from vaultmind.admission.decide import Decision, Policy, by_rules, resolve_gray
from vaultmind.index.arrow import execute_with, key_table
from vaultmind.llm.ollama_chat import LlmBadAnswer, prompt_hash
from vaultmind.plural import counted
from vaultmind.queue.failures import JobFailure
from vaultmind.queue.kinds import JobContext, JobKind
from vaultmind.queue.store import Job, NewJob, cancel
from vaultmind.tree.follow import follow_admission

if TYPE_CHECKING:
    from vaultmind.config import Config

KIND = "llm_importance"
UNREACHABLE = "LLM not reachable"  # how a decision by rules for want of Ollama begins its reason
# which admission rows a decision applies to (`{t}`: the table's qualifier, if any)
GRAY = "{t}decision = 'gray'"
PROVISIONAL = f"{{t}}stage = 'fallback' AND starts_with({{t}}reason, '{UNREACHABLE}')"
"""A gray leaf the rules decided for want of an Ollama to ask: asked again once one answers
(`reask`)."""
TASK = "importance"
MAX_CHARS = 8000

SYSTEM_PROMPT = """You decide what is worth keeping in a person's long-term personal memory.
Rate ONE message or note excerpt from 0 to 1:
- 0.9-1.0: decisions, commitments, plans with dates, facts about people (jobs, family, health,
  moves, preferences), important events.
- 0.6-0.8: substantive information someone may want to recall later.
- 0.3-0.5: light context, opinions without facts, small talk with some content.
- 0.0-0.2: greetings, thanks, reactions, filler, automated noise.
Answer with JSON only: {"importance": <number from 0 to 1>, "reason": "<at most 12 words>"}"""

USER_PROMPT = "Text:\n{text}\n\nReturn JSON only."

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"importance": {"type": "number"}, "reason": {"type": "string"}},
    "required": ["importance", "reason"],
}

PROMPT_HASH = prompt_hash(SYSTEM_PROMPT, USER_PROMPT, json.dumps(SCHEMA, sort_keys=True))


def dedupe_key(model: str, content_hash: str) -> str:
    return f"importance:{model}:{PROMPT_HASH}:{content_hash}"


def new_job(model: str, content_hash: str) -> NewJob:
    return NewJob(
        KIND,
        dedupe_key(model, content_hash),
        {"content_hash": content_hash, "model": model, "prompt_hash": PROMPT_HASH},
    )


def parse_importance(answer: Mapping[str, Any]) -> tuple[float | None, str]:
    """(importance in [0, 1] or None, reason) from a model's JSON answer, read defensively:
    `importance`/`score`/`rating`, a number or a numeric string; 1-10 and 1-100 scales are
    rescaled. Asked for `importance` from 0 to 1, a model that answers 1 means the top; one
    that answers under a key of its own (`score`, `rating`) with a whole number from 1 to 10
    rates on a scale of its own, 1 its bottom: "1 of 10" is 0.1, below its 2 (0.2), never 1.0."""
    reason = answer.get("reason") or answer.get("why") or ""
    reason = " ".join(str(reason).split())[:200]
    for key in ("importance", "score", "rating"):
        if key not in answer:
            continue
        value = answer[key]
        whole = isinstance(value, int)
        if isinstance(value, str):
            text = value.strip().rstrip("%")
            whole = text.isdigit()
            try:
                value = float(text)
            except ValueError:
                continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            continue
        number = float(value)
        if key != "importance" and whole and number == 1.0:  # "1 of 10", as its 2 is 2 of 10 (1.0 is a 0-1 scale's top)
            number = 0.1
        elif 1.0 < number <= 10.0:
            number /= 10.0
        elif 10.0 < number <= 100.0:
            number /= 100.0
        return round(min(1.0, max(0.0, number)), 4), reason
    return None, reason


# -- the cache ----------------------------------------------------------------------------------


def cached_answers(
    con: duckdb.DuckDBPyConnection, hashes: Sequence[str], model: str
) -> dict[str, dict[str, Any]]:
    """content_hash → cached answer (parsed JSON) for the current prompt and `model`."""
    if not hashes:
        return {}
    # an Arrow table, not a list parameter: DuckDB converts long Python lists slowly
    rows = execute_with(
        con,
        """
        SELECT content_hash, any_value(answer ORDER BY created_ms) FROM llm_cache
        WHERE task = ? AND model = ? AND prompt_hash = ? AND content_hash IN (SELECT k FROM _rows)
        GROUP BY content_hash
        """,
        [TASK, model, PROMPT_HASH],
        rows=key_table(sorted(set(hashes))),
    ).fetchall()
    out: dict[str, dict[str, Any]] = {}
    for content_hash, answer in rows:
        try:
            value = json.loads(answer)
        except ValueError:
            value = {}
        out[str(content_hash)] = value if isinstance(value, dict) else {}
    return out


def decide_from_cache(cheap: Decision, answer: Mapping[str, Any], model: str, policy: Policy) -> Decision:
    importance, reason = parse_importance(answer)
    note = reason if importance is not None else str(answer.get("error") or "")
    return resolve_gray(cheap, importance, model, policy, note)


def apply_answer(
    con: duckdb.DuckDBPyConnection,
    content_hash: str,
    answer: Mapping[str, Any],
    model: str,
    policy: Policy,
    rows: str = GRAY,
) -> list[str]:
    """Decide the admission rows of this content that `rows` selects (the gray ones, or the
    provisional ones: `PROVISIONAL`) from a cached answer; returns the ids of the leaves whose
    decision changed."""
    return decide_rows(con, lambda cheap: decide_from_cache(cheap, answer, model, policy), rows, content_hash)


def decide_by_rules(con: duckdb.DuckDBPyConnection, policy: Policy, why: str) -> list[str]:
    """Decide every gray admission row by the rules (`decide.by_rules`): no LLM answers.
    Returns the ids of the leaves decided."""
    return decide_rows(con, lambda cheap: by_rules(cheap, policy, why))


def decide_rows(
    con: duckdb.DuckDBPyConnection,
    decide: Callable[[Decision], Decision],
    rows: str = GRAY,
    content_hash: str | None = None,
) -> list[str]:
    """Update the admission rows `rows` selects (of `content_hash`, or all) with `decide`'s
    decision, in one statement: a row at a time, each UPDATE read the whole table (at 50k notes,
    44k gray rows of 350k held the index's lock for minutes). Returns the ids of the leaves whose
    decision changed (admitted ↔ dropped, or gray → either): the trees follow them.

    A row's breakdown (`signals`) is neither read nor written: a decision of a gray leaf
    passes it on unchanged, and the UPDATE leaves it as it is. Read and parsed for each of 44k
    gray rows it had lifted a daemon's memory by ~275 MB for seconds at its start-up, when
    no Ollama answered and every gray leaf was decided by the rules at once."""
    found = con.execute(
        f"SELECT DISTINCT leaf_id, note_path, content_hash, decision, score, reason FROM admission "
        f"WHERE {rows.format(t='')} AND (? IS NULL OR content_hash = ?) ORDER BY note_path, leaf_id",
        [content_hash, content_hash],
    ).fetchall()
    finals: dict[tuple[str, str, str], Decision] = {}
    changed: dict[str, None] = {}
    for leaf_id, note_path, leaf_hash, before, score, reason in found:
        key = (str(leaf_id), str(note_path), str(leaf_hash))
        if key not in finals:
            finals[key] = decide(Decision("gray", float(score), str(reason), "cheap", {}))
            if finals[key].decision != before:
                changed[key[0]] = None
    if not finals:
        return []
    keys, decided = list(finals), list(finals.values())
    frame = pa.table(
        {
            "leaf_id": pa.array([k[0] for k in keys], pa.string()),
            "note_path": pa.array([k[1] for k in keys], pa.string()),
            "content_hash": pa.array([k[2] for k in keys], pa.string()),
            "decision": pa.array([d.decision for d in decided], pa.string()),
            "reason": pa.array([d.reason for d in decided], pa.string()),
            "stage": pa.array([d.stage for d in decided], pa.string()),
            "llm_importance": pa.array([d.llm_importance for d in decided], pa.float64()),
            "llm_model": pa.array([d.llm_model for d in decided], pa.string()),
        }
    )
    execute_with(
        con,
        f"""
        UPDATE admission SET decision = n.decision, reason = n.reason, stage = n.stage,
               llm_importance = n.llm_importance, llm_model = n.llm_model
        FROM _rows n
        WHERE admission.leaf_id = n.leaf_id AND admission.note_path = n.note_path
          AND admission.content_hash = n.content_hash AND {rows.format(t="admission.")}
        """,
        rows=frame,
    )
    return list(changed)


def store_answer(
    con: duckdb.DuckDBPyConnection, content_hash: str, model: str, answer: Mapping[str, Any], now: int
) -> None:
    exists = con.execute(
        "SELECT 1 FROM llm_cache WHERE task = ? AND content_hash = ? AND model = ? AND prompt_hash = ? LIMIT 1",
        [TASK, content_hash, model, PROMPT_HASH],
    ).fetchone()
    if exists is None:
        con.execute(
            "INSERT INTO llm_cache VALUES (?, ?, ?, ?, ?, ?)",
            [
                TASK,
                content_hash,
                model,
                PROMPT_HASH,
                json.dumps(dict(answer), sort_keys=True, ensure_ascii=False),
                now,
            ],
        )


# -- the job kind --------------------------------------------------------------------------------


def policy_of(config: Config) -> Policy:
    return Policy.from_extra(config.extra, config.ollama_chat_model)


def job_target(ctx: JobContext, job: Job) -> tuple[str, str, Policy] | str:
    """(content hash, model, policy) of an admission job (this kind's or `reask`'s), or why it
    is stale: the model, the prompt or `admission.llm` changed since it was enqueued."""
    try:
        payload = job.payload()
        content_hash = str(payload["content_hash"])
        model = str(payload["model"])
        wanted_prompt = str(payload["prompt_hash"])
    except (ValueError, KeyError, TypeError) as exc:
        raise JobFailure("unrecoverable", f"job #{job.id} has an unreadable payload: {exc!r}") from exc
    policy = policy_of(ctx.config)
    if model != policy.llm_model or wanted_prompt != PROMPT_HASH or not policy.llm:
        return "stale: the model, the prompt or admission.llm changed since it was enqueued"
    return content_hash, model, policy


def answer_and_text(ctx: JobContext, content_hash: str, model: str, rows: str) -> tuple[dict[str, Any] | None, str | None]:
    """The cached answer for this content, if any, and the text of a leaf of it among the rows
    `rows` selects (None: no such row any more)."""
    with ctx.index.lock:
        answer = cached_answers(ctx.index.con, [content_hash], model).get(content_hash)
        text = ctx.index.scalar(
            f"""
            SELECT l.text FROM admission a JOIN leaves l ON l.id = a.leaf_id AND l.note_path = a.note_path
            WHERE a.content_hash = ? AND {rows.format(t="a.")} ORDER BY a.note_path, a.leaf_id LIMIT 1
            """,
            [content_hash],
        )
    return answer, None if text is None else str(text)


def run(ctx: JobContext, job: Job) -> str | None:
    target = job_target(ctx, job)
    if isinstance(target, str):
        return target
    content_hash, model, policy = target
    index = ctx.index
    answer, text = answer_and_text(ctx, content_hash, model, GRAY)
    if answer is None:
        if text is None:
            return "target gone: no gray leaf has this content any more"
        answer = ask(ctx, text)  # no Ollama there: the pool runs `without_llm` instead
        note = None
    else:
        note = "answer was cached"
    with index.transaction() as con:
        store_answer(con, content_hash, model, answer, ctx.clock())
        follow_admission(con, apply_answer(con, content_hash, answer, model, policy))
    return note


def without_llm(ctx: JobContext, job: Job) -> str:
    """The job when no Ollama answers at the host (none installed, not started; or the worker
    pool's LLM gate is closed): the gray leaves with a cached answer take it, every other one is
    decided by the rules. Nothing waits, nothing is asked."""
    policy = policy_of(ctx.config)
    with ctx.index.transaction() as con:
        repair(con, ctx.config)
        decided = decide_by_rules(con, policy, f"{UNREACHABLE} at {ctx.config.ollama_host}: admission by rules")
        follow_admission(con, decided)
        settled = cancel_decided(con, job, ctx.clock())
    return f"{UNREACHABLE}: {len(decided)} gray leaves decided by rules" + (f", {counted(settled, 'other job')} with them" if settled else "")


def cancel_decided(con: duckdb.DuckDBPyConnection, job: Job, now: int) -> int:
    """Cancel this kind's other ready jobs once no leaf is gray (`without_llm` decided them
    all): each one's target is gone, as the next reconcile would find. An upgrade's rebuild at
    50k notes queued 46,670 of them; with no Ollama each was claimed, run (scans of the
    admission rows) and settled for nothing, three at a time beside the daemon's saves for the
    ten minutes until that reconcile. Once Ollama answers, `reask` asks about the leaves the
    rules decided."""
    if con.execute(f"SELECT 1 FROM admission WHERE {GRAY.format(t='')} LIMIT 1").fetchone() is not None:
        return 0
    ids = [
        int(r[0])
        for r in con.execute(
            "SELECT id FROM jobs WHERE kind = ? AND status = 'ready' AND id <> ? ORDER BY id", [KIND, job.id]
        ).fetchall()
    ]
    return cancel(con, ids, "target no longer exists: its gray leaves were decided by the rules", now=now)


def ask(ctx: JobContext, text: str) -> dict[str, Any]:
    """The model's answer for one text: its JSON, or an `error` record when it gave no JSON."""
    chat = ctx.chat()
    clipped = text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + "\n[…]"
    try:
        answer = chat.chat_json(SYSTEM_PROMPT, USER_PROMPT.format(text=clipped), schema=SCHEMA)
    except LlmBadAnswer as exc:
        return {"error": "no JSON object in the answer", "raw": exc.raw[:500]}
    importance, reason = parse_importance(answer)
    if importance is None:
        return {
            "error": "no importance number in the answer",
            "raw": json.dumps(answer, sort_keys=True)[:500],
        }
    return {"importance": importance, "reason": reason}


def wanted(con: duckdb.DuckDBPyConnection, config: Config) -> list[NewJob]:
    """One job per gray content hash with no cached answer (none when the LLM is off)."""
    policy = policy_of(config)
    if not policy.llm:
        return []
    rows = con.execute(
        """
        SELECT DISTINCT a.content_hash FROM admission a
        WHERE a.decision = 'gray' AND NOT EXISTS (
            SELECT 1 FROM llm_cache c
            WHERE c.task = ? AND c.content_hash = a.content_hash AND c.model = ? AND c.prompt_hash = ?)
        ORDER BY 1
        """,
        [TASK, policy.llm_model, PROMPT_HASH],
    ).fetchall()
    return [new_job(policy.llm_model, str(r[0])) for r in rows]


def repair(con: duckdb.DuckDBPyConnection, config: Config) -> int:
    """Gray rows whose answer is already cached take its decision (e.g. after an interrupted run)."""
    return repair_rows(con, config, GRAY)


def repair_rows(con: duckdb.DuckDBPyConnection, config: Config, rows: str) -> int:
    """The rows `rows` selects (`GRAY`, `PROVISIONAL`) whose answer is cached take its decision,
    and the trees follow; returns how many leaves changed.

    Only the contents with an answer cached are read out: each reconcile pass repairs, and
    with no Ollama at 50k notes every one of 44k provisional contents had been read into Python
    and looked up again, none with an answer (37 MiB more for a moment, beside a daemon's
    saves and NER catch-up; ~0 now)."""
    policy = policy_of(config)
    hashes = [
        str(r[0])
        for r in con.execute(
            f"""
            SELECT DISTINCT content_hash FROM admission WHERE {rows.format(t='')} AND content_hash IN (
                SELECT content_hash FROM llm_cache WHERE task = ? AND model = ? AND prompt_hash = ?)
            ORDER BY 1
            """,
            [TASK, policy.llm_model, PROMPT_HASH],
        ).fetchall()
    ]
    changed: list[str] = []
    for content_hash, answer in cached_answers(con, hashes, policy.llm_model).items():
        changed += apply_answer(con, content_hash, answer, policy.llm_model, policy, rows)
    follow_admission(con, changed)
    return len(changed)


def importance_kind() -> JobKind:
    return JobKind(KIND, run, llm_bound=True, max_attempts=5, wanted=wanted, repair=repair, without_llm=without_llm)
