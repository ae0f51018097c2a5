"""The one hit shape every retrieval mode returns, and how leaves become hits.

A `RetrievalHit` is a node (a leaf, a summary: one hit, its whole text, or an entity) with everything an
agent or a person needs to trust and follow it: content, where it lives in the vault (path,
anchor, wikilink, `obsidian://` link), where it came from (`source_refs`), when (time range),
who/what (entities), and why it ranked where it did (`score` and `breakdown`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from vaultmind.errors import NotFound
from vaultmind.index.lexical import terms
from vaultmind.index.store import Index
from vaultmind.index.tables import has_table
from vaultmind.markdown.anchors import heading_anchor, heading_anchors
from vaultmind.markdown.blocks import Heading, atx_heading, fence_after
from vaultmind.tree.note import tree_for_note
from vaultmind.vault.layout import note_kind, obsidian_link, wikilink

if TYPE_CHECKING:
    from vaultmind.index.leaf_columns import LeafColumns
    from vaultmind.retrieval.view import MemoryView


@dataclass(slots=True)
class RetrievalHit:
    node_id: str
    node_kind: str  # "leaf" | "summary" | "entity" (`modes._entity_hit`); the shape: docs/vault-format.md
    tree: str  # the tree its note is folded into (`tree_for_note`): source_id, "notes:<top folder>", "notes:/"
    scope: str
    level: int
    content: str
    note_path: str
    anchor: str
    title: str
    entities: list[str] = field(default_factory=list)
    time_start: str | None = None
    time_end: str | None = None
    score: float = 0.0
    breakdown: dict[str, Any] = field(default_factory=dict)
    child_ids: list[str] = field(default_factory=list)
    source_refs: list[str] = field(default_factory=list)
    to: list[str] = field(default_factory=list)  # an email's recipients
    cc: list[str] = field(default_factory=list)
    author: str | None = None
    message_id: str | None = None
    message_ids: list[str] = field(default_factory=list)  # summaries: their leaves' message ids
    link: str = ""
    wikilink: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "node_kind": self.node_kind,
            "tree": self.tree,
            "scope": self.scope,
            "level": self.level,
            "content": self.content,
            "entities": self.entities,
            "time_range": {"start": self.time_start, "end": self.time_end},
            "score": round(self.score, 6),
            "breakdown": self.breakdown,
            "child_ids": self.child_ids,
            "source_refs": self.source_refs,
            "to": self.to,
            "cc": self.cc,
            "note_path": self.note_path,
            "anchor": self.anchor,
            "title": self.title,
            "author": self.author,
            "message_id": self.message_id,
            "message_ids": self.message_ids,
            "link": self.link,
            "wikilink": self.wikilink,
        }


def envelope(hits: Sequence[RetrievalHit], total: int, **extra: Any) -> dict[str, Any]:
    """`{hits, total, truncated, …}`: the wrapper of every mode's answer."""
    out: dict[str, Any] = {
        "hits": [h.to_dict() for h in hits],
        "total": total,
        "truncated": total > len(hits),
    }
    out.update(extra)
    return out


_BLOCK_ID = re.compile(r"(?:^|[ \t])\^([A-Za-z0-9-]+)[ \t]*$")
_BLOCK_START = re.compile(r"[ \t]*(?:[-*+]|\d+[.)]|#{1,6})[ \t]")  # a list item or a heading


def cite_blocks(
    memory: MemoryView, hits: Sequence[RetrievalHit], query_terms: Collection[str], holds: Callable[[str], bool] | None = None
) -> None:
    """A hit on a section of a note that cites the block of it holding most of the question's
    terms, when that block (a paragraph, list item or line) has its own block id (`^vankey`):
    the link opens that line, not the section's top. Without one, a heading inside the section
    whose part holds more of them than the part before it is cited (`inner_heading`): the
    runbook's "Contacts" for "what is Dana's email address?", not its "Launch day checklist"
    where the section starts. `holds`: whether a text holds the answer the question asks for,
    where a line says it plainly (an open task, an email address; `answer_type.plain_answer`):
    in a hit that holds one, a block or heading part counts one term more for holding it, and
    a block that holds none is not cited — "what do I need to do before the launch?" cites
    the meeting's "Action items", not its decision that says "launch"; "what is Dana's email
    address?" the runbook's "Contacts", though the question's words are all a name. The
    section's anchor is kept in the hit's `breakdown` (`section_anchor`)."""
    wanted = frozenset(query_terms)
    for hit in hits:
        if (not wanted and holds is None) or hit.node_kind != "leaf" or hit.anchor.startswith("^"):
            continue
        answering = holds if holds is not None and holds(hit.content) else None
        best, found = "", 0
        block: list[str] = []
        fence = ""
        for line in hit.content.split("\n"):
            toggled = fence_after(line, fence)
            if toggled is not None:  # a code block's lines hold no block ids
                fence, block = toggled, []
                continue
            if fence:
                continue
            if not line.strip() or _BLOCK_START.match(line):
                block = []
            if not line.strip():
                continue
            block.append(line)
            mark = _BLOCK_ID.search(line)
            if mark is not None:
                said = " ".join(block)[: -len(mark.group(0))]
                held = _weight(said, wanted, answering) if answering is None or answering(said) else 0
                if held > found:
                    best, found = mark.group(1), held
                block = []
        if best:
            _cite(memory, hit, "^" + best)
        elif hit.anchor.startswith("#") and (inner := inner_heading(hit.content, wanted, answering, hit.anchor)) is not None:
            _cite(memory, hit, f"{hit.anchor}#{inner}")


