"""Resident search structures follow syncs by deltas and agree with a fresh load and with SQL."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import numpy as np
import pytest

from vaultmind.config import load_config
from vaultmind.index import leaf_postings
from vaultmind.index.lexical import bm25, terms
from vaultmind.index.resident import ResidentLeaves
from vaultmind.index.resident_vectors import ResidentVectors
from vaultmind.memory import Memory

from .conftest import write

WORDS = ["otter", "river", "budget", "harbor", "lantern", "copper", "meadow", "falcon", "summit", "violet"]


def _note(rng: random.Random) -> str:
    paras = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(rng.randint(1, 3))]
    return "# Note\n\n" + "\n\n".join(paras) + "\n"


def _seed_notes(vault: Path, count: int, seed: int) -> random.Random:
    """`count` notes n0.md … of random words; the generator, to go on with."""
    rng = random.Random(seed)
    for i in range(count):
        write(vault, f"n{i}.md", _note(rng))
    return rng


def test_deltas_match_fresh_load_and_sql(vault: Path) -> None:
    rng = _seed_notes(vault, 12, seed=7)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        assert memory.vectors is not None
        memory.leaves.search(["otter"], 5)  # load before the changes, so deltas are exercised
        qvec = memory.embedder.embed(["otter by the river"])[0] if memory.embedder else None
        memory.vectors.search(qvec, 5)
        for step in range(20):
            op = rng.choice(["add", "edit", "delete"])
            existing = sorted(p.name for p in vault.glob("*.md"))
            if op == "add" or not existing:
                name = f"new{step}.md"
                write(vault, name, _note(rng))
            elif op == "edit":
                name = rng.choice(existing)
                write(vault, name, _note(rng))
            else:
                name = rng.choice(existing)
                (vault / name).unlink()
            memory.sync_paths([name])
        fresh = ResidentLeaves(memory.index)
        fresh_vectors = ResidentVectors(memory.index, memory.vectors.model_id)
        for query in ("otter river", "budget harbor lantern", "violet"):
            qterms = terms(query)
            live = memory.leaves.search(qterms, 50)
            assert live == fresh.search(qterms, 50)
            sql = bm25(memory.index.con, qterms, limit=50)
            assert [i for i, _ in live] == [i for i, _ in sql]
            assert np.allclose([s for _, s in live], [s for _, s in sql])
            live_v, fresh_v = memory.vectors.search(qvec, 20), fresh_vectors.search(qvec, 20)
            assert [i for i, _ in live_v] == [i for i, _ in fresh_v]
            assert np.allclose([s for _, s in live_v], [s for _, s in fresh_v])
        assert memory.vectors.size == memory.index.scalar("SELECT count(*) FROM leaves")


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_clustered_vector_search_finds_what_a_full_scan_finds(vault: Path, monkeypatch) -> None:
    """Above `CLUSTER_FROM` vectors the search probes clusters; its top hits agree with a full
    scan, stay deterministic, and vectors added after the clustering are found at once."""
    rng = np.random.default_rng(3)
    centres = _unit(rng.normal(size=(40, 32)))
    data = _unit(centres[rng.integers(0, 40, size=6000)] + 0.35 * rng.normal(size=(6000, 32)) / np.sqrt(32))
    ids = [f"leaf-{i:05d}" for i in range(len(data))]
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        vectors = ResidentVectors(memory.index, "test-model")
        vectors._rows.reset(ids)  # scaffolding: fill the matrix directly, as `_load` would
        vectors._matrix = data
        vectors._loaded = True
        queries = _unit(centres[rng.integers(0, 40, size=30)] + 0.3 * rng.normal(size=(30, 32)) / np.sqrt(32))
        exact = [vectors.search(q, 10) for q in queries]
        monkeypatch.setattr(ResidentVectors, "CLUSTER_FROM", 1000)
        probed = [vectors.search(q, 10) for q in queries]
        assert vectors._ivf is not None
        overlap = np.mean(
            [len({i for i, _ in a} & {i for i, _ in b}) / 10 for a, b in zip(exact, probed, strict=True)]
        )
        assert overlap >= 0.9
        assert probed == [vectors.search(q, 10) for q in queries]  # deterministic
        fresh = _unit(queries[:1] + 1e-3)
        vectors._rows.extend(["zz-new"])
        vectors._chunks.append(fresh)
        assert vectors.search(queries[0], 1)[0][0] == "zz-new"


def test_a_leaf_shared_by_two_notes_survives_when_one_goes(vault: Path) -> None:
    """A copied source note keeps its message ids: deleting the copy must not drop the
    original's leaves from the resident structures."""
    from vaultmind.markdown.render import Message, SourceMeta, render_source_note

    meta = SourceMeta("chat", "slack:acme/general", "slack/acme/general", "general")
    text = render_source_note(meta, [Message("m1", "@bob", "2024-03-04T09:05:00Z", "launch budget approved")])
    write(vault, "sources/chat/a.md", text)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        assert memory.vectors is not None and memory.embedder is not None
        qvec = memory.embedder.embed(["launch budget"])[0]
        assert len(memory.leaves.search(["launch"], 5)) == 1 and len(memory.vectors.search(qvec, 5)) == 1
        write(vault, "sources/chat/copy.md", text)
        memory.sync_paths(["sources/chat/copy.md"])
        (vault / "sources/chat/copy.md").unlink()
        memory.sync_paths(["sources/chat/copy.md"])
        assert [i for i, _ in memory.leaves.search(["launch"], 5)] == [
            i for i, _ in ResidentLeaves(memory.index).search(["launch"], 5)
        ]
        assert len(memory.leaves.search(["launch"], 5)) == 1
        assert len(memory.vectors.search(qvec, 5)) == 1


