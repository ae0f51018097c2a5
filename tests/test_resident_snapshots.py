"""The snapshots of the resident leaves and vectors beside the index: a process that asks a
question without a daemon reads them instead of the index when they were taken of the same
leaves and vectors, never when a note was saved or deleted since, ignores and replaces a
damaged one, and answers exactly as a load from the index does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vaultmind.cli.output import print_status
from vaultmind.config import load_config
from vaultmind.index import snapshot_file, vector_snapshot
from vaultmind.index.leaf_rows import LEAF_META_SQL
from vaultmind.index.resident import ResidentLeaves
from vaultmind.index.resident_vectors import ResidentVectors
from vaultmind.index.snapshot_file import (
    LEAVES_SNAPSHOT,
    POSTINGS_SNAPSHOT,
    SNAPSHOTS,
    VECTORS_SNAPSHOT,
    FileBytes,
    copy_bytes,
    load_arrays,
    save_arrays,
)
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory

from .conftest import write

QUESTIONS = ("what did we decide about the otter budget", "falcon summit lantern", "who talked about the meadow")
WHEN = "2024-06-01T12:00:00+00:00"


def _notes(vault: Path) -> None:
    for i in range(12):
        words = "otter budget" if i % 3 == 0 else "falcon summit" if i % 3 == 1 else "meadow lantern"
        write(vault, f"notes/n{i}.md", f"# Note {i}\n\n## Plan\n\nWe talked about the {words} {'again ' * i}on day {i}.\n\n"
              f"## Decisions\n\nThe {words} decision {i}: keep the river path.\n")  # fmt: skip


def _answers(vault: Path) -> list[list[tuple[str, float]]]:
    """Each question's walk, as a command asked without a daemon runs it: the index opened,
    brought up to date, the question answered, the index closed."""
    with Memory.open(load_config(vault)) as memory:
        memory.sync(changes_only=True)
        found = [memory.query("walk", {"query": q, "reference_time": WHEN})["hits"] for q in QUESTIONS]
    return [[(hit["node_id"], hit["score"]) for hit in hits] for hits in found]


def _snapshots(vault: Path) -> list[Path]:
    return [vault / ".vaultmind" / LEAVES_SNAPSHOT, vault / ".vaultmind" / VECTORS_SNAPSHOT]


def _not_from_the_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make a load from the index fail: what loads then came from the snapshots."""

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("loaded from the index")

    monkeypatch.setattr(ResidentLeaves, "_stream", refused)
    monkeypatch.setattr(ResidentVectors, "_load_from_index", refused)


