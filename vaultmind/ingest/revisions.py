"""Message revisions: an edited message kept with its text before the edit quoted below it, a
message an export cut short completed, and the messages of a branched conversation off the
branch shown marked as replaced. Nothing a note held is lost."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime

from vaultmind.errors import VaultmindError
from vaultmind.ingest.common import HASHED_ID_RE, cut_short, mail_cut_short
from vaultmind.ingest.held import Existing
from vaultmind.ingest.plan import Group, Plan
from vaultmind.markdown.render import Message, note_text, to_utc


def replace_edited(plan: Plan, group: Group, current: dict[str, Message], new: dict[str, Message]) -> int:
    """An edited message (its export says so) whose id hashes its text is a new id (WhatsApp):
    it is the note's one message by the same author at the same time that the export no longer
    holds — the text before the edit. That message keeps its id and shows the new text, the one
    before quoted below it (`_with_before`: nothing is lost); the new id is not written (a later
    ingest knows it, `messages_plan._same_messages`). With none, or several such messages, the edit is a new
    message. An export that ends before the newest message of the chat's notes is older than
    them (ingested after a newer one): its edit is an earlier text of the note's, quoted below
    the note's newest (`_below_newest`). Returns the number of the note's messages changed so."""
    changed = 0
    older = max(group.ends.values()) < _newest_held(plan, group)
    for message_id in sorted(group.edited & new.keys()):
        edit = new[message_id]
        at = to_utc(edit.timestamp)
        before = [
            old.message_id
            for old in current.values()
            if old.message_id not in group.messages and old.author == edit.author and to_utc(old.timestamp) == at
        ]
        if len(before) == 1:
            old = current[before[0]]
            said, own = note_text(old.text), note_text(edit.text)
            del new[message_id]
            if older and own in versions(said):
                plan.report.messages_known += 1
                continue
            current[before[0]] = replace(old, text=_below_newest(said, own) if older else _with_before(own, said, None))
            plan.report.messages_edited += 1
            changed += 1
    return changed


def _below_newest(said: str, own: str) -> str:
    """A note's message `said` with `own`, a text it showed before its newest (an older
    export's edit), quoted below the newest, above the ones before it."""
    newest, *earlier = versions(said)
    return _chained([newest, own, *earlier])


def _chained(chain: list[str]) -> str:
    """The texts a message showed, newest first, as its note keeps them: the newest, the one
    before it quoted below it, and so on (`versions` reads them back)."""
    text = chain[-1]
    for shown in reversed(chain[:-1]):  # (the oldest innermost, each quoted below the one after it)
        text = _with_before(shown, text, None)
    return text


def join_edited(plan: Plan, group: Group, new: dict[str, Message]) -> None:
    """Two exports of one ingest, one holding a message before its edit, the other after it
    (marked edited): one message, as when the older was ingested first (`replace_edited`): the
    id of the text before the edit, showing the new text, the one before quoted below it. The
    text before is the one message of the edit's author and time that no export holding the
    edit holds. Edits of one message in several exports (edited twice) are joined oldest export
    first (the one whose newest message is the oldest), so the newest text shows, each text
    before it quoted in turn."""
    for message_id in sorted(group.edited & new.keys(), key=lambda edit: (_newest_end(group, edit), edit)):
        edit = new[message_id]
        holders = group.held_by.get(message_id, set())
        before = [
            other
            for other, old in new.items()
            if other != message_id
            and other not in group.edited
            and HASHED_ID_RE.fullmatch(other)
            and not group.held_by.get(other, set()) & holders
            and old.author == edit.author
            and to_utc(old.timestamp) == to_utc(edit.timestamp)
        ]
        if len(before) == 1:
            old = new[before[0]]
            new[before[0]] = replace(old, text=_with_before(note_text(edit.text), note_text(old.text), None))
            del new[message_id]
            plan.report.messages_edited += 1


def join_cut(group: Group, new: dict[str, Message]) -> int:
    """Two exports of one ingest, one cut off inside its last message (a copy or download cut
    short), the other whole: one message, as when the cut one was ingested first and the whole
    one completed it (`complete_cut`) — the cut one's id, the whole text (either export
    ingested again is known: `messages_plan._same_messages`, `completed`). A new message whose id
    hashes its text, the last of every export holding it, is such a cut when one other new
    message of its author and time, held by none of those exports, goes on from its text.
    Returns how many were so joined."""
    dropped = 0
    for message_id in sorted(new):
        cut = new.get(message_id)
        if cut is None:
            continue
        at, text = to_utc(cut.timestamp), note_text(cut.text)
        holders = group.held_by.get(message_id, set())
        if not HASHED_ID_RE.fullmatch(message_id) or any(group.ends[n] != at for n in holders):
            continue
        whole = [
            other
            for other, message in new.items()
            if other != message_id
            and not group.held_by.get(other, set()) & holders
            and message.author == cut.author
            and to_utc(message.timestamp) == at
            and cut_short(text, note_text(message.text))
        ]
        if len(whole) == 1:
            new[message_id] = replace(cut, text=_finished(text, new.pop(whole[0]).text)[0])
            dropped += 1
    return dropped