def test_in_window_keeps_the_earliest_with_ties_broken_by_id(vault: Path) -> None:
    from datetime import datetime, timedelta

    from vaultmind.markdown.render import Message, SourceMeta, render_source_note

    meta = SourceMeta("chat", "slack:acme/general", "slack/acme/general", "general")
    day = datetime(2024, 3, 4, 9, 0)
    rng = random.Random(5)
    messages = [
        Message(
            f"m{i:02d}",
            "@bob",
            (day + timedelta(minutes=rng.choice([0, 0, 0, 5, 10, 15]))).strftime("%Y-%m-%dT%H:%M:%SZ"),
            f"note {i}",
        )
        for i in range(40)
    ]
    write(vault, "sources/chat/a.md", render_source_note(meta, messages))
    write(vault, "undated.md", "# Undated\n\nno time here\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        rows = memory.index.query("SELECT id, ts FROM leaves WHERE ts IS NOT NULL")
        for start, end, limit in [
            (day, day + timedelta(hours=1), 7),
            (day + timedelta(minutes=1), day + timedelta(minutes=11), 3),
            (day, day, 5),
            (day, day + timedelta(hours=1), 100),
        ]:
            expected = [
                i for i, ts in sorted((r for r in rows if start <= r[1] < end), key=lambda r: (r[1], r[0]))
            ][:limit]
            assert memory.leaves.in_window(start, end, limit) == expected
        by_bob = [i for i, _ in sorted(rows, key=lambda r: (-r[1].timestamp(), r[0]))]
        assert memory.leaves.by_authors(["@bob"], 9) == by_bob[:9], "the latest, ties by id"
        assert memory.leaves.by_authors(["@bob", "@nobody"], 100) == by_bob
        assert memory.leaves.by_authors(["@nobody"], 5) == [] and memory.leaves.by_authors(["@bob"], 0) == []


def test_leaves_tied_at_the_cut_are_the_lowest_ids_live_and_after_a_restart(vault: Path) -> None:
    """Three hundred notes of one text, created a few at a time in reverse name order: which of the rows
    tied at the fifth place survived depended on the order of the resident rows, and a live
    daemon and a restart (or a rebuild) could answer with others. Ties go by id."""
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        for i in range(300, 0, -1):
            write(vault, f"tie/n{i:03d}.md", "# same\n\nzeta omega identical text\n")
            if i % 7 == 0:
                memory.sync()
        memory.sync()
        tied = sorted(i for (i,) in memory.index.query("SELECT id FROM leaves WHERE note_path LIKE 'tie/%'"))
        live_lex = memory.leaves.search(terms("zeta omega"), 5)
        assert memory.vectors is not None and memory.embedder is not None
        query = memory.embedder.embed(["zeta omega identical text"])[0]
        live_dense = [i for i, _ in memory.vectors.search(query, 5)]
    assert len({score for _, score in live_lex}) == 1, "the premise: all tied"
    assert [i for i, _ in live_lex] == live_dense == tied[:5]
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        assert memory.leaves.search(terms("zeta omega"), 5) == live_lex
        assert memory.vectors is not None
        assert [i for i, _ in memory.vectors.search(query, 5)] == live_dense


class _CountingConnection:
    """Passes every call to a DuckDB connection, counting statements that read `embeddings`."""

    def __init__(self, con: object) -> None:
        self._con = con
        self.vector_reads: list[object] = []

    def execute(self, sql: str, params: object = None) -> object:
        if "SELECT content_hash, vec, dim FROM embeddings" in sql:
            self.vector_reads.append(params)
        return self._con.execute(sql, params) if params is not None else self._con.execute(sql)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._con, name)


