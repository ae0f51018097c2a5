"""Whom a message speaks of: its author, or the person it is written to.

A question about one author of the memory ("where has Maria made friends?") is answered by
what that author tells of their own life. In a conversation, an author also writes of the
other person's: "Glad you've found that same strong bond. Having friends you can rely on makes
a huge difference." holds the question's word, but in a sentence written to John, and tells
nothing of Maria's friends. Such a message (`tells_of_listener`) is scaled down in `walk`
(`bonuses.scale_to_listener`). A sentence is written to the listener when it says "your" or
"you" other than after a preposition ("happy to share them with you" tells of the author's
act) and other than in a condition ("worth a read if you like fantasy": anyone), and says
nothing in the first person ("I", "my", "we", "our"…: then it tells of the author too). A
message that says anything in the first person is left as it is: its author tells of their
own life somewhere in it ("Sorry about your job, Jon! I also lost mine").
"""

from __future__ import annotations

import re
from functools import lru_cache

from vaultmind.index.lexical import terms
from vaultmind.retrieval.asking import message_sentences

# the author speaking of themselves, alone or with others ("I" also of "I'm", "I’ve")
FIRST_PERSON = re.compile(r"\b(?:I|[Mm]y|[Mm]e|[Mm]ine|[Mm]yself|[Ww]e|[Oo]ur|[Oo]urs|[Uu]s|[Oo]urselves)\b")
_PREPOSITIONS = ("with", "to", "for", "at", "of", "from", "about")
_TO_LISTENER = re.compile(
    r"\b[Yy]our(?:s|self)?\b|" + "".join(rf"(?<!\b{p} )" for p in _PREPOSITIONS) + r"\b[Yy]ou\b"
)
_CONDITION = re.compile(r"\b[Ii]f you\b")  # "if you like fantasy": anyone who does


@lru_cache(maxsize=16_384)
def _persons(text: str) -> tuple[tuple[frozenset[str], bool, bool], ...]:
    """Each sentence of `text` as its terms, whether it speaks in the first person and whether
    it is written to the listener."""
    return tuple(
        (frozenset(terms(s)), FIRST_PERSON.search(s) is not None, _TO_LISTENER.search(s) is not None and _CONDITION.search(s) is None)
        for s in message_sentences(text)
    )


def tells_of_listener(text: str, query_terms: frozenset[str]) -> bool:
    """Whether `text` holds terms of `query_terms`, all of them in sentences written to its
    listener, and says nothing in the first person: it tells of the person it is written to."""
    read = _persons(text)
    if any(first for _, first, _ in read):
        return False
    held = [to_listener for sentence_terms, _, to_listener in read if sentence_terms & query_terms]
    return bool(held) and all(held)


def tells_of_self(text: str, query_terms: frozenset[str]) -> bool:
    """Whether `text` holds terms of `query_terms`, all of them in sentences that speak in the
    first person and not to the listener: it tells of its author ("I color-code achievements so
    I can easily track my progress"), not of the person it is written to."""
    held = [first and not to_listener for sentence_terms, first, to_listener in _persons(text) if sentence_terms & query_terms]
    return bool(held) and all(held)