# a mark after a message's text, on its last line, as WhatsApp marks an edit (`<This message was
# edited>`), in a language vaultmind does not know (those it knows are cut from the text): words,
# no digit, no colon (not `<attached: 00000012-PHOTO.jpg>`, on a line of its own)
_UNKNOWN_MARK_RE = re.compile(r"[^\s<>][ \t]+<[^\W\d_][^<>\n:\d]{2,60}>\Z")


def _finished(said: str, whole: str) -> tuple[str, bool]:
    """What a message shows that one export (or a note) gave as `said` and another gives as
    `whole`, going on from it — each as a note keeps it (`note_text`), whether the two came in
    one ingest or one after the other: an edit marked in a language vaultmind does not know
    (`_marked_edit`) shows the new text, the one before quoted below it (True); a copy cut
    short shows the whole text (False)."""
    said, whole = note_text(said), note_text(whole)
    if _marked_edit(said, whole):
        return _with_before(whole, said, None), True
    return whole, False


def _marked_edit(text: str, longer: str) -> bool:
    """Whether `longer`, which goes on from `text`, is `text` edited (added to) rather than a
    copy of it cut short: what it adds ends in an edit's mark (`_UNKNOWN_MARK_RE`) — a file cut
    off inside a message does not add a mark to it."""
    return _UNKNOWN_MARK_RE.search(longer, max(len(text) - 1, 0)) is not None


def _newest_end(group: Group, message_id: str) -> datetime:
    """When the newest export of this ingest holding a message ends (its newest message)."""
    return max(group.ends[n] for n in group.held_by[message_id])


# the text WhatsApp shows in place of a message deleted for everyone (its languages): no edit
_DELETED_RE = re.compile(
    r"(?:This message was deleted|You deleted this message|Diese Nachricht wurde gelöscht|Du hast diese Nachricht gelöscht|"
    r"Se eliminó este mensaje|Eliminaste este mensaje|Ce message a été supprimé|Vous avez supprimé ce message|"
    r"Questo messaggio è stato eliminato|Hai eliminato questo messaggio|Mensagem apagada|Esta mensagem foi apagada|"
    r"Você apagou esta mensagem|Dit bericht is verwijderd)\.?",
    re.IGNORECASE,
)


def edited_before(plan: Plan, group: Group, current: dict[str, Message], new: dict[str, Message]) -> int:
    """An export older than the note (a WhatsApp export ingested after a newer one) holding a
    message as it read before its edit: a new message whose id hashes its text, by the author
    and at the time of one message of the note, under a hashed id, that the export does not
    hold (edited since: an export holds every message up to it) — the export's only new one at
    that author and time, and no deleted message's placeholder. The note's message keeps its id
    and its text, the older one quoted below it (as when ingested oldest first,
    `replace_edited`); the older id is not written. An older text that the note's starts with
    (an export cut inside it, or an edit that only added to it) is held already: known. Returns
    the number of the note's messages changed so. A note's message that shows edits already
    (the newest export, then the middle one, ingested first) gets it quoted below its oldest
    text: unmarked, it is the text before them all. An export that ends after every message of
    the chat's notes is no older one (an export with its media attached, after one without:
    `<Media omitted>` is no text before an edit): its messages stay new."""
    changed = 0
    if max(group.ends.values()) > _newest_held(plan, group):
        return 0
    for message_id in sorted(new.keys() - group.edited):
        old = new[message_id]
        at, text = to_utc(old.timestamp), note_text(old.text)
        if not HASHED_ID_RE.fullmatch(message_id) or _DELETED_RE.fullmatch(text):
            continue
        if sum(m.author == old.author and to_utc(m.timestamp) == at for m in new.values()) > 1:
            continue
        after = [held.message_id for held in _gone_at(group, current, old.author, at)]
        if len(after) != 1:
            continue
        said = note_text(current[after[0]].text)
        if _DELETED_RE.fullmatch(said):
            continue  # (a deletion)
        del new[message_id]
        shown = versions(said)
        if any(version.startswith(text) for version in shown):  # its text cut short (a cut export), or its start: held already
            plan.report.messages_known += 1
            continue
        # unmarked, it is the text before every edit the note knows (newest, then middle, then
        # this oldest export ingested): quoted innermost
        current[after[0]] = replace(current[after[0]], text=_chained([*shown, text]))
        plan.report.messages_edited += 1
        changed += 1
    return changed


