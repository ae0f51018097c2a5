"""A question's time window as `walk` ranks by it: whether the memory holds anything said in
it, which leaves name one of its days, and each leaf's time factor (the whole formula:
docs/ranking.md; which window the question names, its year, and its words that only place it
relative to the asker: `retrieval/asked_window.py`).

The time factor and the window's presence in `walk`'s formula:

   time_factor = 1 inside the window, `AFTER_WINDOW` for up to `AFTER_WINDOW_DAYS` after it
            (people tell of an event afterwards: "I watched it last night" is written the
            day after the evening the question names) but never past the reference time
            (what was written later was not there yet), `OUTSIDE_WINDOW` elsewhere — but 1 for
            one of the strongest messages outside it whose own time expression, read from when
            it was written, names a time in it ("a convention last month", written in April, for
            March; "a trip next month" said before it: `retold`) — 1 without
            a window or without a timestamp (a note of yours outside the window counts as
            without one: its date finds it, never takes it down; `window_times`) — except for a question about nothing but its
            window ("what happened yesterday?": only asking words besides it), where a leaf
            without a time has no claim and is outside; a summary's leaves take their
            summary's time range (inside by the share of it that overlaps the window:
            `span_share_factor`). A window the memory
            holds nothing in (nor just after it) ranks nothing: "what is due by 10 May?" asked
            in March reads last May, and used to take every dated message down below undated
            notes; the window is still reported (`query.time_window`). The window's relative
            words ("last", "week", "yesterday", the weekday of "last Tuesday") are not
            searched, lexically or densely: a message that says "last year's price" is no
            match for "what happened last month?", nor one that says "Tuesday 23 April" for
            "what happened last Tuesday?"; the words that name a date ("June", "14", "Q2")
            still are. A question whose only words are its window's relative ones ("what did
            we do yesterday?") searches no words: the window's leaves, the dense and entity
            signals rank. Which April or Friday a window named without its year is, is read
            in `retrieval/asked_window.py`. A window the memory holds nothing in that is
            still ahead of the reference time (a note of yours dated for a day of it, a
            party's `date:`, is said before it: `said_in`), or begun but empty ("what is happening in
            April?" asked in March, "next week", "today" at breakfast), can only be told of by
            what was said before it: its own words ("April") are searched like any other (not
            its asking words: "doing"), a question about nothing but it ranks the
            `windows.LEAD_UP_DAYS` before the reference time (or the window's length, when
            longer; their latest leaves) as its window — its plan words still searched ("what
            is the May plan?", for the plans written whenever before that name one of its
            days: `told_plans`), as they are beside other words ("the plan for the launch
            in April") — a leaf that names one of its days
            ("Friday 21 March", "next Tuesday", read from when it was written:
            `windows.names_a_day_in`) adds `WINDOW_PRESENCE`, and each adds `LATEST_SAID` × how
            late in those days it was written (plans change: "we move the launch to 23 April"
            over "still 9 April"); `query.window_ahead` says so.
   inside = 1 for a leaf whose time falls in the question's window, or that names one of the
            days of a short one past in its words, wherever its time falls (time factor 1
            too: `day_mentions`), else 0: of a window's
            leaves, even those no other signal reaches come before the weak matches outside
            it ("what happened in May?"). A question about nothing but its window ("what
            happened last week?", "what did we do in March?": only asking words and the
            window's own words besides it) is not searched, lexically or
            densely — "what happened" says nothing of which messages matter — and each leaf
            inside the window adds `INFORMATIVE` · min(1, terms / `INFORMATIVE_TERMS`): the
            messages that say the most lead, not "ok" and "me too". The same for a question
            about nothing but whom or what it names ("tell me about Bob": not the word "tell"),
            among the leaves that involve them.
            A question that names whose words it asks for ("what did Bob say yesterday?") of
            a window holding none of that speaker's messages (not one still ahead; one holding
            nothing at all too, or nothing but what was written just after it) takes the
            speaker's messages nearest the window as candidates, and the window ranks
            nothing else: no time factor, no `inside`; each of the speaker's messages adds
            `WINDOW_PRESENCE` × its `nearness` to the window instead — his words nearest it
            first, not the others' words inside it (`query.window_none_by` names him).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from vaultmind.calendar_names import alternation
from vaultmind.entities import shapes
from vaultmind.index.lexical import terms
from vaultmind.index.tables import has_table
from vaultmind.retrieval.signals import CANDIDATES, of_kind
from vaultmind.retrieval.timeparse import MONTHS, NUMBERS, WEEKDAYS, TimeWindow
from vaultmind.vault.layout import SUMMARIES_DIR

if TYPE_CHECKING:
    from vaultmind.index.leaf_columns import LeafColumns
    from vaultmind.index.store import Index
    from vaultmind.retrieval.view import MemoryView

OUTSIDE_WINDOW = 0.35
AFTER_WINDOW = 0.75
AFTER_WINDOW_DAYS = 3
LEAD_UP_DAYS = 14  # a window still ahead: the days before the reference time that tell of it
LAST_STEP = 0.25  # "when did I last (first)…?": each of the fullest matches this much above the one written before (after) it
DAY_TELLS_TERMS = 4  # a leaf naming a past day asked alone: its raise is whole from this many words beyond the date

def within(window: TimeWindow, ts: npt.NDArray[np.datetime64]) -> npt.NDArray[np.bool_]:
    """Which times fall inside the window (NaT: none)."""
    return (ts >= np.datetime64(window.start, "us")) & (ts < np.datetime64(window.end, "us"))


def after_end(window: TimeWindow, now: datetime) -> datetime:
    """The end of the days just after the window whose messages may tell of it: `AFTER_WINDOW_DAYS`
    later, and never past the reference time (what was written after it was not there yet)."""
    try:
        after = window.end + timedelta(days=AFTER_WINDOW_DAYS)
    except OverflowError:  # a window ending in year 9999
        after = datetime.max
    return max(window.end, min(after, now))


def time_factors(
    window: TimeWindow, ts: npt.NDArray[np.datetime64], now: datetime, *, undated: float = 1.0
) -> npt.NDArray[np.float64]:
    """The time factor of each time (NaT, no time: `undated`): 1 inside the window,
    `AFTER_WINDOW` after it up to `after_end`, `OUTSIDE_WINDOW` elsewhere."""
    end = np.datetime64(window.end, "us")
    after = np.datetime64(after_end(window, now), "us")
    out = np.full(len(ts), OUTSIDE_WINDOW)
    out[(ts >= end) & (ts < after)] = AFTER_WINDOW
    out[within(window, ts)] = 1.0
    out[np.isnat(ts)] = undated
    return out


_MONTH_NAMES = alternation(MONTHS, longest_first=True)
_DAY_NAMES = alternation(WEEKDAYS)
_DAY_MENTION = re.compile(  # matched against lower-cased text
    rf"\b(?:(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>{_MONTH_NAMES})\b"
    rf"|(?P<m2>{_MONTH_NAMES})\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"|(?P<rel>on|for|this|next|coming)\s+(?P<wd>{_DAY_NAMES})\b(?!,?\s+(?:the\s+)?(?:\d|(?:{_MONTH_NAMES})\b))"
    rf"|(?P<span>this|next|coming)\s+(?P<unit>week|weekend)\b"
    rf"|(?P<tomorrow>tomorrow)\b"
    rf"|in\s+(?P<n>\d{{1,2}}|{alternation(NUMBERS, longest_first=True)})\s+days?\b)"
)


def names_a_day_in(window: TimeWindow, text: str, written: datetime) -> bool:
    """Whether `text`, written at `written`, names a day inside `window`, read forward from when
    it was written, as plans are: "Friday 21 March", "on Tuesday" (the next one), "next
    Tuesday" (of the next week), "tomorrow", "in two days", "next week", "this weekend". A date without its
    year is the next one on or after the day it was written."""
    day = datetime(written.year, written.month, written.day)
    for m in _DAY_MENTION.finditer(text.lower()):
        try:
            span = _mentioned(m, day)
        except OverflowError:  # written at the calendar's very end
            continue
        # a span longer than the window (a week, for a day: "bins are collected this week")
        # names none of its days in particular
        narrow = span is not None and span[1] - span[0] <= max(window.end - window.start, timedelta(days=1))
        if span is not None and narrow and span[0] < window.end and window.start < span[1]:
            return True
    return False


def _mentioned(m: re.Match[str], day: datetime) -> tuple[datetime, datetime] | None:
    """The days a `_DAY_MENTION` match names, read from `day` (when it was written)."""
    monday = day - timedelta(days=day.weekday())
    one = timedelta(days=1)
    if m.group("tomorrow"):
        return day + one, day + 2 * one
    if m.group("n"):  # "in two days"
        when = day + one * (int(m.group("n")) if m.group("n").isdigit() else NUMBERS[m.group("n")])
        return when, when + one
    if m.group("unit"):
        start = monday + timedelta(weeks=0 if m.group("span") == "this" else 1)
        if m.group("unit") == "weekend":
            return start + 5 * one, start + 7 * one
        return (max(start, day), start + 7 * one) if m.group("span") == "this" else (start, start + 7 * one)
    if m.group("wd"):
        target = WEEKDAYS[m.group("wd")]
        if m.group("rel") == "next":
            when = monday + timedelta(weeks=1, days=target)
        else:
            when = day + timedelta(days=(target - day.weekday()) % 7 or 7)
        return when, when + one
    try:
        when = datetime(day.year, MONTHS[m.group("m1") or m.group("m2")], int(m.group("d1") or m.group("d2")))
        if when < day:
            when = when.replace(year=day.year + 1)
    except ValueError:  # "31 February", or the calendar's end
        return None
    return when, when + one


def lead_up(window: TimeWindow, now: datetime) -> TimeWindow:
    """The days before `now` that tell of a window still ahead ("what are we doing next week?"):
    `LEAD_UP_DAYS`, or the window's own length when longer. It keeps the window's text."""
    days = max(timedelta(days=LEAD_UP_DAYS), window.end - window.start)
    try:
        return TimeWindow(now - days, now, window.text)
    except OverflowError:
        return TimeWindow(datetime.min, now, window.text)


def lateness(span: TimeWindow, ts: npt.NDArray[np.datetime64]) -> npt.NDArray[np.float64]:
    """How late in `span` each time falls: 0 at its start (and before it, or without a time),
    1 at its end."""
    start, end = np.datetime64(span.start, "us"), np.datetime64(span.end, "us")
    elapsed = (ts - start) / (end - start) if end > start else np.zeros(len(ts))
    return np.nan_to_num(np.clip(elapsed.astype(np.float64), 0.0, 1.0))


def recency(ts: npt.NDArray[np.datetime64], among: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """How late each time of `among` falls between the earliest and the latest of them: 0 at the
    earliest, 1 at the latest; 0 outside `among`, without a time, or when they share one time.
    "What did Dana say?" asks for her words, and of equal matches the latest is the one that
    stands (the earlier ones may have been changed since)."""
    dated = among & ~np.isnat(ts)
    if not dated.any():
        return np.zeros(len(ts))
    first, last = ts[dated].min(), ts[dated].max()
    if last <= first:
        return np.zeros(len(ts))
    out = ((ts - first) / (last - first)).astype(np.float64)
    return np.where(dated, np.nan_to_num(out), 0.0)


def in_time_asked(
    memory: MemoryView,
    ids: Sequence[str],
    cols: LeafColumns,
    scores: npt.NDArray[np.float64],
    wanted: Collection[str],
    among: npt.NDArray[np.bool_],
    now: datetime,
    *,
    earliest: bool = False,
) -> npt.NDArray[np.float64]:
    """What lifts the leaves of `among` (the question's lexical matches) dated up to `now` that
    hold the most of its terms `wanted` above every other leaf, latest first (`earliest`: earliest
    first): each to the best score of all plus `LAST_STEP` × its place in time (1 for the
    earliest of them; with `earliest`, for the latest); 0 for any other leaf. "When did I last
    email Dana?" asks for the latest of the messages that say it, "when did I first email Dana?"
    for the earliest, however much better another one matches — and asked as of a past time, of
    those written by then."""
    out = np.zeros(len(ids))
    places = np.flatnonzero(among & ~np.isnat(cols.ts) & (cols.ts <= np.datetime64(now, "us")))
    if not len(places) or not wanted:
        return out
    rows = memory.leaves.rows([ids[k] for k in places.tolist()])
    asked = frozenset(wanted)
    held = np.array([len(asked.intersection(terms(rows[ids[k]]["text"] or ""))) if ids[k] in rows else 0 for k in places.tolist()])
    if held.max() == 0:
        return out
    fullest = places[held == held.max()]
    when = cols.ts[fullest].astype(np.int64)
    order = fullest[np.argsort(-when if earliest else when, kind="stable")]
    out[order] = scores.max() - scores[order] + LAST_STEP * np.arange(1, len(order) + 1)
    return out


def nearness(window: TimeWindow, ts: npt.NDArray[np.datetime64], among: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """How near the window each time of `among` falls, against the nearest of them: (its
    distance + a day) / (the nearest's + a day) inverted — 1 for the nearest, ½ for one a day
    and a half away when the nearest is half a day away; 0 outside `among` or without a time.
    "What did Bob say yesterday?" when he said nothing that day asks for his words nearest it."""
    dated = among & ~np.isnat(ts)
    if not dated.any():
        return np.zeros(len(ts))
    start, end = np.datetime64(window.start, "us"), np.datetime64(window.end, "us")
    distance = np.maximum(np.maximum(start - ts, ts - end), np.timedelta64(0, "us"))
    day = np.timedelta64(1, "D")
    out = ((distance[dated].min() + day) / (distance + day)).astype(np.float64)
    return np.where(dated, np.nan_to_num(out), 0.0)


def summary_time_factors(index: Index, window: TimeWindow, cols: LeafColumns, factors: npt.NDArray[np.float64]) -> None:
    """A summary's leaves have no time of their own: their summary's time range stands for it.
    A range that overlaps the window counts as inside it by the share of it that lies inside
    (`span_share_factor`), one that starts within `AFTER_WINDOW_DAYS` after it as just after,
    any other as outside (in `factors`, in place)."""
    undated = np.flatnonzero(cols.known & np.isnat(cols.ts))
    if not len(undated):
        return
    prefix = SUMMARIES_DIR + "/"
    paths = [cols.note_names[c] for c in np.unique(cols.note[undated]).tolist() if cols.note_names[c].startswith(prefix)]
    if not paths or not has_table(index, "summaries"):
        return
    ranges = {
        path: (start, end)
        for path, start, end in index.query(
            "SELECT note_path, min(time_start), max(time_end) FROM summaries "
            "WHERE note_path IN (SELECT unnest(?)) GROUP BY note_path",
            [paths],
        )
        if start is not None and end is not None
    }
    after = window.end + timedelta(days=AFTER_WINDOW_DAYS)
    for k in undated.tolist():
        found = ranges.get(cols.note_names[int(cols.note[k])])
        if found is None:
            continue
        start, end = (naive_utc(t) for t in found)
        if start < window.end and end >= window.start:
            factors[k] = span_share_factor(window, start, end)
        elif window.end <= start < after:
            factors[k] = AFTER_WINDOW
        else:
            factors[k] = OUTSIDE_WINDOW


def span_share_factor(window: TimeWindow, start: datetime, end: datetime) -> float:
    """The time factor of a range that overlaps the window: from `OUTSIDE_WINDOW` up to 1 by the
    share of the range inside it — a May–December summary asked of December tells mostly of
    other months, and ranks below one of December alone; a range within the window (or a
    single time in it) is wholly inside."""
    span = (end - start).total_seconds()
    if span <= 0:
        return 1.0
    share = (min(end, window.end) - max(start, window.start)).total_seconds() / span
    return OUTSIDE_WINDOW + (1.0 - OUTSIDE_WINDOW) * min(1.0, max(0.0, share))


def naive_utc(when: datetime) -> datetime:
    return when.astimezone(UTC).replace(tzinfo=None) if when.tzinfo else when


def yours_within(window: TimeWindow, cols: LeafColumns) -> bool:
    """Whether a leaf of one of the asker's notes (among the candidates, which hold the
    window's leaves) is dated inside `window`."""
    return bool((of_kind(cols, "user") & within(window, cols.ts)).any())


def said_in(memory: MemoryView, start: datetime, end: datetime, now: datetime) -> bool:
    """Whether the memory holds something said from `start` to `end`. A note of yours dated
    after the reference time is not: its date is the day it is for (a party's `date:
    2025-12-20`), written before it — a window ahead holding only such notes is still ahead,
    told of by what was said before ("what is happening in December?"), not taken for a
    window whose messages are all there is."""
    if start < now and memory.leaves.in_window(start, min(end, now), 1):
        return True
    later = memory.leaves.in_window(max(start, now), end, CANDIDATES) if end > now else []
    return bool(later) and not bool(of_kind(memory.leaves.columns(later), "user").all())


def window_times(window: TimeWindow, cols: LeafColumns) -> npt.NDArray[np.datetime64]:
    """The leaves' times as a window ranks them: a note of yours outside the window counts as
    undated. Its date (a daily note's day, a `created` stamp, "2023-01-01 Tax rules") lets a
    window find it, never takes it down: a note is kept and edited, and what it says may hold
    long after that day ("what is my squat this year?" finds the gym log created in 2021), as
    it did when your notes had no time."""
    outside = of_kind(cols, "user") & ~within(window, cols.ts)
    return np.where(outside, np.datetime64("NaT", "us"), cols.ts)


def told_of(memory: MemoryView, ids: list[str], cols: LeafColumns, window: TimeWindow) -> npt.NDArray[np.bool_]:
    """Which leaves name a day inside `window`, read from when they were written
    (`windows.names_a_day_in`)."""
    out = np.zeros(len(ids), dtype=bool)
    dated = [k for k in range(len(ids)) if not np.isnat(cols.ts[k])]
    rows = memory.leaves.rows([ids[k] for k in dated])
    for k in dated:
        row = rows.get(ids[k])
        if row is not None and row["text"]:
            out[k] = names_a_day_in(window, row["text"], cols.ts[k].astype("datetime64[us]").astype(datetime))
    return out


_DATING = frozenset(terms(" ".join([*shapes.MONTHS, *shapes.WEEKDAYS, "today tonight tomorrow yesterday"])))
_NUMBER = re.compile(r"\d+(?:st|nd|rd|th)?")  # a year, a day, "7th"


def telling(memory: MemoryView, ids: list[str], told: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """Of the leaves that name the day a question asks about alone (`told`), how much they tell
    of it beyond naming it: their words that name no time, over `DAY_TELLS_TERMS`, at most 1
    ("# Thursday, 7 March 2024 / - Gym." or "# Thu, 7th Mar 2024 / - Gym." a quarter: next to
    nothing); 0 for any other leaf."""
    out = np.zeros(len(ids))
    named = np.flatnonzero(told).tolist()
    rows = memory.leaves.rows([ids[k] for k in named])
    for k in named:
        row = rows.get(ids[k])
        out[k] = min(1.0, beyond_dating(row["text"] or "") / DAY_TELLS_TERMS) if row is not None else 0.0
    return out


def beyond_dating(text: str, besides: frozenset[str] = frozenset()) -> int:
    """How many of `text`'s words name no time (nor are among `besides`, terms): what it tells
    beyond the day it names."""
    return sum(1 for t in terms(text) if t not in _DATING and t not in besides and not _NUMBER.fullmatch(t))


def told_plans(memory: MemoryView, lexical: list[tuple[str, float]], window: TimeWindow) -> list[tuple[str, float]]:
    """Of the leaves holding a plan word of a question about nothing but a window still ahead
    ("what is the May plan?"), those that name one of its days, written whenever before: a
    plan of another time ("change of plans: the launch moves to April") is none of its."""
    ids = [leaf_id for leaf_id, _ in lexical]
    told = told_of(memory, ids, memory.leaves.columns(ids), window)
    return [hit for hit, named in zip(lexical, told.tolist(), strict=True) if named]
