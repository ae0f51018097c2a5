"""The `memory_tree` modes besides `walk`: each deterministic, each returning `{hits, total, truncated}`.

search_entities  fuzzy match over entity names and aliases (optional kind filter)
query_source     leaves of one source (by source id, a tree of your notes as a hit's `tree`
                 names it, or kind), in a time window, optionally
                 re-ranked by a query (lexical and dense fused, as `search` fuses them)
drill_down       breadth-first over a node's children, depth bounded; from an entity, the
                 leaves that mention it or that it wrote, newest first
cover_window     the fewest nodes covering a time window (summaries first), plus the
                 leaves no summary covers
fetch_leaves     nodes by id (leaves, summaries, entities), order kept, missing ids skipped
                 (and listed), at most `MAX_LIMIT` ids; drill_down and fetch_leaves take a unique
                 id prefix too

A `limit` (or a number of ids) above `MAX_LIMIT` is an error that names the cap, never a
shorter answer than asked for.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from vaultmind.config import MAX_LIMIT
from vaultmind.entities.fuzzy_names import FUZZY_CUTOFF, EntityRow, entity_names
from vaultmind.entities.ids import KINDS as ENTITY_KINDS
from vaultmind.entities.ids import canonical_kind
from vaultmind.errors import NotFound, UsageError
from vaultmind.index.lexical import terms
from vaultmind.index.tables import has_table
from vaultmind.model import ENTITY_TREE, USER_TREE_PREFIX
from vaultmind.retrieval.dense import noticed, question_vector
from vaultmind.retrieval.hits import RetrievalHit, envelope, fold_chunks, leaf_hits
from vaultmind.retrieval.node_ids import resolve_node_id
from vaultmind.retrieval.search import fuse
from vaultmind.vault.layout import obsidian_link, wikilink

if TYPE_CHECKING:
    from vaultmind.retrieval.view import MemoryView

MAX_DEPTH = 4
SOURCE_KINDS = ("chat", "email", "document", "note")  # "note": the vault's own notes
EVERY_LEAF = 2**31  # a limit no vault reaches: every leaf that holds a word of the query
MENTION_POINTS = 2.0  # added to a 0–100 name match per tenfold of mentions


def fetch_leaves(memory: MemoryView, ids: Sequence[str]) -> dict[str, Any]:
    """Nodes by id, in the order asked, each once: leaf ids, and the `node_id` of any hit (a
    summary's, which answers as the summary node; an entity's, as `search_entities` shows it);
    the ids found nowhere in `missing`, as the caller wrote them (to match against those sent).
    At most `MAX_LIMIT` different ids. None of them found is an error (`NotFound`), as an unknown
    id is to `drill_down` and an unknown source to `query_source`: a lookup by id that finds
    nothing was asked wrong, where a search that finds nothing (walk, search_entities) answers
    no hits."""
    given: dict[str, str] = {}  # lower-cased id (ids are lower-case) → as the caller wrote it
    for ident in ids:
        given.setdefault(ident.strip().lower(), ident.strip())
    typed = [i for i in given if i]
    if len(typed) > MAX_LIMIT:
        raise UsageError(
            f"fetch_leaves takes at most {MAX_LIMIT} ids (given {len(typed)})", hint=f"ask for them in batches of {MAX_LIMIT}"
        )
    wanted = list(dict.fromkeys(_typed_id(memory, i) for i in typed))
    summaries: dict[str, str] = {}
    if has_table(memory.index, "summaries"):  # a summary's chunk asked by its id is the summary
        wanted = list(dict.fromkeys(_chunk_summaries(memory, wanted).get(i, i) for i in wanted))
        summaries = _summary_chunks(memory, wanted)
    found: dict[str, dict[str, Any]] = {}
    for hit in leaf_hits(memory, [(summaries.get(i, i), 0.0, {}) for i in wanted]):
        found[hit.node_id] = hit.to_dict()
    found |= {hit["node_id"]: hit for hit in _entity_hits(memory, [i for i in wanted if i not in found])}
    hits = [found[i] for i in wanted if i in found]
    missing = [given.get(i, i) for i in wanted if i not in found]
    if missing and not hits:
        raise NotFound(f"not found: {missing_ids(missing)}", hint=_missing_hint(missing))
    return {"hits": hits, "total": len(hits), "truncated": False, "missing": missing}


def missing_ids(missing: Sequence[str]) -> str:
    """The ids `fetch_leaves` found nowhere, listed, with why when one is too short a prefix."""
    from vaultmind.retrieval.node_ids import MIN_PREFIX

    short = any(len(ref) < MIN_PREFIX for ref in missing)
    return ", ".join(missing) + (f" (an id prefix needs at least {MIN_PREFIX} characters)" if short else "")


def _missing_hint(missing: Sequence[str]) -> str:
    """Where ids come from; for an id spelled as a name ("Person:Alice Chen"), how to find one."""
    if any(" " in ref for ref in missing):
        return "an entity's id is <kind>:<slug> (person:alice-chen); to find one by its name use search_entities (vaultmind query entities <name>)"
    return "ids come from the node_id of a hit"


def _typed_id(memory: MemoryView, ref: str) -> str:
    """The full id a typed id or unique prefix names; as typed when nothing does (to be listed
    in `missing`). An ambiguous prefix is an error that names the ids it starts."""
    try:
        return resolve_node_id(memory.index, ref)
    except NotFound:
        return ref


def _chunk_summaries(memory: MemoryView, ids: Sequence[str]) -> dict[str, str]:
    """Chunk id → the summary its note is, for the ids of `ids` that are summary chunks."""
    rows = memory.index.query(
        """SELECT l.id, s.id FROM leaves l JOIN summaries s ON s.note_path = l.note_path
           WHERE l.id IN (SELECT unnest(string_split(?, chr(31))))""",
        ["\x1f".join(ids)],
    )
    return dict(rows)


def _summary_chunks(memory: MemoryView, ids: Sequence[str]) -> dict[str, str]:
    """Summary id → the first chunk of its note (through which `leaf_hits` reads the summary)."""
    rows = memory.index.query(
        """SELECT s.id, min_by(l.id, l.seq) FROM summaries s JOIN leaves l ON l.note_path = s.note_path
           WHERE s.id IN (SELECT unnest(string_split(?, chr(31)))) GROUP BY s.id""",
        ["\x1f".join(ids)],
    )
    return dict(rows)


def query_source(
    memory: MemoryView,
    *,
    source_id: str | None = None,
    kind: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    query: str | None = None,
    limit: int = 50,
) -> dict[str, Any]:
    if not source_id and not kind:
        raise UsageError(f"'source_id' or 'kind' is needed: which source, or which kind of source ({', '.join(SOURCE_KINDS)})")
    if kind and kind not in SOURCE_KINDS:
        raise UsageError(f"'kind' = {kind!r} is not a kind of source (kinds: {', '.join(SOURCE_KINDS)})")
    if since is not None and until is not None and until <= since:
        raise UsageError("'until' must be after 'since'", hint=one_day_hint(since, "since", "until"))
    limit = check_limit(limit)
    clauses = ["true"]
    params: list[Any] = []
    of_source = _source_clause(source_id) if source_id else None
    if of_source is not None:
        clauses.append(of_source[0])
        params.extend(of_source[1])
    if kind:
        if kind == "note":
            clauses.append("n.kind = 'user'")
        else:
            clauses.append("n.source_kind = ?")
            params.append(kind)
    if since:
        clauses.append("l.ts >= ?")
        params.append(since)
    if until:
        clauses.append("l.ts < ?")
        params.append(until)
    rows = memory.index.query(
        f"""SELECT l.id, l.content_hash FROM leaves l JOIN notes n ON n.path = l.note_path
            WHERE {" AND ".join(clauses)} ORDER BY l.ts NULLS LAST, l.note_path, l.seq""",
        params,
    )
    total = len(rows)
    if not rows and source_id and of_source and not memory.index.scalar(f"SELECT count(*) FROM notes n WHERE {of_source[0]}", of_source[1]):
        raise _no_source(memory, source_id)
    if not rows and source_id and kind:
        _check_kind(memory, source_id, kind)
    ordered: list[tuple[str, float, dict[str, Any]]] = [(r[0], 0.0, {"order": "time"}) for r in rows]
    notice: str | None = None
    if query and rows:
        ranked, notice = _ranked_by_query(memory, query, {r[0] for r in rows})
        seen = {leaf_id for leaf_id, _, _ in ranked}
        ordered = ranked + [row for row in ordered if row[0] not in seen]  # the rest: oldest first
    hits = leaf_hits(memory, ordered[:limit])
    return envelope(hits, total, **noticed(notice))


def _source_clause(source_id: str) -> tuple[str, list[Any]]:
    """The SQL condition on `notes n` for the notes of a source id, or of a tree of your notes
    as a hit's `tree` names it (`notes:Meetings`: the notes under the top folder Meetings;
    `notes:/`: those at the vault's root), with its parameters."""
    if not source_id.startswith(USER_TREE_PREFIX):
        return "n.source_id = ?", [source_id]
    folder = source_id.removeprefix(USER_TREE_PREFIX)
    mine = "NOT contains(n.path, '/')" if folder == "/" else "starts_with(n.path, ?)"
    return f"(n.source_id = ? OR (n.kind = 'user' AND {mine}))", [source_id] + ([] if folder == "/" else [folder + "/"])


