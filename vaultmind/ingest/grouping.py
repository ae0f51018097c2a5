"""An ingest's batches grouped by the note their messages go to (`Group`): each message read
as the vault keeps it (its time in UTC, its line ends), a day note per day of the vault's zone
or one note per conversation, and, of several exports of one conversation, what each holds and
how new it is."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import tzinfo

from vaultmind.errors import VaultmindError
from vaultmind.ingest.errors import IngestError
from vaultmind.ingest.model import IngestReport, SourceBatch
from vaultmind.ingest.names import batch_folder, note_path
from vaultmind.ingest.plan import Group
from vaultmind.ingest.reexport import has_seconds
from vaultmind.ingest.revisions import apply_edit, versions
from vaultmind.markdown.render import CALLOUT_TYPES, Message, SourceMeta, note_text, to_utc


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


def group_batches(batches: Sequence[SourceBatch], report: IngestReport, zone: tzinfo) -> list[Group]:
    """The groups of `batches`, one per note. A message is in one group: given again on another
    day (two exports that date it apart, or one that lists it twice), it is of the note it came
    first to, as when the exports are ingested one after the other."""
    groups: dict[tuple[str, str], Group] = {}
    first_in: dict[tuple[str, str], str] = {}  # (source id, message id) → the note it came first to
    for batch_no, batch in enumerate(batches):
        meta = batch.meta
        if meta.kind not in CALLOUT_TYPES:
            raise IngestError(
                f"source {meta.source_id!r}: batches hold chat or email messages, not {meta.kind!r}"
            )
        if not meta.source_id:
            raise IngestError("a batch has an empty source_id")
        single = None if batch.bucket == "day" else note_path(batch)
        folder = batch_folder(batch)
        quoted = {quote.message_id: quote for quote in batch.quoted}
        earlier: dict[str, tuple[str, ...]] = {}
        for message_id, text in batch.earlier_texts:
            earlier[message_id] = (*earlier.get(message_id, ()), text)
        earlier_times = dict(batch.earlier_times)
        touched: set[tuple[str, str]] = set()  # the groups of its messages
        for message in batch.messages:
            msg = _normalize(message, meta)
            day = to_utc(msg.timestamp).astimezone(zone).date().isoformat() if single is None else None
            base = first_in.setdefault((meta.source_id, msg.message_id), single or f"{folder}/{day}.md")
            group = groups.get((base, meta.source_id))
            if group is None:
                title = f"{meta.title} · {day}" if day else meta.title
                group = groups[(base, meta.source_id)] = Group(replace(meta, title=title), base)
            group.related.update(batch.related)
            group.known_in.update(batch.known_in)
            if msg.message_id in batch.unique_ids:
                group.unique_ids.add(msg.message_id)
            group.renamed.update(batch.renamed_authors)
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
            seconds = has_seconds(batch.messages)  # (an export's, not a day's: `reexport._same_time`)
            for key in touched:
                groups[key].ends[batch_no] = end
                groups[key].seconds |= seconds
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
