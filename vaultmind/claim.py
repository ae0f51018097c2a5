"""One daemon per vault: the claim a daemon takes before it opens the index.

A daemon publishes its address (`daemon.json`) once its API is up, a few seconds after it
starts (opening the index, loading the embedder). A second daemon started meanwhile found no
`daemon.json`, waited for the index's lock (`store.BUSY_WAIT_S`, 10 s) and then failed
without a word of the first. The claim is an advisory lock (`flock`) on
`.vaultmind/daemon.lock`, taken before the index is opened and held for the daemon's life (the
system lets it go when the process ends, however it ends); the file names the holder's pid. A
second daemon that finds it held names the first at once: its pid, and its address as soon
as it has one (`CLAIM_WAIT_S`).

Elsewhere than on POSIX systems there is no claim, and a second daemon waits for the index's
lock as before.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from typing import IO

from vaultmind.client import DaemonClient, find_daemon
from vaultmind.config import Config
from vaultmind.errors import UsageError

CLAIM_FILE = "daemon.lock"
CLAIM_WAIT_S = 3.0  # a second daemon waits this long at most for the first's address
_POLL_S = 0.05


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
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _held_by_another(config, fh) from None
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


def _held_by_another(config: Config, fh: IO[str]) -> UsageError:
    """The error for a claim another process holds: its address once its API is up (within
    `CLAIM_WAIT_S`), else its pid and that it is starting."""
    deadline = time.monotonic() + CLAIM_WAIT_S
    pid: int | None = None
    while True:
        fh.seek(0)
        with contextlib.suppress(ValueError):
            pid = int(fh.read().strip())
        client = find_daemon(config)
        if client is not None:
            return _already_runs(config, client.pid, client)
        if time.monotonic() >= deadline:
            return _already_runs(config, pid, None)
        time.sleep(_POLL_S)


def _already_runs(config: Config, pid: int | None, client: DaemonClient | None) -> UsageError:
    who = f"pid {pid}" if pid is not None else "its pid not written yet"
    where = f"api {client.base}" if client is not None else "still starting: its api is not up yet"
    stop = f"`kill {pid}`" if pid is not None else "stop that process"
    return UsageError(
        f"a vaultmind daemon already runs for {config.vault} ({who}, {where})",
        hint=f"use it as it is (other commands go through it), or stop it first: Ctrl-C where it runs, or {stop}",
    )
