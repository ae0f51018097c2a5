"""The in-memory entity graph of the read path equals the SQL over `occurrences` and `edges`,
and follows every change of the index."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.entities.ids import name_key
from vaultmind.entities.resolve import _full_name_of
from vaultmind.memory import Memory
from vaultmind.retrieval.entity_graph import EntityGraph, entity_graph

from .conftest import write

NOTES = {
    "notes/a.md": "Meeting with @dana and @marco about #launch and #budget.\n",
    "notes/b.md": "# Plan\n\n@marco sent the #budget to @priya.\n\n## Later\n\n@priya and @dana: #launch moved.\n",
    "notes/c.md": "@alex likes #hiking. @dana too.\n",
    "notes/d.md": "nothing here\n",
}


def sql_near_leaves(memory: Memory, ids: list[str], limit: int) -> list[tuple[str, float]]:
    q = ", ".join(f"'{i}'" for i in ids)
    rows = memory.index.query(
        f"""
        WITH nb AS (
            SELECT b AS entity, max(weight) AS w FROM edges WHERE a IN ({q}) GROUP BY b
            UNION ALL
            SELECT a AS entity, max(weight) AS w FROM edges WHERE b IN ({q}) GROUP BY a
        )
        SELECT o.leaf_id, max(nb.w) FROM occurrences o JOIN nb ON nb.entity = o.entity_id
        GROUP BY o.leaf_id ORDER BY 2 DESC, 1 LIMIT {limit}
        """
    )
    return [(r[0], float(r[1])) for r in rows]


def sql_neighbours(memory: Memory, entity_id: str) -> dict[str, float]:
    rows = memory.index.query(
        "SELECT other, max(weight) FROM (SELECT b AS other, weight FROM edges WHERE a = ? "
        "UNION ALL SELECT a, weight FROM edges WHERE b = ?) GROUP BY other",
        [entity_id, entity_id],
    )
    return {other: float(weight) for other, weight in rows}


def check_equal(memory: Memory) -> None:
    graph = entity_graph(memory.index)
    entities = [r[0] for r in memory.index.query("SELECT DISTINCT entity_id FROM occurrences ORDER BY 1")]
    leaves = [r[0] for r in memory.index.query("SELECT id FROM leaves ORDER BY id")]
    assert entities
    by_leaf: dict[str, set[str]] = {}
    for leaf_id, entity_id in memory.index.query("SELECT leaf_id, entity_id FROM occurrences"):
        by_leaf.setdefault(leaf_id, set()).add(entity_id)
    assert graph.entities_of(leaves) == {k: sorted(v) for k, v in by_leaf.items()}
    for entity_id in entities:
        expected = {leaf: {entity_id} for leaf, ents in by_leaf.items() if entity_id in ents}
        assert graph.leaves_of([entity_id]) == expected
        assert graph.near_leaves([entity_id], 50) == sql_near_leaves(memory, [entity_id], 50)
        assert graph.neighbours(entity_id) == sql_neighbours(memory, entity_id)
    assert graph.near_leaves(entities[:3], 2) == sql_near_leaves(memory, entities[:3], 2)
    asked = [*entities[:4], entities[0], "topic:no-such-entity"]  # a repeat and an unknown one
    together = {leaf: ents & set(asked) for leaf, ents in by_leaf.items() if ents & set(asked)}
    assert graph.leaves_of(asked) == together and any(len(ents) > 1 for ents in together.values())
    assert graph.leaves_of([]) == {}
    assert sum(len(graph.neighbours(e)) for e in entities) == 2 * memory.index.scalar("SELECT count(*) FROM edges") > 0


def test_resident_entity_graph_equals_sql_and_follows_changes(vault: Path) -> None:
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    for rel, text in NOTES.items():
        write(vault, rel, text)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        check_equal(memory)
        first = entity_graph(memory.index)
        write(vault, "notes/e.md", "@zoe met @alex about #hiking.\n")
        memory.sync()
        assert entity_graph(memory.index) is not first
        hiking = entity_graph(memory.index).leaves_of(["topic:hiking"])
        assert len(hiking) == 2
        check_equal(memory)
        (vault / "notes/a.md").unlink()
        memory.sync()
        check_equal(memory)
        unchanged = entity_graph(memory.index)
        with memory.index.transaction() as con:  # a commit that leaves occurrences alone
            con.execute("INSERT OR REPLACE INTO meta VALUES ('bench_probe', '1')")
        assert entity_graph(memory.index) is unchanged


@contextmanager
def serving_memory(vault: Path) -> Iterator[Memory]:
    """The notes indexed, in a memory warmed and serving as the daemon's."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    for rel, text in NOTES.items():
        write(vault, rel, text)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.serve()
        memory.sync()
        memory.warm()
        yield memory


