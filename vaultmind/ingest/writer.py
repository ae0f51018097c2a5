"""The shared writer: adapter batches and documents → canonical source notes in the vault.

Every ingest goes through two phases:

1. **plan** — read the notes already on disk, merge, validate and render every note in memory.
   Nothing is written; a bad message or an unreadable note stops the ingest here.
2. **write** — each note with `vault.atomic.write_atomic` (temp file + fsync + rename), in path
   order (numbers in number order, as the summary lists them: session-2 before session-10),
   only when its bytes changed. If the OS fails mid-way (disk full), the notes written so far
   are complete and valid; running the same ingest again finishes the job.

Merge rules (docs/ingest.md): a chat/email note is keyed by its path and `source_id`. When the
target note is vaultmind's (its `vaultmind_body_sha256` matches its body), its messages and the
new ones are united by message id (the note's text wins; a different text in the export is
reported as a warning), sorted by time (messages of one time in the note's order, then the
export's: a stable sort, so the same inputs give the same bytes) and re-rendered. A note the user
edited is never overwritten: messages it does not hold go to a sibling `<stem>.2.md` (the next
free number), which later ingests keep merging into.

A message is never written twice: one already in another note (a day note you renamed, or,
for email, whose Message-IDs are global, a note of another mailbox) counts as known. When a
note of vaultmind's elsewhere holds some of a group's messages, or, for email, the messages it
answers (`SourceBatch.related`: a reply ingested after its thread), or, for email, a note whose
messages answer them (`Message.answers`: a parent ingested after its reply), the group's new
messages join that note instead — a note in `sources/`, wherever it was moved there. A chat
or email note moved out of `sources/` is the user's: its messages are known (a chat's, for its
own source only), never written to; the conversation's new messages go to a note of their own.
A thread the order of ingests left in two notes (a reply naming only a later message came first)
stays in two, each message in one: vaultmind removes no note it wrote.

Documents: one note per `source_id` in `sources/document/<scope>/`, found by its front matter
(so a renamed title keeps its file). Unchanged content (title, body, `source_ref`) is a no-op;
changed content replaces the note with `version` + 1 — unless the note's `source_ref` is
another file that still exists: then it is another document of the same id, and this one is
written under `<id>~2` (`documents_plan._holding`). A note named by an earlier version moves to
its file's name (`document_names`): written there, then removed from its old place; an ingest
killed in between leaves both, and the next one removes the old one, still as written (`_leave`).
The folders a move empties go too; the notes an ingest moves are listed in `sources/.moving`
while it writes, so that the next one removes a folder a killed move emptied and left (only
such a folder: an empty folder of yours under `sources/` stays).

The writer's parts, one concept each: `names` (where a note goes), `held` (the notes already on
disk, as read), `plan` (the plan of one ingest and its groups of messages), `grouping` (the
batches grouped by note), `matching` (which notes already hold a conversation),
`messages_plan` (a group's note), `revisions` (edited, cut and replaced messages), `zone_shift`
(an export read in another time zone, refused) and `documents_plan` (a document's note). This
module plans each group's note, or each document's, and writes the plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, tzinfo
from pathlib import Path

from vaultmind.errors import RefuseToClobber, VaultError
from vaultmind.ingest.agent_earlier import as_hashed_session
from vaultmind.ingest.agent_resumed import each_turn_once
from vaultmind.ingest.documents_plan import (
    doc_body,
    doc_folder,
    doc_notes,
    file_ref,
    forget_bodies,
    plan_document,
)
from vaultmind.ingest.errors import IngestError
from vaultmind.ingest.grouping import group_batches
from vaultmind.ingest.held import Existing
from vaultmind.ingest.matching import (
    as_earlier,
    held_elsewhere,
    home_note,
    in_earlier_folder,
    joined_batches,
    own_note,
)
from vaultmind.ingest.messages_plan import plan_group
from vaultmind.ingest.model import DocumentInput, IngestReport, SourceBatch
from vaultmind.ingest.plan import Plan
from vaultmind.ingest.reexport import knowing_renames
from vaultmind.ingest.zone_shift import refuse_shifted
from vaultmind.markdown.frontmatter import body_sha256
from vaultmind.model import Progress
from vaultmind.vault.atomic import ChangedOnDisk, folder_locked, make_folders, write_atomic
from vaultmind.vault.layout import SOURCES_DIR, name_order


def _execute(plan: Plan, progress: Progress | None) -> IngestReport:
    report = plan.report
    writes = sorted(plan.writes, key=lambda w: name_order(w.path))  # as listed: session-2 before session-10
    moving = [w.moved_from for w in writes if w.moved_from is not None] + [path for path, _, _ in plan.left]
    _list_moves(plan.vault, add=moving)
    for done, item in enumerate(writes):
        if progress is not None:  # (a note a second: a hundred session notes took seconds unsaid)
            progress("writing", done, len(writes))
        full = plan.vault / item.path
        try:
            make_folders(full.parent)
            if item.moved_from is not None:
                if not _still(plan.vault / item.moved_from, item.expect):
                    report.warnings.append(_changed(item.moved_from))
                    continue
                write_atomic(full, item.data, overwrite=False)
                _leave(plan, item.moved_from, item.path)
            elif item.expect is not None:  # (compared again just before the rename: `write_atomic`)
                if not _still(full, item.expect):
                    report.warnings.append(_changed(item.path))
                    continue
                write_atomic(full, item.data, overwrite=True, expect=item.expect)
            else:
                write_atomic(full, item.data, overwrite=False)
        except ChangedOnDisk:
            report.warnings.append(_changed(item.path))
            continue
        except RefuseToClobber:
            report.warnings.append(
                f"{item.path}: appeared on disk during the ingest; left alone (run the ingest again)"
            )
            continue
        except OSError as exc:
            raise VaultError(
                f"cannot write ({exc.strerror or exc}); {done} of {len(writes)} notes were written, each complete",
                path=full,
                hint=_AGAIN,
            ) from exc
        report.written.append(item.path)
        report.messages_added += len(item.added)
        report.added_ids.update(item.added)
        report.documents_replaced += item.replaced
    for path, expect, moved_to in plan.left:  # the moves an earlier ingest was killed in, finished
        if not _still(plan.vault / path, expect):
            report.warnings.append(_changed(path))
            continue
        _leave(plan, path, moved_to)
    if moving:
        _list_moves(plan.vault, done=moving)  # every move done
    if progress is not None and writes:
        progress("writing", len(writes), len(writes))
    report.unchanged.sort(key=name_order)
    return report


_AGAIN = "fix the cause and run the same ingest again: it continues where it stopped"


def _changed(path: str) -> str:
    """The warning for a note the plan read that changed on disk before it was written."""
    return f"{path}: changed on disk during the ingest; left alone (run the ingest again)"


def _leave(plan: Plan, path: str, moved_to: str) -> None:
    """The note at `path`, written again at `moved_to`, is removed: a move is a write, then this.
    Killed in between, both are on disk; the next ingest finds the pair and removes the one left
    (`document_names.half_moved`). Failing, the error names the note left, not the one written."""
    try:
        (plan.vault / path).unlink()
    except OSError as exc:
        raise VaultError(
            f"cannot remove the note moved to {moved_to} ({exc.strerror or exc})", path=plan.vault / path, hint=_AGAIN
        ) from exc
    _drop_emptied(plan.vault, path)
    plan.report.renamed.append((path, moved_to))


def _drop_emptied(vault: Path, left: str) -> None:
    """The folders of `sources/` a moved note left empty are removed (Obsidian would list them)."""
    folder = (vault / left).parent
    while len(parts := folder.relative_to(vault).parts) > 2 and parts[0] == SOURCES_DIR:  # below sources/<kind>/
        try:
            folder.rmdir()  # only when empty
        except OSError:
            return
        folder = folder.parent


# The notes the moves of the ingests writing now leave (one vault-relative path a line): a hidden
# file, which neither the index nor Obsidian lists
_MOVING = f"{SOURCES_DIR}/.moving"


def _list_moves(vault: Path, *, add: Sequence[str] = (), done: Sequence[str] = ()) -> None:
    """The list of moves brought up to date: the folders the moves of a killed ingest emptied (the
    notes it lists gone) are removed and those notes unlisted; the notes this ingest's moves
    leave are listed (`add`, before its writes) or unlisted (`done`, after them). Another
    ingest's notes still on disk stay listed: two ingests at once keep each other's moves, and
    the list goes when it is empty — read and written under a lock, so that neither loses the
    other's lines."""
    if add:
        try:
            make_folders(vault / SOURCES_DIR)
        except OSError as exc:
            raise VaultError(f"cannot write the list of moves ({_reason(exc)})", path=vault / _MOVING, hint=_MOVES_HINT) from exc
    with folder_locked(vault / SOURCES_DIR):
        _update_moves(vault, add, done)


