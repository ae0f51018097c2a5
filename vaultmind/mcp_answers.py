"""What the MCP server answers a `memory_tree` call with: each hit as an agent uses it.

A mode's answer is the API's (`/v1/query`): every hit with its score's ~40-part breakdown, its
child ids, message ids and scope. Said whole to an agent, it was 5–7 times the hits' content
(a walk of 10 hits: 21 KB of text for 3 KB of content, and as much again in
`structuredContent`), all of it in the model's context in every session. An agent reads a
hit's id (to drill down or fetch), its note, anchor and link (to cite), its tree (query_source's
`source_id`, to narrow to it), title, author, time, entities, content and score: that is the
hit it gets. `scores: true` (the tool's argument) gives the breakdown too, for an agent or a
person asking why something ranked.
"""

from __future__ import annotations

from typing import Any

# A hit's fields an agent is given, in this order (the rest are the API's and `--json`'s);
# its `tree` is what query_source's `source_id` takes to narrow to the hit's source
AGENT_FIELDS = (
    "node_id", "node_kind", "title", "note_path", "anchor", "link", "tree", "author", "to", "cc", "time_range",
    "level", "entities", "source_refs", "content", "score",
)  # fmt: skip
# An entity hit's fields beside them (docs/vault-format.md): its kind, its other names, how often
# it is mentioned, and `ambiguous` (kept only when true), which tells the agent to ask which one is meant
ENTITY_FIELDS = ("kind", "aliases", "mentions", "ambiguous")
# A summary folds dozens of messages: their first sources cite it, the count says how many more
SOURCE_REFS_SHOWN = 3
# Of a document written: the ids of its first leaves, to fetch or drill from
LEAVES_SHOWN = 10


def agent_answer(answer: dict[str, Any], *, scores: bool = False) -> dict[str, Any]:
    """`answer` with each of its hits as an agent reads it (`agent_hit`); the rest as it is."""
    hits = answer.get("hits")
    if not isinstance(hits, list):
        return answer
    return {**answer, "hits": [agent_hit(hit, scores=scores) for hit in hits]}


def agent_hit(hit: dict[str, Any], *, scores: bool = False) -> dict[str, Any]:
    """A hit's `AGENT_FIELDS` (an entity's `ENTITY_FIELDS` too) that say something (no empty
    lists, no null author, no time range of two nulls, no `ambiguous: false`), its children
    counted rather than listed, its sources cut to the first few; with `scores`, its score's
    breakdown too."""
    kept: dict[str, Any] = {}
    fields = (*AGENT_FIELDS, *ENTITY_FIELDS) if hit.get("node_kind") == "entity" else AGENT_FIELDS
    for key in fields:
        value = hit.get(key)
        if value is None or value == [] or value == "" or value is False or (key == "time_range" and not any(value.values())):
            continue
        if key == "level" and hit.get("node_kind") == "leaf":
            continue
        if key == "source_refs" and len(value) > SOURCE_REFS_SHOWN:
            kept["source_refs_more"] = len(value) - SOURCE_REFS_SHOWN
            value = value[:SOURCE_REFS_SHOWN]
        kept[key] = value
    if hit.get("child_ids"):
        kept["children"] = len(hit["child_ids"])
    if scores and "breakdown" in hit:
        kept["breakdown"] = hit["breakdown"]
    return kept


def hit_ids(answer: dict[str, Any]) -> dict[str, Any]:
    """A walk asked with evidence, as the agent's text reads it beside the block: each hit's id
    and kind, in rank order (the block's [n] is hits[n-1], for drill_down and fetch_leaves), so
    the text stays within the budget the agent asked for."""
    hits = [{"node_id": hit["node_id"], "node_kind": hit["node_kind"]} for hit in answer.get("hits") or ()]
    return {"hits": hits, "total": answer.get("total"), "truncated": answer.get("truncated")}


def ingested(answer: dict[str, Any]) -> dict[str, Any]:
    """An `ingest_document`'s answer as the agent reads it: what was written (`ingested`: its
    source id, note, whether it changed, its leaves' count, warnings), a link to its first leaf
    and the ids of its first leaves (the answer's hits: the note written's leaves), and the
    answer's `notice` when it has one (an index to rebuild, with the command that does).
    Every leaf said back — a 3 MB document answered with 1.4 MB — is the API's answer only."""
    hits = answer.get("hits") or ()
    told = {
        "ingested": answer.get("ingested"),
        "link": hits[0].get("link") if hits else None,
        "first_leaves": [hit["node_id"] for hit in hits[:LEAVES_SHOWN]],
    }
    if answer.get("notice"):
        told["notice"] = answer["notice"]
    return told
