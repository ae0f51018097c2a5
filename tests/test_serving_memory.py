"""What a daemon answers while it starts: a status asked during its start-up answers at once,
says the daemon is loading and leaves out the counts that hash every leaf."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultmind.cli.output import print_status
from vaultmind.client import DaemonClient, find_daemon
from vaultmind.config import Config, load_config
from vaultmind.daemon import Daemon
from vaultmind.memory import Memory

from .conftest import write


def _write_notes(vault: Path) -> None:
    write(vault, "notes/a.md", "# Migration\n\nThe quokka migration starts on Monday.\n\n## Budget\n\nThe budget review moves to Friday.\n")
    write(vault, "notes/b.md", "# Plan\n\n## Rollback\n\nThe rollback runs at noon.\n\n## Owners\n\nBob owns the plan.\n")
    write(vault, "notes/c.md", "# Diary\n\nA quiet day; the quokka slept.\n")


def _config(vault: Path) -> Config:
    return load_config(vault, embed_provider="static", debounce_ms=50, step_ms=20)


def _client(config: Config) -> DaemonClient:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        client = find_daemon(config)
        if client is not None:
            return client
        time.sleep(0.05)
    raise AssertionError("the daemon's API did not answer")


@pytest.fixture
def starting(vault: Path) -> Iterator[tuple[Config, Memory, Daemon]]:
    """A daemon whose start-up waits: the test holds the sync lock its first reconcile takes."""
    _write_notes(vault)
    config = _config(vault)
    memory = Memory.open(config)
    memory.sync()  # an index to start from
    daemon = Daemon(config, memory)
    memory.sync_lock.acquire()
    thread = threading.Thread(target=daemon.run, daemon=True)
    thread.start()
    held = True
    try:
        yield config, memory, daemon
        memory.sync_lock.release()
        held = False
    finally:
        if held:
            memory.sync_lock.release()
        daemon.stop()
        thread.join(10)
        memory.close()


def test_a_status_asked_while_the_daemon_starts_answers_and_says_it_is_loading(
    starting: tuple[Config, Memory, Daemon], capsys: pytest.CaptureFixture[str]
) -> None:
    config, memory, daemon = starting
    client = _client(config)
    status = client.call("GET", "/v1/status", timeout=10.0)
    assert not daemon.ready.is_set()  # its first reconcile still waits
    assert status["loading"] is True
    assert status["index"]["health"] == "loading" and "starting" in status["index"]["notice"]
    with memory.index.lock:
        leaves = int(memory.index.scalar("SELECT count(*) FROM leaves"))
    assert status["notes"]["total"] == 3 and status["leaves"] == leaves > 0
    # the counts that hash every leaf are left for later, not guessed
    assert status["embeddings"]["model"] and status["embeddings"]["missing"] is None
    assert status["embeddings"]["embedded"] is None and status["entities"]["ner_pending"] is None
    print_status(status)  # the command line shows such an answer too
    assert "counted once the daemon has started" in capsys.readouterr().out

    memory.sync_lock.release()  # the start-up goes on
    try:
        assert daemon.ready.wait(30), "daemon did not become ready"
    finally:
        memory.sync_lock.acquire()  # (the fixture releases it)
    ready = client.call("GET", "/v1/status", timeout=10.0)
    assert ready["loading"] is False and ready["index"]["health"] == "ok"
    assert ready["embeddings"]["missing"] == 0 and ready["embeddings"]["embedded"] == leaves
    assert ready["entities"]["ner_pending"] is not None
    assert {k: v for k, v in ready["notes"].items()} == status["notes"]
