"""The save bench's wait for a daemon's status once it is ready (`bench.daemon`)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from vaultmind.bench.daemon import DaemonProcess, _status, waiting_jobs
from vaultmind.client import find_daemon
from vaultmind.config import load_config

from .conftest import running_daemon

BUSY_S = 11.0  # longer than the bench once waited for a status (10 s)


@pytest.mark.slow
def test_a_daemon_s_status_is_waited_for_though_it_takes_longer_than_10_s(vault: Path) -> None:
    """At 50k notes on a busy host a status took more than 10 s beside the NER catch-up: the
    bench gave up, asked again and queued request after request behind the daemon's
    one-at-a-time status, and never went on to its saves. Here the daemon's own status lock is
    busy for 11 s (as a long status keeps it): the bench's status still answers."""
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    with running_daemon(config) as (memory, _):
        client = find_daemon(config)
        assert client is not None
        stand_in = subprocess.Popen([sys.executable, "-c", "pass"], stderr=subprocess.PIPE)
        daemon = DaemonProcess(stand_in)  # only its client and recorded status are used here
        daemon.client = client
        try:
            held = threading.Event()

            def held_long() -> dict[str, object]:
                held.set()
                time.sleep(BUSY_S)
                return {}

            def busy() -> None:
                memory._status_answers.ask("held", held_long)  # a status being worked out, as a long one is

            thread = threading.Thread(target=busy)
            thread.start()
            assert held.wait(5)
            started = time.perf_counter()
            status = _status(daemon)
            thread.join()
        finally:
            stand_in.wait()
            daemon.timeline.stop()
            daemon.thread.join(5)
            assert stand_in.stderr is not None
            stand_in.stderr.close()
    assert time.perf_counter() - started >= BUSY_S - 1
    assert "notes" in status and daemon.status is status
    assert waiting_jobs(daemon) is not None