def test_a_save_reads_only_the_vectors_it_neither_had_nor_embedded(vault: Path, monkeypatch) -> None:
    """Leaf ids derive from the text: the unchanged leaves of a saved note keep their vectors
    from memory, a text the save embeds comes with its vector, and only a text whose vector
    another note brought is read from the index; answers equal a fresh load, for float32 rows
    and for int8 rows."""
    paras = [" ".join(WORDS[(i + j) % len(WORDS)] for j in range(6)) for i in range(6)]
    write(vault, "long.md", "# Long\n\n" + "\n\n".join(paras) + "\n")
    for i in range(20):  # enough rows to cluster
        write(vault, f"other{i}.md", f"# Other\n\n{WORDS[i % len(WORDS)]} falcon summit {i}\n")
    for quantized in (False, True):
        if quantized:
            monkeypatch.setattr(ResidentVectors, "CLUSTER_FROM", 1)
            monkeypatch.setattr(ResidentVectors, "PROBE_SHARE", 1.0)  # every cluster: the rows alone differ
        with Memory.open(load_config(vault, embed_provider="static")) as memory:
            memory.sync()
            assert memory.vectors is not None and memory.embedder is not None
            qvec = memory.embedder.embed(["otter river budget"])[0]
            memory.vectors.search(qvec, 5)  # loaded before the save
            assert (memory.vectors._q8 is not None) == quantized
            counting = _CountingConnection(memory.index.con)
            memory.index.con = counting  # type: ignore[assignment]
            try:
                with open(vault / "long.md", "a", encoding="utf-8") as fh:
                    fh.write(f"\nlantern copper {quantized} appended\n")
                assert memory.sync_paths(["long.md"]).embedded == 1
                assert counting.vector_reads == []  # embedded by the save: its vector came with it
                write(vault, "copy.md", (vault / "other3.md").read_text(encoding="utf-8"))
                assert memory.sync_paths(["copy.md"]).embedded == 0
            finally:
                memory.index.con = counting._con  # type: ignore[assignment]
            (copied,) = {str(h) for (h,) in memory.index.query("SELECT content_hash FROM leaves WHERE note_path = 'copy.md'")}
            assert [params[1] for params in counting.vector_reads] == [[copied]]  # another note's text: read, alone
            fresh = ResidentVectors(memory.index, memory.vectors.model_id)
            if quantized:
                fresh._load(quantize=True)
            live, again = memory.vectors.search(qvec, 10), fresh.search(qvec, 10)
            assert [i for i, _ in live] == [i for i, _ in again]
            tolerance = 5e-3 if quantized else 1e-6  # a new text's row is float32 until the next merge
            assert np.allclose([s for _, s in live], [s for _, s in again], atol=tolerance)
            assert memory.vectors.size == memory.index.scalar("SELECT count(*) FROM leaves")
        (vault / "copy.md").unlink()