@pytest.fixture(params=[False, True], ids=["float32", "int8"])
def quantized(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Vectors held as float32, or as int8 rows with their first pass (as from 65k leaves)."""
    if request.param:
        monkeypatch.setattr(ResidentVectors, "QUANTIZE_FROM", 8)
    return bool(request.param)


def test_a_second_question_reads_the_snapshots_and_answers_the_same(vault: Path, quantized: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    _notes(vault)
    first = _answers(vault)
    assert all(first) and all(path.is_file() for path in _snapshots(vault))
    with monkeypatch.context() as patched:
        _not_from_the_index(patched)
        assert _answers(vault) == first
    for path in _snapshots(vault):
        path.unlink()
    assert _answers(vault) == first  # from the index again: the same


def test_the_snapshot_rows_are_those_a_load_from_the_index_holds(vault: Path, quantized: bool) -> None:
    _notes(vault)
    _answers(vault)  # snapshots taken
    with Memory.open(load_config(vault)) as memory:
        memory.vectors.prepare()
        taken = memory.vectors
        for path in _snapshots(vault):
            path.unlink()
        fresh = ResidentVectors(memory.index, taken.model_id)
        fresh.prepare()  # from the index
        assert (taken._q8 is not None) == quantized == (fresh._q8 is not None)
        if quantized:
            assert taken._q8 is not None and fresh._q8 is not None and taken._head is not None and fresh._head is not None
            assert np.array_equal(taken._q8, fresh._q8) and np.array_equal(taken._scale, fresh._scale)
            assert np.array_equal(taken._head.axes, fresh._head.axes)
            assert all(np.array_equal(a, b) for a, b in zip(taken._head.blocks, fresh._head.blocks, strict=True))
        else:
            assert np.array_equal(taken._matrix, fresh._matrix)
        assert taken.mean_direction() is not None
        assert np.array_equal(taken.mean_direction(), fresh.mean_direction())  # type: ignore[arg-type]
        leaves = ResidentLeaves(memory.index)  # from the index (the snapshot is gone)
        ids = sorted(leaves.rows(leaves.of_notes([f"notes/n{i}.md" for i in range(12)])["notes/n1.md"]))
        again = ResidentLeaves(memory.index)  # from the snapshot the load above took
        assert again.rows(ids) == leaves.rows(ids) and again.texts(ids) == leaves.texts(ids)
        assert again.authors() == leaves.authors() and again.first_time() == leaves.first_time()


def test_a_note_saved_or_deleted_between_two_questions_is_found_then_gone(vault: Path, quantized: bool) -> None:
    _notes(vault)
    before = _answers(vault)
    taken = [path.read_bytes() for path in _snapshots(vault)]
    write(vault, "notes/new.md", "# Zephyrine\n\n## Plan\n\nThe otter budget zephyrine decision: ship the falcon summit.\n")
    with_note = _answers(vault)
    assert with_note != before
    assert [path.read_bytes() for path in _snapshots(vault)] != taken  # stale: not used, taken again
    with Memory.open(load_config(vault)) as memory:
        memory.sync(changes_only=True)
        hits = memory.query("search", {"query": "zephyrine"})["hits"]
        assert [hit["note_path"] for hit in hits][:1] == ["notes/new.md"]
    (vault / "notes/new.md").unlink()
    assert _answers(vault) == before
    with Memory.open(load_config(vault)) as memory:
        memory.sync(changes_only=True)
        assert "notes/new.md" not in {hit["note_path"] for hit in memory.query("search", {"query": "zephyrine"})["hits"]}


@pytest.mark.parametrize("damage", ["garbage", "cut", "emptied"])
def test_a_damaged_snapshot_is_ignored_and_replaced(vault: Path, damage: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ResidentVectors, "QUANTIZE_FROM", 8)
    _notes(vault)
    first = _answers(vault)
    for path in _snapshots(vault):
        data = path.read_bytes()
        path.write_bytes({"garbage": b"\x00not a snapshot" * 40, "cut": data[: len(data) * 2 // 3], "emptied": b""}[damage])
    assert _answers(vault) == first  # from the index, and taken again whole
    with monkeypatch.context() as patched:
        _not_from_the_index(patched)
        assert _answers(vault) == first


def test_snapshot_files_keep_shapes_copy_file_bytes_and_refuse_other_keys(tmp_path: Path) -> None:
    source = tmp_path / "source.bin"
    source.write_bytes(b"0123456789" * 1000)
    path = tmp_path / "snap.bin"
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    with source.open("rb") as f:
        save_arrays(path, b"test 1\n", "k", {"m": matrix, "bytes": FileBytes(f.fileno(), 5, 9000), "v": np.arange(3)})
    copied: list[bytes] = []

    def copier(found: FileBytes) -> None:
        copied.append(__import__("os").pread(found.fd, found.size, found.offset))

    got = load_arrays(path, b"test 1\n", "k", "test", {"bytes": copier})
    assert got is not None and np.array_equal(got["m"], matrix) and got["v"].tolist() == [0, 1, 2]
    assert copied == [(b"0123456789" * 1000)[5:9005]]
    assert load_arrays(path, b"test 1\n", "other", "test") is None
    assert load_arrays(path, b"test 2\n", "k", "test") is None
    path.write_bytes(path.read_bytes()[:-20])
    assert load_arrays(path, b"test 1\n", "k", "test", {"bytes": copier}) is None
    assert not list(tmp_path.glob("*.part"))


@pytest.mark.slow
def test_the_command_line_without_a_daemon_sees_a_note_saved_between_two_questions(vault: Path) -> None:
    (vault / ".vaultmind").mkdir()  # a vault the command line takes
    _notes(vault)

    def ask(question: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "vaultmind", "query", "search", question, "--vault", str(vault)],
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        return done.stdout

    first = ask("otter budget")
    assert all(path.is_file() for path in _snapshots(vault))
    assert ask("otter budget") == first
    write(vault, "notes/new.md", "# Zephyrine\n\nThe otter budget zephyrine plan.\n")
    assert "notes/new.md" in ask("zephyrine")
    (vault / "notes/new.md").unlink()
    assert "notes/new.md" not in ask("zephyrine") and ask("otter budget") == first


def test_vectors_loaded_while_there_were_none_take_the_first_ones_a_save_adds(vault: Path) -> None:
    """A snapshot taken of no vectors (an empty vault) holds no sum: the first vectors a save
    adds, in that process or in the next one that reads the snapshot, set the width."""
    (vault / ".vaultmind").mkdir()
    for round_ in range(2):  # the first takes the snapshot, the second reads it
        with Memory.open(load_config(vault)) as memory:
            memory.sync(changes_only=True)
            memory.query("walk", {"query": "otter", "reference_time": WHEN})  # loads the leaves and vectors: none
            assert memory.vectors.mean_direction() is None
            assert (vault / ".vaultmind" / VECTORS_SNAPSHOT).is_file()
            write(vault, f"notes/n{round_}.md", f"# Otter {round_}\n\nThe otter budget, round {round_}.\n")
            memory.sync(changes_only=True)  # the resident vectors take the note's
            hits = memory.query("walk", {"query": "otter budget", "reference_time": WHEN})["hits"]
            assert f"notes/n{round_}.md" in {hit["note_path"] for hit in hits}
            assert memory.vectors.mean_direction() is not None
        (vault / f"notes/n{round_}.md").unlink()


_ADDRESSED = 'to="Bob <bob@example.com>; Carol <carol@example.com>" cc="Dan <dan@example.com>"'  # as `_letter` writes it


def _letter(vault: Path, to: tuple[str, ...], cc: tuple[str, ...]) -> None:
    mail = SourceMeta("email", "mbox:alice/inbox", "mbox/alice/inbox", "Budget")
    letter = Message("<x1@example.com>", "Alice <alice@example.com>", "2024-03-05T10:00:00Z",
                     "The otter budget review moves to Friday.", subject="Budget", to=to, cc=cc)  # fmt: skip
    write(vault, "sources/email/b.md", render_source_note(mail, [letter]))


def _loaded_rows(vault: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every leaf's row as a process's resident leaves hold it, and as the index holds it."""
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync(changes_only=True)
        with memory.index.lock:
            table = memory.index.con.execute(LEAF_META_SQL).to_arrow_table()
        expected = {row["id"]: row for row in table.to_pylist()}
        return memory.leaves.rows(list(expected)), expected


def test_an_address_moved_between_to_and_cc_is_not_read_from_the_snapshot(vault: Path) -> None:
    """A message whose text stays while an address moves from its To to its Cc changes only
    the leaf's two address lists; DuckDB's `hash()` of two lists side by side is that of their
    elements in a row (["b", "c"], ["d"] hashes as ["b"], ["c", "d"]), so a key of them as
    they are did not change, and the next load showed the old addresses."""
    (vault / ".vaultmind").mkdir()
    _letter(vault, ("Bob <bob@example.com>", "Carol <carol@example.com>"), ("Dan <dan@example.com>",))
    held, expected = _loaded_rows(vault)
    assert held == expected and (vault / ".vaultmind" / LEAVES_SNAPSHOT).is_file()
    note = vault / "sources/email/b.md"  # the address moved by hand, in Obsidian: the front matter stays
    moved = 'to="Bob <bob@example.com>" cc="Carol <carol@example.com>; Dan <dan@example.com>"'
    note.write_text(note.read_text(encoding="utf-8").replace(_ADDRESSED, moved), encoding="utf-8")
    held, expected = _loaded_rows(vault)
    assert [row["mail_cc"] for row in expected.values() if row["mail_cc"]] == [["Carol <carol@example.com>", "Dan <dan@example.com>"]]
    assert held == expected


def test_a_part_file_a_killed_writer_left_goes_with_the_next_write(vault: Path) -> None:
    """A process killed while it wrote a snapshot leaves its part file (`<name>.<pid>.part`, as
    large as the snapshot); the next write deletes it, and the one name all writers once
    shared, but not the part file of a writer still running."""
    (vault / ".vaultmind").mkdir()
    _notes(vault)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    folder = vault / ".vaultmind"
    with subprocess.Popen(["sleep", "60"]) as running:
        try:
            left = [folder / f"{name}.{gone.stdout.strip()}.part" for name in SNAPSHOTS] + [folder / f"{POSTINGS_SNAPSHOT}.part"]
            writing = folder / f"{LEAVES_SNAPSHOT}.{running.pid}.part"
            for part in [*left, writing]:
                part.write_bytes(b"\0" * 4096)
            _answers(vault)  # loads from the index: every snapshot written
            assert all((folder / name).is_file() for name in SNAPSHOTS)
            assert [part.name for part in left if part.exists()] == [] and writing.exists()
        finally:
            running.kill()


def test_bytes_are_copied_where_the_system_does_not_copy_them_file_to_file(tmp_path: Path) -> None:
    """`copy_file_range` fails between two file systems (EXDEV; ENOSYS in some sandboxes,
    EOPNOTSUPP on some file systems): the bytes are then copied through a buffer, and the
    snapshot is still written and read."""
    shared = Path("/dev/shm")
    if not shared.is_dir() or shared.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("needs a second file system (/dev/shm)")
    data = bytes(range(256)) * 300
    source = shared / f"vaultmind-test-{os.getpid()}.bin"
    try:
        source.write_bytes(data)
        with source.open("rb") as f, (tmp_path / "copy.bin").open("w+b") as out:
            copy_bytes(FileBytes(f.fileno(), 7, len(data) - 7), out.fileno(), 3)
        assert (tmp_path / "copy.bin").read_bytes() == b"\0" * 3 + data[7:]
    finally:
        source.unlink(missing_ok=True)


def test_a_snapshot_a_machine_of_the_other_byte_order_wrote_reads_the_same(vault: Path, quantized: bool) -> None:
    """A vault copied from a big-endian machine brings snapshots whose arrays say so (their
    types are `>i8`, `>f4`, …): read here they hold the same values, times included (a time
    column taken as this machine's `datetime64` from the other order's bytes was garbage)."""
    write(vault, "notes/dated.md", "---\ndate: 2024-03-04\n---\n# Dated\n\nThe otter budget, on a day.\n")
    _notes(vault)
    first = _answers(vault)
    for path in _snapshots(vault):
        data = path.read_bytes()
        magic = data[: data.index(b"\n") + 1]
        size = int.from_bytes(data[len(magic) : len(magic) + 8], "little")
        key = json.loads(data[len(magic) + 8 : len(magic) + 8 + size])["key"]
        arrays = load_arrays(path, magic, key, "test")
        assert arrays is not None
        swapped = {k: a.byteswap().view(a.dtype.newbyteorder(">")) if a.dtype.byteorder == "=" else a for k, a in arrays.items()}
        assert any(a.dtype.byteorder == ">" for a in swapped.values())
        save_arrays(path, magic, key, swapped)  # as a big-endian machine writes its arrays
    with Memory.open(load_config(vault)) as memory:
        taken = ResidentLeaves(memory.index)  # from the snapshot
        ids = sorted(leaf for found in taken.of_notes(["notes/dated.md", "notes/n1.md"]).values() for leaf in found)
        rows, first_time = taken.rows(ids), taken.first_time()
        for path in _snapshots(vault):
            path.unlink()
        fresh = ResidentLeaves(memory.index)  # from the index
        assert first_time is not None and first_time == fresh.first_time()
        assert rows == fresh.rows(ids)
    assert _answers(vault) == first


def test_no_snapshot_takes_the_room_the_index_needs(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a disk that a snapshot would leave with less than `KEEP_FREE_BYTES` free, none is
    written (the index's next write, a checkpoint, a rebuild need that room), and questions
    are answered as with them, from the index."""
    _notes(vault)
    with_snapshots = _answers(vault)
    for name in SNAPSHOTS:
        (vault / ".vaultmind" / name).unlink()
    monkeypatch.setattr(snapshot_file, "KEEP_FREE_BYTES", shutil.disk_usage(vault).free + (1 << 30), raising=False)
    assert _answers(vault) == with_snapshots
    assert not [path.name for path in (vault / ".vaultmind").iterdir() if "resident-" in path.name]


def test_status_says_the_size_of_the_snapshots(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`status --json` says the snapshots' size beside the index's, and so does `vaultmind
    status`: they take about as much disk again as the index (~0.4 GB at 50k notes, whose
    vectors, clustered, have none)."""
    _notes(vault)
    _answers(vault)
    with Memory.open(load_config(vault)) as memory:
        index = memory.status()["index"]
        print_status(memory.status())
    size = sum((vault / ".vaultmind" / name).stat().st_size for name in SNAPSHOTS)
    assert index["snapshot_bytes"] == size > 0
    assert f"snapshots {size / 1e6:.1f} MB;" in capsys.readouterr().out


def test_clustered_vectors_neither_key_nor_keep_a_snapshot(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Vectors clustered into a scratch file (from `CLUSTER_FROM`: a vault of ~21k notes or
    more) have no snapshot: their load does not work out its key (~0.2 s at 50k notes, every
    load, for nothing), and deletes the snapshot taken while they were fewer (never to match)."""
    _notes(vault)
    _answers(vault)
    assert (vault / ".vaultmind" / VECTORS_SNAPSHOT).is_file()  # taken while the vectors were few
    monkeypatch.setattr(ResidentVectors, "QUANTIZE_FROM", 8)
    monkeypatch.setattr(ResidentVectors, "CLUSTER_FROM", 8)
    keyed: list[str] = []
    key_of = vector_snapshot.vectors_key

    def counted(*args: Any) -> str:
        keyed.append(key := key_of(*args))
        return key

    monkeypatch.setattr(vector_snapshot, "vectors_key", counted)
    for _ in range(2):
        assert all(_answers(vault))  # (clustered int8 rows: not the float32 scores of `first`)
        assert not (vault / ".vaultmind" / VECTORS_SNAPSHOT).exists()
    assert len(keyed) == 1  # the first load, which found the old snapshot: not again


def _keys(vault: Path) -> dict[str, str]:
    """The key each snapshot beside the index was taken under, by file name."""
    keys = {}
    for name in SNAPSHOTS:
        data = (vault / ".vaultmind" / name).read_bytes()
        start = data.index(b"\n") + 1
        size = int.from_bytes(data[start : start + 8], "little")
        keys[name] = json.loads(data[start + 8 : start + 8 + size])["key"]
    return keys


def test_every_snapshot_s_key_follows_vaultmind_s_version(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The postings' key is made by the same function as the leaves' and the vectors'
    (`snapshot_key`): what makes one stale (another version, another migration) makes all."""
    _notes(vault)
    _answers(vault)
    before = _keys(vault)
    _answers(vault)
    assert _keys(vault) == before  # (read, not taken again)
    monkeypatch.setattr(snapshot_file, "__version__", "0.0.0-other")
    _answers(vault)
    after = _keys(vault)
    assert [name for name in SNAPSHOTS if after[name] == before[name]] == []


def test_the_postings_key_changes_with_a_save_a_rename_and_a_delete(vault: Path) -> None:
    """Each change to the notes makes the postings' snapshot stale (taken again under a new key)."""
    _notes(vault)
    _answers(vault)
    seen = [_keys(vault)[POSTINGS_SNAPSHOT]]
    for change in ("save", "rename", "delete"):
        if change == "save":
            write(vault, "notes/n4.md", "# Note 4\n\n## Plan\n\nWe talked about the heron pier on day 4.\n")
        elif change == "rename":
            (vault / "notes/n5.md").rename(vault / "notes/moved.md")
        else:
            (vault / "notes/n6.md").unlink()
        _answers(vault)
        seen.append(_keys(vault)[POSTINGS_SNAPSHOT])
    assert len(set(seen)) == len(seen), seen
