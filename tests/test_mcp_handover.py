"""`vaultmind serve` started while `vaultmind mcp` (no daemon) is inside a long call — its first,
which opens the index and loads what a question reads: 7-18 s at 10k notes on a loaded machine
— starts once that call ends. The server lets the file go only after the call; serve waited its
usual 10 s for it and gave up, "index in use". It is told the file comes after the call, says
what it waits for, and waits (up to 2 minutes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vaultmind.client import find_daemon
from vaultmind.config import load_config
from vaultmind.index.connection import promised_path

from .conftest import READY_S, end_process
from .fakes.ollama_server import FakeOllama
from .test_mcp import _call, boat_vault


def _until(condition: Callable[[], object], within_s: float = READY_S) -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        assert time.monotonic() < deadline, "the condition was not met in time"
        time.sleep(0.05)


def _lines(stream: object, into: list[str]) -> threading.Thread:
    """Read `stream` line by line into `into` (a daemon's output, drained while it runs)."""

    def read() -> None:
        for line in stream:  # type: ignore[attr-defined]
            into.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


@pytest.mark.slow
def test_serve_started_during_the_mcp_server_s_long_first_call_waits_for_it_and_starts(tmp_path: Path) -> None:
    vault = boat_vault(tmp_path / "vault")
    settings = vault / ".vaultmind" / "config.toml"  # (the embedding held here is not given up on)
    settings.write_text(settings.read_text(encoding="utf-8").replace("[ollama]\n", "[ollama]\ntimeout_s = 300\n", 1), encoding="utf-8")
    config = load_config(vault)
    gate = threading.Event()
    with FakeOllama() as fake:
        fake.gate = gate  # the first call's embedding waits: the call holds the index until the test ends it
        env = {**os.environ, "VAULTMIND_EMBED_PROVIDER": "ollama", "VAULTMIND_OLLAMA_HOST": fake.host}
        agent = subprocess.Popen(
            [sys.executable, "-m", "vaultmind", "mcp", "--vault", str(vault)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
        )  # fmt: skip
        serve = None
        said: list[str] = []
        try:
            assert agent.stdin is not None and agent.stdout is not None
            agent.stdin.write(_call(1, mode="search", query="kayak") + "\n")
            agent.stdin.flush()
            _until(lambda: fake.requests_to("/api/embed"))  # the first call is in its embedding, the index open
            serve = subprocess.Popen(
                [sys.executable, "-m", "vaultmind", "serve", "--vault", str(vault)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
            )  # fmt: skip
            reader = _lines(serve.stderr, said)
            waiting = f"waiting for vaultmind mcp (pid {agent.pid}) to finish a call"
            # serve's usual wait for the file (10 s) ends without it: it either says what it waits
            # for, or (before) gave up and ended
            _until(lambda: any(waiting in line for line in said) or serve.poll() is not None)  # type: ignore[union-attr]
            assert any(waiting in line for line in said), "".join(said)
            assert serve.poll() is None, "".join(said)
            gate.set()  # the call ends; the server lets the file go, and serve opens it
            answer = json.loads(agent.stdout.readline())
            assert answer["result"]["isError"] is False, answer
            assert [hit["note_path"] for hit in answer["result"]["structuredContent"]["hits"]] == ["Notes/boat.md"]
            _until(lambda: find_daemon(config) is not None or serve.poll() is not None)  # type: ignore[union-attr]
            assert serve.poll() is None, "".join(said)
            assert not promised_path(config.index_path).exists()  # taken away with the file
            agent.stdin.write(_call(2, mode="search", query="kayak") + "\n")  # through the daemon now
            agent.stdin.flush()
            again = json.loads(agent.stdout.readline())
            assert [hit["note_path"] for hit in again["result"]["structuredContent"]["hits"]] == ["Notes/boat.md"], again
        finally:
            gate.set()
            if agent.stdin is not None:
                agent.stdin.close()
            end_process(agent)
            if serve is not None:
                serve.terminate()
                try:
                    serve.wait(60)
                finally:
                    end_process(serve)
                    reader.join(10)


def test_a_promise_is_believed_only_from_a_live_holder_and_for_the_process_it_names(tmp_path: Path) -> None:
    """A promise left by a server killed mid-call, or made to another waiting process, must not
    keep a wait going for two minutes."""
    from vaultmind.index.connection import promise_file, promised_by, withdraw_promise

    index = tmp_path / "index.duckdb"
    assert promised_by(index) is None
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    gone = int(done.stdout)  # a process that has ended
    promised_path(index).write_text(json.dumps({"pid": gone, "who": "vaultmind mcp", "waiters": [os.getpid()]}), encoding="utf-8")
    assert promised_by(index) is None
    holder = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE, text=True)
    try:
        record = {"pid": holder.pid, "who": "vaultmind mcp", "waiters": [os.getpid() + 1]}
        promised_path(index).write_text(json.dumps(record), encoding="utf-8")
        assert promised_by(index) is None  # made to another process
        promised_path(index).write_text(json.dumps({**record, "waiters": [os.getpid()]}), encoding="utf-8")
        assert promised_by(index) == (holder.pid, "vaultmind mcp")
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(30)
    promise_file(index, "vaultmind mcp", {12, 3})
    assert json.loads(promised_path(index).read_text(encoding="utf-8")) == {"pid": os.getpid(), "who": "vaultmind mcp", "waiters": [3, 12]}
    assert promised_by(index) is None  # (its own)
    withdraw_promise(index)
    assert not promised_path(index).exists()


# Holds the index's file (as a command would) until its stdin closes.
_HOLDER = "import sys, duckdb; c = duckdb.connect(sys.argv[1]); print('held', flush=True); sys.stdin.read()"


def _holding(index: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(index)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def _let_go(*processes: subprocess.Popen[str]) -> None:
    for process in processes:
        if process.stdin is not None:
            process.stdin.close()
        end_process(process)


def test_a_promise_from_a_process_that_does_not_hold_the_file_is_not_believed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server whose call waits for the file itself (a command holds it) promises it to the
    processes waiting too, as does a pid reused after a server was killed mid-call: neither
    holds the file, so neither is waited for (nor named as what is waited for)."""
    from vaultmind.index import connection
    from vaultmind.index.connection import IndexBusy, connect

    monkeypatch.setattr(connection, "HANDOVER_WAIT_S", 3.0)  # (a wait believed is this long, not two minutes)
    index = tmp_path / "index.duckdb"
    holder = _holding(index)
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE, text=True)
    try:
        record = {"pid": other.pid, "who": "vaultmind mcp", "waiters": [os.getpid()]}
        promised_path(index).write_text(json.dumps(record), encoding="utf-8")
        with pytest.raises(IndexBusy):
            connect(index, wait_s=0.5)
        assert "waiting for vaultmind mcp" not in capsys.readouterr().err
        promised_path(index).write_text(json.dumps({**record, "pid": holder.pid}), encoding="utf-8")
        with pytest.raises(IndexBusy):  # the holder's own promise is believed
            connect(index, wait_s=0.5)
        assert f"waiting for vaultmind mcp (pid {holder.pid}) to finish a call" in capsys.readouterr().err
    finally:
        _let_go(holder, other)


_WAITER = "import sys; from pathlib import Path; from vaultmind.index.connection import connect; connect(Path(sys.argv[1]), wait_s=5.0)"


@pytest.mark.slow
def test_a_wait_made_longer_by_a_promise_ends_soon_after_the_promise_is_taken_back(tmp_path: Path) -> None:
    """Two processes wait for the file a server promised to both; the first takes it as the
    call ends and the promise is taken back. The second waits its usual time from then, not
    two minutes (a command waiting for a daemon that took the file goes through it after)."""
    index = tmp_path / "index.duckdb"
    holder = _holding(index)  # (the first waiter, holding the file now)
    waiter = subprocess.Popen([sys.executable, "-c", _WAITER, str(index)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        record = {"pid": holder.pid, "who": "vaultmind mcp", "waiters": [waiter.pid]}  # (read at each of its tries)
        promised_path(index).write_text(json.dumps(record), encoding="utf-8")
        assert waiter.stderr is not None
        said = waiter.stderr.readline()
        assert f"waiting for vaultmind mcp (pid {holder.pid}) to finish a call" in said, said + waiter.stderr.read()
        promised_path(index).unlink()
        taken_back = time.monotonic()
        waiter.wait(60)  # (before: 120 s from its start)
        assert waiter.returncode != 0 and "in use by another vaultmind process" in waiter.stderr.read()
        assert time.monotonic() - taken_back < 30
    finally:
        _let_go(waiter, holder)


# Promises the index's file to the process given (as `vaultmind mcp` does mid-call), then waits to be killed.
_PROMISER = (
    "import sys; from pathlib import Path; from vaultmind.index.connection import promise_file; "
    "promise_file(Path(sys.argv[1]), 'vaultmind mcp', {int(sys.argv[2])}); print('promised', flush=True); sys.stdin.read()"
)


def _promised_then_killed(index: Path) -> int:
    """A real process that promised the file to this one and was killed (SIGKILL) before it
    took the promise back; its pid."""
    with subprocess.Popen(
        [sys.executable, "-c", _PROMISER, str(index), str(os.getpid())], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as promiser:
        assert promiser.stdout is not None and promiser.stdout.readline() == "promised\n"
        promiser.kill()
        promiser.wait(30)
    assert promised_path(index).exists()
    return promiser.pid


def test_a_promise_left_by_a_killed_server_goes_at_the_next_open(tmp_path: Path) -> None:
    """A server killed mid-call (SIGKILL) leaves its promise beside the index: the next process
    that opens the file (serve, mcp, a command) deletes it."""
    from vaultmind.index.connection import close_index, connect

    index = tmp_path / "index.duckdb"
    _promised_then_killed(index)
    close_index(connect(index))
    assert not promised_path(index).exists()


def test_a_promise_left_by_a_killed_server_never_makes_a_waiter_wait_longer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file held by another process since (a command): a waiter waits its usual time, not
    the two minutes of a handover, says nothing of the killed server, and deletes its promise."""
    from vaultmind.index.connection import IndexBusy, connect

    index = tmp_path / "index.duckdb"
    _promised_then_killed(index)
    holder = _holding(index)
    try:
        started = time.monotonic()
        with pytest.raises(IndexBusy):
            connect(index, wait_s=0.5)
        assert time.monotonic() - started < 10
        assert "waiting for" not in capsys.readouterr().err
        assert not promised_path(index).exists()
    finally:
        _let_go(holder)


# Promises the index's file to the process given, held just before its written promise is moved
# into place (a server killed, or another promising, in the middle of the write), until told on.
_PROMISING = (
    "import os, sys; from pathlib import Path; from vaultmind.index.connection import promise_file\n"
    "move = os.replace\n"
    "def held(source, target):\n"
    "    print('writing', flush=True); sys.stdin.readline(); move(source, target)\n"
    "os.replace = held\n"
    "promise_file(Path(sys.argv[1]), 'vaultmind mcp', {int(sys.argv[2])}); print('promised', flush=True); sys.stdin.read()"
)


def _promising(index: Path) -> subprocess.Popen[str]:
    """A real process in the middle of writing its promise of the file to this one."""
    writer = subprocess.Popen(
        [sys.executable, "-c", _PROMISING, str(index), str(os.getpid())], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None and writer.stdout.readline() == "writing\n"
    return writer


def test_a_promise_half_written_by_a_killed_server_goes_at_the_next_open(tmp_path: Path) -> None:
    """A server killed while it wrote its promise left the file it wrote it in (under a name
    every writer shared), beside the index for good: the next process that opens the file
    deletes it."""
    from vaultmind.index.connection import close_index, connect

    index = tmp_path / "index.duckdb"
    with _promising(index) as writer:
        writer.kill()
        writer.wait(30)
    assert len(list(tmp_path.iterdir())) == 1 and not promised_path(index).exists()  # (its part alone)
    close_index(connect(index))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.duckdb"]


def test_two_servers_promising_at_once_each_write_their_own_promise_whole(tmp_path: Path) -> None:
    """Two servers each in a call (one holding the file, one waiting for it) both promise it to
    a third process that waits: each writes its promise under a name of its own. They wrote it
    under one name: the second's write moved the first's half-written file too, and the first's
    move failed (its promise lost)."""
    from vaultmind.index.connection import promise_file

    index = tmp_path / "index.duckdb"
    first = _promising(index)
    try:
        promise_file(index, "vaultmind mcp", {os.getpid()})
        assert json.loads(promised_path(index).read_text(encoding="utf-8"))["pid"] == os.getpid()
        assert first.stdin is not None and first.stdout is not None
        first.stdin.write("\n")
        first.stdin.flush()
        assert first.stdout.readline() == "promised\n"
        assert json.loads(promised_path(index).read_text(encoding="utf-8"))["pid"] == first.pid  # (moved whole, last)
        assert sorted(p.name for p in tmp_path.iterdir()) == [promised_path(index).name]  # (no part left)
    finally:
        with first:
            _let_go(first)


def test_a_live_server_s_promise_written_as_a_dead_one_s_is_dropped_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A killed server's promise is read, its maker found gone, and the file deleted: a live
    server that promised the file between the read and the delete lost its promise (the waiter
    then waited its usual 10 s, not until the call ended). Only the promise read goes."""
    from vaultmind import client
    from vaultmind.index.connection import promised_by

    index = tmp_path / "index.duckdb"
    dead = _promised_then_killed(index)
    live: list[subprocess.Popen[str]] = []
    asked = client.alive

    def alive_as_another_promises(pid: int) -> bool:  # (the moment between the read and the delete)
        if pid == dead and not live:
            live.append(_promising(index))
            assert live[0].stdin is not None and live[0].stdout is not None
            live[0].stdin.write("\n")
            live[0].stdin.flush()
            assert live[0].stdout.readline() == "promised\n"
        return asked(pid)

    monkeypatch.setattr(client, "alive", alive_as_another_promises)
    try:
        promised_by(index)
        assert live and promised_path(index).exists()
        assert json.loads(promised_path(index).read_text(encoding="utf-8"))["pid"] == live[0].pid
    finally:
        for process in live:
            with process:
                _let_go(process)
