"""The index's connection, once closed on purpose, opened again — and what happens when that
fails.

A compaction (after its rename) and the reopen after a whole-vault rebuild close the index's
connection and open the file again (`connection.reconnect`, waiting up to `REOPEN_WAIT_S`
while another process holds it). Should that fail — another process kept the file beyond the
wait, or any other error — the index has no connection: before, it stayed so until the daemon
restarted, and every request failed with DuckDB's "connection already closed". Now the open is
retried in the background with a growing pause (`Reopening`) and by the next statement that
needs the connection (`Index.con`); meanwhile each such statement fails at once with
`IndexUnavailable`, naming the file and what to do. Nothing is lost: the file was closed whole
(checkpointed) and is only opened again, never moved aside for this.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import duckdb

from vaultmind.errors import IndexBusy, IndexUnavailable
from vaultmind.index.connection import REOPEN_WAIT_S, close_index, reconnect, settings_of

log = logging.getLogger(__name__)

RETRY_FIRST_S = 0.5  # the background's first try after the failed open, doubled after each that fails
RETRY_MAX_S = 30.0  # … up to this pause between two tries


class Reopening:
    """A connection to open again at `path` with `settings` (`connection.settings_of`): tried
    by a background thread with backoff (`try_open`, which returns whether the index has a
    connection again), until it succeeds or `stop` is called (the index is closed)."""

    def __init__(self, path: Path, settings: dict[str, str], error: BaseException, try_open: Callable[[], bool]):
        self.path = path
        self.settings = settings
        self.error = error  # why the last try failed
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._retry, args=(try_open,), name="index-reopen", daemon=True)
        self._thread.start()

    def _retry(self, try_open: Callable[[], bool]) -> None:
        pause = RETRY_FIRST_S
        while not self._stopped.wait(pause):
            try:
                if try_open():
                    return
            except Exception:  # the thread must go on trying whatever one try met
                log.exception("opening the index again failed")
            pause = min(pause * 2, RETRY_MAX_S)

    def stop(self) -> None:
        self._stopped.set()

    def unavailable(self) -> IndexUnavailable:
        """The error a statement gets meanwhile: the file, why, and what to do."""
        from vaultmind.index.opening import first_line

        if isinstance(self.error, IndexBusy):
            why = "another process holds it"
            hint = (
                "end the other vaultmind process using this index (a command run without the daemon); "
                "it is opened again by itself within half a minute after, and nothing is lost"
            )
        else:
            why = first_line(self.error)
            hint = (
                "mend what the error names (the file's permissions, a full disk); it is opened again by itself "
                "within half a minute after, or restart the daemon — the file is whole, nothing is lost"
            )
        return IndexUnavailable(
            f"the index file was closed (a compaction or a rebuild's reopen) and could not be opened again yet: {why}",
            path=self.path,
            hint=hint,
        )


class Reconnecting:
    """The part of `Index` that holds its connection (`con`) and opens it again (`reopen`,
    and a compaction's `_reopen`), with the retries above when that fails. `Index` gives the
    file (`path`), the lock every use of the connection holds, and `_read_again` (its own
    views); `reopened` tells the others (the resident leaves and vectors)."""

    path: Path | None
    lock: threading.RLock

    def _hold(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con
        self.reopen_wait_s = REOPEN_WAIT_S  # how long `_reopen` waits while another process holds the file
        self._reopening: Reopening | None = None  # the connection closed and not opened again yet
        # called once the file is opened again after a failed open: what was read from it is stale
        self.reopened: list[Callable[[], object]] = []

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The connection; while it could not be opened again (`_reopen`), one more try first,
        and `IndexUnavailable` when that fails too."""
        reopening = self._reopening
        if reopening is not None and not self._try_reopen():
            raise reopening.unavailable()
        return self._con

    @con.setter
    def con(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con

    def try_reopening(self) -> None:
        """While the file could not be opened again, one try now (without raising: a read
        answers from what it has). A question answered from the resident leaves and vectors
        runs no statement (`con`): it answered from them as they were, without what the
        process that held the file wrote, until the background's next try — up to
        `RETRY_MAX_S` after that process let go."""
        if self._reopening is not None:
            self._try_reopen()

    @property
    def unavailable(self) -> str | None:
        """Why the index has no connection (it could not be opened again yet), or None."""
        reopening = self._reopening
        return None if reopening is None else str(reopening.unavailable())

    def reopen(self) -> None:
        """Close the connection (its checkpoint) and open the file again with its settings: a
        database keeps memory after a whole-vault load that no eviction lets go (at 50k notes
        294 -> 280 MiB). Every use of `con` holds the lock, which this holds throughout."""
        if self.path is None:
            return
        with self.lock:
            settings = settings_of(self.con)
            close_index(self.con)
            self._reopen(settings)

    def _reopen(self, settings: dict[str, str]) -> None:
        """Open the file again after its connection was closed (`settings`: the closed one's),
        waiting up to `reopen_wait_s` while another process holds it; one that did may have
        written it, so what was read from it is read again (`_opened_again`). When that fails,
        the open is retried in the background and by the next use of `con` (`Reopening`), and
        `IndexUnavailable` says so; the file is left as it is."""
        assert self.path is not None
        for wait_s in (0.0, self.reopen_wait_s):
            try:
                self._con = reconnect(self.path, settings, wait_s=wait_s)
            except IndexBusy as exc:  # another process took the file in that moment: waited for
                if wait_s:
                    self._failed(settings, exc)
                continue
            except BaseException as exc:
                self._failed(settings, exc)
            if wait_s:
                self._opened_again()
            return

    def _failed(self, settings: dict[str, str], exc: BaseException) -> NoReturn:
        """The open after a close failed with `exc`: retried from now on (`Reopening`)."""
        assert self.path is not None
        self._reopening = Reopening(self.path, settings, exc, self._try_reopen)
        log.error("the index %s could not be opened again: %s; retrying in the background", self.path, exc)
        if not isinstance(exc, Exception):  # Ctrl-C: said as such
            raise exc
        raise self._reopening.unavailable() from exc

    def _opened_again(self) -> None:
        """What was read from the file is read again: another process had it meanwhile."""
        self._read_again()
        for listener in self.reopened:
            listener()

    def _try_reopen(self) -> bool:
        """One try at opening the file again, without waiting: whether the index has a
        connection. Another process may have written the file meanwhile: what was read from
        it is read again (`_opened_again`)."""
        with self.lock:
            reopening = self._reopening
            if reopening is None:
                return True
            assert self.path is not None
            try:
                self._con = reconnect(self.path, reopening.settings, wait_s=0.0)
            except Exception as exc:
                reopening.error = exc
                return False
            reopening.stop()
            self._reopening = None
            self._opened_again()
            log.info("the index %s is open again", self.path)
            return True

    def _give_up_reopening(self) -> bool:
        """On close: stop the retries; whether there were any (then there is no connection to close)."""
        reopening, self._reopening = self._reopening, None
        if reopening is None:
            return False
        reopening.stop()
        return True

    def _read_again(self) -> None:
        raise NotImplementedError
