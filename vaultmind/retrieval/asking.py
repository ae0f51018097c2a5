"""Which sentences of a message ask: its questions, and its requests written as statements;
whether a message only asks, or ends asking.

A message asks its listener for something with a question ("What books do you enjoy?") or with
a first-person wish to be told or advised that ends in a period or an exclamation mark ("I'm
always open to some new book recommendations.", "I could use some tips!", "I'd love to hear
about it!"), the wish being the sentence's main clause: it opens the sentence or a clause of
it, and no clause after it tells something done ("I'd love to hear more about pottery, so I
booked a class" tells). Either holds the words of what it asks about and tells nothing of them:
`asking` reads both as asking. A wish to see something counts when it is of the
listener's ("I'd love to see the shots you got"), not a wish of one's own ("I'd love to see
Japan someday"); advice one means to get elsewhere ("I need to get some advice from my
coach") is no request. An imperative closing ("Tell me how you like it!") is not read as
a request: it follows what the message tells.

A message that only asks ("What pet do you have?") holds no answer at all, whatever the
question: `asking` tells such texts, and those that end with a question, from statements.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from vaultmind.index.lexical import terms
from vaultmind.retrieval.accounts import tells_done

Asking = Literal["only", "last"]

QUESTION_MARKS = ("?", "？", "؟")
SENTENCE_END = re.compile(r"(?<=[.!?;؟])\s+|(?<=[。！？])")  # CJK sentences end without a space
_NOTE_LINE = re.compile(r"^\s*\[[^\]\n]*\]\s*$", re.M)  # "[image: …]", "[attachment: …]"
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")

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


# where a clause opens: the text's start, a mark that ends a sentence or a clause, or a
# conjunction, with at most one word after it ("Oh wow, I'd love…", "Honestly I'd love…")
_OPENS_CLAUSE = re.compile(r"(?:^|[.!?;:,—–-]|\b(?:and|but|so)\b)\s*(?:[\w'’]+\s+)?$", re.I)
_NEXT_CLAUSE = re.compile(r"[,;:—–]|\b(?:so|and|but|because|since)\b", re.I)


def requests(sentence: str) -> bool:
    """Whether `sentence` (not a question) wishes to be told or advised by its listener: the
    wish is its main clause, opening the sentence or a clause of it, and no clause after it
    tells something done ("I'd love to hear more about pottery, so I booked a class" tells)."""
    return any(_is_request(sentence, wish) for wish in _WISH.finditer(sentence))


def _is_request(sentence: str, wish: re.Match[str]) -> bool:
    """Whether `wish`, a match of `_WISH` in `sentence`, opens its clause and is followed by no
    clause that tells something done (`accounts.tells_done`)."""
    if _OPENS_CLAUSE.search(sentence[: wish.start()]) is None:
        return False
    return not any(tells_done(clause) for clause in _NEXT_CLAUSE.split(sentence[wish.end() :])[1:])


def asks(sentence: str) -> bool:
    """Whether `sentence` asks: a question, or a request (`requests`)."""
    return sentence.endswith(QUESTION_MARKS) or requests(sentence)


def may_ask(text: str) -> bool:
    """Whether a sentence of `text` may ask: a quick test before splitting it into sentences."""
    return any(mark in text for mark in QUESTION_MARKS) or _WISH.search(text) is not None


def message_sentences(text: str) -> list[str]:
    """A message's sentences, less its lines that are only a bracketed note ("[image: …]")."""
    return [s for s in SENTENCE_END.split(_NOTE_LINE.sub(" ", text).strip()) if s]


@lru_cache(maxsize=16_384)
def asking(text: str) -> Asking | None:
    """"only" when every sentence of `text` (of four words or more) asks (a question or a
    request: `asks`), "last" when its last sentence does, None for a statement. Lines that are only a bracketed note (an
    attachment, an image's caption) are not sentences of the message."""
    if not may_ask(text):  # most messages: no sentence to split
        return None
    sentences = message_sentences(text)
    if not sentences or not asks(sentences[-1]):
        return None
    if all(asks(s) or not _says_something(s) for s in sentences):
        return "only"
    return "last"


def asks_about(text: str, query_terms: frozenset[str]) -> bool:
    """Whether the terms of `query_terms` that `text` holds are all in what it asks and none in
    what it states: "Love seeing your dedication! Any activities you're looking forward to?"
    asks about activities and tells none. A line that is only a bracketed note (an image's
    caption) counts as stated."""
    asked, stated = _asked_and_stated(text)
    return bool(asked & query_terms) and not stated & query_terms


@lru_cache(maxsize=16_384)
def _asked_and_stated(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The terms of what `text` asks (`asks`), and those of the rest (its statements)."""
    sentences = message_sentences(text)
    asked = terms(" ".join(s for s in sentences if asks(s)))
    stated = terms(" ".join([*(s for s in sentences if not asks(s)), *_NOTE_LINE.findall(text)]))
    return frozenset(asked), frozenset(stated)


def _says_something(sentence: str) -> bool:
    """Four words or more ("Long time." and "Hey Lucinda!" do not count); CJK text, written
    without spaces, from six characters."""
    return len(sentence.split()) >= 4 or (_CJK.search(sentence) is not None and len(sentence) >= 6)
