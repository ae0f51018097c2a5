"""A serving process's load of the resident leaves and vectors gives what the index holds: the
leaves and their notes read apart and joined by path, each row's text kept apart from its JSON,
the vectors loaded before the embedding model; and the daemon's resident rows follow the edits
its watcher applies."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vaultmind.config import Config, load_config
from vaultmind.index import resident, store
from vaultmind.index.leaf_rows import LEAF_META_SQL
from vaultmind.index.resident import ResidentLeaves
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory

from .conftest import running_daemon, until, write, write_chat

# texts whose JSON needs escapes, that end on a brace, or hold characters beyond ASCII
AWKWARD = [
    'She said "ship it" \\ then left }',
    "Line one\nline two\ttabbed — é ü 日本語 🚀",
    "{braces} [brackets] and a trailing brace }",
]


def _sql_rows(memory: Memory) -> dict[str, dict[str, object]]:
    with memory.index.lock:  # a daemon's threads share the connection
        table = memory.index.con.execute(LEAF_META_SQL).to_arrow_table()
    return {row["id"]: row for row in table.to_pylist()}


def _write_sources(vault: Path) -> None:
    chat = SourceMeta("chat", "slack:acme/general", "slack/acme/general", "general")
    messages = [Message(f"m{i}", "@bob", f"2024-03-04T09:0{i}:00Z", text) for i, text in enumerate(AWKWARD)]
    write(vault, "sources/chat/a.md", render_source_note(chat, messages))
    mail = SourceMeta("email", "mbox:alice/inbox", "mbox/alice/inbox", "Budget")
    letters = [
        Message("<x1@example.com>", "Alice <alice@example.com>", "2024-03-05T10:00:00Z", "The budget review moves to Friday.",
                subject="Budget", to=("Bob <bob@example.com>",), cc=("Carol <carol@example.com>", "Dan <dan@example.com>")),
    ]  # fmt: skip
    write(vault, "sources/email/b.md", render_source_note(mail, letters))
    write(vault, "notes/plain.md", "---\nscope: work\n---\n# Plan\n\n## Rollback\n\n" + AWKWARD[0] + "\n")


def test_a_serving_load_reads_every_row_as_the_index_holds_it(vault: Path) -> None:
    _write_sources(vault)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        # a leaf whose note is gone (the inner join of LEAF_META_SQL): not loaded
        memory.index.con.execute(
            "INSERT INTO leaves SELECT * REPLACE ('orphan-leaf' AS id, 'gone.md' AS note_path) FROM leaves LIMIT 1"
        )
        memory.serve()  # loads under the small pool, as the daemon does
        expected = _sql_rows(memory)
        assert "orphan-leaf" not in expected and len(expected) >= 5
        assert memory.leaves.rows([*expected, "orphan-leaf"]) == expected
        texts = {row["text"] for row in expected.values()}
        assert all(any(text in t for t in texts) for text in AWKWARD)
        assert any(row["mail_cc"] for row in expected.values())  # lists come back as lists
        assert {row["scope"] for row in expected.values()} >= {"work", "slack/acme/general"}
        # rows keep LEAF_META_SQL's columns in order (a hit's JSON shows them so)
        assert all(list(row) == list(expected[leaf]) for leaf, row in memory.leaves.rows(list(expected)).items())
        places = memory.leaves.columns(list(expected))
        assert [places.place(k) for k in range(len(expected))] == [
            (row["note_path"], row["seq"], row["author"]) for row in expected.values()
        ]


def test_a_load_hands_back_what_its_batches_freed_as_it_streams(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The load gives freed memory back every `RELEASE_EVERY` batches, not only once all are in
    (the C heap and Arrow's pool kept what the batches freed: the daemon's start-up peak); the
    rows load as the index holds them."""
    _write_sources(vault)
    monkeypatch.setattr(resident, "_ROWS_BATCH", 1)  # one leaf a batch
    monkeypatch.setattr(resident, "RELEASE_EVERY", 2)
    streamed = {"batches": 0}
    with_notes = resident._with_notes

    def counted(*args: Any) -> Any:
        streamed["batches"] += 1
        return with_notes(*args)

    released: list[int] = []  # batches streamed at each hand-back
    release = resident.release_freed_memory

    def recorded(*args: Any, **kwargs: Any) -> None:
        released.append(streamed["batches"])
        release(*args, **kwargs)

    monkeypatch.setattr(resident, "_with_notes", counted)
    monkeypatch.setattr(resident, "release_freed_memory", recorded)
    monkeypatch.setattr(store, "release_freed_memory", recorded)  # `drop_cached_blocks`'s
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        memory.serve()
        released.clear()
        streamed["batches"] = 0
        expected = _sql_rows(memory)
        memory.leaves.room(memory.leaves._load)
        total = streamed["batches"]
        assert total == len(expected) >= 5
        assert [n for n in released if n < total] == list(range(2, total, 2))  # while streaming
        assert memory.leaves.rows(list(expected)) == expected


