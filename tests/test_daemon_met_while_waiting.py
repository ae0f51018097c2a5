"""A command that finds no daemon, and then waits for the index's file while a daemon starting
meanwhile takes it (its claim held, its api not up yet), goes through that daemon once it is up
instead of failing "index in use"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vaultmind.claim import claim_holder
from vaultmind.client import find_daemon
from vaultmind.config import load_config
from vaultmind.index.connection import request_for_file

from .conftest import end_process
from .test_mcp import boat_vault

_ENV = {**os.environ, "VAULTMIND_EMBED_PROVIDER": "none"}
# Holds the index's file (as another command would) until a line comes on its stdin.
_HOLDER = "import sys, duckdb; c = duckdb.connect(sys.argv[1]); print('held', flush=True); sys.stdin.readline(); c.close()"


def _until(condition: Callable[[], object], within_s: float = 60.0) -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        assert time.monotonic() < deadline, "the condition was not met in time"
        time.sleep(0.02)


def _vaultmind(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "vaultmind", *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=_ENV,
    )  # fmt: skip


@pytest.mark.slow
def test_a_command_waiting_for_the_index_goes_through_the_daemon_that_took_it_while_starting(tmp_path: Path) -> None:
    vault = boat_vault(tmp_path / "vault")
    config = load_config(vault)
    indexed = _vaultmind("query", "search", "kayak", "--vault", str(vault), "--json")
    assert indexed.wait(120) == 0  # (the note indexed here: a daemon starting answers from the index as it is)
    end_process(indexed)
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(config.index_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    command = serve = None
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        command = _vaultmind("query", "search", "kayak", "--vault", str(vault), "--json")
        # the command met no daemon, and waits for the file (its request for it stands)
        _until(lambda: (request_for_file(config.index_path) or "").startswith(f"{command.pid} "))
        serve = _vaultmind("serve", "--vault", str(vault))
        _until(lambda: claim_holder(config) == serve.pid)  # the daemon has claimed the vault and waits for the file
        assert command.stderr is not None
        said = command.stderr.readline()  # the command's wait for the file ends (10 s) before the daemon's
        assert f"(pid {serve.pid}) is starting" in said and "waiting for its api to come up" in said, said + command.stderr.read()
        assert holder.stdin is not None
        holder.stdin.write("go\n")
        holder.stdin.flush()  # the file is let go: the daemon opens it, and its api comes up
        out, err = command.communicate(timeout=120)
        assert command.returncode == 0, said + err
        assert [hit["note_path"] for hit in json.loads(out)["hits"]] == ["Notes/boat.md"], said + err + out
        assert find_daemon(config) is not None and find_daemon(config).pid == serve.pid  # type: ignore[union-attr]
    finally:
        for proc in (command, serve, holder):
            if proc is not None:
                end_process(proc)
        assert holder.stdin is not None
        holder.stdin.close()
