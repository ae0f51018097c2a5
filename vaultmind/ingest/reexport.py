"""A chat exported again in another form than the export its notes were written from: the same
messages under ids that hash what changed (`common.MessageIds`: author, UTC time, text). A
contact saved since (the export says "Carla Ruiz" where it said "+49 170 1234567"), a phone
that writes seconds where the other wrote none (iPhone and Android), a phone set to another
language ("<Medien ausgeschlossen>" for "<Media omitted>"). Such a message is the note's, known:
the note keeps its text, author and id (links to it keep working), and only the messages the
notes do not hold are written."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime

from vaultmind.ingest.common import HASHED_ID_RE, strip_invisible
from vaultmind.ingest.held import read_existing
from vaultmind.ingest.model import SourceBatch
from vaultmind.ingest.names import batch_folder
from vaultmind.ingest.plan import Plan
from vaultmind.ingest.revisions import versions
from vaultmind.markdown.render import Message, note_text, to_utc

# WhatsApp's placeholders for what an export leaves out, in the languages of its notices
# (English, German, Spanish, French, Italian, Portuguese, Dutch): Android's "<Media omitted>",
# iOS's "image omitted" (one per kind of file), and a deleted message's line. Compared folded,
# without the angle brackets, invisible marks and a final full stop.
_PLACEHOLDERS = {
    "media": (
        "media omitted", "medien ausgeschlossen", "multimedia omitido", "archivo omitido", "médias omis",
        "fichier omis", "media omessi", "mídia oculta", "multimédia omitido", "arquivo de mídia oculto",
        "media weggelaten",
        "image omitted", "video omitted", "audio omitted", "sticker omitted", "gif omitted", "document omitted",
        "bild weggelassen", "video weggelassen", "audio weggelassen", "sticker weggelassen", "gif weggelassen",
        "dokument weggelassen", "imagen omitida", "video omitido", "audio omitido", "sticker omitido",
        "gif omitido", "documento omitido", "image absente", "vidéo absente", "audio omis", "autocollant omis",
        "gif retiré", "document omis", "immagine omessa", "video omesso", "audio omesso", "sticker omesso",
        "gif omessa", "documento omesso", "imagem ocultada", "vídeo omitido", "áudio ocultado",
        "figurinha omitida", "gif omitido", "documento omitido", "afbeelding weggelaten", "video weggelaten",
        "audio weggelaten", "sticker weggelaten", "gif weggelaten", "document weggelaten",
    ),
    "deleted": (
        "this message was deleted", "you deleted this message", "diese nachricht wurde gelöscht",
        "du hast diese nachricht gelöscht", "se eliminó este mensaje", "eliminaste este mensaje",
        "ce message a été supprimé", "vous avez supprimé ce message", "questo messaggio è stato eliminato",
        "hai eliminato questo messaggio", "esta mensagem foi apagada", "você apagou esta mensagem",
        "mensagem apagada", "dit bericht is verwijderd", "je hebt dit bericht verwijderd",
    ),
}
_KIND_OF = {said: kind for kind, forms in _PLACEHOLDERS.items() for said in forms}
_WRAP_RE = re.compile(r"^<(.*)>$")
_HASHED_META_RE = re.compile(r'^> %% vaultmind id="(h-[0-9a-f]{16})"', re.M)  # a meta line's hashed id
_DAY_NOTE_RE = re.compile(r"\d{4}-\d\d-\d\d\.(?:\d+\.)?md$")  # a day's note, or a numbered sibling


def placeholder_kind(text: str) -> str | None:
    """The kind ("media", "deleted") of a WhatsApp placeholder in any of its languages, or None
    for a message's own text."""
    said = " ".join(strip_invisible(text).split()).casefold()
    said = _WRAP_RE.sub(r"\1", said).strip().rstrip(".").strip()
    return _KIND_OF.get(said)