def _no_source(memory: MemoryView, source_id: str) -> NotFound:
    """The error for a source id no note has: some known source ids and trees of your notes."""
    known = [str(r[0]) for r in memory.index.query(
        "SELECT DISTINCT source_id FROM notes WHERE source_id IS NOT NULL ORDER BY 1 LIMIT 10"
    )]  # fmt: skip
    folders = [str(r[0]) for r in memory.index.query(
        """SELECT DISTINCT CASE WHEN contains(path, '/') THEN split_part(path, '/', 1) ELSE '/' END
           FROM notes WHERE kind = 'user' ORDER BY 1 LIMIT 5"""
    )]  # fmt: skip
    known += [USER_TREE_PREFIX + folder for folder in folders]
    return NotFound(
        f"no source with id {source_id!r} in this vault",
        hint=f"source ids are matched exactly, and a folder of your notes is notes:<top folder> (notes:/ for the "
        f"vault's root), as a hit's tree names it; some known ones: {', '.join(known)}"
        if known
        else "no source has been ingested yet",
    )


def _ranked_by_query(memory: MemoryView, query: str, among: set[str]) -> tuple[list[tuple[str, float, dict[str, Any]]], str | None]:
    """The leaves of `among` that `query` finds, lexical and dense fused as `search` fuses them:
    by the dense ranking alone, a leaf holding the rare word asked could rank below leaves that
    never say it (a static model's vector of a rare word is near nothing it should be). With
    the notice of `question_vector` when the embedder failed (the words alone rank)."""
    lexical = [(i, score) for i, score in memory.leaves.search(terms(query), EVERY_LEAF) if i in among]
    dense: list[tuple[str, float]] = []
    vector, notice = question_vector(memory, query)
    if vector is not None and memory.vectors is not None:
        found = memory.vectors.search(vector, memory.vectors.size)
        dense = [(i, score) for i, score in found if i in among]
    return fuse(lexical, dense), notice


