"""What `vaultmind tree` shows: the trees, and for one tree its levels, buffers and stale nodes.

Also the two JSON routes the daemon serves for the CLI (`route_tree`, `route_flush`), so the
command works the same with and without a running daemon.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from vaultmind.arguments import whole_number
from vaultmind.errors import NotFound, UsageError
from vaultmind.shell import command_line
from vaultmind.tree.buffers import buffer, gray_waiting, tree_states
from vaultmind.tree.deriver import SummaryRow, is_summary_note, load_rows, resolve_rows, summary_info
from vaultmind.tree.engine import flush, reseal_stale, seal_ready
from vaultmind.tree.folders import tree_folders
from vaultmind.tree.hydrate import source_label, source_labels
from vaultmind.tree.note import iso_time, iso_z, tree_for_note
from vaultmind.tree.quiet import still_settling
from vaultmind.tree.refresh import finish_refresh, refresh_summaries
from vaultmind.tree.report import Progress, SealReport
from vaultmind.tree.settings import TreeSettings
from vaultmind.tree.summarize import Summarizer, close_summarizer
from vaultmind.tree.summarizers import summarizer_for
from vaultmind.vault.layout import NOTE_SUFFIX, SUMMARIES_DIR

if TYPE_CHECKING:
    from vaultmind.memory import Memory

MAX_LISTED = 200
DEFAULT_MAX_STALE = 64


def tree_view(memory: Memory, tree_id: str | None = None) -> dict[str, Any]:
    """Every tree with its counts (`tree_id` None), or one tree in detail."""
    settings = TreeSettings.from_extra(memory.config.extra)
    if tree_id is None:
        return _list(memory, settings)
    return _detail(memory, settings, tree_id)


def _list(memory: Memory, settings: TreeSettings) -> dict[str, Any]:
    states = tree_states(memory.index, settings)
    counts = {
        row[0]: row[1:]
        for row in memory.index.query(
            """SELECT tree, count(*), max(level), count(*) FILTER (WHERE stale AND NOT user_edited),
                      count(*) FILTER (WHERE user_edited) FROM summaries GROUP BY tree"""
        )
    }
    gray = gray_waiting(memory.index, settings)
    trees = []
    names = sorted(set(states) | set(counts) | set(gray))
    labels = source_labels(memory.index, names)
    folders = tree_folders(memory.index, names)
    for name in names:
        state = states.get(name)
        summaries, top, stale, edited = counts.get(name, (0, 0, 0, 0))
        trees.append(
            {
                "tree": name,
                "title": labels[name],
                "folder": f"{SUMMARIES_DIR}/{folders[name]}",
                "leaves": state.leaves if state else 0,
                "buffered_leaves": state.l0_items if state else 0,
                "buffered_tokens": state.l0_tokens if state else 0,
                "gray_leaves": gray[name].count if name in gray else 0,  # waiting for their importance decision
                "summaries": int(summaries),
                "levels": int(top or 0),
                "stale": int(stale),
                "edited": int(edited),
            }
        )
    return {"settings": settings.to_dict(), "trees": trees}


def _detail(memory: Memory, settings: TreeSettings, given: str) -> dict[str, Any]:
    index = memory.index
    tree_id = given
    states = tree_states(index, settings, tree_id)
    with index.lock:
        rows = load_rows(index.con, "s.tree = ?", [tree_id])
    if tree_id not in states and not rows and not gray_waiting(index, settings, tree_id):
        tree_id = tree_of_note(memory, given)
        states = tree_states(index, settings, tree_id)
        with index.lock:
            rows = load_rows(index.con, "s.tree = ?", [tree_id])
        if tree_id not in states and not rows:
            raise NotFound(
                f"{given!r} is in tree {tree_id!r}, which has no leaves or summaries yet",
                hint=f"`{command_line('tree', '--vault', memory.config.vault)}` lists the trees",
            )
    state = states.get(tree_id)
    l0 = buffer(index, settings, tree_id, 0)
    gray = gray_waiting(index, settings, tree_id).get(tree_id)
    levels: list[dict[str, Any]] = []
    buffers: list[dict[str, Any]] = [
        {
            "level": 0,
            "items": len(l0),
            "tokens": sum(i.tokens for i in l0),
            "seals_at_tokens": settings.l0_tokens,
            "oldest": iso_z(min((i.time for i in l0 if i.time), default=None)),
            "newest": iso_z(max((i.time for i in l0 if i.time), default=None)),
            "ids": [i.id for i in l0[:MAX_LISTED]],
            "gray": gray.count if gray is not None else 0,
        }
    ]
    top = max((r.level for r in rows), default=0)
    for level in range(1, top + 1):
        at = [r for r in rows if r.level == level]
        waiting = buffer(index, settings, tree_id, level)
        levels.append(
            {
                "level": level,
                "summaries": len(at),
                "stale": sum(r.stale and not r.user_edited for r in at),
                "edited": sum(r.user_edited for r in at),
            }
        )
        buffers.append(
            {
                "level": level,
                "items": len(waiting),
                "seals_at_count": settings.fanout,
                "ids": [i.id for i in waiting],
            }
        )
    return {
        "tree": tree_id,
        "title": source_label(index, tree_id),
        "folder": f"{SUMMARIES_DIR}/{tree_folders(index, [tree_id])[tree_id]}",
        "settings": settings.to_dict(),
        "leaves": state.leaves if state else 0,
        "levels": levels,
        "buffers": buffers,
        "stale": _explained(memory, [r for r in rows if r.stale and not r.user_edited]),
        "edited": _explained(memory, [r for r in rows if r.user_edited]),
        "summaries": [
            _summary(r) for r in sorted(rows, key=lambda r: (-r.level, r.time_start or datetime.min, r.id))
        ][:MAX_LISTED],
        "truncated": len(rows) > MAX_LISTED,
    }


def tree_of_note(memory: Memory, given: str) -> str:
    """The tree of the note at `given` — a vault path as Obsidian copies it (with or without
    `.md`, or absolute inside the vault): a source note's or your note's tree, or the tree a
    summary note belongs to. Raises NotFound naming what was given otherwise."""
    text = given.strip().strip("\"'").removeprefix("[[").removesuffix("]]").split("|")[0].split("#")[0]
    path = text.replace("\\", "/").strip()
    vault = memory.config.vault.resolve().as_posix()
    if path.startswith(vault + "/"):
        path = path[len(vault) + 1 :]
    path = path.removeprefix("./").lstrip("/")
    candidates = [path] if path.lower().endswith(NOTE_SUFFIX) else [path, path + NOTE_SUFFIX]
    hint = f"`{command_line('tree', '--vault', memory.config.vault)}` lists the trees; a note is named by its path in the vault"
    with memory.index.lock:
        found = memory.index.con.execute(
            "SELECT path, kind, source_id, frontmatter FROM notes WHERE path IN (SELECT unnest(?::VARCHAR[]))",
            [candidates],
        ).fetchall()
    if not found:
        raise NotFound(f"{given!r} is neither a tree id nor a note in the vault", hint=hint)
    note_path, kind, source_id, fm_json = sorted(found, key=lambda r: candidates.index(r[0]))[0]
    if kind == "summary":
        fm = json.loads(fm_json) if fm_json else {}
        if not is_summary_note(kind, fm):
            raise NotFound(f"{note_path!r} is not a summary note: it belongs to no summary tree", hint=hint)
        tree = fm.get("tree")
        if isinstance(tree, str) and tree:
            return tree
        raise NotFound(f"summary note {note_path!r} names no tree in its front matter", hint=hint)
    tree = tree_for_note(kind, note_path, source_id)
    if tree is None:
        what = "an entity note" if kind == "entity" else f"a {kind} note without a source_id"
        raise NotFound(f"{note_path!r} is {what}: it belongs to no summary tree", hint=hint)
    return tree


def _summary(row: SummaryRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "level": row.level,
        "path": row.note_path,
        "children": len(row.children),
        "leaves": len(row.leaf_ids),
        "time_start": iso_z(row.time_start),
        "time_end": iso_z(row.time_end),
        "entities": list(row.entities),
        "summarizer": row.summarizer,
        "user_edited": row.user_edited,
        "stale": row.stale and not row.user_edited,
    }


def _explained(memory: Memory, rows: list[SummaryRow]) -> list[dict[str, Any]]:
    """Each stale summary with why it is stale (re-resolved against the index now); for a
    summary you edited (never stale to vaultmind: it is kept as you wrote it), what changed
    below it since, if anything."""
    if not rows:
        return []
    with memory.index.lock:
        fm = dict(
            memory.index.con.execute(
                "SELECT path, frontmatter FROM notes WHERE path IN (SELECT unnest(?::VARCHAR[]))",
                [[r.note_path for r in rows]],
            ).fetchall()
        )
        infos = [
            info
            for r in rows
            if r.note_path in fm
            and (info := summary_info(r.note_path, json.loads(fm[r.note_path]), r.user_edited))
        ]
        resolved = {
            r.note_path: r
            for r in resolve_rows(memory.index.con, sorted(infos, key=lambda i: (i.level, i.path)))
        }
    quiet = TreeSettings.from_extra(memory.config.extra).reseal_quiet_minutes
    settling = still_settling(memory.index, [r for r in rows if not r.user_edited], datetime.now(UTC), quiet)
    out = []
    for row in rows:
        again = resolved.get(row.note_path)
        if not row.stale:
            why = ""
        elif again is not None and again.missing:
            why = f"{again.missing} child link(s) no longer resolve (deleted or renamed)"
        elif again is not None and again.changed:
            why = "a child changed since this summary was sealed"
        elif again is not None and again.dropped:
            why = f"{again.dropped} child message(s) no longer admitted (the LLM judged them not worth remembering)"
        else:
            why = "a summary below it is stale"
        if row.user_edited:
            why = why.replace("this summary was sealed", "vaultmind wrote it")
        out.append(
            {
                "id": row.id,
                "level": row.level,
                "path": row.note_path,
                "user_edited": row.user_edited,
                "why": why,
                "action": _action(row, settling.get(row.note_path)),
            }
        )
        if row.note_path in settling:
            out[-1]["waiting_until"] = iso_z(settling[row.note_path])
    return out


def _action(row: SummaryRow, settles: datetime | None) -> str:
    """What happens next to a stale or edited summary."""
    if row.user_edited:
        return "kept: you edited it"
    if settles is not None:
        return f"waits for the edits below it to settle, then re-sealed (not before {iso_z(settles)})"
    return "re-sealed by the next flush"


# -- the daemon's routes and the CLI's local path --------------------------------------------


def maintain(
    memory: Memory,
    *,
    now: datetime,
    flush_all: bool = False,
    max_stale: int = DEFAULT_MAX_STALE,
    summarizer: Summarizer | None = None,
    progress: Progress | None = None,
    ner_first: bool = False,
) -> SealReport:
    """With `ner_first` (an asked-for flush: the CLI's and `/v1/flush`), first run NER on every
    text still waiting for it and write the entity notes it earns (`_entities_first`). Then finish what a stopped refresh left, seal full buffers, re-seal stale summaries (bounded;
    with `flush_all` those over notes still being written too, which wait otherwise), flush quiet buffers (every non-empty level-0 buffer with `flush_all`), then refresh the entity links and titles of
    the summary notes that need it (no summarizer involved). A stopping daemon skips the phases not
    yet begun: each reads the state of every tree (at 50k notes +80 MB for a moment, at exit).
    `progress` hears the summaries sealed and flushed, of about how many are due.

    One pass runs at a time (`Memory.seal_lock`): a flush asked for while the background upkeep
    seals waits for that pass, then runs its own — two passes would race for the same buffers —
    and its report says what that pass did (`waited_for`): the summaries you waited for were
    sealed by it, and the flush's own pass often finds nothing left to do."""
    finished = _passes.get(memory, (0, None))[0]
    while not memory.seal_lock.acquire(timeout=0.2):
        if memory.stopping.is_set():
            return SealReport()
    try:
        count, last = _passes.get(memory, (0, None))
        if ner_first:
            _entities_first(memory, progress)
        report = _maintain(memory, now, flush_all, max_stale, summarizer, progress)
        _passes[memory] = (count + 1, report)
    finally:
        memory.seal_lock.release()
    if count > finished and last is not None:
        report.waited_for = {
            "sealed": last.sealed,
            "llm_calls": last.llm_calls,
            "fallbacks": last.fallbacks,
            "seconds": round(last.seconds, 3),
        }
    return report


_passes: weakref.WeakKeyDictionary[Memory, tuple[int, SealReport | None]] = weakref.WeakKeyDictionary()
"""Per memory: how many seal passes ended, and the report of the last one."""


def _entities_first(memory: Memory, progress: Progress | None) -> None:
    """NER on every text still waiting for it, and the entity notes it earns, so what a flush
    seals is what a run with NER done first seals: the extractive summarizer picks sentences by
    their entities, and a summary sealed before its leaves' entities were known is never sealed
    again; and a summary links the entity notes of whom it names (`ingest`, then `flush`, with
    no sync between: no entity note had been written, so the summaries linked no one). The
    daemon's upkeep does this before its own passes (`Memory.enrich`); a flush asked for does
    not wait for it. `progress` hears `("ner", texts done, texts waiting)`."""
    memory.enrich(progress)


def _maintain(
    memory: Memory,
    now: datetime,
    flush_all: bool,
    max_stale: int,
    summarizer: Summarizer | None,
    progress: Progress | None,
) -> SealReport:
    owned = summarizer is None
    active = summarizer_for(memory) if summarizer is None else summarizer
    flush_at, older_than = (datetime.max.replace(tzinfo=UTC), 0.0) if flush_all else (now, None)
    phases: list[Callable[[], SealReport]] = [
        lambda: finish_refresh(memory),
        lambda: seal_ready(memory, summarizer=active, progress=progress),
        lambda: reseal_stale(
            memory, max_nodes=max_stale, summarizer=active, now=None if flush_all else now
        ),
        lambda: flush(memory, now=flush_at, summarizer=active, older_than_hours=older_than, progress=progress),
        lambda: refresh_summaries(memory),
    ]
    report = SealReport()
    try:
        for phase in phases:
            if memory.stopping.is_set():
                break  # the next start does the rest
            report.merge(phase())
    finally:
        if owned:
            close_summarizer(active)
    return report


def route_tree(memory: Memory, body: dict[str, Any]) -> dict[str, Any]:
    """`POST /v1/tree {"tree": str | null}` (a tree id or a note's path) → `tree_view`."""
    tree = body.get("tree")
    if tree is not None and not isinstance(tree, str):
        raise UsageError("'tree' must be a string (a tree id or a note's path) or null")
    return tree_view(memory, tree)


def route_flush(memory: Memory, body: dict[str, Any]) -> dict[str, Any]:
    """`POST /v1/flush {"all": bool, "at": ISO 8601 | null, "max_stale": int}` → `maintain`."""
    flush_all = body.get("all", False)
    if not isinstance(flush_all, bool):
        raise UsageError("'all' must be true or false")
    max_stale = whole_number(body.get("max_stale"), "'max_stale'", least=0)
    if max_stale is None:
        max_stale = DEFAULT_MAX_STALE
    return maintain(  # a long one shows in the daemon's output
        memory,
        now=parse_now(body.get("at")),
        flush_all=flush_all,
        max_stale=max_stale,
        progress=memory.syncer.progress,
        ner_first=True,
    ).to_dict()


def parse_now(value: Any, name: str = "'at'") -> datetime:
    """What "now" is for a flush: `value` (ISO 8601; UTC unless it says otherwise) or the current
    time. `name` is what the caller calls it in an error (`--at` on the command line)."""
    if value is None:
        return datetime.now(UTC)
    example = "e.g. 2024-03-04T09:00:00Z, or 2024-03-04"
    if not isinstance(value, str):
        raise UsageError(f"{name} must be an ISO 8601 time", hint=example)
    try:
        parsed = iso_time(value)
    except ValueError as exc:
        raise UsageError(f"{name} {value!r} is not an ISO 8601 time", hint=example) from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
