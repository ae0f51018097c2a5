"""Which sentences of a message ask: its questions, and its requests written as statements.

A message asks its listener for something with a question ("What books do you enjoy?") or with
a first-person wish to be told or advised that ends in a period or an exclamation mark ("I'm
always up for some new book recommendations.", "I could use some tips!", "I'd love to hear
about it!"). Either holds the words of what it asks about and tells nothing of them:
`answer_type.asking` reads both as asking. A wish to see something counts when it is of the
listener's ("I'd love to see the shots you got"), not a wish of one's own ("I'd love to see
Japan someday"); advice one means to get elsewhere ("I need to get some advice from my
coach") is no request. An imperative closing ("Let me know what you think!") is not read as
a request: it follows what the message tells.
"""

from __future__ import annotations

import re

QUESTION_MARKS = ("?", "？", "؟")

_ADVICE = r"(?:recommendations?|recs|suggestions?|tips|advice|ideas|pointers)"
# advice asked for: "recommendations", "some new book recommendations" (a determiner, then up to
# two words), not "to get some advice from my coach"
_ASKED_FOR = rf"(?:(?:some|any|more|a\s+few|your)\s+(?:[\w'’-]+\s+){{0,2}}?)?{_ADVICE}\b"
_WISH = re.compile(
    r"\bi(?:['’]d|\s+would)\s+(?:love|like|be\s+(?:happy|glad|curious))\s+to\s+(?:hear|know)\b"
    r"|\bi(?:['’]d|\s+would)\s+(?:love|like)\s+to\s+see\b.*\byou"
    rf"|\bi(?:['’]m|\s+am)\s+(?:always\s+|all\s+)?(?:up\s+for|open\s+to|looking\s+for|all\s+ears\s+for)\s+{_ASKED_FOR}"
    rf"|\bi\s+(?:could\s+use|need|(?:['’]d|would)\s+(?:love|like|appreciate))\s+{_ASKED_FOR}",
    re.I,
)


def requests(sentence: str) -> bool:
    """Whether `sentence` (not a question) wishes to be told or advised by its listener."""
    return _WISH.search(sentence) is not None


def asks(sentence: str) -> bool:
    """Whether `sentence` asks: a question, or a request (`requests`)."""
    return sentence.endswith(QUESTION_MARKS) or requests(sentence)


def may_ask(text: str) -> bool:
    """Whether a sentence of `text` may ask: a quick test before splitting it into sentences."""
    return any(mark in text for mark in QUESTION_MARKS) or requests(text)
