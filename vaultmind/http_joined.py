"""Whole-vault work a daemon is asked for twice at once, done once.

A reindex, a sync of the whole vault or a flush takes seconds to minutes, and the daemon goes
on with it when its client leaves (the server only notices a client gone when it answers).
A user who presses Ctrl-C and runs the command again, or a script that retries on its
timeout, queued one more full run behind the first each time: four interrupted reindexes were
four rebuilds back to back. A request for the same work while it runs now joins it: it waits
for that run and answers with its result, marked `joined`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Any

log = logging.getLogger(__name__)


class Joined:
    """The whole-vault work running now, by what it is (`key`): a request for work already
    running waits for it and shares its answer, instead of running it again after it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[Hashable, Future[dict[str, Any]]] = {}

    def run(self, key: Hashable, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """`work()`'s answer; when the same work (`key`) is running, that run's answer (or its
        error), marked `"joined": true`, once it ends."""
        with self._lock:
            running = self._running.get(key)
            if running is None:
                mine: Future[dict[str, Any]] = Future()
                self._running[key] = mine
        if running is not None:
            log.info("%s asked for while it runs: joins it", _named(key))
            return {**running.result(), "joined": True}
        log.info("%s asked for: runs", _named(key))
        try:
            answer = work()
        except BaseException as exc:
            self._ended(key)
            mine.set_exception(exc)
            raise
        self._ended(key)
        mine.set_result(answer)
        return answer

    def _ended(self, key: Hashable) -> None:
        """The run of `key` is over: a request from now on runs the work again, never joins it.
        (Done before its answer is handed over: one asked in between joined a run already over.)"""
        with self._lock:
            del self._running[key]


def _named(key: Hashable) -> str:
    """What the work is, for the log: its key, or a tuple key's first part ("sync", "flush")."""
    return str(key[0] if isinstance(key, tuple) and key else key)
