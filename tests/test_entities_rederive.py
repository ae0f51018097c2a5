"""The entity graph re-derived after an upgrade, in committed slices (`entities/rederive.py`):
real notes in a temp vault, real DuckDB indexes, the real sync."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest

from vaultmind.config import Config, load_config
from vaultmind.entities import graph, rederive, registry
from vaultmind.entities.backfill import complete_ner, entity_deriver
from vaultmind.entities.graph import EntityDeriver
from vaultmind.entities.rederive import META_REDERIVING
from vaultmind.entities.registry import Registry
from vaultmind.entities.tables import META_SIGNATURE
from vaultmind.index.pool import MEMORY_LIMIT, size_bytes
from vaultmind.index.store import Index
from vaultmind.memory import Memory

from .conftest import write, write_chat

GRAPH = {
    "occurrences": "SELECT entity_id, leaf_id, note_path, surface, ts, read_as FROM occurrences ORDER BY ALL",
    "edges": "SELECT a, b, weight FROM edges ORDER BY ALL",
    "entities": "SELECT * FROM entities ORDER BY ALL",
}
PEOPLE = ["Helen Okafor", "Marco Ruiz", "Bob Stone", "Dana Whitfield", "Priya Natarajan"]


def _vault(vault: Path, entities: str = 'ner_model = "off"') -> None:
    write(vault, ".vaultmind/config.toml", f'[embeddings]\nprovider = "none"\n[entities]\n{entities}\n')
    for name in PEOPLE:
        ident = name.lower().replace(" ", "-")
        write(vault, f"entities/person/{ident}.md", f"---\nid: person:{ident}\ndisplay_name: {name}\n---\n# {name}\n")
    for n in range(12):
        a, b, c = PEOPLE[n % 5], PEOPLE[(n + 1) % 5], PEOPLE[(n * 3) % 5]
        write(
            vault,
            f"notes/Meeting {n:02d}.md",
            f"# Meeting {n:02d}\n\n{a} met {b} about the Tidepool launch.\n\n## Follow-up\n\n{c} sends the notes to {a}.\n",
        )
    for day in ("2024-03-04", "2024-03-05"):  # authors no entity note claims: read as people, settled
        write_chat(vault, day, [("Amber", f"{PEOPLE[0]} has the budget."), ("Tom Ng", f"Ask {PEOPLE[1]} then.")])


class _Stopped(Exception):
    """Injected between two slices of a re-derivation."""


def _graph(index: Index) -> dict[str, list[tuple[object, ...]]]:
    return {name: index.query(sql) for name, sql in GRAPH.items()}


def _derived_with_old_rules(config: Config, index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    """Index the vault as the rules before (`registry.RULES`) derived it."""
    with monkeypatch.context() as patch:
        patch.setattr(registry, "RULES", registry.RULES - 1)
        patch.setattr(graph, "RULES", registry.RULES, raising=False)
        with Memory(config, index, None) as memory:
            memory.sync()


class _Derives(list[int]):
    """The leaf rows each `EntityDeriver._derive` call was given (the calls `counts` takes);
    while `stop` is set, the call after the first counted one raises `_Stopped`."""

    stop = True


def _count_derives(
    monkeypatch: pytest.MonkeyPatch, counts: Callable[[duckdb.DuckDBPyConnection], bool] = lambda con: True
) -> _Derives:
    """`EntityDeriver._derive` counted, in slices of 4 leaves."""
    derived = _Derives()
    real = EntityDeriver._derive

    def counted(
        self: EntityDeriver,
        con: duckdb.DuckDBPyConnection,
        reg: Registry,
        rows: Sequence[Any],
        known: Any = None,
        words: Any = None,
    ) -> Any:
        if derived.stop and derived:
            raise _Stopped
        if counts(con):
            derived.append(len(rows))
        return real(self, con, reg, rows, known, words)

    monkeypatch.setattr(graph, "REBUILD_CHUNK", 4)
    monkeypatch.setattr(EntityDeriver, "_derive", counted)
    return derived


def _rederiving(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether a re-derivation is under way (NER's own steps derive too, outside it)."""
    return con.execute("SELECT count(*) FROM meta WHERE key = ?", [META_REDERIVING]).fetchone() != (0,)


