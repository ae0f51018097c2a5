"""The daemon's claim on a vault, as commands read it: held by a daemon starting up (no address
yet), or left behind by one killed outright whose pid another process has since."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from vaultmind.claim import CLAIM_FILE, claim_holder, daemon_claim
from vaultmind.config import load_config

from .conftest import end_process, run_main, write
from .test_watch import CLAIM_AND_WAIT


@contextmanager
def holding(script: str, vault: Path, says: str) -> Iterator[subprocess.Popen[str]]:
    """Another process running `script` on the vault, from the moment it prints `says` (what it
    holds is in place); killed at the end."""
    holder = subprocess.Popen([sys.executable, "-c", script, str(vault)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == says
        yield holder
    finally:
        end_process(holder)


def claimed(vault: Path) -> AbstractContextManager[subprocess.Popen[str]]:
    """Another process holding the vault's daemon claim, as a daemon does while it opens the
    index (before its api is up); killed at the end."""
    return holding(CLAIM_AND_WAIT, vault, "claimed")


def test_queue_run_refuses_while_a_daemon_starts(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`queue --run` while a daemon is starting (it holds the claim, has no address yet) is
    refused at once, naming the daemon, as it is while the daemon runs: the daemon's workers
    run the queue (it had waited for the daemon's address, then asked it for the queue's
    figures, or opened the index and run the queue itself)."""
    write(vault, "start.md", "# Start\n\nThe first note mentions atlas.\n")
    with claimed(vault) as holder:
        start = time.monotonic()
        code, out, err = run_main(capsys, "queue", "--run", "--vault", str(vault), "--timeout", "5")
        took = time.monotonic() - start
    assert code == 2, out + err
    assert f"the daemon for {vault} (pid {holder.pid}) already runs the queue" in err, err
    assert "drop --run, or stop the daemon first" in err
    assert took < 10, f"refused after {took:.1f} s"


def test_a_claim_left_by_a_killed_daemon_is_not_waited_for_though_its_pid_lives_on(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A daemon killed outright (SIGKILL) leaves its pid in the claim file, and the system may
    give that pid to another process. The claim is judged by its lock, which died with the
    daemon: a `query` answers at once (it had waited 60 s for an address that never came)."""
    write(vault, "start.md", "# Start\n\nThe first note mentions atlas.\n")
    config = load_config(vault, embed_provider="none")
    with claimed(vault) as holder:
        assert claim_holder(config) == holder.pid
        holder.kill()
        holder.wait(20)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        (config.state_dir / CLAIM_FILE).write_text(f"{other.pid}\n", encoding="utf-8")  # the pid, reused
        assert claim_holder(config) is None
        start = time.monotonic()
        code, out, err = run_main(capsys, "query", "search", "atlas", "--vault", str(vault), "--json")
        took = time.monotonic() - start
    finally:
        other.kill()
        other.wait(20)
    assert code == 0, err
    assert out["hits"][0]["note_path"] == "start.md"
    assert "is starting" not in err, err
    assert took < 20, f"answered after {took:.1f} s"


def test_a_command_asking_about_the_claim_never_makes_a_daemon_starting_then_give_way(vault: Path) -> None:
    """A command asks the lock whether a daemon holds the claim (a shared lock, for an
    instant); a daemon taking the claim at that instant tries again, and takes it."""
    config = load_config(vault, embed_provider="none")
    config.state_dir.mkdir(parents=True, exist_ok=True)
    with open(config.state_dir / CLAIM_FILE, "a+", encoding="utf-8") as asking:
        fcntl.flock(asking, fcntl.LOCK_SH)  # a command's question, held longer than ever it is
        release = threading.Timer(0.2, fcntl.flock, (asking, fcntl.LOCK_UN))
        release.start()
        try:
            with daemon_claim(config):
                held = (config.state_dir / CLAIM_FILE).read_text(encoding="utf-8").strip()
        finally:
            release.join()
    assert held.isdigit(), "the daemon took its claim and wrote its pid"


def test_stop_ends_a_daemon_still_starting_and_leaves_a_reused_pid_alone(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`vaultmind stop` finds a daemon that has no address yet by its claim and ends it; then,
    with the claim file naming a live process that holds no claim (a pid given anew), it says no
    daemon runs and sends that process nothing."""
    with claimed(vault) as holder:
        code, out, err = run_main(capsys, "stop", "--vault", str(vault))
        assert code == 0, err
        assert out.strip() == f"vaultmind: stopped the daemon for {vault} (pid {holder.pid})"
        assert holder.wait(20) == -15, "ended by SIGTERM"
    config = load_config(vault, embed_provider="none")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        (config.state_dir / CLAIM_FILE).write_text(f"{other.pid}\n", encoding="utf-8")
        code, out, err = run_main(capsys, "stop", "--vault", str(vault), "--json")
        assert code == 0, err
        assert out == {"stopped": False, "pid": None}
        time.sleep(0.2)
        assert other.poll() is None, "a process that is no daemon of this vault is left alone"
    finally:
        other.kill()
        other.wait(20)
