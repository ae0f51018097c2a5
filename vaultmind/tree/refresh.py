"""Summary notes kept up to date without summarizing again: their entity links and their title.

A summary links the entities its text mentions that have an entity note (`hydrate`), and is
titled after its source (`note.summary_title`). Both can change after the seal: an entity note
is created once an entity has enough mentions — often after the first summaries of a new vault
were sealed — or deleted; a note written before titles existed has none. `refresh_summaries`
re-renders each summary note vaultmind still owns (never one you edited) whose entity links or
title are not what a seal would write now; body, children, id and a title you gave it stay. Levels go bottom-up, and
a summary that was up to date gets its `children_sha256` recomputed over its rewritten
children, so rewriting a child's front matter neither makes its parent stale nor has it
summarized again. A second pass over an unchanged vault writes nothing.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vaultmind.index.store import Index
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.tree.buffers import has_columns, has_table
from vaultmind.tree.deriver import SummaryRow, load_rows
from vaultmind.tree.engine import SealReport, tree_lock, write_owned
from vaultmind.tree.hydrate import source_labels, summary_entities, summary_entity_links
from vaultmind.tree.note import (
    SummaryNote,
    children_digest,
    entity_id_of_link,
    parse_time,
    summary_title,
    user_title,
)

if TYPE_CHECKING:
    from vaultmind.memory import Memory

_MEMO_MAX = 50_000
# (note sha256, candidate entity ids) → the entity ids its text mentions: a pass over an
# unchanged vault reads no summary note twice
_memos: weakref.WeakKeyDictionary[Index, dict[tuple[str, tuple[str, ...]], tuple[str, ...]]] = (
    weakref.WeakKeyDictionary()
)
_memos_guard = threading.Lock()


def refresh_summaries(memory: Memory) -> SealReport:
    """Re-render the owned summary notes whose entity links or title changed (see the module)."""
    report = SealReport()
    index = memory.index
    with index.lock:
        levels = sorted(r[0] for r in index.con.execute("SELECT DISTINCT level FROM summaries").fetchall())
        stale = {r[0] for r in index.con.execute("SELECT note_path FROM summaries WHERE stale").fetchall()}
        trees = [r[0] for r in index.con.execute("SELECT DISTINCT tree FROM summaries ORDER BY 1").fetchall()]
    rewritten: set[str] = set()
    labels = source_labels(index, trees)
    for level in levels:
        if memory.stopping.is_set():
            break  # the next pass does the rest
        with index.lock:
            rows = load_rows(index.con, "s.level = ? AND NOT s.user_edited", [level])
        state = _State.load(index, rows, rewritten, stale)
        written: list[str] = []
        for row in rows:
            if memory.stopping.is_set():
                break  # what was written is synced below; the next pass does the rest
            note = _refreshed(memory, row, state, labels[row.tree])
            if note is None:
                continue
            with tree_lock(index, row.tree):
                outcome = write_owned(memory.config.vault / row.note_path, note)
            if outcome == "written":
                written.append(row.note_path)
                report.refreshed.append({"id": row.id, "tree": row.tree, "level": level, "path": row.note_path})
        if written:
            memory.sync_paths(written)
            rewritten.update(written)
    return report


class _State:
    """What one level's rows are checked against: front matter, entities with a note, the
    entities each L1 summary's leaves mention, the current file hash of rewritten children."""

    def __init__(
        self,
        frontmatter: dict[str, dict[str, Any]],
        shas: dict[str, str],
        with_note: set[str],
        mentioned: dict[str, set[str]],
        child_paths: dict[str, str],
        rewritten: set[str],
        stale: set[str],
    ):
        self.frontmatter = frontmatter
        self.shas = shas
        self.with_note = with_note
        self.mentioned = mentioned  # summary id → entity ids its leaves (L1) or children (above) have
        self.child_paths = child_paths  # summary id → note path (children of the level above)
        self.rewritten = rewritten
        self.stale = stale  # the summaries stale before this pass rewrote anything

    @classmethod
    def load(cls, index: Index, rows: Sequence[SummaryRow], rewritten: set[str], stale: set[str]) -> _State:
        paths = [r.note_path for r in rows]
        ids = sorted({c for r in rows for c in r.children}) if rows and rows[0].level > 1 else []
        with index.lock:
            con = index.con
            notes = con.execute(
                "SELECT path, frontmatter, sha256 FROM notes WHERE path IN (SELECT unnest(?::VARCHAR[]))",
                [paths],
            ).fetchall()
            children = con.execute(
                """SELECT s.id, s.note_path, s.entities, n.sha256 FROM summaries s JOIN notes n ON n.path = s.note_path
                   WHERE s.id IN (SELECT unnest(?::VARCHAR[]))""",
                [ids],
            ).fetchall()
            with_note: set[str] = set()
            if has_table(index, "entities") and has_columns(index, "entities", ("id", "note_path")):
                with_note = {r[0] for r in con.execute("SELECT id FROM entities WHERE note_path IS NOT NULL").fetchall()}
            mentioned: dict[str, set[str]] = {}
            if rows and rows[0].level == 1 and has_table(index, "occurrences"):
                for sid, eids in con.execute(
                    """SELECT s.id, list(DISTINCT o.entity_id) FROM summaries s, unnest(s.children) AS c(leaf)
                       JOIN occurrences o ON o.leaf_id = c.leaf
                       WHERE s.note_path IN (SELECT unnest(?::VARCHAR[])) GROUP BY s.id""",
                    [paths],
                ).fetchall():
                    mentioned[sid] = set(eids)
        child_paths: dict[str, str] = {}
        shas: dict[str, str] = {}
        child_entities: dict[str, set[str]] = {}
        for sid, path, ents, sha in sorted(children, key=lambda r: (len(r[1]), r[1])):  # a copy: the original's
            if sid not in child_paths:
                child_paths[sid] = path
                child_entities[sid] = set(ents)
            shas[path] = sha
        for row in rows:
            if row.level > 1:
                mentioned[row.id] = {e for c in row.children for e in child_entities.get(c, ())}
        shas.update({path: sha for path, _, sha in notes})
        frontmatter = {path: json.loads(fm) if isinstance(fm, str) else dict(fm or {}) for path, fm, _ in notes}
        return cls(frontmatter, shas, with_note, mentioned, child_paths, rewritten, stale)


