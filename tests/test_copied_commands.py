"""The commands vaultmind's messages name, pasted into a shell as they are, run on the vault
the user named — also when its path has spaces and letters beyond ASCII."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from vaultmind.cli.output import PROBLEMS_SHOWN
from vaultmind.config import load_config
from vaultmind.memory import Memory

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



def test_a_query_of_an_index_an_older_version_built_says_so_and_how_to_rebuild_it(
    capsys: pytest.CaptureFixture[str], spaced: Path
) -> None:
    """`status` said "rebuild pending"; a query answered from the old rows without a word."""
    write(spaced, "Ideas/plan.md", "# Plan\n\nBuy a kayak before the summer.\n")
    assert run_main(capsys, "init", "--existing", str(spaced))[0] == 0
    assert run_main(capsys, "reindex", "--vault", str(spaced))[0] == 0
    with Memory.open(load_config(spaced)) as memory:  # what a migration asking for a rebuild leaves
        memory.index.con.execute("INSERT INTO meta VALUES ('needs_rebuild', '1')")
    code, out, err = run_main(capsys, "query", "search", "kayak", "--vault", str(spaced))
    assert code == 0 and "Ideas/plan.md" in out
    assert "built by an older vaultmind" in err
    assert _named_commands(err) == [["sync", "--vault", str(spaced)], ["serve", "--vault", str(spaced)]]
    assert run_main(capsys, *_named_commands(err)[0])[0] == 0
    code, out, err = run_main(capsys, "query", "search", "kayak", "--vault", str(spaced))
    assert code == 0 and "Ideas/plan.md" in out and "older vaultmind" not in err


def test_the_listing_status_names_for_more_problems_than_it_shows_runs_on_the_vault(
    capsys: pytest.CaptureFixture[str], spaced: Path
) -> None:
    assert run_main(capsys, "init", str(spaced))[0] == 0
    for n in range(PROBLEMS_SHOWN + 2):
        (spaced / f"broken {n}.md").write_bytes(b"# Broken\n\n\xff\xfe not UTF-8\n")
    assert run_main(capsys, "sync", "--vault", str(spaced))[0] == 0
    code, out, _ = run_main(capsys, "status", "--vault", str(spaced))
    assert code == 0 and "… and 2 more" in out
    (listing,) = _named_commands(out)
    assert listing == ["status", "--vault", str(spaced), "--json"]
    code, data, _ = run_main(capsys, *listing)
    assert code == 0 and len(data["problems"]) == PROBLEMS_SHOWN + 2


def test_the_commands_tree_names_run_on_a_vault_whose_path_has_spaces(
    capsys: pytest.CaptureFixture[str], spaced: Path
) -> None:
    """`tree` named `vaultmind flush` and `vaultmind tree` bare: pasted, they ran on the vault
    of the current folder, or on none."""
    assert run_main(capsys, "init", str(spaced))[0] == 0
    code, out, _ = run_main(capsys, "tree", "--vault", str(spaced))
    assert code == 0 and "no trees yet" in out
    assert _named_commands(out) == [["flush", "--vault", str(spaced)]]
    assert run_main(capsys, *_named_commands(out)[0])[0] == 0
    code, _, err = run_main(capsys, "tree", "Nowhere/none.md", "--vault", str(spaced))
    assert code != 0 and _named_commands(err) == [["tree", "--vault", str(spaced)]], err
    assert run_main(capsys, *_named_commands(err)[0])[0] == 0


def test_the_stop_queue_run_names_beside_a_running_daemon_is_for_the_vault(
    capsys: pytest.CaptureFixture[str], vault: Path, daemon: Memory
) -> None:
    code, _, err = run_main(capsys, "queue", "--run", "--vault", str(vault))
    assert code != 0 and "already runs the queue" in err
    assert _named_commands(err) == [["stop", "--vault", str(vault)]], err
