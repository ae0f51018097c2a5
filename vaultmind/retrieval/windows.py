"""A question's time window as `walk` ranks by it: the window read on the asker's calendar,
the year of a date or month named without one, the window's words that only place it relative
to the asker (not searched), whether the memory holds anything said in it, which leaves name
one of its days, and each leaf's time factor (the whole formula: docs/ranking.md).

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
            summary's time range (inside when it overlaps the window). A window the memory
            holds nothing in (nor just after it) ranks nothing: "what is due by 10 May?" asked
            in March reads last May, and used to take every dated message down below undated
            notes; the window is still reported (`query.time_window`). The window's relative
            words ("last", "week", "yesterday", the weekday of "last Tuesday") are not
            searched, lexically or densely: a message that says "last year's price" is no
            match for "what happened last month?", nor one that says "Tuesday 23 April" for
            "what happened last Tuesday?"; the words that name a date ("June", "14", "Q2")
            still are. A question whose only words are its window's relative ones ("what did
            we do yesterday?") searches no words: the window's leaves, the dense and entity
            signals rank. A date or month named without its year and without relative words
            ("on 7 March", "in May") is the most recent one before the reference time, or, when
            the memory holds nothing then, an earlier year in which it holds something (an
            archive of 2024 asked in 2026): the one holding most of the question's lexical
            matches (not the window's own words: "March 20" says nothing of the year asked
            about), else most messages of the authors it names, else the latest (`windows.year_held`).
            A question about what is to come ("what will we do in April?", by its auxiliaries)
            reads the next one, and so does one about what is when the next one is within
            `windows.PRESENT_AHEAD` ("what are we doing in January?" asked in December), and
            one that does not ask what was when no year holds anything, or asks what was
            planned for it ("what did we plan for April?", `windows.asks_of_plans`; not
            "what did we decide on 7 August?"); "on Friday" asked of
            what is to come is the coming Friday. A window the memory holds nothing in that is
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
   inside = 1 for a leaf whose time falls in the question's window, else 0: of a window's
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
            a window holding none of that speaker's messages (nor ahead, nor empty) takes the
            speaker's messages nearest the window as candidates, and the window ranks
            nothing else: no time factor, no `inside`; each of the speaker's messages adds
            `WINDOW_PRESENCE` × its `nearness` to the window instead — his words nearest it
            first, not the others' words inside it (`query.window_none_by` names him).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from vaultmind.index.lexical import terms
from vaultmind.retrieval.people import person_terms
from vaultmind.retrieval.signals import CANDIDATES, of_kind
from vaultmind.retrieval.timeparse import MONTHS, WEEKDAYS, TimeWindow, parse_time_window
from vaultmind.vault.layout import SUMMARIES_DIR

if TYPE_CHECKING:
    from vaultmind.index.resident import LeafColumns, ResidentLeaves
    from vaultmind.index.store import Index
    from vaultmind.retrieval.view import MemoryView

OUTSIDE_WINDOW = 0.35
AFTER_WINDOW = 0.75
AFTER_WINDOW_DAYS = 3
YEARS_BACK = 50  # how far back a year-less date looks for the latest year the memory holds it
LEAD_UP_DAYS = 14  # a window still ahead: the days before the reference time that tell of it

_WORD = re.compile(r"[\w'’]+")

_ABSOLUTE_WORDS = frozenset([*MONTHS, "q1", "q2", "q3", "q4"])
# words that read a window from the reference time ("last March", "this May"): never moved a year
_RELATIVE_WORDS = frozenset("last this next ago yesterday today tomorrow tonight past coming".split())


def relative_terms(window_text: str) -> set[str]:
    """The search terms of a window's words that only place it relative to the asker ("last",
    "week", "yesterday", "two … ago", "last Tuesday"): a message's own "last week", or its
    "Tuesday", is about another day. The words that name a date ("June", "14", "2025", "Q2",
    and a weekday beside a date: "Friday 14 June") stay searched: a message that says "due on
    July 31" or "the Q2 budget" is about that date."""
    found = _WORD.findall(window_text.lower())
    dated = any(word in MONTHS or (word.isdigit() and len(word) == 4) for word in found) or "-" in window_text
    kept = {
        word for word in found if word in _ABSOLUTE_WORDS or (dated and (word.isdigit() or word in WEEKDAYS))
    }
    return set(terms(window_text)) - {t for word in kept for t in terms(word)}


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


def question_window(question: str, reference_time: datetime | None) -> TimeWindow | None:
    """The question's time window. Days are the asker's: "yesterday" is read on the calendar of
    the reference time's offset (this machine's local time when there is none; a naive
    reference time is UTC), then the window is turned into UTC."""
    local = reference_time if reference_time is not None else datetime.now().astimezone()
    offset = local.utcoffset() or timedelta(0)
    window = parse_time_window(question, local.replace(tzinfo=None))
    if window is None or not offset:
        return window
    try:
        return TimeWindow(window.start - offset, window.end - offset, window.text)
    except OverflowError:  # a window at the calendar's very edge: read on UTC days
        return window


