"""A daemon that is stopping answers until its API stops: its `daemon.json` goes last, so a
command meanwhile is answered instead of finding the index held with no address to ask."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from vaultmind.client import daemon_file, find_daemon
from vaultmind.config import load_config
from vaultmind.daemon import Daemon
from vaultmind.memory import Memory

from .conftest import run_main, write


def test_a_command_while_the_daemon_stops_its_background_work_is_answered_by_it(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, "a.md", "# A\n\nThe atlas launch moved to March.\n")
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    memory = Memory.open(config)
    runner = Daemon(config, memory)
    stopping, release = threading.Event(), threading.Event()
    stop_trees = runner.trees.stop

    def slow_stop() -> None:  # the upkeep finishing a summary before it stops
        stopping.set()
        release.wait(30)
        stop_trees()

    runner.trees.stop = slow_stop  # type: ignore[method-assign]
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        assert runner.ready.wait(30)
        runner.stop()
        assert stopping.wait(30)
        assert find_daemon(config) is not None  # still published, and answering
        code, data, err = run_main(capsys, "query", "search", "atlas", "--vault", str(vault), "--json")
        assert code == 0 and data["hits"], err
    finally:
        release.set()
        thread.join(30)
        memory.close()
    assert not daemon_file(config).exists()  # gone once the API stopped
