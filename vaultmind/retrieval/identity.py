"""A question about who or what an entity is, or what someone does: which query entity it
asks about, and what `walk` adds to the leaves that say it:

   identity: a question about nothing but who or what an entity is ("who is Bob?", "what is
   Harbor Hall?", "tell me about Dana") or what someone does ("what does Bob work on?", "what
   is Marco's job?": the words "work", "job" are not searched, `wording.role_terms`) adds `IDENTITY_WEIGHT` to the leaves of that entity's
   own note (when they hold more than its heading), and half that to the leaves of other
   entities' notes that mention it ("Harbor Hall … Contact: Dana Whitfield, events manager"):
   what the memory says it is comes first. When its own note says nothing (a heading alone:
   "# Dana Whitfield"), those of them that say who it is add all of `IDENTITY_WEIGHT`
   ("Contact: Dana Whitfield, events manager"; not "Manages Omar.", `_describing`). When it
   has no note of its own, the messages and document sections that say who it is add half of
   `IDENTITY_WEIGHT` ("Helen Okafor from our finance team", "Finance (invoices, deposit): Helen
   Okafor", a label in the share of the leaf its line is; not "Thanks Helen, will do":
   `people.introduction`, `introducing`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from vaultmind.retrieval.people import describes, introduction, name_terms
from vaultmind.retrieval.signals import of_kind
from vaultmind.retrieval.wording import ROLE

if TYPE_CHECKING:
    from vaultmind.index.leaf_columns import LeafColumns
    from vaultmind.retrieval.view import MemoryView


IDENTITY_WEIGHT = 0.5  # "who is Bob?": + this to the leaves of his own entity note


_WHO = re.compile(
    r"^\s*(?:(?:who|what)(?:\s+(?:is|was|are|were)|['’]s)|tell\s+me\s+(?:more\s+)?about|describe"
    r"|what\s+do\s+(?:we|you|i)\s+know\s+(?:about|of))"
    r"\s+(?:the\s+)?(?P<name>[^?!.]+?)[\s?!.]*$",
    re.IGNORECASE,
)


def asked_entity(question: str, qents: Sequence[tuple[str, str]]) -> str | None:
    """The query entity a question asks nothing but who or what it is ("who is Bob?", "what is
    Harbor Hall?", "tell me about Dana") or what they do ("what does Bob work on?": their note
    says "Backend engineer", and "working days" is no answer), else None."""
    for pattern in (_WHO, ROLE):
        m = pattern.match(question)
        name = next((group for group in m.groups() if group), None) if m is not None else None
        asked = name_terms(name) if name else None
        found = next((e for e, surface in qents if asked and name_terms(surface) == asked), None)
        if found is not None:
            return found
    return None


def identity_bonus(
    memory: MemoryView,
    asked: str | None,
    entity_leaves: dict[str, frozenset[str]],
    own_notes: dict[str, list[str]],
    at: dict[str, int],
    cols: LeafColumns,
) -> npt.NDArray[np.float64]:
    """Per leaf, what it says of the entity a question asks who or what it is (`asked`: "who is
    Bob?"): `IDENTITY_WEIGHT` for its own note's leaves, half that for other entity notes'
    leaves that mention it ("Harbor Hall … Contact: Dana Whitfield, events manager") — all of
    it, when its own note says nothing (a heading alone, or no note), for those that say who
    it is (`_describing`): then they are what the memory says of it, above a mail she signed."""
    out = np.zeros(len(cols.known))
    if asked is None:
        return out
    entity = of_kind(cols, "entity")
    noted = [leaf_id for leaf_id, ents in entity_leaves.items() if asked in ents and leaf_id in at and entity[at[leaf_id]]]
    out[[at[leaf_id] for leaf_id in noted]] = IDENTITY_WEIGHT / 2
    if not own_notes.get(asked):
        out[[at[leaf_id] for leaf_id in _describing(memory, asked, noted)]] = IDENTITY_WEIGHT
    out[[at[leaf_id] for leaf_id in own_notes.get(asked, ()) if leaf_id in at]] = IDENTITY_WEIGHT
    return out


def introducing(
    memory: MemoryView,
    asked: str,
    qents: Sequence[tuple[str, str]],
    entity_leaves: dict[str, frozenset[str]],
    at: dict[str, int],
    cols: LeafColumns,
) -> npt.NDArray[np.float64]:
    """Per leaf, `IDENTITY_WEIGHT` / 2 for the messages and document sections that say who the
    entity a question asks about is ("Helen Okafor from our finance team"), when it has no note
    of its own: they are what the memory says of her, above the mails she signed or was sent.
    A label alone ("- Finance: Helen Okafor") adds that in the share of the leaf its line is
    (`people.introduction`): a contacts line at the end of a long section is little of what it
    says, below the sentence that says who she is. The entities the question's name
    reads as (Helen, Helen Okafor) count alike, and so does that name: "This is Sam from legal"
    introduces Sam Patel, asked "what is Sam's role?"."""
    out = np.zeros(len(cols.known))
    surface = next((name_terms(s) for e, s in qents if e == asked), None)
    same = {e for e, s in qents if name_terms(s) == surface}
    entity = of_kind(cols, "entity")
    mentioning = [leaf_id for leaf_id, ents in entity_leaves.items() if ents & same and leaf_id in at and not entity[at[leaf_id]]]
    if not mentioning:
        return out
    # and the name the question uses: "Sam" of Sam Patel, whose note holds only his full name
    names = [s for e, s in qents if e in same] + [name for e in sorted(same) for name in _names(memory, e)]
    rows = memory.leaves.rows(mentioning)
    for leaf_id in mentioning:
        if (row := rows.get(leaf_id)) is not None:
            out[at[leaf_id]] = IDENTITY_WEIGHT / 2 * introduction(row["text"] or "", names)
    return out


def _names(memory: MemoryView, entity_id: str) -> list[str]:
    """The names of an entity: its registry entry's name and aliases, else its id's slug."""
    from vaultmind.entities.query import entity_query

    entry = entity_query(memory.index).registry.entries.get(entity_id)
    return [entry.display_name, *entry.aliases] if entry is not None else [entity_id.split(":", 1)[-1].replace("-", " ")]


def _describing(memory: MemoryView, asked: str, leaf_ids: Sequence[str]) -> list[str]:
    """Of the leaves of other entities' notes that mention `asked`, those that say who or what
    it is (`describes`). When its own note is a heading alone, these are what the memory says
    of it, above a mail it signed; a note that names it in passing is not, above the note of
    yours that says who it is."""
    if not leaf_ids:
        return []
    names = _names(memory, asked)
    rows = memory.leaves.rows(list(leaf_ids))
    return [leaf_id for leaf_id in leaf_ids if (row := rows.get(leaf_id)) is not None and describes(row["text"] or "", names)]
