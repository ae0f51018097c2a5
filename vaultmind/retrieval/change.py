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
from vaultmind.retrieval.asking import SENTENCE_END

_CHANGE_VERBS = r"chang(?:e|es|ed|ing)|mov(?:e|es|ed|ing)|shift(?:s|ed)?|go (?:up|down)|went (?:up|down)|increase[sd]?|decrease[sd]?|grow|grew|shrink|shrank"
# "did the budget change…?", "has the launch date moved?", "will the paid ads budget go up…?": the
# question's main verb a change, right after its auxiliary and subject
_ASKS_CHANGE = re.compile(
    rf"^\W*(?:did|does|do|has|have|had|will|would|is|was|are|were)\s+(?P<subject>[^?]*?)\s*\b(?P<verb>{_CHANGE_VERBS})\b(?P<rest>[^?]*)",
    re.IGNORECASE,
)
# a word no subject holds, that starts a clause or a phrase of its own: "did Lucinda go to the
# gym after she moved…?" asks of the gym, its change verb is another clause's
_CLAUSE = frozenset("after before when while because since if until to with at in on for into from by than and or but who which".split())
# what a change verb is done to, when it has an object: "has Dana increased the budget?" (the
# budget changes, not Dana); "did Melissa go up the mountain?" goes somewhere, changes nothing
_OBJECT = re.compile(r"^\s*(?:the|a|an|my|our|your|his|her|their|its|this|these|those)\b[^?,;.!]*", re.IGNORECASE)
_MOVES_ONLY = re.compile(r"^(?:go|went)\b", re.IGNORECASE)  # "go up", "went down": no object of change
# a change, or none, said: "changes", "moved", "stays", "unchanged", "the same", "still"
_TELLS_CHANGE = re.compile(
    rf"\b(?:{_CHANGE_VERBS}|unchanged|stays?|stayed|remains?|remained|still|the same|no longer|postponed|delayed|cut)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+")


def change_subject(question: str) -> frozenset[str] | None:
    """The words (lower case, a plural's "s" taken off) of what a yes/no question asks the
    change of ("did the paid ads budget change…?": paid, ad, budget; "has Dana increased the
    budget?": budget); None when its main verb is no change, empty for a subject of stop words
    ("did it change?"). Words, not search terms: the stemmer reads "paid" as "payments" do."""
    found = _ASKS_CHANGE.match(question)
    if found is None or not _CLAUSE.isdisjoint(_WORD.findall(found.group("subject").lower())):
        return None
    done_to = _OBJECT.match(found.group("rest"))
    if done_to is None:
        return frozenset(_subject_words(found.group("subject")))
    if _MOVES_ONLY.match(found.group("verb")):
        return None
    words = _WORD.findall(done_to.group(0).lower())
    clause = next((k for k, word in enumerate(words) if word in _CLAUSE), len(words))  # "the launch to 23 April": the launch
    return frozenset(_subject_words(" ".join(words[:clause])))


@lru_cache(maxsize=16_384)
def tells_change(text: str, subject: frozenset[str]) -> bool:
    """Whether a sentence (or line) of `text` says that something changed or stayed, of a word
    of `subject` (any sentence, without one): "nothing in the budget changes because of it"."""
    return any(
        _TELLS_CHANGE.search(sentence) is not None
        and (not subject or not subject.isdisjoint(_subject_words(sentence)))
        for line in text.splitlines()
        for sentence in SENTENCE_END.split(line)
    )


def _subject_words(text: str) -> set[str]:
    """The words of `text` that are no stop words, in lower case, a plural's "s" taken off."""
    return {word.removesuffix("s") for word in _WORD.findall(text.lower()) if terms(word)}
