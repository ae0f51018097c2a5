"""Which notes the entity registry reads from the index: entity notes, and the notes of yours
whose categories, type or tags may name a kind of entity. A note whose tags name none (most
tagged notes) is not read, nor parsed again at every batch of a first index; the registry is
the same as one built from every note with such a property."""

from __future__ import annotations

import json
import random
from pathlib import Path

import duckdb
import pytest

from vaultmind.config import load_config
from vaultmind.entities.registry_store import (
    _REGISTRY_NOTES,
    TYPING_KEYS,
    load_registry,
    registry_fingerprint,
    typed_note_from,
)
from vaultmind.memory import Memory


def _put(vault: Path, rel: str, text: str) -> None:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_notes_whose_tags_name_no_kind_are_not_read(vault: Path) -> None:
    for k in range(6):
        _put(vault, f"Journal/Day {k}.md", f"---\ntags: [journal, status/open]\ntype: daily\n---\nDay {k}.\n")
    _put(vault, "References/Paul Chambers.md", '---\ncategories:\n  - "[[People]]"\n---\nJazz bassist.\n')
    _put(vault, "References/Blade Runner.md", "---\ntags: [Film/Movies]\n---\nA film.\n")
    _put(vault, "Plain.md", "No front matter.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.reindex()
        con = memory.index.con
        read = sorted(
            str(r[0]) for r in con.execute(f"SELECT path FROM notes WHERE {_REGISTRY_NOTES}").fetchall()
        )
        assert read == ["References/Blade Runner.md", "References/Paul Chambers.md"]
        registry = load_registry(con)
        # the registry of every note with a typing property, as it was read before
        typed = [
            note
            for path, title, fm in con.execute(
                "SELECT path, title, frontmatter FROM notes WHERE kind = 'user'"
            ).fetchall()
            if (note := typed_note_from(path, title or "", json.loads(fm) if fm else {})) is not None
        ]
        assert (
            sorted(registry.entries)
            == sorted(note.id for note in typed)
            == ["person:paul-chambers", "work:blade-runner"]
        )
        before = registry_fingerprint(con)
        _put(vault, "Journal/Day 0.md", "---\ntags: [journal]\n---\nDay 0, edited.\n")
        memory.sync()
        assert registry_fingerprint(con) == before  # no note the registry reads changed
        _put(vault, "Journal/Day 1.md", "---\ntags: [journal, people]\n---\nDay 1.\n")
        memory.sync()
        assert registry_fingerprint(con) != before


@pytest.mark.parametrize(
    "frontmatter",
    [
        {"categories": ["[[People]]"]},
        {"categories": "[[Board  Games|games]]"},
        {"type": "person"},
        {"type": "type/Person"},
        {"tags": ["#places"]},
        {"tags": ["board_games"]},
        {"category": [{"kind": "a", "value": "b/Companies"}]},
        {"tags": ["BOO\u212aS"]},  # the Kelvin sign, which Python lower-cases to "k"
        {"tags": ["Conferences", "journal"], "type": "daily"},
        {"categories": [" [[ORGANISATIONS]] "]},
    ],
)
@pytest.mark.parametrize("ascii_json", [False, True])
def test_every_note_that_names_a_kind_is_read(frontmatter: dict[str, object], ascii_json: bool) -> None:
    """What `typed_note_from` makes an entity of is always among the notes read, whether the
    stored front matter writes its letters as they are or as `\\u` escapes."""
    assert typed_note_from("x/Kyoto.md", "Kyoto", frontmatter) is not None
    assert any(key in frontmatter for key in TYPING_KEYS)
    assert _is_read(frontmatter, ascii_json=ascii_json)


@pytest.mark.parametrize(
    "frontmatter",
    [
        {"tags": ["productivity", "notebook", "workplace"]},
        {"tags": "#peoplewatching"},
        {"type": "prevention"},
        {"categories": ["[[Georgia trip]]", "showcase"]},
        {"tags": ["status/forgotten", "gameplay", "bookkeeping"]},
    ],
)
def test_a_note_whose_tags_only_hold_a_kinds_name_inside_a_word_is_not_read(frontmatter: dict[str, object]) -> None:
    """A kind's name inside a longer word (product in productivity, org in Georgia, book in
    notebook) names no kind: such notes, common among tagged ones, are not read either."""
    assert typed_note_from("x/Kyoto.md", "Kyoto", frontmatter) is None
    assert not _is_read(frontmatter, ascii_json=False)


def test_random_values_that_name_a_kind_are_all_read() -> None:
    """Values pieced from kinds' names (any case, the Kelvin sign) and what may stand beside
    them: every one `typed_note_from` types is read, stored either way."""
    rng = random.Random(5)
    pieces = ["People", "board", "GAMES", "boo\u212as", "org", "x", "é", "#", "/", "-", "_", " ", "\u00a0", "[[", "]]", "|", "2"]
    values = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    typing = [{key: value} for key, value in zip(rng.choices(TYPING_KEYS, k=len(values)), values, strict=True)]
    typed = [fm for fm in typing if typed_note_from("x/Kyoto.md", "Kyoto", fm) is not None]
    assert len(typed) > 50
    for ascii_json in (False, True):
        assert _read_of(typed, ascii_json=ascii_json) == [True] * len(typed)


def _is_read(frontmatter: dict[str, object], *, ascii_json: bool) -> bool:
    return _read_of([frontmatter], ascii_json=ascii_json) == [True]


def _read_of(frontmatters: list[dict[str, object]], *, ascii_json: bool) -> list[bool]:
    """Whether the registry reads a note of yours with each of `frontmatters`, stored as JSON
    with its letters as they are, or as `\\u` escapes (`ascii_json`)."""
    con = duckdb.connect()
    con.execute("CREATE TABLE notes (path TEXT, title TEXT, frontmatter TEXT, kind TEXT, sha256 TEXT)")
    con.executemany(
        "INSERT INTO notes VALUES (?, 'Kyoto', ?, 'user', '0')",
        [(f"x/{n}.md", json.dumps(fm, sort_keys=True, ensure_ascii=ascii_json)) for n, fm in enumerate(frontmatters)],
    )
    read = {str(row[0]) for row in con.execute(f"SELECT path FROM notes WHERE {_REGISTRY_NOTES}").fetchall()}
    return [f"x/{n}.md" in read for n in range(len(frontmatters))]


class _SeesThreads:
    """The index's real connection, noting DuckDB's thread count as each fingerprint scan
    starts."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con
        self.seen: list[str] = []

    def execute(self, sql: str, *args: object) -> duckdb.DuckDBPyConnection:
        if "bit_xor" in sql:
            self.seen.append(str(self.con.execute("SELECT current_setting('threads')").fetchone()[0]))  # type: ignore[index]
        return self.con.execute(sql, *args)

    def cursor(self) -> duckdb.DuckDBPyConnection:
        return self.con.cursor()


def test_the_fingerprint_scans_on_one_thread_and_gives_the_others_back(vault: Path) -> None:
    """A daemon reads the fingerprint twice a save, a scan of every note's front matter: at 50k
    notes on two threads it lifted the process by 20–27 MiB and kept it, at the top of the
    save's peak; on one, 12 MiB, given back. The setting is as it was after, in a transaction
    too."""
    _put(vault, "References/Paul Chambers.md", '---\ncategories:\n  - "[[People]]"\n---\nJazz bassist.\n')
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.reindex()
        con = memory.index.con
        con.execute("SET threads = 2")
        seeing = _SeesThreads(con)
        before = registry_fingerprint(con)
        with memory.index.transaction():
            assert registry_fingerprint(seeing) == before  # type: ignore[arg-type]
        assert registry_fingerprint(seeing) == before  # type: ignore[arg-type]
        assert seeing.seen == ["1", "1"]
        assert con.execute("SELECT current_setting('threads')").fetchone() == (2,)


def test_a_fingerprint_scan_failing_inside_a_transaction_puts_the_threads_back() -> None:
    """The scan runs on one DuckDB thread; when it fails inside a transaction (a note's front
    matter that is no JSON), DuckDB refuses that transaction's every later statement, so the
    threads are put back through a connection of their own, never left at one for good."""
    con = duckdb.connect(":memory:")
    con.execute("CREATE TABLE notes (path VARCHAR, kind VARCHAR, sha256 VARCHAR, title VARCHAR, frontmatter VARCHAR)")
    con.execute("INSERT INTO notes VALUES ('People/Ann.md', 'user', 'x', 'Ann', '{\"categories\": [\"People\"')")
    con.execute("SET threads = 2")
    con.begin()
    with pytest.raises(duckdb.Error):
        registry_fingerprint(con)
    with con.cursor() as other:
        assert other.execute("SELECT current_setting('threads')").fetchone() == (2,)
    con.rollback()
    assert con.execute("SELECT current_setting('threads')").fetchone() == (2,)
