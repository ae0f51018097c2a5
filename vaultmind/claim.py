"""One daemon per vault: the claim a daemon takes before it opens the index.

A daemon publishes its address (`daemon.json`) once its API is up, a few seconds after it
starts (opening the index, loading the embedder). A second daemon started meanwhile found no
`daemon.json`, waited for the index's lock (`connection.BUSY_WAIT_S`, 10 s) and then failed
without a word of the first. The claim is an advisory lock (`flock`) on
`.vaultmind/daemon.lock`, taken before the index is opened and held for the daemon's life (the
system lets it go when the process ends, however it ends); the file names the holder's pid. A
second daemon that finds it held names the first at once: its pid, and its address as soon
as it has one (`CLAIM_WAIT_S`). A command (`query`, `status`, `queue --run`) run in that gap
reads the claim too (`claim_holder`) and waits for the daemon's address (`await_address`)
instead of for the index's lock, or (`queue --run`) refuses to run the daemon's work.

Whether the claim is held is asked of the lock, never of the pid the file names: a daemon
killed outright (SIGKILL) leaves its pid in the file, and the system may give that pid to
another process; the lock died with the daemon. The question takes a shared lock for an
instant, so a daemon taking the claim retries its exclusive lock for `_CONTENDED_S` before it
judges the claim another daemon's.

Elsewhere than on POSIX systems there is no claim, and a second daemon waits for the index's
lock as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

from vaultmind.client import DaemonClient, alive, find_daemon
from vaultmind.config import Config
from vaultmind.errors import UsageError
from vaultmind.shell import command_line
from vaultmind.starting import FRESH_S, OPENING, start_file, starting_line

CLAIM_FILE = "daemon.lock"
CLAIM_WAIT_S = 3.0  # a second daemon waits this long at most for the first's address
_POLL_S = 0.05
_CONTENDED_S = 0.5  # a claim found locked is tried again this long (a command asking holds it an instant)


@contextlib.contextmanager
def daemon_claim(config: Config) -> Iterator[None]:
    """Hold the vault's daemon claim for the block; a `UsageError` naming the daemon that holds
    it (pid, and API address once it has one) when another process does."""
    running = find_daemon(config)
    if running is not None:
        raise _already_runs(config, running.pid, running)
    if sys.platform == "win32":
        yield
        return
    import fcntl

    path = config.state_dir / CLAIM_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as fh:
        if not _lock_within(fh, _CONTENDED_S):
            raise _held_by_another(config, fh)
        try:
            fh.seek(0)
            fh.truncate()
            fh.write(f"{os.getpid()}\n")
            fh.flush()
            yield
        finally:
            fh.seek(0)
            fh.truncate()  # (the file stays: removing it would race with a daemon opening it)
            fh.flush()
            fcntl.flock(fh, fcntl.LOCK_UN)


def _lock_within(fh: IO[str], wait_s: float) -> bool:
    """Take the exclusive lock on `fh`, trying for `wait_s` at most; whether it was taken."""
    import fcntl

    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_S)


def claim_holder(config: Config) -> int | None:
    """The pid of the process (another than this one) that holds the vault's daemon claim: a
    daemon starting up, or running. None when no process holds it — whatever pid the file
    still names (a daemon killed outright leaves it, and the pid may belong to another process
    since) — or when its holder has not written its pid yet."""
    if sys.platform == "win32":
        return None  # (no claim there)
    import fcntl

    try:
        with open(config.state_dir / CLAIM_FILE, encoding="utf-8") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:  # held (an exclusive lock): the holder's pid
                named = fh.read().strip()
            else:
                fcntl.flock(fh, fcntl.LOCK_UN)
                return None  # free: no daemon holds the claim
    except OSError:
        return None  # no daemon ever claimed this vault
    if not named.isdigit():
        return None  # being written
    return int(named) if int(named) != os.getpid() else None


def daemon_pid(config: Config) -> int | None:
    """The pid of the vault's daemon: the running one's (as it published its address), else the
    one starting (`claim_holder`); None when there is none."""
    running = find_daemon(config)
    return running.pid if running is not None else claim_holder(config)


def await_address(config: Config, wait_s: float, *, holding: Callable[[], bool] = lambda: True) -> DaemonClient | None:
    """A client for the vault's daemon once it publishes its address, within `wait_s`; None
    when it has not by then, or as soon as `holding()` says the claim's holder is gone."""
    deadline = time.monotonic() + wait_s
    while True:
        client = find_daemon(config)
        if client is not None:
            return client
        if time.monotonic() >= deadline or not holding():
            return None
        time.sleep(_POLL_S)


def _held_by_another(config: Config, fh: IO[str]) -> UsageError:
    """The error for a claim another process holds: its address once its API is up (within
    `CLAIM_WAIT_S`), else its pid and that it is starting."""
    client = await_address(config, CLAIM_WAIT_S)
    if client is not None:
        return _already_runs(config, client.pid, client)
    fh.seek(0)
    pid: int | None = None
    with contextlib.suppress(ValueError):
        pid = int(fh.read().strip())
    return _already_runs(config, pid, None)


def _already_runs(config: Config, pid: int | None, client: DaemonClient | None) -> UsageError:
    who = f"pid {pid}" if pid is not None else "its pid not written yet"
    if client is not None:
        where = f"api {client.base}"
    else:
        start = read_start(config)
        state = f"{starting_line(start)};" if start is not None else "still starting:"
        where = f"{state} its api is not up yet"
    stop = f"`kill {pid}`" if pid is not None else "stop that process"
    return UsageError(
        f"a vaultmind daemon already runs for {config.vault} ({who}, {where})",
        hint=(
            "use it as it is (other commands go through it), or stop it first: "
            f"`{command_line('stop', '--vault', config.vault)}`, Ctrl-C where it runs, or {stop}"
        ),
    )


def read_start(config: Config) -> dict[str, Any] | None:
    """The record of a daemon starting for the vault (`pid`, `doing`, `since`, `updated`: seconds
    since the epoch), or None when none is starting: no record, or one whose daemon ended — its
    process gone, its claim not held by it (POSIX), or the record not rewritten for `FRESH_S`."""
    try:
        record = json.loads(start_file(config).read_text(encoding="utf-8"))
        pid, updated = int(record["pid"]), float(record["updated"])
        doing = str(record.get("doing") or OPENING)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not alive(pid) or time.time() - updated > FRESH_S:
        return None
    if sys.platform != "win32":
        if pid != os.getpid() and claim_holder(config) != pid:
            return None  # a record a killed daemon left, its pid given anew since
    return {"pid": pid, "doing": doing, "since": float(record.get("since") or updated), "updated": updated}