def test_background_upkeep_leaves_the_graph_ready_for_the_next_question(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with serving_memory(vault) as memory:
        write(vault, "notes/e.md", "@zoe met @alex about #hiking.\n")
        memory.sync_paths(["notes/e.md"])
        memory.enrich(background=True)  # what the daemon's upkeep runs after a save

        def reload(*args: object) -> None:
            raise AssertionError("the entity graph was built on the read path")

        monkeypatch.setattr(EntityGraph, "__init__", reload)
        assert len(entity_graph(memory.index).leaves_of(["topic:hiking"])) == 2
        hits = memory.walk("What did zoe say about hiking?")["hits"]
        assert hits and hits[0]["note_path"] == "notes/e.md"


def test_the_background_catch_up_leaves_no_memo_of_names_and_saves_still_resolve_them(vault: Path) -> None:
    """The memos of names serve a bulk pass; a serving daemon drops them once its catch-up is
    done, and a save after it resolves the same names (the memos filled again)."""
    with serving_memory(vault) as memory:
        write(vault, "notes/e.md", "Lunch with [[Dana Reyes]] about #hiking.\n")
        memory.sync_paths(["notes/e.md"])
        assert name_key.cache_info().currsize > 0  # the save's link targets and names, remembered
        memory.enrich(background=True)  # what the daemon's upkeep runs after a save
        assert name_key.cache_info().currsize == 0
        assert _full_name_of.cache_info().currsize == 0
        write(vault, "notes/f.md", "Dinner with [[Dana Reyes]] about #hiking.\n")
        memory.sync_paths(["notes/f.md"])
        found = {
            path: sorted(r[0] for r in memory.index.query("SELECT DISTINCT entity_id FROM occurrences WHERE note_path = ?", [path]))
            for path in ("notes/e.md", "notes/f.md")
        }
        assert found["notes/f.md"] == found["notes/e.md"] != []  # the same text, the same entities
        assert name_key.cache_info().currsize > 0


def test_while_serving_a_question_does_not_wait_for_background_commits(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with serving_memory(vault) as memory:
        leaf = memory.index.query("SELECT id, note_path FROM leaves WHERE note_path = 'notes/d.md'")[0]
        with memory.index.transaction() as con:  # what a step of background NER commits
            con.execute(
                "INSERT INTO occurrences (entity_id, leaf_id, note_path, surface) VALUES ('topic:zeppelin', ?, ?, 'zeppelin')",
                [leaf[0], leaf[1]],
            )
        built = EntityGraph.__init__

        def build(*args: object) -> None:
            raise AssertionError("a question waited for the entity graph")

        monkeypatch.setattr(EntityGraph, "__init__", build)
        memory.walk("What did @dana say about #launch?")  # the graph as it was: no build
        assert memory.entity_graph().leaves_of(["topic:zeppelin"]) == {}
        monkeypatch.setattr(EntityGraph, "__init__", built)
        memory.enrich(background=True)  # the upkeep's next step brings it up to date
        assert memory.entity_graph().leaves_of(["topic:zeppelin"]) == {leaf[0]: {"topic:zeppelin"}}

        write(vault, "notes/f.md", "@zoe plans #sailing.\n")
        memory.sync_paths(["notes/f.md"])  # a save: the next question sees it at once
        assert memory.entity_graph().leaves_of(["topic:sailing"])
        assert entity_graph(memory.index) is memory.entity_graph()


def test_leaf_ids_that_are_not_hex_are_kept_as_they_are(vault: Path) -> None:
    """Leaf ids are 32 hex digits and held as their bytes; an occurrence with any other id
    (an index written by other means) makes the graph keep every id as it is."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    for rel, text in NOTES.items():
        write(vault, rel, text)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert entity_graph(memory.index)._leaf_keys._packed
        with memory.index.transaction() as con:
            con.execute(
                "INSERT INTO occurrences (entity_id, leaf_id, note_path, surface) "
                "VALUES ('topic:launch', 'not-a-hex-leaf', 'notes/a.md', 'launch')"
            )
        graph = entity_graph(memory.index)
        assert not graph._leaf_keys._packed
        expected: dict[str, set[str]] = {}
        for leaf_id, entity_id in memory.index.query("SELECT leaf_id, entity_id FROM occurrences"):
            if entity_id == "topic:launch":
                expected.setdefault(leaf_id, set()).add(entity_id)
        assert "not-a-hex-leaf" in expected and graph.leaves_of(["topic:launch"]) == expected
        assert graph.entities_of(["not-a-hex-leaf"]) == {"not-a-hex-leaf": ["topic:launch"]}


def test_a_change_of_two_rows_of_one_pair_rebuilds_the_graph(vault: Path) -> None:
    """Two occurrences of one (entity, leaf) pair — a leaf id two notes share, as a copy of a
    note does — replaced by two of another pair: the table changed, so does the graph (a xor
    of the rows' hashes cancelled each pair out and kept the old graph)."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    for rel, text in NOTES.items():
        write(vault, rel, text)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        pair = "INSERT INTO occurrences (entity_id, leaf_id, note_path, surface) VALUES (?, 'shared-leaf', ?, ?)"
        with memory.index.transaction() as con:
            for path in ("notes/copy1.md", "notes/copy2.md"):
                con.execute(pair, ["topic:launch", path, "#launch"])
        before = entity_graph(memory.index)
        assert before.entities_of(["shared-leaf"]) == {"shared-leaf": ["topic:launch"]}
        with memory.index.transaction() as con:
            con.execute("DELETE FROM occurrences WHERE leaf_id = 'shared-leaf'")
            for path in ("notes/copy1.md", "notes/copy2.md"):
                con.execute(pair, ["topic:hiking", path, "#hiking"])
        assert entity_graph(memory.index).entities_of(["shared-leaf"]) == {"shared-leaf": ["topic:hiking"]}
