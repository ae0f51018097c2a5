"""A progress count told again while a long step runs (`TickingProgress`)."""

from __future__ import annotations

import threading

from vaultmind.model import Progress


class TickingProgress:
    """A count told to `progress(phase, done, total)` at each `at`, and by a thread again every
    `tick_s` while the work inside `with` runs, so that a step of seconds (a migration's
    statement, loading a model) is said while it runs, not only after. No progress: nothing
    told."""

    def __init__(self, progress: Progress | None, phase: str, tick_s: float = 1.0):
        self.progress = progress
        self.phase = phase
        self.tick_s = tick_s
        self.count = (0, 0)  # (done, total), last told
        self._lock = threading.Lock()  # the count told whole, never older after newer
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def at(self, done: int, total: int) -> None:
        if self.progress is None:
            return
        with self._lock:
            self.count = (done, total)
            self.progress(self.phase, done, total)

    def _tick(self, progress: Progress) -> None:
        while not self._stop.wait(self.tick_s):
            with self._lock:
                if not self._stop.is_set():
                    progress(self.phase, *self.count)

    def __enter__(self) -> TickingProgress:
        if self.progress is not None:
            self._ticker = threading.Thread(target=self._tick, args=(self.progress,), name="progress-ticker", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
