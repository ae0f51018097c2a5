"""The title and properties of a summary `reseal_stale` removed, kept until it is sealed again.

A stale summary is deleted so its children fold again; sealed again over the same children it
comes back at its path with the title, aliases and properties you gave it. A stop (Ctrl-C,
`vaultmind stop`) or a failure between the delete and that seal must not lose them, so before
the note is deleted its bytes are recorded in a `tree.unsealed` job (the queue's `jobs` table,
in the index; no worker runs these, `vaultmind queue` lists them). The seal that writes the
note at that path again takes them and settles the job; so does the new summary sealed over
other children that replaces it (a message under it deleted: `engine._Sealer._replaced`). A job
none of whose children is waiting in its buffer any more (every one deleted, or sealed into
another summary) is settled by the next pass that ends without a stop.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import duckdb

from vaultmind.index.arrow import execute_with, key_table
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.queue.store import NewJob, enqueue, now_ms
from vaultmind.tree.buffers import buffer
from vaultmind.tree.note import parse_link

if TYPE_CHECKING:
    from vaultmind.index.store import Index
    from vaultmind.tree.settings import TreeSettings

KIND = "tree.unsealed"
SUMMARY_ID_RE = re.compile(r"s-[0-9a-f]{16}")  # `note.summary_id`'s form


def _key(path: str) -> str:
    return f"{KIND}:{path}"


def _rows(index: Index) -> list[dict[str, Any]]:
    with index.lock:
        rows = index.con.execute(
            f"SELECT payload FROM jobs WHERE kind = '{KIND}' AND status = 'ready' ORDER BY id"
        ).fetchall()
    return [json.loads(payload) for (payload,) in rows]


def pending(index: Index) -> dict[str, bytes]:
    """The notes removed and not sealed again yet: path → the note's bytes when it was removed."""
    return {str(row["path"]): str(row["note"]).encode("utf-8") for row in _rows(index)}


def removed_groups(index: Index) -> dict[tuple[str, int, tuple[str, ...]], str]:
    """The notes removed and not sealed again yet, by what they summarized: (tree, level, the
    children's ids) → path."""
    return {
        (str(row["tree"]), int(row["level"]), tuple(str(c) for c in row["children"])): str(row["path"])
        for row in _rows(index)
    }


def record(index: Index, *, path: str, note: bytes, tree: str, level: int, children: Sequence[str]) -> None:
    """Record the note at `path` (vaultmind's, so UTF-8) before it is removed; a note recorded
    at that path before is replaced (this one carries what you changed since)."""
    payload = {"path": path, "note": note.decode("utf-8"), "tree": tree, "level": level, "children": list(children)}
    with index.transaction() as con:
        _settle(con, [path])
        enqueue(con, [NewJob(KIND, _key(path), payload)], now=now_ms())


def settle(index: Index, paths: Sequence[str]) -> None:
    """The notes at `paths` were sealed again (or can no longer be): their jobs are done."""
    if paths:
        with index.transaction() as con:
            _settle(con, paths)


def _settle(con: duckdb.DuckDBPyConnection, paths: Sequence[str]) -> None:
    execute_with(
        con,
        f"""UPDATE jobs SET status = 'done', updated_ms = ?
            WHERE kind = '{KIND}' AND status = 'ready' AND dedupe_key IN (SELECT k FROM _rows)""",
        [now_ms()],
        rows=key_table(sorted(_key(p) for p in paths)),
    )


def tidy(index: Index, settings: TreeSettings) -> None:
    """Settle the jobs none of whose children is waiting to be summarized again (see the module)."""
    moot = []
    for row in _rows(index):
        waiting = {item.id for item in buffer(index, settings, str(row["tree"]), int(row["level"]) - 1)}
        if not {str(child) for child in row["children"]} & waiting:
            moot.append(str(row["path"]))
    settle(index, moot)


GONE_CHILD = "\0a child no longer there"  # in a group no live buffer can hold: the group sealed again is a new note


def sealed_children(level: int, resolved: Sequence[str], note: bytes) -> tuple[str, ...]:
    """The children a summary note was sealed over, by id, as a group sealed again must match
    to keep its id (`engine._Sealer._earlier_id`): the index's `resolved` children when every link of
    the note still resolves; else, above level 1, the ids its links name (a child summary you
    deleted is sealed again under its id); else `resolved` and `GONE_CHILD` — a message or
    section deleted: the summary over what is left is a new one, with the id and path a fresh
    vault gives it, which takes what you gave this one (`engine._Sealer._replaced`; docs/trees.md,
    "Links and titles follow")."""
    links = split_frontmatter(note.decode("utf-8", errors="replace")).data.get("children")
    written = [str(link) for link in links if isinstance(link, str)] if isinstance(links, list) else []
    if len(written) <= len(resolved):
        return tuple(resolved)
    if level > 1:
        named = [SUMMARY_ID_RE.fullmatch(_link_stem(link)) for link in written]
        if all(named):
            return tuple(dict.fromkeys(m.group(0) for m in named if m is not None))
    return (*resolved, GONE_CHILD)


def _link_stem(link: str) -> str:
    """The note name a child link points at, without a `-2` … suffix (`note.summary_path`)."""
    parsed = parse_link(link)
    stem = parsed.note_path.rsplit("/", 1)[-1].removesuffix(".md") if parsed is not None else ""
    return re.sub(r"-\d+$", "", stem)
