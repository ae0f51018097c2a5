"""An index this user may not write (another user's, or made read-only) is sound: every command
says so, naming the file and what to do, and leaves it where it is — it is not moved aside
as a broken one and replaced by an empty index."""

from __future__ import annotations

import contextlib
import hashlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_main, write
from tests.unprivileged import can_drop_privileges, run_unprivileged
from vaultmind.errors import VaultError
from vaultmind.index.quarantine import QUARANTINE_DIR, QUARANTINE_KEEP, quarantine

NOT_WRITABLE_SCENARIO = """
import contextlib, hashlib, io, json, os
from vaultmind.cli.main import main

os.environ["VAULTMIND_EMBED_PROVIDER"] = "none"


def run(*args):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([*args, "--vault", str(vault)])
    return code, err.getvalue()


assert main(["init", str(vault)]) == 0
(vault / "badgers.md").write_text("# Badgers\\n\\nThe badger digs at night.\\n")
state = vault / ".vaultmind"
index = state / "index.duckdb"
assert run("reindex")[0] == 0
digest = hashlib.sha256(index.read_bytes()).hexdigest()
index.chmod(0o444)
state.chmod(0o555)  # nor can a lock file be made beside it
out = {"index": str(index), "lock": str(state / "daemon.lock")}
for name, args in (("status", ["status"]), ("query", ["query", "walk", "badger"]), ("serve", ["serve"])):
    out[name] = run(*args)
state.chmod(0o755)
out["same_index"] = hashlib.sha256(index.read_bytes()).hexdigest() == digest
out["state"] = sorted(p.name for p in state.iterdir())
print(json.dumps(out))
"""


@pytest.mark.skipif(not can_drop_privileges(), reason="needs setpriv to drop root privileges")
def test_an_index_you_may_not_write_is_named_and_left_where_it_is() -> None:
    out = run_unprivileged(NOT_WRITABLE_SCENARIO)
    for name in ("status", "query"):
        code, err = out[name]
        assert code == 1, err
        assert (
            f"vaultmind: error: {out['index']}: the index cannot be written by you (permission denied)" in err
        ), err
        assert (
            "vaultmind: hint: run vaultmind as the user who owns the vault, or give yourself write access"
            in err
        )
        assert "the index is left as it is" in err and "Traceback" not in err
    code, err = out["serve"]
    assert code == 1 and f"vaultmind: error: {out['lock']}: permission denied" in err, err
    assert "Traceback" not in err
    assert out["same_index"], "the index was left as it was"
    assert "quarantine" not in out["state"], out["state"]


def test_a_permission_error_outside_the_index_asks_for_access_not_for_the_vaults_owner() -> None:
    """A file under `.vaultmind/` the user may not write is the vault's owner's to fix; an export
    the user may not read is not (the hint spoke of write access to every file)."""
    from vaultmind.errors import storage_error

    inside = storage_error(PermissionError(13, "Permission denied", "/v/.vaultmind/daemon.lock"))
    outside = storage_error(PermissionError(13, "Permission denied", "/exports/chat.json"))
    assert inside is not None and outside is not None
    assert "run vaultmind as the user who owns the vault" in str(inside.hint)
    assert "owns the vault" not in str(outside.hint) and "give yourself access to this file" in str(outside.hint)


def _chattr(flag: str, *paths: Path) -> bool:
    """`chattr +i`/`-i` (needs root and a file system that has it); whether it worked."""
    try:
        return subprocess.run(["chattr", flag, *map(str, paths)], capture_output=True, timeout=30).returncode == 0
    except OSError:
        return False


@contextlib.contextmanager
def _immutable(*paths: Path) -> Iterator[None]:
    """The files made immutable (renaming one fails with EPERM, "Operation not permitted", as a
    file macOS's privacy protection guards does), then mutable again."""
    if not _chattr("+i", *paths):
        pytest.skip("needs chattr +i (root, on a file system that has it)")
    try:
        yield
    finally:
        _chattr("-i", *paths)


def test_an_index_refused_with_operation_not_permitted_is_left_where_it_is_and_never_copied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """EPERM is an access error as EACCES is: every command says the index cannot be written and
    leaves it as it is. It was taken for a broken file: each command copied it whole into
    quarantine/ (the rename failed, the copy stayed), beyond the copies kept."""
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    vault = tmp_path / "v"
    run_main(capsys, "init", str(vault))
    write(vault, "badgers.md", "# Badgers\n\nThe badger digs at night.\n")
    assert run_main(capsys, "reindex", "--vault", str(vault))[0] == 0
    index = vault / ".vaultmind" / "index.duckdb"
    before = hashlib.sha256(index.read_bytes()).hexdigest()
    with _immutable(index):
        for _ in range(QUARANTINE_KEEP + 1):
            code, _, err = run_main(capsys, "status", "--vault", str(vault))
            assert code == 1 and "the index cannot be written by you" in err, err
            assert "Operation not permitted" in err and "the index is left as it is" in err
    assert not (index.parent / QUARANTINE_DIR).exists()
    assert hashlib.sha256(index.read_bytes()).hexdigest() == before


