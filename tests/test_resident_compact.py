"""The compact resident representations: ids in one bytes array, leaf rows read back from the
row store, int8 vectors above `CLUSTER_FROM`, and the serving process's DuckDB memory limit."""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pytest

import vaultmind.index.postings as postings
import vaultmind.index.resident_vectors as resident_vectors
import vaultmind.index.vector_scan as vector_scan
from vaultmind.bench.search import exact_nearest
from vaultmind.config import load_config
from vaultmind.index.leaf_postings import _group_starts
from vaultmind.index.leaf_rows import LEAF_META_SQL
from vaultmind.index.pool import size_bytes
from vaultmind.index.resident import ResidentLeaves
from vaultmind.index.resident_vectors import ResidentVectors
from vaultmind.index.row_ids import RowIds, best_first
from vaultmind.index.serving_pool import LOAD_MEMORY_LIMIT, VECTORS_LOAD_LIMIT
from vaultmind.index.vector_codec import hash_prefix as _hash_prefix
from vaultmind.index.vector_codec import leaf_keys as _leaf_keys
from vaultmind.index.vector_codec import vector_of
from vaultmind.index.vector_scan import quantize_rows, split_scan
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory

from .conftest import write

WORDS = ["otter", "river", "budget", "harbor", "lantern", "copper", "meadow", "falcon", "summit", "violet"]


def _note(rng: random.Random) -> str:
    paras = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(rng.randint(1, 4))]
    return "# Note\n\n" + "\n\n".join(paras) + "\n"


@contextmanager
def _static_vectors(vault: Path, seed: int, notes: int) -> Iterator[tuple[Memory, str, list[npt.NDArray[np.float32]]]]:
    """A synced memory of `notes` random notes with static embeddings, its model id, and the
    vectors of three queries."""
    rng = random.Random(seed)
    for i in range(notes):
        write(vault, f"n{i}.md", _note(rng))
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        assert memory.embedder is not None
        queries = [memory.embedder.embed([q])[0] for q in ("otter river", "budget harbor", "violet summit meadow")]
        yield memory, memory.embedder.model_id, queries


def _sql_rows(memory: Memory) -> dict[str, dict[str, object]]:
    table = memory.index.con.execute(LEAF_META_SQL).to_arrow_table()
    return {row["id"]: row for row in table.to_pylist()}


def test_rows_read_back_equal_the_index_after_edits_renames_and_deletes(vault: Path) -> None:
    rng = random.Random(11)
    for i in range(10):
        write(vault, f"n{i}.md", _note(rng))
    meta = SourceMeta("chat", "slack:acme/general", "slack/acme/general", "general")
    messages = [Message(f"m{i}", "@bob", f"2024-03-04T09:0{i}:00Z", f"launch budget é {i}") for i in range(5)]
    write(vault, "sources/chat/a.md", render_source_note(meta, messages))
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert memory.leaves.rows(list(_sql_rows(memory))) == _sql_rows(memory)  # loads the store
        for step in range(25):
            existing = sorted(p.relative_to(vault).as_posix() for p in vault.glob("*.md"))
            op = rng.choice(["add", "edit", "rename", "delete"])
            name = rng.choice(existing) if existing else f"new{step}.md"
            if op == "add" or not existing:
                name = f"new{step}.md"
                write(vault, name, _note(rng))
                changed = [name]
            elif op == "edit":
                write(vault, name, _note(rng))
                changed = [name]
            elif op == "rename":
                target = f"renamed{step}.md"
                (vault / name).rename(vault / target)
                changed = [name, target]
            else:
                (vault / name).unlink()
                changed = [name]
            memory.sync_paths(changed)
            expected = _sql_rows(memory)
            asked = [*expected, "no-such-leaf", "é" * 40]
            assert memory.leaves.rows(asked) == expected
        fresh = ResidentLeaves(memory.index)
        try:
            assert fresh.rows(list(expected)) == expected
            ids = sorted(expected)
            asked = [*ids, "no-such-leaf"]
            mine, theirs = memory.leaves.columns(asked), fresh.columns(asked)
            assert [mine.place(k) for k in range(len(asked))] == [theirs.place(k) for k in range(len(asked))]
            assert mine.place(len(ids)) is None and not mine.known[len(ids)]
            assert mine.ts.tolist() == theirs.ts.tolist()
            assert np.array_equal(mine.length, theirs.length, equal_nan=True)
            assert {i: memory.leaves.neighbours(i) for i in ids} == {i: fresh.neighbours(i) for i in ids}
            assert memory.leaves.neighbours_of([*ids, "no-such-leaf"], 2) == {i: fresh.neighbours(i, 2) for i in ids}
        finally:
            fresh.close()


def test_row_ids_found_in_any_load_order_and_after_appends() -> None:
    rows = RowIds()
    ids = ["b-2", "a-1", "ccc-3", "é-4", "a-1"]  # unsorted, one non-ASCII, one loaded twice
    rows.reset(ids)
    assert rows.shared == {"a-1"}
    assert rows.find(["a-1", "b-2", "ccc-3", "é-4", "zz", "ccc-3-longer-than-any"]).tolist() == [4, 0, 2, 3, -1, -1]
    assert [rows.id_of(i) for i in range(len(ids))] == ids
    assert rows.extend(["d-5", "b-2"]) == [5, 6]
    assert rows.find(["b-2", "d-5"]).tolist() == [6, 5]  # the re-added id's old row is dead
    assert not rows.alive[0]
    rows.remove("d-5")
    assert rows.row("d-5") is None and rows.id_of(5) == "d-5"
    assert rows.rank(7).tolist() == [2, 0, 3, 4, 1, 5, 6]  # loaded rows in id order, then appended ones