def _update_moves(vault: Path, add: Sequence[str], done: Sequence[str]) -> None:
    listed = vault / _MOVING
    try:
        earlier = listed.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        earlier = []
    except (OSError, UnicodeDecodeError) as exc:
        raise VaultError(f"cannot read the list of moves ({_reason(exc)})", path=listed, hint=_MOVES_HINT) from exc
    kept: set[str] = set(add)
    for path in earlier:
        if not path or path in done:
            continue
        if (vault / path).exists():
            kept.add(path)
        else:
            _drop_emptied(vault, path)
    if kept == {path for path in earlier if path}:
        return
    try:
        if kept:
            make_folders(listed.parent)
            write_atomic(listed, "".join(f"{path}\n" for path in sorted(kept)).encode("utf-8"), overwrite=True)
        else:
            listed.unlink(missing_ok=True)
    except OSError as exc:
        raise VaultError(f"cannot write the list of moves ({_reason(exc)})", path=listed, hint=_MOVES_HINT) from exc


_MOVES_HINT = (
    "it lists the notes an ingest is moving, to clean up after one killed; "
    "make it readable and writable, or delete it when no ingest runs, and run the ingest again"
)


def _reason(exc: OSError | UnicodeDecodeError) -> str:
    return str(exc.strerror or exc) if isinstance(exc, OSError) else "not UTF-8"


