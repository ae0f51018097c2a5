"""Section leaf ids hash their note's key and their text, not their position: an edit elsewhere
in a note keeps its other leaves' ids (and the summary rows over them); an index holding the
ids of the position recipe is renamed in place by its migration, to the rows of a fresh index."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from vaultmind.config import load_config
from vaultmind.index.store import Index
from vaultmind.markdown import note as note_module
from vaultmind.markdown.chunking import section_leaves
from vaultmind.memory import Memory
from vaultmind.model import Leaf
from vaultmind.tree.engine import flush, reseal_stale, seal_ready
from vaultmind.tree.fallback import FallbackSummarizer

from .conftest import migrations_through, running_daemon, snapshot_files, until, write
from .treekit import SUMMARIES_SQL, SlowSummarizer, dump_all, summary_rows, tree_config

NOTE = "projects/Launch plan.md"
SECTIONS = ("Venue", "Catering", "Load tests", "Press kit", "Landing page", "Paid ads")
PREAMBLE = "A new first paragraph about the launch party in the garden.\n\n"
RENAMING = "0032_section_leaf_ids_by_text"
FALLBACK = FallbackSummarizer()
LATER = datetime(2030, 1, 1, tzinfo=UTC)


def _section(name: str) -> str:
    return (
        f"## {name}\n\n[[Helen Okafor]] checked the {name.lower()} work with Priya Raman on Friday; "
        "the numbers hold and the Berlin office signs the contract next week. #launch\n"
    )


def _body(preamble: str = "", sections: tuple[str, ...] = SECTIONS) -> str:
    return preamble + "".join(_section(name) for name in sections)


def _leaves(memory: Memory, path: str = NOTE) -> list[tuple[str, str]]:
    """(id, text) of the note's leaves, in order."""
    return [(lid, text) for lid, text in memory.index.query(
        "SELECT id, text FROM leaves WHERE note_path = ? ORDER BY seq", [path]
    )]  # fmt: skip


def _config(vault: Path) -> Any:
    return tree_config(vault, **{"trees.l0_tokens": 120})


def test_a_paragraph_inserted_at_the_top_keeps_every_later_section_leaf_id(vault: Path) -> None:
    write(vault, NOTE, _body())
    with Memory.open(_config(vault)) as memory:
        memory.sync()
        before = _leaves(memory)
        assert len(before) == len(SECTIONS)
        write(vault, NOTE, _body(PREAMBLE))
        memory.sync()
        after = _leaves(memory)
        assert after[0][1] == PREAMBLE.strip()  # the new leaf; the cuts below it are the same
        assert after[1:] == before
        cited = before[-1][0]  # an id a client took from an answer before the edit
        fetched = memory.query("fetch_leaves", {"ids": [cited]})
        assert not fetched["missing"] and fetched["hits"][0]["content"] == before[-1][1]
        incremental = dump_all(memory)
        memory.reindex()
        assert dump_all(memory) == incremental


def test_identical_sections_get_distinct_ids_that_an_edit_above_them_keeps(vault: Path) -> None:
    sections = ("Venue", "Checklist", "Catering", "Checklist")
    write(vault, NOTE, _body(sections=sections))
    with Memory.open(_config(vault)) as memory:
        memory.sync()
        before = _leaves(memory)
        (first, second) = [lid for lid, text in before if text.startswith("## Checklist")]
        assert first != second
        write(vault, NOTE, _body(PREAMBLE, sections))
        memory.sync()
        after = _leaves(memory)
        assert [lid for lid, text in after if text.startswith("## Checklist")] == [first, second]
        assert after[1:] == before
        assert len({lid for lid, _ in after}) == len(after)


def test_summaries_over_a_note_keep_their_rows_and_seal_nothing_after_an_edit_at_its_top(vault: Path) -> None:
    write(vault, NOTE, _body())
    with Memory.open(_config(vault)) as memory:
        memory.sync()
        assert seal_ready(memory, summarizer=FALLBACK).sealed
        rows = summary_rows(memory)
        files = snapshot_files(vault)
        write(vault, NOTE, _body(PREAMBLE))
        memory.sync()
        assert summary_rows(memory) == rows  # same children and leaf ids: nothing is stale
        assert seal_ready(memory, summarizer=FALLBACK).sealed == []  # the new leaf alone waits
        assert reseal_stale(memory, max_nodes=100, summarizer=FALLBACK).sealed == []
        changed = {path for path, sha in snapshot_files(vault).items() if files.get(path) != sha}
        assert changed == {NOTE}


