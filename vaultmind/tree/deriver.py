"""Fills the `summaries` table from summary notes, inside the sync transaction.

A row is a pure function of the summary note and the current state of what its links point at,
so an incremental sync gives the same rows as a cold rebuild:

- `children`: the links resolved to node ids, in order (a level-1 link → the leaf at that note
  path and anchor, the k-th one for `· part k`; a link above → the summary note's id); links
  that resolve to nothing are left out;
- `leaf_ids`: every descendant leaf, in order, without repeats;
- `entities`: the `entities` links resolved to entity ids through the entity notes they point
  at (`resolve_entity_links`), so a renamed or moved entity note keeps its id;
- `user_edited`: the body's sha256 differs from `vaultmind_body_sha256` (or there is none);
- `stale`: a child is missing, the children's content no longer matches `children_sha256`
  (a child summary's content is its text: `SUMMARY_TEXT_SHA`, so Obsidian rewriting the links in
  its front matter when an entity note is renamed changes nothing above it; a digest over the
  children's file hashes, as vaultmind recorded it before, still matches), or a child summary is stale (and not yours: an edited summary is final and stops the
  propagation), or a child leaf is one admission dropped (a gray leaf the rules had kept while
  no Ollama answered, which the LLM then judged not worth remembering: `admission.reask`; the
  re-sealed summary leaves it out, as the buffer does). A stale summary is re-sealed by
  `engine.reseal_stale`. When admission's settings change every row is resolved again, and a
  decision changed outside a sync updates the summaries over its leaf (`admitted`).

Incrementally, the summaries recomputed are those whose note was written, those whose children
or entity links point at a written or vanished note or leaf, and then their ancestors, level by level.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb
import pyarrow as pa

from vaultmind.index.arrow import execute_with, insert_arrow, key_table
from vaultmind.model import WrittenNote
from vaultmind.tree import admitted
from vaultmind.tree.note import children_digest, entity_id_of_link, is_vaultminds, parse_link, parse_time
from vaultmind.vault.layout import NOTE_SUFFIX, SUMMARIES_DIR

_TEXT_SHA = "sha256(coalesce(string_agg(content_hash, chr(10) ORDER BY seq), ''))"  # over one note's leaves
SUMMARY_TEXT_SHA = f"(SELECT {_TEXT_SHA} FROM leaves WHERE leaves.note_path = {{path}})"
"""SQL: the content of the summary note at `{path}` as a parent summarizes it: sha256 over its
body's leaves, so a change of its front matter alone (links, title) is none."""

