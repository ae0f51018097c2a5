"""Time expressions read as the window the asker means: two times said together, ranges said
the wrong way round, a date's preposition, a weekday written with its date, rolling spans,
numeric dates, qualifiers and the relative forms without a number."""

from __future__ import annotations

from datetime import datetime

import pytest

from vaultmind.retrieval.asked_window import question_window

SUNDAY = datetime(2024, 3, 17, 20, 0)  # a Sunday evening
MAY = datetime(2024, 5, 20, 10, 0)


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
    ],
)
def test_time_expression_forms(question: str, now: datetime, days: tuple[str, str] | None) -> None:
    assert _days(question, now) == days


def test_may_after_two_bare_numbers_is_the_verb() -> None:
    assert _days("which of the 2 or 3 may come?", SUNDAY) is None
