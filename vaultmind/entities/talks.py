"""Who talks with whom: the `talks` table, beside the co-occurrence `edges`.

An edge counts the leaves that name both of two entities. In a chat a message names its author
and seldom anyone else, so the people of one conversation were barely connected, and the sender
and recipients of a mail not at all. A *talk* is a message by one person to another:

- a reply: a message and the authors of the `REPLY_REACH` messages just before it in its note
  (a conversation's day, a mail thread) written at most `REPLY_GAP` before it, but its own
  author (in a group chat an answer is often to the message before last);
- a mail: its sender and each person of its `To:` and `Cc:`.

`talks(note_path, a, b, weight)`: per note, unordered pairs `a < b` of entity ids with
`weight` = the number of its messages in which one of them talks to the other (a message that
both replies to someone and is mailed to them counts once, as one answering two of their
messages does). A message's author is the entity of its author occurrence (the occurrence whose
surface is the author as written, as `resolve.py` records it; kinds settled as everywhere); a
recipient is the entity its address or name resolves to (`resolve.resolve_author`, as an
author's would before kinds settle: a recipient no entity note claims keeps the person's id
even where that name's messages settled to an organization).

The rows of a note are a function of that note's `leaves` rows, their occurrences and the
registry alone, so they are computed per note: a whole re-derivation computes every note's
(`rederive.py`); a sync's update computes again those of the notes whose leaves or occurrences it
moved (`EntityDeriver.update_leaves`), and a registry change also those of the notes whose
recipients resolve differently (`recipient_notes`). Either way the rows equal a cold rebuild's.
Readers sum a pair's weight over the notes (`read.neighbours`).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timedelta

import duckdb
import pyarrow as pa

from vaultmind.entities.registry import Registry
from vaultmind.entities.resolve import resolve_author
from vaultmind.entities.tables import insert
from vaultmind.index.arrow import execute_with, key_table

REPLY_GAP = timedelta(hours=3)  # a message longer after the one before it answers no one in particular
REPLY_REACH = 3  # the messages before one that it may answer (a group chat's answer to the one before last)
TALK_SLICE_NOTES = 500  # notes whose talks one step of a whole re-derivation computes (2,000 held +34 MB at 10k)
_FETCH_ROWS = 2_048  # messages read into Python at a time (`_messages`)

TALK_SCHEMA = pa.schema(
    [("note_path", pa.string()), ("a", pa.string()), ("b", pa.string()), ("weight", pa.int32())]
)  # fmt: skip

# (note path, seq, author as written, time, recipients) of a message, with its author's entity
_Message = tuple[str, int, str, datetime | None, tuple[str, ...], str | None]


def refresh_talks(con: duckdb.DuckDBPyConnection, registry: Registry, paths: Iterable[str]) -> None:
    """The `talks` rows of the notes `paths` computed again from their rows as they now are."""
    notes = sorted(set(paths))
    if not notes:
        return
    execute_with(con, "DELETE FROM talks WHERE note_path IN (SELECT k FROM _rows)", rows=key_table(notes))
    insert_talks(con, registry, notes)


def insert_talks(con: duckdb.DuckDBPyConnection, registry: Registry, notes: Sequence[str]) -> None:
    """Insert the `talks` rows of `notes` (which have none)."""
    weights: Counter[tuple[str, str, str]] = Counter()
    before: deque[_Message] = deque(maxlen=REPLY_REACH)  # the messages just before, in the same note
    for message in _messages(con, notes):
        path, _, _, ts, recipients, author = message
        if before and before[-1][0] != path:
            before.clear()
        if author is not None:
            partners: set[str | None] = {p[5] for p in before if _within_gap(p[3], ts)}
            partners |= {resolve_author(registry, who, []) for who in recipients}
            for other in sorted(p for p in partners if p is not None and p != author):
                a, b = sorted((author, other))
                weights[(path, a, b)] += 1
        before.append(message)
    rows = sorted(weights.items())
    insert(
        con,
        "talks",
        TALK_SCHEMA,
        {
            "note_path": [k[0] for k, _ in rows],
            "a": [k[1] for k, _ in rows],
            "b": [k[2] for k, _ in rows],
            "weight": [w for _, w in rows],
        },
    )


def _within_gap(earlier: datetime | None, ts: datetime | None) -> bool:
    """Whether a message written at `ts` answers one written at `earlier`: at most `REPLY_GAP` after."""
    return earlier is not None and ts is not None and timedelta(0) <= ts - earlier <= REPLY_GAP


def _messages(con: duckdb.DuckDBPyConnection, notes: Sequence[str]) -> Iterator[_Message]:
    """The messages of `notes` in order of place, each with its author's entity (`_author_of`),
    read `_FETCH_ROWS` at a time: a whole re-derivation's slice of notes holds tens of thousands."""
    cursor = execute_with(
        con,
        """
        WITH o AS (
            SELECT leaf_id, note_path, list((entity_id, surface)) AS named
            FROM occurrences WHERE note_path IN (SELECT k FROM _rows) GROUP BY leaf_id, note_path
        )
        SELECT l.note_path, l.seq, l.author, l.ts,
               list_concat(coalesce(l.mail_to, []), coalesce(l.mail_cc, [])), o.named
        FROM leaves l LEFT JOIN o ON o.leaf_id = l.id AND o.note_path = l.note_path
        WHERE l.note_path IN (SELECT k FROM _rows) AND l.kind = 'message'
        ORDER BY l.note_path, l.seq
        """,
        rows=key_table(notes),
    )
    while rows := cursor.fetchmany(_FETCH_ROWS):
        for path, seq, author, ts, mailed, named in rows:
            yield (str(path), int(seq), author or "", ts, tuple(sorted(set(mailed or ()))), _author_of(author, named or ()))


def _author_of(author: str | None, named: Iterable[tuple[str, str]]) -> str | None:
    """The entity of a message's author: of its leaf's occurrences, the one whose surface is
    the author as written (`resolve.resolve_text` records it so; the smallest id, should two be)."""
    written = (author or "").strip()
    found = [str(ident) for ident, surface in named if written and surface == written]
    return min(found) if found else None


def recipient_notes(con: duckdb.DuckDBPyConnection, old: Registry, new: Registry) -> list[str]:
    """The notes holding a mail to someone (`To:`, `Cc:`) whom the registries `old` and `new`
    resolve differently: a registry change moves their talks without re-deriving their leaves."""
    recipients = [
        str(r[0])
        for r in con.execute(
            "SELECT DISTINCT who FROM (SELECT unnest(mail_to) AS who FROM leaves UNION ALL "
            "SELECT unnest(mail_cc) FROM leaves) WHERE who IS NOT NULL ORDER BY who"
        ).fetchall()
    ]
    moved = [who for who in recipients if resolve_author(old, who, []) != resolve_author(new, who, [])]
    if not moved:
        return []
    return [
        str(r[0])
        for r in execute_with(
            con,
            "SELECT DISTINCT note_path FROM leaves WHERE list_has_any(coalesce(mail_to, []) || coalesce(mail_cc, []), "
            "(SELECT list(k) FROM _rows)) ORDER BY note_path",
            rows=key_table(moved),
        ).fetchall()
    ]
