"""Time expressions read as the window the asker means: two times said together, ranges said
the wrong way round, a date's preposition, a weekday written with its date, rolling spans,
numeric dates, qualifiers and the relative forms without a number."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.asked_window import question_window

from .conftest import write_slack_day

SUNDAY = datetime(2024, 3, 17, 20, 0)  # a Sunday evening
MAY = datetime(2024, 5, 20, 10, 0)
MONDAY = datetime(2024, 3, 11, 10, 0)
JUNE = datetime(2024, 6, 20, 10, 0)


def _days(question: str, now: datetime) -> tuple[str, str] | None:
    window = question_window(question, now)
    return None if window is None else (window.start.date().isoformat(), window.end.date().isoformat())


@pytest.mark.parametrize(
    ("question", "now", "days"),
    [
        # two days or two months said together: from the one to the other, the earlier first
        ("what happened on 7 March or 9 March?", SUNDAY, ("2024-03-07", "2024-03-10")),
        ("what happened on March 7 and March 9?", SUNDAY, ("2024-03-07", "2024-03-10")),
        ("what happened on 9 March or 7 March?", SUNDAY, ("2024-03-07", "2024-03-10")),
        ("on 2 or 3 May 2023", SUNDAY, ("2023-05-02", "2023-05-04")),
        ("on 3 January or 28 December", SUNDAY, ("2023-12-28", "2024-01-04")),
        ("what happened in March and April?", MAY, ("2024-03-01", "2024-05-01")),
        ("what happened in April or March?", MAY, ("2024-03-01", "2024-05-01")),
        ("what happened in November and February?", MAY, ("2023-11-01", "2024-03-01")),
        # a range said the wrong way round is the same days
        ("what happened between 7 march and 4 march?", SUNDAY, ("2024-03-04", "2024-03-08")),
        # the second end of a pair names its month; "may" after a bare number is the verb
        ("we met on 7 March and 2 friends came", SUNDAY, ("2024-03-07", "2024-03-08")),
        # since/after/before/until a day: open-ended, as for a month
        ("what did Alice say after 8 March?", SUNDAY, ("2024-03-09", "2024-03-17")),
        ("what happened since March 5?", SUNDAY, ("2024-03-05", "2024-03-17")),
        ("what was agreed before 5 March?", SUNDAY, ("1970-01-01", "2024-03-05")),
        ("what was done until 2024-03-05?", SUNDAY, ("1970-01-01", "2024-03-06")),
        ("three days after 8 March", SUNDAY, ("2024-03-09", "2024-03-12")),  # still the three days
        ("how many had she won by 10 March?", SUNDAY, ("2024-03-10", "2024-03-11")),  # "by": as of that day
        # a weekday written with its date is part of it, and tells its year
        ("what happened on Tuesday 23 April?", MONDAY, ("2024-04-23", "2024-04-24")),
        # a weekday that fits the date in no year near its reading is a slip: the date as said
        ("what happened on Tuesday 5 June?", datetime(2024, 6, 12, 10, 0), ("2024-06-05", "2024-06-06")),
        ("what happened on Friday 3 January?", datetime(2024, 12, 28, 10, 0), ("2025-01-03", "2025-01-04")),
        # no nearby year fits and the date is not recent: the years back where the weekday fits
        ("what happened on Tuesday 23 April?", datetime(2026, 12, 7, 10, 0), ("2024-04-23", "2024-04-24")),
        ("what happened on Sunday 23 April?", MONDAY, ("2023-04-23", "2023-04-24")),
        ("what happens on Tuesday, 23 April?", MONDAY, ("2024-04-23", "2024-04-24")),
        ("what happened on Tuesday the 23rd of April?", MONDAY, ("2024-04-23", "2024-04-24")),
        ("what happened on April 23 (Tuesday)?", MONDAY, ("2024-04-23", "2024-04-24")),
        ("what happened on Tuesday?", MONDAY, ("2024-03-05", "2024-03-06")),  # a weekday alone: as before
        # a weekday written with either day of a range is part of it: the days from one to the other,
        # in the year the weekday tells (without it, 3 to 7 June asked in May is last year's)
        ("what happened between Monday 3 June and Friday 7 June?", JUNE, ("2024-06-03", "2024-06-08")),
        ("what happened from Tuesday 4 June to Thursday 6 June?", JUNE, ("2024-06-04", "2024-06-07")),
        ("what happened Monday 3 June – Friday 7 June?", JUNE, ("2024-06-03", "2024-06-08")),
        ("what happened 3 June – 7 June?", JUNE, ("2024-06-03", "2024-06-08")),
        ("what is planned between Monday, 3 June and Friday, 7 June?", MAY, ("2024-06-03", "2024-06-08")),
        ("what is planned from 4 June (Tuesday) to 6 June (Thursday)?", MAY, ("2024-06-04", "2024-06-07")),
        ("what is planned between 1 June and Friday 7 June?", MAY, ("2024-06-01", "2024-06-08")),
        ("what happened between 3 June and 7 June?", MAY, ("2023-06-03", "2023-06-08")),  # no weekday: as before
        # a weekday that fits no year near the range's reading is a slip: the days as said
        ("what happened between Tuesday 5 June and Friday 8 June?", datetime(2024, 6, 12, 10, 0), ("2024-06-05", "2024-06-09")),
        # "in the last/past <unit>" rolls back from the question's time, as with a number
        ("what happened in the past week?", SUNDAY, ("2024-03-10", "2024-03-17")),
        ("what happened in the last week?", SUNDAY, ("2024-03-10", "2024-03-17")),
        ("what happened within the last week?", SUNDAY, ("2024-03-10", "2024-03-17")),
        ("what happened over the past month?", SUNDAY, ("2024-02-16", "2024-03-17")),
        ("what happened in the past few days?", SUNDAY, ("2024-03-14", "2024-03-17")),
        ("what happened in the past weeks?", SUNDAY, ("2024-02-25", "2024-03-17")),
        ("what happened the past week?", SUNDAY, ("2024-03-04", "2024-03-11")),  # bare: the calendar week
        # since <weekday>, this/last/next quarter
        ("what happened since Monday?", SUNDAY, ("2024-03-11", "2024-03-17")),
        ("what happened since last Sunday?", SUNDAY, ("2024-03-10", "2024-03-17")),
        ("what happened since Tuesday, 5 March?", SUNDAY, ("2024-03-05", "2024-03-17")),
        ("what did we ship last quarter?", SUNDAY, ("2023-10-01", "2024-01-01")),
        ("what is planned for next quarter?", SUNDAY, ("2024-04-01", "2024-07-01")),
        ("what did we do in the last week of February?", SUNDAY, ("2024-02-01", "2024-03-01")),  # not last week
        # a part of a month or year: its first, middle or last third
        ("what happened in mid-March?", MAY, ("2024-03-11", "2024-03-21")),
        ("what happened at the beginning of April?", MAY, ("2024-04-01", "2024-04-11")),
        ("what happened late last year?", MAY, ("2023-09-01", "2024-01-01")),
        ("what happened at the end of last year?", MAY, ("2023-09-01", "2024-01-01")),
        ("what happened at the start of this month?", MAY, ("2024-05-01", "2024-05-11")),
        # early or late said of someone is no part of the week: the whole week, "late" searched
        ("was Bob late last week?", MAY, ("2024-05-13", "2024-05-20")),
        ("who was late this week?", MAY, ("2024-05-20", "2024-05-27")),
        ("did Sam arrive early this month?", MAY, ("2024-05-01", "2024-06-01")),
        ("what happened late last week?", MAY, ("2024-05-17", "2024-05-20")),
        # numeric dates: a day, a month, or a day written either way round
        ("what happened on 2024/03/07?", MAY, ("2024-03-07", "2024-03-08")),
        ("what happened on 2024.3.7?", MAY, ("2024-03-07", "2024-03-08")),
        ("what happened in 2024-03?", MAY, ("2024-03-01", "2024-04-01")),
        ("what happened on 13/3/2024?", MAY, ("2024-03-13", "2024-03-14")),
        ("what happened on 3/13/2024?", MAY, ("2024-03-13", "2024-03-14")),
        ("what happened on 7.3.2024?", MAY, ("2024-03-07", "2024-07-04")),  # 7 March or 3 July
        ("what happened after 2024/03/07?", MAY, ("2024-03-08", "2024-05-20")),
        # a year-month inside an id is no month; a version number is no date
        ("what does ticket PROJ-2024-03 say?", MAY, ("2024-01-01", "2025-01-01")),  # its year, as before
        ("what does order 2024-03-0042 hold?", MAY, ("2024-01-01", "2025-01-01")),
        ("is windows 6.1.7601 patched?", MAY, None),
        ("what changed in version 2.5.10?", MAY, None),
    ],
)
def test_time_expression_forms(question: str, now: datetime, days: tuple[str, str] | None) -> None:
    assert _days(question, now) == days


def test_may_after_two_bare_numbers_is_the_verb() -> None:
    assert _days("which of the 2 or 3 may come?", SUNDAY) is None
    assert _days("which of the 2 - 3 may come?", SUNDAY) is None


def test_walk_asked_after_a_day_favours_the_days_after_it(vault: Path) -> None:
    """"after 8 March" had been 8 March alone: the messages after it were down-weighted and one
    before it kept its full weight."""
    for day in ("2024-03-07", "2024-03-09", "2024-03-11"):
        write_slack_day(vault, day, [("Alice Chen", "10:00", f"The venue deposit is settled, note of {day}.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What did Alice say about the venue deposit after 8 March?", limit=5, reference_time=SUNDAY)
        factor = {h["time_range"]["start"][:10]: h["breakdown"]["time_factor"] for h in result["hits"]}
        assert factor["2024-03-09"] == factor["2024-03-11"] == 1.0 > factor["2024-03-07"]
        assert result["hits"][-1]["time_range"]["start"].startswith("2024-03-07")


def test_walk_reads_a_weekday_written_with_its_date_as_the_year_it_falls_in(vault: Path) -> None:
    """"on Tuesday 23 April" asked in March 2024 had been the Tuesday before Sunday 23 April
    2023 up to that Sunday: a week of the wrong year. 23 April 2024 is the Tuesday."""
    write_slack_day(vault, "2023-04-23", [("Alice Chen", "10:00", "The launch party plans are drafted.")])
    write_slack_day(vault, "2024-04-23", [("Alice Chen", "10:00", "The launch party starts at noon.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("what happened at the launch party on Tuesday 23 April?", limit=5, reference_time=MONDAY)
        window = result["query"]["time_window"]
        assert (window["start"], window["end"]) == ("2024-04-23T00:00:00Z", "2024-04-24T00:00:00Z")
        assert result["hits"][0]["time_range"]["start"].startswith("2024-04-23")


def test_late_said_of_someone_stays_a_searched_word() -> None:
    window = question_window("was Bob late last week?", MAY)
    assert window is not None and window.text == "last week"
