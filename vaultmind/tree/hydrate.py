"""What a seal needs to know about its children: their text, and the entities they mention.

Leaves come from the index (text, author, time, note title); summaries from their note on
disk (the body is the summary, the user's edit included). Entities come from the entity index
when it exists (`occurrences`, `entities`); without it a summary links no entities.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from vaultmind.entities.ids import normalize
from vaultmind.errors import NoteReadError
from vaultmind.index.arrow import execute_with, key_table
from vaultmind.index.store import Index
from vaultmind.index.tables import has_columns, has_table
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.markdown.render import unescape_markup
from vaultmind.model import USER_TREE_PREFIX
from vaultmind.tree.buffers import BufferItem
from vaultmind.tree.names import mentions
from vaultmind.tree.note import (
    entity_link,
    is_mailbox,
    iso_z,
    leaf_link,
    original_first,
    summary_link,
    threads_label,
    tree_label,
)
from vaultmind.tree.summarize import ChildText


@dataclass(slots=True)
class EntityInfo:
    id: str
    display: str
    note_path: str
    names: set[str] = field(default_factory=set)
    has_note: bool = False  # an entity note of the vault holds it: a link to it resolves


@dataclass(slots=True)
class Hydrated:
    children: list[ChildText]
    links: list[str]  # the children as front matter links, in order
    time_start: datetime | None
    time_end: datetime | None
    entities: dict[str, EntityInfo]
    # what names each child in the summary's id (`note.summary_id`), in order: a message by its
    # id in its source (a day note renamed or its text edited keeps it), a section by its link
    # (its text edited keeps it), a summary by its id
    keys: list[str] = field(default_factory=list)


def hydrate(index: Index, vault: Path, level: int, items: Sequence[BufferItem]) -> Hydrated:
    """The children of a level-(`level` + 1) summary. Raises NoteReadError if one vanished."""
    ids = [item.id for item in items]
    if level == 0:
        return _leaves(index, ids)
    return _summaries(index, vault, ids)


def _leaves(index: Index, ids: list[str]) -> Hydrated:
    rows = index.query(
        """WITH wanted AS (SELECT unnest(?::VARCHAR[]) AS id),
                siblings AS (
                    SELECT x.id, count(*) OVER (PARTITION BY x.note_path, x.anchor) AS shared,
                           row_number() OVER (PARTITION BY x.note_path, x.anchor ORDER BY x.seq) AS k
                    FROM leaves x
                    WHERE x.note_path IN (SELECT note_path FROM leaves WHERE id IN (SELECT id FROM wanted)))
           SELECT l.id, l.text, l.kind, l.author, l.ts, l.heading_path, n.title, l.note_path, l.anchor,
                  s.shared, s.k, n.source_kind, l.message_id
           FROM leaves l JOIN notes n ON n.path = l.note_path JOIN siblings s ON s.id = l.id
           WHERE l.id IN (SELECT id FROM wanted)""",
        [ids],
    )
    by_id: dict[str, tuple[Any, ...]] = {}
    for row in original_first(rows, 7):  # a leaf in a conflict copy too: the original's
        by_id.setdefault(row[0], row)
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise NoteReadError(
            f"{len(missing)} leaf/leaves vanished while sealing", hint="the next seal retries"
        )
    occurrences, entities = _leaf_entities(index, ids)
    names: dict[str, list[str]] = {}
    for (occurring_in, eid), _ in occurrences.items():
        names.setdefault(occurring_in, []).append(entities[eid].display)
    children: list[ChildText] = []
    links: list[str] = []
    keys: list[str] = []
    times: list[datetime] = []
    for leaf_id in ids:
        (
            _,
            text,
            kind,
            author,
            ts,
            heading_path,
            title,
            note_path,
            anchor,
            shared,
            k,
            source_kind,
            message_id,
        ) = by_id[leaf_id]
        if ts is not None:
            times.append(ts)
        label = None
        if kind != "message":
            heading = heading_path[-1] if heading_path else ""
            label = f"{title} › {heading}" if heading and heading != title else str(title)
        known = tuple(names.get(leaf_id, ()))
        children.append(
            ChildText(
                leaf_id,
                text,
                ("email" if source_kind == "email" else "message") if kind == "message" else "section",
                author,
                iso_z(ts),
                label,
                known,
            )
        )
        if shared > 1:
            part_label = f"{title} › {anchor.lstrip('#^').replace('#', ' › ')}" if anchor else str(title)
            links.append(leaf_link(note_path, anchor, int(k), part_label))
        else:
            links.append(leaf_link(note_path, anchor))
        keys.append(f"message\0{message_id}" if kind == "message" and message_id else links[-1])
    return Hydrated(children, links, min(times, default=None), max(times, default=None), entities, keys)


def summary_body(vault: Path, path: str) -> str:
    """The body of the summary note at `path` (in `vault`); NoteReadError when unreadable."""
    try:
        return split_frontmatter((vault / path).read_text(encoding="utf-8")).body
    except (OSError, UnicodeDecodeError) as exc:
        raise NoteReadError(f"cannot read summary note: {exc}", path=path) from exc


def _summaries(index: Index, vault: Path, ids: list[str]) -> Hydrated:
    rows = index.query(
        """SELECT id, note_path, time_start, time_end, entities FROM summaries
           WHERE id IN (SELECT unnest(?::VARCHAR[]))""",
        [ids],
    )
    by_id: dict[str, tuple[Any, ...]] = {}
    for found in original_first(rows, 1):  # a conflict copy's id: the original's note
        by_id.setdefault(found[0], found)
    children: list[ChildText] = []
    links: list[str] = []
    starts: list[datetime] = []
    ends: list[datetime] = []
    entity_ids: set[str] = set()
    for sid in ids:
        row = by_id.get(sid)
        if row is None:
            raise NoteReadError(f"summary {sid} vanished while sealing", hint="the next seal retries")
        _, path, start, end, ents = row
        body = summary_body(vault, path)
        if start is not None:
            starts.append(start)
        if end is not None:
            ends.append(end)
        entity_ids.update(ents)
        # read without the markup escapes (the summary above escapes its text again), but with a
        # name's `\#` (not `unescape_shown`): escaping would not put it back, and "X #ops said: …"
        # would tag the summary above
        children.append(ChildText(sid, unescape_markup(body).strip(), "summary", None, iso_z(start)))
        links.append(summary_link(path))
    entities = _entity_infos(index, sorted(entity_ids))
    names = tuple(info.display for info in entities.values())
    children = [ChildText(c.id, c.text, c.kind, c.author, c.time, c.title, names) for c in children]
    return Hydrated(children, links, min(starts, default=None), max(ends, default=None), entities, list(ids))


def summary_entities(index: Index, level: int, child_ids: Sequence[str]) -> dict[str, EntityInfo]:
    """The entities a level-`level` summary of `child_ids` may link, as the index knows them
    now: those its leaves mention (level 1), those its child summaries link (above). A seal and
    `refresh_summaries` both ask this, so a summary refreshed later links what a seal now would."""
    ids = list(child_ids)
    if level == 1:
        return _leaf_entities(index, ids)[1]
    rows = index.query(
        "SELECT id, note_path, entities FROM summaries WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids]
    )
    by_id: dict[str, list[str]] = {}
    for sid, _, ents in original_first(rows, 1):  # a conflict copy: the original's
        by_id.setdefault(sid, list(ents))
    return _entity_infos(index, sorted({eid for ents in by_id.values() for eid in ents}))


def _leaf_entities(
    index: Index, ids: list[str]
) -> tuple[dict[tuple[str, str], tuple[str, str]], dict[str, EntityInfo]]:
    """The occurrences in the leaves `ids` and their entities, with the surfaces read as names."""
    occurrences = _occurrences(index, ids)
    entities = _entity_infos(index, sorted({eid for eid, _ in occurrences.values()}))
    for eid, surface in occurrences.values():
        if surface:
            entities[eid].names.add(normalize(surface))
    return occurrences, entities


def source_label(index: Index, tree: str) -> str:
    """What the tree is called for a reader (`note.tree_label`), from its source notes' titles."""
    return source_labels(index, [tree])[tree]


