"""The commands vaultmind's messages name, pasted into a shell as they are, run on the vault
the user named — also when its path has spaces and letters beyond ASCII."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from .conftest import run_main, write

_NAMED = re.compile(r"`(vaultmind [^`]+)`|^next: (vaultmind .+)$", re.M)


def _named_commands(text: str) -> list[list[str]]:
    """Every vaultmind command line the text names, split as a POSIX shell splits it."""
    return [shlex.split(a or b)[1:] for a, b in _NAMED.findall(text)]


@pytest.fixture
def spaced(tmp_path: Path) -> Path:
    return tmp_path / "My Notes — Zürich" / "vault ü"


def test_the_next_step_init_names_runs_on_a_vault_whose_path_has_spaces(
    capsys: pytest.CaptureFixture[str], spaced: Path
) -> None:
    code, out, _ = run_main(capsys, "init", str(spaced))
    assert code == 0
    assert _named_commands(out) == [["reindex", "--vault", str(spaced)]]
    assert run_main(capsys, *_named_commands(out)[0])[0] == 0


def test_the_commands_status_and_sync_name_run_on_a_vault_whose_path_has_spaces(
    capsys: pytest.CaptureFixture[str], spaced: Path
) -> None:
    assert run_main(capsys, "init", str(spaced))[0] == 0
    code, out, _ = run_main(capsys, "status", "--vault", str(spaced))
    assert code == 0
    assert _named_commands(out) == [["reindex", "--vault", str(spaced)]]

    write(spaced, "Ideas/plan.md", "# Plan\n\nBuy a kayak.\n")
    (spaced / "Ideas" / "broken.md").write_bytes(b"# Broken\n\n\xff\xfe not UTF-8 \xc3\x28\n")
    code, out, _ = run_main(capsys, "sync", "--vault", str(spaced))
    assert code == 0 and "skipped or with warnings" in out, out
    assert _named_commands(out) == [["status", "--vault", str(spaced)]]
    code, out, _ = run_main(capsys, *_named_commands(out)[0])
    assert code == 0 and "broken.md" in out

