"""The daemon's status asked by many clients while one is being worked out (`shared_answer`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from vaultmind import status
from vaultmind.client import DaemonClient, find_daemon
from vaultmind.config import load_config
from vaultmind.errors import DaemonError
from vaultmind.memory import Memory

from .conftest import running_daemon, until, write

CLIENTS = 6
QUICK_S = 0.3  # the timeout of a client that polls and gives up fast


@contextmanager
def daemon_with_a_slow_status(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[DaemonClient, list[float], threading.Event, threading.Event, Memory]]:
    """The vault's daemon, its status counted (`read_counts`, the real one, wrapped to record
    each call) and its first one held until `release` is set (as a status at 50k notes on a busy
    machine takes seconds); `asked` is set once that first one runs."""
    write(vault, "a.md", "# A\n\nSome text to count.\n")
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    counted: list[float] = []
    asked, release = threading.Event(), threading.Event()
    real = status.read_counts

    def recorded(memory: Memory, *, loading: bool) -> tuple[dict[str, Any], bool]:
        counted.append(time.monotonic())
        if len(counted) == 1:
            asked.set()
            release.wait(30)
        return real(memory, loading=loading)

    with running_daemon(config) as (memory, _):
        monkeypatch.setattr(status, "read_counts", recorded)
        client = find_daemon(config)
        assert client is not None
        try:
            yield client, counted, asked, release, memory
        finally:
            release.set()


class _WaitersSeen(threading.Condition):
    """A condition that keeps which threads have waited on it."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[int] = set()

    def wait(self, timeout: float | None = None) -> bool:
        self.seen.add(threading.get_ident())
        return super().wait(timeout)


def _in_threads(count: int, ask: Callable[[], Any]) -> tuple[list[threading.Thread], list[Any]]:
    """`ask()` in `count` threads, started one after another; what each got (an answer or an error)."""
    got: list[Any] = []

    def one() -> None:
        try:
            got.append(ask())
        except DaemonError as exc:
            got.append(exc)

    threads = [threading.Thread(target=one) for _ in range(count)]
    for thread in threads:
        thread.start()
    return threads, got


@pytest.mark.slow
def test_status_requests_whose_clients_left_are_not_worked_out(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At 50k notes a status took 10 s and more: clients polling it with a short timeout left
    request after request queued behind the one being worked out, each worked out in turn for
    nobody (46 at once in a daemon's start-up, ~10 s each). Here 6 clients give up after 0.3 s
    while a status is held: once it ends, none of theirs is worked out, and a next status
    answers at once."""
    with daemon_with_a_slow_status(vault, monkeypatch) as (client, counted, asked, release, _):
        first, answers = _in_threads(1, lambda: client.call("GET", "/v1/status", timeout=60))
        assert asked.wait(10)
        quitters, errors = _in_threads(CLIENTS, lambda: client.call("GET", "/v1/status", timeout=QUICK_S))
        for thread in quitters:
            thread.join(30)
        assert len(errors) == CLIENTS and all(isinstance(e, DaemonError) and "busy" in str(e) for e in errors), errors
        release.set()
        first[0].join(30)
        assert "notes" in answers[0]
        started = time.monotonic()
        assert client.call("GET", "/v1/status", timeout=30)["notes"]["total"] == 1
        assert time.monotonic() - started < 5
        time.sleep(0.5)  # (on the old code, what was queued behind went on being worked out)
    assert len(counted) == 2, f"{len(counted) - 2} status(es) worked out for clients that had left"


@pytest.mark.slow
def test_status_requests_that_wait_together_share_one_answer(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Clients that keep waiting while a status is worked out get the next one, worked out once
    for all of them, not one after another."""
    with daemon_with_a_slow_status(vault, monkeypatch) as (client, counted, asked, release, memory):
        shared = memory._status_answers
        shared._changed = turns = _WaitersSeen()  # (no status waits on it while the first is held)
        first, _ = _in_threads(1, lambda: client.call("GET", "/v1/status", timeout=60))
        assert asked.wait(10)
        waiting, answers = _in_threads(CLIENTS, lambda: client.call("GET", "/v1/status", timeout=60))
        assert until(lambda: len(turns.seen) == CLIENTS), "every one of them is waiting for the next answer"
        release.set()
        for thread in [*first, *waiting]:
            thread.join(30)
    assert len(answers) == CLIENTS and all(answer["notes"]["total"] == 1 for answer in answers), answers
    assert len(counted) == 2, counted