_SCHEMA = pa.schema(
    [
        ("id", pa.string()), ("tree", pa.string()), ("level", pa.int32()), ("note_path", pa.string()),
        ("children", pa.list_(pa.string())), ("leaf_ids", pa.list_(pa.string())),
        ("time_start", pa.timestamp("us")), ("time_end", pa.timestamp("us")),
        ("entities", pa.list_(pa.string())), ("summarizer", pa.string()),
        ("user_edited", pa.bool_()), ("stale", pa.bool_()),
    ]
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class SummaryInfo:
    """What a summary note's front matter says (plus whether its body was edited)."""

    path: str
    id: str
    tree: str
    level: int
    links: tuple[str, ...]
    children_sha256: str | None
    time_start: datetime | None
    time_end: datetime | None
    entity_links: tuple[str, ...]  # as written: resolved to entity ids by `resolve_rows`
    summarizer: str
    user_edited: bool


@dataclass(frozen=True, slots=True)
class SummaryRow:
    id: str
    tree: str
    level: int
    note_path: str
    children: tuple[str, ...]
    leaf_ids: tuple[str, ...]
    time_start: datetime | None
    time_end: datetime | None
    entities: tuple[str, ...]
    summarizer: str
    user_edited: bool
    stale: bool
    missing: int = 0  # links that resolve to nothing (not stored; `view` explains staleness with it)
    dropped: int = 0  # child leaves admission dropped (not stored; `view` explains staleness with it)
    changed: bool = False  # content differs from children_sha256 (not stored)


def is_summary_note(kind: str, frontmatter: dict[str, Any]) -> bool:
    return kind == "summary" and frontmatter.get("vaultmind") == "summary"


def summary_info(path: str, fm: dict[str, Any], user_edited: bool) -> SummaryInfo | None:
    """The front matter of a summary note, or None when it cannot be one (no level)."""
    level = fm.get("level")
    if isinstance(level, str) and level.strip().isdigit():
        level = int(level.strip())
    if isinstance(level, bool) or not isinstance(level, int) or level < 1:
        return None
    stem = path.rsplit("/", 1)[-1]
    stem = stem[: -len(NOTE_SUFFIX)] if stem.lower().endswith(NOTE_SUFFIX) else stem
    sid = str(fm.get("id") or "").strip() or stem
    children = fm.get("children")
    links = tuple(str(c) for c in children if isinstance(c, str)) if isinstance(children, list) else ()
    recorded = fm.get("children_sha256")
    entity_links = fm.get("entities")
    return SummaryInfo(
        path=path,
        id=sid,
        tree=str(fm.get("tree") or ""),
        level=level,
        links=links,
        children_sha256=str(recorded) if isinstance(recorded, str) and recorded else None,
        time_start=parse_time(fm.get("time_start")),
        time_end=parse_time(fm.get("time_end")),
        entity_links=tuple(str(x) for x in entity_links if isinstance(x, str))
        if isinstance(entity_links, list)
        else (),
        summarizer=str(fm.get("summarizer") or ""),
        user_edited=user_edited,
    )


def is_user_edited(fm: dict[str, Any], body: str) -> bool:
    return not is_vaultminds(fm, body)


class TreeDeriver:
    """The `summaries` rows (see the module docstring)."""

    name = "trees"

    def apply(
        self,
        con: duckdb.DuckDBPyConnection,
        removed_leaf_ids: Sequence[str],
        written: Sequence[WrittenNote],
        *,
        rebuild: bool,
        changed_paths: Sequence[str] = (),
    ) -> None:
        written_infos: dict[str, SummaryInfo] = {}
        for note in written:
            if is_summary_note(note.kind, note.frontmatter):
                info = summary_info(note.path, note.frontmatter, is_user_edited(note.frontmatter, note.body))
                if info is not None:
                    written_infos[note.path] = info
        written_paths = sorted({note.path for note in written})
        gone = execute_with(
            con,
            """DELETE FROM summaries
               WHERE note_path IN (SELECT k FROM _rows) OR note_path NOT IN (SELECT path FROM notes)
               RETURNING id, note_path""",
            rows=key_table(written_paths),
        ).fetchall()
        admission_changed = admitted.changed(con)
        if rebuild:
            affected = set(written_infos)
        elif admission_changed:  # every decision was taken again: every summary is resolved again
            affected = set(written_infos) | {str(r[0]) for r in con.execute("SELECT note_path FROM summaries").fetchall()}
        else:
            affected = self._affected(
                con, written_infos, written_paths, changed_paths, gone, removed_leaf_ids
            )
        if admission_changed:
            admitted.seen(con)
        infos = dict(written_infos)
        old = _rows_by_path(con, sorted(affected - set(written_infos)))
        for path, (fm_json, row) in old.items():
            info = summary_info(path, json.loads(fm_json), row.user_edited)
            if info is not None:
                infos[path] = info
        if old:
            execute_with(
                con,
                "DELETE FROM summaries WHERE note_path IN (SELECT k FROM _rows)",
                rows=key_table(sorted(old)),
            )
        rows = resolve_rows(con, sorted(infos.values(), key=lambda i: (i.level, i.path)))
        _insert(con, rows)

    def _affected(
        self,
        con: duckdb.DuckDBPyConnection,
        written_infos: dict[str, SummaryInfo],
        written_paths: Sequence[str],
        changed_paths: Sequence[str],
        gone: Sequence[tuple[str, str]],
        removed_leaf_ids: Sequence[str],
    ) -> set[str]:
        affected: set[str] = set(written_infos)
        ids = {row[0] for row in gone} | {info.id for info in written_infos.values()}
        # notes removed too: a summary linking an entity note that moved away resolves anew
        paths = set(written_paths) | set(changed_paths) | {row[1] for row in gone}
        if removed_leaf_ids:
            affected |= {
                r[0]
                for r in con.execute(
                    "SELECT note_path FROM summaries WHERE level = 1 AND list_has_any(children, ?::VARCHAR[])",
                    [list(removed_leaf_ids)],
                ).fetchall()
            }
            ids |= {
                r[0]
                for r in execute_with(
                    con,
                    "SELECT id FROM summaries WHERE note_path IN (SELECT k FROM _rows)",
                    rows=key_table(sorted(affected)),
                ).fetchall()
            }
            paths |= affected
        while ids or paths:
            stems = {(p[: -len(NOTE_SUFFIX)] if p.lower().endswith(NOTE_SUFFIX) else p).lower() for p in paths}
            # a link by name only (`[[Helen Okafor]]`, Obsidian's shortest form) or by the end of
            # the path (`[[team/Helen O]]`, when two notes share the name), in any case, names it;
            # so does a Markdown link, which keeps `.md` (`[C# tips](Notes/C%23%20tips.md)`)
            parts = [name.split("/") for name in stems | {p.lower() for p in paths}]
            targets = sorted({"/".join(split[i:]) for split in parts for i in range(len(split))})
            found = execute_with(
                con,
                f"""{parents_sql(len(ids))}
                   UNION
                   SELECT note_path, id FROM summaries WHERE note_path IN (
                       SELECT src_path FROM links
                       WHERE starts_with(src_path, ?) AND lower(target) IN (SELECT k FROM _more))""",
                [SUMMARIES_DIR + "/"],
                rows=key_table(sorted(ids)),
                more=key_table(targets),
            ).fetchall()
            fresh = sorted({(p, i) for p, i in found if p not in affected})
            affected |= {p for p, _ in fresh}
            ids = {i for _, i in fresh}
            paths = {p for p, _ in fresh}
        return affected


_FEW_CHILDREN = 64


def parents_sql(children: int) -> str:
    """SQL: (note path, id) of the summaries that have one of the ids in `_rows` as a child.
    Walking up from a one-note change, a level's few ids are looked for in every children list
    (0.004 s at 10k summaries); joining the unnested lists cost 0.12 s a level, the most of the
    sync, but it is what many ids need (`list_has_any` grows with both: 2.2 s for 5,000)."""
    if children <= _FEW_CHILDREN:
        return "SELECT note_path, id FROM summaries WHERE list_has_any(children, (SELECT list(k) FROM _rows))"
    return """SELECT s.note_path, s.id FROM summaries s, unnest(s.children) AS c(child)
              WHERE c.child IN (SELECT k FROM _rows)"""


def _rows_by_path(con: duckdb.DuckDBPyConnection, paths: Sequence[str]) -> dict[str, tuple[str, SummaryRow]]:
    """(front matter JSON, current row) of summaries at `paths` whose note is still indexed."""
    if not paths:
        return {}
    out: dict[str, tuple[str, SummaryRow]] = {}
    for fm_json, *values in execute_with(
        con,
        f"""SELECT n.frontmatter, {_COLUMNS} FROM summaries s JOIN notes n ON n.path = s.note_path
            WHERE s.note_path IN (SELECT k FROM _rows)""",
        rows=key_table(paths),
    ).fetchall():
        row = _row(values)
        out[row.note_path] = (fm_json, row)
    return out


_COLUMNS = (
    "s.id, s.tree, s.level, s.note_path, s.children, s.leaf_ids, s.time_start, s.time_end, "
    "s.entities, s.summarizer, s.user_edited, s.stale"
)


def _row(values: Sequence[Any]) -> SummaryRow:
    return SummaryRow(
        id=values[0],
        tree=values[1],
        level=values[2],
        note_path=values[3],
        children=tuple(values[4]),
        leaf_ids=tuple(values[5]),
        time_start=values[6],
        time_end=values[7],
        entities=tuple(values[8]),
        summarizer=values[9],
        user_edited=values[10],
        stale=values[11],
    )


def load_rows(con: duckdb.DuckDBPyConnection, where: str = "true", params: Any = None) -> list[SummaryRow]:
    """Rows of the `summaries` table (alias `s`), ordered by level and path."""
    rows = con.execute(
        f"SELECT {_COLUMNS} FROM summaries s WHERE {where} ORDER BY s.level, s.note_path", params
    )
    return [_row(values) for values in rows.fetchall()]


def rows_at(con: duckdb.DuckDBPyConnection, paths: Sequence[str]) -> list[SummaryRow]:
    """Rows of the summaries at `paths`, ordered by level and path. The paths are read as a
    table: a list parameter of 10,000 paths took 3 s to bind (a table: 0.04 s)."""
    rows = execute_with(
        con,
        f"""SELECT {_COLUMNS} FROM summaries s WHERE s.note_path IN (SELECT k FROM _rows)
            ORDER BY s.level, s.note_path""",
        rows=key_table(paths),
    )
    return [_row(values) for values in rows.fetchall()]


_EMPTY_TEXT_SHA = hashlib.sha256(b"").hexdigest()  # what `_TEXT_SHA` gives a note without leaves


def summary_text_shas(con: duckdb.DuckDBPyConnection, paths: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Note path → (its text's hash, `SUMMARY_TEXT_SHA`; its file's hash) for the indexed notes
    at `paths`. The leaves of these notes only are read: the correlated `SUMMARY_TEXT_SHA`
    aggregated every leaf of the vault (0.19 s for 4 notes at 10k summaries; now 0.02 s)."""
    out: dict[str, tuple[str, str]] = {}
    texts = dict(
        execute_with(
            con,
            f"""SELECT note_path, {_TEXT_SHA} FROM leaves
                WHERE note_path IN (SELECT k FROM _rows) GROUP BY note_path""",
            rows=key_table(paths),
        ).fetchall()
    )
    for path, file_sha in execute_with(
        con, "SELECT path, sha256 FROM notes WHERE path IN (SELECT k FROM _rows)", rows=key_table(paths)
    ).fetchall():
        out[path] = (texts.get(path, _EMPTY_TEXT_SHA), file_sha)
    return out


def resolve_rows(con: duckdb.DuckDBPyConnection, infos: Sequence[SummaryInfo]) -> list[SummaryRow]:
    """Resolve the children of `infos` (sorted by level) against the index as it is now."""
    leaf_targets = sorted(
        {link.note_path for info in infos if info.level == 1 for link in _links(info.links)}
    )
    leaves: dict[tuple[str, str], list[tuple[str, str, bool]]] = {}
    if leaf_targets:
        for note_path, anchor, leaf_id, content_hash, dropped in execute_with(
            con,
            """SELECT l.note_path, l.anchor, l.id, l.content_hash, d.leaf_id IS NOT NULL FROM leaves l
               LEFT JOIN (SELECT DISTINCT leaf_id, note_path FROM admission
                          WHERE decision = 'dropped' AND note_path IN (SELECT k FROM _rows)) d
                 ON d.leaf_id = l.id AND d.note_path = l.note_path
               WHERE l.note_path IN (SELECT k FROM _rows) ORDER BY l.note_path, l.seq""",
            rows=key_table(leaf_targets),
        ).fetchall():
            leaves.setdefault((note_path, anchor), []).append((leaf_id, content_hash, bool(dropped)))
    summary_targets = sorted(
        {link.note_path for info in infos if info.level > 1 for link in _links(info.links)}
    )
    shas: dict[str, tuple[str, str]] = {}  # a child summary's path → its text's hash, its file's
    existing: dict[str, SummaryRow] = {}
    if summary_targets:
        shas = summary_text_shas(con, summary_targets)
        existing = {row.note_path: row for row in rows_at(con, summary_targets)}
    entity_ids = resolve_entity_links(con, {link for info in infos for link in info.entity_links})
    computed: dict[str, SummaryRow] = {}
    out: list[SummaryRow] = []
    for info in infos:
        row = resolve_one(info, leaves, lambda p: computed.get(p) or existing.get(p), shas, entity_ids)
        computed[info.path] = row
        out.append(row)
    return out


def resolve_entity_links(con: duckdb.DuckDBPyConnection, links: Iterable[str]) -> dict[str, str]:
    """Entity links → entity ids. A link to an entity note (by its path, or by its name alone, as
    Obsidian resolves it: the shortest path wins) gets the id the note declares (the `entities`
    table), wherever the note lives, so a renamed or moved note keeps its summaries' links; a
    link to no entity note gets the id its path spells (`entity_id_of_link`), so a link left at
    the old place of a note moved by hand still counts until the refresh rewrites it."""
    parsed = {text: link for text in links if (link := parse_link(text)) is not None}
    names = sorted({link.note_path.rsplit("/", 1)[-1].lower() for link in parsed.values()})
    by_name: dict[str, list[tuple[str, str]]] = {}
    if names:
        for eid, path in con.execute(
            """SELECT id, note_path FROM entities WHERE note_path IS NOT NULL
               AND lower(regexp_extract(note_path, '[^/]*$')) IN (SELECT unnest(?::VARCHAR[]))""",
            [names],
        ).fetchall():
            by_name.setdefault(path.rsplit("/", 1)[-1].lower(), []).append((path, eid))
    out: dict[str, str] = {}
    for text, link in parsed.items():
        target = link.note_path.lower()
        notes = sorted(by_name.get(target.rsplit("/", 1)[-1], ()), key=lambda n: (len(n[0]), n[0]))
        found = next((eid for path, eid in notes if path.lower() == target), None)
        if found is None:
            found = next((eid for path, eid in notes if path.lower().endswith("/" + target)), None)
        found = found or entity_id_of_link(text)
        if found:
            out[text] = found
    return out


def _links(links: Iterable[str]) -> Iterable[Any]:
    for text in links:
        link = parse_link(text)
        if link is not None:
            yield link


def resolve_one(
    info: SummaryInfo,
    leaves: dict[tuple[str, str], list[tuple[str, str, bool]]],
    child_row: Any,
    shas: dict[str, tuple[str, str]],
    entity_ids: dict[str, str],
) -> SummaryRow:
    children: list[str] = []
    hashes: list[str] = []
    file_hashes: list[str] = []  # the digest of a summary sealed before its children's text was
    leaf_ids: dict[str, None] = {}
    missing = dropped = 0
    child_stale = False
    for text in info.links:
        link = parse_link(text)
        if link is None:
            missing += 1
            continue
        if info.level == 1:
            candidates = leaves.get((link.note_path, link.anchor), [])
            k = (link.part or 1) - 1
            if not 0 <= k < len(candidates):
                missing += 1
                continue
            leaf_id, content_hash, was_dropped = candidates[k]
            if leaf_id in leaf_ids:
                continue
            dropped += was_dropped
            children.append(leaf_id)
            hashes.append(content_hash)
            leaf_ids[leaf_id] = None
        else:
            row: SummaryRow | None = child_row(link.note_path)
            sha = shas.get(link.note_path)
            if row is None or sha is None:
                missing += 1
                continue
            if row.id in children:
                continue
            children.append(row.id)
            hashes.append(sha[0])
            file_hashes.append(sha[1])
            leaf_ids.update(dict.fromkeys(row.leaf_ids))
            if row.stale and not row.user_edited:
                child_stale = True
    changed = info.children_sha256 is not None and info.children_sha256 not in (
        children_digest(hashes),
        children_digest(file_hashes) if file_hashes else None,
    )
    return SummaryRow(
        id=info.id,
        tree=info.tree,
        level=info.level,
        note_path=info.path,
        children=tuple(children),
        leaf_ids=tuple(leaf_ids),
        time_start=info.time_start,
        time_end=info.time_end,
        entities=tuple(dict.fromkeys(entity_ids[link] for link in info.entity_links if link in entity_ids)),
        summarizer=info.summarizer,
        user_edited=info.user_edited,
        stale=bool(missing or dropped or child_stale or changed),
        missing=missing,
        dropped=dropped,
        changed=changed,
    )


def _insert(con: duckdb.DuckDBPyConnection, rows: Sequence[SummaryRow]) -> None:
    if not rows:
        return
    data = pa.table(
        {
            "id": [r.id for r in rows],
            "tree": [r.tree for r in rows],
            "level": [r.level for r in rows],
            "note_path": [r.note_path for r in rows],
            "children": [list(r.children) for r in rows],
            "leaf_ids": [list(r.leaf_ids) for r in rows],
            "time_start": [r.time_start for r in rows],
            "time_end": [r.time_end for r in rows],
            "entities": [list(r.entities) for r in rows],
            "summarizer": [r.summarizer for r in rows],
            "user_edited": [r.user_edited for r in rows],
            "stale": [r.stale for r in rows],
        },
        schema=_SCHEMA,
    )
    insert_arrow(con, "summaries", data)
