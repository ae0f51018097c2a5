"""A summary is one node in every mode: one hit, its whole text, its tree's scope; a leaf's tree
is the tree it is folded into."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval import modes
from vaultmind.tree.note import tree_for_note

from .conftest import write, write_chat

TAIL = "The harbour crane inspection closes the long summary."


@pytest.fixture
def sealed(vault: Path) -> Iterator[tuple[Memory, str]]:
    """A chat sealed into summaries, one of which you made several chunks long (its id given)."""
    from vaultmind.tree.engine import seal_ready

    write_chat(
        vault,
        "2024-05-08",
        [(name, f"{name} reports progress on the lighthouse restoration, step {i}.") for i, name in enumerate(["Alice Chen", "Bob Stone"] * 6)],
    )
    config = load_config(
        vault, embed_provider="none", extra={"trees.l0_tokens": 64, "trees.fanout": 2, "trees.summarizer": "fallback"}
    )
    with Memory.open(config) as memory:
        memory.sync()
        assert seal_ready(memory).sealed
        summary_id, path = memory.index.query(  # one with a parent, for `drill_down`
            "SELECT id, note_path FROM summaries WHERE level = 1 "
            "AND id IN (SELECT unnest(children) FROM summaries WHERE level = 2) ORDER BY id LIMIT 1"
        )[0]
        note = vault / path
        paragraph = "The restoration crew logged weather, paint, timber and rigging work for the lighthouse. " * 6
        note.write_text(note.read_text(encoding="utf-8") + "\n" + "\n\n".join([paragraph] * 5) + "\n\n" + TAIL + "\n", encoding="utf-8")
        memory.sync()
        chunks = memory.index.scalar("SELECT count(*) FROM leaves WHERE note_path = ?", [path])
        assert chunks >= 3, "the edited summary is several chunks"
        yield memory, summary_id


def _chunk_ids(memory: Memory, summary_id: str) -> list[str]:
    rows = memory.index.query(
        "SELECT l.id FROM leaves l JOIN summaries s ON s.note_path = l.note_path WHERE s.id = ? ORDER BY l.seq", [summary_id]
    )
    return [row[0] for row in rows]


def test_a_long_summary_is_one_hit_with_its_whole_text_in_every_mode(sealed: tuple[Memory, str]) -> None:
    memory, summary_id = sealed
    hits = memory.query("walk", {"query": "restoration crew weather paint timber rigging crane", "limit": 30})["hits"]
    mine = [h for h in hits if h["node_id"] == summary_id]
    assert len(mine) == 1, "one hit per summary node"
    assert TAIL in mine[0]["content"] and "step" in mine[0]["content"], "its whole text, first chunk to last"
    assert mine[0]["score"] == max(h["score"] for h in hits if h["node_id"] == summary_id)
    found = memory.query("search", {"query": "restoration crew weather crane", "limit": 30})["hits"]
    assert [h["node_id"] for h in found].count(summary_id) == 1
    fetched = memory.query("fetch_leaves", {"ids": [summary_id]})["hits"]
    assert TAIL in fetched[0]["content"]
    parent = memory.index.scalar("SELECT id FROM summaries WHERE list_contains(children, ?)", [summary_id])
    drilled = memory.query("drill_down", {"node_id": parent})["hits"]
    assert TAIL in next(h for h in drilled if h["node_id"] == summary_id)["content"]


def _every_node_once(memory: Memory, mode: str, args: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`mode`'s answer to `args` with room for all of it, and its node ids: each once, as many
    as its total."""
    everything = memory.query(mode, {**args, "limit": 100})
    nodes = [h["node_id"] for h in everything["hits"]]
    assert len(nodes) == len(set(nodes)) == everything["total"] and not everything["truncated"]
    return everything, nodes


def _cut_to_each_limit(memory: Memory, mode: str, args: dict[str, Any], everything: dict[str, Any], nodes: list[str]) -> None:
    """Asked for 3 or 5, `mode` answers the first of `nodes`, with the whole total, truncated."""
    for limit in (3, 5):
        result = memory.query(mode, {**args, "limit": limit})
        assert [h["node_id"] for h in result["hits"]] == nodes[:limit], limit
        assert result["total"] == everything["total"] and result["truncated"]


@pytest.mark.parametrize("mode", ["walk", "search"])
def test_a_long_summary_takes_one_place_of_the_limit_and_counts_once_in_the_total(sealed: tuple[Memory, str], mode: str) -> None:
    """walk and search cut their ranked leaves to `limit`, then a summary's chunks after its
    best were dropped: asked for 3 of a summary cut in many chunks, one hit came back, with a
    total counting every chunk. The later chunks are left out before the cut."""
    memory, summary_id = sealed
    query = "restoration crew weather paint timber rigging lighthouse"
    chunks = len(_chunk_ids(memory, summary_id))
    everything, nodes = _every_node_once(memory, mode, {"query": query})
    assert summary_id in nodes and everything["total"] > 3
    matched = memory.index.scalar("SELECT count(*) FROM leaves WHERE note_path <> ''")
    assert everything["total"] <= matched - (chunks - 1), "the summary's chunks count as one"
    _cut_to_each_limit(memory, mode, {"query": query}, everything, nodes)


