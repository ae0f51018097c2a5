"""The admission deriver: one `admission` row per leaf of a source or user note, in the sync.

It reads what it needs from the rows the sync just wrote (leaves, notes' front matter, tags),
so an incremental sync and a cold rebuild compute from the same inputs and give the same rows.
Gray leaves look their answer up in `llm_cache`; those without one get an `llm_importance`
job enqueued in the same transaction (deduped), so no gray leaf is ever left without work.

When a setting that changes decisions changes (thresholds, owner, priority tags, the chat
model, the prompt — see `Policy.fingerprint`), the next sync recomputes every row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import duckdb
import pyarrow as pa

from vaultmind.admission import importance
from vaultmind.admission.decide import Policy, admit_user_note, decide
from vaultmind.admission.signals import LeafInput
from vaultmind.config import Config
from vaultmind.model import ParsedNote
from vaultmind.queue.store import enqueue, now_ms

META_KEY = "admission_policy"
THREAD_KEYS = ("thread", "thread_id", "thread_ts", "in_reply_to", "reply_to", "parent_id")

_SCHEMA = pa.schema(
    [
        ("leaf_id", pa.string()),
        ("note_path", pa.string()),
        ("content_hash", pa.string()),
        ("decision", pa.string()),
        ("score", pa.float64()),
        ("reason", pa.string()),
        ("stage", pa.string()),
        ("signals", pa.string()),
        ("llm_importance", pa.float64()),
        ("llm_model", pa.string()),
    ]
)


class AdmissionDeriver:
    """`sync.Deriver` writing the `admission` table (see the module docstring)."""

    name = "admission"

    def __init__(self, config: Config):
        self.config = config
        self.policy = Policy.from_extra(config.extra, config.ollama_chat_model)
        self.fingerprint = self.policy.fingerprint(importance.PROMPT_HASH)

    def apply(
        self,
        con: duckdb.DuckDBPyConnection,
        removed_leaf_ids: Sequence[str],
        written: Sequence[ParsedNote],
        *,
        rebuild: bool,
    ) -> None:
        row = con.execute("SELECT value FROM meta WHERE key = ?", [META_KEY]).fetchone()
        full = rebuild or row is None or row[0] != self.fingerprint
        if full:
            con.execute("DELETE FROM admission")
            self._derive(con, None)
            con.execute("DELETE FROM meta WHERE key = ?", [META_KEY])
            con.execute("INSERT INTO meta VALUES (?, ?)", [META_KEY, self.fingerprint])
            return
        if removed_leaf_ids:
            _with_list(
                con,
                "_adm_removed",
                removed_leaf_ids,
                """
                DELETE FROM admission WHERE leaf_id IN (SELECT v FROM _adm_removed) AND NOT EXISTS (
                    SELECT 1 FROM leaves l WHERE l.id = admission.leaf_id AND l.note_path = admission.note_path)
                """,
            )
        paths = sorted({note.path for note in written})
        if paths:
            _with_list(
                con,
                "_adm_paths",
                paths,
                "DELETE FROM admission WHERE note_path IN (SELECT v FROM _adm_paths)",
            )
            self._derive(con, paths)

    def _derive(self, con: duckdb.DuckDBPyConnection, paths: Sequence[str] | None) -> None:
        _admit_user_leaves(con, paths)
        decisions = [(leaf, decide(leaf, self.policy)) for leaf in load_inputs(con, paths)]
        if not decisions:
            return
        model = self.policy.llm_model
        gray = sorted({leaf.content_hash for leaf, d in decisions if d.decision == "gray"})
        answers = importance.cached_answers(con, gray, model)
        columns: dict[str, list[Any]] = {name: [] for name in _SCHEMA.names}
        for leaf, decision in decisions:
            if decision.decision == "gray" and leaf.content_hash in answers:
                decision = importance.decide_from_cache(
                    decision, answers[leaf.content_hash], model, self.policy
                )
            for key, value in (
                ("leaf_id", leaf.leaf_id),
                ("note_path", leaf.note_path),
                ("content_hash", leaf.content_hash),
                ("decision", decision.decision),
                ("score", decision.score),
                ("reason", decision.reason),
                ("stage", decision.stage),
                ("signals", decision.signals_json()),
                ("llm_importance", decision.llm_importance),
                ("llm_model", decision.llm_model),
            ):
                columns[key].append(value)
        table = pa.table(columns, schema=_SCHEMA)
        con.register("_adm_rows", table)
        try:
            cols = ", ".join(_SCHEMA.names)
            con.execute(f"INSERT INTO admission ({cols}) SELECT {cols} FROM _adm_rows")
        finally:
            con.unregister("_adm_rows")
        pending = [h for h in gray if h not in answers]
        if pending:
            enqueue(con, [importance.new_job(model, h) for h in pending], now=now_ms())



def _admit_user_leaves(con: duckdb.DuckDBPyConnection, paths: Sequence[str] | None) -> None:
    """Every leaf of a user note is admitted as it is (`admit_user_note`): one set-based insert."""
    user = admit_user_note()
    where = "n.kind = 'user'"
    if paths is not None:
        con.register("_adm_user", pa.table({"v": pa.array(list(paths), pa.string())}))
        where += " AND n.path IN (SELECT v FROM _adm_user)"
    try:
        con.execute(
            f"""
            INSERT INTO admission ({", ".join(_SCHEMA.names)})
            SELECT l.id, l.note_path, l.content_hash, ?, ?, ?, ?, ?, NULL, NULL
            FROM leaves l JOIN notes n ON n.path = l.note_path
            WHERE {where}
            """,
            [user.decision, user.score, user.reason, user.stage, user.signals_json()],
        )
    finally:
        if paths is not None:
            con.unregister("_adm_user")


def load_inputs(con: duckdb.DuckDBPyConnection, paths: Sequence[str] | None) -> list[LeafInput]:
    """The admission inputs of every leaf of source notes (of `paths`, all when None); the
    leaves of user notes are admitted as they are (`_admit_user_leaves`)."""
    where = "n.kind = 'source'"
    if paths is not None:
        con.register("_adm_in", pa.table({"v": pa.array(list(paths), pa.string())}))
        where += " AND n.path IN (SELECT v FROM _adm_in)"
    try:
        rows = con.execute(
            f"""
            SELECT l.id, l.note_path, n.kind, n.source_kind, n.source_id, l.seq, l.text, l.content_hash,
                   l.author, n.frontmatter, (SELECT list(t.tag ORDER BY t.tag) FROM tags t WHERE t.path = n.path)
            FROM leaves l JOIN notes n ON n.path = l.note_path
            WHERE {where}
            ORDER BY l.note_path, l.seq, l.id
            """
        ).fetchall()
    finally:
        if paths is not None:
            con.unregister("_adm_in")
    out: list[LeafInput] = []
    fm_cache: dict[str, dict[str, Any]] = {}
    for leaf_id, path, kind, source_kind, source_id, seq, text, content_hash, author, fm_json, tags in rows:
        fm = fm_cache.get(path)
        if fm is None:
            fm = _front_matter(fm_json)
            fm_cache[path] = fm
        participants = fm.get("participants")
        subject = fm.get("subject")
        out.append(
            LeafInput(
                leaf_id=leaf_id,
                note_path=path,
                note_kind=kind,
                source_kind=source_kind,
                source_id=source_id,
                seq=int(seq),
                text=text,
                content_hash=content_hash,
                author=author,
                participants=tuple(str(p) for p in participants) if isinstance(participants, list) else (),
                subject=str(subject) if isinstance(subject, str | int | float) else None,
                threaded=source_kind == "email" or any(fm.get(k) not in (None, "", []) for k in THREAD_KEYS),
                tags=tuple(str(t).lower() for t in tags or ()),
            )
        )
    return out


def _front_matter(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _with_list(con: duckdb.DuckDBPyConnection, name: str, values: Sequence[str], sql: str) -> None:
    con.register(name, pa.table({"v": pa.array(list(values), pa.string())}))
    try:
        con.execute(sql)
    finally:
        con.unregister(name)
