"""`ingest_document`'s checks around its write: a document whose note this vault would never
index is refused before it is written (as `ingest document` leaves out such a file), and a
note written but not indexed (an ignored folder, a file that appeared meanwhile) is answered
with its reason, never as a source that does not exist."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from vaultmind.errors import UsageError, VaultmindError
from vaultmind.ingest.document import MAX_DOCUMENT_BYTES
from vaultmind.ingest.documents_plan import document_note_bytes
from vaultmind.ingest.model import DocumentInput, kept_edits_said
from vaultmind.ingest.parts import megabytes
from vaultmind.model import ENTITY_TREE, USER_TREE_PREFIX, SyncStats

if TYPE_CHECKING:
    from vaultmind.index.store import Index

AGENT_SCOPE = "agent"  # the scope of `ingest_document`'s notes: sources/document/agent/
_SPLIT = "split it into parts, each with its own source_id"


def refuse_oversized(doc: DocumentInput, note_cap: int) -> None:
    """A UsageError for a document over the limit for a document, or whose note would be over
    the vault's cap on a note it indexes (`note_cap`, `[vault] max_file_mb`)."""
    size = len(doc.body.encode("utf-8", "surrogatepass"))
    if size > MAX_DOCUMENT_BYTES:  # as `ingest document` refuses such a file
        raise UsageError(
            f"the document's body is {size:,} bytes, over the {MAX_DOCUMENT_BYTES:,}-byte limit for a document",
            hint=_SPLIT,
        )
    note = document_note_bytes(doc)
    if note > note_cap:
        raise UsageError(
            f"the document's note would take {note:,} bytes, over this vault's cap of {megabytes(note_cap)} MB "
            "a note ([vault] max_file_mb), and never be indexed",
            hint=f"{_SPLIT}, or raise max_file_mb in .vaultmind/config.toml",
        )


def not_indexed(note: str, stats: SyncStats, warnings: Sequence[str]) -> VaultmindError:
    """Why the note of an agent's document (`note`: its path, or '' when none was written) holds
    no leaf after its sync: the ignore rules, a problem reading it, or what the write said."""
    if note and note in (stats.ignored or []):
        return UsageError(
            f"{note} was written but is not indexed: [vault] ignore leaves its folder out",
            hint="remove the rule that matches it from [vault] ignore in .vaultmind/config.toml",
        )
    problems = [p.message for p in stats.problems if p.path == note]
    said = problems or list(warnings) or ["its note holds no text to index"]
    where = f"{note} was written but is not indexed" if note else "the document was not written"
    return UsageError(f"{where}: {'; '.join(said)}", hint="fix what is said, then give the document again")


def refuse_taken_id(index: Index, source_id: str) -> None:
    """A UsageError when `source_id` is another source's than an agent's document (a file's
    document, a chat, an email), or the tree id of other leaves (`refuse_tree_id`): an agent's
    text never replaces their note nor joins their leaves."""
    refuse_tree_id(index, source_id)
    rows = index.query(
        """SELECT path, coalesce(source_kind, kind) FROM notes WHERE source_id = ?
           AND (source_kind IS DISTINCT FROM 'document'
                OR json_extract_string(frontmatter, '$.scope') IS DISTINCT FROM ?)
           ORDER BY path LIMIT 1""",
        [source_id, AGENT_SCOPE],
    )
    if rows:
        path, kind = rows[0]
        raise UsageError(
            f"source_id {source_id!r} is taken by a {kind} source ({path}), not an agent's document",
            hint="give the document a source_id of its own (e.g. prefixed 'agent:')",
        )


def refuse_tree_id(index: Index, source_id: str) -> None:
    """A UsageError for a `source_id` that is the tree id of leaves no source note names: your
    notes' (`notes:<top folder>`, `notes:/`, the whole prefix reserved, folders made later
    included) and the entities' (`entities`). A hit carries its tree to narrow `query_source`
    to, and an agent that gave it back here would file its text among your notes, and the
    summaries that fold them. An agent's document an older vaultmind took under such an id is
    named, with how to move it: it can no longer be updated there."""
    if source_id.startswith(USER_TREE_PREFIX):
        whose = f"the tree of your own notes (ids starting {USER_TREE_PREFIX!r} are theirs)"
    elif source_id == ENTITY_TREE:
        whose = "the tree of the entities"
    else:
        return
    hint = "give the document a source_id of its own (e.g. prefixed 'agent:')"
    if kept := _agent_notes(index, source_id):
        hint += (
            f"; the agent's document an older vaultmind kept under this id ({', '.join(kept)}) is no longer "
            "updated there: ingest it again under its own id, then delete that note"
        )
    raise UsageError(f"source_id {source_id!r} is {whose}, not an agent's document", hint=hint)


def _agent_notes(index: Index, source_id: str) -> list[str]:
    """The notes of an agent's document with `source_id`."""
    rows = index.query(
        """SELECT path FROM notes WHERE source_id = ? AND source_kind = 'document'
           AND json_extract_string(frontmatter, '$.scope') = ? ORDER BY path""",
        [source_id, AGENT_SCOPE],
    )
    return [str(row[0]) for row in rows]



def kept_edits_warnings(index: Index, source_id: str, note: str) -> list[str]:
    """What an agent is told of its document's other notes (`note`: the one just written): a
    note the user edited, which a new version never replaces (it went to a sibling note), is
    kept among the source's leaves, beside the new version, as long as it is there."""
    kept = index.query("SELECT path FROM notes WHERE source_id = ? AND path <> ? ORDER BY path", [source_id, note])
    return [
        f"{kept_edits_said(str(row[0]), 'the new version went', note)}; query_source({source_id!r}) answers both"
        for row in kept
    ]