def test_a_long_summary_takes_one_place_of_an_entitys_leaves_and_counts_once(sealed: tuple[Memory, str], vault: Path) -> None:
    """drill_down from an entity cut the leaves mentioning it to `limit`, then a summary's
    chunks after its first were dropped: all of them asked for, fewer came back than `total`
    said, and `truncated` was true. The later chunks are left out before the cut."""
    memory, summary_id = sealed
    path = memory.index.scalar("SELECT note_path FROM summaries WHERE id = ?", [summary_id])
    note = vault / path
    note.write_text(note.read_text(encoding="utf-8").replace("lighthouse. ", "lighthouse, said Alice Chen. "), encoding="utf-8")
    memory.sync()
    entity = "person:alice-chen"
    mentioning = memory.index.scalar("SELECT count(DISTINCT leaf_id) FROM occurrences WHERE entity_id = ? AND leaf_id IN (SELECT unnest(?::VARCHAR[]))", [entity, _chunk_ids(memory, summary_id)])
    assert mentioning >= 3, "several chunks of the summary mention her"
    everything, nodes = _every_node_once(memory, "drill_down", {"node_id": entity})
    assert nodes.count(summary_id) == 1 and everything["total"] > 5
    _cut_to_each_limit(memory, "drill_down", {"node_id": entity}, everything, nodes)


def test_fetch_leaves_answers_a_summary_once_when_asked_by_its_id_and_a_chunk_id(sealed: tuple[Memory, str]) -> None:
    memory, summary_id = sealed
    later = _chunk_ids(memory, summary_id)[1]
    fetched = memory.query("fetch_leaves", {"ids": [summary_id, later]})
    assert [h["node_id"] for h in fetched["hits"]] == [summary_id] and fetched["missing"] == []
    assert fetched["total"] == 1


def test_a_summary_hit_carries_the_scope_of_its_trees_leaves(sealed: tuple[Memory, str]) -> None:
    memory, summary_id = sealed
    fetched = memory.query("fetch_leaves", {"ids": [summary_id]})["hits"][0]
    leaf = memory.query("query_source", {"source_id": "chat:two"})["hits"][0]
    assert leaf["scope"] == "chat/two" and fetched["scope"] == leaf["scope"]
    assert fetched["tree"] == leaf["tree"] == "chat:two"


def test_cover_window_hydrates_only_the_hits_it_shows(sealed: tuple[Memory, str], monkeypatch: pytest.MonkeyPatch) -> None:
    memory, _ = sealed
    asked: list[int] = []
    real = modes.leaf_hits

    def counting(view: Any, ranked: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(len(ranked))
        return real(view, ranked, *args, **kwargs)

    monkeypatch.setattr(modes, "leaf_hits", counting)
    window = memory.query("cover_window", {"start": "2024-05-08", "end": "2024-05-09", "limit": 1})
    assert len(window["hits"]) == 1 and window["total"] > 1 and window["truncated"]
    assert sum(asked) == 1, "one hit shown, one hydrated"


def test_a_leaf_hit_names_the_tree_its_note_is_folded_into(vault: Path) -> None:
    write(vault, "Projects/Alpha/plan.md", "# Plan\n\nThe quokka migration plan for Alpha.\n")
    write(vault, "inbox.md", "# Inbox\n\nA quokka sighting at the root of the vault.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.query("walk", {"query": "quokka"})["hits"]
        trees = {h["note_path"]: h["tree"] for h in hits}
        assert trees == {"Projects/Alpha/plan.md": "notes:Projects", "inbox.md": "notes:/"}
        assert all(tree == tree_for_note("user", path, None) for path, tree in trees.items())


def test_a_summary_spanning_far_more_than_the_window_ranks_below_one_inside_it(vault: Path) -> None:
    """"What happened between Tim and John in December 2023?" of a sealed tree: a summary of
    May to December overlapped the window and counted as wholly inside it, level with one of
    December alone. Its time factor is now the share of its span inside the window (from
    `OUTSIDE_WINDOW` up); a message, one point in time, stays wholly inside."""
    from vaultmind.retrieval.windows import OUTSIDE_WINDOW
    from vaultmind.tree.engine import seal_ready

    for day in ["2023-05-10", "2023-08-14", "2023-12-05", "2023-12-19"]:
        write_chat(vault, day, [(name, f"{name} talks about the basketball tournament, part {i}.") for i, name in enumerate(["Tim", "John"] * 4)])
    config = load_config(vault, embed_provider="none", extra={"trees.l0_tokens": 64, "trees.fanout": 2, "trees.summarizer": "fallback"})
    with Memory.open(config) as memory:
        memory.sync()
        assert seal_ready(memory).sealed
        memory.sync()
        ranges = {sid: (start, end) for sid, start, end in memory.index.query("SELECT id, time_start, time_end FROM summaries")}
        hits = memory.walk("What happened between Tim and John about the basketball tournament in December 2023?", limit=60)["hits"]
        summaries = [h for h in hits if h["node_id"] in ranges]
        inside = [h for h in summaries if ranges[h["node_id"]][0].month == 12]
        wide = [h for h in summaries if ranges[h["node_id"]][0].month < 12 and ranges[h["node_id"]][1].month == 12]
        assert inside and wide, "the tree holds a summary of December and one reaching back to May or August"
        assert all(h["breakdown"]["time_factor"] == 1.0 for h in inside)
        for h in wide:
            start, end = ranges[h["node_id"]]
            share = (end - datetime(2023, 12, 1)) / (end - start)
            assert h["breakdown"]["time_factor"] == pytest.approx(OUTSIDE_WINDOW + (1 - OUTSIDE_WINDOW) * share)
        widest = min(wide, key=lambda h: ranges[h["node_id"]][0])
        assert widest["breakdown"]["time_factor"] < min(h["breakdown"]["time_factor"] for h in wide if h is not widest)
        assert min(h["score"] for h in inside) > max(w["score"] for w in wide), "December's summaries outscore the wider ones"
        assert hits[0]["node_id"] not in ranges and hits[0]["time_range"]["start"].startswith("2023-12"), "a December message leads"
        messages = [h for h in hits if h["node_id"] not in ranges and h["time_range"]["start"].startswith("2023-12")]
        assert messages and all(h["breakdown"]["time_factor"] == 1.0 for h in messages), "messages stay points in time"
