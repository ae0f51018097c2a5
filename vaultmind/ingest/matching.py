"""Which notes already hold a conversation: a batch under the source id an earlier vaultmind gave
it (a folder named otherwise, a numbered download, a file named alone), exports of one
conversation joined, and the notes elsewhere in the vault that hold a group's messages (a note
renamed or moved, an email thread ingested before) — the home its new messages join."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from vaultmind.ingest.held import Existing, carries, message_ids, read_existing
from vaultmind.ingest.model import IngestReport, SourceBatch
from vaultmind.ingest.names import batch_folder, batch_folders, in_siblings, note_path, scope_folder, slugify
from vaultmind.ingest.plan import Group, Plan
from vaultmind.ingest.reexport import contact_renamed
from vaultmind.ingest.slack import ALONE_TEAM
from vaultmind.markdown.render import to_utc
from vaultmind.vault.layout import SOURCES_DIR


def held_elsewhere(plan: Plan, group: Group) -> dict[str, list[str]]:
    """Message id → the notes outside the group's own (its path and siblings) that hold it, or
    hold a message it answers: of its source for chat, of any mailbox for email. A chat's
    notes are looked for in its folder and in the folders of its platform that hold the same
    source (the chat renamed on its platform: `telegram/wohnung-team/` and, since, `telegram/
    wg-lindenstrasse/`), or, when its folder is gone (renamed in Obsidian), under its
    platform's (`sources/chat/irc/`). Never another source's: one person's "Happy new year!"
    sent to two chats in the same minute has one hashed id in both. When some of the messages
    are not found so, they are looked for anywhere else in the vault too (`placed_outside`): a
    note moved out of `sources/<kind>/` (out of `sources/`, into a folder of yours, a note is
    yours, never written to, but its messages are known)."""
    kind = group.meta.kind
    folder = f"{SOURCES_DIR}/email" if kind == "email" else group.base.rsplit("/", 1)[0]
    parts = folder.split("/")
    folders = [folder]
    if kind != "email" and len(parts) > 3:
        platform = _platform(folder)
        if not (plan.vault / folder).is_dir():
            folders = [platform]
        else:
            sources = plan.source_folders(platform)
            for source_id in sorted({group.meta.source_id, *group.known_in}):
                folders += [f for f in sources.get(source_id, ()) if f not in folders]
    ids = sorted({*group.messages, *group.related})
    pools = [(plan.placed(f), False) for f in folders]
    if any(not any(_holds(group, i, source_id) for placed, _ in pools for _, source_id in placed.get(i, ())) for i in ids):
        pools.append((plan.placed_outside(kind), True))  # (every message found: a note moved elsewhere adds nothing)
    out: dict[str, list[str]] = {}
    for placed, moved in pools:
        for message_id in ids:
            for path, source_id in placed.get(message_id, ()):
                if not in_siblings(path, group.base) and _holds(group, message_id, source_id, moved=moved):
                    out.setdefault(message_id, []).append(path)
    return out


def _holds(group: Group, message_id: str, source_id: str, *, moved: bool = False) -> bool:
    """Whether a note of `source_id` holding `message_id` holds that message of the group: a
    note of its conversation (`_of_group`), or, for an id unique across its platform's sessions
    (`SourceBatch.unique_ids`), a note of another agent session (a session resumed repeats the
    earlier one's turns)."""
    if _of_group(group, source_id, moved=moved):
        return True
    return message_id in group.unique_ids and source_id.startswith(AGENT_PREFIX)


def _of_group(group: Group, source_id: str, *, moved: bool = False) -> bool:
    """Whether a note of `source_id` holds the group's conversation: any for email, whose
    Message-IDs are global; for chat, its source's, or an earlier id's (`known_in`). A Slack
    note `moved` out of `sources/`, where its channel's other names are not looked for (a
    channel renamed, or named by its file alone), counts for any channel of its workspace that
    shares a message's `ts` with it."""
    if group.meta.kind == "email" or source_id == group.meta.source_id or source_id in group.known_in:
        return True
    own = group.meta.source_id
    slack = own.startswith("slack:") and source_id.startswith("slack:")
    return moved and slack and source_id.rsplit("/", 1)[0] == own.rsplit("/", 1)[0]


def own_note(plan: Plan, group: Group) -> bool:
    """Whether a chat group's own note is there, of its source: a day's (written on any clock),
    a conversation's or a session's. It is the group's note; a home elsewhere is for a note
    renamed or moved (or an email thread)."""
    if group.meta.kind == "email":
        return False
    note = plan.existing(group.base)
    return note is not None and note.source_id == group.meta.source_id and str(note.data.get("kind")) == group.meta.kind


def home_note(plan: Plan, group: Group, elsewhere: dict[str, list[str]]) -> Existing | None:
    """The note of vaultmind's in `sources/` outside the group's own that holds most of its
    messages (or the messages it answers), or, for email, whose messages answer them (a reply
    ingested before its parent), when there is one: the group's new messages join it."""
    counts: dict[str, int] = {}
    for paths in [*elsewhere.values(), *_answering(plan, group).values()]:
        for path in paths:
            counts[path] = counts.get(path, 0) + 1
    for path in sorted(counts, key=lambda p: (-counts[p], p)):
        note = plan.existing(path) if path.startswith(SOURCES_DIR + "/") else None
        if note is not None and group.unique_ids and note.source_id != group.meta.source_id:
            continue  # another agent session holding turns a resumed one repeats: known there, not this one's note
        if note is not None and note.owned and str(note.data.get("kind")) == group.meta.kind and path not in plan.claimed and carries(note):
            return note
    return None


def _answering(plan: Plan, group: Group) -> dict[str, list[str]]:
    """Of an email group's messages and the messages they answer: id → the thread notes outside
    the group's own whose messages answer it and that do not hold it (a reply ingested before
    its parent, or beside another reply to it). By References, such a message is of their thread."""
    if group.meta.kind != "email":
        return {}
    answering = plan.answering(f"{SOURCES_DIR}/email")
    out: dict[str, list[str]] = {}
    for message_id in sorted({*group.messages, *group.related}):
        for path in answering.get(message_id, ()):
            if not in_siblings(path, group.base):
                out.setdefault(message_id, []).append(path)
    return out


AGENT_PREFIX = "agent:"  # the source ids of agent sessions
_NUMBERED = " (*)"  # a legacy source id ending so: any download number, " (1)", " (2)" …


def as_earlier(plan: Plan, batch: SourceBatch) -> SourceBatch:
    """`batch` under the source id (scope, note) an earlier vaultmind gave it, when its notes are
    there: a day-bucketed source when a folder of its platform holds that source (a Slack
    workspace named by its export's folder, a WhatsApp chat by a numbered download, a Slack
    channel ingested by its name alone: `_by_name`) — or, when the new id has notes too, with
    the earlier ids' messages known (`known_in`) — another when its note holds the batch's first
    message, same id and text (an agent transcript named by its file alone). Not written a
    second time under the new id. A source renamed whole, its notes' names kept (a mailbox
    account an earlier vaultmind spelled `strau-strae.de`), stays under its earlier id when the
    vault files it there and not under the new one: its new threads join the old ones' account
    (`_filed_under_earlier_id`)."""
    legacy = batch.legacy_source_id
    if not batch.messages or not (legacy or batch.by_name or batch.name_only):
        return batch
    scope = batch.legacy_scope or batch.meta.scope
    if batch.bucket == "day":
        platform = _platform(f"{SOURCES_DIR}/{batch.meta.kind}/{scope_folder(scope)}")
        sources = plan.source_folders(platform)
        before: list[tuple[str, str]] = []  # (source id, scope)
        if legacy and legacy.endswith(_NUMBERED):  # "whatsapp:Dinner (*)": a download numbered (1), (2) … before
            stem = legacy[: -len(_NUMBERED)]
            numbers = sorted(s[len(stem) :] for s in sources if s.startswith(stem) and re.fullmatch(r" \(\d{1,2}\)", s[len(stem) :]))
            before = [(stem + n, batch.meta.scope + n) for n in numbers] + _case_renamed(plan, batch, stem, sources)
            before += contact_renamed(plan, batch, sources)  # (a number saved as a contact since)
        elif legacy and sources.get(legacy):
            before = [(legacy, scope)]
        before += [kin for kin in _by_name(plan, batch, sources) if kin not in before]
        if not before:
            return batch
        if sources.get(batch.meta.source_id):  # its own notes too: theirs and the earlier ones' messages are known
            return replace(batch, known_in=tuple(i for i, _ in before))
        (legacy, scope), *rest = before  # (its own id's messages known too: in a note moved out of sources/)
        known = (batch.meta.source_id, *(i for i, _ in rest))
        return replace(batch, meta=replace(batch.meta, source_id=legacy, scope=scope), known_in=known)
    if not legacy:
        return batch
    earlier = replace(
        batch, meta=replace(batch.meta, source_id=legacy, scope=scope), note_name=batch.legacy_note_name or batch.note_name
    )
    if batch.legacy_note_name is None and _filed_under_earlier_id(plan, batch, earlier):
        return earlier
    note = plan.existing(note_path(earlier))
    first = batch.messages[0]
    held = note.messages().get(first.message_id) if note is not None and note.source_id == legacy else None
    return earlier if batch.held_as(first, held) else batch


def _filed_under_earlier_id(plan: Plan, batch: SourceBatch, earlier: SourceBatch) -> bool:
    """Whether the vault holds notes of `earlier`'s source (the id an earlier vaultmind gave
    `batch`'s) in its platform's folder, and none of `batch`'s own id in its own."""
    own = plan.source_folders(_platform(batch_folder(batch))).get(batch.meta.source_id)
    before = plan.source_folders(_platform(batch_folder(earlier))).get(earlier.meta.source_id)
    return bool(before) and not own


def in_earlier_folder(plan: Plan, batch: SourceBatch) -> SourceBatch:
    """`batch` in the folder an earlier vaultmind gave its scope (`names.earlier_scope_folder`:
    `whatsapp/strae-crew` for "Straße Crew") when its source's notes are there and none are in
    the folder its scope has now: a conversation's notes never split across two folders."""
    own, *earlier = batch_folders(batch)
    if not earlier:
        return batch
    folders = plan.source_folders(_platform(own)).get(batch.meta.source_id, [])
    return replace(batch, folder=earlier[0]) if earlier[0] in folders and own not in folders else batch


def _platform(folder: str) -> str:
    """The folder of a conversation's platform: `sources/chat/whatsapp` of
    `sources/chat/whatsapp/team`."""
    return "/".join(folder.split("/")[:3])


def _case_renamed(plan: Plan, batch: SourceBatch, stem: str, sources: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(source id, scope) of a WhatsApp chat whose name differs from `stem` (the batch's id) only
    in case — a contact renamed "alice" → "Alice", a file renamed — and which shares most of the
    messages either holds in the span both cover (a WhatsApp export holds the whole chat; their
    ids hash author, time and text): the same chat, whose messages were otherwise all written
    again beside its notes. Two chats so named that share a message or two ("ok" sent to both in
    one minute, a greeting forwarded to each) stay two."""
    ours = {message.message_id: to_utc(message.timestamp) for message in batch.messages}
    found = []
    for source_id in sorted(sources):
        if source_id == stem or source_id.casefold() != stem.casefold():
            continue
        notes = (
            plan.existing(f"{folder}/{name}")
            for folder in sources[source_id]
            for name in plan.listing(folder)
        )
        theirs = {
            message_id: to_utc(message.timestamp)
            for note in notes
            if note is not None and note.source_id == source_id
            for message_id, message in note.messages().items()
        }
        if theirs and _mostly_shared(ours, theirs):
            found.append((source_id, source_id.replace(":", "/", 1)))
    return found


def _mostly_shared(ours: dict[str, datetime], theirs: dict[str, datetime]) -> bool:
    """Whether two sets of messages (id → UTC time) share more than half of those each holds in
    the span both cover: one chat read twice, not two chats with a message alike."""
    start, end = max(min(ours.values()), min(theirs.values())), min(max(ours.values()), max(theirs.values()))
    shared = len(ours.keys() & theirs.keys())
    return all(2 * shared > sum(start <= at <= end for at in side.values()) for side in (ours, theirs))


def _by_name(plan: Plan, batch: SourceBatch, sources: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(source id, scope) of the notes that hold `batch`'s conversation under another id because
    one of the two ingests knew it by its name only (a Slack channel's file given alone: no
    channel id): the ids it has so (`SourceBatch.by_name`), and, for a batch `name_only`, the
    sources of its platform whose folder has its name (`slack/t9/general`). Each only of the
    batch's own workspace (its source id up to the last `/`), or holding one of its messages:
    `slack:workspace/general`, a channel file without a team, is not every workspace's #general."""
    own = batch.meta.source_id
    found = [(i, scope) for i, scope in batch.by_name if i != own and sources.get(i)]
    if batch.name_only:
        folder = batch_folder(batch)
        depth, name = folder.count("/"), folder.rsplit("/", 1)[-1]
        for source_id, folders in sorted(sources.items()):
            here = [f for f in folders if f.count("/") == depth and f.rsplit("/", 1)[-1] == name]
            if source_id != own and here and (scope := _scope_of(plan, here[0])):
                found.append((source_id, scope))
    workspace = own.rsplit("/", 1)[0]
    ids = sorted({message.message_id for message in batch.messages})

    def holds_one(source_id: str) -> bool:
        if not same_workspace(own, source_id):
            return False
        placed = [plan.placed(f) for f in sources[source_id]]
        return any(s == source_id for held in placed for i in ids for _, s in held.get(i, ()))

    named = [(i, scope) for i, scope in found if i.rsplit("/", 1)[0] == workspace or holds_one(i)]
    return named + [kin for kin in _sharing(plan, batch, sources) if kin[0] not in {i for i, _ in named}]


def _sharing(plan: Plan, batch: SourceBatch, sources: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(source id, scope) of the sources whose notes of the days of `batch`'s messages (on the
    vault's clock, or UTC's) hold one of them: the conversation under another name (a Slack
    channel renamed between its file and its export; Slack's message ids are the channel's).
    For a batch of an export (`by_name`), only the sources of its workspace (or of one its
    `by_name` names) known by their name (their id ends in their folder's name): a channel's
    file; for a channel's file (`name_only`), any source — as one of a same-named folder is
    joined when it holds one of its messages (`_by_name`): a file's messages may name no team."""
    own = batch.meta.source_id
    workspaces = {own.rsplit("/", 1)[0], *(i.rsplit("/", 1)[0] for i, _ in batch.by_name)}
    ids = {message.message_id for message in batch.messages}
    days: set[str] = set()
    for message in batch.messages:  # its day on the vault's clock, and in UTC (another clock's)
        at = to_utc(message.timestamp)
        days.update({at.astimezone(plan.zone).date().isoformat(), at.date().isoformat()})
    found: list[tuple[str, str]] = []
    for source_id, folders in sorted(sources.items()):
        if source_id == own or (not batch.name_only and source_id.rsplit("/", 1)[0] not in workspaces):
            continue
        if not same_workspace(own, source_id):  # a file whose messages name another team
            continue
        for folder in folders:
            if not batch.name_only and slugify(source_id.rsplit("/", 1)[-1]) != folder.rsplit("/", 1)[-1]:
                continue
            rels = [f"{folder}/{name}" for name in plan.listing(folder) if name.split(".", 1)[0] in days]
            notes = (plan.cache.get(rel) or read_existing(plan.vault, rel) for rel in rels)  # not kept: only its ids are
            held = next((n for n in notes if n is not None and n.source_id == source_id and ids & set(message_ids(n.raw))), None)
            if held is not None:
                found.append((source_id, str(held.data.get("scope") or "")))
                break
    return [(i, scope) for i, scope in found if scope]


def joined_batches(batches: Sequence[SourceBatch], report: IngestReport) -> list[SourceBatch]:
    """The batches of one ingest, each conversation known by its name only (`SourceBatch.
    name_only`: a Slack channel's file) given with its export joined to the export's batch, as
    when they come in two ingests (`_by_name`): the export's batch whose `by_name` names it (of
    its workspace), or that shares a message with it (the channel renamed, or a file whose
    messages name no team). Its messages the export does not hold join the export's batch,
    under the channel's id; one both hold is the export's (with its names), known. Files of
    one channel without its export that share a message are joined too, into the one with the
    most messages."""
    out = _one_name(batches)
    for lone in [batch for batch in out if batch.name_only]:
        kin = [(shared, -n) for n, batch in enumerate(out) if (shared := _kinship(lone, batch)) is not None]
        if kin:
            out = _join(out, lone, out[-max(kin)[1]], report)
    for lone in [batch for batch in out if batch.name_only]:  # files of one channel, without its export
        ids = {m.message_id for m in lone.messages}
        sharing = [
            b
            for b in out
            if b.name_only
            and b.meta.kind == lone.meta.kind
            and same_workspace(lone.meta.source_id, b.meta.source_id)
            and ids & {m.message_id for m in b.messages}
        ]
        best = min(sharing, key=lambda b: (-len(b.messages), b.meta.source_id), default=lone)
        if best is not lone and any(b is lone for b in out):
            out = _join(out, lone, best, report)
    return out


def _join(batches: list[SourceBatch], lone: SourceBatch, into: SourceBatch, report: IngestReport) -> list[SourceBatch]:
    """`batches` with `lone`'s messages that `into` does not hold joined to `into` (the others
    known), and `lone` left out."""
    held = {message.message_id for message in into.messages}
    joined = replace(into, messages=(*into.messages, *(m for m in lone.messages if m.message_id not in held)))
    report.messages_known += sum(1 for m in lone.messages if m.message_id in held)
    return [joined if batch is into else batch for batch in batches if batch is not lone]


def _one_name(batches: Sequence[SourceBatch]) -> list[SourceBatch]:
    """The batches of one ingest, the exports of a conversation renamed between them (a Slack
    channel's export as #general and as #announcements: one source id, two scopes) under the
    name of the one with the newest message, so each day is one note; each knows the names of
    all (`by_name`)."""
    scopes: dict[str, set[str]] = {}
    for batch in batches:
        if batch.by_name:
            scopes.setdefault(batch.meta.source_id, set()).add(batch.meta.scope)
    renamed = {source_id for source_id, names in scopes.items() if len(names) > 1}
    if not renamed:
        return list(batches)
    out = list(batches)
    for source_id in sorted(renamed):
        mine = [batch for batch in out if batch.by_name and batch.meta.source_id == source_id]
        newest = max(mine, key=lambda b: (max(to_utc(m.timestamp) for m in b.messages), b.meta.scope))
        names = tuple(dict.fromkeys(kin for batch in mine for kin in batch.by_name))
        out = [
            replace(batch, meta=newest.meta, by_name=names) if batch.by_name and batch.meta.source_id == source_id else batch
            for batch in out
        ]
    return out


def _kinship(lone: SourceBatch, batch: SourceBatch) -> int | None:
    """How many messages `lone` (known by its name only) shares with `batch` of an export, when
    `batch` is its conversation (`joined_batches`); else None."""
    if batch.name_only or not batch.by_name or batch.meta.kind != lone.meta.kind:
        return None
    if not same_workspace(lone.meta.source_id, batch.meta.source_id):  # a `ts` shared by chance
        return None
    shared = len({m.message_id for m in lone.messages} & {m.message_id for m in batch.messages})
    named = lone.meta.source_id in {i for i, _ in batch.by_name}
    same = lone.meta.source_id.rsplit("/", 1)[0] == batch.meta.source_id.rsplit("/", 1)[0]
    return shared if shared or (named and same) else None


def same_workspace(one: str, other: str) -> bool:
    """Whether two Slack sources (`slack:<team>/<channel>`) may be of one workspace: of one team,
    or one of them a channel's file whose messages name no team (`ALONE_TEAM`). A channel's file
    whose messages name their team is never another team's channel, even where their `ts`
    meet: Slack's ids are the channel's, and two workspaces' channels may share one."""
    if not (one.startswith("slack:") and other.startswith("slack:")):
        return True
    teams = {source_id.split(":", 1)[1].rsplit("/", 1)[0] for source_id in (one, other)}
    return len(teams) == 1 or ALONE_TEAM in teams


def _scope_of(plan: Plan, folder: str) -> str | None:
    """The `scope` the first note (by name) of a source folder gives."""
    names = plan.listing(folder)
    note = plan.existing(f"{folder}/{names[0]}") if names else None
    value = note.data.get("scope") if note is not None else None
    return None if value is None else str(value)
