"""A daemon's start record: what a daemon does before its API is up.

A daemon publishes its address (`daemon.json`) once its index is open and its API listens.
Opening the index can take minutes — an upgrade's migrations, a re-derivation of rows at 50,000
notes — and meanwhile nothing but the claim (`claim.py`, a lock only a process can ask) would
say a daemon is there: the plugin, `status` and `doctor` would say "not running". From the
claim until the address is published, the daemon keeps `.vaultmind/daemon-start.json`: its pid,
what it is doing ("upgrading the index (migration 0035) 3/9") and since when, rewritten at every
change of what it does (once a second at most) and every `HEARTBEAT_S` besides, so a reader
without the claim's lock (the plugin) tells a starting daemon from the record of one killed
outright: a record not rewritten for `FRESH_S` is the latter's. Once the address is published
the record goes, and the daemon's health answer says what it does until it is ready. It is
read with the claim it stands beside (`claim.read_start`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vaultmind.config import Config
    from vaultmind.model import Progress

log = logging.getLogger(__name__)

START_FILE = "daemon-start.json"
HEARTBEAT_S = 5.0
FRESH_S = 30.0  # a record older than this is left by a daemon that ended without removing it
_SAY_EVERY_S = 1.0  # what the daemon does is written this often at most (a phase's change at once)
OPENING = "opening the index"
# How a phase of the start reads in the record ("read 1,200/50,000" → what the user sees).
_PHASES = {"read": "reading the vault's notes"}


def start_file(config: Config) -> Path:
    return config.state_dir / START_FILE


class StartRecord:
    """The start record of this process's daemon, from `__enter__` until `end()` (or the block's
    end). `tell` (a `Progress`) says what it does; `doing` is the last said, kept after `end()`."""

    def __init__(self, config: Config):
        self.path = start_file(config)
        self.doing = OPENING
        self.since = time.time()
        self._phase = ""
        self._written = 0.0  # monotonic time of the last write
        self._lock = threading.Lock()
        self._ended = threading.Event()
        self._beat = threading.Thread(target=self._heartbeat, name="vaultmind-start-record", daemon=True)

    def __enter__(self) -> StartRecord:
        self._write()
        self._beat.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()

    def end(self) -> None:
        """The record goes: the daemon's address is published, or it stops."""
        with self._lock:
            if self._ended.is_set():
                return
            self._ended.set()
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
        if self._beat.is_alive() and self._beat is not threading.current_thread():
            self._beat.join()

    def telling(self, inner: Progress | None) -> Progress:
        """A `Progress` that tells `inner` (when given) and this record."""

        def progress(phase: str, done: int, total: int) -> None:
            if inner is not None:
                inner(phase, done, total)
            self.tell(phase, done, total)

        return progress

    def tell(self, phase: str, done: int, total: int) -> None:
        self.doing = f"{_PHASES.get(phase, phase)} {done:,}/{total:,}"
        changed, self._phase = phase != self._phase, phase
        if changed or time.monotonic() - self._written >= _SAY_EVERY_S:
            self._write()

    def _heartbeat(self) -> None:
        while not self._ended.wait(HEARTBEAT_S):
            self._write()

    def _write(self) -> None:
        with self._lock:
            if self._ended.is_set():
                return
            record = {"pid": os.getpid(), "state": "starting", "doing": self.doing, "since": self.since, "updated": time.time()}
            self._written = time.monotonic()
            tmp = self.path.with_suffix(".tmp")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                tmp.write_text(json.dumps(record, sort_keys=True), encoding="utf-8")
                os.replace(tmp, self.path)
            except OSError as exc:  # (a full disk): the record only informs; the start goes on without it
                log.debug("could not write %s: %s", self.path, exc)


def starting_line(start: dict[str, Any]) -> str:
    """"starting for 2 min: upgrading the index (migration 0035) 3/9" — what a command says of it."""
    took = max(0.0, time.time() - float(start["since"]))
    return f"starting for {_duration(took)}: {start['doing']}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