def source_labels(index: Index, trees: Sequence[str] | None = None) -> dict[str, str]:
    """`source_label` of many trees at once (one query); of every source's tree without `trees`."""
    where = "source_id IS NOT NULL" if trees is None else "source_id IN (SELECT unnest(?::VARCHAR[]))"
    params = None if trees is None else [[t for t in trees if not t.startswith(USER_TREE_PREFIX)]]
    titles = {
        tree: (first, last)
        for tree, first, last in index.query(
            f"SELECT source_id, min(title), max(title) FROM notes WHERE {where} GROUP BY 1 ORDER BY 1", params
        )
    }
    return {t: tree_label(t, *titles.get(t, (None, None))) for t in (titles if trees is None else trees)}


def summary_labels(index: Index, summaries: Sequence[tuple[str, str, Sequence[str]]]) -> dict[str, str]:
    """What each summary (its id, tree and leaf ids, in order) is titled after: its tree's label
    (`source_labels`), but a mailbox's summary after the subjects of the threads its leaves are
    in (`note.threads_label`: "Mailbox inbox" said nothing of them). One query for them all."""
    labels = source_labels(index, sorted({tree for _, tree, _ in summaries}))
    wanted = sorted({leaf for _, tree, leaves in summaries if is_mailbox(tree) for leaf in leaves})
    titles: dict[str, str] = {}
    if wanted:
        with index.lock:
            titles = {
                str(leaf): str(title or "")
                for leaf, title in execute_with(
                    index.con,
                    "SELECT l.id, n.title FROM leaves l JOIN notes n ON n.path = l.note_path WHERE l.id IN (SELECT k FROM _rows)",
                    rows=key_table(wanted),
                ).fetchall()
            }
    out = {}
    for sid, tree, leaves in summaries:
        threads = threads_label([titles.get(leaf, "") for leaf in leaves]) if is_mailbox(tree) else None
        out[sid] = threads or labels[tree]
    return out