def test_row_ids_hold_hex_ids_as_bytes() -> None:
    """Leaf ids (32 lowercase hex digits) are held as their 16 bytes and found, given back and
    ranked as the strings are; an id ending in zero bytes keeps them."""
    ids = ["ff" * 16, "0a" * 15 + "00", "00" * 16, "9b" * 16, "0a" * 15 + "00"]
    rows = RowIds()
    rows.reset(ids)
    assert rows._packed and rows._keys.dtype.itemsize == 16
    assert rows.shared == {"0a" * 15 + "00"}
    assert [rows.id_of(i) for i in range(len(ids))] == ids
    assert rows.ids_of([4, 0, 2, 2]) == [ids[4], ids[0], ids[2], ids[2]] and rows.ids_of([]) == []
    asked = ["00" * 16, "9b" * 16, "ff" * 16, "FF" * 16, "zz" * 16, "9b" * 15, "9b" * 17]
    assert rows.find(asked).tolist() == [2, 3, 0, -1, -1, -1, -1]  # uppercase, not hex, too short or long
    assert rows.find(["0a" * 15 + "00"]).tolist() == [4]
    keys = np.array([i.encode() for i in ["9b" * 16, "FF" * 16, "xx" * 16, "00" * 16]], dtype="S32")
    assert rows.find_keys(keys).tolist() == [3, -1, -1, 2]
    assert rows.rank(5).tolist() == [4, 1, 0, 3, 2]  # as the strings sort
    picked, scores = np.array([0, 1, 2, 3]), np.array([0.5, 0.7, 0.5, 0.5], dtype=np.float32)
    expected = best_first(zip(rows.ids_of(picked), scores.tolist(), strict=True))
    assert rows.best_first(picked, scores) == expected and expected[1][0] == "00" * 16  # ties by id
    assert rows.extend(["9b" * 16, "not-hex"]) == [5, 6]
    assert rows.best_first(np.array([6, 0, 5]), np.array([1.0, 1.0, 2.0])) == [("9b" * 16, 2.0), ("ff" * 16, 1.0), ("not-hex", 1.0)]
    assert rows.find(["9b" * 16, "not-hex"]).tolist() == [5, 6] and not rows.alive[3]
    assert rows.ids_of(np.array([6, 1, 5])) == ["not-hex", ids[1], "9b" * 16]  # appended rows too
    mixed = RowIds()
    mixed.reset(["ab" * 16, "not-hex"])
    assert not mixed._packed and mixed.find(["ab" * 16, "not-hex"]).tolist() == [0, 1]
    assert mixed.ids_of([1, 0]) == ["not-hex", "ab" * 16]


def test_row_ids_found_when_ids_share_their_first_bytes() -> None:
    """Packed ids are searched by their first 8 bytes: ids that share them (and ids loaded
    twice) are still told apart, each found at its own row, as a dict of the ids finds them."""
    rng = np.random.default_rng(7)
    heads = [rng.bytes(8).hex() for _ in range(40)]
    ids = [heads[int(rng.integers(0, 8 if k % 2 else 40))] + rng.bytes(8).hex() for k in range(400)]
    ids += ids[:25]  # loaded twice: the later row
    rows = RowIds()
    rows.reset(ids)
    assert rows._packed and rows._sorted_high is not None
    latest = {leaf_id: row for row, leaf_id in enumerate(ids)}
    strangers = [head + rng.bytes(8).hex() for head in heads[:10]]  # a known head, an unknown id
    asked = [ids[int(k)] for k in rng.integers(0, len(ids), 300)] + strangers + ["00" * 16, "ff" * 16]
    assert rows.find(asked).tolist() == [latest.get(leaf_id, -1) for leaf_id in asked]


