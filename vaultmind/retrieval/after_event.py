"""A time named by an event: "what did Priya say after the launch was moved?".

A question about someone's words "after <event>", where the event is no date the time parser
reads, asks for what they said once the event had happened. The event is found by asking the
memory when it happened ("when the launch was moved?"): the first dated one of its first
`EVENT_HITS` hits is the message or note that tells it, and its time opens the window, which
lasts `EVENT_SPAN`. The event's words are the window's (what tells the event, not what was said
after it), and what the speaker said before it is outside the window, as before any window.
"after" must follow the verb of saying ("what did Priya say she would do after graduation?"
asks what she said of that time, whenever), and the event be no pronoun or fixed phrase
("after that", "after all"): without a window, the event's words are searched as any.

Only for a question that asks for a speaker's words: "how did Lucinda feel after the
accident?" asks of the event's consequence, which is told with the event as often as after it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from vaultmind.retrieval.people import SPEAKING_VERBS
from vaultmind.retrieval.timeparse import TimeWindow

EVENT_SPAN = timedelta(days=1)  # how long after the event its window lasts
EVENT_HITS = 5  # of the hits for "when <event>?", the first dated one tells the event

# "after <event>" closing the question, right after its verb of saying: "say after the launch was
# moved?", "said after Marco's message about the Pro tier?" (not "after 1 April", which the time
# parser reads as a window; not "say she would do after graduation?", which asks what she said of
# a time after it, whenever she said it)
_AFTER = re.compile(rf"\b(?:{SPEAKING_VERBS})\s+after\s+(?P<event>[^?!.]*\w)[\s?!.]*$", re.IGNORECASE)
# no event but a word standing for one, or a fixed phrase: "after that", "after all", "after it"
_NO_EVENT = frozenset("that this it all these those them him her me us you then which what everything".split())


def after_event(question: str) -> str | None:
    """The event a question's closing "after <event>" names, right after its verb of saying
    ("the launch was moved"); None without one, or when it opens with a pronoun or makes a
    fixed phrase ("after that", "after all")."""
    found = _AFTER.search(question)
    if found is None or found.group("event").split()[0].lower() in _NO_EVENT:
        return None
    return found.group("event")


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