# a day note of a chat (`2024-03-04.md`, a sibling `2024-03-04.2.md`)
_DAY_NOTE_RE = re.compile(r"(\d{4}-\d{2}-\d{2})(?:\.\d+)?\.md")


def _newest_held(plan: Plan, group: Group) -> datetime:
    """The time of the newest message the chat's day notes hold (their `time_end`): those of
    its newest day."""
    folder = group.base.rsplit("/", 1)[0]
    days = [found for name in plan.listing(folder) if (found := _DAY_NOTE_RE.fullmatch(name))]
    newest = max((found[1] for found in days), default="")
    notes = [plan.existing(f"{folder}/{found[0]}") for found in days if found[1] == newest]
    ends = [_time_end(note) for note in notes if note is not None and note.source_id == group.meta.source_id]
    return max((end for end in ends if end is not None), default=datetime.max.replace(tzinfo=UTC))


def _time_end(note: Existing) -> datetime | None:
    try:
        return to_utc(datetime.fromisoformat(str(note.data.get("time_end")).replace("Z", "+00:00")))
    except ValueError:
        return None


def complete_cut(plan: Plan, path: str, group: Group, current: dict[str, Message], new: dict[str, Message]) -> int:
    """A message an earlier export cut short (a WhatsApp or Signal file cut in its last
    message: a copy or download cut off) had another id, hashing the text as far as it went.
    A new message whose id hashes its text is that message completed when the note holds, as
    its last message, one by the same author at the same time, under a hashed id the export no
    longer holds, whose text the new one's starts with — and the new one is the export's only
    new message by that author at that time (with another, "This message was deleted" say, the
    note's message is one deleted since, and "ok" is no cut "ok, see you"): that message keeps
    its id and takes the whole text (nothing is lost: the cut text is its start), and the new id
    is not written (a later ingest knows it, `messages_plan._same_messages`). A new text that adds to
    the note's and ends in an edit's mark vaultmind does not know (`_marked_edit`) is that
    message edited, not completed: it shows the new text, the one before quoted below it.
    Returns the number of the note's messages so completed or edited."""
    if not current:
        return 0
    last = max(to_utc(message.timestamp) for message in current.values())
    at_last = [(message.author, message_id) for message_id, message in new.items() if to_utc(message.timestamp) == last]
    changed = 0
    for message_id in sorted(new):
        whole = new[message_id]
        at, text = to_utc(whole.timestamp), note_text(whole.text)
        if at != last or not HASHED_ID_RE.fullmatch(message_id) or sum(a == whole.author for a, _ in at_last) > 1:
            continue
        cut = [
            old.message_id
            for old in _gone_at(group, current, whole.author, at)
            if len(note_text(old.text)) < len(text) and text.startswith(note_text(old.text))
        ]
        if len(cut) == 1:
            shown, edited = _finished(current[cut[0]].text, whole.text)
            current[cut[0]] = replace(current[cut[0]], text=shown)
            del new[message_id]
            changed += 1
            if edited:
                plan.report.messages_edited += 1
            else:
                plan.report.warnings.append(_completed(path, cut[0]))
    return changed


def _gone_at(group: Group, current: dict[str, Message], author: str, at: datetime) -> list[Message]:
    """The note's messages by `author` at `at`, under a hashed id (one that hashes its text,
    so a changed text had another) that this export no longer holds: the candidates for a
    message it holds edited or completed."""
    return [
        held
        for held in current.values()
        if held.message_id not in group.messages
        and HASHED_ID_RE.fullmatch(held.message_id)
        and held.author == author
        and to_utc(held.timestamp) == at
    ]


def _completed(path: str, message_id: str) -> str:
    return (
        f"{path}: message {message_id!r} was cut short in an earlier export (its file ended inside it); "
        "completed with its whole text from this one"
    )


def complete_email(plan: Plan, path: str, current: dict[str, Message], message_id: str, whole: Message) -> bool:
    """An email a note holds under its Message-ID, cut short by an earlier export (an mbox or
    `.eml` cut off inside its body), is completed by a whole copy: the same Message-ID, a text
    that starts with the one held and goes on, inside a line or on the next (`mail_cut_short`: a
    copy extended by a paragraph, a server's disclaimer, is no completion). It takes the whole text (nothing is lost: the cut
    text is its start), with a warning naming it; the cut copy ingested again is known
    (`completed`). Whether it was completed."""
    held = current[message_id]
    if not mail_cut_short(note_text(held.text), note_text(whole.text)):
        return False
    current[message_id] = replace(held, text=whole.text)
    plan.report.warnings.append(_completed(path, message_id))
    return True