def _check_kind(memory: MemoryView, source_id: str, kind: str) -> None:
    """A source asked for with a kind it is not of: a usage error that says its kind, not an
    empty answer that looks like an empty source."""
    clause, values = _source_clause(source_id)
    found = memory.index.query(f"SELECT DISTINCT n.kind, n.source_kind FROM notes n WHERE {clause}", values)
    kinds = sorted({"note" if note_kind == "user" else str(source_kind) for note_kind, source_kind in found})
    if kinds and kind not in kinds:
        raise UsageError(
            f"source {source_id} is of kind {' and '.join(kinds)}, not {kind}",
            hint="drop --kind (\"kind\" over HTTP and MCP) or change it",
        )


def one_day_hint(start: datetime, first: str, last: str) -> str:
    """How a window of one day is asked: its end is excluded, so it ends on the next day
    (`query window 2024-03-07 2024-03-07` is empty)."""
    day = start.date()
    return f"{last} is excluded: for the one day {day}, give {first} {day} and {last} {day + timedelta(days=1)}"


def cover_window(memory: MemoryView, start: datetime, end: datetime, *, limit: int = 100) -> dict[str, Any]:
    """The fewest nodes covering [start, end): summaries lying wholly inside the window, chosen
    greedily by how many of the window's leaves they cover, then the leaves no chosen summary
    covers (`uncovered_leaves` counts them); shown as a timeline, by start time (a summary
    before the leaves of its start, a higher level first), and `limit` keeps the earliest."""
    if end <= start:
        raise UsageError("'end' must be after 'start'", hint=one_day_hint(start, "start", "end"))
    limit = check_limit(limit)
    leaf_rows = memory.index.query(
        "SELECT id, ts FROM leaves WHERE ts >= ? AND ts < ? ORDER BY ts, id", [start, end]
    )
    in_window = [row[0] for row in leaf_rows]
    remaining = set(in_window)
    chosen: list[tuple[str, datetime, int]] = []
    if has_table(memory.index, "summaries") and remaining:
        candidates = memory.index.query(
            """SELECT id, leaf_ids, time_start, level FROM summaries
               WHERE time_start >= ? AND time_end < ? AND NOT stale ORDER BY level DESC, id""",
            [start, end],
        )
        pool = [(sid, set(leaf_ids or []), (began, level)) for sid, leaf_ids, began, level in candidates]
        while pool:
            best = max(pool, key=lambda item: (len(item[1] & remaining), item[0]))
            gain = best[1] & remaining
            if not gain:
                break
            chosen.append((best[0], *best[2]))
            remaining -= gain
            pool.remove(best)
    uncovered = [(leaf_id, ts, 0) for leaf_id, ts in leaf_rows if leaf_id in remaining]
    timeline = sorted([*chosen, *uncovered], key=lambda node: (node[1], -node[2], node[0]))
    shown = timeline[:limit]
    summaries = {node[0] for node in chosen}
    shown_summaries = [node_id for node_id, _, _ in shown if node_id in summaries]
    chunk = _summary_chunks(memory, shown_summaries) if shown_summaries else {}
    ranked = [
        (chunk[node_id], 0.0, {"depth": "child"}) if node_id in summaries else (node_id, 0.0, {"cover": "leaf"})
        for node_id, _, _ in shown
        if node_id not in summaries or node_id in chunk
    ]
    hits = leaf_hits(memory, ranked)  # one read, in the timeline's order
    return envelope(hits, len(chosen) + len(uncovered), uncovered_leaves=len(uncovered))


