"""The daemon's NER catch-up lets its model's process go during a long burst of saves, and
starts it again once after the burst (`Memory.yield_to_foreground`'s `release`)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import vaultmind.memory as memory_module
from vaultmind.config import load_config
from vaultmind.entities.backfill import entity_deriver, ner_pending
from vaultmind.memory import Memory

from .conftest import until, write


@pytest.mark.slow
def test_a_long_burst_of_saves_stops_the_catch_ups_model_process_until_the_burst_is_over(
    vault: Path, ner_model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 50k notes the model's process (~120 MiB) stayed beside a burst of saves for its whole
    length, the catch-up holding it while it waited for a pause: the daemon's peak was a save's
    and the process's together. Now a wait past `RELEASE_AFTER_S` through a burst of saves
    stops the process, and saves a little apart (pauses longer than `QUIET_S`, shorter than
    `RESUME_QUIET_S`) do not start it again for a batch between two of them; it comes back
    once they stop."""
    monkeypatch.setattr(memory_module, "BACKGROUND_NER_BATCH", 1)
    monkeypatch.setattr(memory_module, "QUIET_S", raising=False, value=0.2)
    monkeypatch.setattr(memory_module, "RELEASE_AFTER_S", raising=False, value=0.5)
    monkeypatch.setattr(memory_module, "RESUME_QUIET_S", raising=False, value=1.5)
    for i, name in enumerate(["Angela Merkel", "Tim Cook", "Zoë O'Brien"]):
        write(vault, f"notes/n{i}.md", f"{name} spoke in Berlin about item {i}.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as m:
        m.serve()
        m.sync()
        deriver = entity_deriver(m)
        assert deriver is not None and ner_pending(m.index, deriver) >= 3
        saving = threading.Event()
        burst_over = threading.Event()
        seen_in_burst: list[int | None] = []

        def saves() -> None:
            """A save held from the first batch's end for 2 s, then 1 s of saves closer than
            `QUIET_S` (a burst: the wait, begun beside the long save, lets the process go at
            the first of them), then 3 s of saves 0.5 s apart, the model's process looked at
            all along these."""
            with m.foreground():
                saving.set()
                end = time.monotonic() + 2.0
                while time.monotonic() < end:
                    time.sleep(0.05)
            end = time.monotonic() + 1.0
            while time.monotonic() < end:
                with m.foreground():
                    time.sleep(0.05)
                time.sleep(0.1)
            end = time.monotonic() + 3.0
            while time.monotonic() < end:
                with m.foreground():
                    time.sleep(0.05)
                for _ in range(10):
                    seen_in_burst.append(deriver.ner.process_id)
                    time.sleep(0.05)
            burst_over.set()

        saver = threading.Thread(target=saves)
        pause = m.yield_to_foreground

        def first_batch_then_saves(*args: object, **kwargs: object) -> None:
            if deriver.ner.process_id is not None and not saver.is_alive() and not saving.is_set():
                saver.start()  # the first batch ran: its process is up
                saving.wait(5)
            pause(*args, **kwargs)  # type: ignore[arg-type]

        m.yield_to_foreground = first_batch_then_saves  # type: ignore[method-assign]
        catch_up = threading.Thread(target=m.enrich, kwargs={"background": True})
        catch_up.start()
        assert until(lambda: saving.is_set(), seconds=60), "the catch-up never ran its first batch"
        assert until(lambda: burst_over.is_set(), seconds=30)
        catch_up.join(60)
        assert not catch_up.is_alive()
        assert seen_in_burst and set(seen_in_burst) == {None}, "the model's process stayed beside the burst of saves"
        assert ner_pending(m.index, deriver) == 0
        assert deriver.ner._runner is not None and deriver.ner._runner.started == 2  # type: ignore[attr-defined]


def test_one_long_save_keeps_the_catch_ups_model_process_and_a_burst_lets_it_go(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The release came once a wait had lasted `RELEASE_AFTER_S`, whatever kept it waiting:
    one save longer than that (at 50k notes on a busy host a save takes 3–8 s), with nothing
    after it, stopped the model's process, and the catch-up then waited `RESUME_QUIET_S`
    rather than `QUIET_S` and loaded the model again, around each such save. Now it takes a
    burst (another save begun during the wait): saves that keep coming let it go, one long
    save does not."""
    monkeypatch.setattr(memory_module, "QUIET_S", 0.2)
    monkeypatch.setattr(memory_module, "RELEASE_AFTER_S", 0.5)
    monkeypatch.setattr(memory_module, "RESUME_QUIET_S", 1.0)
    write(vault, "notes/a.md", "A note.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as m:
        m.sync()

        def wait_beside(saves: list[float], gap_s: float) -> tuple[list[float], float]:
            """Release calls (s into the wait) and the wait's length, beside saves of these
            lengths `gap_s` apart."""
            def save() -> None:
                for length in saves:
                    with m.foreground():
                        time.sleep(length)
                    time.sleep(gap_s)

            saver = threading.Thread(target=save)
            saver.start()
            time.sleep(0.05)
            start = time.monotonic()
            released: list[float] = []
            m.yield_to_foreground(release=lambda: released.append(time.monotonic() - start))
            waited = time.monotonic() - start
            saver.join()
            return released, waited

        released, waited = wait_beside([1.2], 0.0)
        assert released == [] and waited < 1.0 + 0.2 + 0.5, (released, waited)
        released, waited = wait_beside([0.3] * 8, 0.1)
        assert len(released) == 1 and waited >= 1.0, (released, waited)
