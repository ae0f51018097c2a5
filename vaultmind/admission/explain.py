"""`explain_leaf`: everything vaultmind knows about why a leaf is (or is not) remembered.

The leaf and its note, its lifecycle state, the cheap signals with their weights, the decision
and its reason, the LLM's answer when one was asked, and the queue jobs working on it.
"""

from __future__ import annotations

import json
from typing import Any

from vaultmind.admission import importance
from vaultmind.errors import UsageError
from vaultmind.index.store import Index
from vaultmind.index.tables import has_table
from vaultmind.queue.store import iso_ms
from vaultmind.retrieval.node_ids import resolve_node_id
from vaultmind.shell import command_line
from vaultmind.tree.buffers import tree_leaves_sql
from vaultmind.tree.settings import TreeSettings

LIFECYCLE = ("pending", "admitted", "buffered", "sealed")


def lifecycle_state(decision: str | None) -> str:
    """The leaf's lifecycle state from its admission decision: pending → admitted → buffered →
    sealed, or dropped. (The tree moves admitted leaves on to buffered and sealed.)"""
    if decision == "admitted":
        return "admitted"
    if decision == "dropped":
        return "dropped"
    return "pending"


def _tree_state(index: Index, leaf_id: str, trees: TreeSettings) -> tuple[str, str | None]:
    """Where an admitted leaf is in its tree: `sealed` (with the level-1 summary note that holds
    it), `buffered` (waiting in its tree's level-0 buffer), or still `admitted` (a leaf no tree
    takes, such as a quote-only note's)."""
    if not has_table(index, "summaries"):
        return "admitted", None
    rows = index.query(
        "SELECT note_path FROM summaries WHERE level = 1 AND list_contains(children, ?) ORDER BY note_path LIMIT 1",
        [leaf_id],
    )
    if rows:
        return "sealed", str(rows[0][0])
    sql, params = tree_leaves_sql(index, trees)
    fed = index.scalar(f"SELECT count(*) FROM {sql} t WHERE t.id = ?", [*params, leaf_id])
    return ("buffered" if fed else "admitted"), None


def resolve_leaf_id(index: Index, ref: str) -> str:
    """A full leaf id from an id or a unique prefix of at least `MIN_PREFIX` characters; a
    summary's or an entity's id is refused with the command that shows it."""
    ref = ref.strip().lstrip("^")
    if ref and not index.scalar("SELECT 1 FROM leaves WHERE id = ? LIMIT 1", [ref]):
        _refuse_other_nodes(index, ref)
    return resolve_node_id(
        index, ref, tables=("leaves",), noun="leaf",
        hint="a leaf's id is the `id …` of a hit of `vaultmind query walk`",
    )


def _refuse_other_nodes(index: Index, ref: str) -> None:
    """A summary's or an entity's id — node ids a query shows beside leaves' — is said to be
    one, with the command that shows it, rather than "no leaf"."""
    if index.scalar("SELECT 1 FROM summaries WHERE id = ? LIMIT 1", [ref]):
        raise UsageError(
            f"{ref!r} is a summary, not a leaf",
            hint=f"`{command_line('query', 'drill', ref)}` lists what it summarizes; explain one of those leaves",
        )
    if index.scalar("SELECT 1 FROM entities WHERE id = ? LIMIT 1", [ref]):
        raise UsageError(f"{ref!r} is an entity, not a leaf", hint=f"`{command_line('entities', 'show', ref)}` shows it")


def explain_leaf(index: Index, ref: str, trees: TreeSettings | None = None) -> dict[str, Any]:
    leaf_id = resolve_leaf_id(index, ref)
    rows = index.query(
        """
        SELECT l.id, l.note_path, l.seq, l.kind, l.text, l.content_hash, l.token_count, l.anchor, l.author,
               strftime(l.ts, '%Y-%m-%dT%H:%M:%SZ'), l.source_ref, l.message_id, n.kind, n.source_kind, n.source_id, n.title
        FROM leaves l JOIN notes n ON n.path = l.note_path
        WHERE l.id = ? ORDER BY l.note_path
        """,
        [leaf_id],
    )
    (lid, path, seq, kind, text, content_hash, tokens, anchor, author, ts, source_ref, message_id) = rows[0][
        :12
    ]
    note_kind, source_kind, source_id, title = rows[0][12:]
    leaf = {
        "id": lid,
        "seq": seq,
        "kind": kind,
        "text": text,
        "content_hash": content_hash,
        "tokens": tokens,
        "anchor": anchor,
        "author": author,
        "timestamp": ts,
        "source_ref": source_ref,
        "message_id": message_id,
    }
    note = {
        "path": path,
        "kind": note_kind,
        "source_kind": source_kind,
        "source_id": source_id,
        "title": title,
    }
    result: dict[str, Any] = {"leaf": leaf, "note": note}
    if len(rows) > 1:
        result["also_in"] = [r[1] for r in rows[1:]]
    adm = index.query(
        "SELECT decision, score, reason, stage, signals, llm_importance, llm_model FROM admission "
        "WHERE leaf_id = ? AND note_path = ?",
        [leaf_id, path],
    )
    if not adm:
        result["state"] = "not subject to admission"
        result["admission"] = None
        result["why_none"] = f"{note_kind} notes are vaultmind's own output, not memory input"
        return result
    decision, score, reason, stage, signals, llm_importance, llm_model = adm[0]
    result["state"] = lifecycle_state(decision)
    if decision == "admitted":
        result["state"], summary = _tree_state(index, leaf_id, trees or TreeSettings())
        if summary:
            result["summary"] = summary
    result["lifecycle"] = list(LIFECYCLE)
    result["admission"] = {
        "decision": decision,
        "score": score,
        "reason": reason,
        "stage": stage,
        "signals": json.loads(signals),
        "llm_importance": llm_importance,
        "llm_model": llm_model,
    }
    result["search"] = "searchable (every leaf is)" + (
        "; excluded from summary trees"
        if decision == "dropped"
        else "; waits for the LLM before the trees"
        if decision == "gray"
        else ""
    )
    result["llm"] = [
        {"model": model, "prompt_hash": prompt, "answer": json.loads(answer), "at": iso_ms(int(created))}
        for model, prompt, answer, created in index.query(
            "SELECT model, prompt_hash, answer, created_ms FROM llm_cache WHERE task = ? AND content_hash = ? "
            "ORDER BY created_ms, model",
            [importance.TASK, content_hash],
        )
    ]
    result["jobs"] = [
        {
            "id": int(job_id),
            "kind": job_kind,
            "status": status,
            "attempts": attempts,
            "available_at": iso_ms(int(available)),
            "failure_class": failure_class,
            "last_error": last_error,
        }
        for job_id, job_kind, status, attempts, available, failure_class, last_error in index.query(
            """
            SELECT id, kind, status, attempts, available_at, failure_class, last_error FROM jobs
            WHERE kind = ? AND ends_with(dedupe_key, ?) ORDER BY id
            """,
            [importance.KIND, ":" + content_hash],
        )
    ]
    return result
