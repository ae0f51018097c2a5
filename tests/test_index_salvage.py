"""An index file moved to quarantine gives back what of its caches still reads (vectors, NER
results, LLM answers), checked row by row, before the rebuild computes them again; a damaged
block loses only the rows it holds (real DuckDB files, real damage, a fake Ollama server)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from tests.conftest import write
from tests.damagekit import blocks_of, garble, garble_blocks_of
from tests.fakes import FakeOllama
from tests.test_queue import gray_row, gray_vault, json_responder, llm_config
from vaultmind.config import load_config
from vaultmind.errors import IndexCorrupt
from vaultmind.index.arrow import insert_arrow
from vaultmind.index.damage import HEADER_BYTES, last_block_in_use
from vaultmind.index.migrate import migrate
from vaultmind.index.pool import MEMORY_LIMIT, size_bytes
from vaultmind.index.salvage import CHUNK_ROWS, _Reader, salvage
from vaultmind.index.store import Index
from vaultmind.memory import Memory
from vaultmind.queue.workers import WorkerPool

NOTES = 30
MODEL = "test:vectors"


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(embed_models={"nomic-embed-text": 16}) as server:
        yield server


def _write_notes(vault: Path) -> None:
    for i in range(NOTES):
        write(vault, f"n{i}.md", f"# Note {i}\n\nword{i} text about Ada Lovelace and item {i}.\n\nA second part, {i}.\n")


def _texts_sent(fake: FakeOllama) -> int:
    """Texts of the notes the fake Ollama was asked to embed so far (not the probe of its
    dimension, which each process sends once)."""
    bodies = [r.body for r in fake.requests_to("/api/embed") if isinstance(r.body, dict)]
    return sum("Ada Lovelace" in text for body in bodies for text in body["input"])


def _kept(notice: str | None, noun: str = "embeddings") -> int:
    """The number of rows of `noun` a quarantine notice says were kept (0: none said)."""
    found = re.search(rf"kept (?:[^;]*?)([\d,]+) {noun}", notice or "")
    return int(found.group(1).replace(",", "")) if found else 0


def _hash(i: int) -> str:
    return hashlib.sha256(f"text {i}".encode()).hexdigest()


def _sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _vectors(count: int, dim: int, seed: int = 0) -> list[bytes]:
    matrix = np.random.default_rng(seed).standard_normal((count, dim)).astype("<f2")
    return [row.tobytes() for row in matrix]


def _embedding_rows(hashes: list[str], models: list[str], dims: list[int], vecs: list[bytes]) -> pa.Table:
    return pa.table(
        {"content_hash": hashes, "model": models, "dim": pa.array(dims, pa.int32()), "vec": pa.array(vecs, pa.binary())}
    )


def test_vectors_embedded_once_are_not_embedded_again_after_a_quarantine(vault: Path, fake: FakeOllama) -> None:
    """A damaged block in the notes' rows moves the file aside; the fresh index holds the vectors
    read back from it, so the rebuild asks Ollama for none (before, for every text again), and
    the command's error and the status say what was kept."""
    _write_notes(vault)
    config = load_config(vault, embed_provider="ollama", ollama_host=fake.host)
    with Memory.open(config) as memory:
        embedded = memory.reindex().embedded
        recognised = memory.index.scalar("SELECT count(*) FROM ner_cache")
    assert embedded >= NOTES
    garble_blocks_of(config.index_path, "notes")
    sent = _texts_sent(fake)

    with Memory.open(config) as memory:
        with pytest.raises(IndexCorrupt) as caught:
            memory.sync()
        assert memory.sync().embedded == 0
        assert _texts_sent(fake) == sent, "no text sent to Ollama again"
        assert f"kept {embedded:,} embeddings" in str(caught.value)
        status = memory.status()
        assert status["index"]["health"] == "rebuilt" and status["notes"]["total"] == NOTES
        assert _kept(status["index"]["notice"]) == embedded
        assert _kept(status["index"]["notice"], "NER results") == recognised
        assert memory.status()["embeddings"]["missing"] == 0
        assert memory.search("word7")["hits"][0]["note_path"] == "n7.md"