def test_a_rederivation_stopped_between_slices_goes_on_at_the_next_sync(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """New rules re-derive every leaf in slices, each committed: stopped after the first (an
    exception, as a crash), the next sync derives only the leaves left, and every occurrence,
    edge and entity row is that of a re-derivation never stopped."""
    _vault(vault)
    config = load_config(vault)
    _derived_with_old_rules(config, Index.open(tmp_path / "whole.duckdb"), monkeypatch)
    with Memory(config, Index.open(tmp_path / "whole.duckdb"), None) as whole:
        whole.sync()
        expected = _graph(whole.index)
        leaves = int(whole.index.scalar("SELECT count(DISTINCT id) FROM leaves"))
        signature = whole.index.get_meta(META_SIGNATURE)
    assert expected["edges"] and expected["entities"] and leaves > 8
    assert any(row[5] is not None for row in expected["occurrences"])  # names settled to their kind

    _derived_with_old_rules(config, Index.open(config.index_path), monkeypatch)
    derived = _count_derives(monkeypatch)  # leaf rows each `_derive` call was given
    with Memory.open(config) as memory:
        with pytest.raises(_Stopped):
            memory.sync()
        assert memory.index.get_meta(META_SIGNATURE) != signature  # not done: still the old rules'
        assert memory.index.get_meta(META_REDERIVING) is not None
    assert derived and sum(derived) < leaves
    first = sum(derived)

    derived.stop = False
    derived.clear()
    with Memory.open(config) as memory:
        memory.sync()
        assert memory.index.get_meta(META_SIGNATURE) == signature
        assert memory.index.get_meta(META_REDERIVING) is None
        assert _graph(memory.index) == expected
    assert sum(derived) == leaves - first  # the slice committed before the stop is not derived again


def test_an_ner_run_before_the_next_sync_rederives_in_committed_slices(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After new rules, NER run before any sync (`complete_ner`: `vaultmind enrich`, the daemon's
    background work) re-derives every leaf in the same committed slices as a sync's catch-up, not
    inside its first step's transaction: stopped after the first slice, the next run derives only
    the leaves left, and every row is that of a sync's catch-up followed by NER."""
    _vault(vault, "ner_inline = 0")  # every text waits for NER
    config = load_config(vault)
    with Memory(config, Index.open(tmp_path / "probe.duckdb"), None) as probe:
        deriver = entity_deriver(probe)
        assert deriver is not None
        if not deriver.ner.available:
            pytest.skip(deriver.ner.status()["message"])
    _derived_with_old_rules(config, Index.open(tmp_path / "whole.duckdb"), monkeypatch)
    with Memory(config, Index.open(tmp_path / "whole.duckdb"), None) as whole:
        whole.sync()
        assert complete_ner(whole) > 0
        expected = _graph(whole.index)
        leaves = int(whole.index.scalar("SELECT count(DISTINCT id) FROM leaves"))
        signature = whole.index.get_meta(META_SIGNATURE)
    assert "person:helen-okafor" in {row[0] for row in expected["entities"]}

    _derived_with_old_rules(config, Index.open(config.index_path), monkeypatch)
    # leaf rows each `_derive` call was given before NER's steps
    derived = _count_derives(monkeypatch, counts=_rederiving)
    with Memory.open(config) as memory:
        with pytest.raises(_Stopped):
            complete_ner(memory)
        assert memory.index.get_meta(META_SIGNATURE) != signature  # not done: still the old rules'
        assert memory.index.get_meta(META_REDERIVING) is not None  # the first slice is committed
    assert derived and sum(derived) < leaves
    first = sum(derived)

    derived.stop = False
    derived.clear()
    with Memory.open(config) as memory:
        assert complete_ner(memory) > 0
        assert memory.index.get_meta(META_SIGNATURE) == signature
        assert memory.index.get_meta(META_REDERIVING) is None
        assert _graph(memory.index) == expected
    assert sum(derived) == leaves - first  # the slice committed before the stop is not derived again


def test_a_committed_slice_reads_its_leaves_under_a_small_pool_and_writes_under_the_full_one(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slice's texts are found by a scan of the whole text column: its reads run before its
    transaction under `READ_MEMORY_LIMIT` (what they met does not stay in DuckDB's pool), while
    its writes (and a whole re-derivation inside a sync's own transaction) keep the full pool."""
    _vault(vault)
    config = load_config(vault)
    _derived_with_old_rules(config, Index.open(config.index_path), monkeypatch)
    pools: dict[str, list[float]] = {"reads": [], "writes": []}
    real_derive, real_insert = EntityDeriver._derive, rederive.insert

    def pool(con: duckdb.DuckDBPyConnection) -> float:
        return size_bytes(str(con.execute("SELECT current_setting('memory_limit')").fetchone()[0]))  # type: ignore[index]

    def derive(self: EntityDeriver, con: duckdb.DuckDBPyConnection, *args: Any) -> Any:
        pools["reads"].append(pool(con))
        return real_derive(self, con, *args)

    def insert(con: duckdb.DuckDBPyConnection, *args: Any) -> Any:
        pools["writes"].append(pool(con))
        return real_insert(con, *args)

    monkeypatch.setattr(graph, "REBUILD_CHUNK", 4)
    monkeypatch.setattr(EntityDeriver, "_derive", derive)
    monkeypatch.setattr(rederive, "insert", insert)
    with Memory.open(config) as memory:
        memory.sync()
        assert memory.index.get_meta(META_REDERIVING) is None
    assert len(pools["reads"]) > 2 and len(pools["writes"]) == len(pools["reads"])
    assert max(pools["reads"]) <= size_bytes(rederive.READ_MEMORY_LIMIT)
    assert min(pools["writes"]) >= size_bytes(MEMORY_LIMIT) * 0.99

    pools["reads"].clear()
    with Memory.open(config) as memory:
        memory.reindex()  # a rebuild's first batch: every step inside the batch's transaction
    assert pools["reads"] and min(pools["reads"]) >= size_bytes(MEMORY_LIMIT) * 0.99
