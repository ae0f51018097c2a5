"""A Claude Code session resumed (`claude --resume`, `--continue`) is written to a new file under
a new session id, which repeats the earlier session's turns, their `uuid`s kept, before its
own. Each turn is written once: of the sessions of one ingest that hold a turn of such an id
(`SourceBatch.unique_ids`), the one that ended first keeps it (the earliest session it was said
in; of two that ended at once, the first by id), whichever order their files were read in; a
later ingest finds a turn an earlier one wrote in any agent session's note
(`matching.held_elsewhere`), known there."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from vaultmind.ingest.model import IngestReport, SourceBatch
from vaultmind.markdown.render import to_utc


def each_turn_once(batches: Sequence[SourceBatch], report: IngestReport) -> list[SourceBatch]:
    """`batches` without the turns a session repeats from one that ended before it (counted as
    known); a session left with no turn is left out."""
    if not any(batch.unique_ids for batch in batches):
        return list(batches)
    ends: dict[str, datetime] = {}  # source id → its last turn (of all its files: a subagent's too)
    for batch in batches:
        if batch.unique_ids and batch.messages:
            end = max(to_utc(message.timestamp) for message in batch.messages)
            ends[batch.meta.source_id] = max(end, ends.get(batch.meta.source_id, end))
    keeper: dict[str, tuple[datetime, str]] = {}  # unique id → (end, source id) of the session that keeps it
    for batch in batches:
        if not batch.unique_ids:
            continue
        source = (ends[batch.meta.source_id], batch.meta.source_id)
        for message in batch.messages:
            if message.message_id in batch.unique_ids:
                held = keeper.get(message.message_id)
                keeper[message.message_id] = source if held is None else min(held, source)
    out: list[SourceBatch] = []
    for batch in batches:
        kept = tuple(
            message
            for message in batch.messages
            if message.message_id not in batch.unique_ids or keeper[message.message_id][1] == batch.meta.source_id
        )
        report.messages_known += len(batch.messages) - len(kept)
        if kept == batch.messages:
            out.append(batch)
        elif kept:
            out.append(replace(batch, messages=kept))
    return out