def _cite(memory: MemoryView, hit: RetrievalHit, anchor: str) -> None:
    """Cite `anchor` inside the hit's section; the section's own anchor stays in its breakdown."""
    hit.breakdown = {**hit.breakdown, "section_anchor": hit.anchor}
    hit.anchor = anchor
    hit.link = obsidian_link(memory.vault_name, hit.note_path, anchor)
    hit.wikilink = wikilink(hit.note_path, anchor)


def _weight(text: str, wanted: frozenset[str], holds: Callable[[str], bool] | None) -> int:
    """How many of `wanted` a text holds, and one more when it holds the answer (`holds`)."""
    return len(wanted.intersection(terms(text))) + (holds is not None and holds(text))


def inner_heading(
    content: str, wanted: frozenset[str], holds: Callable[[str], bool] | None = None, section: str = ""
) -> str | None:
    """The heading inside a section's text (not its first line) whose part, up to the next
    heading, holds the most of `wanted` in its prose (not in its code blocks: a "# listing"
    comment is no answer of the list it names) and more than the part before it; its name as an
    Obsidian link writes it after the section's own anchor ("#Launch day checklist#Contacts":
    Obsidian reads the chain in note order, so it opens this heading and not one of the same
    name earlier in the note); a name the section holds more than once, as the chain of its
    headings that reaches it ("Day 2#Notes": `anchors.heading_anchors`). None when no such
    heading. `section`: the
    section's anchor; a text that opens with a heading above it ("# Budget 2024" before its
    "## Q2 launch") holds that heading and the section's own in the part before, as no chain
    after the section's anchor reaches them ("#Q2 launch#Q2 launch" opens nothing); a heading of
    the section's name further down, below text, is one of its own sub-headings."""
    parts: list[tuple[str, list[str]]] = [("", [])]
    prose: list[list[str]] = [[]]  # each part's lines outside code blocks: a code comment's words are no answer
    headings: list[Heading] = []  # each part's heading but the first's
    fence = ""
    for k, line in enumerate(content.split("\n")):
        toggled = fence_after(line, fence)
        coded = bool(fence) or toggled is not None
        if toggled is not None:
            fence = toggled
        found = atx_heading(line) if not fence and toggled is None and k > 0 else None
        if found is not None and found[1]:
            parts.append((heading_anchor(found[1]), [line]))
            prose.append([line])
            headings.append(Heading(found[0], found[1], k, k))
        else:
            parts[-1][1].append(line)
            if not coded:
                prose[-1].append(line)
    own = section.rsplit("#", 1)[-1].casefold()
    opening = 0  # (only headings and blank lines above it: a sub-heading of the same name is no opening)
    for k, (name, lines) in enumerate(parts):
        if k and own and name.casefold() == own:
            opening = k
            break
        if any(line.strip() and atx_heading(line) is None for line in lines):
            break
    parts = [("", [line for _, lines in parts[: opening + 1] for line in lines]), *parts[opening + 1 :]]
    prose = [[line for lines in prose[: opening + 1] for line in lines], *prose[opening + 1 :]]
    headings = headings[opening:]  # those after the section's own: the chain goes on from it
    if len(parts) < 2:
        return None
    held = [_weight("\n".join(lines), wanted, holds) for lines in prose]
    best = max(range(1, len(parts)), key=lambda k: held[k])
    name = parts[best][0]
    if held[best] <= held[0] or not name:
        return None
    return heading_anchors(headings)[headings[best - 1].line].removeprefix("#")


