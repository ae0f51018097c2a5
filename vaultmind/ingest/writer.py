"""The shared writer: adapter batches and documents → canonical source notes in the vault.

Every ingest goes through two phases:

1. **plan** — read the notes already on disk, merge, validate and render every note in memory.
   Nothing is written; a bad message or an unreadable note stops the ingest here.
2. **write** — each note with `vault.atomic.write_atomic` (temp file + fsync + rename), in path
   order, only when its bytes changed. If the OS fails mid-way (disk full), the notes written so
   far are complete and valid; running the same ingest again finishes the job.

Merge rules (docs/ingest.md): a chat/email note is keyed by its path and `source_id`. When the
target note is vaultmind's (its `vaultmind_body_sha256` matches its body), its messages and the
new ones are united by message id (the note's text wins; a different text in the export is
reported as a warning), sorted by (timestamp, message id) and re-rendered. A note the user
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
written under `<id>~2` (`documents_plan._holding`).

The writer's parts, one concept each: `names` (where a note goes), `held` (the notes already on
disk, as read), `plan` (the plan of one ingest and its groups of messages), `matching` (which
notes already hold a conversation), `revisions` (edited, cut and replaced messages) and
`documents_plan` (a document's note). This module groups the batches, plans each group's note
and writes the plan.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path

from vaultmind.errors import RefuseToClobber, VaultError, VaultmindError
from vaultmind.ingest.common import HASHED_ID_RE
from vaultmind.ingest.documents_plan import doc_body, doc_notes, file_ref, plan_document
from vaultmind.ingest.errors import IngestError
from vaultmind.ingest.held import GENERATED_KEYS, Existing, carries
from vaultmind.ingest.matching import as_earlier, held_elsewhere, home_note, joined_batches, own_note
from vaultmind.ingest.model import DocumentInput, IngestReport, QuotedParent, SourceBatch
from vaultmind.ingest.names import note_path, scope_folder, sibling_path
from vaultmind.ingest.plan import Group, Plan, Write, say_wide
from vaultmind.ingest.revisions import (
    apply_edit,
    complete_cut,
    complete_email,
    completed,
    edited_before,
    join_cut,
    join_edited,
    mark_replaced,
    marked,
    replace_edited,
    versions,
)
from vaultmind.markdown.frontmatter import body_sha256, with_user_keys
from vaultmind.markdown.render import (
    CALLOUT_TYPES,
    Message,
    SourceMeta,
    iso_utc,
    note_text,
    render_source_note,
    to_utc,
)
from vaultmind.vault.atomic import make_folders, write_atomic
from vaultmind.vault.layout import SOURCES_DIR


def _normalize(message: Message, meta: SourceMeta) -> Message:
    if not isinstance(message.message_id, str) or not message.message_id.strip():
        raise IngestError(f"source {meta.source_id!r}: a message has no id (author {message.author!r})")
    try:
        timestamp = to_utc(message.timestamp)
    except VaultmindError as exc:
        raise IngestError(
            f"source {meta.source_id!r}, message {message.message_id!r}: {exc.message}"
        ) from exc
    text = message.text.replace("\r\n", "\n").replace("\r", "\n")
    return replace(message, timestamp=timestamp, text=text, source_ref=message.source_ref or None)


def _sort_key(message: Message) -> tuple[datetime, str]:
    return (to_utc(message.timestamp), message.message_id)


def _group_batches(batches: Sequence[SourceBatch], report: IngestReport, zone: tzinfo) -> list[Group]:
    groups: dict[tuple[str, str], Group] = {}
    for batch_no, batch in enumerate(batches):
        meta = batch.meta
        if meta.kind not in CALLOUT_TYPES:
            raise IngestError(
                f"source {meta.source_id!r}: batches hold chat or email messages, not {meta.kind!r}"
            )
        if not meta.source_id:
            raise IngestError("a batch has an empty source_id")
        single = None if batch.bucket == "day" else note_path(batch)
        folder = f"{SOURCES_DIR}/{meta.kind}/{scope_folder(meta.scope)}"
        quoted = {quote.message_id: quote for quote in batch.quoted}
        earlier: dict[str, tuple[str, ...]] = {}
        for message_id, text in batch.earlier_texts:
            earlier[message_id] = (*earlier.get(message_id, ()), text)
        earlier_times = dict(batch.earlier_times)
        touched: set[tuple[str, str]] = set()  # the groups of its messages
        for message in batch.messages:
            msg = _normalize(message, meta)
            day = to_utc(msg.timestamp).astimezone(zone).date().isoformat() if single is None else None
            base = single or f"{folder}/{day}.md"
            group = groups.get((base, meta.source_id))
            if group is None:
                title = f"{meta.title} · {day}" if day else meta.title
                group = groups[(base, meta.source_id)] = Group(replace(meta, title=title), base)
            group.related.update(batch.related)
            group.known_in.update(batch.known_in)
            if batch.replaced is not None and batch_no not in group.batches:  # once per export
                group.batches.add(batch_no)
                group.replaced = {**(group.replaced or {}), **dict(batch.replaced)}
                held = frozenset(m.message_id for m in batch.messages) | {message_id for message_id, _ in batch.replaced}
                group.views.append((held, dict(batch.replaced)))
            if msg.message_id in batch.edited:
                group.edited.add(msg.message_id)
            group.held_by.setdefault(msg.message_id, set()).add(batch_no)
            touched.add((base, meta.source_id))
            seen = group.messages.get(msg.message_id)
            if seen is None:
                group.messages[msg.message_id] = msg
                if msg.message_id in quoted:
                    group.quoted[msg.message_id] = quoted[msg.message_id]
                if msg.message_id in earlier:
                    group.earlier[msg.message_id] = earlier[msg.message_id]
                if msg.message_id in earlier_times:
                    group.earlier_times[msg.message_id] = earlier_times[msg.message_id]
            else:
                report.messages_known += 1
                edit = apply_edit(seen, msg) or apply_edit(msg, seen)  # (exports of an edited message, in either order)
                if edit is not None:
                    group.messages[msg.message_id] = edit
                elif seen.text != msg.text and note_text(msg.text) not in versions(note_text(seen.text)):
                    report.warnings.append(
                        f"{base}: message {msg.message_id!r} appears twice in the export with different text; kept the first"
                    )
        if touched:  # how new the export is (`revisions.join_edited`, `revisions.edited_before`)
            end = max(to_utc(m.timestamp) for m in batch.messages)  # (each one read above)
            for key in touched:
                groups[key].ends[batch_no] = end
    for group in groups.values():
        _newest_view(group)
    return [groups[key] for key in sorted(groups)]


def _newest_view(group: Group) -> None:
    """Of several exports of one branched conversation in one ingest (ChatGPT), the one that
    holds every message the others hold is the newest: its branch is the one shown, and what
    it holds off that branch is marked (`replaced`), even a message an older export showed.
    When none holds all the others', their views stay merged."""
    if len(group.views) < 2:
        return
    every = frozenset().union(*(held for held, _ in group.views))
    newest = [replaced for held, replaced in group.views if held == every]
    if newest:
        group.replaced = newest[-1]


