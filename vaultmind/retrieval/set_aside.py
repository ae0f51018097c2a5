"""What a question sets aside: "what did Mei say apart from the garden?".

A question that names something after "apart from", "aside from", "except (for)", "other than",
"besides", "excluding" or "not counting" asks for anything but it. The thing runs from the marker
to the end of its phrase: a punctuation mark, or a word that starts a phrase of its own ("apart
from yoga at the studio": yoga). A word the question says outside the thing is still its own
("which messages mention the launch, except the launch evening?": the launch). "Except that…",
"other than when…" set aside no thing.

When the question asks for nothing else ("what did Mei say apart from the garden?": her words,
any of them; "what happened on 7 March besides the launch sync?"), the thing is what it leaves
out: its words and the marker's are not searched, its name is no entity or author the question
asks about, and the leaves that hold a word of it are scaled by `SET_ASIDE`
(`breakdown.set_aside`). When the question has other words to search ("what sports does Ravi
like besides tennis?", "which language does Ravi know besides German?"), it is read as if it
set nothing aside: the message that answers often names the thing beside the answer ("I know a
bit of German myself, and Spanish").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vaultmind.index.lexical import terms

SET_ASIDE = 0.5  # of a question searching nothing else, a leaf holding a word of the thing set aside: × this

# the words that set a thing aside, as a pattern (`tasks` reads them too: "apart from the
# garden" names no source its tasks come from)
SET_ASIDE_MARKER = r"(?:apart|aside)\s+from|except(?:\s+for)?|other\s+than|besides|excluding|not\s+counting"
_SET_ASIDE = re.compile(
    rf"\b(?P<marker>{SET_ASIDE_MARKER})\s+(?!(?:that|when|if|where|because|so)\b)(?P<thing>[^?!.,;:]*)", re.IGNORECASE
)
# a word that ends the thing set aside: a preposition or a clause's first word
_PHRASE_END = re.compile(
    r"\s\b(?:at|in|on|during|with|for|to|from|before|after|since|until|when|while|who|which|that|because|did|does|do|is|are|was|were)\b.*",
    re.IGNORECASE | re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class SetAside:
    """A thing a question sets aside: its words as written, and its search terms that the rest
    of the question does not say."""

    phrase: str  # the marker and the thing: "apart from the garden"
    thing: str  # "the garden"
    terms: frozenset[str]  # "garden"
    marker_terms: frozenset[str]  # the marker's own: "apart" (no word the question asks about)


def set_aside(question: str) -> SetAside | None:
    """The thing `question` sets aside (module doc), None when it sets none aside."""
    found = _SET_ASIDE.search(question)
    if found is None:
        return None
    thing = _PHRASE_END.sub("", found.group("thing")).strip()
    if not thing:
        return None
    end = found.start("thing") + len(thing)
    rest = question[: found.start()] + question[end:]
    return SetAside(
        question[found.start() : end], thing, frozenset(terms(thing)) - frozenset(terms(rest)), frozenset(terms(found.group("marker")))
    )
