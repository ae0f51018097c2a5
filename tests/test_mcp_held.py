"""`vaultmind mcp` without a daemon keeps the index it opened for a call for the next one (a
walk on what is loaded takes milliseconds, opening and loading it seconds), and lets it go as
soon as another vaultmind process waits for it, or after a while without a call."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pytest

from vaultmind.cli.context import held_memory
from vaultmind.config import load_config
from vaultmind.index.connection import is_lock_error, wanted_path
from vaultmind.memory import Memory

from .conftest import end_process, running_daemon, write
from .test_mcp import _call, boat_vault


class _Agent:
    """A `vaultmind mcp` process asked one call at a time, as an agent host asks it."""

    def __init__(self, vault: Path):
        env = {**os.environ, "VAULTMIND_EMBED_PROVIDER": "none"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "vaultmind", "mcp", "--vault", str(vault)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
        )  # fmt: skip
        self.ident = 0

    def paths(self, **arguments: Any) -> list[str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.ident += 1
        self.proc.stdin.write(_call(self.ident, **arguments) + "\n")
        self.proc.stdin.flush()
        result = json.loads(self.proc.stdout.readline())["result"]
        assert result["isError"] is False, result
        return [hit["note_path"] for hit in result["structuredContent"]["hits"]]


@contextmanager
def _agent(vault: Path) -> Iterator[_Agent]:
    agent = _Agent(vault)
    try:
        yield agent
    finally:
        assert agent.proc.stdin is not None
        agent.proc.stdin.close()
        try:
            agent.proc.wait(60)
        finally:
            end_process(agent.proc)


def _held_by_another_process(index: Path) -> bool:
    """Whether another process holds the file, found without asking it to let go."""
    try:
        duckdb.connect(str(index)).close()
    except duckdb.Error as exc:
        assert is_lock_error(exc), exc
        return True
    return False


@pytest.mark.slow
def test_the_index_is_kept_between_calls_a_note_saved_between_them_is_found_and_a_command_is_not_blocked(
    tmp_path: Path,
) -> None:
    vault = boat_vault(tmp_path / "vault")
    index = vault / ".vaultmind" / "index.duckdb"
    with _agent(vault) as agent:
        assert agent.paths(mode="walk", query="where did we buy the kayak?") == ["Notes/boat.md"]
        assert _held_by_another_process(index)  # kept for the next call (let go after each, before)
        write(vault, "Pets/Axolotl.md", "# Axolotl\n\nThe axolotlgrid sensor sits in tank four.\n")
        assert agent.paths(mode="search", query="axolotlgrid") == ["Pets/Axolotl.md"]
        # a command run without the daemon waits for the file, and the server lets it go
        env = {**os.environ, "VAULTMIND_EMBED_PROVIDER": "none"}
        done = subprocess.run(
            [sys.executable, "-m", "vaultmind", "query", "search", "axolotlgrid", "--vault", str(vault), "--json"],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert [h["note_path"] for h in json.loads(done.stdout)["hits"]] == ["Pets/Axolotl.md"]
        (vault / "Notes/boat.md").unlink()
        assert agent.paths(mode="walk", query="where did we buy the kayak?") == []  # opened again, synced
    assert not wanted_path(index).exists()  # the request was taken away with the file


@pytest.mark.slow
def test_a_daemon_starts_while_the_server_runs_and_then_answers_its_calls(tmp_path: Path) -> None:
    vault = boat_vault(tmp_path / "vault")
    with _agent(vault) as agent:
        assert agent.paths(mode="walk", query="where did we buy the kayak?") == ["Notes/boat.md"]
        config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
        with running_daemon(config) as (memory, _):  # its open waits for the file, which is let go
            write(vault, "Pets/Axolotl.md", "# Axolotl\n\nThe axolotlgrid sensor sits in tank four.\n")
            memory.sync_paths(["Pets/Axolotl.md"])  # (as its watcher would)
            assert agent.paths(mode="search", query="axolotlgrid") == ["Pets/Axolotl.md"]  # through the daemon
        assert agent.paths(mode="search", query="axolotlgrid") == ["Pets/Axolotl.md"]  # here again


def _held(vault: Path, **timing: float) -> Any:
    (vault / ".vaultmind").mkdir(parents=True)
    write(vault, "Boat.md", "# Boat\n\nThe red kayak came from Harbor Sports.\n")
    config = load_config(vault, embed_provider="none")
    held = held_memory(config)
    for name, value in timing.items():
        setattr(held, name, value)
    return held


def _used(held: Any) -> Memory:
    with held.memory() as memory:
        memory.sync(changes_only=True)
        return memory  # type: ignore[no-any-return]


def _until(condition: Any, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_the_kept_index_is_let_go_after_a_while_without_a_call(vault: Path) -> None:
    held = _held(vault, idle_s=0.3, poll_s=0.02)
    try:
        first = _used(held)
        assert _used(held) is first and held.opened == 1  # the next call within the while: kept
        assert _until(lambda: not held.held)
        assert not _held_by_another_process(vault / ".vaultmind" / "index.duckdb")
        assert _used(held) is not first and held.opened == 2
    finally:
        held.close()


def test_a_request_standing_at_the_open_asks_nothing_and_a_failed_call_lets_the_index_go(vault: Path) -> None:
    """A request a process left (one that crashed while it waited) must not make every later
    server let its index go at once."""
    held = _held(vault, poll_s=0.02)
    index = vault / ".vaultmind" / "index.duckdb"
    wanted_path(index).write_text("1\n", encoding="utf-8")
    old = time.time() - 60
    os.utime(wanted_path(index), (old, old))
    try:
        _used(held)
        time.sleep(0.3)
        assert held.held
        with pytest.raises(RuntimeError), held.memory():
            raise RuntimeError("a call that failed halfway")
        assert not held.held
    finally:
        held.close()


def test_a_call_running_keeps_the_index_until_it_ends_when_another_process_asks(vault: Path) -> None:
    held = _held(vault, poll_s=0.02)
    index = vault / ".vaultmind" / "index.duckdb"
    try:
        with held.memory() as memory:
            wanted_path(index).write_text("1\n", encoding="utf-8")
            time.sleep(0.3)
            assert held.held and memory.index.scalar("SELECT count(*) FROM notes") >= 0  # still usable
        assert _until(lambda: not held.held)
        assert not wanted_path(index).exists()
    finally:
        held.close()


def _hold_in_another_process(index: Path, seconds: float) -> subprocess.Popen[str]:
    """A process that holds the index's file for `seconds` (as a command run without the daemon)."""
    code = "import sys, time, duckdb; c = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(float(sys.argv[2])); c.close()"
    proc = subprocess.Popen([sys.executable, "-c", code, str(index), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_the_servers_own_wait_for_the_file_asks_it_nothing(vault: Path) -> None:
    """The server's open waits for a file another process holds, asking for it as every waiter
    does: that request, its own, must not make it let the file go once it has it (the next call
    opened and loaded the index again)."""
    held = _held(vault, poll_s=0.02)
    index = vault / ".vaultmind" / "index.duckdb"
    try:
        _used(held)
        held.close()
        holder = _hold_in_another_process(index, 1.0)
        try:
            _used(held)  # waits for the file, and asks for it
        finally:
            holder.wait(30)
            assert holder.stdout is not None
            holder.stdout.close()
        assert not wanted_path(index).exists()  # the wait's request withdrawn once it had the file
        time.sleep(0.3)
        assert held.held and held.opened == 2
    finally:
        held.close()


def test_a_process_waiting_for_the_file_gets_it_though_calls_keep_coming(vault: Path) -> None:
    """The server lets the file go to a process that asks, and a call coming right after must
    not open it again before that process's next try (a request is taken away with the file it
    asked for: the process then waited its 10 s and failed, the index "in use by another
    vaultmind process", while an agent asked one question after another)."""
    held = _held(vault, poll_s=0.02)
    index = vault / ".vaultmind" / "index.duckdb"
    _used(held)
    stop = threading.Event()

    def calls() -> None:
        while not stop.is_set():
            with held.memory() as memory:
                memory.index.scalar("SELECT count(*) FROM notes")
                time.sleep(0.05)
            time.sleep(0.005)

    caller = threading.Thread(target=calls)
    caller.start()
    try:
        code = "import sys; from pathlib import Path; from vaultmind.index.connection import connect; connect(Path(sys.argv[1]), 6.0).close()"
        done = subprocess.run([sys.executable, "-c", code, str(index)], capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
    finally:
        stop.set()
        caller.join(60)
        held.close()
    assert not wanted_path(index).exists()


def test_a_vault_moved_or_put_back_from_a_copy_while_its_index_is_kept_is_opened_again(tmp_path: Path) -> None:
    """The kept index is the file that was opened: a vault moved away meanwhile is said to be
    missing at the next call (it answered from the moved file, the notes' paths no longer
    there), and one put back from a copy is answered from the copy's index."""
    from vaultmind.errors import VaultError

    vault = tmp_path / "vault"
    held = _held(vault, poll_s=0.02)
    try:
        _used(held)
        vault.rename(tmp_path / "moved")
        with pytest.raises(VaultError, match="does not exist"), held.memory():
            pass
        shutil.copytree(tmp_path / "moved", vault)
        write(vault, "Pets/Axolotl.md", "# Axolotl\n\nThe axolotlgrid sensor sits in tank four.\n")
        memory = _used(held)
        assert held.opened == 2 and memory.index.scalar("SELECT count(*) FROM notes") == 2
        _used(held)
        assert held.opened == 2  # the same file: kept
    finally:
        held.close()
    with Memory.open(load_config(tmp_path / "moved", embed_provider="none")) as moved:
        assert moved.index.scalar("SELECT count(*) FROM notes") == 1  # no note of the copy's synced into it


def test_a_wait_that_gives_up_withdraws_its_request(vault: Path) -> None:
    """A command that waited out its wait and failed leaves no request: a server in a long call
    would let the index go after it for nobody. A single try, retried later, leaves it."""
    from vaultmind.errors import IndexBusy
    from vaultmind.index.connection import connect

    held = _held(vault)
    index = vault / ".vaultmind" / "index.duckdb"
    _used(held)
    held.close()
    holder = _hold_in_another_process(index, 2.0)
    try:
        with pytest.raises(IndexBusy):
            connect(index, wait_s=0.3)
        assert not wanted_path(index).exists()
        with pytest.raises(IndexBusy):  # a single try (a daemon's background retry): left for the next
            connect(index, wait_s=0.0)
        assert wanted_path(index).exists()
    finally:
        holder.wait(30)
        assert holder.stdout is not None
        holder.stdout.close()
