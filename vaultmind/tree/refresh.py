"""Summary notes kept up to date without summarizing again: their entity links and their title.

A summary links the entities its text mentions that have an entity note (`hydrate`), and is
titled after its source (`note.summary_title`). Both can change after the seal: an entity note
is created once an entity has enough mentions — often after the first summaries of a new vault
were sealed — deleted or retitled; a source is retitled; a note written before titles existed
has none. `refresh_summaries` re-renders each summary note vaultmind still owns (never one you
edited) whose entity links or title are not what a seal would write now; body, children, id and
a title you gave it stay. Levels go bottom-up. A parent's `children_sha256` covers its
children's text, which a refresh does not change; one sealed before, over its children's files,
gets it recomputed over its rewritten children when it was up to date, so rewriting a child's
front matter neither makes its parent stale nor has it summarized again. A second pass over an unchanged
vault writes nothing, and reads nothing when nothing it depends on changed; a stop between two
levels is finished by the next pass (both: `refresh_work`)."""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vaultmind.errors import NoteReadError
from vaultmind.index.arrow import execute_with, key_table
from vaultmind.index.store import Index
from vaultmind.index.tables import has_columns, has_table
from vaultmind.markdown.render import unescape_markup
from vaultmind.tree import refresh_work
from vaultmind.tree.deriver import SummaryRow, load_rows
from vaultmind.tree.engine import tree_lock
from vaultmind.tree.hydrate import summary_body, summary_entities, summary_entity_links, summary_labels
from vaultmind.tree.note import (
    SummaryNote,
    children_digest,
    entity_link,
    original_first,
    parse_time,
    summary_title,
    user_title,
)
from vaultmind.tree.owned import write_owned
from vaultmind.tree.report import SealReport

if TYPE_CHECKING:
    from vaultmind.memory import Memory

_MEMO_MAX = 50_000
# (note sha256, candidate entity ids) → the entity ids its text mentions: a pass over an
# unchanged vault reads no summary note twice
_memos: weakref.WeakKeyDictionary[Index, dict[tuple[str, tuple[str, ...]], tuple[str, ...]]] = (
    weakref.WeakKeyDictionary()
)
_memos_guard = threading.Lock()


def refresh_summaries(memory: Memory, *, always: bool = False) -> SealReport:
    """Re-render the owned summary notes whose entity links or title changed (see the module);
    nothing is read when nothing they depend on changed since the last pass (`refresh_work`),
    unless `always` (the benchmark's baseline)."""
    report = SealReport()
    index = memory.index
    fingerprint = refresh_work.inputs(index)
    if not always and refresh_work.unchanged_since_last_pass(index, fingerprint):
        return report
    with index.lock:
        levels = sorted(r[0] for r in index.con.execute("SELECT DISTINCT level FROM summaries").fetchall())
    rewritten = refresh_work.pending(index)  # left by a pass that stopped: finished first
    left = dict(rewritten)
    for level in levels:
        if memory.stopping.is_set():
            return report  # the next pass does the rest (the work left is recorded)
        with index.lock:
            rows = load_rows(index.con, "s.level = ? AND NOT s.user_edited", [level])
        state = _State.load(index, rows, rewritten)
        labels = summary_labels(index, [(row.id, row.tree, row.leaf_ids) for row in rows])
        notes: list[tuple[SummaryRow, SummaryNote]] = []
        for row in rows:
            if memory.stopping.is_set():
                return report
            note = _refreshed(memory, row, state, labels[row.id])
            if note is not None:
                notes.append((row, note))
        before = {row.note_path: state.shas[row.note_path] for row, _ in notes if row.note_path in state.shas}
        refresh_work.record(index, before)
        written: list[str] = []
        for row, note in notes:
            if memory.stopping.is_set():
                break  # what was written is synced below; the next pass does the rest
            with tree_lock(index, row.tree):
                try:
                    outcome = write_owned(memory.config.vault / row.note_path, note)
                except OSError as exc:  # it keeps its links until it can be written; the others go on
                    report.aborted.append(
                        {"tree": row.tree, "level": level, "reason": f"{row.note_path} could not be rewritten ({exc})"}
                    )
                    continue
            if outcome == "written":
                written.append(row.note_path)
                report.refreshed.append({"id": row.id, "tree": row.tree, "level": level, "path": row.note_path})
        if written:
            memory.sync_paths(written)
            for path in written:
                rewritten.setdefault(path, before.get(path, ""))
        left.update(before)
    if memory.stopping.is_set():
        return report
    refresh_work.settle(index, sorted(left))
    if not report.refreshed:
        refresh_work.remember_pass(index, fingerprint)
    return report


def finish_refresh(memory: Memory) -> SealReport:
    """The work a stopped refresh left (`refresh_work`), done before anything is re-sealed:
    otherwise the parents it left stale would be summarized again."""
    if not refresh_work.pending(memory.index):
        return SealReport()
    return refresh_summaries(memory)


