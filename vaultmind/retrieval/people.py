"""The terms of people's names as authors and questions write them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from vaultmind.entities.extract import parse_author
from vaultmind.entities.ids import PERSON_TITLES, words
from vaultmind.index.lexical import terms


@lru_cache(maxsize=4096)
def name_terms(name: str) -> frozenset[str]:
    """The terms of a name, and its words that are stop words ("May", "Will"), which have none."""
    return frozenset(terms(name)).union(word for word in words(name) if not terms(word))


@lru_cache(maxsize=4096)
def person_terms(author: str) -> frozenset[str]:
    """The terms of a person's name as an author or a question writes it: of "Priya Natarajan
    <priya@northwind.example>" only the name's, of a bare address its local part — never the
    domain, which every sender at it shares (and which names the company, a word to search)."""
    person = parse_author(author)
    if person is None:
        return name_terms(author)
    if person.name:  # without a title: "Dr. Elena Rossi" is Elena Rossi
        parts = person.name.split()
        while len(parts) > 1 and "".join(words(parts[0])) in PERSON_TITLES:
            parts = parts[1:]
        return name_terms(" ".join(parts))
    return name_terms(person.handle or person.email.split("@", 1)[0] or author)


def possessed(question: str, qents: Sequence[tuple[str, str]]) -> bool:
    """Whether the question writes one of its entities in the possessive ("what is in Okafor's
    team?"): it asks about something of theirs, which a leaf that does not involve them is not."""
    return any(re.search(rf"\b{re.escape(surface)}['’]s\b", question) for _, surface in qents if surface)
