"""An agent session's note an earlier vaultmind named by the hash of the transcript's first line.

Before, a Claude Code transcript whose first line carries no session id (a `summary` or
`file-history-snapshot` line) had its note named `<session id>-<hash of that line>`, and a
transcript with no id at all `<file name>-<hash of its first line>`, a line of metadata too.
That line is rewritten as the session goes on, so the name changed and the whole session was
written a second time. Now a session is named by its own id, and the hash is of its first
message with a role (`agent._first_hash`); a note named the old way keeps its name and grows
there: it is found by its name (`<name>-` and 8 hex digits, in the agent folder) and by holding
the session's first message (same id, time and text), whatever the first line is now.
"""

from __future__ import annotations

import re
from dataclasses import replace

from vaultmind.ingest.model import SourceBatch
from vaultmind.ingest.names import note_path, slugify
from vaultmind.ingest.plan import Plan
from vaultmind.markdown.render import to_utc

_HASH_RE = re.compile(r"[0-9a-f]{8}")


def as_hashed_session(plan: Plan, batch: SourceBatch) -> SourceBatch:
    """`batch` under the name and source id of the note an earlier vaultmind gave its session
    (`<name>-<hash>`), when the vault holds that note and not the session's own."""
    if not batch.meta.source_id.startswith("agent:") or batch.bucket != "whole" or not batch.messages:
        return batch
    own = note_path(batch)
    if plan.existing(own) is not None:
        return batch
    base = batch.legacy_note_name or batch.note_name or ""
    prefix = slugify(base) + "-"
    folder = own.rsplit("/", 1)[0]
    for name in plan.listing(folder):
        stem = name.removesuffix(".md")
        if not (stem.startswith(prefix) and _HASH_RE.fullmatch(stem[len(prefix) :])) or name == own.rsplit("/", 1)[1]:
            continue
        earlier_name = f"{base}-{stem[len(prefix) :]}"
        earlier = replace(batch, meta=replace(batch.meta, source_id=f"agent:{earlier_name}"), note_name=earlier_name)
        if _holds_first(plan, earlier):
            return earlier
    return batch


def _holds_first(plan: Plan, batch: SourceBatch) -> bool:
    """Whether `batch`'s note, of its source, holds its first message: same id, time and text
    (or a text an earlier vaultmind read it as)."""
    note = plan.existing(note_path(batch))
    if note is None or note.source_id != batch.meta.source_id:
        return False
    first = batch.messages[0]
    held = note.messages().get(first.message_id)
    return held is not None and to_utc(held.timestamp) == to_utc(first.timestamp) and batch.held_as(first, held)