def test_a_seal_in_flight_survives_a_summarized_section_above_its_leaves_being_deleted(vault: Path) -> None:
    """The leaves a seal snapshotted keep their ids when an edit above them shifts their
    positions, so the summary (an LLM call of minutes) is written, not thrown away."""
    done, waiting = SECTIONS[:3], SECTIONS[3:]
    with Memory.open(tree_config(vault, **{"trees.l0_tokens": 10_000})) as memory:
        write(vault, NOTE, _body(sections=done))
        memory.sync()
        assert [s["children"] for s in flush(memory, now=LATER, summarizer=FALLBACK).sealed] == [3]
        write(vault, NOTE, _body(sections=SECTIONS))
        memory.sync()
        snapshot = [lid for lid, _ in _leaves(memory)[3:]]
        slow = SlowSummarizer()
        reports: list[Any] = []
        thread = threading.Thread(target=lambda: reports.append(flush(memory, now=LATER, summarizer=slow)), daemon=True)
        thread.start()
        assert slow.entered.wait(30)
        write(vault, NOTE, _body(sections=(*done[1:], *waiting)))  # the first section deleted
        memory.sync()
        slow.release.set()
        thread.join(30)
        (report,) = reports
        assert not report.aborted and [s["children"] for s in report.sealed] == [3]
        assert [r["children"] for r in summary_rows(memory) if r["level"] == 1 and not r["stale"]] == [snapshot]


@pytest.mark.slow
def test_the_watcher_keeps_the_ids_of_a_note_edited_at_its_top(vault: Path) -> None:
    write(vault, NOTE, _body())
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    with running_daemon(config) as (memory, _):
        assert until(lambda: len(_leaves(memory)) == len(SECTIONS))
        before = _leaves(memory)
        write(vault, NOTE, _body(PREAMBLE))
        assert until(lambda: len(_leaves(memory)) == len(SECTIONS) + 1)
        assert _leaves(memory)[1:] == before


# --- the upgrade of an index built with the position recipe ---------------------------------


def _position_id(note_key: str, seq: int, text: str) -> str:
    """The recipe before: the leaf's position in its note, not its occurrence among equals."""
    return hashlib.sha256(f"section\0{note_key}\0{seq}\0{text}".encode()).hexdigest()[:32]


def _position_leaves(body: str, *, note_key: str, **kwargs: Any) -> list[Leaf]:
    return [replace(leaf, id=_position_id(note_key, leaf.seq, leaf.text)) for leaf in section_leaves(
        body, note_key=note_key, **kwargs
    )]  # fmt: skip


EXTRA_SQL = {
    "occurrences": "SELECT * FROM occurrences ORDER BY ALL",
    "admission": "SELECT * FROM admission ORDER BY ALL",
    "summaries": SUMMARIES_SQL,
}


SCHEMA_SQL = {
    "columns": "SELECT table_name, column_name, column_index, data_type, is_nullable, column_default"
    " FROM duckdb_columns() WHERE NOT internal AND database_name = current_database() ORDER BY ALL",
    "indexes": "SELECT table_name, index_name, is_unique, sql FROM duckdb_indexes()"
    " WHERE database_name = current_database() ORDER BY ALL",
    "constraints": "SELECT table_name, constraint_type, constraint_text FROM duckdb_constraints()"
    " WHERE database_name = current_database() ORDER BY ALL",
}


def _schema(memory: Memory) -> dict[str, Any]:
    """The index's tables as declared: columns, indexes, constraints."""
    return {name: memory.index.query(sql) for name, sql in SCHEMA_SQL.items()}


def _rows(memory: Memory) -> dict[str, Any]:
    out: dict[str, Any] = dump_all(memory)
    out.update({name: memory.index.query(sql) for name, sql in EXTRA_SQL.items()})
    return out