def _thread_base(plan: Plan, group: Group) -> str:
    """An email thread's note: its planned path, unless a note of vaultmind's there holds
    another thread (same subject and day, no message in common): then the path with the hash of
    its first message, as when both threads come in one ingest."""
    note = plan.existing(group.base)
    if note is None or not note.owned or note.source_id != group.meta.source_id:
        return group.base
    ids = {*group.messages} | group.related
    held = note.messages()
    if set(held) & ids or any(answer in ids for message in held.values() for answer in message.answers):
        return group.base
    first = min(group.messages.values(), key=_sort_key).message_id
    return f"{group.base[:-3]}-{hashlib.sha256(first.encode('utf-8', 'surrogatepass')).hexdigest()[:6]}.md"


def _redated(plan: Plan, path: str, group: Group, current: dict[str, Message], message: Message) -> bool:
    """Whether the note's `current` message of `message`'s id, dated as an earlier vaultmind
    read its export (`SourceBatch.earlier_times`: an email's Date zone read as UTC), takes the
    time read now (said once; its id stays). A note of the user's is never in `current`."""
    held = current[message.message_id]
    before = group.earlier_times.get(message.message_id)
    if before is None or to_utc(held.timestamp) != to_utc(before) or to_utc(held.timestamp) == to_utc(message.timestamp):
        return False
    current[message.message_id] = replace(held, timestamp=message.timestamp)
    plan.report.warnings.append(
        f"{path}: message {message.message_id!r} re-dated {iso_utc(to_utc(before))} → "
        f"{iso_utc(to_utc(message.timestamp))}, as its Date header reads (an earlier vaultmind misread its zone)"
    )
    return True


