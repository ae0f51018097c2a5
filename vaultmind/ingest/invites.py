"""A calendar invitation (an email's `text/calendar` part, an attached `.ics`) → a few lines of
text: what, when, where, who invites, and the description.

An invitation whose only rendering is its calendar part (Outlook and many calendar servers
send no `text/plain`) would otherwise leave its note empty but for the attachments line: the
meeting's title, time and place are what the mail says. Read here by hand (RFC 5545 lines:
folded lines unfolded, `\\n` `\\,` `\\;` unescaped), never an exception; times are shown in UTC
when their zone is known (`Z`, an IANA `TZID`), else as written with their zone's name.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

_FOLD_RE = re.compile(r"\r?\n[ \t]")
_ESCAPE_RE = re.compile(r"\\([\\;,nN])")
_PROPERTY_RE = re.compile(r"^([A-Za-z0-9-]+)((?:;[^:]*)?):(.*)$")
_PARAM_RE = re.compile(r';([A-Za-z0-9-]+)=("[^"]*"|[^;:]*)')
_TIME_RE = re.compile(r"^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})?(Z)?)?$")
_KEPT = ("SUMMARY", "DTSTART", "DTEND", "LOCATION", "ORGANIZER", "DESCRIPTION", "STATUS")


def invitations_text(calendars: list[str]) -> str:
    """The events of `calendars` (VCALENDAR texts), each as a few lines, the same event once."""
    events: list[str] = []
    for calendar in calendars:
        method = _method(calendar)
        for event in _events(calendar):
            text = _event_text(event, method)
            if text and text not in events:
                events.append(text)
    return "\n\n".join(events)


def _lines(calendar: str) -> list[tuple[str, dict[str, str], str]]:
    """(name, parameters, value) of each content line, folded lines joined."""
    out = []
    for line in _FOLD_RE.sub("", calendar).splitlines():
        match = _PROPERTY_RE.match(line.strip())
        if match:
            params = {k.upper(): v.strip('"') for k, v in _PARAM_RE.findall(match.group(2))}
            out.append((match.group(1).upper(), params, match.group(3)))
    return out


def _method(calendar: str) -> str:
    return next((value.strip().upper() for name, _, value in _lines(calendar) if name == "METHOD"), "")


def _events(calendar: str) -> list[dict[str, tuple[dict[str, str], str]]]:
    """Each VEVENT's first value of each property kept (`_KEPT`)."""
    events: list[dict[str, tuple[dict[str, str], str]]] = []
    depth = 0  # nesting inside the current VEVENT (a VALARM within it is not the event's)
    for name, params, value in _lines(calendar):
        if name == "BEGIN":
            if value.strip().upper() == "VEVENT" and depth == 0:
                events.append({})
                depth = 1
            elif depth:
                depth += 1
        elif name == "END" and depth:
            depth -= 1
        elif depth == 1 and name in _KEPT:
            events[-1].setdefault(name, (params, value))
    return events


def _unescape(value: str) -> str:
    return _ESCAPE_RE.sub(lambda m: "\n" if m.group(1) in "nN" else m.group(1), value).strip()


def _event_text(event: dict[str, tuple[dict[str, str], str]], method: str) -> str:
    def value(name: str) -> str:
        return _unescape(event[name][1]) if name in event else ""

    cancelled = method == "CANCEL" or value("STATUS").upper() == "CANCELLED"
    lines = [("[invitation cancelled] " if cancelled else "[invitation] ") + (value("SUMMARY") or "(no title)")]
    when = _when(event.get("DTSTART"), event.get("DTEND"))
    if when:
        lines.append(f"When: {when}")
    if value("LOCATION"):
        lines.append(f"Where: {value('LOCATION')}")
    if "ORGANIZER" in event:
        lines.append(f"Organizer: {_person(*event['ORGANIZER'])}")
    if value("DESCRIPTION"):
        lines.append(value("DESCRIPTION"))
    return "\n".join(lines) if len(lines) > 1 or "SUMMARY" in event else ""


def _person(params: dict[str, str], value: str) -> str:
    address = re.sub(r"(?i)^mailto:", "", value.strip())
    name = params.get("CN", "").strip()
    return f"{name} <{address}>" if name and address else name or address


def _when(start: tuple[dict[str, str], str] | None, end: tuple[dict[str, str], str] | None) -> str:
    """"2024-03-07 09:00–10:00 UTC", "2024-03-07" (a day), or the times as written."""
    first = _time(*start) if start else None
    if first is None:
        return ""
    last = _time(*end) if end else None
    text, zone = first
    if last is None or last == first:
        return f"{text} {zone}".strip()
    if last[1] == zone and last[0][:10] == text[:10] and len(text) > 10:
        return f"{text}–{last[0][11:]} {zone}".strip()
    if last[1] == zone:
        return f"{text} – {last[0]} {zone}".strip()
    return f"{text} {zone} – {last[0]} {last[1]}".strip()


def _time(params: dict[str, str], value: str) -> tuple[str, str] | None:
    """(the time as "YYYY-MM-DD HH:MM" or a date, its zone: "UTC", a zone's name, or "")."""
    match = _TIME_RE.match(value.strip())
    if not match:
        return None
    year, month, day, hour, minute, _, utc = match.groups()
    if hour is None:
        return f"{year}-{month}-{day}", ""
    try:
        at = datetime(int(year), int(month), int(day), int(hour), int(minute))
    except ValueError:
        return None
    zone_name = params.get("TZID", "")
    if utc:
        return at.strftime("%Y-%m-%d %H:%M"), "UTC"
    try:
        zone = ZoneInfo(zone_name) if zone_name else None
    except Exception:  # (a Windows zone name, "W. Europe Standard Time": not an IANA key)
        zone = None
    if zone is not None:
        return at.replace(tzinfo=zone).astimezone(UTC).strftime("%Y-%m-%d %H:%M"), "UTC"
    return at.strftime("%Y-%m-%d %H:%M"), f"({zone_name})" if zone_name else ""
