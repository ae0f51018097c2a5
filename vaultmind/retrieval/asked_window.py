"""The time window a question asks about, as `walk` reads it: the window the question names,
read on the asker's calendar (`timeparse` parses it); the window's words that only place it
relative to the asker, which are not searched; the question's tense; and which April or Friday
a window named without its year (or week) is. How a window then ranks the leaves:
`retrieval/windows.py`.

   A date or month named without its year and without relative words ("on 7 March", "in
   May") is the most recent one before the reference time, or, when the memory holds nothing
   then, an earlier year in which it holds something (an archive of 2024 asked in 2026): the
   one holding most of the question's lexical matches (not the window's own words: "March 20"
   says nothing of the year asked about), else most messages of the authors it names, else the
   latest (`year_held`). A question about what is to come ("what will we do in April?", by its
   auxiliaries) reads the next one, and so does one about what is when the next one is within
   `PRESENT_AHEAD` ("what are we doing in January?" asked in December), and one that does not
   ask what was when no year holds anything, or asks what was planned for it ("what did we
   plan for April?", `asks_of_plans`; not "what did we decide on 7 August?"); "on Friday"
   asked of what is to come is the coming Friday (`coming_weekday`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal

import numpy as np

from vaultmind.calendar_names import alternation
from vaultmind.index.lexical import terms
from vaultmind.retrieval.people import person_terms
from vaultmind.retrieval.seasons import SEASON_STARTS
from vaultmind.retrieval.spans import span_window
from vaultmind.retrieval.timeparse import MONTHS, WEEKDAYS, TimeWindow, parse_time_window
from vaultmind.retrieval.windows import after_end, within

if TYPE_CHECKING:
    from vaultmind.index.resident import ResidentLeaves

YEARS_BACK = 50  # how far back a year-less date looks for the latest year the memory holds it

_WORD = re.compile(r"[\w'’]+")

_ABSOLUTE_WORDS = frozenset([*MONTHS, *SEASON_STARTS, "q1", "q2", "q3", "q4"])
# words that read a window from the reference time ("last March", "this May"): never moved a year
_RELATIVE_WORDS = frozenset("last this next ago yesterday today tomorrow tonight past coming".split())


def relative_terms(window_text: str) -> set[str]:
    """The search terms of a window's words that only place it relative to the asker ("last",
    "week", "yesterday", "two … ago", "last Tuesday"): a message's own "last week", or its
    "Tuesday", is about another day. The words that name a date ("June", "14", "2025", "Q2",
    a season: "summer", and a weekday beside a date: "Friday 14 June") stay searched: a message
    that says "due on July 31", "the Q2 budget" or "camping last summer" is about that time."""
    found = _WORD.findall(window_text.lower())
    dated = any(word in MONTHS or (word.isdigit() and len(word) == 4) for word in found) or "-" in window_text
    kept = {
        word for word in found if word in _ABSOLUTE_WORDS or (dated and (word.isdigit() or word in WEEKDAYS))
    }
    return set(terms(window_text)) - {t for word in kept for t in terms(word)}


def question_window(question: str, reference_time: datetime | None) -> TimeWindow | None:
    """The question's time window: a span it names by its ends (`spans`), else the time it
    names (`timeparse`). Days are the asker's: "yesterday" is read on the calendar of
    the reference time's offset (this machine's local time when there is none; a naive
    reference time is UTC), then the window is turned into UTC: by that offset, or without a
    reference time, each end by the offset this machine's zone has then (a window across the
    change to summer time starts and ends at the asker's midnights). A reference time carries
    an offset, not a zone: its window is turned by its offset alone."""
    local = reference_time if reference_time is not None else datetime.now().astimezone()
    offset = local.utcoffset() or timedelta(0)
    window = span_window(question, local.replace(tzinfo=None)) or parse_time_window(question, local.replace(tzinfo=None))
    if window is None:
        return None
    if reference_time is None:
        try:
            return TimeWindow(_machine_utc(window.start), _machine_utc(window.end), window.text)
        except (OverflowError, OSError, ValueError):  # beyond what this machine's clock converts: by today's offset
            pass
    if not offset:
        return window
    try:
        return TimeWindow(window.start - offset, window.end - offset, window.text)
    except OverflowError:  # a window at the calendar's very edge: read on UTC days
        return window


def _machine_utc(local: datetime) -> datetime:
    """A naive time on this machine's clock, as naive UTC, at the offset its zone has then."""
    return local.astimezone(UTC).replace(tzinfo=None)