_FUTURE = re.compile(r"\b(?:will|shall|gonna|going to|upcoming|coming up)\b|\w['’]ll\b", re.IGNORECASE)
_PAST = re.compile(
    r"\b(?:did|was|were|had|happened|went|came|said|told|decided|discussed|agreed|met|talked|saw|visited"
    r"|got|made|took|bought|gave|left|started|finished|ended)\b",
    re.IGNORECASE,
)
_PRESENT = re.compile(r"\b(?:is|are|am)\b|\b(?:what|who|where|when|how|that|there|it)['’]s\b|\w['’]re\b", re.IGNORECASE)
PRESENT_AHEAD = timedelta(days=183)  # a month asked of in the present tense is the next one within this

Tense = Literal["future", "present", "past"]


def question_tense(question: str) -> Tense | None:
    """Whether the question asks about what is to come ("what will we do in May?", "what's
    upcoming in June?", "where are we going to stay?"), what is ("what is happening in April?",
    "what are we doing in May?") or what was ("what did we decide on 7 March?", "what happened in
    April?", "when did she plan on going to Paris?"): the first of its future and past
    auxiliaries or common past verbs, else a present one; else None. "Will" capitalised inside
    a question is a name ("what did Will say?")."""
    futures = (m for m in _FUTURE.finditer(question) if not (m.group() == "Will" and question[: m.start()].strip()))
    future, past = next(futures, None), _PAST.search(question)
    if future is not None and (past is None or future.start() < past.start()):
        return "future"
    if past is not None:
        return "past"
    return "present" if _PRESENT.search(question) else None


_PLANNED = re.compile(
    r"\b(?:plan|plans|planned|planning|decide|decided|agree|agreed|book|booked|arrange|arranged|schedule|scheduled"
    r"|organi[sz]e|organi[sz]ed|prepare|prepared|promise|promised|intend|intended)\b",
    re.IGNORECASE,
)
_A_THING = re.compile(r"\b(?:what|which|a|an|the|this|that|my|our|your|his|her|their)\s+$", re.IGNORECASE)


def asks_of_plans(question: str, window: TimeWindow) -> bool:
    """Whether the question asks what was planned, decided, agreed or booked for its window
    ("what did we plan for April?", "what did we book for May?"): what was said before it, of
    it. "What did we decide on 7 August?" asks what was decided that day, and "what book did we
    read?" of a thing."""
    text = " ".join(question.lower().replace("’", "'").split())
    if not re.search(rf"\b(?:for|about)\s+(?:the\s+)?{re.escape(window.text)}\b", text):
        return False
    return any(not _A_THING.search(question, 0, m.start()) for m in _PLANNED.finditer(question))


_ON_WEEKDAY = re.compile(rf"^(?:on|this) (?:{'|'.join(WEEKDAYS)})$")


def coming_weekday(window: TimeWindow, now: datetime, tense: Tense | None) -> TimeWindow:
    """"On Friday" is the last Friday, and "this Friday" this week's, but asked of anything but
    what was ("what will we do on Friday?", "what time does the play start on Friday?", "this
    Friday" on a Sunday) the coming one."""
    if tense != "past" and window.end <= now and _ON_WEEKDAY.match(window.text):
        try:
            return TimeWindow(window.start + timedelta(days=7), window.end + timedelta(days=7), window.text)
        except OverflowError:  # at the calendar's very end
            return window
    return window


_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
_DAY_NAMES = "|".join(WEEKDAYS)
_DAY_MENTION = re.compile(  # matched against lower-cased text
    rf"\b(?:(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>{_MONTH_NAMES})\b"
    rf"|(?P<m2>{_MONTH_NAMES})\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"|(?P<rel>on|for|this|next|coming)\s+(?P<wd>{_DAY_NAMES})\b(?!,?\s+(?:the\s+)?(?:\d|(?:{_MONTH_NAMES})\b))"
    rf"|(?P<span>this|next|coming)\s+(?P<unit>week|weekend)\b"
    rf"|(?P<tomorrow>tomorrow)\b)"
)


