"""Whole-vault work asked of the daemon again while it runs: the repeat joins the run, and a
command interrupted while the daemon works says that the daemon finishes it."""

from __future__ import annotations

import logging
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from vaultmind.client import find_daemon
from vaultmind.http_joined import Joined
from vaultmind.memory import Memory

from .conftest import WAIT_S, run_main, write


def _notes(vault: Path) -> None:
    for n in range(5):
        write(vault, f"Notes/n{n}.md", f"# Note {n}\n\nThe kayak trip number {n} went along the harbor.\n")


def _rebuilds(caplog: pytest.LogCaptureFixture) -> int:
    return sum(r.getMessage().startswith("api reindex:") for r in caplog.records)


def _logged(caplog: pytest.LogCaptureFixture, said: str, times: int = 1) -> None:
    """Until the daemon has logged `said` `times` times (its request threads log as they go)."""
    deadline = time.monotonic() + WAIT_S
    while sum(r.getMessage() == said for r in list(caplog.records)) < times:
        assert time.monotonic() < deadline, f"{said!r} not logged {times} time(s)"
        time.sleep(0.02)


class _Held:
    """The daemon's sync lock held by a thread of its own until `let_go`: a rebuild asked for
    meanwhile waits for it (the lock is re-entrant: the thread that takes it must give it back)."""

    def __init__(self, memory: Memory) -> None:
        self._taken, self._go = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._hold, args=(memory,))
        self._thread.start()
        assert self._taken.wait(WAIT_S)

    def _hold(self, memory: Memory) -> None:
        with memory.sync_lock:
            self._taken.set()
            self._go.wait(WAIT_S)

    def let_go(self, after_s: float = 0.0) -> None:
        threading.Timer(after_s, self._go.set).start()


