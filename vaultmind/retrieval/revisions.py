"""Whether a message changes what was said before: "we move the launch to 23 April", "the
meeting is postponed", "Update: the venue is now Harbor Hall".

Facts in a memory change, and the message that changes one holds the current answer to a
question asked in the present ("when is the launch?"), while the statement it replaces
("target is still 9 April") matches the question as well. `walk` ranks such a message above
the one it changes among its strongest candidates that share the question's words.

A change is told by a few patterns, in a sentence that states it: not one that asks or
proposes ("Could we move the BBQ to Sunday?", "Is the meeting postponed?", "If we move it…",
"Let's move it to Friday"), nor an instruction ("Switch to dark mode", "Don't forget to cancel
Netflix"), nor one that denies it ("no delay", "not postponed"), nor "instead of" (a
preference, not a change). English only, no model.
"""

from __future__ import annotations

import re
from functools import lru_cache

_CHANGE = re.compile(  # matched against lower-cased text
    r"\b(?:"
    r"(?:mov|chang|switch|shift)(?:e|es|ed|ing)?\b[^.!?\n]{0,40}?\b(?:to|from)\b"
    r"|postpon\w*|reschedul\w*|push(?:ed|ing)?\s+(?:\w+\s+){0,2}?back\b|brought\s+forward|bring\w*\s+(?:\w+\s+)?forward"
    r"|delay(?:ed|ing)?\b|cancel+(?:ed|ing|s)?\b|call(?:ed|ing)?\s+off\b|no\s+longer\b|instead\b(?!\s+of\b)"
    r"|correction\b|update\s*:|revised\b|new\s+(?:date|time|deadline|venue|plan)\b"
    r"|(?:is|are)\s+now\b|now\s+(?:on|at|in)\b|back\s+on\b|on\s+again\b|i\s+meant\b|change\s+of\s+plans?\b|(?:is|are)\s+off\b"
    r"|(?:pushed|slipped|bumped)\s+(?:back\s+)?to\b"
    r")"
)
# a sentence ends at . ! ? before a space or the end (not inside "4.2", "7.30"), but not after a
# title or "Inc." ("Dr. Lee", "Acme Inc. moved…"), or at a line's end
_SENTENCE_END = re.compile(r"(?<!\bdr)(?<!\bmr)(?<!\bmrs)(?<!\bms)(?<!\bst)(?<!\binc)(?<!\bltd)(?<!\bvs)(?<!\bco)[.!?]+(?=\s|$)|\n")
_NOTICE = re.compile(r"^\W*(?:please\s+note|note|fyi|heads\s+up|reminder|don['’]t\s+forget|just\s+so\s+you\s+know)\b\W*")
_ASKS_OR_PROPOSES = re.compile(  # a question, a proposal, a condition, or an instruction
    r"^\W*(?:could|can|should|shall|would|will|if|maybe|perhaps|what\s+if|how\s+about|why\s+don['’]t|do\s+you|is|are"
    r"|let['’]?s|please|don['’]t|do\s+not|remember\s+to|remind\s+me"
    r"|(?:switch|change|move|cancel|use)\s+(?:to|the|your|it|this|that|my|our)\b)\b"
)
_DENIED = re.compile(r"\b(?:no|not|without|never|don['’]t|doesn['’]t|won['’]t|isn['’]t|wasn['’]t)\s+(?:\w+\s+)?$")


@lru_cache(maxsize=8192)
def changes(text: str) -> tuple[str, ...]:
    """The sentences of `text` (lower case) that say something changed: a date moved, a plan
    cancelled, a fact corrected — stated, not asked, proposed or denied."""
    out = []
    for sentence in _sentences(text.lower()):
        sentence = _NOTICE.sub("", sentence)  # "Don't forget: the party moved to Friday" tells it
        if sentence.rstrip().endswith("?") or _ASKS_OR_PROPOSES.match(sentence):
            continue
        if any(not _DENIED.search(sentence, 0, m.start()) for m in _CHANGE.finditer(sentence)):
            out.append(sentence.strip())
    return tuple(out)


def _sentences(lower: str) -> list[str]:
    out, start = [], 0
    for m in _SENTENCE_END.finditer(lower):
        out.append(lower[start : m.end()])
        start = m.end()
    out.append(lower[start:])
    return [sentence for sentence in out if sentence.strip()]


def revises(text: str) -> bool:
    """Whether `text` says that something changed (`changes`)."""
    return bool(changes(text))