_FUTURE = re.compile(r"\b(?:will|shall|gonna|going to|upcoming|coming up)\b|\w['’]ll\b", re.IGNORECASE)
_PAST = re.compile(
    r"\b(?:did|was|were|had|happened|went|came|said|told|decided|discussed|agreed|met|talked|saw|visited"
    r"|got|made|took|bought|gave|left|started|finished|ended)\b",
    re.IGNORECASE,
)
_PRESENT = re.compile(
    r"\b(?:is|are|am)\b|\b(?:what|who|where|when|how|that|there|it)['’]s\b|\w['’]re\b", re.IGNORECASE
)
PRESENT_AHEAD = timedelta(days=183)  # a month asked of in the present tense is the next one within this

Tense = Literal["future", "present", "past"]


def question_tense(question: str) -> Tense | None:
    """Whether the question asks about what is to come ("what will we do in May?", "what's
    upcoming in June?", "where are we going to stay?"), what is ("what is happening in April?",
    "what are we doing in May?") or what was ("what did we decide on 7 March?", "what happened in
    April?", "when did she plan on going to Paris?"): the first of its future and past
    auxiliaries or common past verbs, else a present one; else None. "Will" capitalised inside
    a question is a name ("what did Will say?")."""
    futures = (
        m for m in _FUTURE.finditer(question) if not (m.group() == "Will" and question[: m.start()].strip())
    )
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


_ON_WEEKDAY = re.compile(rf"^(?:on|this) (?:{alternation(WEEKDAYS)})$")


def coming_weekday(window: TimeWindow, now: datetime, tense: Tense | None) -> TimeWindow:
    """ "On Friday" is the last Friday, and "this Friday" this week's, but asked of anything but
    what was ("what will we do on Friday?", "what time does the play start on Friday?", "this
    Friday" on a Sunday) the coming one."""
    if tense != "past" and window.end <= now and _ON_WEEKDAY.match(window.text):
        try:
            return TimeWindow(window.start + timedelta(days=7), window.end + timedelta(days=7), window.text)
        except OverflowError:  # at the calendar's very end
            return window
    return window


def yearless(window_text: str) -> bool:
    """A window named by a date or month without its year and without relative words ("on 7
    March", "in May", "Q3"): its year is the reference time's, or the one before. A date with
    its weekday ("Tuesday 23 April") has the year it falls on that weekday in: not yearless."""
    found = _WORD.findall(window_text.lower())
    named = any(word in MONTHS for word in found) or re.search(
        r"\bq[1-4]\b|\bquarter\b", window_text, re.IGNORECASE
    )
    return (
        bool(named)
        and not any(word.isdigit() and len(word) == 4 for word in found)
        and not _RELATIVE_WORDS & set(found)
        and not any(word in WEEKDAYS for word in found)
    )


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
    if upcoming is not None and (
        tense == "future" or (tense == "present" and upcoming.start - now <= PRESENT_AHEAD)
    ):
        return upcoming
    if leaves.in_window(window.start, window.end, 1):
        return window
    first = leaves.first_time()
    held: list[TimeWindow] = []
    years = 1
    while first is not None and years <= YEARS_BACK:
        try:
            earlier = TimeWindow(
                _years_before(window.start, years), _years_before(window.end, years), window.text
            )
        except (ValueError, OverflowError):
            break
        if earlier.end <= first:
            break
        if leaves.in_window(earlier.start, earlier.end, 1):
            held.append(earlier)
        years += 1
    if not held:  # told of just after it ("we met on the 15th"), else the next one
        if (
            upcoming is None
            or (tense == "past" and not planned)
            or leaves.in_window(window.end, after_end(window, now), 1)
        ):
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
