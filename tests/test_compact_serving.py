"""A compaction in a serving daemon: the upkeep measures the waste between the steps of a long
pass (not only once it ends), the sizes reported count the WAL, a status answers at once while
the copy runs, and a reindex through the API lets go of what the load left in DuckDB."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import vaultmind.index.compact as compact_module
import vaultmind.upkeep as upkeep_module
from tests.conftest import WAIT_S, until, write
from vaultmind.cli.output import print_status
from vaultmind.client import _busy_with
from vaultmind.config import Config, load_config
from vaultmind.entities.backfill import entity_deriver, ner_pending
from vaultmind.http_routes import ROUTES
from vaultmind.memory import Memory
from vaultmind.status import with_daemon
from vaultmind.upkeep import TreeKeeper

NAMES = ["Alice Chen", "Bob Stone", "Dana Whitfield", "Fernhill Labs", "Marco Ruiz"]


def _notes(vault: Path, count: int) -> None:
    for i in range(count):
        a, b = NAMES[i % len(NAMES)], NAMES[(i + 2) % len(NAMES)]
        write(vault, f"notes/n{i:02d}.md", f"# Note {i}\n\n{a} met {b} in Paris about plan {i}.\n")


def _every_file_worth_compacting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upkeep_module, "WASTE_CHECK_S", 0.0)
    monkeypatch.setattr(compact_module, "WORTH_MIN_BYTES", 0)
    monkeypatch.setattr(compact_module, "WORTH_RATIO", 0.0)


@contextmanager
def _compaction_held_at_its_second_table(memory: Memory) -> Iterator[None]:
    """Runs `memory.compact` in a thread whose progress listener holds the copy at its second
    table; the body runs while it is held, and the compaction ends when the body does."""
    reached, go_on = threading.Event(), threading.Event()

    def paused(phase: str, done: int, total: int) -> None:
        if done == 2:
            reached.set()
            go_on.wait(WAIT_S)

    compacting = threading.Thread(target=memory.compact, args=(paused,))
    compacting.start()
    try:
        assert reached.wait(WAIT_S)
        yield
    finally:
        go_on.set()
        compacting.join(WAIT_S)


def test_the_upkeep_compacts_between_the_batches_of_a_long_ner_catch_up(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Measured only once a pass had ended, the waste of a daemon whose first NER catch-up or
    seal pass runs for hours was never measured, and its file grew for good."""
    write(vault, ".vaultmind/config.toml", "[entities]\nner_inline = 0\n")
    _notes(vault, 12)
    config = load_config(vault, embed_provider="none")
    heard: list[tuple[str, int, int]] = []
    with Memory.open(config, progress=lambda phase, done, total: heard.append((phase, done, total))) as memory:
        deriver = entity_deriver(memory)
        assert deriver is not None
        if not deriver.ner.available:
            pytest.skip(deriver.ner.status()["message"])
        memory.sync()
        assert ner_pending(memory.index, deriver) == 12
        monkeypatch.setattr("vaultmind.memory.BACKGROUND_NER_BATCH", 4)  # three batches
        monkeypatch.setattr("vaultmind.memory.QUIET_S", 0.1)
        _every_file_worth_compacting(monkeypatch)
        heard.clear()
        keeper = TreeKeeper(memory)
        keeper.start()
        try:
            keeper.poke()
            assert until(lambda: keeper.runs >= 1, 180.0), "the upkeep pass did not end"
        finally:
            keeper.stop()
        assert keeper.last_error is None
        phases = [phase for phase, _, _ in heard]
        first, last = phases.index("ner"), len(phases) - 1 - phases[::-1].index("ner")
        assert "compact" in phases[:first], "no compaction at the start of the pass"
        assert "compact" in phases[first:last], f"no compaction between the catch-up's batches: {phases}"
        assert ("ner", 12, 12) in heard  # the catch-up went on over the compactions, every text analysed
        assert memory.index.compacting is None