def leaf_hits(
    memory: MemoryView,
    ranked: Sequence[tuple[str, float, dict[str, Any]]],
    known: Mapping[str, dict[str, Any]] | None = None,
) -> list[RetrievalHit]:
    """Hydrate `(leaf_id, score, breakdown)` into hits, keeping the given order; unknown ids are
    skipped. `known`: leaf rows the caller has already read."""
    if not ranked:
        return []
    ids = [leaf_id for leaf_id, _, _ in ranked]
    known = known or {}
    rows = {leaf_id: known[leaf_id] for leaf_id in ids if leaf_id in known}
    rows.update(memory.leaves.rows([leaf_id for leaf_id in ids if leaf_id not in known]))
    entities = _entities_of(memory, ids)
    summaries = _summaries_of(
        memory.index, sorted({r["note_path"] for r in rows.values() if r["note_kind"] == "summary"})
    )
    scopes = _first_leaf_scopes(memory, summaries.values())
    seen: set[str] = set()
    hits = []
    for leaf_id, score, breakdown in ranked:
        row = rows.get(leaf_id)
        if row is None:
            continue
        path, anchor = row["note_path"], row["anchor"]
        summary = summaries.get(path)
        if summary is not None and summary["id"] in seen:
            continue  # another chunk of a summary already shown (ranked first: its best)
        when = row["ts"].strftime("%Y-%m-%dT%H:%M:%SZ") if row["ts"] is not None else None
        hits.append(
            RetrievalHit(
                node_id=leaf_id,
                node_kind="leaf",
                tree=tree_for_note(row["note_kind"], path, row["source_id"]) or path.split("/", 1)[0],
                scope=_scope(row),
                level=0,
                content=row["text"],
                note_path=path,
                anchor=anchor,
                title=row["title"],
                entities=entities.get(leaf_id, []),
                time_start=when,
                time_end=when,
                score=score,
                breakdown=breakdown,
                source_refs=[row["source_ref"]] if row["source_ref"] else [],
                to=list(row.get("mail_to") or []),
                cc=list(row.get("mail_cc") or []),
                author=row["author"],
                message_id=row["message_id"],
                link=obsidian_link(memory.vault_name, path, anchor),
                wikilink=wikilink(path, anchor),
            )
        )
        if summary is not None:
            seen.add(summary["id"])
            _as_summary(hits[-1], summary, scopes.get(summary["id"], ""))
    return hits


def summary_notes(memory: MemoryView, cols: LeafColumns) -> npt.NDArray[np.int32]:
    """Per leaf of `cols`, the code of its note when that note is a summary's (each of its chunks
    answers as the summary node, `leaf_hits`), else -1."""
    codes = [c for c in np.unique(cols.note[cols.known]).tolist() if note_kind(cols.note_names[c]) == "summary"]
    if codes and has_table(memory.index, "summaries"):
        held = {
            path
            for (path,) in memory.index.query(
                "SELECT DISTINCT note_path FROM summaries WHERE note_path IN (SELECT unnest(?))",
                [[cols.note_names[c] for c in codes]],
            )
        }
        codes = [c for c in codes if cols.note_names[c] in held]
    else:
        codes = []
    found: npt.NDArray[np.int32] = np.where(cols.known & np.isin(cols.note, codes), cols.note, -1).astype(np.int32)
    return found


def later_chunks(order: Iterable[int], summary_of: npt.NDArray[np.int32]) -> set[int]:
    """Of the places `order` (best first; `summary_of`: `summary_notes`), those of a summary's
    chunk after its first: that first answers as the summary (`leaf_hits`) and the later ones
    add no hit, so a list cut to a limit leaves them out first and its total counts the
    summary once."""
    seen: set[int] = set()
    later: set[int] = set()
    for k in order:
        code = int(summary_of[k])
        if code >= 0 and code in seen:
            later.add(k)
        seen.add(code)
    return later


def fold_chunks(memory: MemoryView, ranked: Sequence[tuple[str, float, dict[str, Any]]]) -> list[tuple[str, float, dict[str, Any]]]:
    """`ranked` (in the order it is shown: best first, or newest first) without a summary's
    chunks after its first (`later_chunks`): cut to a limit after this, a list shows `limit`
    hits when it has them, and its length counts each summary once."""
    if not ranked:
        return []
    folded = later_chunks(range(len(ranked)), summary_notes(memory, memory.leaves.columns([i for i, _, _ in ranked])))
    return [item for k, item in enumerate(ranked) if k not in folded]