def _readings(message: Message, quote: QuotedParent | None, earlier: tuple[str, ...]) -> set[str]:
    """The texts a note may hold for `message` as it is: its text, with the quoted parent put
    back below it (`QuotedParent`), and each so as an earlier vaultmind read it (`earlier`)."""
    texts = [message.text, *earlier]
    return {note_text(text) for text in texts} | (
        {note_text(f"{text}\n\n{quote.text}") for text in texts} if quote is not None else set()
    )


def _unanswered(plan: Plan, group: Group, quote: QuotedParent) -> bool:
    """None of the messages `quote`'s message answers is in the group or in a note of the vault:
    what it quoted is put back below its text (see `QuotedParent`)."""
    if any(answered in group.messages for answered in quote.answers):
        return False
    if any(answered in plan.placed(f"{SOURCES_DIR}/{group.meta.kind}") for answered in quote.answers):
        return False
    return not any(answered in plan.placed_outside(group.meta.kind) for answered in quote.answers)


def _meta_of(note: Existing, fallback: SourceMeta) -> SourceMeta:
    """The conversation a note of vaultmind's says it holds (to re-render it as it is); what it
    does not say, from `fallback`."""
    data = note.data
    subject = data.get("subject")
    return replace(
        fallback,
        source_id=note.source_id,
        scope=str(data.get("scope") or fallback.scope),
        title=str(data.get("title") or fallback.title),
        subject=str(subject) if subject is not None else fallback.subject,
    )


def _same_messages(group: Group, held: dict[str, Message]) -> set[str]:
    """The incoming messages of `group` that are a message already `held` (by its notes) or
    given by an earlier export of this ingest, under another id: a hashed id (`MessageIds`)
    hashes the text as the export has it, and two exports of a chat may differ by a control
    character in it (a stray NUL, a bell) that no note keeps. Such a message is one of the same
    author, time and text as its note keeps it, held by no export that holds it (two identical
    messages of one minute in an export stay two); the first id stays, the ids of messages
    already written never change."""
    classes: dict[tuple[str, datetime, str], list[set[int]]] = {}  # the exports (-1: the notes) holding each message
    same: set[str] = set()
    incoming = ((message_id, message) for message_id, message in group.messages.items() if message_id not in held)
    for message_id, message in [*held.items(), *incoming]:
        if not HASHED_ID_RE.fullmatch(message_id):
            continue
        exports = group.held_by.get(message_id, set()) | ({-1} if message_id in held else set())
        author, at = " ".join(note_text(message.author).split()), to_utc(message.timestamp)
        # a held message edited since (`revisions.replace_edited`) is each text it showed
        texts = versions(note_text(message.text)) if message_id in held else [note_text(message.text)]
        for text in texts:
            for holders in classes.setdefault((author, at, text), []):
                if not holders & exports:
                    holders |= exports
                    same.add(message_id)
                    break
            else:
                classes[(author, at, text)].append(exports)
    return same - held.keys()


