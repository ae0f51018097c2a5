from __future__ import annotations

import os
import time
from pathlib import Path

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.vault.atomic import is_temp_name, write_atomic


def test_a_file_whose_name_nearly_fills_the_limit_is_written_and_overwritten(tmp_path: Path) -> None:
    """`write_atomic` writes beside the target first: a temporary name of the target's name and
    30 bytes more made every target over ~225 bytes fail with "File name too long"."""
    for name in ("n" * 251 + ".md", "日" * 84 + ".md"):  # 254 and 255 bytes
        target = tmp_path / name
        write_atomic(target, b"first", overwrite=False)
        write_atomic(target, b"second", overwrite=True)
        assert target.read_bytes() == b"second"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["n" * 251 + ".md", "日" * 84 + ".md"])


def test_a_sync_removes_the_temporary_files_a_crash_left_and_nothing_else(tmp_path: Path) -> None:
    """A write killed between its temporary file and the rename leaves `.{name}.{hex}.vaultmind-tmp`
    behind; the next whole-vault sync (a `sync`, the daemon's start) removes it once it is a
    minute old. A younger one (a write in progress) and every name not exactly of that form —
    a user's file, a symlink — stay."""
    vault = tmp_path / "vault"
    (vault / ".vaultmind").mkdir(parents=True)
    (vault / "sources").mkdir()
    write_atomic(vault / "a.md", b"# A\n\nThe heron nests by the river.\n", overwrite=False)
    hour_ago = time.time() - 3600
    left = [".a.md.0123456789ab.vaultmind-tmp", "sources/.2024-03-04.md.a1b2c3d4e5f6.vaultmind-tmp"]
    fresh = ".a.md.ffffffffffff.vaultmind-tmp"
    users = [
        ".a.md.vaultmind-tmp",  # no random part
        "a.md.0123456789ab.vaultmind-tmp",  # not hidden
        ".a.md.0123456789AB.vaultmind-tmp",  # upper case: not vaultmind's hex
        ".a.md.0123456789ab.vaultmind-tmp.bak",
        ".a.md.0123456789a.vaultmind-tmp",  # eleven digits
    ]
    for rel in [*left, fresh, *users]:
        (vault / rel).write_bytes(b"half a note")
    (vault / "sources" / ".link.md.abcdefabcdef.vaultmind-tmp").symlink_to(vault / users[0])
    for rel in [*left, *users]:
        os.utime(vault / rel, (hour_ago, hour_ago))
    os.utime(vault / "sources" / ".link.md.abcdefabcdef.vaultmind-tmp", (hour_ago, hour_ago), follow_symlinks=False)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        assert memory.sync().added == 1
    for rel in left:
        assert not (vault / rel).exists(), rel
    for rel in [fresh, *users, "sources/.link.md.abcdefabcdef.vaultmind-tmp"]:
        assert (vault / rel).is_file(), rel
    assert is_temp_name(fresh) and not any(map(is_temp_name, users))