def test_reindexes_asked_for_while_one_runs_join_it(
    vault: Path, daemon: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    """Four reindex requests (a user's Ctrl-C and retries, a script's retries on its timeout)
    were four full rebuilds back to back; those that come while one runs now share its answer."""
    _notes(vault)
    caplog.set_level(logging.INFO, logger="vaultmind.daemon")
    caplog.set_level(logging.INFO, logger="vaultmind.http_joined")
    client = find_daemon(daemon.config)
    assert client is not None
    answers: list[dict[str, Any]] = []

    def reindex() -> None:
        answers.append(client.call("POST", "/v1/reindex", {}, timeout=WAIT_S))

    held = _Held(daemon)  # the first rebuild starts, and waits for the lock
    first = threading.Thread(target=reindex)
    first.start()
    _logged(caplog, "reindex asked for: runs")
    repeats = [threading.Thread(target=reindex) for _ in range(3)]
    for thread in repeats:
        thread.start()
    _logged(caplog, "reindex asked for while it runs: joins it", 3)
    held.let_go()
    for thread in (first, *repeats):
        thread.join(WAIT_S)
    assert len(answers) == 4
    assert sorted(bool(a.get("joined")) for a in answers) == [False, True, True, True]
    assert {a["notes"] for a in answers} == {5}
    assert _rebuilds(caplog) == 1
    client.call("POST", "/v1/reindex", {}, timeout=WAIT_S)  # one asked once the run ended runs
    assert _rebuilds(caplog) == 2


def test_joined_work_shares_its_failure_and_different_work_runs_on_its_own(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="vaultmind.http_joined")
    joined = Joined()
    started, release = threading.Event(), threading.Event()
    runs: list[str] = []
    got: dict[str, Any] = {}

    def failing() -> dict[str, Any]:
        runs.append("flush")
        started.set()
        release.wait(WAIT_S)
        raise RuntimeError("disk full")

    def ask(name: str, key: str, work: Any) -> None:
        try:
            got[name] = joined.run(key, work)
        except RuntimeError as exc:
            got[name] = exc

    first = threading.Thread(target=ask, args=("first", "flush", failing))
    first.start()
    assert started.wait(WAIT_S)
    second = threading.Thread(target=ask, args=("second", "flush", failing))
    second.start()
    ask("other", "reindex", lambda: {"notes": 1})  # not the same work: not held by the flush
    assert got["other"] == {"notes": 1}
    _logged(caplog, "flush asked for while it runs: joins it")
    release.set()
    first.join(WAIT_S)
    second.join(WAIT_S)
    assert runs == ["flush"] and str(got["first"]) == str(got["second"]) == "disk full"
    assert joined.run("flush", lambda: {"sealed": []}) == {"sealed": []}  # the next one runs


def test_a_reindex_interrupted_while_the_daemon_rebuilds_says_the_daemon_finishes_it(
    vault: Path, daemon: Memory, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C of `vaultmind reindex` said "the rebuild did not finish … run the same command
    again", while the daemon went on rebuilding: run again, it queued a second rebuild."""
    _notes(vault)
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    caplog.set_level(logging.INFO, logger="vaultmind.daemon")
    caplog.set_level(logging.INFO, logger="vaultmind.http_joined")
    main_thread = threading.main_thread().ident
    assert main_thread is not None and threading.current_thread() is threading.main_thread()
    held = _Held(daemon)  # the daemon's rebuild waits: the command is still waiting when Ctrl-C comes
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (not a background job)

    def ctrl_c_once_the_daemon_rebuilds() -> None:
        _logged(caplog, "reindex asked for: runs")
        time.sleep(0.2)  # the command waits for the answer by now
        signal.pthread_kill(main_thread, signal.SIGINT)

    try:
        ctrl_c = threading.Thread(target=ctrl_c_once_the_daemon_rebuilds)
        ctrl_c.start()
        code, _, err = run_main(capsys, "reindex", "--vault", str(vault))
        ctrl_c.join()
        assert code == 130, err
        assert "the daemon for" in err and "finishes the rebuild" in err and "status --vault" in err, err
        assert "did not finish" not in err

        def let_go_once_joined() -> None:
            _logged(caplog, "reindex asked for while it runs: joins it")
            held.let_go()

        again = threading.Thread(target=let_go_once_joined)
        again.start()
        code, data, err = run_main(capsys, "reindex", "--vault", str(vault), "--json")
        again.join()
    finally:
        held.let_go()
        signal.signal(signal.SIGINT, inherited)
    assert code == 0 and data["joined"] is True and data["notes"] == 5, err
    assert _rebuilds(caplog) == 1


def test_a_joined_flush_says_it_joined_the_one_running(capsys: pytest.CaptureFixture[str]) -> None:
    from vaultmind.cli.tree import print_report
    from vaultmind.tree.report import SealReport

    print_report({**SealReport().to_dict(), "joined": True})
    said = capsys.readouterr().out
    assert said.startswith("vaultmind: the daemon was already running this flush; its report:\n"), said
    print_report(SealReport().to_dict())
    assert "already running" not in capsys.readouterr().out


def test_a_flush_as_of_another_time_runs_on_its_own_and_a_retry_joins(
    vault: Path, daemon: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    """`vaultmind flush --at LATER` asked while a flush as of now ran was answered with that
    run's report (`joined`): the sessions quiet by LATER were never sealed. A flush as of
    another time is other work; the retry of the same command (no `--at`) still joins."""
    caplog.set_level(logging.INFO, logger="vaultmind.http_joined")
    client = find_daemon(daemon.config)
    assert client is not None
    answers: dict[str, dict[str, Any]] = {}

    def flush(name: str, body: dict[str, Any]) -> threading.Thread:
        thread = threading.Thread(target=lambda: answers.__setitem__(name, client.call("POST", "/v1/flush", body, timeout=WAIT_S)))
        thread.start()
        return thread

    taken, go = threading.Event(), threading.Event()

    def hold() -> None:  # a pass of the background upkeep sealing: a flush waits for it
        with daemon.seal_lock:
            taken.set()
            go.wait(WAIT_S)

    holder = threading.Thread(target=hold)
    holder.start()
    assert taken.wait(WAIT_S)
    try:
        threads = [flush("first", {"all": False, "max_stale": 10})]
        _logged(caplog, "flush asked for: runs")
        threads += [flush("later", {"all": False, "at": "2099-01-01T00:00:00+00:00", "max_stale": 10})]
        threads += [flush("retry", {"all": False, "max_stale": 10})]
        _logged(caplog, "flush asked for: runs", 2)  # the later one: other work
        _logged(caplog, "flush asked for while it runs: joins it")
    finally:
        go.set()
    for thread in (holder, *threads):
        thread.join(WAIT_S)
    assert not answers["first"].get("joined") and answers["retry"].get("joined") is True, answers
    assert not answers["later"].get("joined"), answers["later"]


def test_flush_sends_a_time_to_the_daemon_only_when_given(vault: Path, daemon: Memory, capsys: pytest.CaptureFixture[str]) -> None:
    """The command sent its own clock as `at` on every run, so a retry of `vaultmind flush`
    was a flush as of another moment and could not join the one running; now the daemon's
    clock is "now", and `--at` is sent as given."""
    from vaultmind import client as client_module

    sent: list[dict[str, Any]] = []
    real = client_module.DaemonClient.call

    def recorded(self: Any, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        if path == "/v1/flush":
            sent.append(dict(body))
        return real(self, method, path, body, **kw)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(client_module.DaemonClient, "call", recorded)
        assert run_main(capsys, "flush", "--vault", str(vault), "--json")[0] == 0
        assert run_main(capsys, "flush", "--vault", str(vault), "--at", "2030-05-06", "--json")[0] == 0
    assert "at" not in sent[0] and sent[1]["at"].startswith("2030-05-06"), sent


def test_work_asked_for_the_moment_a_run_ends_runs_rather_than_joining_the_ended_run() -> None:
    """A run's answer was handed to those waiting before the run was let go of: a request that
    came in between joined a run already over, answered with work done before it asked. (The
    request comes as the answer is handed over: in a callback of the run's future.)"""
    joined = Joined()
    later: list[dict[str, Any]] = []

    def first() -> dict[str, Any]:
        running = joined._running["sync"]  # the moment its answer is handed over, another asks
        running.add_done_callback(lambda _: later.append(joined.run("sync", lambda: {"run": "second"})))
        return {"run": "first"}

    assert joined.run("sync", first) == {"run": "first"}
    assert later == [{"run": "second"}]
