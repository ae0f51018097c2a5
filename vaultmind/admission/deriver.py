"""The admission deriver: one `admission` row per leaf of a source or user note, in the sync.

It reads what it needs from the rows the sync just wrote (leaves, notes' front matter, tags),
so an incremental sync and a cold rebuild compute from the same inputs and give the same rows.
The notes a sync writes are decided where they are parsed (`AdmissionPrep`, in the parsing
workers of a large sync), from the same values those rows hold; only the LLM cache lookup and
the inserts run in the sync's transaction.
Gray leaves look their answer up in `llm_cache`; those without one get an `llm_importance`
job enqueued in the same transaction (deduped), so no gray leaf is ever left without work.

When a setting that changes decisions changes (thresholds, owner, priority tags, the chat
model, the prompt — see `Policy.fingerprint`), the next sync recomputes every row.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa

from vaultmind.admission import importance
from vaultmind.admission.cues import QuestionContext
from vaultmind.admission.decide import Decision, Policy, admit_user_note, decide
from vaultmind.admission.signals import LeafInput
from vaultmind.config import Config
from vaultmind.index.arrow import execute_with, insert_arrow, key_table
from vaultmind.index.meta import put_meta
from vaultmind.model import ParsedNote, WrittenNote
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

    def preparer(self, con: duckdb.DuckDBPyConnection) -> AdmissionPrep:
        """The pure per-note half of `apply`, run where the note is parsed (a worker process)."""
        return AdmissionPrep(self.policy)

    def apply(
        self,
        con: duckdb.DuckDBPyConnection,
        removed_leaf_ids: Sequence[str],
        written: Sequence[WrittenNote],
        *,
        rebuild: bool,
        changed_paths: Sequence[str] = (),
        prepared: Mapping[str, Prepared] | None = None,
        leaves: pa.Table | None = None,
    ) -> None:
        """`prepared` holds `AdmissionPrep` results by note path (for notes of `written`); the
        decisions of those notes are taken from it instead of being computed here (`leaves`,
        the written leaves' rows, is not needed: a decision goes by the note's parsed leaves).

        A row goes with its note: each row keeps the path of the note its leaf was decided in,
        and every removed leaf belonged to one of `changed_paths` (which name every note written
        again, see `sync.Deriver`), so the rows of the changed notes are found by that path (a
        column of few distinct values, which DuckDB reads in ~1.6 MB at 50k notes; by the random
        leaf ids, 13.5 MB a save). A note written for the first time (a later batch of a
        whole-vault load) has no rows to look for."""
        prepared = prepared or {}
        row = con.execute("SELECT value FROM meta WHERE key = ?", [META_KEY]).fetchone()
        full = rebuild or row is None or row[0] != self.fingerprint
        if full:
            con.execute("DELETE FROM admission")
            self._derive(con, None, prepared)
            put_meta(con, META_KEY, self.fingerprint)
            return
        paths = sorted({note.path for note in written})
        if changed_paths:  # a note written again is among them; one written first has no rows
            execute_with(
                con, "DELETE FROM admission WHERE note_path IN (SELECT k FROM _rows)", rows=key_table(sorted(changed_paths))
            )
        if paths:
            self._derive(con, paths, prepared)

    def _derive(
        self, con: duckdb.DuckDBPyConnection, paths: Sequence[str] | None, prepared: Mapping[str, Prepared]
    ) -> None:
        _admit_user_leaves(con, paths)
        # Notes prepared elsewhere bring their rows; the others are read back and decided here.
        if paths is None:
            todo: Sequence[str] | None = None
            ready = [item for path in sorted(prepared) for item in prepared[path]]
        else:
            todo = [p for p in paths if p not in prepared]
            ready = [item for path in paths if path in prepared for item in prepared[path]]
        if todo is None or todo:
            skip = sorted(prepared) if todo is None else ()
            ready.extend(decided_row(leaf, decide(leaf, self.policy)) for leaf in load_inputs(con, todo, skip))
        if not ready:
            return
        model = self.policy.llm_model
        gray = sorted({row[2] for row, is_gray in ready if is_gray})
        answers = importance.cached_answers(con, gray, model) if gray else {}
        columns: dict[str, list[Any]] = {name: [] for name in _SCHEMA.names}
        names = _SCHEMA.names
        for row, is_gray in ready:
            if is_gray and row[2] in answers:
                cheap = Decision("gray", row[4], row[5], row[6], json.loads(row[7]), row[8], row[9])
                decision = importance.decide_from_cache(cheap, answers[row[2]], model, self.policy)
                row = _row(row[0], row[1], row[2], decision)
            for name, value in zip(names, row, strict=True):
                columns[name].append(value)
        insert_arrow(con, "admission", pa.table(columns, schema=_SCHEMA))
        pending = [h for h in gray if h not in answers]
        if pending:
            enqueue(con, [importance.new_job(model, h) for h in pending], now=now_ms())


Decided = tuple[tuple[Any, ...], bool]
"""One admission row decided without the index (`_SCHEMA` order), and whether it is gray (a
cached LLM answer may still decide it, from the signals the row holds as JSON); a plain tuple:
it crosses processes."""


Prepared = list[Decided]
"""`AdmissionPrep`'s result for one note: the rows of its source leaves."""


