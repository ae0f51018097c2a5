"""Checks shared by the email tests."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.conftest import snapshot_files
from vaultmind.ingest.model import SourceBatch
from vaultmind.ingest.writer import write_batches


def assert_written_before_stays_known(vault: Path, batch: SourceBatch, before: str) -> None:
    """A note an earlier vaultmind wrote with `before` as the message's text (a batch of one
    message): reading the message anew finds it known, writes nothing twice and rewrites no file."""
    written_then = replace(batch, messages=(replace(batch.messages[0], text=before),), earlier_texts=())
    assert write_batches(vault, [written_then]).messages_added == 1
    notes = snapshot_files(vault)
    report = write_batches(vault, [batch])
    assert report.messages_added == 0 and report.messages_known == 1 and report.written == []
    assert snapshot_files(vault) == notes
