"""The message that introduces a question's word to its conversation (`introduces`).

News is told the first time a conversation speaks of a thing ("I just adopted a puppy, his name
is Rex!"); later messages take it as known ("Rex chewed my shoes again", "puppies are the
best"), and they often hold the question's words as well or better. A message that holds a
searched word, in the part of its conversation that says the word first, gets
`INTRODUCES` × the idf-weighted share of the question's searched words it introduces so, × its
time factor. The part is the conversation's first to say the word (by its earliest dated
message holding it): a chat's day (its note), an email of a thread (a thread is one note: the
email alone, not the replies after it); a word the conversation says fewer
than `INTRODUCED_LEAST` times is introduced by default and counts for none. Only for a leaf
with a lexical match (`index/leaf_conversations.py` finds the notes), and taken back from
another's account of their own life (`other_author`): Maria's "I did a 5K charity run", said
first, is her news, not John's, for "when did John run a 5K?".

Only for a question about what happened, or when (`asks_of_news`): not for one that asks what
stands now or was said last — the latest time ("when did I last email Dana?"), a window still
ahead, a change ("did the budget change…?": "the budget stays at…", said after the plan), a
time or place as it stands ("when is the launch?", which revisions move) — nor for one asking
for a thing of a kind other than a time (a place, a title, a person, a number, a reason:
`answer_type`): the message naming it answers, wherever it stands, and a conversation often
speaks of a thing before it names it ("I love that song too!" before "I love Brave by Sara
Bareilles").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from vaultmind.retrieval.reading import Reading
    from vaultmind.retrieval.view import MemoryView

INTRODUCES = 0.1
INTRODUCED_LEAST = 2


def introduces(memory: MemoryView, terms: Sequence[str], ids: Sequence[str], matched: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """Per leaf of `ids`, `INTRODUCES` × the idf-weighted share of `terms` it introduces to its
    conversation (module doc); 0 where `matched` (a lexical match) is False."""
    if not terms or not matched.any():
        return np.zeros(len(ids))
    return INTRODUCES * memory.leaves.introductions(terms, ids, INTRODUCED_LEAST) * matched


def asks_of_news(asked: Reading) -> bool:
    """Whether the first telling of the question's words may answer it: a question about what
    happened, or when, and not about what stands now or was said last (module doc)."""
    if asked.kind not in (None, "time"):
        return False
    current = asked.kind == "time" and asked.window is None and asked.tense != "past"
    return not (asked.latest or asked.ahead or current)
