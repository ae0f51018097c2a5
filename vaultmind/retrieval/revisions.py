"""Whether a message changes what was said before: "we move the launch to 23 April", "the
meeting is postponed", "Update: the venue is now Harbor Hall".

Facts in a memory change, and the message that changes one holds the current answer to a
question asked in the present ("when is the launch?"), while the statement it replaces
("target is still 9 April") matches the question as well. `walk` ranks such a message above
the one it changes among its strongest candidates that share the question's words.

A change is told by a few patterns, in a sentence that states it: not one that asks or
proposes ("Could we move the BBQ to Sunday?", "Is the meeting postponed?", "If we move it…",
"Let's move it to Friday"), nor an instruction ("Switch to dark mode", "Don't forget to cancel
Netflix"), nor one that denies it ("no delay", "not postponed"), nor "instead of" (a
preference, not a change). English only, no model.

In `walk`:

   revision: a question about a time or place as it stands now (no window, not asking what
   was) — of the strongest leaves that share its words and hold such an answer, one that says
   something changed in a sentence naming a word of the question ("party postponed again: 26
   April": `revisions.changes`; not one that asks, proposes or denies it), at least
   `REVISION_COVER` by idf of the question's words ("our app launch moved" changes no "code
   freeze for the app"; a word of time it names is the new time, "book club moved to Friday"
   no change of the Friday market, unless it says it beside another of the question's words,
   as the question does: "move the launch evening" changes the launch evening), ranks just
   above the earlier ones it shares that word with ("the party is on 5 April"), the latest of several
   changes first, its note before theirs, when it scores at least `REVISION_FLOOR` of the
   strongest of them (`revisions`; `breakdown.revises` names it). The same among what was said
   of a window still ahead ("what's coming up in April?": Porto, which replaced Lisbon).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from vaultmind.index.lexical import terms
from vaultmind.retrieval.ordering import adjacent_pairs, leaf_terms
from vaultmind.retrieval.timeparse import MONTHS, WEEKDAYS

_CHANGE = re.compile(  # matched against lower-cased text
    r"\b(?:"
    r"(?:mov|chang|switch|shift)(?:e|es|ed|ing)?\b[^.!?\n]{0,40}?\b(?:to|from)\b"
    r"|postpon\w*|reschedul\w*|push(?:ed|ing)?\s+(?:\w+\s+){0,2}?back\b|brought\s+forward|bring\w*\s+(?:\w+\s+)?forward"
    r"|delay(?:ed|ing)?\b|cancel+(?:ed|ing|s)?\b|call(?:ed|ing)?\s+off\b|no\s+longer\b|instead\b(?!\s+of\b)"
    r"|correction\b|update\s*:|revised\b|new\s+(?:date|time|deadline|venue|plan)\b"
    r"|(?:is|are)\s+now\b|now\s+(?:on|at|in)\b|back\s+on\b|on\s+again\b|i\s+meant\b|change\s+of\s+plans?\b|(?:is|are)\s+off\b"
    r"|(?:pushed|slipped|bumped)\s+(?:back\s+)?to\b"
    r")"
)
# a sentence ends at . ! ? before a space or the end (not inside "4.2", "7.30"), but not after a
# title or "Inc." ("Dr. Lee", "Acme Inc. moved…"), or at a line's end
_SENTENCE_END = re.compile(r"(?<!\bdr)(?<!\bmr)(?<!\bmrs)(?<!\bms)(?<!\bst)(?<!\binc)(?<!\bltd)(?<!\bvs)(?<!\bco)[.!?]+(?=\s|$)|\n")
_NOTICE = re.compile(r"^\W*(?:please\s+note|note|fyi|heads\s+up|reminder|don['’]t\s+forget|just\s+so\s+you\s+know)\b\W*")
_ASKS_OR_PROPOSES = re.compile(  # a question, a proposal, a condition, or an instruction
    r"^\W*(?:could|can|should|shall|would|will|if|maybe|perhaps|what\s+if|how\s+about|why\s+don['’]t|do\s+you|is|are"
    r"|let['’]?s|please|don['’]t|do\s+not|remember\s+to|remind\s+me"
    r"|(?:switch|change|move|cancel|use)\s+(?:to|the|your|it|this|that|my|our)\b)\b"
)
_DENIED = re.compile(r"\b(?:no|not|without|never|don['’]t|doesn['’]t|won['’]t|isn['’]t|wasn['’]t)\s+(?:\w+\s+)?$")


@lru_cache(maxsize=8192)
def changes(text: str) -> tuple[str, ...]:
    """The sentences of `text` (lower case) that say something changed: a date moved, a plan
    cancelled, a fact corrected — stated, not asked, proposed or denied."""
    out = []
    for sentence in _sentences(text.lower()):
        sentence = _NOTICE.sub("", sentence)  # "Don't forget: the party moved to Friday" tells it
        if sentence.rstrip().endswith("?") or _ASKS_OR_PROPOSES.match(sentence):
            continue
        if any(not _DENIED.search(sentence, 0, m.start()) for m in _CHANGE.finditer(sentence)):
            out.append(sentence.strip())
    return tuple(out)


def _sentences(lower: str) -> list[str]:
    out, start = [], 0
    for m in _SENTENCE_END.finditer(lower):
        out.append(lower[start : m.end()])
        start = m.end()
    out.append(lower[start:])
    return [sentence for sentence in out if sentence.strip()]


def revises(text: str) -> bool:
    """Whether `text` says that something changed (`changes`)."""
    return bool(changes(text))


REVISION_MARGIN = 0.01  # how far above the leaf it changes a later one that says what changed ranks
REVISION_FLOOR = 0.2  # … when it scores at least this share of it
REVISION_COVER = 0.4  # … and names at least this share (by idf) of the question


_TIME_TERMS = frozenset(
    terms(" ".join([*MONTHS, *WEEKDAYS, "day week weekend month year today tomorrow tonight morning afternoon evening"]))
)


# words that say which of a thing's times is asked ("the next release"), not what the thing is
_WHICH_ONE = frozenset(terms("next new upcoming current latest first last final"))


def revisions(
    final: dict[str, tuple[float, float]], rows: dict[str, Any], content_terms: Sequence[str], weight: Callable[[str], float]
) -> dict[str, str]:
    """Of `rows` (strong leaves that share the question's words and hold the kind of answer it
    asks for), one that says something changed ("we move the launch to 23 April") and was
    written after others that share one of the question's words with it ("target is still 9
    April") ranks just above them all (`REVISION_MARGIN`), when it scores at least
    `REVISION_FLOOR` of the strongest of them before this pass: of those, it says how things
    stand. What the change names must be at least `REVISION_COVER` of the question, by `weight`
    (idf): "our app launch moved" changes no "code freeze for the app", nor "launch moved" the
    "launch sync". Changes are taken in the order they were
    written, so the latest of several ("moved again to 7 April") comes first. Returns each such
    leaf → the leaf it changes (the strongest before this pass)."""
    asked = frozenset(content_terms)
    pairs = adjacent_pairs(content_terms)
    said = {leaf_id: leaf_terms(row["content_hash"], row["text"] or "")[0] & asked for leaf_id, row in rows.items()}
    before = {leaf_id: final[leaf_id][0] for leaf_id in rows}
    changed: dict[str, str] = {}
    timed = sorted((row["ts"], leaf_id) for leaf_id, row in rows.items() if row["ts"] is not None and said[leaf_id])
    for ts, leaf_id in timed:
        # what changed is named where the change is said ("party postponed again: 26 April"),
        # not elsewhere in the message ("the team lunch moved; also, the launch slides…")
        said_terms = [terms(sentence) for sentence in changes(rows[leaf_id]["text"] or "")]
        about = asked.intersection(t for seq in said_terms for t in seq)
        if asked - _TIME_TERMS:  # "book club moved to Friday" is no change of the Friday market
            # (but of "what's coming up in April?", April is what changed, and of "when is the
            # launch evening?", "move the launch evening" names the evening with the launch)
            about -= _TIME_TERMS - {t for pair in pairs & {p for seq in said_terms for p in itertools.pairwise(seq)} for t in pair}
        if sum(map(weight, about)) < REVISION_COVER * sum(map(weight, asked - _WHICH_ONE)):
            continue  # "our app launch moved" names too little of "when is the launch sync?"
        earlier = [other for when, other in timed if when < ts and said[other] & about]
        if not earlier:
            continue
        strongest = max(earlier, key=lambda other: (before[other], other))
        value, factor = final[leaf_id]
        if value < before[strongest] * REVISION_FLOOR:
            continue
        top = max(final[other][0] for other in earlier)  # earlier changes included, as they now stand
        final[leaf_id] = (max(value, top + REVISION_MARGIN), factor)
        changed[leaf_id] = strongest
    return changed


def revised_notes(
    note_rank: dict[str, float],
    places: dict[str, tuple[str, int, str | None]],
    revised: dict[str, str],
    final: dict[str, tuple[float, float]],
) -> None:
    """A note holding a change ranks above the note of the leaf it changes (in `note_rank`, in
    place), a later change's above an earlier's (`revised` is in the order they were written):
    a change posted on a later day is another day's note, which often covers fewer of the
    question's words."""
    best: dict[str, float] = {}
    for leaf_id, place in places.items():
        if leaf_id in final:
            best[place[0]] = max(best.get(place[0], -math.inf), final[leaf_id][0])
    for order, (leaf_id, old) in enumerate(revised.items(), start=1):
        if leaf_id in places and old in places:
            note, old_note = places[leaf_id][0], places[old][0]
            # only over a note the changed leaf leads: not over another day's note that holds it
            # beside a stronger leaf about something else
            leads = final[old][0] >= best.get(old_note, math.inf)
            if note != old_note and note in note_rank and old_note in note_rank and leads:
                note_rank[note] = max(note_rank[note], note_rank[old_note] + REVISION_MARGIN * order)
