"""Hop tightening's pair test: the leaves holding two related query entities, on a real vault
and for a question naming hundreds of entities (which must not cost leaves × pairs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.entity_graph import EntityGraph, GraphRows
from vaultmind.retrieval.entity_leaves import entity_signals, related_pair_leaves

from .conftest import write


def test_pair_leaves_are_the_leaves_holding_two_related_query_entities(vault: Path) -> None:
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    write(vault, "notes/a.md", "@dana and @marco planned the #launch.\n")
    write(vault, "notes/b.md", "@marco booked the hall.\n")
    write(vault, "notes/c.md", "@alex went hiking alone.\n")
    write(vault, "notes/d.md", "@zoe and @alex walked.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        ids = {
            r[0].split(":")[1]: r[0] for r in memory.index.query("SELECT DISTINCT entity_id FROM occurrences")
        }
        note_of = dict(memory.index.query("SELECT id, note_path FROM leaves"))
        asked = [ids["dana"], ids["marco"], ids["alex"], ids["zoe"]]
        _, pairs, _, _ = entity_signals(memory, asked, 2)
        assert sorted(note_of[leaf] for leaf in pairs) == ["notes/a.md", "notes/d.md"]
        _, pairs, _, _ = entity_signals(memory, [ids["dana"], ids["alex"]], 2)  # never together
        assert pairs == set()
        assert entity_signals(memory, [ids["dana"]], 2)[1] == set()


@pytest.mark.slow
@pytest.mark.timeout(60)  # the scan of every pair per leaf took minutes here; this takes seconds
def test_a_question_naming_hundreds_of_related_entities_tests_each_leafs_own_pairs() -> None:
    n, leaves = 300, 60_000
    entity_ids = [f"person:p{i:03d}" for i in range(n)]
    a, b = np.triu_indices(n, k=1)  # every entity co-occurs with every other
    codes = np.arange(leaves, dtype=np.int32) % n  # each leaf mentions one entity ...
    leaf_ids = np.array([f"{i:012x}".encode() for i in range(leaves)])
    both = np.arange(0, leaves, 1000)  # ... and every thousandth a second one
    rows = GraphRows(
        entity_ids=entity_ids,
        codes=np.concatenate((codes, (codes[both] + 1) % n)).astype(np.int32),
        leaf_ids=np.concatenate((leaf_ids, leaf_ids[both])),
        packed=False,
        a=a.astype(np.int32),
        b=b.astype(np.int32),
        weight=np.ones(len(a)),
    )
    graph = EntityGraph(rows)
    by_leaf = graph.leaves_of(entity_ids)
    assert len(by_leaf) == leaves
    expected = {leaf_ids[i].decode() for i in both.tolist()}
    assert related_pair_leaves(graph, by_leaf, entity_ids, 2) == expected
