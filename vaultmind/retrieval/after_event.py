"""A time named by an event: "what did Priya say after the launch was moved?".

A question about someone's words "after <event>", where the event is no date the time parser
reads, asks for what they said once the event had happened. The event is found by asking the
memory when it happened ("when the launch was moved?"): the first dated hit is the message or
note that tells it, and its time opens the window, which lasts `EVENT_SPAN`. The event's words
are the window's (what tells the event, not what was said after it), and what the speaker said
before it is outside the window, as before any window.

Only for a question that asks for a speaker's words: "how did Caroline feel after the
accident?" asks of the event's consequence, which is told with the event as often as after it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from vaultmind.retrieval.timeparse import TimeWindow

EVENT_SPAN = timedelta(days=1)  # how long after the event its window lasts
EVENT_HITS = 5  # of the hits for "when <event>?", the first dated one tells the event

# "after <event>" closing the question: "after the launch was moved?", "after Marco's message
# about the Pro tier?" (not "after 1 April", which the time parser reads as a window)
_AFTER = re.compile(r"\bafter\s+(?P<event>[^?!.]*\w)[\s?!.]*$", re.IGNORECASE)


def after_event(question: str) -> str | None:
    """The event a question's closing "after <event>" names ("the launch was moved"), None
    without one."""
    found = _AFTER.search(question)
    return found.group("event") if found else None


def event_window(question: str, ask: Callable[[str], Sequence[dict[str, Any]]]) -> TimeWindow | None:
    """The window after the event the question names: from the time of the first dated hit
    `ask` gives for "when <event>?" (walk's hits), `EVENT_SPAN` long; its text is the words
    that name the event. None when the question names no event or nothing dated tells it."""
    event = after_event(question)
    if event is None:
        return None
    for hit in ask(f"when {event}?")[:EVENT_HITS]:
        start = (hit.get("time_range") or {}).get("start")
        if start:
            told = datetime.fromisoformat(start.removesuffix("Z"))
            return TimeWindow(told, told + EVENT_SPAN, f"after {event}")
    return None
