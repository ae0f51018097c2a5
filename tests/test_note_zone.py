"""A note's `date:` without an offset is read in the vault's zone (`[ingest] timezone`, else
this machine's), so "what did I write on 2 May?" finds the note dated 2 May wherever you are."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from vaultmind.config import load_config
from vaultmind.markdown.note import parse_note
from vaultmind.memory import Memory

from .conftest import write


def _with_zone(vault: Path, name: str) -> None:
    (vault / ".vaultmind").mkdir(exist_ok=True)
    (vault / ".vaultmind" / "config.toml").write_text(f'[ingest]\ntimezone = "{name}"\n', encoding="utf-8")


def _inside(memory: Memory, question: str, zone: str) -> list[str]:
    """The notes a walk asked in `zone` on 10 May 2024 finds inside its window."""
    asked = datetime(2024, 5, 10, 10, tzinfo=ZoneInfo(zone))
    hits = memory.walk(question, limit=10, reference_time=asked)["hits"]
    return sorted(h["note_path"] for h in hits if h["breakdown"].get("inside"))


def _times(memory: Memory) -> dict[str, str | None]:
    rows = memory.index.query("SELECT note_path, strftime(any_value(ts), '%Y-%m-%dT%H:%M') FROM leaves GROUP BY note_path")
    return dict(rows)


@pytest.fixture
def machine_zone(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[None]:
    """This machine's zone set for one test (its clock's `TZ`: Auckland's, or the test's
    parameter), then back."""
    monkeypatch.setenv("TZ", getattr(request, "param", "Pacific/Auckland"))
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_local_date_and_time_is_read_in_the_vaults_zone() -> None:
    text = "---\ndate: 2024-05-02T23:30\n---\n# Late\n\nWrote the grant summary.\n"
    note = parse_note("Late.md", text, zone="Europe/London")
    assert note.leaves[0].timestamp == "2024-05-02T22:30:00Z"  # British summer time, UTC+1
    offset = "---\ndate: 2024-05-02T23:30+02:00\n---\n# Late\n\nWrote the grant summary.\n"
    assert parse_note("Late.md", offset, zone="Europe/London").leaves[0].timestamp == "2024-05-02T21:30:00Z"


def test_a_date_alone_is_noon_of_that_day_in_the_vaults_zone_even_at_utc_plus_13() -> None:
    note = parse_note("Daily/2024-01-10.md", "# Wednesday\n\nPlanted the lemon tree.\n", zone="Pacific/Auckland")
    assert note.leaves[0].timestamp == "2024-01-09T23:00:00Z"  # noon at UTC+13 (summer in Auckland)


def test_a_note_written_late_in_london_answers_its_own_day(vault: Path) -> None:
    _with_zone(vault, "Europe/London")
    write(vault, "Daily/2024-05-01.md", "---\ndate: 2024-05-01\n---\n# Wednesday\n\nRepotted the fig tree.\n")
    write(vault, "Late.md", "---\ndate: 2024-05-02T23:30\n---\n# Late\n\nWrote the grant summary for the lab.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert _inside(memory, "what did I write on 2 May?", "Europe/London") == ["Late.md"]
        assert _inside(memory, "what did I write on 3 May?", "Europe/London") == []
        assert _inside(memory, "what did I write on 1 May?", "Europe/London") == ["Daily/2024-05-01.md"]


def test_a_date_alone_answers_its_day_in_auckland(vault: Path) -> None:
    _with_zone(vault, "Pacific/Auckland")
    write(vault, "Daily/2024-05-01.md", "---\ndate: 2024-05-01\n---\n# Wednesday\n\nRepotted the fig tree.\n")
    write(vault, "Daily/2024-05-02.md", "# Thursday\n\nCalled the plumber about the tap.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert _inside(memory, "what did I write on 1 May?", "Pacific/Auckland") == ["Daily/2024-05-01.md"]
        assert _inside(memory, "what did I write on 2 May?", "Pacific/Auckland") == ["Daily/2024-05-02.md"]


def test_without_a_zone_named_a_notes_date_is_read_on_this_machines_clock(vault: Path, machine_zone: None) -> None:
    write(vault, "Daily/2024-05-01.md", "# Wednesday\n\nRepotted the fig tree.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert _times(memory) == {"Daily/2024-05-01.md": "2024-05-01T00:00"}  # noon at UTC+12
        assert _inside(memory, "what did I write on 1 May?", "Pacific/Auckland") == ["Daily/2024-05-01.md"]


@pytest.mark.parametrize("machine_zone", ["America/Santiago"], indirect=True)
def test_a_clock_time_summer_time_skipped_is_read_alike_on_this_machines_clock(vault: Path, machine_zone: None) -> None:
    """Santiago's clocks went from midnight to 1 am on 8 September 2024: a note dated 00:30 that
    day is read with the offset before the change, as the zone named in the settings reads it
    (this machine's clock read it with the offset after: 23:30 on 7 September)."""
    text = "---\ndate: 2024-09-08T00:30\n---\n# Late\n\nFixed the boiler valve.\n"
    named = parse_note("Late.md", text, zone="America/Santiago").leaves[0].timestamp
    assert parse_note("Late.md", text).leaves[0].timestamp == named == "2024-09-08T04:30:00Z"
    write(vault, "Late.md", text)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        asked = datetime(2024, 9, 10, 10, tzinfo=ZoneInfo("America/Santiago"))
        hits = memory.walk("what did I write on 8 September?", limit=10, reference_time=asked)["hits"]
        assert [h["note_path"] for h in hits if h["breakdown"].get("inside")] == ["Late.md"]


def test_dated_notes_take_their_times_in_the_zone_the_settings_name_now(vault: Path) -> None:
    """`[ingest] timezone` set on an index that read the dates on this machine's clock: the
    dated note's time is the new zone's, no note is read again, and a sync after reads nothing."""
    write(vault, "Daily/2024-05-01.md", "# Wednesday\n\nRepotted the fig tree.\n")
    write(vault, "plain.md", "# Plain\n\nA note about the projector.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
    _with_zone(vault, "Asia/Tokyo")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        stats = memory.sync()
        assert (stats.modified, stats.unchanged) == (0, 2)
        assert _times(memory) == {"Daily/2024-05-01.md": "2024-05-01T03:00", "plain.md": None}
        again = memory.sync()
        assert (again.modified, again.unchanged) == (0, 2)


def test_an_index_from_before_the_zone_was_kept_reads_its_dated_notes_again_once(vault: Path) -> None:
    """Such an index read the dates as UTC, its front matter perhaps stored otherwise: its
    dated notes of yours are read again, once, and only them."""
    write(vault, "Daily/2024-05-01.md", "# Wednesday\n\nRepotted the fig tree.\n")
    write(vault, "plain.md", "# Plain\n\nA note about the projector.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        memory.index.con.execute("DELETE FROM meta WHERE key = 'note_zone'")  # as an index from before left it
    _with_zone(vault, "Asia/Tokyo")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        stats = memory.sync()
        assert (stats.modified, stats.unchanged) == (1, 1)
        assert _times(memory) == {"Daily/2024-05-01.md": "2024-05-01T03:00", "plain.md": None}
        again = memory.sync()
        assert (again.modified, again.unchanged) == (0, 2)


_DATED = {
    "Daily/2024-05-01.md": "# Wednesday\n\nMet Alice Chen at the harbour about the kayak.\n",
    "Late.md": "---\ndate: 2024-05-02T23:30\n---\n# Late\n\nAlice Chen sent the grant summary.\n",
    "Offset.md": "---\ndate: 2024-05-02T23:30+02:00\n---\n# Offset\n\nA call with Alice Chen.\n",
    "Book.md": "---\ncreated: 2024-03-31T01:30\nauthor: Ann Leckie\n---\n",  # all properties
    "plain.md": "# Plain\n\nAlice Chen and the projector.\n",
}


def _leaf_times(memory: Memory) -> list[tuple[Any, ...]]:
    leaves = memory.index.query("SELECT note_path, seq, id, ts FROM leaves ORDER BY note_path, seq")
    found = memory.index.query("SELECT leaf_id, entity_id, ts FROM occurrences ORDER BY leaf_id, entity_id")
    return [*leaves, *found]


def test_a_change_of_zone_retimes_the_dated_notes_in_place_as_a_fresh_index_reads_them(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A laptop that travels: this machine's zone changes under the index. Each dated note's
    time follows from its path and stored front matter, so no note is read again (7,000 of
    them took two minutes, paid by the first question); the times, the entities' occurrences
    and the loaded leaves are those a fresh index gives in the new zone."""
    for path, text in _DATED.items():
        write(vault, path, text)
    (vault / ".vaultmind").mkdir()
    try:
        monkeypatch.setenv("TZ", "Europe/London")
        time.tzset()
        with Memory.open(load_config(vault, embed_provider="none")) as memory:
            memory.sync()
            assert _inside(memory, "what did I write on 1 May?", "Europe/London") == ["Daily/2024-05-01.md"]  # loaded
            monkeypatch.setenv("TZ", "Pacific/Auckland")
            time.tzset()
            stats = memory.sync()
            assert (stats.modified, stats.unchanged) == (0, len(_DATED))
            assert _inside(memory, "what did I write on 1 May?", "Pacific/Auckland") == ["Daily/2024-05-01.md"]
            retimed = _leaf_times(memory)
        fresh = tmp_path / "fresh"
        for path, text in _DATED.items():
            write(fresh, path, text)
        (fresh / ".vaultmind").mkdir()
        with Memory.open(load_config(fresh, embed_provider="none")) as memory:
            memory.sync()
            assert _leaf_times(memory) == retimed and any(len(row) == 3 for row in retimed)  # occurrences too
    finally:
        monkeypatch.undo()
        time.tzset()
