"""What the refresh of summary notes (`refresh`) depends on, and the work it leaves for the next pass.

- **The gate.** A refresh reads every owned summary's row; its outcome depends only on the
  summary notes (path, file hash, stale, edited), the label of each source (from its notes'
  titles: `hydrate.source_labels`; a mailbox's summaries, from the titles of its threads'
  notes: `hydrate.summary_labels`), the entities that have a note (id, display name, note path,
  aliases) and the summarized leaves they occur in, and the work left below. `inputs`
  fingerprints these in six queries (aggregates, and one row per source for the labels), and
  `refresh_summaries` skips a pass whose fingerprint is the one seen before the last complete
  pass that wrote nothing (per index, in memory: the first pass of a process always runs, and a
  pass that wrote is checked by one more).
- **The work left.** Rewriting a child's front matter changes its file hash, so its parent must
  get its `children_sha256` recomputed over the new hashes, one level up. A stop between the
  two would leave the parent stale, re-summarized by the next re-seal although nothing it
  summarizes changed. So before a child is rewritten, a `tree.refresh` job records its path
  and its file hash before the rewrite (in the queue's `jobs` table, in the index); the next
  pass recomputes the parent's digest from it, and the jobs are done when a pass completes. No
  worker runs these jobs: the refresh does.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING

from vaultmind.index.arrow import execute_with, key_table
from vaultmind.index.tables import has_columns, has_table
from vaultmind.queue.store import NewJob, enqueue, now_ms
from vaultmind.tree.hydrate import source_labels
from vaultmind.tree.note import MAILBOX_KIND

if TYPE_CHECKING:
    from vaultmind.index.store import Index

KIND = "tree.refresh"

_seen: weakref.WeakKeyDictionary[Index, tuple[object, ...]] = weakref.WeakKeyDictionary()
_seen_guard = threading.Lock()


def inputs(index: Index) -> tuple[object, ...]:
    """The fingerprint of what a refresh depends on (see the module)."""
    queries = [
        """SELECT count(*), bit_xor(hash(s.note_path, n.sha256, s.stale, s.user_edited))
           FROM summaries s JOIN notes n ON n.path = s.note_path""",
        f"SELECT count(*), 0 FROM jobs WHERE kind = '{KIND}' AND status = 'ready'",
        f"SELECT count(*), bit_xor(hash(path, title)) FROM notes WHERE starts_with(source_id, '{MAILBOX_KIND}:')",
    ]
    if has_table(index, "entities") and has_columns(index, "entities", ("id", "display_name", "note_path", "aliases")):
        queries.append(
            """SELECT count(*), bit_xor(hash(id, display_name, note_path, aliases)) FROM entities
               WHERE note_path IS NOT NULL"""
        )
        if has_table(index, "occurrences") and has_columns(index, "occurrences", ("entity_id", "leaf_id")):
            queries.append(  # where they occur in what is summarized: one found after a seal (NER catching up) is linked
                """SELECT count(*), bit_xor(hash(o.leaf_id, o.entity_id)) FROM occurrences o
                   JOIN entities e ON e.id = o.entity_id
                   WHERE e.note_path IS NOT NULL
                     AND o.leaf_id IN (SELECT unnest(children) FROM summaries WHERE level = 1)"""
            )
    with index.lock:
        found = tuple(v for sql in queries for v in (index.con.execute(sql).fetchone() or ()))
        return (*found, tuple(source_labels(index).items()))  # the labels, not the titles: a new day's note is none


def unchanged_since_last_pass(index: Index, fingerprint: tuple[object, ...]) -> bool:
    with _seen_guard:
        return _seen.get(index) == fingerprint


def remember_pass(index: Index, fingerprint: tuple[object, ...]) -> None:
    """A complete pass that wrote nothing started from `fingerprint`."""
    with _seen_guard:
        _seen[index] = fingerprint


def pending(index: Index) -> dict[str, str]:
    """Children rewritten by a refresh whose parent's digest may not follow yet: path → the
    file hash the parent's `children_sha256` was computed over."""
    with index.lock:
        rows = index.con.execute(
            f"SELECT payload FROM jobs WHERE kind = '{KIND}' AND status = 'ready' ORDER BY id"
        ).fetchall()
    out: dict[str, str] = {}
    for (payload,) in rows:
        data = json.loads(payload)
        out.setdefault(str(data["path"]), str(data["sha256"]))
    return out


def record(index: Index, before: Mapping[str, str]) -> None:
    """Record the children about to be rewritten (path → file hash now), before any is written.
    A path already recorded keeps its older hash: the one its parent was computed over."""
    jobs = [NewJob(KIND, f"{KIND}:{path}", {"path": path, "sha256": sha}) for path, sha in sorted(before.items())]
    with index.transaction() as con:
        enqueue(con, jobs, now=now_ms())


def settle(index: Index, paths: list[str]) -> None:
    """The parents of `paths` follow their new hashes: their jobs are done."""
    if not paths:
        return
    now = now_ms()
    with index.transaction() as con:
        execute_with(
            con,
            f"""UPDATE jobs SET status = 'done', updated_ms = ?
                WHERE kind = '{KIND}' AND status = 'ready' AND dedupe_key IN (SELECT k FROM _rows)""",
            [now],
            rows=key_table(sorted(f"{KIND}:{p}" for p in paths)),
        )
