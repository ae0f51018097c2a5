"""What a derivation of leaves reads beside their rows: a `leaves` row as the deriver sees it
(`LeafRow`), the rows and texts of a batch handed over by the sync (`table_leaf_rows`,
`TableTexts`), and what the model's guesses need of a leaf's note (`note_authors`, `note_titles`, `note_words`).
The rows and texts looked up by leaf id in the index are `graph._leaf_rows` and `graph._leaf_texts`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime

import duckdb
import pyarrow as pa

from vaultmind.entities.common_words import NoteWords
from vaultmind.index.arrow import execute_with, key_table

LeafRow = tuple[str, str, str, str | None, datetime | None]
"""(id, note_path, content_hash, author, ts) as read from `leaves`: the text is read only for
the leaves whose mentions are not prepared (`EntityDeriver._derive`)."""


def note_authors(con: duckdb.DuckDBPyConnection, paths: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The people of each note in `paths`: the authors of its messages and the recipients of its
    mails (a conversation's people, who settle the model's one-word guesses in its messages and
    are found by their first name: `resolve_text`'s `companions`), sorted, read from the `leaves`
    rows as they are now: a leaf derives the same whichever of its note's leaves are derived with
    it, and as a note's parse prepares it (`prep.conversation_people`)."""
    if not paths:
        return {}
    rows = execute_with(
        con,
        "SELECT note_path, list(DISTINCT who ORDER BY who) FROM ("
        " SELECT note_path, author AS who FROM leaves WHERE note_path IN (SELECT k FROM _rows)"
        " UNION ALL SELECT note_path, unnest(mail_to) FROM leaves WHERE note_path IN (SELECT k FROM _rows)"
        " UNION ALL SELECT note_path, unnest(mail_cc) FROM leaves WHERE note_path IN (SELECT k FROM _rows)"
        ") WHERE who IS NOT NULL GROUP BY note_path",
        rows=key_table(paths),
    ).fetchall()
    return {str(r[0]): tuple(r[1]) for r in rows}


def note_titles(con: duckdb.DuckDBPyConnection, paths: Sequence[str]) -> dict[str, str]:
    """The title of each note in `paths`, whose heading names no person or organization in its
    leaves (`capitals.in_note_title`). A note whose title changes is written again, so all its
    leaves are derived again. Only leaves with NER spans need it, as `note_authors`."""
    if not paths:
        return {}
    rows = execute_with(
        con, "SELECT path, title FROM notes WHERE path IN (SELECT k FROM _rows)", rows=key_table(paths)
    ).fetchall()
    return {str(r[0]): str(r[1]) for r in rows}


def note_words(con: duckdb.DuckDBPyConnection, paths: Sequence[str]) -> dict[str, NoteWords]:
    """What the texts of each note in `paths` say of their words (`common_words.NoteWords`: a
    one-word guess of the model that its note writes in lower case and never capitalises inside a
    sentence is a common word), read from the `leaves` rows as they are now: a leaf derives the
    same whichever of its note's leaves are derived with it, and a note whose text changes is
    written again, so all its leaves are derived again. Only leaves with NER spans need it, as
    `note_authors`."""
    if not paths:
        return {}
    texts: dict[str, list[str]] = {}
    for path, text in execute_with(
        con, "SELECT note_path, text FROM leaves WHERE note_path IN (SELECT k FROM _rows)", rows=key_table(paths)
    ).fetchall():
        texts.setdefault(str(path), []).append(str(text))
    return {path: NoteWords.of(found) for path, found in texts.items()}


def table_leaf_rows(leaves: pa.Table, leaf_ids: Sequence[str]) -> list[LeafRow]:
    """The rows of `leaf_ids` in a `leaves` table, as `graph._leaf_rows` reads them from the index."""
    wanted = set(leaf_ids)
    columns = [leaves.column(name).to_pylist() for name in ("id", "note_path", "content_hash", "author", "ts")]
    return sorted((row for row in zip(*columns, strict=True) if row[0] in wanted), key=lambda row: (row[0], row[1]))


class TableTexts(Mapping[str, str]):
    """The texts of a `leaves` table by content hash, each taken from the table when asked for."""

    def __init__(self, leaves: pa.Table):
        self._leaves = leaves
        self._at = {chash: i for i, chash in enumerate(leaves.column("content_hash").to_pylist())}

    def __getitem__(self, chash: str) -> str:
        return str(self._leaves.column("text")[self._at[chash]].as_py())

    def __contains__(self, chash: object) -> bool:  # (not by taking the text, as Mapping's would)
        return chash in self._at

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)