def _occurrences_ok(index: Index) -> bool:
    return has_table(index, "occurrences") and has_columns(
        index, "occurrences", ("entity_id", "leaf_id", "surface")
    )


def _occurrences(index: Index, ids: list[str]) -> dict[tuple[str, str], tuple[str, str]]:
    """(leaf id, entity id) → (entity id, surface) for the leaves `ids` (empty without entities)."""
    if not _occurrences_ok(index):
        return {}
    rows = index.query(
        """SELECT leaf_id, entity_id, min(surface) FROM occurrences
           WHERE leaf_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY 1, 2 ORDER BY 1, 2""",
        [ids],
    )
    return {(leaf_id, eid): (eid, surface) for leaf_id, eid, surface in rows}


def _entity_infos(index: Index, entity_ids: list[str]) -> dict[str, EntityInfo]:
    """Display name, note path and names of each entity (defaults when the registry lacks it)."""
    infos: dict[str, EntityInfo] = {}
    for eid in entity_ids:
        kind, _, key = eid.partition(":")
        infos[eid] = EntityInfo(
            eid, key.replace("-", " ").title() if kind in _NAME_KINDS else key, f"entities/{kind}/{key}.md"
        )
    if entity_ids and has_table(index, "entities") and has_columns(index, "entities", ("id", "display_name")):
        with_path = has_columns(index, "entities", ("note_path",))
        with_aliases = has_columns(index, "entities", ("aliases",))
        cols = (
            "id, display_name, "
            + ("note_path" if with_path else "NULL")
            + ", "
            + ("aliases" if with_aliases else "NULL")
        )
        for eid, display, note_path, aliases in index.query(
            f"SELECT {cols} FROM entities WHERE id IN (SELECT unnest(?::VARCHAR[]))", [entity_ids]
        ):
            info = infos[eid]
            if display:
                info.display = str(display)
            if note_path:
                info.note_path = str(note_path)
                info.has_note = True
            for alias in aliases or ():
                info.names.add(normalize(str(alias)))
    for info in infos.values():
        info.names.add(normalize(info.display))
        info.names.discard("")
    return infos


_NAME_KINDS = ("person", "org", "place", "product", "event", "work", "topic")


def summary_entity_links(summary: str, entities: dict[str, EntityInfo]) -> list[str]:
    """Links to the entity notes of the children's entities that the summary text mentions,
    sorted by entity id. An entity without a note is left out: its link would lead nowhere, and
    clicking it in Obsidian would make an empty note."""
    text = normalize(summary)
    return [
        entity_link(entities[eid].note_path, entities[eid].display)
        for eid in sorted(entities)
        if entities[eid].has_note and mentions(text, entities[eid].names)
    ]