def _refreshed(memory: Memory, row: SummaryRow, state: _State, label: str) -> SummaryNote | None:
    """The note `row` should be now, or None when it already is (or cannot be read)."""
    fm = state.frontmatter.get(row.note_path)
    if fm is None:
        return None
    title = summary_title(label, row.level, row.time_start, row.time_end)
    digest = _children_digest(row, state)
    linkable = state.mentioned.get(row.id, set()) & state.with_note
    entities_may_change = linkable != set(row.entities)
    titled = _titled(fm, title)
    if titled and digest is None and not entities_may_change:
        return None  # the common case: nothing read
    links = _entity_links(memory, row, state, linkable) if entities_may_change else None
    current = [str(x) for x in fm.get("entities") or () if isinstance(x, str)]
    if links is not None and [entity_id_of_link(x) for x in links] == [entity_id_of_link(x) for x in current]:
        links = None
    if titled and digest is None and links is None:
        return None
    body = _body(memory, row.note_path)
    if body is None:
        return None
    return SummaryNote(
        id=row.id,
        tree=row.tree,
        level=row.level,
        children=tuple(str(x) for x in fm.get("children") or () if isinstance(x, str)),
        children_sha256=digest or str(fm.get("children_sha256") or ""),
        time_start=parse_time(fm.get("time_start")),
        time_end=parse_time(fm.get("time_end")),
        entities=tuple(current if links is None else links),
        summarizer=str(fm.get("summarizer") or ""),
        body=body,
        title=title,
    )


def _titled(fm: dict[str, Any], title: str) -> bool:
    """The note shows `title`: as its `title`, or as its first alias under the title you gave it."""
    if not user_title(fm):
        return fm.get("title") == title
    aliases = fm.get("aliases")
    return isinstance(aliases, list) and bool(aliases) and aliases[0] == title


def _children_digest(row: SummaryRow, state: _State) -> str | None:
    """The new `children_sha256` of a summary that was up to date and some of whose children
    this pass rewrote (None otherwise: a stale summary stays stale, for `reseal_stale`)."""
    if row.level == 1 or row.note_path in state.stale:
        return None
    paths = [state.child_paths.get(c) for c in row.children]
    if not any(p in state.rewritten for p in paths):
        return None
    hashes = [state.shas.get(p or "") for p in paths]
    if any(h is None for h in hashes):
        return None
    return children_digest([h for h in hashes if h is not None])


def _body(memory: Memory, path: str) -> str | None:
    try:
        return split_frontmatter((memory.config.vault / path).read_text(encoding="utf-8")).body
    except (OSError, UnicodeDecodeError):
        return None


def _entity_links(memory: Memory, row: SummaryRow, state: _State, linkable: set[str]) -> list[str] | None:
    """What a seal would link now (`summary_entity_links`), remembered by the note's hash and
    the entities it could link, so an unchanged note is read (and asked about) once per
    process: most summaries mention only some of their leaves' entities. None: unreadable."""
    index = memory.index
    key = (state.shas.get(row.note_path, ""), tuple(sorted(linkable)))
    with _memos_guard:
        memo = _memos.setdefault(index, {})
        known = memo.get(key)
    if known is not None:
        return list(known)
    infos = summary_entities(index, row.level, row.children)
    body = _body(memory, row.note_path)
    if body is None:
        return None
    links = summary_entity_links(body, infos)
    with _memos_guard:
        if len(memo) >= _MEMO_MAX:
            memo.clear()
        memo[key] = tuple(links)
    return links
