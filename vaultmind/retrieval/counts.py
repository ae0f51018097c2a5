"""A count of what a question names: "how many testers get the beta?".

"How many <things>…?" asks for a number of those things ("40 testers", "5 sailors", "7 to 9
working days", "6 screens"), which the message that answers writes beside their name; a
number of anything else ("version 1.1", "€1,200") answers another question. The things are the
words right after "how many", up to a verb or a preposition ("how many working days does…":
working days; not "how many times…", which counts occasions, each told on its own), and a text counts them when it writes a number (digits, or a number word) and,
at most `COUNT_REACH` words after it with no preposition or article between, the last of those
words ("9 working days", "40 beta testers"; not "version 1.1 for sailors"). A count of people ("how many people…?", "how many guests…?") is `answer_type`'s.

Only where the memory writes such a count among the strongest leaves (`bonuses.answer_holds`):
"how many times did Melissa go camping?" of a memory that says "twice" is answered by any number.
"""

from __future__ import annotations

import re
from functools import lru_cache

from vaultmind.index.lexical import terms
from vaultmind.retrieval.answer_type import NUMBER_WORDS

# "how many times has John hurt his ankle?" counts occasions, each told in a message of its own,
# never as "2 times"
_OCCASIONS = frozenset(terms("times occasions"))
COUNT_REACH = 3  # words from a number to the name of what it counts ("40 beta testers")

# "how many sailors are…", "how many working days does…", "how many onboarding screens?": the
# words up to a verb, a preposition or the end
_COUNTED = re.compile(
    r"^\W*how\s+many\s+(?P<things>[a-z][\w-]*(?:\s+(?!(?:are|is|were|was|will|would|do|does|did|have|has|had|can|could|should"
    r"|get|gets|got|go|goes|went|come|came|in|on|at|of|for|to|from|with|by|about|there|we|i|you|they|he|she)\b)[a-z][\w-]*){0,2})",
    re.IGNORECASE,
)
# a number and the words after it (read ahead: in "7 to 9 working days", "9" starts one too)
_COUNT = re.compile(rf"(?:\b\d+(?:[.,]\d+)?|\b(?:{NUMBER_WORDS}))\b(?=((?:\s+[\w-]+){{1,{COUNT_REACH}}}))", re.IGNORECASE)
# a word between a number and a thing that is not what it counts: "1.1 for sailors", "€900 a month"
_APART = frozenset("for of to from with in on at by per and or a an the".split())


def counted_thing(question: str) -> str | None:
    """The search term of what "how many…?" counts ("how many working days…": "day"), None for
    another question or one whose things are no search word."""
    found = _COUNTED.match(question)
    if found is None:
        return None
    named = terms(found.group("things").split()[-1])
    return named[0] if named and named[0] not in _OCCASIONS else None


@lru_cache(maxsize=16_384)
def counts(text: str, thing: str) -> bool:
    """Whether `text` writes a number of `thing` (a search term): "40 testers", "7 to 9 working days"."""
    for found in _COUNT.finditer(text):
        for word in found.group(1).split():
            if word.lower() in _APART:
                break
            if thing in terms(word):
                return True
    return False
