"""Telegram Desktop's JSON export: what a poll, a shared contact and a location say is kept as
text (the shapes `export_output_json.cpp` writes: `poll` with `answers` of `text`, `voters` — a
count — and `chosen`; `contact_information`; `location_information`, with `place_name` and
`address` for a venue)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from tests.conftest import chat_ingested_alike, snapshot_files, write
from vaultmind.ingest.detect import ingest_paths
from vaultmind.ingest.telegram import parse_telegram
from vaultmind.ingest.writer import write_batches
from vaultmind.markdown.note import parse_note


def _message(number: int, **fields: Any) -> dict[str, Any]:
    at = 1709543220 + 60 * number
    return {"id": number, "type": "message", "date": "2024-03-04T09:00:00", "date_unixtime": str(at),
            "from": "Alice", "from_id": "user111", "text": "", "text_entities": [], **fields}


MESSAGES = [
    _message(6, poll={"question": "Which museum?", "closed": False, "total_voters": 2, "answers": [
        {"text": "Louvre", "voters": 2, "chosen": True},
        {"text": "Orsay", "voters": 1, "chosen": False},
    ]}),
    _message(11, location_information={"latitude": 48.8606, "longitude": 2.3376}),
    _message(12, contact_information={"first_name": "Carla", "last_name": "Ruiz", "phone_number": "+33 6 12 34 56 78"}),
    _message(13, place_name="Louvre Museum", address="Rue de Rivoli, Paris",
             location_information={"latitude": 48.8606, "longitude": 2.3376}),
]


def _export(folder: Path, messages: list[dict[str, Any]]) -> Path:
    chat = {"name": "Trip planning", "type": "private_group", "id": 4455667788, "messages": messages}
    return write(folder, "result.json", json.dumps(chat, ensure_ascii=False))


def test_a_polls_answers_a_contacts_name_and_number_and_a_locations_point_are_text(tmp_path: Path) -> None:
    [batch] = parse_telegram(_export(tmp_path, MESSAGES))
    assert [m.text for m in batch.messages] == [
        "[poll: Which museum?]\n- Louvre: 2 votes, your vote\n- Orsay: 1 vote",
        "[location: 48.8606, 2.3376]",
        "[contact: Carla Ruiz, +33 6 12 34 56 78]",
        "[location: Louvre Museum, Rue de Rivoli, Paris (48.8606, 2.3376)]",
    ]


def test_telegram_media_text_same_notes_twice_and_a_newer_export_adds_only_its_new(tmp_path: Path) -> None:
    older = _export(tmp_path / "old", MESSAGES)
    newer = _export(tmp_path / "new", [*MESSAGES, _message(20, text="see you at the Louvre")])
    a, _ = chat_ingested_alike(older, tmp_path)
    assert ingest_paths("chat", [newer], a).messages_added == 1


def test_a_note_written_before_keeps_its_bare_poll_line(tmp_path: Path, vault: Path) -> None:
    """A note written when only `[poll: question]` was kept: ingesting the export again changes
    nothing there, adds no second copy and warns of nothing (the id is Telegram's)."""
    export = _export(tmp_path, MESSAGES)
    [batch] = parse_telegram(export)
    bare = {"6": "[poll: Which museum?]", "11": "[location]", "12": "[contact]", "13": "[location]"}
    write_batches(vault, [replace(batch, messages=tuple(replace(m, text=bare[m.message_id]) for m in batch.messages))])
    before = snapshot_files(vault)
    again = ingest_paths("chat", [export], vault)
    assert (again.messages_added, again.written, again.warnings) == (0, [], [])
    assert snapshot_files(vault) == before
    [note] = [parse_note(p, (vault / p).read_text(encoding="utf-8")) for p in before]
    assert [leaf.text for leaf in note.leaves] == list(bare.values())