@pytest.fixture
def position_index(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[set[str]]:
    """A vault with summaries, indexed with the position recipe and without the renaming
    migration (as an index of the version before it); its leaf ids. The migrations after it
    are left out throughout (0033 rebuilds any index holding a leaf)."""
    migrations_through(monkeypatch, RENAMING)
    write(vault, NOTE, _body(sections=(*SECTIONS, "Venue")))  # two leaves of one text
    write(vault, "projects/Notes of Bob Stone.md", _body(sections=("Catering", "Press kit", "Catering")))
    write(vault, "Trip.md", "---\nkind: trip\ncity: Lisbon\n---\n")  # a properties leaf
    with monkeypatch.context() as patched:
        patched.setattr(note_module, "section_leaves", _position_leaves)
        with Memory.open(_config(vault)) as memory:
            memory.sync()
            assert len(seal_ready(memory, summarizer=FALLBACK).sealed) >= 3
            ids = {r[0] for r in memory.index.query("SELECT id FROM leaves")}
            memory.index.con.execute("DELETE FROM migrations WHERE name = ?", [RENAMING])
    yield ids


def test_an_index_of_position_ids_is_renamed_in_place_to_the_rows_of_a_fresh_index(
    vault: Path, position_index: set[str], tmp_path: Path
) -> None:
    files = snapshot_files(vault)
    with Memory.open(_config(vault)) as memory:
        applied = [r[0] for r in memory.index.query("SELECT name FROM migrations")]
        assert RENAMING in applied
        assert not memory.index.get_meta("needs_rebuild")  # renamed, not rebuilt
        upgraded, upgraded_schema = _rows(memory), _schema(memory)
        assert upgraded["occurrences"] and upgraded["admission"] and upgraded["summaries"]
        renamed = position_index - {r[0] for r in upgraded["leaves"]}
        assert len(renamed) >= 6  # the leaves after the first of each note
        assert not any(lid in renamed for r in upgraded["summaries"] for lid in (*r[4], *r[5]))
        memory.sync()
        assert _rows(memory) == upgraded
        assert seal_ready(memory, summarizer=FALLBACK).sealed == []
        assert reseal_stale(memory, max_nodes=100, summarizer=FALLBACK).sealed == []
    assert snapshot_files(vault) == files  # no summary note written again
    with Memory(_config(vault), Index.open(tmp_path / "fresh.duckdb"), None) as fresh:
        fresh.reindex()
        assert _rows(fresh) == upgraded
        assert _schema(fresh) == upgraded_schema


def test_the_renaming_is_skipped_where_the_rebuild_released_with_it_follows(
    vault: Path, position_index: set[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Upgraded past 0033 in one go, an index holding leaves is rebuilt at its next sync: the
    renaming, whose rows that rebuild throws away, is recorded without running (at 50k notes it
    needed more memory than an index is given)."""
    import vaultmind.index.migrate as migrate
    from vaultmind.index.schema import migrations

    monkeypatch.setattr(migrate, "migrations", migrations)  # every migration this version ships
    with Memory.open(_config(vault)) as memory:
        assert RENAMING in {r[0] for r in memory.index.query("SELECT name FROM migrations")}
        assert {r[0] for r in memory.index.query("SELECT id FROM leaves")} == position_index  # not renamed
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        rebuilt = _rows(memory)
    with Memory(_config(vault), Index.open(tmp_path / "fresh.duckdb"), None) as fresh:
        fresh.reindex()
        assert _rows(fresh) == rebuilt


def test_an_index_whose_ids_the_renaming_cannot_tell_is_rebuilt_to_the_rows_of_a_fresh_index(
    vault: Path, position_index: set[str], tmp_path: Path
) -> None:
    """A section leaf whose id is neither the position recipe's nor the new one (its note's key
    is not the one the index recorded) cannot be renamed: the index is rebuilt for it, and
    still no summary is written again."""
    con = duckdb.connect(str(_config(vault).index_path))  # as it is on disk, no migration run
    con.execute("UPDATE leaves SET id = 'not-a-recipe' WHERE note_path = ? AND seq = 2", [NOTE])
    con.close()
    files = snapshot_files(vault)
    with Memory.open(_config(vault)) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        rebuilt = _rows(memory)
        assert seal_ready(memory, summarizer=FALLBACK).sealed == []
        assert reseal_stale(memory, max_nodes=100, summarizer=FALLBACK).sealed == []
    assert snapshot_files(vault) == files
    with Memory(_config(vault), Index.open(tmp_path / "fresh.duckdb"), None) as fresh:
        fresh.reindex()
        assert _rows(fresh) == rebuilt


def test_an_index_of_position_ids_left_with_its_lookup_indexes_suspended_is_renamed_and_indexed(
    vault: Path, position_index: set[str]
) -> None:
    """A load that crashed with its lookup indexes dropped (their SQL kept in `meta`) is renamed
    all the same, and ends with the indexes it declares."""
    with Memory.open(_config(vault)) as memory:
        memory.index.con.execute("DELETE FROM migrations WHERE name = ?", [RENAMING])
        memory.index.suspend_indexes()
        assert "leaves_id" not in {r[0] for r in memory.index.query("SELECT index_name FROM duckdb_indexes()")}
    with Memory.open(_config(vault)) as memory:
        assert RENAMING in {r[0] for r in memory.index.query("SELECT name FROM migrations")}
        assert not memory.index.get_meta("needs_rebuild")
        assert not memory.index.get_meta("suspended_indexes")
        assert len(position_index - {r[0] for r in memory.index.query("SELECT id FROM leaves")}) >= 6
        indexes = {r[0] for r in memory.index.query("SELECT index_name FROM duckdb_indexes()")}
        assert {"leaves_id", "notes_path"} <= indexes
