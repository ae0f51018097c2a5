"""A daemon stopped while it applies a whole-vault sync (the first index of a large vault) leaves
off at the end of the batch in hand: the batches it applied stay committed, and the next start
applies the rest."""

from __future__ import annotations

import threading
from pathlib import Path

from vaultmind.config import load_config
from vaultmind.daemon import Daemon
from vaultmind.memory import Memory

from .conftest import WAIT_S, write

NOTES = 40
BATCH = 4


def test_a_stop_during_the_first_reconcile_leaves_off_at_a_batch_end(vault: Path) -> None:
    for n in range(NOTES):
        write(vault, f"note-{n:02d}.md", f"# Note {n}\n\nThe atlas launch, part {n}.\n")
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    reported: list[int] = []
    runner: Daemon | None = None

    def progress(phase: str, done: int, total: int) -> None:
        if phase == "read" and total == NOTES:
            reported.append(done)
            if done >= 2 * BATCH and runner is not None:
                runner.stop()  # as `vaultmind stop` (SIGTERM) does: the stop event

    memory = Memory.open(config, progress=progress)
    memory.syncer.apply_batch = BATCH
    runner = Daemon(config, memory)
    thread = threading.Thread(target=runner.run, daemon=True)
    try:
        thread.start()
        thread.join(WAIT_S)
        assert not thread.is_alive(), "the daemon ended"
        indexed = int(memory.index.scalar("SELECT count(*) FROM notes"))
    finally:
        runner.stop()
        thread.join(WAIT_S)
        memory.close()
    assert reported[-1] == 2 * BATCH, f"no batch was read after the stop: {reported}"
    assert indexed == 2 * BATCH, "the batches applied before the stop are committed, no more"
    assert runner.last_batch_error is None and runner.failed_batches == 0, "a stop is no failure"
    with Memory.open(config) as again:  # the next start applies the rest
        stats = again.sync()
        assert stats.added == NOTES - 2 * BATCH
        assert int(again.index.scalar("SELECT count(*) FROM notes")) == NOTES
