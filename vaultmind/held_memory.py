"""The index a long-lived process without a daemon (`vaultmind mcp`) keeps open between its calls.

Opening the index and loading what a question reads (the resident leaves and vectors, the
entity names, the embedding model) takes seconds at 10k notes, a walk on what is loaded a few
milliseconds. An agent asks in bursts, so the memory opened for one call is kept for the next,
each call still bringing the index up to date with the vault first (`answer_here`). DuckDB lets
one process hold the file, so the memory is let go:
- at once (within `POLL_S`, or as the call running ends) when another process waits for the
  file — `vaultmind serve` starting, a command run without the daemon: each try of its wait
  writes the file `connection.wanted_path` beside the index (`connection.ask_for_file`). While
  a call runs (the first one opens and loads the index: 7-18 s at 10k notes on a loaded
  machine), the process is told the file comes after it (`connection.promise_file`), so it
  waits that long instead of giving up after its usual 10 s. The next call opens the file
  again no sooner than `YIELD_S` later, so that process's next try takes it;
- after `IDLE_S` without a call, so an idle agent holds neither the file nor the memory;
- at the next call when the vault's index is no longer the file kept open: the vault moved or
  deleted (the call then says it is missing), or put back from a copy (the copy is opened).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

from vaultmind.index.connection import (
    promise_file,
    request_for_file,
    waiter_of,
    wanted_path,
    withdraw_promise,
)

if TYPE_CHECKING:
    from vaultmind.config import Config
    from vaultmind.memory import Memory

log = logging.getLogger(__name__)

IDLE_S = 60.0  # a call's memory kept this long for the next one
POLL_S = 0.1  # how often the keeper looks for a request for the file
# After letting the file go to a process that asked for it, how long the next open waits: longer
# than that process waits between two tries (0.5 s at most, `connection.connect`)
YIELD_S = 1.0
WHO = "vaultmind mcp"  # what a process waiting for the file is told holds it


class HeldMemory:
    """One vault's memory, opened by the first call that needs it (`opener`) and kept, used by
    one call at a time (`lock`: the caller's lock for opening the index in this process)."""

    def __init__(
        self,
        config: Config,
        opener: Callable[[], Memory],
        lock: threading.RLock,
        *,
        idle_s: float = IDLE_S,
        poll_s: float = POLL_S,
    ):
        self.config = config
        self._opener = opener
        self._lock = lock
        self.idle_s = idle_s
        self.poll_s = poll_s
        self._memory: Memory | None = None
        self._request_at_open: str | None = None  # the request standing when the file was opened
        self._calling = False  # a call runs (or opens the index)
        self._promised: set[int] = set()  # the waiting processes told the file comes after the call
        self._promising = threading.Lock()  # a promise is made, and taken back, under it
        self._yielded_at = -YIELD_S  # when the file was let go to a process that asked for it
        self._last_use = 0.0
        self._file: tuple[int, int] | None = None  # the index file kept open, as `_index_file` names it
        self._stop = threading.Event()
        self._keeper: threading.Thread | None = None
        self.opened = 0  # times the index was opened (what a test reads)

    @property
    def held(self) -> bool:
        return self._memory is not None

    @contextmanager
    def memory(self) -> Iterator[Memory]:
        """The kept memory, opened if none is; a call that fails lets it go (a file found broken,
        a sync that failed halfway: the next call opens it afresh), and so does a call at whose
        end another process waits for the file."""
        with self._lock:
            self._calling = True
            self._keep_watch()
            try:
                if self._memory is not None and self._index_file() != self._file:
                    self._release("the vault's index is no longer the file kept open")
                if self._memory is not None and self._wanted():
                    self._release("another process waits for the index")
                if self._memory is None:
                    self._open()
                assert self._memory is not None
                try:
                    yield self._memory
                except BaseException:
                    self._release("a call failed")
                    raise
                finally:
                    self._last_use = time.monotonic()
                    self._file = self._index_file()  # (a call may replace the file: a broken one moved aside)
                if self._wanted():
                    self._release("another process waits for the index")
            finally:
                with self._promising:  # (no promise written after the call: the keeper's is made under it)
                    self._calling = False
                    if self._promised:
                        self._promised.clear()
                        withdraw_promise(self.config.index_path)

    def close(self) -> None:
        """Let the memory go and stop the keeper (the process ends)."""
        self._stop.set()
        with self._lock:
            self._release("the process ends")

    def _open(self) -> None:
        if (wait := self._yielded_at + YIELD_S - time.monotonic()) > 0:
            time.sleep(wait)  # (a call that came as the file was let go: the process that asked takes it first)
        # one left by a process that met the daemon or a command asks nothing of this memory; one
        # written while the index opens (a first call takes seconds) is a process waiting for it
        self._request_at_open = request_for_file(self.config.index_path)
        self._memory = self._opener()
        self._file = self._index_file()
        self.opened += 1

    def _keep_watch(self) -> None:
        """The keeper runs while a call does and while the memory is kept."""
        if self._keeper is None or not self._keeper.is_alive():
            self._stop.clear()
            self._keeper = threading.Thread(target=self._keep, name="vaultmind-held-memory", daemon=True)
            self._keeper.start()

    def _index_file(self) -> tuple[int, int] | None:
        """Which file the vault's index path names now (device, inode); None when there is none."""
        try:
            found = self.config.index_path.stat()
        except OSError:
            return None
        return found.st_dev, found.st_ino

    def _keep(self) -> None:
        """Until the memory is let go and no call runs: while a call runs, tell a process that
        waits for the file that it comes after the call; between calls, look for a request for
        the file, and for the idle time."""
        while not self._stop.wait(self.poll_s):
            if self._calling:
                self._promise()
                continue
            reason = self._why_release()
            if reason is None:
                continue
            with self._lock:  # after the call that runs; a call that starts next finds no keeper and starts one
                if self._why_release() is not None:
                    self._release(reason)
                if self._memory is None:
                    self._keeper = None
                    return

    def _promise(self) -> None:
        """A process waiting for the file while a call runs is told it comes after the call."""
        request = request_for_file(self.config.index_path)
        waiter = waiter_of(request) if request is not None and self._wanted() else None
        with self._promising:
            if waiter is not None and waiter not in self._promised and self._calling:
                self._promised.add(waiter)
                promise_file(self.config.index_path, WHO, self._promised)

    def _why_release(self) -> str | None:
        if self._memory is None:
            return "released"
        if self._wanted():
            return "another process waits for the index"
        if time.monotonic() - self._last_use > self.idle_s:
            return "no call for a while"
        return None

    def _wanted(self) -> bool:
        """A request written since the memory was opened: one other than the request standing
        then, told apart by its text (`connection.ask_for_file`), and not this process's own (its
        wait for the file as it opened it)."""
        request = request_for_file(self.config.index_path)
        return request is not None and request != self._request_at_open and waiter_of(request) != os.getpid()

    def _release(self, reason: str) -> None:
        """Close the memory and take the request for the file away (the file is free now)."""
        memory = self._memory
        if memory is None:
            return
        log.info("index of %s let go: %s", self.config.vault, reason)
        try:
            memory.close()
        finally:
            if self._wanted():
                self._yielded_at = time.monotonic()
                with suppress(OSError):
                    wanted_path(self.config.index_path).unlink()
            self._memory = None
