"""Sealing: `seal_ready`, `flush`, `reseal_stale` — the public API of the trees.

A seal folds the head of one buffer into one summary note, in two phases:

A. snapshot the head of the buffer (ids and content hashes), read the children and summarize
   them with no lock held (an LLM may take minutes);
B. under the tree's lock, re-derive the live buffer from the index and go on only if it still
   starts with the snapshot; write the note atomically (never over a note the user edited) and
   sync it, so the index sees the new summary and its children leave the buffer.

Leaves that arrived meanwhile stay in the buffer; a competing seal that committed first makes
this one abort cleanly (reported, nothing written). Gates: level 0 seals when its leaves reach
`[trees] l0_tokens` (taking the longest head within the budget), a level >= 1 when it holds
`fanout` summaries (taking that many). The cascade climbs at most to level 32. `flush` forces
only level 0 (a quiet source's last leaves); upper levels are never forced, so no chain of
one-child summaries can appear above level 1. `reseal_stale` deletes stale summaries you have
not edited (bounded by `max_nodes`; one over notes still being written waits: `quiet`) and
folds their children again, under the same name when the children are the same (`summary_id`); what you gave a deleted
one (title, aliases, properties) waits in the index (`unsealed`) until it is sealed again. A
note that cannot be written aborts its own seal, never the other trees.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections.abc import Sequence
from datetime import datetime, timedelta
from itertools import takewhile
from typing import TYPE_CHECKING, Any

from vaultmind.errors import NoteReadError, RefuseToClobber
from vaultmind.index.store import Index
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.markdown.render import escape_markup
from vaultmind.markdown.tokens import count_tokens
from vaultmind.tree import unsealed
from vaultmind.tree.buffers import BufferItem, buffer, gray_waiting, tree_states
from vaultmind.tree.deriver import load_rows
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.folders import tree_folders
from vaultmind.tree.hydrate import hydrate, summary_entity_links, summary_labels
from vaultmind.tree.note import (
    SUMMARY_PATHS,
    SummaryNote,
    children_digest,
    iso_z,
    naive_utc,
    summary_id,
    summary_path,
    summary_title,
)
from vaultmind.tree.owned import changed_since, is_owned, keeping_yours, write_owned
from vaultmind.tree.quiet import still_settling
from vaultmind.tree.report import Progress, SealReport
from vaultmind.tree.settings import MAX_LEVEL, TreeSettings
from vaultmind.tree.summarize import Summarizer, SummaryText, close_summarizer, output_budget
from vaultmind.tree.summarizers import summarizer_for
from vaultmind.tree.unsealed import SUMMARY_ID_RE
from vaultmind.vault.atomic import write_atomic

if TYPE_CHECKING:
    from vaultmind.memory import Memory

log = logging.getLogger(__name__)

MAX_SEALS_PER_TREE = 100_000  # a guard against a loop, far above any real tree

# -- public API --------------------------------------------------------------------------------


def seal_ready(
    memory: Memory,
    *,
    summarizer: Summarizer | None = None,
    progress: Progress | None = None,
) -> SealReport:
    """Seal every tree whose buffers passed their gate, cascading up (at most level 32). The
    gates do not depend on time. `progress` hears `("seal", seals done, seals due)`.
    """
    sealer = _Sealer(memory, summarizer)
    settings = sealer.settings
    due = {
        tree: state
        for tree, state in tree_states(memory.index, settings).items()
        if state.l0_tokens >= settings.l0_tokens or any(n >= settings.fanout for n in state.levels.values())
    }
    sealer.counting("seal", progress, sum(state.seals_due(settings, force=False) for state in due.values()))
    for tree in due:
        sealer.cascade(tree)
    return sealer.done()


def flush(
    memory: Memory,
    *,
    now: datetime,
    summarizer: Summarizer | None = None,
    older_than_hours: float | None = None,
    progress: Progress | None = None,
) -> SealReport:
    """Force-seal the level-0 buffer of every tree whose newest buffered leaf is at least
    `[trees] flush_after_hours` (or `older_than_hours`) older than `now`, then cascade with
    gates only. `now` is passed in, so the outcome is reproducible. `progress` hears
    `("flush", seals done, seals due)`. A forced seal stops before a tree's first gray leaf
    (its importance not yet decided): the leaves after it wait with it, so that once it is
    admitted it is folded in its place, not into a summary after theirs."""
    sealer = _Sealer(memory, summarizer)
    hours = sealer.settings.flush_after_hours if older_than_hours is None else older_than_hours
    try:
        cutoff = naive_utc(now) - timedelta(hours=hours)
    except OverflowError:  # a "now" in the first hours of year 1: nothing is that old
        cutoff = datetime.min
    due = {
        tree: state
        for tree, state in tree_states(memory.index, sealer.settings).items()
        if state.l0_items and state.l0_newest is not None and state.l0_newest <= cutoff
    }
    sealer.counting("flush", progress, sum(state.seals_due(sealer.settings, force=True) for state in due.values()))
    for tree in due:
        sealer.report.flushed.append(tree)
        sealer.cascade(tree, force_l0=True)
    return sealer.done()


def reseal_stale(
    memory: Memory, *, max_nodes: int, summarizer: Summarizer | None = None, now: datetime | None = None
) -> SealReport:
    """Remove up to `max_nodes` stale summaries (lowest levels first; never one you edited)
    and fold their children again: level 0 up to the last freed leaf, gates above. With `now`,
    one whose notes below were written less than `[trees] reseal_quiet_minutes` before it waits
    (`quiet`: you are still typing), reported in `waiting`; without, none waits."""
    sealer = _Sealer(memory, summarizer)
    with memory.index.lock:
        rows = load_rows(memory.index.con, "s.stale") if max_nodes > 0 else []
    settling = {}
    if now is not None:
        mine = [row for row in rows if not row.user_edited]
        settling = still_settling(memory.index, mine, now, sealer.settings.reseal_quiet_minutes)
    freed: dict[str, set[str]] = {}
    gone: list[str] = []
    for row in rows:
        if row.user_edited:
            sealer.report.kept.append(
                {"id": row.id, "path": row.note_path, "reason": "stale, but edited by you"}
            )
            continue
        if row.note_path in settling:
            until = iso_z(settling[row.note_path])
            sealer.report.waiting.append(
                {"id": row.id, "tree": row.tree, "level": row.level, "path": row.note_path, "until": until}
            )
            continue
        if len(gone) >= max_nodes:
            continue
        path = memory.config.vault / row.note_path
        held: bytes | None = None
        try:
            held = path.read_bytes()
            owned = is_owned(held)
        except FileNotFoundError:
            owned = True
        except OSError as exc:
            sealer.report.aborted.append(
                {"tree": row.tree, "level": row.level, "reason": f"{row.note_path}: {exc}"}
            )
            continue
        if not owned or (held is not None and changed_since(path, held)):
            sealer.report.kept.append(
                {"id": row.id, "path": row.note_path, "reason": "edited by you since the last sync"}
            )
            continue
        if held is not None:  # the keys you added come back if it is sealed again, after a stop too
            children = unsealed.sealed_children(row.level, row.children, held)
            unsealed.record(
                memory.index, path=row.note_path, note=held, tree=row.tree, level=row.level, children=children
            )
            sealer.kept_keys[row.note_path] = held
            sealer.removed[(row.tree, row.level, children)] = row.note_path
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:  # a folder you made read-only: this one stays, the others go on
            unsealed.settle(memory.index, [row.note_path])
            sealer.kept_keys.pop(row.note_path, None)
            sealer.report.aborted.append({"tree": row.tree, "level": row.level, "reason": f"{row.note_path}: {exc}"})
            continue
        gone.append(row.note_path)
        sealer.report.unsealed.append(
            {"id": row.id, "tree": row.tree, "level": row.level, "path": row.note_path}
        )
        freed.setdefault(row.tree, set())
        if row.level == 1:
            freed[row.tree].update(row.children)
    if gone:
        memory.sync_paths(gone)
    for tree in sorted(freed):
        sealer.cascade(tree, l0_upto=freed[tree])
    return sealer.done()


# -- the sealer ----------------------------------------------------------------------------------

_locks: weakref.WeakKeyDictionary[Index, dict[str, threading.Lock]] = weakref.WeakKeyDictionary()
_locks_guard = threading.Lock()


def tree_lock(index: Index, tree: str) -> threading.Lock:
    """The lock phase B of a seal holds for one tree of one index (never while summarizing)."""
    with _locks_guard:
        return _locks.setdefault(index, {}).setdefault(tree, threading.Lock())


class _Sealer:
    def __init__(self, memory: Memory, summarizer: Summarizer | None):
        self.memory = memory
        self.index = memory.index
        self.settings = TreeSettings.from_extra(memory.config.extra)
        self._summarizer = summarizer
        self._owns_summarizer = summarizer is None
        self.report = SealReport()
        self.started = time.perf_counter()
        # a removed stale summary's note, by path: its keys return with it (`unsealed`)
        self.kept_keys: dict[str, bytes] = unsealed.pending(self.index)
        self.removed = unsealed.removed_groups(self.index)  # (tree, level, children) → its path
        self._progress: tuple[str, Progress, int] | None = None  # phase, listener, seals due
        self._sealed = 0

    def counting(self, phase: str, progress: Progress | None, due: int) -> None:
        """Tell `progress` of each seal of this pass, of about `due`."""
        if progress is not None:
            self._progress = (phase, progress, due)
            progress(phase, 0, due)

    def done(self) -> SealReport:
        if self._owns_summarizer and self._summarizer is not None:
            close_summarizer(self._summarizer)
            self._summarizer = None
        if self.kept_keys and not self.memory.stopping.is_set():
            unsealed.tidy(self.index, self.settings)
        if self._progress is not None and self._sealed:
            phase, progress, _ = self._progress
            progress(phase, self._sealed, self._sealed)  # the last count always shows
        self.report.seconds = time.perf_counter() - self.started
        return self.report

    @property
    def summarizer(self) -> Summarizer:
        if self._summarizer is None:
            self._summarizer = summarizer_for(self.memory)
        return self._summarizer

    # -- cascade -------------------------------------------------------------------------------

    def cascade(self, tree: str, *, force_l0: bool = False, l0_upto: set[str] | None = None) -> None:
        level = 0
        seals = 0
        gray = gray_waiting(self.index, self.settings, tree).get(tree) if force_l0 else None
        while level < MAX_LEVEL and level <= self._max_level(tree):
            while seals < MAX_SEALS_PER_TREE:
                if self.memory.stopping.is_set():
                    return  # the daemon is stopping: the next start seals what is left
                items = buffer(self.index, self.settings, tree, level)
                group = self._choose(items, level, force_l0, l0_upto)
                if level == 0 and gray is not None:
                    group = list(takewhile(lambda item: item.order() < gray.first, group))
                if not group:
                    break
                if not self._seal(tree, level, group):
                    return  # a competing seal won, or the note could not be written: leave the tree
                seals += 1
            level += 1

    def _max_level(self, tree: str) -> int:
        return int(self.index.scalar("SELECT coalesce(max(level), 0) FROM summaries WHERE tree = ?", [tree]))

    def _choose(
        self, items: list[BufferItem], level: int, force: bool, upto: set[str] | None
    ) -> list[BufferItem]:
        if not items:
            return []
        if level > 0:
            return items[: self.settings.fanout] if len(items) >= self.settings.fanout else []
        budget = self.settings.l0_tokens
        if sum(i.tokens for i in items) >= budget:
            total = 0
            for n, item in enumerate(items):
                total += item.tokens
                if total > budget:
                    return items[: max(1, n)]
            return items
        if force:
            return items
        if upto:
            last = max((n for n, item in enumerate(items) if item.id in upto), default=-1)
            return items[: last + 1]
        return []

    # -- one seal ------------------------------------------------------------------------------

    def _leaves_below(self, level: int, group: Sequence[BufferItem]) -> list[str]:
        """The leaves a summary over `group` (children of `level`) holds, in order."""
        ids = [item.id for item in group]
        if level == 0:
            return ids
        below = dict(self.index.query("SELECT id, leaf_ids FROM summaries WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids]))
        return [leaf for sid in ids for leaf in below.get(sid) or ()]

    def _seal(self, tree: str, level: int, group: Sequence[BufferItem]) -> bool:
        snapshot = [(item.id, item.content) for item in group]
        try:
            hydrated = hydrate(self.index, self.memory.config.vault, level, group)
        except NoteReadError as exc:
            return self._abort(tree, level, str(exc))
        tokens_in = sum(child.tokens for child in hydrated.children)
        result = self._summarize(hydrated.children, output_budget(tokens_in), tokens_in)
        if self.memory.stopping.is_set():
            return False  # its call was given up for the stop: the next start seals the group
        sid = self._earlier_id(tree, level + 1, group)
        heir = None if sid else self._replaced(tree, level + 1, group)  # whose title and properties it takes
        sid = sid or self._new_id(tree, level + 1, group, hydrated.keys)
        note = SummaryNote(
            id=sid,
            tree=tree,
            level=level + 1,
            children=tuple(hydrated.links),
            children_sha256=children_digest([item.content for item in group]),
            time_start=hydrated.time_start,
            time_end=hydrated.time_end,
            entities=tuple(summary_entity_links(result.text, hydrated.entities)),
            summarizer=result.summarizer,
            body=escape_markup(result.text),  # reads as the summarizer wrote it: `%%` opens no comment
            title=summary_title(
                summary_labels(self.index, [(sid, tree, self._leaves_below(level, group))])[sid],
                level + 1,
                hydrated.time_start,
                hydrated.time_end,
            ),
        )
        with tree_lock(self.index, tree):
            live = buffer(self.index, self.settings, tree, level)
            if [(item.id, item.content) for item in live[: len(snapshot)]] != snapshot:
                return self._abort(
                    tree, level, "the buffer changed while sealing (another seal won); nothing written"
                )
            folder = tree_folders(self.index, [tree])[tree]
            for n in range(1, SUMMARY_PATHS + 1):  # around the notes of yours at its paths
                path = summary_path(folder, level + 1, sid, n)
                try:
                    outcome = self._write(path, note, heir)
                except OSError as exc:  # no room, no permission, a file where a folder goes: this tree waits
                    return self._abort(tree, level, f"{path} could not be written ({exc}); the next pass tries again")
                if outcome != "kept":
                    break
                self.report.kept.append({"id": sid, "path": path, "reason": "a note of yours is at this path"})
            else:
                return self._abort(
                    tree,
                    level,
                    f"notes of yours hold all {SUMMARY_PATHS} paths of {sid} ({summary_path(folder, level + 1, sid)}, "
                    f"…-2 … -{SUMMARY_PATHS}); move one of them away and the next flush seals it",
                )
            self.memory.sync_paths([path])
            taken = self.index.scalar("SELECT max(len(children)) FROM summaries WHERE note_path = ?", [path])
            if taken != len(group):  # without this guard a note the index rejects would be sealed forever
                return self._abort(tree, level, f"{path} was written but the index did not take it")
            taken = [p for p in (path, heir) if p is not None and self.kept_keys.pop(p, None) is not None]
            unsealed.settle(self.index, taken)
        self._sealed += 1
        if self._progress is not None:
            phase, progress, due = self._progress
            progress(phase, self._sealed, max(due, self._sealed))  # `due` is an estimate
        self.report.llm_calls += result.llm_calls
        if result.summarizer == FallbackSummarizer().identity:
            self.report.fallbacks += 1
        entry: dict[str, Any] = {
            "id": sid,
            "tree": tree,
            "level": level + 1,
            "path": path,
            "children": len(group),
            "summarizer": result.summarizer,
        }
        if result.note:
            entry["note"] = result.note
        self.report.sealed.append(entry)
        return True

    def _earlier_id(self, tree: str, level: int, group: Sequence[BufferItem]) -> str | None:
        """The id of the stale summary removed over exactly `group`, which the summary sealed
        again over it keeps. The same as `summary_id` gives, but for a summary an earlier
        version named from its children's text: sealed again after an upgrade, it keeps its
        name, and with it your title, properties and the links to it."""
        path = self.removed.get((tree, level, tuple(item.id for item in group)))
        held = self.kept_keys.get(path) if path is not None else None
        if held is None:
            return None
        sid = split_frontmatter(held.decode("utf-8", errors="replace")).data.get("id")
        return sid if isinstance(sid, str) and SUMMARY_ID_RE.fullmatch(sid) else None

    def _replaced(self, tree: str, level: int, group: Sequence[BufferItem]) -> str | None:
        """The path of the stale summary removed at this level whose title, aliases and
        properties the summary sealed over `group` takes when it is not the same summary (a
        message or note under it deleted, a child summary sealed anew below, leaves grouped
        otherwise): the one whose children come first in `group`. What you gave a summary is
        never dropped while any of its children is summarized again (docs/trees.md, "Links and
        titles follow")."""
        at = {item.id: n for n, item in enumerate(group)}
        held = [
            (min(at[child] for child in children if child in at), path)
            for (removed_tree, removed_level, children), path in self.removed.items()
            if removed_tree == tree and removed_level == level and path in self.kept_keys
            and any(child in at for child in children)
        ]
        return min(held)[1] if held else None

    def _new_id(self, tree: str, level: int, group: Sequence[BufferItem], keys: Sequence[str]) -> str:
        """`summary_id` over the children's `keys`; when a summary of other children already
        has that id (messages whose ids repeat in a tree: a note written by another tool, whose
        messages are named by their place in it), the id over the children's own ids instead,
        else this seal wrote over that summary's note and the two groups took turns, sealed
        again and again."""
        sid = summary_id(tree, level, keys)
        ids = [item.id for item in group]
        held = self.index.query("SELECT children FROM summaries WHERE id = ?", [sid])
        return sid if all(list(children) == ids for (children,) in held) else summary_id(tree, level, ids)

    def _summarize(self, children: Sequence[Any], budget: int, tokens_in: int) -> SummaryText:
        fallback = FallbackSummarizer()
        try:
            result = self.summarizer.summarize(children, budget)
        except Exception as exc:  # a broken summarizer (or one that cannot be built) must never block or lose a seal
            name = self._summarizer.name if self._summarizer is not None else "(not built)"
            log.warning("summarizer %s failed (%s); using the fallback", name, exc)
            result = SummaryText(fallback.summarize(children, budget).text, fallback.identity, note=str(exc))
        checked = result.summarizer != fallback.identity  # (its "X said: " may make it longer than one short child)
        if checked and (count_tokens(result.text) > tokens_in or (tokens_in and not result.text.strip())):
            why = (
                "the summary was longer than its children" if result.text.strip() else "the summary was empty"
            )
            result = SummaryText(
                fallback.summarize(children, budget).text, fallback.identity, result.llm_calls, why
            )
        return result

    def _write(self, rel: str, note: SummaryNote, heir: str | None = None) -> str:
        """ "written", "same" (identical bytes already there) or "kept" (a note you edited).
        A new note takes what you gave the removed one at its path, else at `heir` (`_replaced`)."""
        path = self.memory.config.vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(path):
            outcome = write_owned(path, note)
            return "kept" if outcome is None else outcome
        data = note.render().encode("utf-8")
        yours = self.kept_keys.get(rel) or (self.kept_keys.get(heir) if heir is not None else None)
        if yours is not None:  # sealed again: with the title and properties you added
            data = keeping_yours(note, yours)
        try:
            write_atomic(path, data, overwrite=False)
        except RefuseToClobber:
            return "kept"
        return "written"

    def _abort(self, tree: str, level: int, reason: str) -> bool:
        log.info("seal of %s level %d aborted: %s", tree, level, reason)
        self.report.aborted.append({"tree": tree, "level": level, "reason": reason})
        return False
