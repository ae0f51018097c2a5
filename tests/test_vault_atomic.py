from __future__ import annotations

from pathlib import Path

from vaultmind.vault.atomic import write_atomic


def test_a_file_whose_name_nearly_fills_the_limit_is_written_and_overwritten(tmp_path: Path) -> None:
    """`write_atomic` writes beside the target first: a temporary name of the target's name and
    30 bytes more made every target over ~225 bytes fail with "File name too long"."""
    for name in ("n" * 251 + ".md", "日" * 84 + ".md"):  # 254 and 255 bytes
        target = tmp_path / name
        write_atomic(target, b"first", overwrite=False)
        write_atomic(target, b"second", overwrite=True)
        assert target.read_bytes() == b"second"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["n" * 251 + ".md", "日" * 84 + ".md"])
