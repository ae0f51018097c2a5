"""walk: a question about a day finds the leaves that name that day, whenever they were written
("the launch is on 23 April" said in March, "April 23rd" in a document, "2024-04-23" in a note),
beside what was written that day — and not a leaf that names another year's, a leaf written
after the question's time, or "may" the verb."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.errors import ConfigError
from vaultmind.memory import Memory
from vaultmind.retrieval.day_mentions import names_day

from .conftest import write, write_chat

MAY = datetime(2024, 5, 10, 12)


def _contents(memory: Memory, question: str, at: datetime) -> list[str]:
    """The hits the window takes in (written in it, or naming one of its days): not the
    neighbours a conversation's context brings along."""
    hits = memory.walk(question, limit=10, reference_time=at)["hits"]
    return [h["content"] for h in hits if h["breakdown"].get("inside")]


def test_a_question_about_a_day_finds_the_leaves_that_name_it(vault: Path) -> None:
    write_chat(
        vault,
        "2024-03-07",
        [
            ("Alice Chen", "Decision: the public launch is on 23 April, after the App Store review."),
            ("Bob Stone", "Code freeze on 16 April then."),
        ],
    )
    write_chat(vault, "2024-04-23", [("Marco Ruiz", "We are live! Press embargo lifted at two.")])
    write(vault, "Runbook.md", "# Runbook\n\nOn April 23rd the press embargo lifts at 14:00 UTC.\n")
    write(vault, "Planning.md", "# Planning\n\nLaunch review booked for 2024-04-23 with the whole team.\n")
    write(vault, "Old.md", "# Old\n\nThe 2023 party was on 23 April 2023 at the harbour.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        found = _contents(memory, "What happened on Tuesday 23 April?", MAY)
        assert any(c.startswith("We are live!") for c in found), found  # written that day
        assert any("public launch is on 23 April" in c for c in found), found  # said of it in March
        assert any("April 23rd" in c for c in found), found
        assert any("2024-04-23" in c for c in found), found
        assert not any("2023 party" in c for c in found), found  # another year's 23 April
        assert not any("Code freeze" in c for c in found), found  # no day of the window


def test_a_day_nothing_was_written_on_is_found_by_what_names_it(vault: Path) -> None:
    """Nothing was written on 23 April: the leaves that name it answer, not "no hits"."""
    write_chat(vault, "2024-03-07", [("Alice Chen", "Decision: the public launch is on 23 April.")])
    write_chat(
        vault, "2024-03-08", [("Dana Whitfield", "The Loft is yours on Tuesday 23 April, 18:00 to 23:00.")]
    )
    write_chat(vault, "2024-03-09", [("Dana Whitfield", "Last year we hosted you on 23 April 2023 too.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        found = _contents(memory, "What happened on 23 April 2024?", MAY)
        assert len(found) >= 2 and all("23 April" in c for c in found[:2]), found
        # asked of a past day before the message that names it was written: it was not there yet
        early = _contents(memory, "What happened on 23 April 2023?", datetime(2024, 3, 7, 23))
        assert early == [], early


def test_may_the_verb_names_no_day(vault: Path) -> None:
    write_chat(
        vault,
        "2024-04-02",
        [
            ("Alice Chen", "All 23 may come to the dinner."),
            ("Bob Stone", "The dinner is on 23 May at eight."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        found = _contents(memory, "What happened on 23 May 2024?", datetime(2024, 6, 1))
        assert any("on 23 May" in c for c in found), found
        assert not any("may come" in c for c in found), found


def test_a_season_asked_of_finds_what_was_told_of_it_later(vault: Path) -> None:
    """ "Last summer" is a window, and its word stays searched: "our camping trip last summer",
    written in August of the next, is about the summer asked of (read from when it was written:
    `retold`), above a message written in that summer of something else."""
    write_chat(vault, "2022-07-10", [("John", "Fixed the fence in the heat.")])
    write_chat(vault, "2023-08-11", [("John", "Max and I loved our fishing trip by the lake last summer.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk(
            "What did John and Max love doing together last summer?", limit=3, reference_time=datetime(2023, 8, 16)
        )
        assert result["query"]["time_window"]["start"].startswith("2022-06-01"), result["query"][
            "time_window"
        ]
        assert result["hits"][0]["content"].startswith("Max and I loved our fishing trip"), [
            h["content"] for h in result["hits"]
        ]


def test_a_number_in_a_version_a_time_or_across_lines_names_no_day() -> None:
    """"2.23 April" (a version, an amount), "10:23 April" (a time), "1/23 April" and a number
    ending one line before a month opening the next are no 23 April; the dates themselves are."""
    day, written = [datetime(2024, 4, 23)], datetime(2024, 4, 1)
    for text in ("release 2.23 April build", "at 10:23 April said", "page 1/23 April", "Chapter 23\nApril came",
                 "April 23.5% up", "April\n23 items"):  # fmt: skip
        assert not names_day(day, text, written), text
    for text in ("on 23 April", "April 23rd, 2024", "the 23rd of Apr.", "due Apr 23, then", "20-23 April", "2024-04-23"):
        assert names_day(day, text, written), text


def test_a_day_said_relatively_is_found_from_when_it_was_written(vault: Path) -> None:
    """ "See you tomorrow" written on Monday 22 April, "the launch is on Tuesday" the Friday
    before, "in two days" on the 21st, "yesterday was wild" on the 24th name Tuesday 23 April;
    "next Tuesday" on the 22nd names the 30th, "tomorrow" on the 25th the 26th: not that day; "ok,
    see you tomorrow!" on the 22nd is a goodbye, no account of it."""
    write_chat(vault, "2024-04-19", [("Alice Chen", "The launch is on Tuesday, be ready by nine.")])
    write_chat(vault, "2024-04-21", [("Bob Stone", "Press embargo lifts in two days.")])
    write_chat(
        vault,
        "2024-04-22",
        [
            ("Dana Whitfield", "See you tomorrow at the harbour for the party."),
            ("Bob Stone", "Retro next Tuesday with the whole team."),
            ("Alice Chen", "Ok, see you tomorrow!"),
        ],
    )
    write_chat(vault, "2024-04-24", [("Marco Ruiz", "Yesterday was wild, the servers held.")])
    write_chat(vault, "2024-04-25", [("Marco Ruiz", "Tomorrow we rest and clean the office.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        found = _contents(memory, "What happened on Tuesday 23 April?", MAY)
        for said in ("launch is on Tuesday", "in two days", "See you tomorrow", "Yesterday was wild"):
            assert any(said in c for c in found), (said, found)
        assert not any("Retro" in c or "we rest" in c or "Ok, see" in c for c in found), found


def test_a_longer_goodbye_is_no_account_of_the_day_it_names(vault: Path) -> None:
    """ "Alright, see you tomorrow, have a good night!" and "Thanks, see you next Tuesday then!"
    name Tuesday 23 April with more words than a bare goodbye, all a goodbye's or a thanks': no
    account of it; "see you tomorrow at the harbour for the party" is one."""
    write_chat(vault, "2024-04-16", [("Bob Stone", "Thanks, see you next Tuesday then!")])
    write_chat(
        vault,
        "2024-04-22",
        [
            ("Alice Chen", "Alright, see you tomorrow, have a good night!"),
            ("Dana Whitfield", "See you tomorrow at the harbour for the party."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        found = _contents(memory, "What happened on Tuesday 23 April?", MAY)
    assert any("at the harbour" in c for c in found), found
    assert not any("good night" in c or "Thanks, see" in c for c in found), found


def test_a_day_said_by_its_ordinal_alone_is_the_nearest_such(vault: Path) -> None:
    """ "The launch is on the 23rd" written on 10 April, "Tuesday 23rd works" on 2 April name
    23 April (the 23rd nearest, a Tuesday); "the 23rd" written on 2 March names 23 March,
    "Friday 23rd" on 20 April a Friday that 23 April is not."""
    write_chat(vault, "2024-04-02", [("Alice Chen", "Tuesday 23rd works for the launch party.")])
    write_chat(vault, "2024-04-10", [("Bob Stone", "The press launch is on the 23rd, confirmed.")])
    write_chat(vault, "2024-03-02", [("Dana Whitfield", "Rent is due on the 23rd, as always.")])
    write_chat(vault, "2024-04-20", [("Marco Ruiz", "Friday 23rd is the harbour dinner.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        found = _contents(memory, "What happened on 23 April 2024?", MAY)
        assert any("Tuesday 23rd works" in c for c in found), found
        assert any("on the 23rd, confirmed" in c for c in found), found
        assert not any("Rent" in c or "harbour dinner" in c for c in found), found


def test_a_day_written_in_numbers_is_found_in_the_vaults_date_order(vault: Path) -> None:
    """ "23/04/2024", "04/23/2024", "23.04.2024", "23/4" name 23 April; "03/04/2024" names 3 April
    day first (the default) and 4 March month first (`[time] date_order = "mdy"`); "3/4 of us"
    and "23.4 kg" name no day."""
    write_chat(
        vault,
        "2024-04-02",
        [
            ("Alice Chen", "Launch party booked for 23/04/2024 at the harbour."),
            ("Bob Stone", "US office says 04/23/2024 for their launch call."),
            ("Dana Whitfield", "Berlin team: Release am 23.04.2024 bestätigt."),
            ("Marco Ruiz", "Press kit ready by 23/4 latest."),
            ("Alice Chen", "Board meeting on 03/04/2024 in the big room."),
            ("Bob Stone", "About 3/4 of us will come, 23.4 kg of cake."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        found = _contents(memory, "What happened on 23 April 2024?", MAY)
        for said in ("23/04/2024", "04/23/2024", "23.04.2024", "23/4 latest"):
            assert any(said in c for c in found), (said, found)
        assert not any("3/4 of us" in c for c in found), found
        assert any("Board meeting" in c for c in _contents(memory, "What happened on 3 April 2024?", MAY))
        assert not any("Board meeting" in c for c in _contents(memory, "What happened on 4 March 2024?", MAY))
    (vault / ".vaultmind" / "config.toml").write_text('[time]\ndate_order = "mdy"\n', encoding="utf-8")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        assert any("Board meeting" in c for c in _contents(memory, "What happened on 4 March 2024?", MAY))


def test_a_date_order_that_is_none_is_refused(vault: Path) -> None:
    (vault / ".vaultmind").mkdir(exist_ok=True)
    (vault / ".vaultmind" / "config.toml").write_text('[time]\ndate_order = "ymd"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[time\] date_order = 'ymd' is no date order"):
        load_config(vault)


def test_a_text_passed_over_quickly_holds_no_numeric_date() -> None:
    """`numeric_dates` skips a text without a digit, a slash or dot and a digit: that skip loses
    no date the full pattern finds (Arabic-Indic digits too)."""
    from vaultmind.retrieval import day_numbers

    texts = ["23/4", "1.2.2024", "x ٢٣/٤ y", "on 04/23/24,", "no date 2024 here", "3/4 of us", "23 . 4", "a/23/4"]
    for text in texts:
        skipped = day_numbers._DIGIT_SEP_DIGIT.search(text) is None
        assert not (skipped and day_numbers._NUMERIC.search(text)), text
    assert day_numbers.numeric_dates("x ٢٣/٤ y", "dmy") == [(4, 23, None)]


def test_a_score_names_no_day_and_a_year_first_date_does(vault: Path) -> None:
    """ "Scored 11/15 on the quiz" is a score, no 15 November, though a "quiz on 11/15" is that
    day; "2024/04/23" and "2024.04.23" (year first) name 23 April 2024."""
    write_chat(
        vault,
        "2024-10-20",
        [
            ("Alice Chen", "I scored 11/15 on the quiz, not bad for a first try."),
            ("Bob Stone", "Only 11/15 tests passed on the release branch."),
            ("Dana Whitfield", "The next quiz on 11/15 covers the harbour history."),
        ],
    )
    write_chat(
        vault,
        "2024-04-02",
        [
            ("Marco Ruiz", "Launch party booked for 2024/04/23 at the harbour."),
            ("Alice Chen", "Berlin confirms the release for 2024.04.23 as planned."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        november = _contents(memory, "What happened on 15 November?", datetime(2024, 12, 1))
        assert any("quiz on 11/15" in c for c in november), november
        assert not any("scored 11/15" in c or "tests passed" in c for c in november), november
        april = _contents(memory, "What happened on 23 April 2024?", MAY)
        for said in ("2024/04/23", "2024.04.23"):
            assert any(said in c for c in april), (said, april)


def test_two_numbers_counted_by_their_words_are_no_day() -> None:
    """A word announcing a count before two numbers, or one naming what they count after,
    makes a score or a fraction of them; a year, or no such word, leaves them a day; a year
    first is read year, month, day."""
    from vaultmind.retrieval.day_numbers import numeric_dates

    for text in ("scored 11/15 on the quiz", "a score of 13/20", "Score: 17/20", "page 13/20", "p. 13/20",
                 "got 14/20, ok", "11/15 tests passed", "4/5 stars", "13/20 points", "17/20 correct", "9/11",
                 "page 3/4", "2024/13/01", "v2024.04.23"):  # fmt: skip
        assert numeric_dates(text, "dmy") == [], text
    assert numeric_dates("quiz on 11/15 at noon", "dmy") == [(11, 15, None)]
    assert numeric_dates("the 24/10 match", "dmy") == [(10, 24, None)]  # a singular noun: that day's match
    assert numeric_dates("scored\n11/15 was the day", "dmy") == [(11, 15, None)]  # not across lines
    assert numeric_dates("11/15\nTests ran", "dmy") == [(11, 15, None)]
    assert numeric_dates("scored 11/15/2024", "mdy") == [(11, 15, 2024)]  # a year: a date whatever the words
    for text in ("2024/04/23", "2024.04.23", "2024/4/23"):
        assert numeric_dates(text, "mdy") == [(4, 23, 2024)], text


def test_a_weeks_days_are_looked_up_once_a_month_not_once_a_day(vault: Path) -> None:
    """The leaves naming a week's days are looked up in the postings once for the days of each
    month (their days and month, their ISO dates' numbers), not once for each day: a week costs
    about what a day does, whatever the vault's size; and the leaves found are the same."""
    write_chat(vault, "2024-04-10", [("Alice Chen", "Launch on 17 April, review on 2024-04-19.")])
    write_chat(vault, "2024-04-12", [("Bob Stone", "Retro booked for 23/04/2024."), ("Dana Whitfield", "Party 2024/04/21.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        looked: list[list[list[str]]] = []
        holding_all = memory.leaves.holding_all

        def counted(groups: list[list[str]], limit: int, *, near: datetime) -> list[str]:
            looked.append(groups)
            return holding_all(groups, limit, near=near)

        memory.leaves.holding_all = counted  # type: ignore[method-assign]
        found = _contents(memory, "What happened last week?", datetime(2024, 4, 24, 12))  # 15-21 April
        dated = [g for g in looked if any("april" in group or "2024" in group for group in g)]
        assert len(dated) == 2, dated
        for said in ("17 April", "2024-04-19", "2024/04/21"):
            assert any(said in c for c in found), (said, found)
        assert not any("Retro" in c for c in found), found


def test_the_dates_of_new_days_are_read_by_a_pattern_made_once_a_month() -> None:
    """A question about new days of a month reads dates by the pattern made for that month (no
    compile of a new one, 3-8 ms, for each new day asked), which names those days alone."""
    from vaultmind.retrieval.day_mentions import _days_pattern

    first, other = [datetime(2024, 4, 23)], [datetime(2024, 4, 2), datetime(2024, 4, 3)]
    assert _days_pattern(first) is _days_pattern(other)
    for text in ("on 23 April", "April 23rd, 2024", "2024-04-23"):
        assert names_day(first, text, MAY) and not names_day(other, text, MAY), text
    assert names_day(other, "the 3rd of April", MAY) and not names_day(first, "April 2024", MAY)


def test_a_day_after_a_verb_of_an_event_or_a_determiner_is_a_day() -> None:
    """ "Grandpa passed 11/15", "Project completed 11/15", "We finished 11/15." name 15 November,
    as do "the 11/15 reviews" (a plural after "the" is what that day holds); a count still
    reads as one: "11/15 tests passed", "completed 11/15 tasks", "scored 11/15"."""
    from vaultmind.retrieval.day_numbers import numeric_dates

    for text in ("Grandpa passed 11/15, peacefully.", "Project completed 11/15", "We finished 11/15.",
                 "Rescheduled the 11/15 reviews", "our 11/15 games"):  # fmt: skip
        assert numeric_dates(text, "mdy") == [(11, 15, None)], text
    for text in ("11/15 tests passed", "completed 11/15 tasks", "scored 11/15", "passed 11/15 checks"):
        assert numeric_dates(text, "mdy") == [], text


def test_a_passing_said_in_numbers_is_found_for_its_day(vault: Path) -> None:
    """A death told in numbers, "passed 11/15", is found when asked what happened that day."""
    write_chat(vault, "2024-11-20", [("Alice Chen", "Grandpa passed 11/15, peacefully, with all of us around him.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        found = _contents(memory, "What happened on 15 November 2024?", datetime(2024, 12, 1))
        assert any("Grandpa passed" in c for c in found), found


def test_a_week_across_two_years_finds_the_days_of_both_months(vault: Path) -> None:
    """A week from 29 December to 4 January is looked up in December's days and January's, by
    their names, ISO dates and numbers (year first too)."""
    write_chat(vault, "2024-12-10", [("Alice Chen", "Harbour party on 30 December, the big one."),
                                     ("Bob Stone", "Ferry trip booked for 2 January 2025 early.")])  # fmt: skip
    write_chat(vault, "2024-12-11", [("Dana Whitfield", "Inventory count 2025/01/03 at the depot."),
                                     ("Marco Ruiz", "Dentist 31/12/2024 at nine.")])  # fmt: skip
    write(vault, "Plan.md", "# Plan\n\nReview on 2025-01-01 with the team.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        found = _contents(memory, "What happened between 29 December 2024 and 4 January 2025?", datetime(2025, 2, 1))
        for said in ("30 December", "2 January", "2025/01/03", "31/12/2024", "2025-01-01"):
            assert any(said in c for c in found), (said, found)


def test_a_week_reads_as_many_leaves_a_day_as_a_day_asked_alone(vault: Path) -> None:
    """Hundreds of leaves written in a week hold "april" and one of its days' numbers ("April
    stock: 16 crates"): the plan written in January that names 19 April is still read and found
    for "last week" (one look-up for the week's days, but `SCAN_LIMIT` leaves read for each)."""
    from vaultmind.retrieval.day_mentions import SCAN_LIMIT, day_mentions
    from vaultmind.retrieval.timeparse import parse_time_window

    write_chat(vault, "2024-01-10", [("Alice Chen", "Launch is on 19 April, book the hall for the whole crew.")])
    for day in range(14, 22):  # more such leaves than a day's read, all written nearer the week
        write_chat(vault, f"2024-04-{day}", [("Bob Stone", f"April stock: 16 crates of item {day}-{i}.") for i in range(60)])
    assert SCAN_LIMIT < 8 * 60
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        now = datetime(2024, 4, 24, 12)
        window = parse_time_window("What happened last week?", now)
        assert window is not None
        texts = memory.leaves.texts(day_mentions(memory, window, now))
        assert any("Launch is on 19 April" in t for t in texts.values()), texts