def test_an_llm_answer_is_not_asked_for_again_after_a_quarantine(vault: Path) -> None:
    """The admission's LLM answered for a gray leaf; after a quarantine the rebuild decides it
    from the answer read back, and no job asks Ollama again (before: a second chat request)."""
    gray_vault(vault)
    with FakeOllama(responder=json_responder(0.8)) as fake:
        config = llm_config(vault, fake.host)
        with Memory.open(config) as memory:
            memory.sync()
            pool = WorkerPool(memory.config, memory)
            assert pool.drain(timeout_s=20) == 1
            pool.close()
            decided = gray_row(memory)
        assert decided[:3] == ("admitted", "llm", 0.8)
        garble_blocks_of(config.index_path, "notes")

        with Memory.open(config) as memory:
            with suppress(IndexCorrupt):  # the command that meets the damage (the open may have met it)
                memory.sync()
            memory.sync()
            pool = WorkerPool(memory.config, memory)
            pool.reconcile()
            pool.drain(timeout_s=5)
            pool.close()
            assert len(fake.requests_to("/api/chat")) == 1, "never asked twice"
            assert gray_row(memory) == decided
            assert "1 LLM answer from it" in (memory.index.quarantined or "")


def test_an_index_cut_short_gives_back_the_vectors_its_remaining_blocks_hold(vault: Path) -> None:
    """A file cut within its last block in use: what the blocks before the cut hold is kept,
    and the rebuild embeds exactly the texts whose vectors were lost."""
    _write_notes(vault)
    config = load_config(vault)
    with Memory.open(config) as memory:
        embedded = memory.reindex().embedded
    con = duckdb.connect(str(config.index_path), read_only=True)
    block_size = int(con.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0])  # type: ignore[index]
    last = last_block_in_use(con)
    con.close()
    with config.index_path.open("r+b") as file:
        file.truncate(HEADER_BYTES + last * block_size)

    with Memory.open(config) as memory:
        assert memory.index.quarantined is not None and "cut short" in memory.index.quarantined
        kept = _kept(memory.index.quarantined)
        assert kept > 0, memory.index.quarantined
        assert memory.sync().embedded == embedded - kept
        assert memory.status()["embeddings"]["missing"] == 0