def test_a_quarantine_that_cannot_move_a_file_moves_nothing_and_copies_nothing(tmp_path: Path) -> None:
    """A broken index whose WAL will not move: the index file goes back beside it (the WAL left
    alone would be replayed into the fresh index), no copy is made, and the refusal is said.
    A quarantine that can move keeps the last `QUARANTINE_KEEP` copies."""
    path = tmp_path / "index.duckdb"
    wal = Path(f"{path}.wal")
    path.write_bytes(b"not an index")
    wal.write_bytes(b"not a log")
    qdir = tmp_path / QUARANTINE_DIR
    with _immutable(wal), pytest.raises(VaultError, match="cannot be written by you"):
        quarantine(path)
    assert path.read_bytes() == b"not an index" and wal.read_bytes() == b"not a log"
    assert list(qdir.iterdir()) == []
    for _ in range(QUARANTINE_KEEP + 1):
        quarantine(path)
        path.write_bytes(b"not an index")
    kept = sorted(p.name for p in qdir.iterdir())
    assert kept == [f"index-{n}.duckdb" for n in range(2, QUARANTINE_KEEP + 2)], kept


@contextlib.contextmanager
def _folder_on_another_file_system() -> Iterator[Path]:
    """A folder on a file system other than the tests' (`/dev/shm`, a tmpfs): a rename into it
    fails with "Invalid cross-device link"."""
    import shutil
    import tempfile

    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == Path(tempfile.gettempdir()).stat().st_dev:
        pytest.skip("needs /dev/shm on a file system of its own")
    folder = Path(tempfile.mkdtemp(prefix="vaultmind-quarantine-", dir=shm))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_broken_index_is_moved_into_a_quarantine_folder_linked_to_another_disk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`.vaultmind/quarantine` a link to a folder on another disk, where no rename reaches: the
    broken index and its WAL are moved there all the same (copied, then removed), and the
    command goes on with a fresh index (it failed with a traceback, the index left in place for
    every command to fail on)."""
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    vault = tmp_path / "vault"
    write(vault, "kayak.md", "# Kayak\n\nThe kayak trip is on Saturday.\n")
    assert run_main(capsys, "init", "--existing", str(vault))[0] == 0
    index = vault / ".vaultmind" / "index.duckdb"
    with _folder_on_another_file_system() as elsewhere:
        (index.parent / QUARANTINE_DIR).symlink_to(elsewhere, target_is_directory=True)
        index.write_bytes(b"not an index")
        Path(f"{index}.wal").write_bytes(b"not a log")
        code, out, err = run_main(capsys, "status", "--vault", str(vault), "--json")
        assert code == 0, err
        assert "moved to" in str(out["index"]["notice"]), out["index"]
        assert (elsewhere / "index-1.duckdb").read_bytes() == b"not an index"
        assert (elsewhere / "index-1.duckdb.wal").read_bytes() == b"not a log"
        assert index.read_bytes() != b"not an index" and not Path(f"{index}.wal").exists()
        code, out, err = run_main(capsys, "sync", "--vault", str(vault), "--json")
        assert code == 0, err
        assert sorted(p.name for p in elsewhere.iterdir()) == ["index-1.duckdb", "index-1.duckdb.wal"]


def test_a_file_that_will_not_move_to_another_disk_leaves_no_copy_there(tmp_path: Path) -> None:
    """Across disks a move is a copy and a removal: a WAL that cannot be removed (immutable)
    takes its copy back, and the index file moved before it comes back beside it."""
    path = tmp_path / "index.duckdb"
    wal = Path(f"{path}.wal")
    path.write_bytes(b"not an index")
    wal.write_bytes(b"not a log")
    with _folder_on_another_file_system() as elsewhere:
        (tmp_path / QUARANTINE_DIR).symlink_to(elsewhere, target_is_directory=True)
        with _immutable(wal), pytest.raises(VaultError, match="cannot be written by you"):
            quarantine(path)
        assert path.read_bytes() == b"not an index" and wal.read_bytes() == b"not a log"
        assert list(elsewhere.iterdir()) == []


def test_ctrl_c_while_a_quarantine_copies_to_another_disk_puts_back_what_was_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while the WAL is copied to another disk (the index file moved before it): the
    index file comes back beside its WAL, and no partial copy is left. (The index file stayed
    moved: the next open made an empty index and replayed the old WAL into it.)"""
    import shutil

    path = tmp_path / "index.duckdb"
    wal = Path(f"{path}.wal")
    path.write_bytes(b"not an index")
    wal.write_bytes(b"not a log")
    copy = shutil.copyfile

    def copy_then_ctrl_c(src: Path, dst: Path) -> object:
        copied = copy(src, dst)
        if str(src).endswith(".wal"):
            raise KeyboardInterrupt
        return copied

    with _folder_on_another_file_system() as elsewhere:
        (tmp_path / QUARANTINE_DIR).symlink_to(elsewhere, target_is_directory=True)
        monkeypatch.setattr(shutil, "copyfile", copy_then_ctrl_c)
        with pytest.raises(KeyboardInterrupt):
            quarantine(path)
        assert path.read_bytes() == b"not an index" and wal.read_bytes() == b"not a log"
        assert list(elsewhere.iterdir()) == []
