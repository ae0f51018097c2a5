"""The index a long-lived process without a daemon (`vaultmind mcp`) keeps open between its calls.

Opening the index and loading what a question reads (the resident leaves and vectors, the
entity names, the embedding model) takes seconds at 10k notes, a walk on what is loaded a few
milliseconds. An agent asks in bursts, so the memory opened for one call is kept for the next,
each call still bringing the index up to date with the vault first (`answer_here`). DuckDB lets
one process hold the file, so the memory is let go:
- at once (within `POLL_S`, after the call running) when another process waits for the file —
  `vaultmind serve` starting, a command run without the daemon: each try of its wait writes the
  file `connection.wanted_path` beside the index (`connection.ask_for_file`). The next call
  opens it again no sooner than `YIELD_S` later, so that process's next try takes the file;
- after `IDLE_S` without a call, so an idle agent holds neither the file nor the memory;
- at the next call when the vault's index is no longer the file kept open: the vault moved or
  deleted (the call then says it is missing), or put back from a copy (the copy is opened).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

from vaultmind.index.connection import request_for_file, wanted_path

if TYPE_CHECKING:
    from vaultmind.config import Config
    from vaultmind.memory import Memory

log = logging.getLogger(__name__)

IDLE_S = 60.0  # a call's memory kept this long for the next one
POLL_S = 0.1  # how often the keeper looks for a request for the file
# After letting the file go to a process that asked for it, how long the next open waits: longer
# than that process waits between two tries (0.5 s at most, `connection.connect`)
YIELD_S = 1.0


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
        a sync that failed halfway: the next call opens it afresh)."""
        with self._lock:
            if self._memory is not None and self._index_file() != self._file:
                self._release("the vault's index is no longer the file kept open")
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

    def close(self) -> None:
        """Let the memory go and stop the keeper (the process ends)."""
        self._stop.set()
        with self._lock:
            self._release("the process ends")

    def _open(self) -> None:
        if (wait := self._yielded_at + YIELD_S - time.monotonic()) > 0:
            time.sleep(wait)  # (a call that came as the file was let go: the process that asked takes it first)
        self._memory = self._opener()
        # one left by a process that met the daemon or a command, or by this one's own wait for
        # the file as it opened it, asks nothing of this memory
        self._request_at_open = request_for_file(self.config.index_path)
        self._file = self._index_file()
        self.opened += 1
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
        """Until the memory is let go: look for a request for the file, and for the idle time."""
        while not self._stop.wait(self.poll_s):
            reason = self._why_release()
            if reason is None:
                continue
            with self._lock:  # after the call that runs
                if self._why_release() is not None:
                    self._release(reason)
            if self._memory is None:
                return

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
        then, told apart by its text (`connection.ask_for_file`)."""
        request = request_for_file(self.config.index_path)
        return request is not None and request != self._request_at_open

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