def _plan_group(plan: Plan, group: Group) -> None:
    report = plan.report
    target: Existing | None = None
    user_edited: list[Existing] = []
    free: str | None = None
    elsewhere = held_elsewhere(plan, group)
    # a chat's own note (a day's, a conversation's), when it is there, is its note: messages of
    # the day another clock's day note holds, or a copy elsewhere in sources/, stay there
    # (known), its new ones join its own (a home elsewhere is for a note renamed or moved, or an
    # email thread)
    home = None if own_note(plan, group) else home_note(plan, group, elsewhere)
    meta = group.meta
    own: set[str] = set()  # with a home elsewhere, the messages of the group's own notes stay there
    if home is not None:  # a day note you renamed; an email thread ingested before
        target = home
        meta = _meta_of(home, group.meta)
        n = 1
        while (note := plan.existing(sibling_path(group.base, n))) is not None:
            if note.source_id == group.meta.source_id:
                own.update(note.messages())
            n += 1
    base = _thread_base(plan, group) if meta.kind == "email" and home is None else group.base
    n = 1
    taken: set[str] = set()  # messages of its own notes another group of this ingest writes to
    while free is None and home is None:
        path = sibling_path(base, n)
        n += 1
        if path in plan.claimed:
            held = plan.existing(path)
            if held is not None and held.source_id == group.meta.source_id:
                taken.update(held.messages())
            continue
        note = plan.existing(path)
        if note is None:
            free = path
        elif note.source_id == group.meta.source_id and str(note.data.get("kind")) == group.meta.kind:
            ours = note.owned and carries(note)  # (properties it could not carry: yours, as an edit)
            if ours and target is None:
                target = note
            elif not ours:
                user_edited.append(note)
            else:  # vaultmind's too (the note before it was yours, and is vaultmind's again): known
                taken.update(note.messages())
        elif note.source_id in group.known_in and str(note.data.get("kind")) == group.meta.kind:
            taken.update(note.messages())  # its conversation under an earlier id (`known_in`): known

    known = own | taken | {message_id for note in user_edited for message_id in note.messages()}
    known.update(  # already written in another note: not again
        message_id for message_id, paths in elsewhere.items() if target is None or set(paths) - {target.path}
    )
    for moved in sorted({p for paths in elsewhere.values() for p in paths if not p.startswith(SOURCES_DIR + "/")}):
        if moved not in report.unchanged:  # yours, and it holds some of the export: indexed with the rest
            report.unchanged.append(moved)
    current = target.messages() if target is not None else {}
    changed = mark_replaced(group, current)  # messages of the note whose text changes
    yours = {message_id: message for note in user_edited for message_id, message in note.messages().items()}
    known |= _same_messages(group, {**yours, **current})
    new: dict[str, Message] = {}
    for message_id, message in group.messages.items():
        mine = current.get(message_id)
        quote = group.quoted.get(message_id)
        quoting = replace(message, text=f"{message.text}\n\n{quote.text}") if quote is not None else message
        if mine is not None:
            report.messages_known += 1
            if _redated(plan, target.path if target is not None else base, group, current, message):
                changed += 1
            said = note_text(mine.text)
            if group.replaced is not None and marked(said, note_text(message.text)):  # a mark of `revisions.mark_replaced` is no change of its text
                said = note_text(message.text)
            if said in _readings(message, quote, group.earlier.get(message_id, ())):
                continue
            edit = apply_edit(mine, message)
            if edit is not None:  # edited since the note was written: the new text, the one before kept below it
                current[message_id] = edit
                report.messages_edited += 1
                changed += 1
            elif meta.kind == "email" and complete_email(
                plan,
                target.path if target is not None else base,
                current,
                message_id,
                quoting if quote is not None and _unanswered(plan, group, quote) else message,
            ):  # cut short by an earlier export (an mbox cut off): its whole text now
                changed += 1
            elif note_text(message.text) not in versions(said) and not completed(
                message_id, said, message, email=meta.kind == "email"
            ):
                # (an older export's text before an edit, or cut short: known)
                where = target.path if target is not None else base
                report.warnings.append(
                    f"{where}: message {message_id!r} differs from the note; kept the note's text"
                )
        elif message_id in known:
            report.messages_known += 1
        else:
            new[message_id] = quoting if quote is not None and _unanswered(plan, group, quote) else message
            if group.replaced is not None and (why := group.replaced.get(message_id)) is not None:
                # shown by an older export of this ingest, off the newest's branch: marked at once
                new[message_id] = replace(message, text=f"{note_text(message.text)}\n\n[replaced: {why}]")
    # held messages the export no longer holds: all of them, when it was read in another zone
    plan.timed.setdefault(group.meta.source_id, ([], []))[0].extend(
        message for message_id, message in current.items() if message_id not in group.messages
    )
    plan.timed[group.meta.source_id][1].extend(new.values())
    if group.edited & new.keys():
        join_edited(plan, group, new)
    if len(group.ends) > 1 and new:  # (exports of one chat in one ingest, one of them cut short)
        report.messages_known += join_cut(group, new)
    if target is not None and group.edited & new.keys():
        changed += replace_edited(plan, group, current, new)
    if target is not None and new:
        changed += complete_cut(plan, target.path, group, current, new)
    if target is not None and new and group.meta.source_id.startswith("whatsapp:"):  # (its exports mark edits)
        changed += edited_before(plan, group, current, new)
    if target is None and not new:
        return
    if new and user_edited:
        plan.keep_user_edited([note.path for note in user_edited])
    merged = sorted([*current.values(), *new.values()], key=_sort_key)
    data = render_source_note(meta, merged, plan.zone).encode("utf-8")
    if new:
        _say_moved_out(plan, group, elsewhere, len(new), target.path if target is not None else free)
        wide = [note.path for note in user_edited] + [p for paths in elsewhere.values() for p in paths]
        say_wide(plan, wide, f"its messages are known, and {len(new)} new message(s) are written to {target.path if target is not None else free}")
    if target is not None:
        plan.claimed.add(target.path)
        if not new and not changed:  # nothing to add: the note stays as it is, its front matter included
            report.unchanged.append(target.path)
        else:
            plan.writes.append(Write(target.path, with_user_keys(data, target.raw, GENERATED_KEYS), target.raw, added=tuple(new)))
        return
    assert free is not None
    plan.claimed.add(free)
    plan.writes.append(Write(free, data, None, added=tuple(new)))


