"""The message lines of a line chat (WhatsApp, Signal) and how their dates read: day first,
month first or year first (`date_order`), as the dates and their order settle it, else a guess."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from pathlib import Path

from vaultmind.ingest.errors import ingest_error

DateOrder = str  # "YMD", "DMY" or "MDY"


@dataclass(slots=True)
class Record:
    line: int
    parts: tuple[int, int, int]
    year_first: bool  # yyyy/mm/dd
    hour: int
    minute: int
    second: int
    ampm: str | None
    author: str | None  # None: a system line
    lines: list[str] = field(default_factory=list)
    raw: str = ""  # the header line as the export has it
    shape: tuple[object, ...] = ()  # how its date and time are written (`_shape`)
    head: int | None = None  # lines of its own before the first header line pasted into it
    notice: bool = False  # a system line of a shape WhatsApp writes (`whatsapp_notices.is_notice`)
    upper_ampm: bool = False  # its clock writes "AM"/"PM" (a US export's)


def date_order(path: Path, records: list[Record]) -> tuple[DateOrder, bool]:
    """The order the dates of `records` are written in, and whether nothing tells it: every date
    reads as day/month and as month/day, in order either way (read as day/month). Dates written
    with dots ("12.03.24": German, Russian, Polish, Turkish … exports) that leave it so are day
    first, said or not: no locale writes the month first so. (A file whose dates are in time
    order only month first is read so, dots or not: its order tells, and an earlier vaultmind
    read it so.)"""
    if records[0].year_first:
        mixed = next((r for r in records if not r.year_first), None)
        if mixed is not None:
            raise ingest_error(path, "the date format changes within the file", line=mixed.line)
        return "YMD", False
    mixed = next((r for r in records if r.year_first), None)
    if mixed is not None:
        raise ingest_error(path, "the date format changes within the file", line=mixed.line)
    orders = [order for order in ("DMY", "MDY") if all(fits(r, order) for r in records)]
    if not orders:
        bad = next((r for r in records if not fits(r, "DMY") and not fits(r, "MDY")), None)
        if bad is not None:
            raise ingest_error(path, "cannot read the date as day/month or month/day", line=bad.line)
        # each date reads one way or the other ("31.12.24" and "12/31/24"), none reads them all
        dmy_only = next(r for r in records if not fits(r, "MDY"))
        mdy_only = next(r for r in records if not fits(r, "DMY"))
        later = max(dmy_only, mdy_only, key=lambda r: r.line)
        raise ingest_error(path, "the date order changes within the file (day/month and month/day)", line=later.line)
    if len(orders) == 1:
        return orders[0], False
    day_first, month_first = _inversions(path, records, "DMY"), _inversions(path, records, "MDY")
    dotted = all(r.shape[1] == ".." for r in records)  # "12.03.24": written day first wherever dots are
    if day_first == month_first and not dotted and all(r.upper_ampm for r in records):
        return "MDY", True  # "9:30 AM": a US export's clock (a British, Australian or Indian one writes "am")
    return "DMY" if day_first <= month_first else "MDY", day_first == month_first and not dotted


def _inversions(path: Path, records: list[Record], order: DateOrder) -> int:
    """How many times the dates of `records`, read in `order`, go back."""
    times = [read_date(path, r, order) for r in records]
    return sum(1 for a, b in pairwise(times) if b < a)


def fits(record: Record, order: DateOrder) -> bool:
    a, b, _ = record.parts
    day, month = (a, b) if order == "DMY" else (b, a)
    return 1 <= month <= 12 and 1 <= day <= 31


def read_date(path: Path, record: Record, order: DateOrder) -> datetime:
    a, b, c = record.parts
    if order == "YMD":
        year, month, day = a, b, c
    elif order == "DMY":
        day, month, year = a, b, c
    else:
        month, day, year = a, b, c
    if year < 100:
        year += 2000
    hour = record.hour
    if record.ampm is not None:
        if not 1 <= hour <= 12 and hour != 0:
            raise ingest_error(path, f"hour {hour} with {record.ampm}", line=record.line)
        hour = hour % 12 + (12 if record.ampm.startswith("p") else 0)
    try:
        return datetime(year, month, day, hour, record.minute, record.second)
    except ValueError as exc:
        raise ingest_error(path, f"invalid date or time: {exc}", line=record.line) from exc


def guessed(path: Path, order: DateOrder) -> str:
    """What is said of an export whose dates read both ways, in order either way."""
    if order == "MDY":
        return (
            f"{path}: every date reads as day/month and as month/day, in order either way; read as "
            "month/day, as its AM/PM clock is a US export's (pass --date-order dmy if this export writes the day first)"
        )
    return (
        f"{path}: every date reads as day/month and as month/day, in order either way; read as "
        "day/month (pass --date-order mdy if this export writes the month first)"
    )