def comparable(text: str) -> str:
    """A message's text as two exports of it compare: a placeholder as its kind, one language
    as any other; else its text as the note keeps it."""
    kind = placeholder_kind(text)
    return f"\0{kind}" if kind is not None else note_text(text)


def _minute(at: datetime | str) -> datetime:
    return to_utc(at).replace(second=0, microsecond=0)


def has_seconds(messages: Iterable[Message]) -> bool:
    """Whether an export writes seconds: one of its times is not on the minute (an Android
    export has none; an iPhone's has them, and one time in sixty on the minute)."""
    return any(to_utc(message.timestamp).second for message in messages)


def _same_time(held: Message, incoming: Message, seconds: bool) -> bool:
    """Whether `held` (a note's) and `incoming` (of an export that writes `seconds`) may be one
    message by their times: the same time, or the same minute when one of the two exports
    wrote no seconds — the note's time on the minute and the export's with seconds, or the
    note's with seconds and the export's without."""
    if to_utc(held.timestamp) == to_utc(incoming.timestamp):
        return True
    if _minute(held.timestamp) != _minute(incoming.timestamp):
        return False
    return (to_utc(held.timestamp).second == 0) == seconds


def pair(
    held: Iterable[Message], incoming: Iterable[Message], seconds: bool, renamed: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Incoming id → the id of the held message it is, one to one, in time order: same author (a
    held author `renamed` as the export names them), same comparable text (`comparable`; a held
    message edited since, each text it showed) and a time `_same_time` allows. A held message
    pairs once, so two "<Media omitted>" of one minute stay two."""
    renamed = renamed or {}
    waiting: dict[tuple[str, datetime, str], list[Message]] = {}
    for message in sorted(held, key=_in_time):
        author = renamed.get(message.author, message.author)
        for text in sorted({comparable(text) for text in versions(note_text(message.text))}):
            waiting.setdefault((author, _minute(message.timestamp), text), []).append(message)
    pairs: dict[str, str] = {}
    taken: set[str] = set()
    for message in sorted(incoming, key=_in_time):
        key = (message.author, _minute(message.timestamp), comparable(message.text))
        for candidate in waiting.get(key, ()):
            if candidate.message_id not in taken and _same_time(candidate, message, seconds):
                taken.add(candidate.message_id)
                pairs[message.message_id] = candidate.message_id
                break
    return pairs


def _in_time(message: Message) -> tuple[datetime, str]:
    return (to_utc(message.timestamp), message.message_id)


def hashed(messages: Iterable[Message]) -> list[Message]:
    """The messages whose ids hash their author, time and text (no platform id)."""
    return [message for message in messages if HASHED_ID_RE.fullmatch(message.message_id)]


RENAME_MIN = 2  # messages of one author found again under one other name, for that to be a rename


def author_renames(
    held: Iterable[Message], held_ids: set[str], batch: SourceBatch, chat_renamed: tuple[str, str] | None
) -> dict[str, tuple[str, int]]:
    """Held author → (the name the export gives them, how many of their messages say so), for
    an author renamed since the notes were written (a number saved as a contact, a contact
    renamed). The evidence must be strong: the export names the held author nowhere; every one
    of their held messages in the span the export covers is found again (same time and text)
    under one other name and no other, at least `RENAME_MIN` of them — or one, when the chat
    was renamed so too (`chat_renamed`: a chat of two is named after the contact). A name two
    held authors would take is neither's."""
    incoming, held = hashed(batch.messages), hashed(held)
    if not incoming or not held:
        return {}
    ids = {message.message_id for message in batch.messages}
    authors = {message.author for message in batch.messages}
    start, end = min(map(_utc, incoming)), max(map(_utc, incoming))
    gone: dict[str, list[Message]] = {}
    for message in held:
        if message.author not in authors and message.message_id not in ids and start <= _utc(message) <= end:
            gone.setdefault(message.author, []).append(message)
    seconds = has_seconds(batch.messages)
    unheld: dict[str, list[Message]] = {}  # by author
    said_by: dict[tuple[datetime, str], set[str]] = {}  # (minute, comparable text) → its authors
    for message in incoming:
        if message.message_id not in held_ids:
            unheld.setdefault(message.author, []).append(message)
            said_by.setdefault((_minute(message.timestamp), comparable(message.text)), set()).add(message.author)
    found: dict[str, tuple[str, int]] = {}
    for old, theirs in sorted(gone.items()):
        fits = [
            name
            for name in sorted(_who_said(theirs[0], said_by) - {old})
            if len(pair(theirs, unheld[name], seconds, {old: name})) == len(theirs)
        ]
        if len(fits) == 1 and len(theirs) >= (1 if chat_renamed == (old, fits[0]) else RENAME_MIN):
            found[old] = (fits[0], len(theirs))
    names = [name for name, _ in found.values()]
    return {old: (name, n) for old, (name, n) in found.items() if names.count(name) == 1}


def _who_said(held: Message, said_by: Mapping[tuple[datetime, str], set[str]]) -> set[str]:
    """The authors of the export who may have written `held` (a message of the same minute
    and comparable text, `pair`): the only names its author may have now, each tried alone
    (trying every author of a large group for every renamed one was a group's square)."""
    texts = {comparable(text) for text in versions(note_text(held.text))}
    return {name for text in texts for name in said_by.get((_minute(held.timestamp), text), ())}


def _utc(message: Message) -> datetime:
    return to_utc(message.timestamp)


def _held_of(plan: Plan, batch: SourceBatch) -> tuple[set[str], list[Message]]:
    """The ids of the messages the notes of `batch`'s conversation (under its id or an earlier
    one, `known_in`) hold on the days its messages are of (the vault's clock's, or UTC's), and
    the messages of those of them that hold one the export does not (read by their meta lines
    first: an export ingested again parses no note here)."""
    platform = "/".join(batch_folder(batch).split("/")[:3])
    sources = plan.source_folders(platform)
    own = {batch.meta.source_id, *batch.known_in}
    dates: set[date] = set()
    for at in map(_utc, hashed(batch.messages)):
        dates.update((at.astimezone(plan.zone).date(), at.date()))
    days = {day.isoformat() for day in dates}
    ids = {message.message_id for message in batch.messages}
    held_ids: set[str] = set()
    held: list[Message] = []
    for folder in sorted({f for source_id in own for f in sources.get(source_id, ())}):
        for name in plan.listing(folder):
            note = plan.existing(f"{folder}/{name}") if name.split(".", 1)[0] in days else None
            if note is None or note.source_id not in own:
                continue
            these = _HASHED_META_RE.findall(note.body)
            if len(these) != note.body.count("\n> %%") or not set(these) <= ids:  # (a meta line of another shape: read whole)
                messages = note.messages()
                held_ids.update(messages)
                held.extend(messages.values())
            else:
                held_ids.update(these)
    return held_ids, held


def knowing_renames(plan: Plan, batch: SourceBatch) -> SourceBatch:
    """`batch` knowing which of its authors its notes hold under an earlier name (`author_renames`,
    `SourceBatch.renamed_authors`), said in the ingest's report when it writes one of its
    messages (an export ingested again, nothing new in it, says nothing). A chat of two taken
    for the one its contact's earlier name named (`contact_renamed`: `whatsapp:+49 170 1234567`
    for "Carla Ruiz", whose id `known_in` keeps) is that contact's rename."""
    if batch.meta.kind != "chat" or batch.bucket != "day" or not hashed(batch.messages):
        return batch  # (a platform's ids name no author's name)
    held_ids, held = _held_of(plan, batch)
    if not held_ids:
        return batch
    platform, _, name = batch.meta.source_id.partition(":")
    authors = {message.author for message in batch.messages}
    was = next((i.partition(":")[2] for i in batch.known_in if i.startswith(f"{platform}:") and i.partition(":")[2] in authors), None)
    renamed_chat = (name, was) if was is not None and name not in authors else None
    renames = author_renames(held, held_ids, batch, renamed_chat)
    ids = frozenset(message.message_id for message in batch.messages)
    if renamed_chat is not None:
        plan.said_if_written.append((ids, (
            f"{platform}: the chat {was!r} is the chat {name!r} of an earlier export (its contact renamed): "
            f"its new messages join that chat's notes in {batch_folder(batch)}"
        )))
    for old, (new, n) in sorted(renames.items()):
        plan.said_if_written.append((ids, (
            f"{batch.meta.source_id}: {new} is the {old} of the earlier export ({n} of their messages found "
            f"again, same time and text): those already in the vault stay as they are, under {old}"
        )))
    if not renames:
        return batch
    return replace(batch, renamed_authors=tuple((old, new) for old, (new, _) in sorted(renames.items())))


def contact_renamed(plan: Plan, batch: SourceBatch, sources: Mapping[str, list[str]]) -> list[tuple[str, str]]:
    """(source id, scope) of the chat of two that `batch` is, named after its contact as an
    earlier export named them (`whatsapp:+49 170 1234567` of "WhatsApp Chat with Carla Ruiz",
    the number saved as a contact since). Only for a chat with no notes of its own; such a
    source is one whose name `X` names an author of its notes and none of the export's, while
    the chat's new name is an author of the export, and whose notes of the export's days share
    most of the messages either holds in the span both cover, at least `RENAME_MIN` of them,
    the contact's under either name (`pair`, same time and text). Two chats that share a
    forwarded message or two stay two."""
    platform, _, name = batch.meta.source_id.partition(":")
    authors = {message.author for message in batch.messages}
    if sources.get(batch.meta.source_id) or name not in authors:
        return []
    days = {_utc(message).astimezone(plan.zone).date().isoformat() for message in batch.messages}
    seconds = has_seconds(batch.messages)
    found = []
    for source_id, folders in sorted(sources.items()):
        before = source_id.partition(":")[2]
        if not source_id.startswith(f"{platform}:") or before in authors or before.casefold() == name.casefold():
            continue
        names = {
            f"{folder}/{note_name}": note_name.split(".", 1)[0]
            for folder in folders
            for note_name in plan.listing(folder)
            if _DAY_NOTE_RE.match(note_name)
        }
        if not _mostly_same_days(days, set(names.values())):  # (its listing only: no note read)
            continue
        held = [
            message
            for rel, day in sorted(names.items())
            if day in days
            and (note := read_existing(plan.vault, rel)) is not None  # (not kept)
            and note.source_id == source_id
            for message in note.messages().values()
        ]
        if before not in {message.author for message in held}:
            continue
        shared = len(pair(held, batch.messages, seconds, {before: name}))
        if shared >= RENAME_MIN and _most_of_span(held, batch.messages, shared):
            found.append((source_id, source_id.replace(":", "/", 1)))
    return found


def _mostly_same_days(ours: set[str], theirs: set[str]) -> bool:
    """Whether two chats' day notes (by their day) are mostly of the same days, in the span both
    cover: one chat read twice has notes on the days it was written in."""
    if not ours or not theirs:
        return False
    start, end = max(min(ours), min(theirs)), min(max(ours), max(theirs))
    shared = len(ours & theirs)
    return all(2 * shared > sum(start <= day <= end for day in side) for side in (ours, theirs))


def _most_of_span(held: list[Message], incoming: Sequence[Message], shared: int) -> bool:
    """Whether `shared` messages are more than half of those each side holds in the span both
    cover: one chat read twice, not two chats with a message alike."""
    start = max(min(map(_utc, held)), min(map(_utc, incoming)))
    end = min(max(map(_utc, held)), max(map(_utc, incoming)))
    start, end = start.replace(second=0), end.replace(second=59)
    return all(2 * shared > sum(start <= _utc(m) <= end for m in side) for side in (held, incoming))
