"""Which occurrence of an event a message tells of, read for `walk`'s passes over its strongest
leaves (`bonuses.scale_other_occasion`). A message can share a question's words and still be
about another occasion than the one asked for:

- another of its kind, named by its ordinal: "When did Emil win his fourth video game
  tournament?" is not answered by "I won my first table tennis tournament last week", whose
  ordinal ("first") names another than the question's ("fourth") before a word the question's
  ordinal goes with ("video"). "Shown on the big screen for the first time" names no other
  script: "time" is no word the question's ordinal goes with. Ordinals written as words only:
  "8th" is more often a day of a month than the eighth of anything.
- one still to come: "When did Melissa go camping?" (asked in the past tense, of no plan) is not
  answered by "We're thinking about going camping in the forest", where every sentence that
  holds a word of the question says only what someone means to do, with an intention
  construction ("thinking about going", "planning to", "going to go" but not "going to the
  lake", "next week" but not "next to") and no account of something done ("we went", "last
  weekend"). "When did Jolene plan on going to Emil's?" asks about the plan, and
  the message that makes it answers it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from vaultmind.index.lexical import terms
from vaultmind.retrieval.accounts import TIME_WORD, tells_done
from vaultmind.retrieval.asking import message_sentences

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
ORDINAL_REACH = 3  # words after an ordinal that it may go with ("fourth table tennis tournament")

_ORDINAL = re.compile(rf"\b({'|'.join(ORDINALS)})\b((?:\W+\w+){{1,{ORDINAL_REACH}}})", re.I)
# saying what someone means to do, not what was done: an intention construction ("thinking about
# going", "planning to", "going to go", not "going to the lake"; "next week", not "next to")
_INTENDS = re.compile(
    r"\b(?:thinking\s+(?:about|of)\s+\w+ing|going\s+to\s+(?!(?:the|a|an|my|your|his|her|our|their|this|that"
    r"|school|work|church|bed|town|class|camp)\b)(?-i:[a-z])|gonna|plan(?:s|ning)?\s+(?:to|on)|hop(?:e|es|ing)\s+to"
    rf"|can['’]?t\s+wait\s+to|wants?\s+to|wanna|next\s+{TIME_WORD})\b",
    re.I,
)
# a question about an intention itself ("when did she plan on going…?", "what did he promise?")
_ASKS_INTENT = re.compile(r"\b(?:plan\w*|intend\w*|promis\w*|going\s+to|want\w*|hop(?:e|ed|es|ing))\b", re.I)

Ordinals = Mapping[str, frozenset[str]]  # an ordinal word → the terms of the words after it
_NO_ORDINALS: Ordinals = MappingProxyType({})


@lru_cache(maxsize=16_384)
def ordinals(text: str) -> Ordinals:
    """The ordinal words of `text` ("fourth"), each with the terms of the `ORDINAL_REACH` words
    after it ("video", "game", "tournament"); several of one ordinal pool their terms. Read-only:
    the cached mapping is shared by every caller."""
    lower = text.lower()
    if not any(o in lower for o in ORDINALS):  # most texts: no ordinal to look for
        return _NO_ORDINALS
    found: dict[str, frozenset[str]] = {}
    for match in _ORDINAL.finditer(text):
        word = match.group(1).lower()
        found[word] = found.get(word, frozenset()) | frozenset(terms(match.group(2)))
    return MappingProxyType(found)


def names_other_ordinal(text: str, asked: Ordinals) -> bool:
    """Whether `text` names another ordinal than the question's (`asked`, its `ordinals`) before
    a word the question's goes with, and never the question's own: "my first table tennis tournament" for "his fourth table tennis tournament"."""
    said = ordinals(text)
    if not said or not asked.keys().isdisjoint(said):
        return False
    return any(not after.isdisjoint(goes_with) for after in said.values() for goes_with in asked.values())


def asks_of_intent(question: str) -> bool:
    """Whether `question` asks about a plan or an intention ("when did she plan on going…?")."""
    return _ASKS_INTENT.search(question) is not None


@lru_cache(maxsize=16_384)
def _intending_sentences(text: str) -> tuple[tuple[frozenset[str], bool], ...]:
    """Each sentence of `text` (`asking.message_sentences`): its terms, and whether it says what
    someone means to do and tells nothing done."""
    return tuple((frozenset(terms(s)), _INTENDS.search(s) is not None and not tells_done(s)) for s in message_sentences(text))


def only_intends(text: str, query_terms: frozenset[str]) -> bool:
    """Whether every sentence of `text` that holds a term of `query_terms` says only what someone
    means to do ("We're thinking about going camping"), and one does."""
    if _INTENDS.search(text) is None:  # most messages
        return False
    holding = [intends for held, intends in _intending_sentences(text) if not query_terms.isdisjoint(held)]
    return bool(holding) and all(holding)