def drill_down(memory: MemoryView, node_id: str, *, depth: int = 1, limit: int = 100) -> dict[str, Any]:
    """Children of a summary node, breadth first, `depth` levels down (summaries, then leaves); a
    chunk of a summary note stands for its summary. A leaf has no children: asked for its
    children is an error that names the summary folding it (`_leaf_has_no_children`). An
    entity's children are the leaves that mention it or that it wrote (`entity_leaves`)."""
    if depth < 1 or depth > MAX_DEPTH:
        raise UsageError(f"depth must be between 1 and {MAX_DEPTH}")
    limit = check_limit(limit)
    node_id = resolve_node_id(memory.index, node_id)
    if has_table(memory.index, "summaries"):  # a summary's chunk asked by its id is the summary
        node_id = _chunk_summaries(memory, [node_id]).get(node_id, node_id)
    is_leaf = memory.index.scalar("SELECT count(*) FROM leaves WHERE id = ?", [node_id])
    is_summary = has_table(memory.index, "summaries") and memory.index.scalar(
        "SELECT count(*) FROM summaries WHERE id = ?", [node_id]
    )
    if not is_leaf and not is_summary:
        if _entity_hits(memory, [node_id.lower()]):
            return entity_leaves(memory, node_id.lower(), limit=limit)
        raise NotFound(f"no node with id {node_id}", hint="ids come from the node_id of a hit")
    if not is_summary:
        raise _leaf_has_no_children(memory, node_id)
    order: list[str] = []
    frontier = [node_id]
    for _ in range(depth):
        rows = memory.index.query(
            "SELECT id, children FROM summaries WHERE id IN (SELECT unnest(string_split(?, chr(31))))",
            ["\x1f".join(frontier)],
        )
        children = {row[0]: list(row[1] or []) for row in rows}
        frontier = [child for parent in frontier for child in children.get(parent, [])]
        order.extend(frontier)
        if not frontier:
            break
    summary_ids = set(
        row[0]
        for row in memory.index.query(
            "SELECT id FROM summaries WHERE id IN (SELECT unnest(string_split(?, chr(31))))",
            ["\x1f".join(order)],
        )
    )
    hits = []
    for child in order[:limit]:
        if child in summary_ids:
            hits.extend(summary_hits(memory, [child]))
        else:
            hits.extend(leaf_hits(memory, [(child, 0.0, {"depth": "child"})]))
    return envelope(hits, len(order))