def _scope(row: Mapping[str, Any]) -> str:
    """A leaf's scope: its note's `scope`, else its note's folder."""
    path = row["note_path"]
    return str(row["scope"] or (path.rsplit("/", 1)[0] if "/" in path else ""))


def _first_leaf_scopes(memory: MemoryView, summaries: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Summary id → the scope of the tree it folds, as its (first) leaf carries it."""
    first = {s["id"]: s["leaf_ids"][0] for s in summaries if s["leaf_ids"]}
    rows = memory.leaves.rows(sorted(set(first.values()))) if first else {}
    return {sid: _scope(rows[leaf_id]) for sid, leaf_id in first.items() if leaf_id in rows}


def _summaries_of(index: Index, note_paths: Sequence[str]) -> dict[str, dict[str, Any]]:
    if not note_paths or not has_table(index, "summaries"):
        return {}
    rows = index.query(
        """
        SELECT s.note_path, s.id, s.tree, s.level, s.children, s.leaf_ids,
               strftime(s.time_start, '%Y-%m-%dT%H:%M:%SZ'), strftime(s.time_end, '%Y-%m-%dT%H:%M:%SZ'),
               s.entities, s.stale, s.user_edited,
               (SELECT list(l.message_id ORDER BY l.ts, l.id) FROM leaves l
                WHERE list_contains(s.leaf_ids, l.id) AND l.message_id IS NOT NULL),
               (SELECT list(l.source_ref ORDER BY l.ts, l.id) FROM leaves l
                WHERE list_contains(s.leaf_ids, l.id) AND l.source_ref IS NOT NULL),
               (SELECT string_agg(c.text, chr(10) || chr(10) ORDER BY c.seq) FROM leaves c WHERE c.note_path = s.note_path)
        FROM summaries s WHERE s.note_path IN (SELECT unnest(string_split(?, chr(31))))
        """,
        ["\x1f".join(note_paths)],
    )
    keys = ("id", "tree", "level", "children", "leaf_ids", "start", "end", "entities", "stale", "user_edited",
            "message_ids", "source_refs", "text")  # fmt: skip
    return {row[0]: dict(zip(keys, row[1:], strict=True)) for row in rows}


def _as_summary(hit: RetrievalHit, summary: dict[str, Any], scope: str) -> None:
    """A chunk of a summary note answers as the summary node itself: one hit, its whole text
    (its chunks in order), the scope of the tree it folds (`scope`, as its leaves carry it)."""
    hit.breakdown = {
        **hit.breakdown,
        "chunk_id": hit.node_id,
        "stale": summary["stale"],
        "user_edited": summary["user_edited"],
    }
    hit.node_id = summary["id"]
    hit.node_kind = "summary"
    hit.tree = summary["tree"]
    hit.scope = scope
    hit.content = summary["text"] or hit.content
    hit.level = summary["level"]
    if hit.title == summary["id"]:  # a summary note has no heading: its file name is its id
        days = " – ".join(dict.fromkeys(str(t)[:10] for t in (summary["start"], summary["end"]) if t))
        hit.title = f"Summary L{summary['level']} of {summary['tree']}" + (f", {days}" if days else "")
    hit.child_ids = list(summary["children"] or [])
    hit.time_start, hit.time_end = summary["start"], summary["end"]
    hit.entities = sorted(set(hit.entities) | set(summary["entities"] or []))
    hit.message_ids = list(summary["message_ids"] or [])
    hit.source_refs = list(dict.fromkeys(summary["source_refs"] or []))  # in the messages' order, each once


def _entities_of(memory: MemoryView, leaf_ids: Sequence[str]) -> dict[str, list[str]]:
    if not leaf_ids or not has_table(memory.index, "occurrences"):
        return {}
    return memory.entity_graph().entities_of(leaf_ids)

def written_version(memory: MemoryView, note: str, *, limit: int) -> dict[str, Any]:
    """The leaves of `note` alone, in its order, as every mode answers (`{hits, total,
    truncated}`): the version just written beside a note the user edited, whose leaves the
    source's (`query_source`) list first. NotFound when the note holds none."""
    rows = memory.index.query("SELECT id FROM leaves WHERE note_path = ? ORDER BY seq", [note]) if note else []
    if not rows:
        raise NotFound(f"{note or 'no note'} holds no leaf")
    hits = leaf_hits(memory, [(str(row[0]), 0.0, {"order": "time"}) for row in rows[:limit]])
    return envelope(hits, len(rows))
