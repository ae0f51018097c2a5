"""Chat and email: the plan of one group's note. The note that already holds the group's
conversation takes its new messages (merged by message id, re-rendered), a note you edited
keeps its text and the new messages go to a sibling, and a message held in another note is
known, never written twice (see `ingest.writer`)."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import replace
from datetime import datetime
from itertools import pairwise

from vaultmind.ingest.common import HASHED_ID_RE
from vaultmind.ingest.held import Existing, carries
from vaultmind.ingest.matching import held_elsewhere, home_note, own_note
from vaultmind.ingest.model import QuotedParent
from vaultmind.ingest.names import sibling_path
from vaultmind.ingest.parts import part_paths, parts_under_cap, say_split
from vaultmind.ingest.plan import Group, Plan, Write, say_wide
from vaultmind.ingest.reexport import hashed, pair
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
from vaultmind.markdown.render import Message, SourceMeta, iso_utc, note_text, to_utc
from vaultmind.vault.layout import SOURCES_DIR


def _sort_key(message: Message) -> tuple[datetime, str]:
    return (to_utc(message.timestamp), message.message_id)


def _in_time_order(messages: list[Message]) -> list[Message]:
    """`messages` (the note's, in its order, then the new ones, in the export's) by time alone:
    messages of one time keep that order — a derived id is a hash, and sorting by it put a reply
    before its question."""
    return sorted(messages, key=lambda message: to_utc(message.timestamp))


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
    """Whether what `quote`'s message quoted is put back below its text (see `QuotedParent`):
    when none of the messages it answers is in the group or in a note of the vault, or when the
    ones that are are not what it quoted — a reply that forwards another mail below its text
    ("---------- Forwarded message ---------") cut no quote of its parent, and its text is kept."""
    parents = _parent_texts(plan, group, quote.answers)
    return not parents or not any(_quotes(quote.text, parent) for parent in parents)


def _parent_texts(plan: Plan, group: Group, answers: tuple[str, ...]) -> list[str]:
    """The texts of the messages among `answers` the group or the vault holds."""
    texts = [group.messages[answered].text for answered in answers if answered in group.messages]
    if texts:
        return texts
    kind = group.meta.kind
    for placed in (plan.placed(f"{SOURCES_DIR}/{kind}"), plan.placed_outside(kind)):
        for answered in answers:
            for rel, _ in placed.get(answered, ()):
                note = plan.existing(rel)
                held = note.messages().get(answered) if note is not None else None
                texts.append(held.text if held is not None else "")  # held, its text unread: taken as quoted
        if texts:
            break
    return texts


_WORD_RE = re.compile(r"\w+")
_QUOTED_SHARE = 0.5  # of the parent's first pairs of words found in a cut quote, for it to be that parent's
_PARENT_WORDS = 40


def _quotes(cut: str, parent: str) -> bool:
    """Whether `cut` quotes `parent`: most of the parent's first pairs of words follow each other
    in it too (quoting rewraps lines and marks them with `>`, so words are compared, not lines;
    pairs, so that a forwarded mail sharing a few words with a short parent is not taken for it)."""
    words = _WORD_RE.findall(note_text(parent).lower())[:_PARENT_WORDS]
    if len(words) < 2:
        return not words or words[0] in _WORD_RE.findall(cut.lower())
    said = _WORD_RE.findall(cut.lower())
    found = set(pairwise(said))
    pairs = list(pairwise(words))
    return sum(pair in found for pair in pairs) >= _QUOTED_SHARE * len(pairs)


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
    return (same | _exported_otherwise(group, held, same)) - held.keys()


def _exported_otherwise(group: Group, held: dict[str, Message], same: set[str]) -> set[str]:
    """The incoming messages of `group` that are a held message the export gives otherwise
    (`reexport.pair`): its author renamed since, its time with seconds where the note's has
    none (or the other way), a placeholder in another language. Of the held messages the
    export no longer holds under their ids, less those `same` (`_same_messages`) took."""
    incoming = [m for i, m in group.messages.items() if i not in held and i not in same]
    taken = Counter(_exact(group.messages[i]) for i in same)
    left = []
    for message_id, message in held.items():
        if message_id in group.messages:
            continue
        if taken[_exact(message)]:
            taken[_exact(message)] -= 1
        else:
            left.append(message)
    return set(pair(hashed(left), hashed(incoming), group.seconds, group.renamed))


def _exact(message: Message) -> tuple[str, datetime, str]:
    return (" ".join(note_text(message.author).split()), to_utc(message.timestamp), note_text(message.text))


def plan_group(plan: Plan, group: Group) -> None:
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
    for moved in _moved_out(elsewhere):
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
    if target is not None and not new and not changed and _under_cap(plan, target):
        plan.claimed.add(target.path)  # nothing to add: the note stays as it is, not rendered again
        report.unchanged.append(target.path)
        return
    if new and user_edited:
        plan.keep_user_edited([note.path for note in user_edited])
    merged = _in_time_order([*current.values(), *new.values()])
    note_path = target.path if target is not None else free
    assert note_path is not None
    # over the vault's cap, the note is split: its parts in its next free numbered siblings
    parts = parts_under_cap(plan, meta, merged, target.raw if target is not None else None, note_path)
    paths = part_paths(plan, note_path, base if home is None else note_path, len(parts))
    if new:
        _say_moved_out(plan, group, elsewhere, len(new), note_path)
        wide = [note.path for note in user_edited] + [p for places in elsewhere.values() for p in places]
        say_wide(plan, wide, f"its messages are known, and {len(new)} new message(s) are written to {note_path}")
    if len(parts) > 1:
        say_split(plan, paths, sum(len(data) for _, data in parts))
    plan.claimed.update(paths)
    for n, (part_path, (holds, data)) in enumerate(zip(paths, parts, strict=True)):
        added = tuple(m.message_id for m in holds if m.message_id in new)
        if n or target is None:
            plan.writes.append(Write(part_path, data, None, added=added))
        elif not new and not changed and len(parts) == 1:  # nothing to add: the note stays as it is, its front matter included
            report.unchanged.append(target.path)
        else:
            plan.writes.append(Write(target.path, data, target.raw, added=added))


def _under_cap(plan: Plan, note: Existing) -> bool:
    """Whether `note`, as it is on disk, is under the vault's cap on a note: one it only keeps
    stays one note. (A note over it, the cap lowered since, is rendered again and split.) An
    export ingested again, nothing in it new, is so planned without rendering every note it
    holds to measure it."""
    return plan.note_cap is None or len(note.raw) <= plan.note_cap


def _say_moved_out(plan: Plan, group: Group, elsewhere: dict[str, list[str]], added: int, path: str | None) -> None:
    """Warn, once per note, that a note moved out of `sources/` holds part of a conversation (a
    chat's day, an email thread) whose new messages are written to `path`: the moved note is
    yours, left as it is."""
    what = "email thread" if group.meta.kind == "email" else "chat"
    whole = "thread" if group.meta.kind == "email" else f"conversation ({group.meta.source_id})"
    for moved in _moved_out(elsewhere):
        said = f"{moved}: this {what} note is outside sources/, so it is yours and left as it is;"
        if not any(w.startswith(said) for w in plan.report.warnings):
            plan.report.warnings.append(
                f"{said} its messages are known, and {added} new message(s) of its {whole} are written to {path}"
            )


def _moved_out(elsewhere: dict[str, list[str]]) -> list[str]:
    """The notes out of `sources/` (yours) among those holding a group's messages (`held_elsewhere`)."""
    return sorted({p for paths in elsewhere.values() for p in paths if not p.startswith(SOURCES_DIR + "/")})
