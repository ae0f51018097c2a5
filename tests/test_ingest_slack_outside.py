"""Slack Connect: a member of another workspace is in no users.json of the export, but their own
messages carry a `user_profile`; a mention of them reads their name, not their id."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from tests.conftest import chat_ingested_alike, snapshot_files, write
from vaultmind.ingest.detect import ingest_paths
from vaultmind.ingest.slack import parse_slack
from vaultmind.ingest.writer import write_batches

PRIYA = {"real_name": "Priya Raman", "display_name": "priya", "name": "priya.raman", "team": "T0ACME"}


def _export(root: Path, days: dict[str, list[dict[str, Any]]]) -> Path:
    write(root, "users.json", json.dumps([{"id": "U01", "name": "alice", "team_id": "T01", "profile": {"real_name": "Alice Smith"}}]))
    write(root, "channels.json", json.dumps([{"id": "C01", "name": "general"}, {"id": "C02", "name": "shared-acme"}]))
    for rel, messages in days.items():
        write(root, rel, json.dumps(messages))
    return root


DAYS = {
    # Alice tells #general about Priya before Priya's first message (in another channel, a day later)
    "general/2024-03-03.json": [
        {"type": "message", "user": "U01", "text": "<@U0EXT9> from Acme joins tomorrow", "ts": "1709456400.000100"},
    ],
    "shared-acme/2024-03-04.json": [
        {"type": "message", "user": "U0EXT9", "text": "Hi, Priya from Acme here", "ts": "1709542860.000100",
         "user_team": "T0ACME", "source_team": "T0ACME", "user_profile": PRIYA},
        {"type": "message", "user": "U01", "text": "Welcome <@U0EXT9>! Ask <@U0GONE> too", "ts": "1709542920.000200"},
    ],
}


def _texts(root: Path) -> list[tuple[str, str]]:
    return [(m.author, m.text) for batch in parse_slack(root) for m in batch.messages]


def test_a_mention_of_a_user_from_another_workspace_reads_their_name(tmp_path: Path) -> None:
    assert _texts(_export(tmp_path / "export", DAYS)) == [
        ("Alice Smith", "@Priya Raman from Acme joins tomorrow"),
        ("Priya Raman", "Hi, Priya from Acme here"),
        ("Alice Smith", "Welcome @Priya Raman! Ask @U0GONE too"),  # (one no message names stays an id)
    ]


def test_outside_names_same_notes_twice_and_a_newer_export_adds_only_its_new(tmp_path: Path) -> None:
    older = _export(tmp_path / "old", DAYS)
    newer = _export(tmp_path / "new", {**DAYS, "shared-acme/2024-03-05.json": [
        {"type": "message", "user": "U01", "text": "thanks <@U0EXT9>", "ts": "1709629200.000100"},
    ]})
    a, _ = chat_ingested_alike(older, tmp_path)
    later = ingest_paths("chat", [newer], a)
    assert later.messages_added == 1
    note = (a / later.written[0]).read_text(encoding="utf-8")
    assert "thanks @Priya Raman" in note


def test_a_note_written_with_the_id_is_left_as_it_is(tmp_path: Path, vault: Path) -> None:
    """A note written when the mention read `@U0EXT9`: ingesting the export again changes
    nothing there and warns of nothing (Slack's ids are the messages' `ts`)."""
    export = _export(tmp_path / "export", DAYS)
    batches = parse_slack(export)
    write_batches(vault, [replace(b, messages=tuple(replace(m, text=m.text.replace("@Priya Raman", "@U0EXT9")) for m in b.messages)) for b in batches])
    before = snapshot_files(vault)
    again = ingest_paths("chat", [export], vault)
    assert (again.messages_added, again.written, again.warnings) == (0, [], [])
    assert snapshot_files(vault) == before


def test_a_note_an_older_vaultmind_wrote_without_the_attachment_and_with_the_id_is_left_as_it_is(tmp_path: Path, vault: Path) -> None:
    """A message with an attachment below its text, its note written by a vaultmind that left
    attachments out and read the mention as `@U0EXT9`: reading the mention again with the name
    kept only the name's forms of the earlier readings (which no vaultmind wrote), so that note
    was said to differ from the export."""
    export = _export(tmp_path / "export", {**DAYS, "general/2024-03-03.json": [
        {"type": "message", "user": "U01", "text": "numbers for <@U0EXT9>", "ts": "1709456400.000100",
         "attachments": [{"text": "Q3 revenue up 4%"}]},
    ]})
    batches = parse_slack(export)
    assert next(m.text for b in batches for m in b.messages) == "numbers for @Priya Raman\n\nQ3 revenue up 4%"
    write_batches(vault, [replace(b, messages=tuple(
        replace(m, text="numbers for @U0EXT9") if m.message_id == "1709456400.000100" else m for m in b.messages
    )) for b in batches])
    before = snapshot_files(vault)
    again = ingest_paths("chat", [export], vault)
    assert (again.messages_added, again.written, again.warnings) == (0, [], [])
    assert snapshot_files(vault) == before
