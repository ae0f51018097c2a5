"""One answer at a time, shared by those who asked for it while they waited (the daemon's `status`).

A status hashes every leaf; at 50k notes on a busy machine it took 10 s and more. Clients that
poll it with a short timeout (a status bar, a script) asked again and again while one was being
worked out: each request waited its turn, then was worked out for a client long gone — 46 of
them queued at once in a daemon's start-up, each ~10 s of work. Here the requests that come
while an answer is being worked out wait for the next one and share it (so it is never older
than their question), and a request whose client has left by its turn is not worked out at all.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")

# Whether the client of the request this thread answers still waits for it: set by the HTTP
# server around each request (`http_api`); in process, someone always waits.
client_waits: contextvars.ContextVar[Callable[[], bool]] = contextvars.ContextVar("client_waits", default=lambda: True)


class ClientLeft(ConnectionAbortedError):
    """The client of a request left before its turn came: nobody is there to be answered."""


class _Round(Generic[T]):
    """One answer to be worked out, and those waiting for it."""

    def __init__(self) -> None:
        self.done = False
        self.value: T | None = None
        self.error: BaseException | None = None

    def outcome(self) -> T:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]  # (set with `done`)


class SharedAnswers(Generic[T]):
    """Works out one answer at a time. A caller that asks while one is worked out waits for the
    next, which every caller waiting with the same key shares; the first of them whose client
    still waits (`client_waits`) works it out when its turn comes, one whose client left gives
    up (`ClientLeft`) — so N abandoned requests cost no work, N waiting ones one answer."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._busy = False
        self._next: dict[Hashable, _Round[T]] = {}  # per key: the answer not begun yet

    def ask(self, key: Hashable, work_out: Callable[[], T]) -> T:
        """The next answer `work_out()` gives for `key`, worked out here or by another caller."""
        waits = client_waits.get()
        with self._changed:
            turn = self._next.setdefault(key, _Round())
            while not turn.done:
                if not self._busy and self._next.get(key) is turn:
                    if not waits():
                        self._changed.notify_all()  # another caller waiting for it may take the turn
                        raise ClientLeft("the client left before its answer was worked out")
                    self._busy = True
                    del self._next[key]
                    break
                self._changed.wait()
            else:
                return turn.outcome()
        try:
            turn.value = work_out()
        except BaseException as exc:
            turn.error = exc
            raise
        finally:
            with self._changed:
                turn.done, self._busy = True, False
                self._changed.notify_all()
        return turn.value
