"""A daemon whose start-up reconcile fails (DuckDB failed a large load's write, say) tries it
again after its short back-off, not only at the periodic reconcile ten minutes later, and once
it passes loads what questions read, as a start that passed at once does."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.conftest import WAIT_S, until, write
from vaultmind.config import load_config
from vaultmind.daemon import RECONCILE_S, RETRY_FIRST_S, Daemon
from vaultmind.memory import Memory


def test_a_failed_start_up_reconcile_is_retried_soon_and_then_warms_up(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(vault, "A/n.md", "# Lighthouse\n\nThe keeper logs a saffron sunrise every morning.\n")
    memory = Memory.open(load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20))
    real_sync, real_warm = memory.sync, memory.warm
    calls = {"sync": 0, "warm": 0}

    def sync_failing_once(*args: Any, **kwargs: Any) -> Any:
        calls["sync"] += 1
        if calls["sync"] == 1:
            raise duckdb.InvalidInputException("Invalid Input Error: a write failed during the load")
        return real_sync(*args, **kwargs)

    def counted_warm() -> None:
        calls["warm"] += 1
        real_warm()

    monkeypatch.setattr(memory, "sync", sync_failing_once)
    monkeypatch.setattr(memory, "warm", counted_warm)
    daemon = Daemon(memory.config, memory)
    thread = threading.Thread(target=daemon.run, daemon=True)
    thread.start()
    try:
        assert daemon.ready.wait(WAIT_S), "daemon did not become ready"
        assert RETRY_FIRST_S * 10 < RECONCILE_S  # the wait below is far below the periodic one
        assert until(lambda: memory.behind is None and calls["sync"] >= 2, RETRY_FIRST_S * 10), (
            f"no retry within {RETRY_FIRST_S * 10:.0f} s: {calls}, {memory.behind}"
        )
        assert until(lambda: calls["warm"] == 1, WAIT_S), calls
        assert memory.search("saffron sunrise")["hits"]
    finally:
        daemon.stop()
        thread.join(WAIT_S)
        memory.close()
