"""Whether a text gives an account of something done: a past verb after its subject ("we
went", "I finally tried", "so I booked"; not "I planned to", which says what was meant), or a
past time ("last weekend", "yesterday", "two days ago"). Read by `occasion` (a sentence that
tells something done says more than what someone means to do) and `asking` (a wish followed by
a clause telling something done is no request)."""

from __future__ import annotations

import re

from vaultmind.calendar_names import WEEKDAYS, alternation

TIME_WORD = (
    r"(?:time|day|week|weekend|month|year|spring|summer|fall|autumn|winter|morning|evening|night"
    rf"|{alternation(WEEKDAYS)})s?"
)
_TELLS_DONE = re.compile(
    r"\b(?:i|we|he|she|they|you)\s+(?:\w+ly\s+|just\s+|also\s+)?(?:went|did|got|took|made|came|saw|spent|bought"
    r"|found|met|left|ran|had|\w+ed)\b(?!\s+to\b)"
    rf"|\blast\s+{TIME_WORD}\b|\byesterday\b|\bago\b",
    re.I,
)


def tells_done(text: str) -> bool:
    """Whether `text` gives an account of something done (the module's reading)."""
    return _TELLS_DONE.search(text) is not None