def _say_moved_out(plan: Plan, group: Group, elsewhere: dict[str, list[str]], added: int, path: str | None) -> None:
    """Warn, once per note, that a note moved out of `sources/` holds part of a conversation (a
    chat's day, an email thread) whose new messages are written to `path`: the moved note is
    yours, left as it is."""
    what = "email thread" if group.meta.kind == "email" else "chat"
    whole = "thread" if group.meta.kind == "email" else f"conversation ({group.meta.source_id})"
    for moved in sorted({p for paths in elsewhere.values() for p in paths if not p.startswith(SOURCES_DIR + "/")}):
        said = f"{moved}: this {what} note is outside sources/, so it is yours and left as it is;"
        if not any(w.startswith(said) for w in plan.report.warnings):
            plan.report.warnings.append(
                f"{said} its messages are known, and {added} new message(s) of its {whole} are written to {path}"
            )


def _execute(plan: Plan) -> IngestReport:
    report = plan.report
    writes = sorted(plan.writes, key=lambda w: w.path)
    for done, item in enumerate(writes):
        full = plan.vault / item.path
        try:
            make_folders(full.parent)
            if item.expect is not None:
                try:
                    current = full.read_bytes()
                except FileNotFoundError:
                    current = None
                if current != item.expect:
                    report.warnings.append(
                        f"{item.path}: changed on disk during the ingest; left alone (run the ingest again)"
                    )
                    continue
                write_atomic(full, item.data, overwrite=True)
            else:
                write_atomic(full, item.data, overwrite=False)
        except RefuseToClobber:
            report.warnings.append(
                f"{item.path}: appeared on disk during the ingest; left alone (run the ingest again)"
            )
            continue
        except OSError as exc:
            raise VaultError(
                f"cannot write ({exc.strerror or exc}); {done} of {len(writes)} notes were written, each complete",
                path=full,
                hint="fix the cause and run the same ingest again: it continues where it stopped",
            ) from exc
        report.written.append(item.path)
        report.messages_added += len(item.added)
        report.added_ids.update(item.added)
        report.documents_replaced += item.replaced
    report.unchanged.sort()
    return report


