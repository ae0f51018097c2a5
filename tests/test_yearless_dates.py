"""Dates, ranges and spans said without a year, read at the edges of the calendar: a leap day
asked in a year without one, a range across the new year asked before it ends, the turn of a
week, month or year, "may" the verb after a number, and the calendar's last days."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.asked_window import question_window
from vaultmind.retrieval.spans import span_window
from vaultmind.retrieval.timeparse import parse_time_window

from .conftest import write_chat


def _days(question: str, now: datetime) -> tuple[str, str] | None:
    window = question_window(question, now)
    return None if window is None else (window.start.date().isoformat(), window.end.date().isoformat())


@pytest.mark.parametrize(
    ("question", "now", "days"),
    [
        # 29 February without a year, asked in a year without one: the latest that was
        ("what happened on 29 February?", datetime(2025, 3, 10), ("2024-02-29", "2024-03-01")),
        ("what happened on February 29th?", datetime(2027, 6, 1), ("2024-02-29", "2024-03-01")),
        ("what happened on 29 February?", datetime(2024, 3, 10), ("2024-02-29", "2024-03-01")),
        ("what did we discuss during the week of 29 February?", datetime(2025, 6, 1), ("2024-02-26", "2024-03-04")),
        ("what happened between 28 February and 1 March?", datetime(2025, 3, 10), ("2025-02-28", "2025-03-02")),
        ("what happened between 29 February and 2 March?", datetime(2025, 3, 10), ("2024-02-29", "2024-03-03")),
        # a range across the new year asked before it ends: the one begun, in days as in months
        ("what happened between 28 December and 3 January?", datetime(2026, 12, 30, 9), ("2026-12-28", "2027-01-04")),
        ("what happened from December to January?", datetime(2026, 12, 30, 9), ("2026-12-01", "2027-02-01")),
        ("what happened between 28 December and 3 January?", datetime(2027, 1, 10), ("2026-12-28", "2027-01-04")),
        ("what happened from December to January?", datetime(2027, 1, 10), ("2026-12-01", "2027-02-01")),
        # a year said at one end holds for both, the end month before the start in the next year
        ("what happened between 28 December 2025 and 3 January?", datetime(2027, 1, 10), ("2025-12-28", "2026-01-04")),
        ("what happened from November 2024 to February?", datetime(2027, 1, 10), ("2024-11-01", "2025-03-01")),
        ("what happened from November 2024 to February 2026?", datetime(2027, 1, 10), ("2024-11-01", "2026-03-01")),
        # the turn of a week, a month, a year
        ("what happened last week?", datetime(2027, 1, 1, 9), ("2026-12-21", "2026-12-28")),
        ("what happened last month?", datetime(2027, 1, 1, 9), ("2026-12-01", "2027-01-01")),
        ("what happened on 31 December?", datetime(2027, 1, 1, 0, 30), ("2026-12-31", "2027-01-01")),
        # a weekday asked on that weekday: "on Monday" is today, "last Monday" a week ago
        ("what happened on Monday?", datetime(2026, 12, 7, 10), ("2026-12-07", "2026-12-08")),
        ("what happened last Monday?", datetime(2026, 12, 7, 10), ("2026-11-30", "2026-12-01")),
        ("what happened from Monday to Friday?", datetime(2026, 12, 7, 10), ("2026-12-07", "2026-12-12")),
    ],
)
def test_a_date_without_its_year_is_the_latest_that_was(question: str, now: datetime, days: tuple[str, str]) -> None:
    """A leap day asked without its year in a year that has none had failed to be a day and
    fallen to the whole February of that year; "between 28 December and 3 January" asked on 30
    December took its year from January's latest, a year back, where "from December to
    January" ran into the coming one. A range is the latest begun, read the same way in days
    and in months."""
    assert _days(question, now) == days, question


def test_may_after_a_number_is_the_verb_unless_written_as_a_day() -> None:
    now = datetime(2024, 3, 5)
    for verb in ("which of the 12 may attend?", "all 3 may come", "the 2 may be late", "how many of the 20 may join?"):
        assert parse_time_window(verb, now) is None, verb
    for day in ("what happened on 12 may?", "the 12th of may", "what did we do 12 May?", "12 may 2023", "the 3rd may"):
        window = parse_time_window(day, now)
        assert window is not None and (window.start.month, window.start.day) == (5, 12 if "12" in day else 3), day


@pytest.mark.parametrize("at", ["9999-12-30T00:00:00Z", "9999-12-31T23:59:59Z", "9999-12-31T00:00:00+14:00"])
def test_a_span_at_the_calendars_edge_is_no_window_not_a_crash(vault: Path, at: str) -> None:
    """"From Monday to Friday" asked on the calendar's last days ran past 31 December 9999 and
    raised OverflowError out of walk."""
    write_chat(vault, "2024-03-07", [("Dana", "We meet at Harbor Hall for the launch on Friday.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        for question in ("what happened from Monday to Friday?", "what happened during the week of 31 December?"):
            result = memory.query("walk", {"query": question, "reference_time": at})
            assert result["query"]["time_window"] is None, (question, at)
    assert span_window("from friday to monday", datetime(9999, 12, 31)) is None
    assert span_window("from november 9999 to february", datetime(2026, 1, 1)) is None


def test_the_leap_day_asked_without_its_year_finds_its_message(vault: Path) -> None:
    write_chat(vault, "2024-02-29", [("Dana", "Leap day: we signed the harbor lease.")])
    write_chat(vault, "2025-02-12", [("Dana", "Paid the winter invoice.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("what happened on 29 February?", reference_time=datetime(2025, 3, 10, 12, tzinfo=UTC))
        assert result["query"]["time_window"]["start"] == "2024-02-29T00:00:00Z"
        assert result["hits"][0]["content"] == "Leap day: we signed the harbor lease."
        assert result["hits"][0]["breakdown"]["inside"]
