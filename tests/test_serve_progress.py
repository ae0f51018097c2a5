"""What `serve` shows of its background work: a catch-up of entity recognition that runs for
long (a first serve after a large reindex left thousands of texts to it) shows its progress in
the daemon's output, as a reindex shows its phases (it showed nothing until it was done)."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

import pytest

from vaultmind.cli.output import Progress
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
