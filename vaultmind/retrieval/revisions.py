"""Whether a message changes what was said before: "we move the launch to 23 April", "the
meeting is postponed", "Update: the venue is now Harbor Hall".

Facts in a memory change, and the message that changes one holds the current answer to a
question asked in the present ("when is the launch?"), while the statement it replaces
("target is still 9 April") matches the question as well. `walk` raises such a message a
little among its strongest candidates that share the question's words. English only, a few
patterns, no model.
"""

from __future__ import annotations

import re
from functools import lru_cache

_CHANGE = re.compile(  # matched against lower-cased text
    r"\b(?:"
    r"(?:mov|chang|switch|shift)(?:e|es|ed|ing)?\b[^.!?\n]{0,40}?\b(?:to|from)\b"
    r"|postpon\w*|reschedul\w*|push(?:ed|ing)?\s+(?:\w+\s+){0,2}?back\b|brought\s+forward|bring\w*\s+(?:\w+\s+)?forward"
    r"|delay(?:ed|ing)?\b|cancel+(?:ed|ing|s)?\b|call(?:ed|ing)?\s+off\b|no\s+longer\b|instead\b"
    r"|correction\b|update\s*:|revised\b|new\s+(?:date|time|deadline|venue|plan)\b"
    r")"
)


@lru_cache(maxsize=8192)
def revises(text: str) -> bool:
    """Whether `text` says that something changed: a date moved, a plan cancelled, a fact
    corrected."""
    return bool(_CHANGE.search(text.lower()))
