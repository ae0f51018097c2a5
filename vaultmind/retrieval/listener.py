"""Whom a message speaks of: its author, or the person it is written to.

A question about one author of the memory ("where has Maria made friends?") is answered by
what that author tells of their own life. In a conversation, an author also writes of the
other person's: "Glad you've got that same close tie back. Friends you can count on change
everything." holds the question's word, but in a sentence written to John, and tells
nothing of Maria's friends. Such a message (`tells_of_listener`) is scaled down in `walk`
(`bonuses.scale_to_listener`). A sentence is written to the listener when it says "your" or
"you" other than after a preposition ("glad to pass them on to you" tells of the author's
act) and other than in a condition ("worth a read if you like fantasy": anyone), and says
nothing in the first person ("I", "my", "we", "our"…: then it tells of the author too). A
message that says anything in the first person is left as it is: its author tells of their
own life somewhere in it ("Sorry about your job, Arne! I also lost mine").

The mirror: a question that asks for a speaker's words about another's thing ("what did Arne say
about Wilma's store?") is answered by what the speaker writes to or of Wilma ("You found the
perfect spot for your store"), not by a message that holds the question's words only in
sentences that speak in the first person and not to the listener (`tells_of_self`: "I keep my
store notes on a whiteboard", his own; `bonuses.scale_of_self`). A sentence that names Wilma, or
speaks of her as "she", "her"… when she is the one person asked about, is of her, not of self:
"I love Wilma's new store", "I told her the store looks amazing".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
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
# a third person the author speaks of: the one person a question asks about, when it asks of one
THIRD_PERSON = re.compile(
    r"\b(?:[Ss]he|[Hh]e|[Hh]ers?|[Hh]erself|[Hh]im|[Hh]imself|[Hh]is|[Tt]hey|[Tt]hem|[Tt]heirs?|[Tt]hemselves)\b"
)
# texts read per cache: the strongest leaves of a question (`bonuses.ASKING_TOP`) recur across a
# few questions of one conversation; more entries (a leaf's text, ~2.5 KB) only cost memory
_READ_TEXTS = 2_048


def _written_to_listener(sentence: str) -> bool:
    """Whether a sentence says "you" or "your" to its listener (not after a preposition, not in
    a condition)."""
    return _TO_LISTENER.search(sentence) is not None and _CONDITION.search(sentence) is None


@lru_cache(maxsize=_READ_TEXTS)
def _listener_sentences(text: str) -> tuple[tuple[frozenset[str], bool], ...] | None:
    """Each sentence of `text` as its terms and whether it is written to the listener; None
    when the message says anything in the first person."""
    sentences = message_sentences(text)
    if any(FIRST_PERSON.search(s) for s in sentences):
        return None
    return tuple((frozenset(terms(s)), _written_to_listener(s)) for s in sentences)


def tells_of_listener(text: str, query_terms: frozenset[str]) -> bool:
    """Whether `text` holds terms of `query_terms`, all of them in sentences written to its
    listener, and says nothing in the first person: it tells of the person it is written to."""
    read = _listener_sentences(text)
    if read is None:
        return False
    held = [to_listener for sentence_terms, to_listener in read if sentence_terms & query_terms]
    return bool(held) and all(held)


@lru_cache(maxsize=_READ_TEXTS)
def _self_sentences(text: str) -> tuple[tuple[frozenset[str], bool, bool], ...]:
    """Each sentence of `text` as its terms, whether it speaks in the first person and not to
    the listener, and whether it speaks of a third person."""
    return tuple(
        (frozenset(terms(s)), FIRST_PERSON.search(s) is not None and not _written_to_listener(s), THIRD_PERSON.search(s) is not None)
        for s in message_sentences(text)
    )


def tells_of_self(text: str, query_terms: frozenset[str], possessors: Sequence[frozenset[str]] = ()) -> bool:
    """Whether `text` holds terms of `query_terms`, all of them in sentences that speak in the
    first person, not to the listener, and not of the `possessors` (the terms of each name of
    the people whose thing is asked about): by a name, or by "she", "his", "their"… when they
    are one. It tells of its author ("I mark each milestone in green so I can
    follow my progress"), not of the person it is written to, nor of the one asked about ("I love Wilma's
    new store")."""
    names = frozenset().union(*possessors)
    one = len(possessors) == 1
    held = [
        of_self and not (sentence_terms & names) and not (one and of_third)
        for sentence_terms, of_self, of_third in _self_sentences(text)
        if sentence_terms & query_terms
    ]
    return bool(held) and all(held)