def test_vectors_are_stored_as_float16_and_float32_rows_from_before_still_load(vault: Path) -> None:
    """New vectors take 2 bytes a dimension in the index; an index written before keeps its
    float32 rows (nothing is embedded again) and loads them beside new ones, to the same
    search as the model's own float32 vectors within float16's rounding."""
    for i in range(6):
        write(vault, f"n{i}.md", f"# Note {i}\n\n{' '.join(WORDS[(i + j) % len(WORDS)] for j in range(5))}\n")
    config = load_config(vault, embed_provider="static")
    with Memory.open(config) as memory:
        memory.sync()
        assert memory.embedder is not None
        sizes = memory.index.query("SELECT DISTINCT octet_length(vec) // dim FROM embeddings")
        assert sizes == [(2,)]
        old = memory.index.query("SELECT content_hash FROM embeddings ORDER BY content_hash LIMIT 3")
        texts = dict(memory.index.query("SELECT content_hash, any_value(text) FROM leaves GROUP BY content_hash"))
        for (content_hash,) in old:  # as an index from before float16 holds them
            vector = memory.embedder.embed([texts[content_hash]])[0].astype("<f4")
            memory.index.con.execute("UPDATE embeddings SET vec = ? WHERE content_hash = ?", [vector.tobytes(), content_hash])
        memory.index.checkpoint()
    with Memory.open(config) as memory:
        assert memory.embedder is not None and memory.vectors is not None
        assert memory.sync().embedded == 0
        assert sorted(memory.index.query("SELECT DISTINCT octet_length(vec) // dim FROM embeddings")) == [(2,), (4,)]
        query = memory.embedder.embed(["otter river budget"])[0]
        hits = memory.vectors.search(query, 6)
        ids = [leaf_id for leaf_id, _ in hits]
        rows = dict(memory.index.query("SELECT id, text FROM leaves WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids]))
        exact = memory.embedder.embed([rows[i] for i in ids]) @ query
        assert len(hits) == 6 and np.allclose([score for _, score in hits], exact, atol=2e-3)


def test_stored_vectors_decode_whatever_their_element_size_and_skip_broken_blobs() -> None:
    import pyarrow as pa

    from vaultmind.index.vector_codec import matrix_of, stored_vectors, vector_of

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((4, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    new = stored_vectors(vectors)
    assert [len(b) for b in new] == [16] * 4  # float16: 2 bytes a dimension
    old = [v.astype("<f4").tobytes() for v in vectors]
    dims = pa.array([8] * 4, pa.int32())
    for blobs in (new, old, [new[0], old[1], new[2], old[3]]):
        matrix, kept = matrix_of(pa.array(blobs, pa.binary()), dims)
        assert matrix.dtype == np.float32 and np.allclose(matrix, vectors, atol=1e-3) and kept.all()
    assert vector_of(b"\x00" * 12, 8) is None and vector_of(b"", 8) is None  # fits no element size
    matrix, kept = matrix_of(pa.array([b"\x00" * 12, new[0], new[1]], pa.binary()), pa.array([8, 8, 8], pa.int32()))
    assert matrix.shape == (2, 8) and kept.tolist() == [False, True, True]  # the broken blob is left out
    narrow = stored_vectors(vectors[:, :4])[0]  # another dimension, first: the others are kept
    matrix, kept = matrix_of(pa.array([narrow, new[0], new[1]], pa.binary()), pa.array([4, 8, 8], pa.int32()), 8)
    assert np.allclose(matrix, vectors[:2], atol=1e-3) and kept.tolist() == [False, True, True]


def test_postings_that_do_not_fit_the_small_pool_load_under_the_full_one(
    vault: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The postings scan runs under a small buffer pool (`POSTINGS_POOL`); where DuckDB cannot
    work under it, the scan runs again under the pool as it was: the same postings, and the
    memory limit is left as it was."""
    rng = random.Random(5)
    for i in range(12):
        write(vault, f"n{i}.md", _note(rng))
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        limit = memory.index.scalar("SELECT current_setting('memory_limit')")
        expected = {w: memory.leaves.search([w], 50) for w in WORDS}
        monkeypatch.setattr(leaf_postings, "POSTINGS_POOL", "1KB")  # below what any scan pins
        (vault / ".vaultmind" / leaf_postings.POSTINGS_SNAPSHOT).unlink()  # the postings from the index, scanned
        squeezed = ResidentLeaves(memory.index)
        with caplog.at_level(logging.INFO, logger="vaultmind.index.leaf_postings"):
            assert {w: squeezed.search([w], 50) for w in WORDS} == expected
        assert "ran out of memory under 1KB" in caplog.text
        assert memory.index.scalar("SELECT current_setting('memory_limit')") == limit


def test_bm25_counts_follow_each_save_without_a_reload(vault: Path) -> None:
    # N and the mean length are counted once and kept until the leaves change: a save that adds
    # or removes a few leaves (far from a compaction) must change them.
    _seed_notes(vault, 40, seed=11)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        qterms = terms("otter river")
        before = memory.leaves.search(qterms, 50)
        write(vault, "long.md", "# Long\n\n" + " ".join(["otter"] + ["lantern harbor budget"] * 60) + "\n")
        memory.sync_paths(["long.md"])
        (vault / "n0.md").unlink()
        memory.sync_paths(["n0.md"])
        assert memory.leaves._loaded, "deltas, not a reload"
        after = memory.leaves.search(qterms, 50)
        sql = bm25(memory.index.con, qterms, limit=50)
        assert [i for i, _ in after] == [i for i, _ in sql]
        assert np.allclose([s for _, s in after], [s for _, s in sql])
        assert after != before
        live = memory.index.scalar("SELECT count(*) FROM leaves")
        assert memory.leaves.document_frequency(qterms[0])[1] == live


def test_a_first_question_reports_its_loads_and_their_time(vault: Path) -> None:
    """A process without a daemon loads the resident structures on its first question: the
    loads report their steps (each phase ends at its total) and their time, once."""
    _seed_notes(vault, 30, seed=3)
    steps: list[tuple[str, int, int]] = []
    config = load_config(vault, embed_provider="static")
    with Memory.open(config, progress=lambda phase, done, total: steps.append((phase, done, total))) as memory:
        memory.sync()
        steps.clear()
        assert memory.load_seconds == 0.0
        memory.walk("otter by the river")
        leaves = memory.index.scalar("SELECT count(*) FROM leaves")
        postings = memory.index.scalar("SELECT count(*) FROM postings")
        embedded = memory.index.scalar("SELECT count(*) FROM embeddings")
        loaded = memory.load_seconds
        assert loaded > 0.0
        by_phase: dict[str, list[tuple[int, int]]] = {}
        for phase, done, total in steps:
            by_phase.setdefault(phase, []).append((done, total))
        assert by_phase["load leaves"][-1] == (leaves, leaves)
        assert by_phase["load postings"][-1] == (postings, postings)
        assert by_phase["load vectors"][-1] == (embedded, embedded)
        for reports in by_phase.values():
            dones = [done for done, _ in reports]
            assert dones == sorted(dones) and all(done <= total for done, total in reports)
        steps.clear()
        memory.walk("budget harbor")  # loaded: nothing again
        assert steps == [] and memory.load_seconds == loaded


_WHILE_A_SYNC_HOLDS_THE_INDEX = """
import os, sys, threading, time
from vaultmind.config import load_config
from vaultmind.embed.base import embed_query
from vaultmind.index.resident import ChangeSet
from vaultmind.memory import Memory

memory = Memory.open(load_config(sys.argv[1], embed_provider="static"))
memory.sync()
vector = embed_query(memory.embedder, "otter river")
for structure, ask in ((memory.leaves, lambda: memory.leaves.search(["otter"], 5)),
                       (memory.vectors, lambda: memory.vectors.search(vector, 5))):
    structure.apply(ChangeSet(reset=True))  # unloaded, as after a rebuild's first batch
    holding, answers = threading.Event(), []

    def sync():
        with memory.index.lock:
            holding.set()
            time.sleep(0.3)  # the question comes meanwhile
            structure.apply(ChangeSet(reset=True))

    def question():
        holding.wait()
        answers.append(ask())

    threads = [threading.Thread(target=sync, daemon=True), threading.Thread(target=question, daemon=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    if any(thread.is_alive() for thread in threads) or not answers or not answers[0]:
        print(type(structure).__name__, "deadlocked" if answers == [] else "answered nothing", flush=True)
        os._exit(1)  # the locks are held for good: no clean close
memory.close()
"""


def test_a_question_while_a_sync_holds_the_index_waits_for_it_and_never_deadlocks(vault: Path) -> None:
    """A sync holds the index's lock and then applies its change to the resident structures;
    a question that finds them unloaded must not hold theirs while it waits for the index's
    (a daemon asked during a whole-vault load hung forever, the two threads each waiting on
    the other). In a child process, so a deadlock fails the test instead of hanging it."""
    import subprocess
    import sys

    _seed_notes(vault, 6, seed=3)
    done = subprocess.run(
        [sys.executable, "-c", _WHILE_A_SYNC_HOLDS_THE_INDEX, str(vault)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]


def _leaf_columns(leaves: ResidentLeaves) -> dict[str, np.ndarray]:
    store = leaves._store
    columns = {name: getattr(leaves, name) for name in ("_note", "_kind", "_author", "_seq", "_doc_len", "_ts")}
    columns |= {name: getattr(store, name) for name in ("_start", "_size", "_text_start", "_text_size")}
    return columns | {"alive": leaves._rows.alive}


def test_saves_append_to_the_leaf_columns_in_place(vault: Path) -> None:
    # Each save added its leaves by copying every leaf column (~23 MB at 50k notes); once a
    # save has given a column room, the next ones write into it, and the columns still agree
    # with a fresh load and with SQL.
    rng = _seed_notes(vault, 30, seed=5)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        memory.leaves.search(["otter"], 5)  # loaded: the saves below are deltas
        write(vault, "first.md", _note(rng))
        memory.sync_paths(["first.md"])
        before = {name: (column.ctypes.data, column.copy()) for name, column in _leaf_columns(memory.leaves).items()}
        for step in range(6):
            write(vault, f"more{step}.md", _note(rng))
            memory.sync_paths([f"more{step}.md"])
        write(vault, "n3.md", _note(rng))  # an edit: rows removed and added
        memory.sync_paths(["n3.md"])
        assert memory.leaves._loaded, "deltas, not a reload"
        after = _leaf_columns(memory.leaves)
        for name, column in after.items():
            address, rows = before[name]
            assert len(column) > len(rows), name
            assert column.ctypes.data == address, f"{name} was copied"
            if name != "alive":  # the edit's removed rows are tombstoned in place, as ever
                assert column[: len(rows)].tobytes() == rows.tobytes(), name
        fresh = ResidentLeaves(memory.index)
        for query in ("otter river", "budget harbor lantern", "violet"):
            qterms = terms(query)
            live = memory.leaves.search(qterms, 50)
            assert live == fresh.search(qterms, 50)
            assert [i for i, _ in live] == [i for i, _ in bm25(memory.index.con, qterms, limit=50)]


def test_lengths_and_place_rows_are_held_in_four_bytes_and_score_as_stored(vault: Path) -> None:
    # A leaf's length (its term count, BM25's dl) and the row of each place were 8 bytes a
    # leaf each (float64, int64): 3.3 MB each at 50k notes. They are int32, after a load and
    # after saves, and BM25 scores and neighbours still equal SQL's and a fresh load's.
    rng = _seed_notes(vault, 20, seed=11)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        memory.leaves.search(["otter"], 5)
        loaded = memory.leaves
        assert loaded._doc_len.dtype == np.int32 and loaded._place_rows.dtype == np.int32
        for step in range(3):
            write(vault, f"more{step}.md", _note(rng))
            memory.sync_paths([f"more{step}.md"])
        assert loaded._loaded and loaded._doc_len.dtype == np.int32
        counts = dict(memory.index.query("SELECT id, term_count FROM leaves"))
        found = loaded._rows.find(list(counts))
        assert loaded._doc_len[found].tolist() == list(counts.values())
        fresh = ResidentLeaves(memory.index)
        ids = sorted(counts)
        assert loaded.neighbours_of(ids, 2) == fresh.neighbours_of(ids, 2)
        for query in ("otter river", "budget harbor lantern", "violet"):
            qterms = terms(query)
            live = loaded.search(qterms, 50)
            sql = bm25(memory.index.con, qterms, limit=50)
            assert [i for i, _ in live] == [i for i, _ in sql]
            assert [s for _, s in live] == pytest.approx([s for _, s in sql], rel=1e-12)


def _sections(vault: Path, notes: int) -> None:
    for k in range(notes):
        write(vault, f"n{k}.md", "\n\n".join(f"# Part {i}\n\nnote {k} part {i} about gardens and bees" for i in range(4)) + "\n")


def _narrow(memory: Memory, content_hash: str) -> None:
    """Store the vector of `content_hash` as one of another dimension (8), as a model that
    changed behind its name leaves it."""
    from vaultmind.index.vector_codec import stored_vectors

    with memory.index.transaction() as con:
        con.execute(
            "UPDATE embeddings SET dim = 8, vec = ? WHERE content_hash = ?",
            [stored_vectors(np.ones((1, 8), dtype=np.float32))[0], content_hash],
        )


def test_a_vector_of_another_dimension_leaves_out_only_its_own_leaves_when_loaded(vault: Path) -> None:
    """The first vector a load reads is of another dimension: only its leaf goes without a
    row (before, its whole batch of 2,048 vectors was left out: here every one)."""
    _sections(vault, 5)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        (first,) = memory.index.query("SELECT content_hash FROM embeddings ORDER BY rowid LIMIT 1")[0]
        _narrow(memory, first)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        others = memory.index.scalar("SELECT count(*) FROM leaves WHERE content_hash <> ?", [first])
        assert memory.vectors.size == others == 19


def test_a_copied_note_takes_the_stored_vectors_of_its_texts_beside_one_of_another_dimension(vault: Path) -> None:
    """A saved note whose texts have their vectors already reads them from the index; one of
    them of another dimension is left out, and every other text keeps its own vector (before,
    the shortened matrix was read by the rows' numbers: vectors on the wrong texts, and past
    its end an IndexError)."""
    from vaultmind.index.vector_codec import vector_of

    _sections(vault, 10)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        assert memory.vectors.size == 40
        hashes = [h for (h,) in memory.index.query(
            "SELECT content_hash FROM embeddings WHERE content_hash IN (SELECT content_hash FROM leaves WHERE note_path = 'n3.md') ORDER BY rowid"
        )]  # fmt: skip
        _narrow(memory, hashes[1])
        write(vault, "copy.md", (vault / "n3.md").read_text(encoding="utf-8"))
        assert memory.sync_paths(["copy.md"]).embedded == 0
        copies = memory.index.query("SELECT id, content_hash FROM leaves WHERE note_path = 'copy.md' ORDER BY id")
        assert memory.vectors.size == 43
        for leaf_id, content_hash in copies:
            blob, dim = memory.index.query("SELECT vec, dim FROM embeddings WHERE content_hash = ?", [content_hash])[0]
            if dim == 8:
                continue
            vector = vector_of(blob, dim)
            assert vector is not None
            scores = dict(memory.vectors.search(vector, 50))
            assert scores.get(leaf_id, 0.0) > 0.999


def test_the_mean_direction_stays_that_of_the_live_vectors_when_a_copied_source_note_is_saved(vault: Path) -> None:
    """A copied source note keeps its message ids: its save replaces the live rows of those ids,
    and the kept sum of the vectors takes the old rows out (before, they were counted twice)."""
    from vaultmind.markdown.render import Message, SourceMeta, render_source_note

    _sections(vault, 5)
    meta = SourceMeta("chat", "slack:acme/general", "slack/acme/general", "general")
    text = render_source_note(meta, [Message("m1", "@bob", "2024-03-04T09:05:00Z", "launch budget approved")])
    write(vault, "sources/chat/a.md", text)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        before = memory.vectors.mean_direction()
        assert before is not None
        write(vault, "sources/chat/copy.md", text)
        memory.sync_paths(["sources/chat/copy.md"])
        kept = memory.vectors.mean_direction()
        memory.vectors._sum = None  # summed again from the live rows
        assert kept is not None and np.allclose(kept, memory.vectors.mean_direction(), atol=1e-6)
        assert np.allclose(kept, before, atol=1e-6)
