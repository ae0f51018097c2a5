"""Yes/no questions about a change: "did the budget change because of the new launch date?".

Such a question asks whether something it names (its subject: "the budget") changed, stayed,
moved; it is answered by a sentence that says so of that subject ("nothing in the budget changes
because of it", "Budget stays at €4,000", "Launch moved to 23 April"), not by one that only
holds the question's other words (the new launch date, told everywhere). `answer_type` reads
the question's kind as "change" and asks `tells_change` of each strong leaf.

English only, by design small: the question's auxiliary, its subject and a verb of change; in
the text, a sentence holding a word of the subject and a word of change or of staying.
"""

from __future__ import annotations

import re
from functools import lru_cache

from vaultmind.index.lexical import terms

_CHANGE_VERBS = r"chang(?:e|es|ed|ing)|mov(?:e|es|ed|ing)|shift(?:s|ed)?|go (?:up|down)|went (?:up|down)|increase[sd]?|decrease[sd]?|grow|grew|shrink|shrank"
# "did the budget change…?", "has the launch date moved?", "will the paid ads budget go up…?": the subject between
_ASKS_CHANGE = re.compile(
    rf"^\W*(?:did|does|do|has|have|had|will|would|is|was|are|were)\s+(?P<subject>[^?]*?)\s*\b(?:{_CHANGE_VERBS})\b",
    re.IGNORECASE,
)
# a change, or none, said: "changes", "moved", "stays", "unchanged", "the same", "still"
_TELLS_CHANGE = re.compile(
    rf"\b(?:{_CHANGE_VERBS}|unchanged|stays?|stayed|remains?|remained|still|the same|no longer|postponed|delayed|cut)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_WORD = re.compile(r"\w+")


def change_subject(question: str) -> frozenset[str] | None:
    """The words (lower case, a plural's "s" taken off) of what a yes/no question asks the
    change of ("did the paid ads budget change…?": paid, ad, budget); None when it asks of no
    change, empty for a subject of stop words ("did it change?"). Words, not search terms: the
    stemmer reads "paid" as "payments" do."""
    found = _ASKS_CHANGE.match(question)
    return frozenset(_subject_words(found.group("subject"))) if found else None


@lru_cache(maxsize=16_384)
def tells_change(text: str, subject: frozenset[str]) -> bool:
    """Whether a sentence (or line) of `text` says that something changed or stayed, of a word
    of `subject` (any sentence, without one): "nothing in the budget changes because of it"."""
    return any(
        _TELLS_CHANGE.search(sentence) is not None
        and (not subject or not subject.isdisjoint(_subject_words(sentence)))
        for sentence in _SENTENCE.split(text)
    )


def _subject_words(text: str) -> set[str]:
    """The words of `text` that are no stop words, in lower case, a plural's "s" taken off."""
    return {word.removesuffix("s") for word in _WORD.findall(text.lower()) if terms(word)}