def write_batches(vault: Path, batches: Sequence[SourceBatch], *, zone: tzinfo = UTC) -> IngestReport:
    """Write chat/email batches as source notes (merging, idempotent; see the module doc). Day
    notes are days of `zone` (the vault's `[ingest] timezone`), as the times their callouts show."""
    plan = Plan(Path(vault), zone=zone)
    groups = _group_batches([as_earlier(plan, batch) for batch in joined_batches(batches, plan.report)], plan.report, zone)
    # the groups whose messages live in another note (a day note renamed) last: that note is
    # first its own group's, which then holds what it holds
    homed = [not own_note(plan, g) and home_note(plan, g, held_elsewhere(plan, g)) is not None for g in groups]
    for group in [g for g, h in zip(groups, homed, strict=True) if not h] + [g for g, h in zip(groups, homed, strict=True) if h]:
        _plan_group(plan, group)
    for source_id, (held, new) in sorted(plan.timed.items()):
        if (found := _shifted(held, new)) is not None:
            shift, repeated = found
            hours = shift.total_seconds() / 3600
            raise IngestError(
                f"{source_id}: {repeated} messages would be written again, {abs(hours):g} h "
                f"{'later' if hours > 0 else 'earlier'} than the same messages already in the vault: "
                "the export was read in another time zone than when it was first ingested. Nothing was written",
                hint="ingest it with the --tz it was first ingested with (or [ingest] timezone); to move "
                "its messages to another zone, delete its notes first",
            )
    return _execute(plan)


SHIFT_SHARE = 0.8  # of the messages a zone mix-up could repeat, the share repeated at one offset


SHIFT_MIN = 3  # and at least this many different texts


def _shifted(held: Sequence[Message], new: Sequence[Message]) -> tuple[timedelta, int] | None:
    """The offset and the number of messages repeated, when the same export read in another time
    zone repeats the messages the vault holds: of the messages whose ids hash their time (`h-…`,
    no platform id: a local time read in another zone gives another UTC time, so another id),
    most of those `held` that the export no longer holds under their ids (a mix-up moves every
    one), or of the new ones when fewer, come again (same author, same text) one whole number
    of quarter hours apart, with one offset for all and at least `SHIFT_MIN` different texts. A
    bot that posts the same texts every hour (its earlier posts still in the export), or a
    platform's own ids, are never taken for a mix-up."""
    held = [m for m in held if m.message_id.startswith("h-")]
    new = [m for m in new if m.message_id.startswith("h-")]
    if min(len(held), len(new)) < SHIFT_MIN:
        return None
    times: dict[tuple[str, str], list[datetime]] = {}
    for message in held:
        times.setdefault((message.author, note_text(message.text)), []).append(to_utc(message.timestamp))
    offsets: dict[timedelta, list[tuple[str, str]]] = {}
    for message in new:
        key = (message.author, note_text(message.text))
        at = to_utc(message.timestamp)
        for shift in {at - then for then in times.get(key, ())}:
            if shift and abs(shift) <= timedelta(hours=14) and not shift % timedelta(minutes=15):
                offsets.setdefault(shift, []).append(key)
    if not offsets:
        return None
    shift, keys = max(offsets.items(), key=lambda item: (len(item[1]), -abs(item[0])))
    repeated = len(keys) >= SHIFT_SHARE * min(len(held), len(new)) and len(set(keys)) >= SHIFT_MIN
    return (shift, len(keys)) if repeated else None


def write_documents(vault: Path, docs: Sequence[DocumentInput]) -> IngestReport:
    """Write documents as source notes: one per `source_id`, `version` + 1 on each change."""
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
    for key in sorted(latest):
        doc = latest[key]
        folder = f"{SOURCES_DIR}/document/{scope_folder(doc.scope)}"
        if folder not in folders:
            folders[folder] = doc_notes(plan, folder)
        writes = len(plan.writes)
        plan_document(plan, doc, folders[folder])
        if len(plan.writes) == writes:  # unchanged: what its file's reading said was said when it was written
            plan.report.said_before.update(doc.said)
    return _execute(plan)