def test_the_sizes_a_compaction_reports_count_the_wal(config: Config) -> None:
    """Its opening checkpoint folds the WAL into the file: the file alone read "26.8 → 29.0 MB"."""
    _notes(config.vault, 30)
    with Memory.open(config) as memory:
        memory.sync()
        memory.index.checkpoint()
        for i in range(30):  # small commits: left in the WAL
            write(config.vault, f"notes/n{i:02d}.md", f"# Note {i}\n\nrewritten {i} about the harbour.\n")
            memory.sync_paths([f"notes/n{i:02d}.md"])
        path = config.index_path
        wal = Path(f"{path}.wal")
        assert wal.exists() and wal.stat().st_size > 0
        on_disk = path.stat().st_size + wal.stat().st_size
        done = memory.compact()
        assert done["before_bytes"] == on_disk
        assert done["after_bytes"] == path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def test_a_status_answers_at_once_while_a_compaction_holds_the_index(config: Config) -> None:
    """Each request waited for the whole copy (6–24 s at 2,000 notes, 22–35 s at 50k), a
    status bar's polls too; a status now says the index is being compacted, from the last
    status's counts."""
    _notes(config.vault, 10)
    with Memory.open(config) as memory:
        memory.sync()
        before = memory.status()
        assert before["index"].get("compacting") is None
        with _compaction_held_at_its_second_table(memory):
            answers: list[dict[str, Any]] = []
            asked = time.monotonic()
            status = threading.Thread(target=lambda: answers.append(memory.status()), daemon=True)
            status.start()
            status.join(10.0)
            assert answers, "the status waited for the compaction"
            assert time.monotonic() - asked < 10.0
            during = answers[0]
            assert during["index"]["health"] == "compacting"
            assert during["index"]["compacting"]["done"] == 2
            assert during["index"]["compacting"]["total"] > 2
            assert "compacted" in during["index"]["notice"]
            assert during["notes"] == before["notes"] and during["leaves"] == before["leaves"]
        assert memory.index.compacting is None
        after = memory.status()
        assert after["index"]["health"] == "ok" and after["index"]["compacting"] is None
        assert after["notes"] == before["notes"]


def test_a_status_during_a_compaction_before_any_other_carries_every_key(
    config: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first status asked while a compaction holds the index (the daemon compacts by itself
    when idle; a status bar's first poll is often its first status) said only `vault`,
    `loading` and `index`: the Obsidian plugin read `problems` and showed its own TypeError, and
    `vaultmind status` failed on `notes`. Every key is now there, null or empty."""
    _notes(config.vault, 10)
    with Memory.open(config) as memory:
        memory.sync()
        with _compaction_held_at_its_second_table(memory):
            during = memory.status()
        after = memory.status()
    assert during["index"]["health"] == "compacting" and during["index"]["compacting"]["done"] == 2
    assert set(during) == set(after)
    assert during["problems"] == [] and during["notes"] is None and during["queue"] is None
    print_status(during)
    shown = capsys.readouterr().out
    assert "not counted yet: the index file is being compacted" in shown and "index   compacting" in shown
    paused_workers = with_daemon(during, {"workers": {"blocked": "a corrupt index"}})
    assert paused_workers["queue"]["health"] == "paused"
    print_status(paused_workers)  # (its queue has no counts: it said nothing but failed on them)
    shown = capsys.readouterr().out
    assert "queue   not counted yet; health paused" in shown and "the daemon's workers are paused: a corrupt index" in shown


def test_a_client_that_gave_up_waiting_says_the_daemon_is_compacting() -> None:
    assert "compacting its index file (step 3 of 9)" in _busy_with({"ok": True, "compacting": {"done": 3, "total": 9}})
    assert "large batch" in _busy_with({"ok": True, "compacting": None})


def test_a_reindex_through_the_api_opens_the_index_again_as_a_start_up_rebuild_does(config: Config) -> None:
    """A whole-vault load leaves memory in DuckDB that only a new connection lets go of
    (−14 MiB measured at 50k notes); the start-up rebuild reopened, the API's reindex did not."""
    _notes(config.vault, 10)
    with Memory.open(config) as memory:
        memory.sync()
        con = memory.index.con
        answer = ROUTES[("POST", "/v1/reindex")](memory, {})
        assert memory.index.con is not con
        assert answer["notes"] == 10
        assert memory.index.scalar("SELECT count(*) FROM notes") == 10
        assert memory.query("search", {"query": "Paris plan"})["hits"]
