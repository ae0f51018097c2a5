"""The reply to a message that asks the question itself.

In a conversation, "how many are coming?" asked by Mei is answered by the next message,
"Nine of us, with Auntie Lin and Uncle Joe." Asked of the memory, the same question matches
Mei's message best, which holds no answer (`answer_type.asking` scales it down), and the reply
earns only context: a message that says "coming" without a number ("Auntie Lin and Uncle Joe
are coming on Friday") outranked it. A message that asks what the question asks (a question of
the same kind of answer, holding all the question's words) and the reply after it by someone
else that holds that kind of answer (within `span` messages) are question and answer: the
reply takes the place the asking message would have had as a statement.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping

from vaultmind.index.lexical import terms
from vaultmind.retrieval.answer_type import AnswerKind, answer_kind

_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
_CLAUSE = re.compile(r"[:,;]\s*|\s[-–—]\s")  # "Party planning: how many are coming?"

Place = tuple[str, int, str | None]  # (note, seq, author) of a live leaf

# a reply that laughs ("somewhere in London lol", "he said 2024 haha", "why, are you buying? 😂")
# or declines ("Not me, mine is broken since May", "No idea, ask Priti", "who knows")
_NO_ANSWER = re.compile(
    r"\b(?:lol|lmao|rofl|haha\w*|hehe\w*|jk)\b|[\U0001F602\U0001F923\U0001F606\U0001F61C\U0001F61D]"
    r"|^\W*(?:no idea|not me|who knows|dunno|idk|no clue|not sure|don'?t know)\b",
    re.I,
)


def no_answer(text: str) -> bool:
    """Whether a reply jokes or declines, whatever kind of word it holds: "somewhere in London
    lol" names a place and "Not me, mine is broken since May" a name, and neither is where
    brunch is or who brings the speaker. The reply after it may be the answer."""
    return _NO_ANSWER.search(text) is not None


def asks_the_question(text: str, kind: AnswerKind, query_terms: Collection[str]) -> bool:
    """Whether a question of `text` (a sentence ending "?", or a clause of one) asks for the
    same kind of answer and holds every one of `query_terms`: "Party planning: how many are
    coming?" for "how many are coming?"."""
    wanted = set(query_terms)
    if not wanted:
        return False
    for sentence in _SENTENCES.split(text):
        sentence = sentence.strip()
        if not sentence.endswith("?") or not wanted <= set(terms(sentence)):
            continue
        starts = [0, *(m.end() for m in _CLAUSE.finditer(sentence))]
        if any(answer_kind(sentence[at:]) == kind for at in starts):
            return True
    return False


def answered_replies(
    final: dict[str, tuple[float, float]],
    asked: Mapping[str, float],
    answers: Collection[str],
    place: Callable[[str], Place | None],
    *,
    span: int,
    margin: float,
) -> dict[str, str]:
    """For each message of `asked` (its id → the factor its asking scaled it by) that asks the
    question, the first message after it within `span` in its note, by another author, that
    holds the answer (of `answers`, ids of `final`) rises to the asking message's score as a
    statement, plus `margin`. Returns each reply's id → the id of the message it answers."""
    if not asked or not answers:
        return {}
    by_place: dict[tuple[str, int], tuple[str, str | None]] = {}
    for leaf_id in answers:
        where = place(leaf_id)
        if where is not None:
            by_place[(where[0], where[1])] = (leaf_id, where[2])
    replied: dict[str, str] = {}
    for asker, factor in sorted(asked.items(), key=lambda item: -final[item[0]][0] / item[1]):
        where = place(asker)
        if where is None or where[2] is None:
            continue
        note, seq, author = where
        for step in range(1, span + 1):
            found = by_place.get((note, seq + step))
            if found is None or found[1] is None or found[1] == author:
                continue
            reply = found[0]
            value, time_factor = final[reply]
            lifted = final[asker][0] / factor + margin
            if lifted > value and reply not in replied:
                final[reply] = (lifted, time_factor)
                replied[reply] = asker
            break
    return replied