class _State:
    """What one level's rows are checked against: front matter, entities with a note, the
    entities each L1 summary's leaves mention, the current file hash of the children and
    whether you edited them, the children rewritten (path → their hash before)."""

    def __init__(
        self,
        frontmatter: dict[str, dict[str, Any]],
        shas: dict[str, str],
        with_note: dict[str, str],
        mentioned: dict[str, set[str]],
        child_paths: dict[str, str],
        rewritten: dict[str, str],
        edited: set[str],
    ):
        self.frontmatter = frontmatter
        self.shas = shas
        self.with_note = with_note  # entity id → the link to its note, as a seal writes it now
        self.linked = set(with_note.values())
        self.mentioned = mentioned  # summary id → entity ids its leaves (L1) or children (above) have
        self.child_paths = child_paths  # summary id → note path (children of the level above)
        self.rewritten = rewritten  # child path → its file hash before a refresh rewrote it
        self.edited = edited  # child paths you edited

    @classmethod
    def load(cls, index: Index, rows: Sequence[SummaryRow], rewritten: dict[str, str]) -> _State:
        paths = [r.note_path for r in rows]
        ids = sorted({c for r in rows for c in r.children}) if rows and rows[0].level > 1 else []
        with index.lock:
            con = index.con
            # the paths and ids as key tables: as list parameters, 5,000 took 1.5 s to bind
            notes = execute_with(
                con,
                "SELECT path, frontmatter, sha256 FROM notes WHERE path IN (SELECT k FROM _rows)",
                rows=key_table(paths),
            ).fetchall()
            children = execute_with(
                con,
                """SELECT s.id, s.note_path, s.entities, n.sha256, s.user_edited
                   FROM summaries s JOIN notes n ON n.path = s.note_path
                   WHERE s.id IN (SELECT k FROM _rows)""",
                rows=key_table(ids),
            ).fetchall()
            with_note: dict[str, str] = {}
            if has_table(index, "entities") and has_columns(index, "entities", ("id", "display_name", "note_path")):
                with_note = {
                    eid: entity_link(path, display or eid.partition(":")[2])
                    for eid, display, path in con.execute(
                        "SELECT id, display_name, note_path FROM entities WHERE note_path IS NOT NULL"
                    ).fetchall()
                }
            mentioned: dict[str, set[str]] = {}
            if rows and rows[0].level == 1 and has_table(index, "occurrences"):
                for sid, eids in execute_with(
                    con,
                    """SELECT s.id, list(DISTINCT o.entity_id) FROM summaries s, unnest(s.children) AS c(leaf)
                       JOIN occurrences o ON o.leaf_id = c.leaf
                       WHERE s.note_path IN (SELECT k FROM _rows) GROUP BY s.id""",
                    rows=key_table(paths),
                ).fetchall():
                    mentioned[sid] = set(eids)
        child_paths: dict[str, str] = {}
        shas: dict[str, str] = {}
        child_entities: dict[str, set[str]] = {}
        edited: set[str] = set()
        for sid, path, ents, sha, user_edited in original_first(children, 1):
            if user_edited:
                edited.add(path)
            if sid not in child_paths:  # a copy: the original's
                child_paths[sid] = path
                child_entities[sid] = set(ents)
            shas[path] = sha
        for row in rows:
            if row.level > 1:
                mentioned[row.id] = {e for c in row.children for e in child_entities.get(c, ())}
        shas.update({path: sha for path, _, sha in notes})
        frontmatter = {path: json.loads(fm) if isinstance(fm, str) else dict(fm or {}) for path, fm, _ in notes}
        return cls(frontmatter, shas, with_note, mentioned, child_paths, rewritten, edited)


def _refreshed(memory: Memory, row: SummaryRow, state: _State, label: str) -> SummaryNote | None:
    """The note `row` should be now, or None when it already is (or cannot be read)."""
    fm = state.frontmatter.get(row.note_path)
    if fm is None:
        return None
    title = summary_title(label, row.level, row.time_start, row.time_end)
    digest = _children_digest(row, fm, state)
    linkable = state.mentioned.get(row.id, set()) & set(state.with_note)
    current = [str(x) for x in fm.get("entities") or () if isinstance(x, str)]
    # an entity note created or deleted, renamed or retitled
    entities_may_change = linkable != set(row.entities) or not state.linked.issuperset(current)
    titled = _titled(fm, title)
    if titled and digest is None and not entities_may_change:
        return None  # the common case: nothing read
    links = _entity_links(memory, row, state, linkable) if entities_may_change else None
    if links is not None and links == current:
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


def _children_digest(row: SummaryRow, fm: dict[str, Any], state: _State) -> str | None:
    """The new `children_sha256` of a summary some of whose children a refresh rewrote, when
    its recorded one matches their hashes from before (so nothing it summarizes changed: only
    their front matter did); None otherwise — a summary stale for another reason stays stale,
    for `reseal_stale`, and so does one above a child you edited since."""
    if row.level == 1:
        return None
    paths = [state.child_paths.get(c) for c in row.children]
    if not any(p in state.rewritten for p in paths) or any(p in state.edited for p in paths):
        return None
    before = [state.rewritten.get(p or "", state.shas.get(p or "")) for p in paths]
    now = [state.shas.get(p or "") for p in paths]
    if any(h is None for h in before + now):
        return None
    recorded = fm.get("children_sha256")
    digest = children_digest([h for h in now if h is not None])
    if recorded != children_digest([h for h in before if h is not None]) or digest == recorded:
        return None
    return digest


def _body(memory: Memory, path: str) -> str | None:
    try:
        return summary_body(memory.config.vault, path)
    except NoteReadError:
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
    links = summary_entity_links(unescape_markup(body), infos)  # the text as it reads, as a seal matches it
    with _memos_guard:
        if len(memo) >= _MEMO_MAX:
            memo.clear()
        memo[key] = tuple(links)
    return links