def test_a_garbled_block_of_vectors_loses_only_the_rows_it_holds(tmp_path: Path) -> None:
    """One garbled block among the vectors' loses the chunks of rows it is in, not the table;
    every row kept is the one written; the moved file is kept as it was, and reading it again
    gives the same rows."""
    path = tmp_path / ".vaultmind" / "index.duckdb"
    rows = 10_000
    hashes, vecs = [_hash(i) for i in range(rows)], _vectors(rows, 64)
    with Index.open(path) as index, index.transaction() as con:
        insert_arrow(con, "embeddings", _embedding_rows(hashes, [MODEL] * rows, [64] * rows, vecs))
    blocks = blocks_of(path, "embeddings", "vec")
    assert len(blocks) >= 4, "the vectors span several blocks"
    garble(path, [blocks[len(blocks) // 2]])
    garbled = _sha256_of(path)

    with Index.open(path) as index:
        with pytest.raises(IndexCorrupt, match=r"kept [0-9,]+ embeddings"):
            index.query("SELECT sum(octet_length(vec)) FROM embeddings")
        back = dict(index.query("SELECT content_hash, vec FROM embeddings"))
        assert _kept(index.quarantined) == len(back)
    assert rows - 2 * CHUNK_ROWS <= len(back) < rows, "only the chunks the block is in are lost"
    written = dict(zip(hashes, vecs, strict=True))
    assert all(written[h] == v for h, v in back.items())

    moved = path.parent / "quarantine" / "index-1.duckdb"
    assert _sha256_of(moved) == garbled, "the moved file is kept as it was"
    again = duckdb.connect()
    migrate(again)
    assert salvage(moved, again).rows["embeddings"] == len(back)
    assert _sha256_of(moved) == garbled


def test_only_rows_that_pass_every_check_are_taken(tmp_path: Path) -> None:
    """Vectors of another dimension than their model's, of a length that is not their
    dimension's, not finite or all zero, keys not well formed, NER spans or LLM keys that
    are not what this version writes: none is taken; the sound rows are, float32 vectors
    written before float16 too, and the window the vectors were made with."""
    path = tmp_path / ".vaultmind" / "index.duckdb"
    sound = _vectors(40, 8)
    nan, zero = np.full(8, np.nan, "<f2").tobytes(), np.zeros(8, "<f2").tobytes()
    old = np.ones(8, "<f4").tobytes()
    bad = [
        (_hash(100), MODEL, 4, _vectors(1, 4)[0]),  # a length that fits, another dimension than its model's
        (_hash(101), MODEL, 8, b"\x01" * 10),  # a length that is no dimension's
        (_hash(102), MODEL, 8, nan),
        (_hash(103), MODEL, 8, zero),
        ("not-a-hash", MODEL, 8, sound[0]),
        (_hash(104).upper(), MODEL, 8, sound[0]),
        (_hash(105), "", 8, sound[0]),
        (_hash(0), MODEL, 8, sound[1]),  # a second row of a key: the first is kept
    ]
    embeddings = _embedding_rows(
        [_hash(i) for i in range(40)] + [b[0] for b in bad] + [_hash(200)],
        [MODEL] * 40 + [b[1] for b in bad] + ["older:model"],
        [8] * 40 + [b[2] for b in bad] + [8],
        sound + [b[3] for b in bad] + [old],
    )
    with Index.open(path) as index, index.transaction() as con:
        insert_arrow(con, "embeddings", embeddings)
        con.executemany(
            "INSERT INTO ner_cache VALUES (?, 'spacy:x', ?)",
            [(_hash(1), '[[0,3,"PERSON"]]'), (_hash(2), "[]"), (_hash(3), "[[0,3,"), (_hash(4), '{"a":1}')],
        )
        con.executemany(
            "INSERT INTO llm_cache VALUES ('importance', ?, 'llama3.2', ?, ?, 5)",
            [(_hash(1), "0123456789ab", '{"importance":0.8}'), (_hash(2), "xyz", "{}"), ("h", "0123456789ab", "{}")],
        )
        index.set_meta(con, f"embed_window:{MODEL}", "512")
        con.execute("INSERT INTO tags SELECT 'n' || range || '.md', 'tag' FROM range(5000)")
    garble_blocks_of(path, "tags")

    with Index.open(path) as index:
        with pytest.raises(IndexCorrupt):
            index.query("SELECT count(DISTINCT tag) FROM tags")
        kept = dict(index.query("SELECT content_hash, vec FROM embeddings WHERE model = ?", [MODEL]))
        assert kept == {_hash(i): sound[i] for i in range(40)}
        assert index.query("SELECT content_hash, vec FROM embeddings WHERE model = 'older:model'") == [(_hash(200), old)]
        assert sorted(h for (h,) in index.query("SELECT content_hash FROM ner_cache")) == sorted([_hash(1), _hash(2)])
        assert index.query("SELECT content_hash, answer FROM llm_cache") == [(_hash(1), '{"importance":0.8}')]
        assert index.get_meta(f"embed_window:{MODEL}") == "512"
        assert index.scalar("SELECT count(*) FROM tags") == 0
        pool = size_bytes(str(index.scalar("SELECT current_setting('memory_limit')")))
        assert pool >= 0.99 * size_bytes(MEMORY_LIMIT), "the pool lowered for the copy is put back"
        assert "kept 41 embeddings, 2 NER results and 1 LLM answer from it" in (index.quarantined or "")


def test_a_file_that_cannot_be_opened_gives_nothing(tmp_path: Path) -> None:
    path = tmp_path / ".vaultmind" / "index.duckdb"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x13" * 40_000)
    with Index.open(path) as index:
        assert index.quarantined is not None and "could not be opened" in index.quarantined
        assert "kept" not in index.quarantined
        assert index.scalar("SELECT count(*) FROM embeddings") == 0


def _with_a_broken_wal(tmp_path: Path) -> Path:
    """An index file of 20 vectors checkpointed and 20 more in a WAL garbled as a crash may
    leave it: the file opens only with its WAL replayed, which cannot be."""
    made = tmp_path / "made.duckdb"
    with Index.open(made) as index, index.transaction() as con:
        insert_arrow(con, "embeddings", _embedding_rows([_hash(i) for i in range(20)], [MODEL] * 20, [8] * 20, _vectors(20, 8)))
    con = duckdb.connect(str(made))
    con.execute("SET checkpoint_threshold = '1TB'")
    con.execute("INSERT INTO embeddings SELECT content_hash || '', 'other:model', dim, vec FROM embeddings")
    path = tmp_path / ".vaultmind" / "index.duckdb"
    path.parent.mkdir()
    shutil.copy(made, path)
    shutil.copy(f"{made}.wal", f"{path}.wal")  # as a crash left them: the rows since the checkpoint in the WAL
    con.close()
    with open(f"{path}.wal", "r+b") as wal:
        wal.seek(64)
        wal.write(b"\xa5" * 64)
    return path


def test_a_wal_that_cannot_be_replayed_gives_back_the_rows_of_the_last_checkpoint(tmp_path: Path) -> None:
    """The file opens only with its WAL replayed; a WAL that cannot be is set aside for the
    read (the file and its WAL are kept as they were) and the checkpointed rows are taken."""
    path = _with_a_broken_wal(tmp_path)
    file, log = _sha256_of(path), _sha256_of(Path(f"{path}.wal"))
    (path.parent / "quarantine").mkdir()
    (path.parent / "quarantine" / ".salvage-index-0.duckdb").write_bytes(b"left by a process that ended mid-salvage")

    with Index.open(path) as index:
        assert index.quarantined is not None and "could not be opened" in index.quarantined
        assert _kept(index.quarantined) == 20
        assert index.query("SELECT DISTINCT model FROM embeddings") == [(MODEL,)]
    moved = path.parent / "quarantine" / "index-1.duckdb"
    assert (_sha256_of(moved), _sha256_of(Path(f"{moved}.wal"))) == (file, log)
    assert sorted(p.name for p in moved.parent.iterdir()) == ["index-1.duckdb", "index-1.duckdb.wal", "notice.txt"]


def test_without_hard_links_a_wal_that_cannot_be_replayed_still_gives_back_the_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a filesystem without hard links (FAT, some network shares: `os.link` fails) the file
    is read without its WAL through a copy (before: nothing was kept), which is then removed."""
    path = _with_a_broken_wal(tmp_path)

    def no_hard_links(*_: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_hard_links)
    with Index.open(path) as index:
        assert _kept(index.quarantined) == 20
    assert sorted(p.name for p in (path.parent / "quarantine").iterdir()) == [
        "index-1.duckdb", "index-1.duckdb.wal", "notice.txt"
    ]


def test_a_salvage_past_its_time_keeps_what_it_copied_and_stops(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    with Index.open(path) as index, index.transaction() as con:
        insert_arrow(con, "embeddings", _embedding_rows([_hash(i) for i in range(20)], [MODEL] * 20, [8] * 20, _vectors(20, 8)))
    con = duckdb.connect()
    migrate(con)
    assert salvage(path, con, budget_s=0.0).said() is None
    assert con.execute("SELECT count(*) FROM embeddings").fetchone() == (0,)
    assert salvage(path, con).said() == "kept 20 embeddings from it"


@pytest.mark.parametrize("history", ["newer", "older"])
def test_a_file_of_another_version_gives_nothing(tmp_path: Path, history: str) -> None:
    """A file written by a newer vaultmind (a migration this version does not know) may give
    the same columns another meaning, and one written by an older version may hold rows that a
    later migration changed or dropped: neither is salvaged, the rebuild computes its rows."""
    path = tmp_path / ".vaultmind" / "index.duckdb"
    with Index.open(path) as index, index.transaction() as con:
        insert_arrow(con, "embeddings", _embedding_rows([_hash(i) for i in range(20)], [MODEL] * 20, [8] * 20, _vectors(20, 8)))
        if history == "newer":
            con.execute("INSERT INTO migrations SELECT max(seq) + 1, '9999_from_a_newer_version' FROM migrations")
        else:
            con.execute("DELETE FROM migrations WHERE seq = (SELECT max(seq) FROM migrations)")
    con = duckdb.connect()
    migrate(con)
    assert salvage(path, con).said() is None
    assert con.execute("SELECT count(*) FROM embeddings").fetchone() == (0,)
    if history == "newer":
        with Index.open(path) as index:
            assert index.quarantined is not None and "incompatible version" in index.quarantined
            assert "kept" not in index.quarantined
            assert index.scalar("SELECT count(*) FROM embeddings") == 0


def test_the_deadline_meeting_a_closed_reader_raises_nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The timer that interrupts a slow read at the deadline may meet the reader's connection
    closed (an error invalidated it and no new one could be made): nothing is raised in the
    timer's thread (before: a traceback on stderr), and the thread is gone once the salvage is."""
    path = tmp_path / "old.duckdb"
    with Index.open(path):
        pass
    raised: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_value))
    with _Reader.open(path) as reader:
        reader.con.close()
        with reader.interrupted_at(time.monotonic() + 0.05):
            time.sleep(0.3)
    assert raised == []
    assert not [t for t in threading.enumerate() if isinstance(t, threading.Timer)]