def _leaf_has_no_children(memory: MemoryView, leaf_id: str) -> UsageError:
    """The error for the children of a leaf: it has none; the hint names the summary that folds
    it (its parent: drill down from it, or fetch it), else the tree it waits in."""
    parent = (
        memory.index.query(
            "SELECT id FROM summaries WHERE list_contains(children, ?) ORDER BY stale, level, id LIMIT 1", [leaf_id]
        )
        if has_table(memory.index, "summaries")
        else []
    )
    if parent:
        summary = parent[0][0]
        hint = (
            f"the summary that folds it is {summary}: fetch_leaves shows it and drill_down lists it with its "
            f"siblings (vaultmind query leaves {summary} / vaultmind query drill {summary})"
        )
    else:
        tree = leaf_hits(memory, [(leaf_id, 0.0, {})])[0].tree
        hint = f"no summary folds it yet (its tree: {tree}); fetch_leaves shows the leaf itself"
    return UsageError(f"{leaf_id} is a leaf, and a leaf has no children", hint=hint)


def entity_leaves(memory: MemoryView, entity_id: str, *, limit: int = 100) -> dict[str, Any]:
    """The leaves that mention an entity or that it wrote (its authors as ingest resolves them),
    newest first; `breakdown.entity` says which ("mention", "author")."""
    from vaultmind.retrieval.people import named_authors

    authors = sorted(named_authors(memory, [(entity_id, entity_id)]))
    rows = memory.index.query(
        """SELECT id, bool_or(how = 'author') AS wrote, max(ts) AS ts FROM (
               SELECT leaf_id AS id, 'mention' AS how, ts FROM occurrences WHERE entity_id = ?
               UNION ALL
               SELECT id, 'author', ts FROM leaves WHERE author IN (SELECT unnest(?::VARCHAR[])))
           GROUP BY id ORDER BY ts DESC NULLS LAST, id""",
        [entity_id, authors],
    )
    # a summary's chunks after its newest add no hit: not cut to `limit`, nor counted
    ranked = fold_chunks(memory, [(leaf_id, 0.0, {"entity": "author" if wrote else "mention"}) for leaf_id, wrote, _ in rows])
    return envelope(leaf_hits(memory, ranked[:limit]), len(ranked))


def summary_hits(memory: MemoryView, summary_ids: Sequence[str]) -> list[Any]:
    """Summary nodes as hits, one each, with its whole text (read through its note's first chunk)."""
    if not summary_ids:
        return []
    chunk = _summary_chunks(memory, summary_ids)
    return leaf_hits(memory, [(chunk[i], 0.0, {"depth": "child"}) for i in summary_ids if i in chunk])


