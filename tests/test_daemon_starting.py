"""A daemon that has not published its address yet (its index being upgraded, which may take
minutes at 50,000 notes) is seen as starting — by `status`, `doctor`, a second `serve` — with
what it does; a daemon whose health answer is late is busy, not a `daemon.json` left behind."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from vaultmind.cli import context
from vaultmind.config import load_config
from vaultmind.starting import start_file

from .conftest import run_main, write
from .test_claim import claimed, holding
from .test_doctor import QUIET, _doctor

# What `vaultmind serve` does until its address is out: the claim, then the start record,
# told of the index's upgrade as it goes (here held at one step of it).
UPGRADING = """
import sys, time
from pathlib import Path
from vaultmind.claim import daemon_claim
from vaultmind.config import load_config
from vaultmind.index.store import Index
from vaultmind.starting import StartRecord
config = load_config(Path(sys.argv[1]))
with daemon_claim(config), StartRecord(config) as start, Index.open(config.index_path):
    start.tell("upgrading the index (migration 0035)", 3, 9)
    print("upgrading", flush=True)
    time.sleep(120)
"""


def upgrading(vault: Path) -> AbstractContextManager[subprocess.Popen[str]]:
    """Another process that claimed the vault and keeps its start record as an upgrade does."""
    return holding(UPGRADING, vault, "upgrading")


def test_a_daemon_upgrading_its_index_is_starting_for_status_doctor_and_a_second_serve(
    capsys: pytest.CaptureFixture[str], vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(vault, ".vaultmind/config.toml", QUIET + '[admission]\nllm = false\n[trees]\nsummarizer = "fallback"\n')
    write(vault, "a.md", "# A\n\nThe atlas launch moved to March.\n")
    monkeypatch.setattr(context, "STARTING_ADDRESS_S", 0.5)  # how long a command waits for its address
    with upgrading(vault) as daemon:
        # a script waits for the counts; when the index stays held without an address, it is
        # told the daemon is starting (where it was told the index is busy)
        code, status, err = run_main(capsys, "status", "--vault", str(vault), "--json")
        assert code == 0, err
        assert status["index"]["health"] == "starting"
        assert status["daemon"]["running"] is True and status["daemon"]["state"] == "starting"
        assert status["daemon"]["pid"] == daemon.pid
        assert status["daemon"]["doing"] == "upgrading the index (migration 0035) 3/9"
        code, out, err = run_main(capsys, "status", "--vault", str(vault))
        assert code == 0, err
        assert f"the daemon (pid {daemon.pid}) is starting for " in out
        assert ": upgrading the index (migration 0035) 3/9;" in out

        code, checks = _doctor(capsys, vault)
        assert checks["daemon"]["state"] == "ok"
        assert checks["daemon"]["detail"].startswith("starting for ")
        assert f"upgrading the index (migration 0035) 3/9 (pid {daemon.pid})" in checks["daemon"]["detail"]
        assert checks["index"]["detail"] == f"held by the daemon (pid {daemon.pid}): checked once it answers"

        code, _, err = run_main(capsys, "serve", "--vault", str(vault))
        assert code != 0
        assert f"already runs for {vault} (pid {daemon.pid}, starting for " in err
        assert "upgrading the index (migration 0035) 3/9; its api is not up yet" in err

        daemon.send_signal(signal.SIGKILL)  # killed outright: its record stays, and is not believed
        daemon.wait(20)
    assert start_file(load_config(vault)).exists()
    code, status, err = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert code == 0, err
    assert status["daemon"] == {"running": False}


def test_a_daemon_whose_health_answer_is_late_is_busy_not_stale(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    write(vault, ".vaultmind/config.toml", QUIET + '[admission]\nllm = false\n[trees]\nsummarizer = "fallback"\n')
    with claimed(vault) as daemon, socket.create_server(("127.0.0.1", 0)) as silent:  # takes requests, never answers
        info = load_config(vault).state_dir / "daemon.json"
        info.write_text(json.dumps({"pid": daemon.pid, "port": silent.getsockname()[1], "token": "t"}))
        info.chmod(0o600)
        _, checks = _doctor(capsys, vault)
    assert checks["daemon"]["state"] == "warn"
    assert checks["daemon"]["detail"].startswith(f"running (pid {daemon.pid}, http://127.0.0.1:")
    assert checks["daemon"]["detail"].endswith("but busy: no answer to its health check within 2 s")
    assert "left from one that ended" not in checks["daemon"]["detail"]
    assert checks["index"]["detail"] == f"held by the daemon (pid {daemon.pid}): checked once it answers"
