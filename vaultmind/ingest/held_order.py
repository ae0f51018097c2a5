"""A chat's day/month order as the vault holds it. A WhatsApp export whose dates read both ways
is read in the order its dates settle, else a guess (`line_dates.date_order`); a later export of
the same chat may settle it otherwise (a day above 12 that reads only month first). Its message
ids hash their times, so every message the vault holds, read the other way, would be written a
second time. The vault's reading is kept instead, and said."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from vaultmind.ingest.held import message_ids, notes_below
from vaultmind.ingest.model import SourceBatch
from vaultmind.ingest.names import batch_folders
from vaultmind.markdown.render import Message

_READING = {"DMY": "day/month", "MDY": "month/day"}


def keep_held_orders(vault: Path, batches: Sequence[SourceBatch]) -> tuple[list[SourceBatch], list[str]]:
    """`batches`, each chat whose notes hold its messages read in the other date order read so,
    and what to say of it. Of an export that reads the other way through, every message is read
    so; of one that does not (a date reads only as the export's order), the messages the notes
    hold so are known as read then, and the others are read as the export's dates settle."""
    out: list[SourceBatch] = []
    said: list[str] = []
    for batch in batches:
        other = batch.other_order
        if other is None or not any(m is not None and m.message_id != o.message_id for m, o in zip(other.messages, batch.messages, strict=True)):
            out.append(batch)
            continue
        held = _held_ids(vault, batch)
        pairs = list(zip(batch.messages, other.messages, strict=True))
        as_read = sum(1 for m, o in pairs if o is not None and o.message_id != m.message_id and m.message_id in held)
        as_other = sum(1 for m, o in pairs if o is not None and o.message_id != m.message_id and o.message_id in held)
        if as_other <= as_read:
            out.append(batch)
            continue
        name, read, then = batch.meta.source_id, _READING[other.read], _READING[other.other]
        flag = "dmy" if other.read == "DMY" else "mdy"
        if all(o is not None for _, o in pairs):
            chosen: list[Message] = [o for _, o in pairs if o is not None]
            if other.settled:
                said.append(
                    f"{name}: read as {then}, as the chat's notes hold it, though its dates are in time order only as "
                    f"{read} (pass --date-order {flag} to read it so; its notes then get every message again)"
                )
        else:
            chosen = [o if o is not None and o.message_id in held else m for m, o in pairs]
            said.append(
                f"{name}: the chat's notes read its dates as {then}, but this export writes them as {read} (a date "
                f"reads only so): its {as_other} message(s) the notes hold are known as read then, not written again, "
                f"and the others are read as {read} (to move the notes' messages to their {read} dates, delete the "
                f"chat's notes and ingest it again with --date-order {flag})"
            )
        ids = {m.message_id: c.message_id for m, c in zip(batch.messages, chosen, strict=True)}
        out.append(
            replace(
                batch,
                messages=tuple(chosen),
                edited=tuple(ids[i] for i in batch.edited),
                earlier_texts=tuple((ids[i], text) for i, text in batch.earlier_texts),
                said_if_written=tuple(s for s in batch.said_if_written if s != other.guess),
                other_order=None,
            )
        )
    return out, said


def _held_ids(vault: Path, batch: SourceBatch) -> set[str]:
    """The message ids the notes of `batch`'s conversation folder hold (or of the folder an
    earlier vaultmind named it)."""
    held: set[str] = set()
    for note in (note for folder in batch_folders(batch) for note in notes_below(vault / folder)):
        try:
            held.update(message_ids(note.read_bytes()))
        except OSError:
            continue
    return held