def search_entities(
    memory: MemoryView, query: str, *, kind: str | None = None, limit: int = 10
) -> dict[str, Any]:
    """Entities whose name or alias matches `query` (fuzzy), best first, in the hit shape of every
    mode plus their kind, names and mention count. The order: the name's match (0–100) plus
    `MENTION_POINTS` per tenfold of mentions, so of two near-equal matches the entity the memory
    speaks of more comes first (the person over a one-off "@Priya" handle); `breakdown` has both.

    A hit is `ambiguous` when the name of it that matched best is a name of another hit too (two
    entity notes listing the alias "Chema", or "A. Chen" for Alice Chen and Amy Chen): the query
    cannot tell them apart. Entities matched by different names ("Alice Chen" and "Daniel Chen"
    for "chen") are not ambiguous."""
    limit = check_limit(limit)
    if kind:  # as `entities list --kind` reads it: "people" is person
        known_kind = canonical_kind(kind)
        if known_kind is None:
            raise UsageError(f"unknown entity kind {kind!r} (kinds: {', '.join(ENTITY_KINDS)})")
        kind = known_kind
    if not has_table(memory.index, "entities"):
        return {"hits": [], "total": 0, "truncated": False}
    index = entity_names(memory.index)
    found = index.matches(query, kind=kind or None, cutoff=FUZZY_CUTOFF)
    rows = index.rows
    rank = {i: found[i].score + MENTION_POINTS * math.log10(1 + rows[i].mentions) for i in found}
    order = sorted(found, key=lambda i: (-rank[i], rows[i].id))
    holders = Counter(name for match in found.values() for name in match.names)
    hits = [
        _entity_hit(
            memory,
            rows[i],
            rank[i] / 100.0,
            {"name": round(found[i].score / 100.0, 4), "mentions": rows[i].mentions},
            ambiguous=any(holders[name] > 1 for name in found[i].names),
        )
        for i in order[:limit]
    ]
    return {"hits": hits, "total": len(order), "truncated": len(order) > limit}


def _entity_hits(memory: MemoryView, ids: Sequence[str]) -> list[dict[str, Any]]:
    """The entities of `ids` that the index knows, as `search_entities` shows them, in that order."""
    if not ids or not has_table(memory.index, "entities"):
        return []
    rows = {row.id: row for row in entity_names(memory.index).rows}
    return [_entity_hit(memory, rows[i], 1.0, {"mentions": rows[i].mentions}) for i in ids if i in rows]


def _entity_hit(
    memory: MemoryView, row: EntityRow, score: float, breakdown: dict[str, Any], *, ambiguous: bool = False
) -> dict[str, Any]:
    """An entity in the hit shape of every mode (its entity note, when there is one, cited as a
    leaf's note is; without one, "" for its note path and links, as every hit's strings are),
    plus its kind, names and mention count."""
    path = row.note_path
    hit = RetrievalHit(
        node_id=row.id,
        node_kind="entity",
        tree=ENTITY_TREE,
        scope=row.kind,
        level=0,
        content=row.display_name,
        note_path=path or "",
        anchor="",
        title=row.display_name,
        entities=[row.id],
        score=score,
        breakdown=breakdown,
        link=obsidian_link(memory.vault_name, path) if path else "",
        wikilink=wikilink(path) if path else "",
    )
    return hit.to_dict() | {
        "kind": row.kind,
        "display_name": row.display_name,
        "aliases": list(row.aliases),
        "mentions": row.mentions,
        "ambiguous": ambiguous,
    }


def check_limit(limit: int) -> int:
    """`limit`, when it is from 1 to `MAX_LIMIT`; else an error naming the cap."""
    if limit <= 0:
        raise UsageError("limit must be positive")
    if limit > MAX_LIMIT:
        raise UsageError(
            f"limit must be at most {MAX_LIMIT} (given {limit})",
            hint="ask for fewer, or narrow the question (a window, a source)",
        )
    return limit
