"""What a text says is not done, and when it puts it off to.

A message that says what a question asks about is not done ("OK, let's not decide in chat")
holds no answer to it; unless the question asks what is still to come ("when do we
decide…?") and the message says it again at a time ("We decide at Thursday's launch sync"):
then it is the answer. `bonuses.scale_negated` reads these.
"""

from __future__ import annotations

import re
from functools import lru_cache

from vaultmind.index.lexical import terms
from vaultmind.retrieval.answer_type import names_time
from vaultmind.retrieval.asking import SENTENCE_END

# a word said not to be done: "let's not decide in chat", "we haven't decided", "never booked"
_NEGATED = re.compile(r"\b(?:not|never|no\s+longer)\s+(\w+)|n['’]t\s+(\w+)", re.I)


def negates(text: str) -> bool:
    """Whether `text` says something is not done: "why didn't we decide?"."""
    return _NEGATED.search(text) is not None


@lru_cache(maxsize=16_384)
def negated_terms(text: str) -> frozenset[str]:
    """The terms of the words `text` says are not done ("OK, let's not decide in chat":
    "decid"): a message that puts off or denies what a question asks about holds no answer."""
    if "not" not in text and "n't" not in text and "n’t" not in text and "never" not in text:
        return frozenset()
    return frozenset(t for found in _NEGATED.finditer(text) for t in terms(found.group(1) or found.group(2)))


# "when do we decide…?", "when will they sign…?", "when are we going to book…?": a question of
# what is still to come (not "when did we decide…?", what was done)
_AHEAD_QUESTION = re.compile(r"^\W*when\s+(?:do|does|will|shall|are|is|should|can|must|would)\b", re.I)


def asks_ahead(question: str) -> bool:
    """Whether `question` asks when something is still to be done: "when do we decide…?"."""
    return _AHEAD_QUESTION.search(question) is not None


def puts_off(text: str, query_terms: frozenset[str]) -> bool:
    """Whether `text` says a term of `query_terms` is not done now and says it again, not
    negated, in a sentence that names a time: "OK, let's not decide in chat. We decide at
    Thursday's launch sync." puts the decision off to Thursday, which answers "when do we
    decide…?" (not "when did we decide…?": it was not taken then)."""
    put_off = query_terms & negated_terms(text)
    return bool(put_off) and any(
        _NEGATED.search(sentence) is None and not put_off.isdisjoint(terms(sentence)) and names_time(sentence.lower())
        for sentence in SENTENCE_END.split(text)
    )