def names_a_day_in(window: TimeWindow, text: str, written: datetime) -> bool:
    """Whether `text`, written at `written`, names a day inside `window`, read forward from when
    it was written, as plans are: "Friday 21 March", "on Tuesday" (the next one), "next
    Tuesday" (of the next week), "tomorrow", "next week", "this weekend". A date without its
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


def yearless(window_text: str) -> bool:
    """A window named by a date or month without its year and without relative words ("on 7
    March", "in May", "Q3"): its year is the reference time's, or the one before."""
    found = _WORD.findall(window_text.lower())
    named = any(word in MONTHS for word in found) or re.search(r"\bq[1-4]\b|\bquarter\b", window_text, re.IGNORECASE)
    return bool(named) and not any(word.isdigit() and len(word) == 4 for word in found) and not _RELATIVE_WORDS & set(found)


def year_held(
    leaves: ResidentLeaves,
    window: TimeWindow,
    wording: Sequence[str],
    authors: Collection[str],
    *,
    candidates: int,
    now: datetime,
    tense: Tense | None,
    planned: bool = False,
) -> TimeWindow:
    """The year of a year-less window, read as the latest before `now` ("what did we decide on 7
    March?"). A question about what is to come (`tense`: "what will we do in April?" asked in
    March), or about what is when the next one is within `PRESENT_AHEAD` ("what are we doing in
    January?" asked in December), reads the next one instead. A window the memory holds nothing in moves back to an
    earlier year it holds something in (an archive of 2024 asked in 2026): the year whose
    window holds the most of the lexical matches of `wording` (the question's words but the
    window's own; their BM25 summed, searched only then, `candidates` of them), else the most
    messages by the authors it names ("what did Dan say in March?"), else the latest. Of two
    Marches, the one the question is about, not the latest with any message at all. When no
    year holds anything, not even in the days just after it, the next one unless the question
    asks what was ("what is happening in April?" of a memory begun in January), or asks what was
    planned for it (`planned`: "what did we plan for April?", asked in March of a memory begun
    in January): the memory can only hold what was said of it before."""
    upcoming = _years_after(window, 1) if window.end <= now else None
    if upcoming is not None and (tense == "future" or (tense == "present" and upcoming.start - now <= PRESENT_AHEAD)):
        return upcoming
    if leaves.in_window(window.start, window.end, 1):
        return window
    first = leaves.first_time()
    held: list[TimeWindow] = []
    years = 1
    while first is not None and years <= YEARS_BACK:
        try:
            earlier = TimeWindow(_years_before(window.start, years), _years_before(window.end, years), window.text)
        except (ValueError, OverflowError):
            break
        if earlier.end <= first:
            break
        if leaves.in_window(earlier.start, earlier.end, 1):
            held.append(earlier)
        years += 1
    if not held:  # told of just after it ("we met on the 15th"), else the next one
        if upcoming is None or (tense == "past" and not planned) or leaves.in_window(window.end, after_end(window, now), 1):
            return window
        return upcoming
    lexical = leaves.search(wording, candidates) if wording else []
    if lexical:
        ts = leaves.columns([leaf_id for leaf_id, _ in lexical]).ts
        scores = np.array([score for _, score in lexical])
        weight = [float(scores[within(w, ts)].sum()) for w in held]
        if max(weight) > 0:
            return held[max(range(len(held)), key=lambda k: (weight[k], -k))]
    if authors:
        by = []
        for w in held:
            cols = leaves.columns(leaves.in_window(w.start, w.end, candidates))
            names = [cols.author_names[c] if c >= 0 else "" for c in cols.author.tolist()]
            by.append(sum(1 for name in names if name and person_terms(name) & set(authors)))
        if max(by) > 0:
            return held[max(range(len(held)), key=lambda k: (by[k], -k))]
    return held[0]


def _years_after(window: TimeWindow, years: int) -> TimeWindow | None:
    try:
        return TimeWindow(_years_before(window.start, -years), _years_before(window.end, -years), window.text)
    except (ValueError, OverflowError):  # beyond the calendar
        return None


def _years_before(when: datetime, years: int) -> datetime:
    try:
        return when.replace(year=when.year - years)
    except ValueError:  # 29 February
        return when.replace(year=when.year - years, day=28)


def summary_time_factors(index: Index, window: TimeWindow, cols: LeafColumns, factors: npt.NDArray[np.float64]) -> None:
    """A summary's leaves have no time of their own: their summary's time range stands for it.
    A range that overlaps the window counts as inside it, one that starts within
    `AFTER_WINDOW_DAYS` after it as just after, any other as outside (in `factors`, in place)."""
    undated = np.flatnonzero(cols.known & np.isnat(cols.ts))
    if not len(undated):
        return
    prefix = SUMMARIES_DIR + "/"
    paths = [cols.note_names[c] for c in np.unique(cols.note[undated]).tolist() if cols.note_names[c].startswith(prefix)]
    if not paths or "summaries" not in index.tables:
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
            factors[k] = 1.0
        elif window.end <= start < after:
            factors[k] = AFTER_WINDOW
        else:
            factors[k] = OUTSIDE_WINDOW


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


def told_plans(memory: MemoryView, lexical: list[tuple[str, float]], window: TimeWindow) -> list[tuple[str, float]]:
    """Of the leaves holding a plan word of a question about nothing but a window still ahead
    ("what is the May plan?"), those that name one of its days, written whenever before: a
    plan of another time ("change of plans: the launch moves to April") is none of its."""
    ids = [leaf_id for leaf_id, _ in lexical]
    told = told_of(memory, ids, memory.leaves.columns(ids), window)
    return [hit for hit, named in zip(lexical, told.tolist(), strict=True) if named]
