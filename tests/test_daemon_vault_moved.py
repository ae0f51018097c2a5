"""A vault folder moved, deleted or copied while its daemon runs: the daemon stops watching a
folder that is no longer its vault (watchfiles went on reporting the moved vault's changes
under the old path, where an edited note read as deleted), and a client never takes the
daemon of another folder for its own."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from vaultmind.client import daemon_file, find_daemon
from vaultmind.config import load_config
from vaultmind.daemon import Daemon
from vaultmind.errors import VaultError
from vaultmind.memory import Memory

from .conftest import READY_S, WAIT_S, run_main, running_daemon, write

NOTES = {f"n{i}.md": f"# Note {i}\n\nThe heron {i} nests by the river.\n" for i in range(5)}


@pytest.mark.slow
@pytest.mark.parametrize("how", ["moved", "deleted"])
def test_a_daemon_whose_vault_folder_goes_away_stops_and_says_why(vault: Path, how: str) -> None:
    for rel, text in NOTES.items():
        write(vault, rel, text)
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    memory = Memory.open(config)
    runner = Daemon(config, memory)
    failed: list[BaseException] = []

    def run() -> None:
        try:
            runner.run()
        except BaseException as exc:  # the thread's end, looked at below
            failed.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    moved = vault.parent / "moved"
    try:
        assert runner.ready.wait(READY_S)
        if how == "moved":
            os.rename(vault, moved)
            write(moved, "n1.md", "# Note 1\n\nEdited after the move: the heron left.\n")
        else:
            shutil.rmtree(vault)
        thread.join(WAIT_S)
        assert not thread.is_alive(), "the daemon stopped by itself"
        status = memory.status(take_notice=False)
    finally:
        runner.stop()
        thread.join(WAIT_S)
        memory.close()
    assert len(failed) == 1 and isinstance(failed[0], VaultError), failed
    assert f"the vault folder {vault} was moved or deleted" in str(failed[0])
    assert "vaultmind serve --vault" in str(failed[0])
    assert status["index"]["health"] == "behind" and str(vault) in status["index"]["notice"]
    if how == "moved":  # nothing was taken out of the index that moved with the vault
        assert not daemon_file(config).exists()
        with Memory.open(load_config(moved, embed_provider="none")) as again:
            assert again.counts()["notes"] == 5
            assert again.sync().modified == 1  # the edit, applied where the vault is now
            assert again.search("heron left")["hits"][0]["note_path"] == "n1.md"


@pytest.mark.slow
def test_a_daemon_json_copied_with_its_vault_is_not_taken_for_the_copys_daemon(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, "a.md", "# A\n\nThe atlas launch moved to March.\n")
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    copy = tmp_path / "copy"
    with running_daemon(config):
        write(copy, "a.md", "# A\n\nThe copy's own note: the atlas launch is cancelled.\n")
        (copy / ".vaultmind").mkdir()
        shutil.copy2(daemon_file(config), copy / ".vaultmind" / "daemon.json")  # as `cp -a` copies it
        assert find_daemon(config) is not None
        assert find_daemon(load_config(copy, embed_provider="none")) is None
        code, data, err = run_main(capsys, "query", "search", "cancelled", "--vault", str(copy), "--json")
        assert code == 0 and [hit["note_path"] for hit in data["hits"]] == ["a.md"], err  # the copy's own index
        code, status, err = run_main(capsys, "status", "--vault", str(copy), "--json")
        assert code == 0 and status["vault"] == str(copy.resolve()) and not status["daemon"]["running"], err