def _row(leaf_id: str, note_path: str, content_hash: str, decision: Decision) -> tuple[Any, ...]:
    return (
        leaf_id, note_path, content_hash, decision.decision, decision.score, decision.reason, decision.stage,
        decision.signals_json(), decision.llm_importance, decision.llm_model,
    )  # fmt: skip


def decided_row(leaf: LeafInput, decision: Decision) -> Decided:
    row = _row(leaf.leaf_id, leaf.note_path, leaf.content_hash, decision)
    return row, decision.decision == "gray"


@dataclass(frozen=True, slots=True)
class AdmissionPrep:
    """Decides the source leaves of one parsed note as `load_inputs` + `decide` would from its
    rows: a pure function of the note and the policy, so it runs in the parsing workers."""

    policy: Policy

    def __call__(self, note: ParsedNote, frontmatter_json: str) -> Prepared:
        if note.kind != "source":
            return []
        fm = note.frontmatter
        raw_id, raw_kind = fm.get("source_id"), fm.get("kind")
        source_id = str(raw_id) if raw_id is not None else None
        source_kind = str(raw_kind) if raw_kind is not None else None
        inputs = _note_inputs(_front_matter(frontmatter_json), sorted(note.tags), source_kind)
        out: Prepared = []
        context = QuestionContext()
        for leaf in sorted(note.leaves, key=lambda leaf: (leaf.seq, leaf.id)):
            entry = LeafInput(
                leaf_id=leaf.id,
                note_path=note.path,
                note_kind=note.kind,
                source_kind=source_kind,
                source_id=source_id,
                seq=leaf.seq,
                text=leaf.text,
                content_hash=leaf.content_hash,
                author=leaf.author,
                follows_question=context.step(leaf.text, leaf.author),
                **inputs,
            )
            out.append(decided_row(entry, decide(entry, self.policy)))
        return out


def _note_inputs(fm: Mapping[str, Any], tags: Sequence[str] | None, source_kind: str | None) -> dict[str, Any]:
    """The `LeafInput` fields that come from a note's front matter (as stored) and tags."""
    participants = fm.get("participants")
    subject = fm.get("subject")
    return {
        "participants": tuple(str(p) for p in participants) if isinstance(participants, list) else (),
        "subject": str(subject) if isinstance(subject, str | int | float) else None,
        "threaded": source_kind == "email" or any(fm.get(k) not in (None, "", []) for k in THREAD_KEYS),
        "tags": tuple(str(t).lower() for t in tags or ()),
    }


def _admit_user_leaves(con: duckdb.DuckDBPyConnection, paths: Sequence[str] | None) -> None:
    """Every leaf of a user note is admitted as it is (`admit_user_note`): one set-based insert."""
    user = admit_user_note()
    where = "n.kind = 'user'"
    if paths is not None:
        where += " AND n.path IN (SELECT k FROM _rows)"
    execute_with(
        con,
        f"""
        INSERT INTO admission ({", ".join(_SCHEMA.names)})
        SELECT l.id, l.note_path, l.content_hash, ?, ?, ?, ?, ?, NULL, NULL
        FROM leaves l JOIN notes n ON n.path = l.note_path
        WHERE {where}
        """,
        [user.decision, user.score, user.reason, user.stage, user.signals_json()],
        rows=key_table(paths or ()),
    )


def load_inputs(
    con: duckdb.DuckDBPyConnection, paths: Sequence[str] | None, skip: Sequence[str] = ()
) -> list[LeafInput]:
    """The admission inputs of every leaf of source notes (of `paths`, all but `skip` when
    None); the leaves of user notes are admitted as they are (`_admit_user_leaves`)."""
    where = "n.kind = 'source'"
    keys = paths if paths is not None else skip
    if paths is not None:
        where += " AND n.path IN (SELECT k FROM _rows)"
    elif skip:
        where += " AND n.path NOT IN (SELECT k FROM _rows)"
    rows = execute_with(
        con,
        f"""
        SELECT l.id, l.note_path, n.kind, n.source_kind, n.source_id, l.seq, l.text, l.content_hash,
               l.author, n.frontmatter, (SELECT list(t.tag ORDER BY t.tag) FROM tags t WHERE t.path = n.path)
        FROM leaves l JOIN notes n ON n.path = l.note_path
        WHERE {where}
        ORDER BY l.note_path, l.seq, l.id
        """,
        rows=key_table(keys),
    ).fetchall()
    out: list[LeafInput] = []
    note_inputs: dict[str, dict[str, Any]] = {}
    context = QuestionContext()
    for leaf_id, path, kind, source_kind, source_id, seq, text, content_hash, author, fm_json, tags in rows:
        inputs = note_inputs.get(path)
        if inputs is None:
            inputs = note_inputs[path] = _note_inputs(_front_matter(fm_json), tags, source_kind)
            context = QuestionContext()  # a note's first leaf follows nothing
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
                follows_question=context.step(text, author),
                **inputs,
            )
        )
    return out


def _front_matter(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