def completed(message_id: str, said: str, export: Message, *, email: bool) -> bool:
    """Whether a note's message `said` is `export` (an export's text of it, under a hashed id,
    or an email's under its Message-ID) completed since (`complete_cut`, `complete_email`): the
    export was cut short inside it."""
    if email:
        return mail_cut_short(note_text(export.text), said)
    return HASHED_ID_RE.fullmatch(message_id) is not None and cut_short(note_text(export.text), said)


# below an edited message's text (Telegram), its text before the edit, quoted: "[edited <UTC
# time>, the text before:]" and the quoted lines, themselves holding any earlier edit's
_EDIT_MARK_RE = re.compile(r"\n\n\[edited(?: [^\]\n]*)?, the text before:\]\n((?:>[^\n]*(?:\n|\Z))+)\Z")


def _edit_time(value: str | None) -> datetime | None:
    """A message's `edited` time (None: never edited, or not readable)."""
    try:
        return to_utc(value) if value else None
    except VaultmindError:
        return None


def versions(text: str) -> list[str]:
    """The texts a message has shown, newest first: its text, then those before each edit
    (`apply_edit`), as its note keeps them."""
    out = []
    while (mark := _EDIT_MARK_RE.search(text)) is not None:
        out.append(text[: mark.start()])
        text = "\n".join(line[2:] if line.startswith("> ") else line[1:] for line in mark.group(1).rstrip("\n").split("\n"))
    out.append(text)
    return out


def apply_edit(held: Message, export: Message) -> Message | None:
    """`held` (a note's message, or an earlier export's of this ingest) as a later edit of it
    shows it: `export`'s text, and below it, quoted under `[edited <time>, the text before:]`,
    `held`'s whole text (its own earlier versions included: nothing is lost); the id stays.
    None when `export` is no later edit than `held` (not edited, or edited before `held`'s
    edit: an older export changes nothing) or holds `held`'s text already."""
    later, before = _edit_time(export.edited), _edit_time(held.edited)
    if later is None or (before is not None and later <= before):
        return None
    own, said = note_text(export.text), note_text(held.text)
    if said == own or said in versions(own)[1:]:
        return None if said == own else export
    return replace(export, text=_with_before(own, said, export.edited))


def _with_before(own: str, said: str, edited: str | None) -> str:
    """A message's text `own` with the text before its edit, `said`, quoted below it under
    `[edited <UTC time>, the text before:]` (`[edited, the text before:]` when the export does
    not say when: WhatsApp)."""
    quoted = "\n".join(f"> {line}" if line else ">" for line in said.split("\n"))
    return f"{own}\n\n[edited{' ' + edited if edited else ''}, the text before:]\n{quoted}"


_REPLACED_RE = re.compile(r"\n\n\[replaced: [^\]\n]*\]")


_REPLACED_END_RE = re.compile(_REPLACED_RE.pattern + r"\Z")


def marked(text: str, own: str) -> bool:
    """Whether `text` (a message in a note) is `own` (its text, as the export gives it) with the
    mark `mark_replaced` puts after it, as its own last paragraph: a message whose own text
    ends in such a line (a vaultmind note pasted into ChatGPT) is not taken for marked."""
    return text.startswith(own) and _REPLACED_RE.fullmatch(text, len(own)) is not None


def mark_replaced(group: Group, current: dict[str, Message]) -> int:
    """Mark in `current` (a note's messages) those the export holds off the branch it shows
    (`SourceBatch.replaced`: a ChatGPT answer regenerated, a prompt edited) with a last line
    `[replaced: why]`, so a reader and the memory can tell them from what was said after; a
    message of the branch shown loses such a mark (switched back to in ChatGPT). Only an export
    that holds every message of the note changes a mark: an older one, which does not know the
    messages that came after it, changes none. Nothing is removed from the note. The number of
    messages changed."""
    if group.replaced is None or not set(current) <= {*group.messages, *group.replaced}:
        return 0
    changed = 0
    for message_id, message in sorted(current.items()):
        text = note_text(message.text)
        why = group.replaced.get(message_id)
        shown = group.messages.get(message_id)
        if why is not None and _REPLACED_END_RE.search(text) is None:  # (a text of its own so ending reads as marked)
            current[message_id] = replace(message, text=f"{text}\n\n[replaced: {why}]")
        elif shown is not None and marked(text, own := note_text(shown.text)):
            current[message_id] = replace(message, text=own)
        else:
            continue
        changed += 1
    return changed
