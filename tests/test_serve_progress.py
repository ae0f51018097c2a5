"""What `serve` shows of its background work: a catch-up of entity recognition that runs for
long (a first serve after a large reindex left thousands of texts to it) shows its progress in
the daemon's output, as a reindex shows its phases (it showed nothing until it was done)."""

from __future__ import annotations

import io
import itertools
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vaultmind.cli.output import Progress, StatusLine
from vaultmind.config import load_config
from vaultmind.daemon import Daemon
from vaultmind.entities.backfill import entity_deriver, ner_pending
from vaultmind.memory import Memory

from .conftest import write


@pytest.mark.slow
def test_a_long_entity_catch_up_shows_its_progress_in_the_daemons_output(
    vault: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    for n in range(40):
        write(vault, f"notes/n{n:02}.md", f"# Meeting {n}\n\nAlice Chen met Bob Stone in Lisbon about the Tidepool launch {n}.\n")
    write(vault, ".vaultmind/config.toml", "[entities]\nner_inline = 1\n")  # the sync leaves NER to the daemon
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    ticks = itertools.count(step=1.0)  # every report a second later: the run is long at once
    progress = Progress(enabled=True, clock=lambda: next(ticks), terminal=False)
    memory = Memory.open(config, progress=progress)
    try:
        memory.sync()  # the texts now wait for NER, as after a large reindex
        deriver = entity_deriver(memory)
        assert deriver is not None
        waiting = ner_pending(memory.index, deriver)
        assert waiting >= 40
        capfd.readouterr()
        daemon = Daemon(config, memory)
        thread = threading.Thread(target=daemon.run, daemon=True)
        thread.start()
        try:
            deadline = time.monotonic() + 120
            while ner_pending(memory.index, deriver) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert ner_pending(memory.index, deriver) == 0
        finally:
            daemon.stop()
            thread.join(30)
    finally:
        memory.close()
    err = capfd.readouterr().err
    assert f"vaultmind: ner {waiting:,}/{waiting:,} (100%)" in err, err


@pytest.mark.slow
def test_a_stop_right_after_the_catch_ups_last_step_still_shows_that_step(vault: Path) -> None:
    """A background NER step was counted in the daemon's output only after its pause for saves
    and its check for a stop: a stop that came once the last step was committed left "ner
    32/40" as the catch-up's last line, though all 40 were done (seen when a test stopped the
    daemon the moment nothing was left, on a loaded host)."""
    for n in range(40):
        write(vault, f"notes/n{n:02}.md", f"# Meeting {n}\n\nAlice Chen met Bob Stone in Lisbon about the Tidepool launch {n}.\n")
    write(vault, ".vaultmind/config.toml", "[entities]\nner_inline = 1\n")  # the sync leaves NER to the catch-up
    shown: list[tuple[str, int, int]] = []
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        deriver = entity_deriver(memory)
        assert deriver is not None and ner_pending(memory.index, deriver) == 40
        pause = memory.yield_to_foreground

        def stop_once_all_is_committed(**kwargs: Any) -> None:  # the stop comes the moment nothing is left
            if ner_pending(memory.index, deriver) == 0:
                memory.stopping.set()
            pause(**kwargs)

        memory.yield_to_foreground = stop_once_all_is_committed  # type: ignore[method-assign]
        report = memory.enrich(lambda phase, done, total: shown.append((phase, done, total)), background=True)  # type: ignore[arg-type]
        assert ner_pending(memory.index, deriver) == 0 and report["ner_texts"] == 40
    assert ("ner", 40, 40) in shown, shown


def test_the_progress_line_shown_and_ended_from_several_threads_stays_whole(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A daemon's background thread writes the progress line (NER, sealing) while the watcher
    and the API end it after each batch: `end` iterated the phases held back while `show` added
    and removed them ("dictionary changed size during iteration", which stopped `serve`), and
    the threads' lines ran into each other."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns as often as they can
    line = StatusLine(terminal=False)
    errors: list[BaseException] = []
    stop = threading.Event()

    def guarded(work: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                while not stop.is_set():
                    work()
            except BaseException as exc:  # what escaped the line: the thread (the daemon) stops
                errors.append(exc)
        return run

    def show() -> None:
        for n in range(200):  # many phases held back at once, each shown then held
            line.show(f"vaultmind: phase{n} 1/2 (50%)", phase=f"phase{n}", now=0.0)
            line.show(f"vaultmind: phase{n} 1/2 (50%)", phase=f"phase{n}", now=1.0)
        line._logged.clear()

    threads = [threading.Thread(target=guarded(show)) for _ in range(2)]
    threads += [threading.Thread(target=guarded(line.end)) for _ in range(2)]
    try:
        for thread in threads:
            thread.start()
        time.sleep(3.0)
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
        sys.setswitchinterval(interval)
    assert errors == []
    lines = capsys.readouterr().err.split("\n")
    assert lines[-1] == "" and all(re.fullmatch(r"vaultmind: phase\d+ 1/2 \(50%\)", text) for text in lines[:-1])


def test_a_progress_line_written_to_a_stderr_gone_costs_the_line_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A daemon whose stderr has gone (a closed pipe, a full disk) kept working but its
    progress write raised, out of the background thread's step and out of `serve`."""
    gone = io.StringIO()
    gone.close()
    monkeypatch.setattr(sys, "stderr", gone)
    now = [0.0]
    with Progress(clock=lambda: now[0], terminal=False) as progress:
        progress("ner", 0, 10)
        now[0] = 3.0
        progress("ner", 5, 10)  # shown: written to the closed stream
        now[0] = 4.0
        progress("ner", 6, 10)  # held back, written at the end


def test_a_phase_counted_from_two_threads_never_shows_an_older_count_after_a_newer_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Two threads counting one phase: the one at "5/10" decided to show it, released the lock,
    and showed it after the other's "10/10", so the log's last state of the phase was "5/10"."""
    shown = threading.Event()

    class SlowLine(StatusLine):
        def show(self, text: str, *, phase: str, now: float, last: bool = False) -> None:
            if "5/10" in text:  # a slow stderr while this count is written
                shown.set()
                time.sleep(0.5)
            super().show(text, phase=phase, now=now, last=last)

    ticks = itertools.count(step=3.0)  # each report 3 s after the one before: every one is shown
    with Progress(clock=lambda: next(ticks), terminal=False) as progress:
        progress.line = SlowLine(terminal=False)
        progress("ner", 1, 10)  # the run starts
        older = threading.Thread(target=progress, args=("ner", 5, 10))
        older.start()
        assert shown.wait(10)
        newer = threading.Thread(target=progress, args=("ner", 10, 10))
        newer.start()
        older.join(10)
        newer.join(10)
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["vaultmind: ner 5/10 (50%)", "vaultmind: ner 10/10 (100%)"], lines