def test_rows_of_leaves_a_save_added_read_back_as_loaded_ones(vault: Path) -> None:
    _write_sources(vault)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        memory.serve()
        assert memory.leaves.rows(list(_sql_rows(memory))) == _sql_rows(memory)
        write(vault, "notes/new.md", "# New\n\n" + AWKWARD[1] + "\n\n## More\n\n" + AWKWARD[2] + "\n")
        memory.sync_paths(["notes/new.md"])  # appended to the loaded rows, not reloaded
        expected = _sql_rows(memory)
        added = [leaf for leaf, row in expected.items() if row["note_path"] == "notes/new.md"]
        assert added
        rows = memory.leaves.rows(list(expected))
        assert rows == expected
        assert all(list(rows[leaf]) == list(expected[leaf]) for leaf in added)


class _RecordingConnection:
    """Passes every call to a DuckDB connection, keeping each statement's SQL."""

    def __init__(self, con: object) -> None:
        self.con = con
        self.statements: list[str] = []

    def execute(self, sql: str, *args: object) -> object:
        self.statements.append(sql)
        return self.con.execute(sql, *args)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self.con, name)


def test_saves_hand_their_rows_to_the_resident_leaves_which_equal_a_cold_load(vault: Path) -> None:
    """A save's new leaves come with their rows in the change (no lookup of them in the index);
    after saves of every kind of note, the resident leaves equal those a cold start loads."""
    for i in range(12):  # enough rows that the edit's tombstones do not call for a reload
        write(vault, f"notes/seed{i}.md", f"# Seed {i}\n\nA first leaf.\n\n## Next\n\nA second leaf {i}.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        memory.serve()
        memory.leaves.search(["leaf"], 5)  # loaded: the saves below are deltas
        read_in_update: list[str] = []

        def update(change: resident.ChangeSet) -> None:
            recording = _RecordingConnection(memory.index.con)
            memory.index.con = recording  # type: ignore[assignment]
            try:
                memory.leaves.apply(change)
            finally:
                memory.index.con = recording.con  # type: ignore[assignment]
            read_in_update.extend(recording.statements)

        listeners = memory.syncer.listeners
        listeners[listeners.index(memory.leaves.apply)] = update
        _write_sources(vault)  # chat and email sources (authors, times, recipients), a scoped note
        write(vault, "notes/odd.md", "---\nscope: [home, \"garden é\"]\ntitle: 7\n---\n# Odd\n\n" + AWKWARD[1] + "\n")
        write(vault, "notes/count.md", "---\nscope: 3\n---\nNo heading, a bare leaf.\n")
        paths = ["sources/chat/a.md", "sources/email/b.md", "notes/plain.md", "notes/odd.md", "notes/count.md"]
        for path in paths:
            memory.sync_paths([path])
        write(vault, "notes/plain.md", "---\nscope: work\n---\n# Plan\n\nRewritten.\n")  # rows removed and added
        memory.sync_paths(["notes/plain.md"])
        assert memory.leaves._loaded, "deltas, not a reload"
        assert read_in_update == []  # the update read nothing from the index
        expected = _sql_rows(memory)
        assert {row["note_path"] for row in expected.values()} >= set(paths)
        assert {row["scope"] for row in expected.values()} >= {"work", '["home","garden é"]', "3"}
        cold = ResidentLeaves(memory.index)
        try:
            ids = list(expected)
            assert cold.rows(ids) == memory.leaves.rows(ids) == expected
            assert all(list(row) == list(expected[leaf]) for leaf, row in memory.leaves.rows(ids).items())
            served, loaded = memory.leaves.columns(ids), cold.columns(ids)
            assert [served.place(k) for k in range(len(ids))] == [loaded.place(k) for k in range(len(ids))]
            assert memory.leaves.authors() == cold.authors()
            assert memory.leaves.first_time() == cold.first_time()
            for leaf in ids:
                assert memory.leaves.neighbours(leaf) == cold.neighbours(leaf)
            for query in (["budget"], ["ship", "it"], ["rewritten"], ["leaf"]):
                assert memory.leaves.search(query, 10) == cold.search(query, 10)
        finally:
            cold.close()


@pytest.fixture
def serving(vault: Path) -> Iterator[tuple[Config, Memory]]:
    _write_sources(vault)
    config = load_config(vault, embed_provider="static", debounce_ms=50, step_ms=20)
    with running_daemon(config) as (memory, _):
        yield config, memory


def test_the_daemon_s_resident_rows_and_vectors_follow_a_watched_edit(serving: tuple[Config, Memory]) -> None:
    config, memory = serving
    assert memory.vectors is not None and memory.embedder is not None
    assert memory.leaves.rows(list(_sql_rows(memory))) == _sql_rows(memory)  # as the start-up loaded them
    write(config.vault, "notes/plain.md", "# Plan\n\n## Rollback\n\nThe quokkarollback runs at noon }\n")
    until(lambda: memory.leaves.search(["quokkarollback"], 5))
    assert memory.leaves.search(["quokkarollback"], 5), "the watcher applied the edit"
    with memory.sync_lock:  # no other change while both are read
        expected = _sql_rows(memory)
        assert memory.leaves.rows(list(expected)) == expected
        query = memory.embedder.embed(["quokkarollback at noon"])[0]
        served = memory.vectors.search(query, 5)
        fresh = ResidentLeaves(memory.index)
        try:
            assert fresh.rows(list(expected)) == expected
            assert fresh.search(["quokkarollback"], 5) == memory.leaves.search(["quokkarollback"], 5)
        finally:
            fresh.close()
        memory.vectors.close()  # loaded again from the index by the next search
        reloaded = memory.vectors.search(query, 5)
        # the same leaves; a vector the save embedded is float32 until a reload reads its float16 copy
        assert [leaf for leaf, _ in reloaded] == [leaf for leaf, _ in served]
        assert [score for _, score in reloaded] == pytest.approx([score for _, score in served], abs=1e-3)
    assert served[0][0] in {leaf for leaf, row in expected.items() if "quokkarollback" in str(row["text"])}


def test_leaves_holding_common_and_rare_words_are_the_same_either_way(vault: Path) -> None:
    """`holding_all` merges a group's postings by a sort when few rows hold them and by a mask of
    every row when many do (a week's relative day words): both give the leaves holding a word of
    each group, each once; `texts` gives their texts without their metadata."""
    from datetime import datetime

    lines = [f"Tomorrow we ship batch {i}." for i in range(30)] + ["Harbour party tomorrow at ten.", "Harbour walk."]
    lines += [f"Garden note {i}." for i in range(70)]  # more than 32 rows to each of the harbour's two
    for day in range(2):  # a chat day holds up to 60 messages (their minutes)
        write_chat(vault, f"2024-01-0{day + 2}", [("Alice Chen", line) for line in lines[day * 51 : (day + 1) * 51]])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        leaves = memory.leaves
        near = datetime(2024, 1, 1)
        common = leaves.holding_all([["tomorrow", "ship"]], 100, near=near)  # most rows: the mask
        assert len(common) == len(set(common)) == 31
        rare = leaves.holding_all([["harbour"]], 100, near=near)  # few rows: the sort
        both = leaves.holding_all([["tomorrow", "ship"], ["harbour"]], 100, near=near)
        assert len(rare) == 2 and both == [i for i in rare if i in common] and len(both) == 1
        assert leaves.texts(both) == {both[0]: "Harbour party tomorrow at ten."}