def _still(full: Path, expect: bytes | None) -> bool:
    """Whether the file holds the bytes the plan read (`expect`): no one changed it since."""
    try:
        return full.read_bytes() == expect
    except FileNotFoundError:
        return False


def write_batches(
    vault: Path,
    batches: Sequence[SourceBatch],
    *,
    zone: tzinfo = UTC,
    progress: Progress | None = None,
    max_note_bytes: int | None = None,
) -> IngestReport:
    """Write chat/email batches as source notes (merging, idempotent; see the module doc). Day
    notes are days of `zone` (the vault's `[ingest] timezone`), as the times their callouts show.
    A note over `max_note_bytes` (the vault's cap on a note it indexes) is split into numbered
    parts (`ingest.parts`). `progress("planning", done, total)` as each note is planned, and
    `progress("writing", done, total)` as notes are written."""
    plan = Plan(Path(vault), zone=zone, note_cap=max_note_bytes)
    batches = [
        knowing_renames(plan, in_earlier_folder(plan, as_hashed_session(plan, as_earlier(plan, batch))))
        for batch in joined_batches(each_turn_once(batches, plan.report), plan.report)
    ]
    groups = group_batches(batches, plan.report, zone)
    # the groups whose messages live in another note (a day note renamed) last: that note is
    # first its own group's, which then holds what it holds
    homed = [not own_note(plan, g) and home_note(plan, g, held_elsewhere(plan, g)) is not None for g in groups]
    ordered = [g for g, h in zip(groups, homed, strict=True) if not h] + [g for g, h in zip(groups, homed, strict=True) if h]
    for done, group in enumerate(ordered, 1):
        plan_group(plan, group)
        if progress is not None:
            progress("planning", done, len(ordered))
    refuse_shifted(plan)
    report = _execute(plan, progress)
    report.warnings.extend(said for ids, said in plan.said_if_written if ids & report.added_ids)
    return report


def write_documents(vault: Path, docs: Sequence[DocumentInput], *, progress: Progress | None = None) -> IngestReport:
    """Write documents as source notes: one per `source_id`, `version` + 1 on each change;
    `progress("planning" | "writing", done, total)` as they are planned and written."""
    try:
        return _write_documents(vault, docs, progress)
    finally:
        forget_bodies()  # the last document's note body, kept while it was planned


def _write_documents(vault: Path, docs: Sequence[DocumentInput], progress: Progress | None) -> IngestReport:
    plan = Plan(Path(vault))
    # two files of one derived id are two documents — unless one is a copy of the other's text;
    # files giving themselves one id are one document, the last one given
    latest: dict[tuple[str, str], DocumentInput] = {}
    texts: set[tuple[str, str]] = set()
    for doc in docs:
        if not doc.source_id:
            raise IngestError(f"document {doc.title!r} has an empty source_id")
        own_file = file_ref(doc.source_ref) and not doc.id_given
        key = (doc.source_id, (doc.source_ref or "") if own_file else "")
        text = (doc.source_id, body_sha256(doc_body(doc)))
        if own_file and text in texts and key not in latest:
            continue  # a copy (a backup folder beside the original): the same document
        texts.add(text)
        if key in latest:
            plan.report.warnings.append(f"document {doc.source_id!r} given more than once; kept the last")
        latest[key] = doc
    folders: dict[str, list[Existing]] = {}
    for done, key in enumerate(sorted(latest), 1):
        doc = latest[key]
        folder = doc_folder(doc)
        if folder not in folders:
            folders[folder] = doc_notes(plan, folder)
        writes = len(plan.writes)
        plan_document(plan, doc, folders[folder])
        if len(plan.writes) == writes:  # unchanged: what its file's reading said was said when it was written
            plan.report.said_before.update(doc.said)
        if progress is not None:
            progress("planning", done, len(latest))
    return _execute(plan, progress)