def test_int8_vectors_rank_like_float32(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above `CLUSTER_FROM` the vectors load as int8 with a scale per row: on data with a clear
    margin the top hits are those of the float32 vectors, with cosines within 0.01."""
    with _static_vectors(vault, 3, 30) as (memory, model, queries):
        exact = ResidentVectors(memory.index, model)
        expected = [exact.search(q, 5) for q in queries]
        monkeypatch.setattr(ResidentVectors, "CLUSTER_FROM", 10)
        monkeypatch.setattr(ResidentVectors, "PROBE_SHARE", 1.0)  # every cluster: only quantization differs
        quantized = ResidentVectors(memory.index, model)
        found = [quantized.search(q, 5) for q in queries]
        assert quantized._q8 is not None and quantized._matrix.size == 0
        for want, got in zip(expected, found, strict=True):
            margin = want[0][1] - want[1][1] if len(want) > 1 else 1.0
            if margin > 0.01:
                assert got[0][0] == want[0][0]
            assert np.allclose([s for _, s in got], [s for _, s in want], atol=0.01)
            assert {i for i, _ in got} & {i for i, _ in want}
        assert quantized.search(queries[0], 2000) == quantized.search(queries[0], 2000)  # full scan, deterministic
        assert len(quantized.search(queries[0], 2000)) == exact.size


def test_int8_rows_below_the_clustering_are_scanned_in_full_in_memory(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From `QUANTIZE_FROM` rows the vectors are int8, held in memory and every row scored
    while they stay under `CLUSTER_FROM`: the hits are the float32 scan's, with cosines within
    0.01. Past `CLUSTER_FROM` they are clustered into the scratch file (the same rows, the same
    cosines); back under it they return to memory, and under `QUANTIZE_FROM` to float32."""
    with _static_vectors(vault, 4, 40) as (memory, model, queries):
        exact = ResidentVectors(memory.index, model)
        expected = [exact.search(q, 2000) for q in queries]
        monkeypatch.setattr(ResidentVectors, "QUANTIZE_FROM", 10)
        vectors = ResidentVectors(memory.index, model)
        got = [vectors.search(q, 2000) for q in queries]
        assert vectors._q8 is not None and len(vectors._q8) == vectors.size == exact.size
        assert vectors._file is None and vectors._ivf is None and vectors._matrix.size == 0
        assert vectors.memory()["matrix"] < exact.memory()["matrix"] / 3
        for hits, want in zip(got, expected, strict=True):
            _same_hits(hits, want, 0.01)
            assert [i for i, _ in hits[:3]] == [i for i, _ in want[:3]]

        monkeypatch.setattr(ResidentVectors, "CLUSTER_FROM", vectors.size)
        monkeypatch.setattr(ResidentVectors, "PROBE_SHARE", 1.0)
        clustered = [vectors.search(q, 2000) for q in queries]
        assert vectors._ivf is not None and vectors._file is not None and len(vectors._q8) == 0
        for hits, want in zip(clustered, got, strict=True):
            _same_hits(hits, want, 1e-6)

        monkeypatch.setattr(ResidentVectors, "CLUSTER_FROM", vectors.size + 1)
        back = [vectors.search(q, 2000) for q in queries]
        assert vectors._ivf is None and vectors._file is None and len(vectors._q8) == vectors.size
        for hits, want in zip(back, got, strict=True):
            _same_hits(hits, want, 1e-6)

        monkeypatch.setattr(ResidentVectors, "QUANTIZE_FROM", vectors.size + 1)
        assert [vectors.search(q, 2000) for q in queries] == expected and vectors._q8 is None


def test_exact_nearest_streams_every_stored_vector_of_a_live_leaf(vault: Path) -> None:
    """The walk benchmark's reference: the top leaves by float32 cosine, as a full float32
    scan ranks them; leaves sharing a text share its score, and a vector whose text no leaf
    holds any more is not among them."""
    with _static_vectors(vault, 6, 30) as (memory, model, queries):
        (vault / "copy.md").write_bytes((vault / "n0.md").read_bytes())  # the same texts, other leaves
        (vault / "n1.md").unlink()  # its vectors stay stored, with no leaf
        memory.sync()
        scan = ResidentVectors(memory.index, model)
        want = [[i for i, _ in scan.search(q, 12)] for q in queries]
        assert exact_nearest(memory.index, model, np.stack(queries), 12) == want
        copies = memory.index.con.execute(
            "SELECT count(*) FROM leaves a JOIN leaves b ON a.content_hash = b.content_hash AND a.id < b.id"
        ).fetchone()
        assert copies is not None and copies[0] > 0
        orphans = memory.index.con.execute(
            "SELECT count(*) FROM embeddings WHERE content_hash NOT IN (SELECT content_hash FROM leaves)"
        ).fetchone()
        assert orphans is not None and orphans[0] > 0
        top = exact_nearest(memory.index, model, np.stack(queries), scan.size + 50)
        assert [sorted(t) for t in top] == [sorted(i for i, _ in scan.search(q, scan.size + 50)) for q in queries]


def _scratch_files(folder: Path) -> list[str]:
    """The deleted files in `folder` this process holds open: the vectors' scratch files."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(folder)) and target.endswith("(deleted)"):
            found.append(target)
    return found


def test_int8_rows_are_scored_first_on_their_leading_axes_then_the_best_in_full(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unclustered int8 rows are scored in two passes: by their projection on the rows' leading
    principal axes, then the `RESCORE` best in full. The hits carry the full scan's cosines,
    and the best of them are the full scan's. Rows a save adds are projected on the same axes
    once they are merged into the matrix."""
    monkeypatch.setattr(ResidentVectors, "QUANTIZE_FROM", 10)
    with _static_vectors(vault, 7, 60) as (memory, _model, queries):
        vectors = memory.vectors
        assert vectors is not None
        vectors.close()
        full = [vectors.search(q, 2000) for q in queries]  # 2,000 hits: every row scored in full
        rows = vectors.size
        head = vectors._head
        assert head is not None and head.of is vectors._q8 and _projections(head).shape == (rows, 96)
        monkeypatch.setattr(ResidentVectors, "RESCORE", rows // 4)
        monkeypatch.setattr(ResidentVectors, "RESCORE_PER_HIT", 1)
        scanned: list[int] = []
        scan, first = vectors._scan, vector_scan.FirstPass.scores
        monkeypatch.setattr(vectors, "_scan", lambda q, found=None: scanned.append(len(found) if found is not None else -1) or scan(q, found))
        monkeypatch.setattr(vector_scan.FirstPass, "scores", lambda self, q: scanned.append(0) or first(self, q))
        for q, want in zip(queries, full, strict=True):
            got = vectors.search(q, 10)
            assert scanned[-2:] == [0, rows // 4]  # the first pass, then the kept rows in full
            by_id = dict(want)
            assert np.allclose([s for _, s in got], [by_id[i] for i, _ in got], atol=1e-6)
            assert np.allclose([s for _, s in got], [s for _, s in want[:10]], atol=1e-6)
        assert vectors.search(queries[0], 10) == vectors.search(queries[0], 10)

        rng = random.Random(8)
        for i in range(20):  # more than a twentieth of the rows: merged at the next search
            write(vault, f"added{i}.md", _note(rng))
        memory.sync()
        assert vectors._chunks
        vectors.search(queries[0], 10)
        assert not vectors._chunks and vectors.size > rows
        merged = vectors._head
        assert merged is not None and merged.of is vectors._q8 and merged.axes is head.axes
        assert len(_projections(merged)) == len(vectors._q8)
        again = vector_scan.project(vectors._q8, vectors._scale, head.axes, ResidentVectors.BLOCK)
        assert np.array_equal(_projections(merged), again)
        monkeypatch.setattr(ResidentVectors, "RESCORE", vectors.size)
        every = vectors.search(queries[1], 2000)
        monkeypatch.setattr(ResidentVectors, "RESCORE", vectors.size // 4)
        top = vectors.search(queries[1], 10)
        assert np.allclose([s for _, s in top], [s for _, s in every[:10]], atol=1e-6)


def test_a_first_pass_scores_its_blocks_as_the_projections_would(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first pass holds the projections transposed, in blocks of `COLUMNS` rows: its
    scores are the projections' products with the projected query, whatever the number of
    rows in the last block, and rows appended fill the last block before opening a new one
    (the blocks a build would make)."""
    monkeypatch.setattr(vector_scan.FirstPass, "COLUMNS", 64)
    monkeypatch.setattr(vector_scan, "SPLIT_ROWS", 100)  # shared between threads from 100 rows
    rng = np.random.default_rng(3)
    q8, scale = vector_scan.quantize_rows(rng.standard_normal((150, 32)).astype(np.float32))
    built = vector_scan.FirstPass.build(q8[:100], scale[:100], 0.25, 64, 16)
    assert [b.shape for b in built.blocks] == [(8, 64), (8, 36)]
    q = rng.standard_normal(32).astype(np.float32)
    want = vector_scan.project(q8[:100], scale[:100], built.axes, 16) @ (q @ built.axes)
    assert np.allclose(built.scores(q), want, atol=1e-5)

    grown = built.extended(q8, q8[100:], scale[100:], 16)
    assert [b.shape for b in grown.blocks] == [(8, 64), (8, 64), (8, 22)]
    assert np.array_equal(_projections(grown), vector_scan.project(q8, scale, built.axes, 16))
    assert np.allclose(grown.scores(q), vector_scan.project(q8, scale, built.axes, 16) @ (q @ built.axes), atol=1e-5)
    assert grown.extended(q8, q8[:0], scale[:0], 16).blocks[-1].shape == (8, 22)


def _projections(head: vector_scan.FirstPass) -> npt.NDArray[np.float32]:
    """A first pass's projections, a row each."""
    return np.hstack(head.blocks).T


def _same_hits(got: list[tuple[str, float]], want: list[tuple[str, float]], atol: float) -> None:
    """The same leaves (a full list: ties at a cut cannot differ) with the same scores."""
    assert sorted(i for i, _ in got) == sorted(i for i, _ in want)
    by_id = dict(want)
    assert np.allclose([s for _, s in got], [by_id[i] for i, _ in got], atol=atol)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads the open files from /proc")
def test_clustered_int8_rows_live_in_an_unnamed_scratch_file_and_rank_as_in_memory(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once clustered, the int8 rows move to an unnamed file beside the index, in cluster order.
    Searches (probed, and full) equal those over the same rows kept in memory — where no file
    can be written (a full disk) — every row reads back unchanged, and closing lets the file go."""
    with _static_vectors(vault, 7, 40) as (memory, model, queries):
        monkeypatch.setattr(ResidentVectors, "CLUSTER_FROM", 10)
        monkeypatch.setattr(ResidentVectors, "READ", 3)  # reads cut inside clusters and runs
        monkeypatch.setattr(vector_scan, "SPLIT_ROWS", 2)  # helper threads read the file too
        monkeypatch.setattr(resident_vectors, "_ROWS_BATCH", 8)  # the load appends to the file many times
        monkeypatch.setattr(ResidentVectors, "WINDOW_BYTES", 8 * 256)  # so does putting it in order
        appends = {"done": 0, "limit": -1}
        append = vector_scan.RowFile.append

        def counted(self: vector_scan.RowFile, *args: object) -> None:
            if appends["done"] == appends["limit"]:
                raise OSError(28, "No space left on device")
            appends["done"] += 1
            append(self, *args)  # type: ignore[arg-type]

        monkeypatch.setattr(vector_scan.RowFile, "append", counted)
        folder = vault / ".vaultmind"
        names, open_before = set(os.listdir(folder)), len(_scratch_files(folder))
        filed = ResidentVectors(memory.index, model)
        filed.room(filed._load)
        loading = appends["done"]
        got = [filed.search(q, k) for q in queries for k in (5, 2000)]
        assert filed._file is not None and filed._q8 is not None and len(filed._q8) == 0  # no row left in memory
        assert filed.memory()["file"] == filed.size * filed._width > 0
        assert set(os.listdir(folder)) == names and len(_scratch_files(folder)) == open_before + 1
        assert 2 < loading < appends["done"] - 2

        for fails_at in (0, loading // 2, loading + 1):  # at once; while loading; while putting it in order
            appends["done"], appends["limit"] = 0, fails_at
            kept = ResidentVectors(memory.index, model)
            want = [kept.search(q, k) for q in queries for k in (5, 2000)]
            assert kept._file is None and kept._q8 is not None and len(kept._q8) == kept.size
            assert len(_scratch_files(folder)) == open_before + 1  # only `filed`'s is open
            for hits, expected in zip(got, want, strict=True):
                assert [s for _, s in hits] == pytest.approx([s for _, s in expected], abs=1e-6)
                if len(expected) > 5:
                    _same_hits(hits, expected, 1e-6)
            rows = np.arange(filed._base, dtype=np.intp)
            assert np.array_equal(filed._block(rows), kept._block(rows))
            assert np.allclose(filed.mean_direction(), kept.mean_direction(), atol=1e-6)
        filed.close()
        assert len(_scratch_files(folder)) == open_before
        assert len(filed.search(queries[0], 5)) == 5  # loads again


def test_rows_added_after_the_clustering_are_found_and_the_next_clustering_files_them(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Saves after the clustering add rows in memory and leave dead rows in the file; once the
    new rows pass a quarter of the clustered ones the rows are clustered again, the file then
    holding every live row, and a search equals a fresh load's."""
    with _static_vectors(vault, 9, 30) as (memory, model, queries):
        monkeypatch.setattr(ResidentVectors, "CLUSTER_FROM", 10)
        monkeypatch.setattr(ResidentVectors, "PROBE_SHARE", 1.0)
        vectors = memory.vectors
        assert vectors is not None
        vectors._loaded = False  # loaded float32 before the threshold was lowered
        vectors.search(queries[0], 5)
        assert vectors._ivf is not None and vectors._file is not None
        clustered = vectors._ivf.size
        rng = random.Random(5)
        for i in range(4):
            write(vault, f"n{i}.md", _note(rng) + f"\nedited {i}\n")
        memory.sync()
        got = [vectors.search(q, 2000) for q in queries]
        assert vectors._ivf.size == clustered and vectors._base > clustered  # a few: not clustered again
        fresh = ResidentVectors(memory.index, model)
        for hits, want in zip(got, [fresh.search(q, 2000) for q in queries], strict=True):
            _same_hits(hits, want, 5e-3)  # rows not merged yet are float32
        for i in range(20):
            write(vault, f"more{i}.md", _note(rng) + f"\nextra {i}\n")
        memory.sync()
        got = [vectors.search(q, 2000) for q in queries]
        assert vectors._ivf.size > clustered and vectors._filed == vectors._ivf.size == vectors._base
        assert vectors._file is not None and vectors._file.rows == vectors.size  # dead rows left behind
        fresh = ResidentVectors(memory.index, model)
        for hits, want in zip(got, [fresh.search(q, 2000) for q in queries], strict=True):
            _same_hits(hits, want, 1e-6)
        fresh.close()


def test_group_starts_point_at_the_first_of_each_run() -> None:
    grouped = np.array([2, 2, 2, 5, 7, 7, 9], dtype=np.int64)
    assert _group_starts(grouped).tolist() == [0, 0, 0, 3, 4, 4, 6]
    assert _group_starts(np.zeros(0, dtype=np.int64)).tolist() == []


def test_split_scan_covers_every_row_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vector_scan, "_SCAN_THREADS", 3)
    monkeypatch.setattr(vector_scan, "SPLIT_ROWS", 10)
    seen = np.zeros(1001, dtype=np.int64)
    slices: list[tuple[int, int]] = []
    threads: set[str] = set()

    def part(lo: int, hi: int) -> None:
        slices.append((lo, hi))
        seen[lo:hi] += 1
        threads.add(threading.current_thread().name)
        time.sleep(0.01)  # long enough for a helper to take a block

    split_scan(1001, 100, part)
    assert sorted(slices) == [(i, min(1001, i + 100)) for i in range(0, 1001, 100)]  # whole blocks
    assert seen.min() == seen.max() == 1
    assert threading.current_thread().name in threads and len(threads) > 1
    slices.clear()
    split_scan(9, 2, part)  # below SPLIT_ROWS: one slice, on the calling thread
    assert slices == [(0, 9)]


def test_a_scan_split_over_threads_ranks_exactly_as_one_thread(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Float32 and int8 scans, full, in two passes and clustered, give the same hits and cosines
    whether they run on one thread or on several."""
    with _static_vectors(vault, 5, 40) as (memory, model, queries):
        monkeypatch.setattr(vector_scan, "SPLIT_ROWS", 2)
        monkeypatch.setattr(ResidentVectors, "BLOCK", 7)
        monkeypatch.setattr(ResidentVectors, "READ", 3)  # int8 blocks cut inside the threads' parts
        monkeypatch.setattr(vector_scan, "_LABEL_BLOCK", 3)  # the clustering's products are split too
        monkeypatch.setattr(ResidentVectors, "RESCORE_PER_HIT", 1)
        # float32 full scan; int8 full scan; int8 in two passes (for 5 hits); int8 rows with clusters
        for quantize_from, cluster_from, rescore in ((10_000, 10_000, 4000), (10, 10_000, 4000), (10, 10_000, 6), (10, 10, 4000)):
            monkeypatch.setattr(ResidentVectors, "QUANTIZE_FROM", quantize_from)
            monkeypatch.setattr(ResidentVectors, "CLUSTER_FROM", cluster_from)
            monkeypatch.setattr(ResidentVectors, "RESCORE", rescore)
            results = []
            for threads in (1, 3):
                monkeypatch.setattr(vector_scan, "_SCAN_THREADS", threads)
                vectors = ResidentVectors(memory.index, model)
                results.append([vectors.search(q, k) for q in queries for k in (5, 2000)])
                if vectors._ivf is not None:
                    results[-1].append(vectors._ivf.members.tolist())  # the same clusters
                assert (vectors._head is not None) == (quantize_from < cluster_from)
            assert results[0] == results[1]
            assert results[0][1] and len(results[0][1]) == vectors.size


def test_quantized_rows_are_close_to_the_float_rows() -> None:
    data = np.random.default_rng(0).normal(size=(200, 64)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    q8, scale = quantize_rows(data)
    assert q8.dtype == np.int8 and np.abs(q8).max() == 127
    assert np.abs(q8 * scale[:, None] - data).max() <= scale.max() / 2 + 1e-7
    assert quantize_rows(np.zeros((2, 4), dtype=np.float32))[1].tolist() == [1.0, 1.0]  # no division by zero


def test_a_serving_process_loads_under_a_small_pool_and_writes_under_the_full_one(vault: Path) -> None:
    write(vault, "a.md", "# A\n\notter river\n")

    def limit(memory: Memory) -> str:
        return str(memory.index.scalar("SELECT current_setting('memory_limit')"))

    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        full = limit(memory)
        memory.serve()
        assert limit(memory) == full  # writes keep the full pool
        seen: list[str] = []

        def load() -> None:
            seen.append(limit(memory))
            if len(seen) == 1:
                raise duckdb.OutOfMemoryException("Out of Memory Error: test")

        memory.serving_pool.load_light(load)
        assert seen[0] != full and seen[1] == full  # small pool first, the full one on running out
        assert limit(memory) == full
        assert memory.sync().added == 1 and limit(memory) == full
        assert [i for i, _ in memory.leaves.search(["otter"], 5)]  # a real load through the hook
        assert limit(memory) == full


def test_a_serving_process_loads_the_vectors_under_their_own_smaller_pool(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(vault, "a.md", "# A\n\notter river\n")
    seen: list[str] = []
    original = ResidentVectors._load

    def load(self: ResidentVectors, quantize: bool | None = None) -> None:
        seen.append(str(self.index.scalar("SELECT current_setting('memory_limit')")))
        original(self, quantize)

    monkeypatch.setattr(ResidentVectors, "_load", load)
    with Memory.open(load_config(vault)) as memory:
        memory.sync()
        memory.serve()
        assert memory.vectors is not None and memory.vectors.size == 1
        assert len(seen) == 1 and abs(size_bytes(seen[0]) - size_bytes(VECTORS_LOAD_LIMIT)) < 2**20
        assert size_bytes(seen[0]) <= size_bytes(LOAD_MEMORY_LIMIT)


def test_leaf_keys_reads_ids_and_hashes_of_any_width_across_batches() -> None:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE leaves AS SELECT CASE WHEN i < 70000 THEN printf('%08d', i) ELSE printf('long-%012d', i) END AS id, "
        "printf('%064x', i * 7) AS content_hash FROM range(70100) t(i)"
    )
    keys, hashes = _leaf_keys(con)
    expected = con.execute("SELECT id, content_hash FROM leaves").fetchall()
    assert [bytes(k).decode() for k in keys.tolist()] == [r[0] for r in expected]
    assert [bytes(h).decode() for h in hashes.tolist()] == [r[1] for r in expected]
    assert _leaf_keys(con, compact=True) is None  # ids that are not leaf ids: the caller reads them as they are
    con.execute(
        "CREATE OR REPLACE TABLE leaves AS SELECT printf('%032x', i * 3) AS id, printf('%064x', i * 7) AS content_hash "
        "FROM range(70100) t(i)"
    )
    expected = con.execute("SELECT id, content_hash FROM leaves").fetchall()
    compact = _leaf_keys(con, compact=True)  # leaf ids packed, hashes cut to 16 bytes, batch by batch
    assert compact is not None and compact[0].dtype == compact[1].dtype == np.dtype("S16")
    assert [k.ljust(16, b"\0") for k in compact[0].tolist()] == [bytes.fromhex(r[0]) for r in expected]
    assert [h.ljust(16, b"\0") for h in compact[1].tolist()] == [bytes.fromhex(r[1][:32]) for r in expected]
    con.execute("UPDATE leaves SET content_hash = 'not-hexadecimal-' || content_hash WHERE id = printf('%032x', 15)")
    assert _leaf_keys(con, compact=True) is None  # the caller reads whole hashes instead
    con.execute("DELETE FROM leaves")
    assert [len(a) for a in _leaf_keys(con)] == [0, 0]


def test_hash_prefixes_are_the_bytes_of_the_first_32_hex_digits() -> None:
    hashes = np.array([b"0f" * 32, b"AB" * 16 + b"00" * 16, b"zz" * 32, b"12" * 8], dtype="S64")
    prefix, valid = _hash_prefix(hashes)
    assert valid.tolist() == [True, True, False, False]  # not hexadecimal; too short
    assert prefix[0] == bytes.fromhex("0f" * 16) and prefix[1] == bytes.fromhex("ab" * 16)
    assert prefix[0] != prefix[1] and len(set(prefix[:2].tolist())) == 2
    assert _hash_prefix(np.array([b"ab" * 8], dtype="S16"))[1].tolist() == [False]


def _mean_of_index(memory: Memory) -> np.ndarray:
    """The unit mean of every leaf's vector, straight from the index."""
    rows = memory.index.query(
        "SELECT e.vec, e.dim FROM leaves l JOIN embeddings e ON e.content_hash = l.content_hash AND e.model = ?",
        [memory.vectors.model_id if memory.vectors else ""],
    )
    vectors = [vector_of(vec, dim) for vec, dim in rows]
    assert all(v is not None for v in vectors)
    total = np.sum(vectors, axis=0, dtype=np.float64)
    return total / np.linalg.norm(total)


@pytest.mark.parametrize("quantized", [False, True])
def test_mean_direction_is_the_unit_mean_of_the_live_vectors(
    vault: Path, monkeypatch: pytest.MonkeyPatch, quantized: bool
) -> None:
    from vaultmind.retrieval.signals import without_common

    rng = random.Random(5)
    for i in range(12):
        write(vault, f"n{i}.md", _note(rng))
    if quantized:
        monkeypatch.setattr(ResidentVectors, "CLUSTER_FROM", 1)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        assert memory.vectors is not None and memory.embedder is not None
        mean = memory.vectors.mean_direction()
        assert mean is not None and (memory.vectors._q8 is not None) == quantized
        assert float(mean @ _mean_of_index(memory)) > 0.9999
        write(vault, "n0.md", "# Note\n\nlantern lantern meadow falcon, a new paragraph\n")
        (vault / "n1.md").unlink()
        memory.sync_paths(["n0.md", "n1.md"])  # a save: the mean follows the rows
        after = memory.vectors.mean_direction()
        assert after is not None and float(after @ _mean_of_index(memory)) > 0.9999
        q = memory.embedder.embed(["budget harbor"])[0]
        out = without_common(q, after)
        assert abs(float(out @ after)) < 1e-5 and abs(float(np.linalg.norm(out)) - 1) < 1e-5
        assert without_common(q, None) is q


@pytest.mark.parametrize("chunk", [5, 1 << 20])
def test_posting_lists_give_back_every_term_s_rows_sorted_with_their_counts(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows past 65,536 take their high bits from runs: terms with none, one and several runs,
    empty terms, and (chunk 5) sorting a run of terms at a time, a term bigger than the chunk."""
    monkeypatch.setattr(postings, "SORT_CHUNK", chunk)
    rng = np.random.default_rng(3)
    sizes = [0, 1, 3, 0, 40, 2, 0, 900, 7, 1, 0]
    lists = [rng.choice(300_000, size=n, replace=False).astype(np.int32) for n in sizes]
    lists[5] = np.array([65_536, 65_535], dtype=np.int32)  # either side of a run's edge
    counts = [rng.integers(1, 250, size=len(r)).astype(np.uint8) for r in lists]
    bounds = np.concatenate(([0], np.cumsum([len(r) for r in lists]))).astype(np.int64)
    held = postings.PostingLists(bounds, np.concatenate(lists), np.concatenate(counts))
    for code, (rows, tfs) in enumerate(zip(lists, counts, strict=True)):
        got_rows, got_tfs = held.get(code)
        order = np.argsort(rows)
        assert got_rows.dtype == np.int32
        assert got_rows.tolist() == rows[order].tolist()
        assert got_tfs.tolist() == tfs[order].tolist()
    assert held.nbytes < bounds.nbytes + int(bounds[-1]) * (4 + 1)  # two bytes a row, not four


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads the open files from /proc")
def test_a_scratch_file_has_no_name_reads_back_what_was_written_and_goes_when_closed(tmp_path: Path) -> None:
    from vaultmind.index.scratch import ScratchFile

    scratch = ScratchFile(tmp_path, "vaultmind-test-")
    assert list(tmp_path.iterdir()) == [] and len(_scratch_files(tmp_path)) == 1
    scratch.write(0, b"0123456789")
    scratch.write(20, memoryview(np.arange(4, dtype=np.int8)).cast("B"))  # past the end: a hole of zeros
    assert scratch.read(5, 5) == b"56789" and scratch.read(10, 14) == b"\0" * 10 + bytes([0, 1, 2, 3])
    rows = np.zeros((2, 2), dtype=np.int8)
    scratch.read_into(20, rows.data)
    assert rows.tolist() == [[0, 1], [2, 3]]
    with pytest.raises(OSError, match="short"):
        scratch.read(22, 8)
    scratch.truncate()
    with pytest.raises(OSError):
        scratch.read(0, 1)
    scratch.close()
    assert _scratch_files(tmp_path) == []
    elsewhere = ScratchFile(tmp_path / "missing", "vaultmind-test-")  # no such folder: the system's temporary one
    elsewhere.write(0, b"x")
    assert elsewhere.read(0, 1) == b"x" and not (tmp_path / "missing").exists()
    elsewhere.close()


def test_a_scratch_file_reads_into_a_buffer_without_preadv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import vaultmind.index.scratch as scratch_module

    monkeypatch.setattr(scratch_module, "_read_into", scratch_module._pread_into)  # as where `os.preadv` is missing
    scratch = scratch_module.ScratchFile(tmp_path, "vaultmind-test-")
    scratch.write(3, bytes(range(10)))
    rows = np.zeros((2, 3), dtype=np.int8)
    scratch.read_into(5, rows.data)
    assert rows.tolist() == [[2, 3, 4], [5, 6, 7]]
    with pytest.raises(OSError, match="short"):
        scratch.read_into(10, np.zeros(8, dtype=np.int8).data)
    scratch.close()


def test_term_codes_number_terms_as_they_came_in_any_order() -> None:
    """Every term gets its place in the array it came in, whether that array was sorted by
    bytes (as DuckDB orders them) or not, chunked or not; prefixes, non-ASCII terms and
    unknown terms are told apart."""
    words = ["ab", "abc", "a", "zürich", "東京", "b", "", "abd"]
    for given in (sorted(words, key=str.encode), words):
        for array in (pa.array(given), pa.chunked_array([given[:3], given[3:]])):
            codes = postings.TermCodes(array)
            assert len(codes) == len(given)
            assert [codes.get(w) for w in given] == list(range(len(given)))
            assert [codes.get(w) for w in ("abcd", "aa", "zz", "東", "Ab", "a\udcff")] == [None] * 6
    assert postings.TermCodes(pa.array([], pa.string())).get("a") is None
    big = [f"t{i:05d}" for i in range(5000)]
    codes = postings.TermCodes(pa.array(big))
    assert codes.get("t04999") == 4999 and codes.get("t05000") is None and codes.nbytes < 5000 * 16


def test_a_postings_snapshot_gives_the_same_lists_back_only_under_its_key(tmp_path: Path) -> None:
    """Saved and read back, the lists and the term codes answer as before; a snapshot taken
    under another key, cut short, or not one at all is not used (and a damaged one is no error)."""
    rng = np.random.default_rng(5)
    sizes = [0, 3, 900, 1, 0, 40]
    lists = [rng.choice(200_000, size=n, replace=False).astype(np.int32) for n in sizes]
    counts = [rng.integers(1, 250, size=len(r)).astype(np.uint8) for r in lists]
    bounds = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    held = postings.PostingLists(bounds, np.concatenate(lists), np.concatenate(counts))
    words = ["zebra", "apple", "東京", "mango", "kiwi", "fig"]  # not sorted: the codes keep their order
    codes = postings.TermCodes(pa.array(words))
    path = tmp_path / "resident-postings.bin"
    postings.save_snapshot(path, "key-1", codes, held)
    assert not path.with_name(path.name + ".part").exists()
    found = postings.load_snapshot(path, "key-1")
    assert found is not None
    got_codes, got_lists = found
    assert [got_codes.get(w) for w in [*words, "pear"]] == [*range(len(words)), None]
    for code in range(len(sizes)):
        rows, tfs = held.get(code)
        got_rows, got_tfs = got_lists.get(code)
        assert got_rows.tolist() == rows.tolist() and got_tfs.tolist() == tfs.tolist()
    assert postings.load_snapshot(path, "key-2") is None
    assert postings.load_snapshot(tmp_path / "missing.bin", "key-1") is None
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) - 100])
    assert postings.load_snapshot(path, "key-1") is None
    path.write_bytes(b"\0" * 64)
    assert postings.load_snapshot(path, "key-1") is None
    empty = postings.PostingLists(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.uint8))
    postings.save_snapshot(path, "empty", postings.TermCodes(pa.array([], pa.string())), empty)
    found = postings.load_snapshot(path, "empty")
    assert found is not None and len(found[0]) == 0 and found[1].bounds.tolist() == [0]


def test_the_resident_postings_come_from_a_snapshot_of_the_same_postings_only(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load takes a snapshot of the postings beside the index; the next load of the same
    postings reads it instead of the index, and ranks the same. After an edit the snapshot no
    longer fits: the postings come from the index again (as SQL ranks them), and a new one is taken."""
    from vaultmind.index.leaf_postings import POSTINGS_SNAPSHOT
    from vaultmind.index.lexical import bm25, terms
    from vaultmind.index.resident import ResidentLeaves

    for i in range(8):
        write(vault, f"n{i}.md", f"# Note {i}\n\notter river budget {'lantern ' * i}meadow\n\nfalcon summit {i}\n")
    queries = [terms(q) for q in ("otter lantern", "falcon summit", "budget meadow river")]
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        snapshot = memory.index.path.parent / POSTINGS_SNAPSHOT
        assert not snapshot.exists()
        first = [memory.leaves.search(q, 20) for q in queries]
        assert snapshot.is_file()
        taken = snapshot.stat().st_mtime_ns

        def from_index(self: ResidentLeaves, pool: str | None) -> None:
            raise AssertionError("the postings were read from the index")

        with monkeypatch.context() as patched:
            patched.setattr(ResidentLeaves, "_load_postings", from_index)
            again = ResidentLeaves(memory.index)
            assert [again.search(q, 20) for q in queries] == first
        write(vault, "n3.md", "# Note 3\n\notter otter lantern, rewritten\n")
        memory.sync_paths(["n3.md"])
        fresh = ResidentLeaves(memory.index)
        for q in queries:
            got = fresh.search(q, 20)
            sql = bm25(memory.index.con, q, limit=20)
            assert [i for i, _ in got] == [i for i, _ in sql] and np.allclose([s for _, s in got], [s for _, s in sql])
        assert snapshot.stat().st_mtime_ns != taken


def test_clustered_rows_map_to_their_file_places_with_four_byte_numbers(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which place of the scratch file holds a row, and which row a place holds, are int32
    (half the bytes of the int64 they were: 3.3 MB at 50k notes); each maps back to the other,
    and rows read through them equal a load kept in memory."""
    with _static_vectors(vault, 7, 40) as (memory, model, queries):
        monkeypatch.setattr(ResidentVectors, "CLUSTER_FROM", 10)
        filed = ResidentVectors(memory.index, model)
        filed.search(queries[0], 5)
        assert filed._file is not None
        assert filed._order.dtype == np.int32 and filed._position.dtype == np.int32
        places = filed._position[filed._order]
        assert np.array_equal(places, np.arange(len(filed._order)))
        monkeypatch.setattr(vector_scan.RowFile, "append", _no_space)
        kept = ResidentVectors(memory.index, model)
        kept.search(queries[0], 5)
        assert kept._file is None
        rows = np.arange(filed._base, dtype=np.intp)
        assert np.array_equal(filed._block(rows), kept._block(rows))
        filed.close()


def _no_space(*_args: object) -> None:
    raise OSError(28, "No space left on device")
