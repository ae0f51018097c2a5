"""A daemon that runs, holds the vault and has published its address, but does not answer its
health check (stopped, swapped out, stuck): said at once, with how to stop it."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from .conftest import WAIT_S, end_process, run_main, write

# A process that takes the vault's daemon claim and publishes the address of a socket that
# accepts connections (the kernel's backlog) and never answers: a daemon gone silent.
_SILENT = """
import json, os, socket, sys, time
from vaultmind.claim import daemon_claim
from vaultmind.client import daemon_file
from vaultmind.config import load_config

config = load_config(sys.argv[1])
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(16)
with daemon_claim(config):
    daemon_file(config).write_text(json.dumps({"pid": os.getpid(), "host": "127.0.0.1",
        "port": listener.getsockname()[1], "token": "t"}), encoding="utf-8")
    print("ready", flush=True)
    time.sleep(600)
"""


@pytest.mark.slow
def test_a_silent_daemon_is_said_at_once_not_waited_for_as_starting(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was called "starting … waiting for its api to come up (up to 60 s)", and after 77 s
    the command failed on the index in use, with a hint to go through the daemon."""
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    write(vault, ".vaultmind/config.toml", '[embeddings]\nprovider = "none"\n[entities]\nner_model = "off"\n')
    write(vault, "boat.md", "# Boat\n\nThe red kayak.\n")
    proc = subprocess.Popen([sys.executable, "-c", _SILENT, str(vault)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        started = time.monotonic()
        code, _, err = run_main(capsys, "query", "search", "kayak", "--vault", str(vault))
        took = time.monotonic() - started
    finally:
        end_process(proc)
    assert code != 0 and f"(pid {proc.pid}, http://127.0.0.1:" in err and "does not answer its health check" in err, err
    assert "stop --vault" in err and f"kill {proc.pid}" in err, err
    assert "starting" not in err and "in use by another" not in err, err
    assert took < WAIT_S / 4, took


@pytest.mark.slow
def test_a_daemon_busy_for_a_moment_is_asked_again_not_refused(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon that missed one health check (a loaded machine: a 50k rebuild beside it) was
    refused at once as silent; it is asked again for a few seconds, and the command goes through it."""
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    write(vault, ".vaultmind/config.toml", "[watch]\ndebounce_ms = 50\n[entities]\nner_model = \"off\"\n")
    write(vault, "boat.md", "# Boat\n\nThe red kayak.\n")
    proc = subprocess.Popen([sys.executable, "-m", "vaultmind", "watch", "--vault", str(vault)], text=True)
    try:
        deadline = time.monotonic() + WAIT_S
        while run_main(capsys, "status", "--vault", str(vault), "--json")[1].get("daemon", {}).get("running") is not True:
            assert time.monotonic() < deadline and proc.poll() is None, "the daemon did not come up"
            time.sleep(0.2)
        proc.send_signal(signal.SIGSTOP)  # it answers nothing for 3 s
        threading.Timer(3.0, proc.send_signal, args=(signal.SIGCONT,)).start()
        code, _, err = run_main(capsys, "query", "search", "kayak", "--vault", str(vault))
    finally:
        proc.send_signal(signal.SIGCONT)
        end_process(proc)
    assert code == 0, err
    assert "does not answer its health check" not in err, err
