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


@pytest.mark.slow
def test_the_benchmarks_refuse_a_vault_a_daemon_serves_before_touching_it(tmp_path: Path) -> None:
    """The cold and rss benchmarks deleted the index of a daemon running on the vault (the
    daemon then wrote to a removed file and lost its index, or crashed in DuckDB) and ran their
    reindex through it. Each refuses such a vault first, as does a whole run, and the daemon's
    index file is still the one it opened."""
    from vaultmind.bench import run as bench_run
    from vaultmind.bench.daemon import running_daemon as bench_daemon
    from vaultmind.bench.indexing import bench_cold
    from vaultmind.bench.serving import bench_rss
    from vaultmind.bench.synth import generate_vault
    from vaultmind.errors import UsageError

    vault = tmp_path / "vault-30-s0"  # where a run keeps it
    generate_vault(vault, 30, 0)
    with bench_daemon(vault, embed_provider="none") as (daemon, _):
        index = load_config(vault, embed_provider="none").index_path
        inode = index.stat().st_ino
        with pytest.raises(UsageError, match="daemon already runs"):
            bench_cold(vault, repeats=1)
        with pytest.raises(UsageError, match="daemon already runs"):
            bench_rss(vault, embed_provider="none")
        with pytest.raises(UsageError, match="daemon already runs"):
            bench_run.run_benchmarks([30], only=["cold", "rss"], workdir=tmp_path, embed_provider="none")
        assert index.stat().st_ino == inode
        assert daemon.proc.poll() is None
        assert daemon.search("the")["hits"] is not None
