"""Instagram exports: what a shared post or reel carries (its caption), on small exports written here."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.conftest import snapshot_files, write
from vaultmind.ingest.detect import ingest_paths
from vaultmind.ingest.instagram import parse_instagram
from vaultmind.ingest.writer import write_batches
from vaultmind.markdown.render import Message

REEL = "https://www.instagram.com/reel/C4abc/"


def _thread(messages: list[dict[str, Any]]) -> str:
    """A conversation file as "Download your information" writes it: each byte of a text's
    UTF-8 a character of its own, messages newest first."""
    return json.dumps(
        {"participants": [{"name": "Ann"}, {"name": "Bob"}], "title": "Bob", "thread_path": "inbox/bob_42", "messages": messages}
    )


def _shared(*, caption: bool) -> list[dict[str, Any]]:
    share: dict[str, Any] = {"link": REEL, "original_content_owner": "natgeo"}
    if caption:
        share["share_text"] = "Snow leopards in Ladakh \u00e2\u009d\u0084\nfilmed at dawn"
    return [
        {"sender_name": "Bob", "timestamp_ms": 1709546500000, "content": "Bob sent an attachment.", "share": share,
         "reactions": [{"reaction": "\u00e2\u009d\u00a4", "actor": "Ann"}]},
        {"sender_name": "Bob", "timestamp_ms": 1709546400000, "share": {"share_text": "Story: hiking the Alps"} if caption else {}},
        {"sender_name": "Ann", "timestamp_ms": 1709546300000, "content": "send me that reel"},
        {"sender_name": "Ann", "timestamp_ms": 1709546200000, "content": "https://example.com/a",
         "share": {"link": "https://example.com/a", "share_text": "https://example.com/a"}},
    ]


def test_a_shared_reel_keeps_its_caption_as_the_message_text(tmp_path: Path, vault: Path) -> None:
    """A shared post or reel is mostly its caption (`share.share_text`), the one text a user
    remembers it by ("the snow leopard reel"): it was dropped, leaving the link alone, and a
    share with a caption but no link was left out as a message with no text. Reactions stay
    out of the text."""
    export = write(tmp_path / "messages/inbox/bob_42", "message_1.json", _thread(_shared(caption=True)))
    report = ingest_paths("chat", [export], vault)
    assert (report.messages_added, report.warnings) == (4, [])
    note = (vault / "sources/chat/instagram/bob_42/2024-03-04.md").read_text(encoding="utf-8")
    assert f"> Bob sent an attachment.\n> [shared: {REEL}]\n> natgeo: Snow leopards in Ladakh ❄\n> filmed at dawn\n" in note
    assert "> Story: hiking the Alps\n" in note
    assert "❤" not in note
    assert "> https://example.com/a\n> [shared: https://example.com/a]\n> %%" in note, "a caption that is the text is not said twice"


def test_notes_written_without_captions_keep_their_messages_known(tmp_path: Path, vault: Path) -> None:
    """A vault ingested by an earlier version holds the shared reel without its caption (as the
    export without one reads now): the export ingested again adds no second copy of it and
    warns of no different text; the message without a text before, a shared story's caption,
    joins the note."""
    before = write(tmp_path / "old/messages/inbox/bob_42", "message_1.json", _thread(_shared(caption=False)))
    assert ingest_paths("chat", [before], vault).messages_added == 3
    settled = snapshot_files(vault)
    export = write(tmp_path / "new/messages/inbox/bob_42", "message_1.json", _thread(_shared(caption=True)))
    report = ingest_paths("chat", [export], vault)
    assert (report.messages_added, report.messages_known, report.warnings) == (1, 3, [])
    note = (vault / "sources/chat/instagram/bob_42/2024-03-04.md").read_text(encoding="utf-8")
    assert note.count(f"[shared: {REEL}]") == 1 and "Story: hiking the Alps" in note
    assert [k for k in snapshot_files(vault) if k.startswith("sources/")] == [k for k in settled if k.startswith("sources/")]


def _with_reactions() -> list[dict[str, Any]]:
    """Bob's question, Ann's ❤️ on it written as a message of its own (as the download writes
    one, beside the question's `reactions`), Ann's "Liked a message", and a real message."""
    return [
        {"sender_name": "Ann", "timestamp_ms": 1709546700000, "content": "see you at 5"},
        {"sender_name": "Ann", "timestamp_ms": 1709546600000, "content": "Liked a message"},
        {"sender_name": "Ann", "timestamp_ms": 1709546500000, "content": "Reacted \u00e2\u009d\u00a4 to your message "},
        {"sender_name": "Bob", "timestamp_ms": 1709546400000, "content": "Caf\u00c3\u00a9 at 5?",
         "reactions": [{"reaction": "\u00e2\u009d\u00a4", "actor": "Ann"}]},
    ]


def test_a_reaction_written_as_a_message_is_no_message(tmp_path: Path, vault: Path) -> None:
    """"Liked a message" and "Reacted ❤ to your message" were callouts of their own beside the
    real messages; reactions are no messages, as on every platform."""
    export = write(tmp_path / "messages/inbox/bob_42", "message_1.json", _thread(_with_reactions()))
    report = ingest_paths("chat", [export], vault)
    assert report.messages_added == 2
    note = (vault / "sources/chat/instagram/bob_42/2024-03-04.md").read_text(encoding="utf-8")
    assert "> Café at 5?\n" in note and "> see you at 5\n" in note
    assert "Liked a message" not in note and "Reacted" not in note
    again = ingest_paths("chat", [export], vault)
    assert (again.messages_added, again.written) == (0, [])
    other = tmp_path / "other"
    other.mkdir()
    ingest_paths("chat", [export], other)
    assert snapshot_files(other) == snapshot_files(vault)  # (the same export: the same notes)


def test_reactions_as_messages_in_a_note_written_before_stay_and_nothing_is_added(tmp_path: Path, vault: Path) -> None:
    """A note an earlier version wrote holds them: it is left as it is, and the export, again
    or newer, adds only what is new."""
    export = write(tmp_path / "old/messages/inbox/bob_42", "message_1.json", _thread(_with_reactions()))
    [batch] = parse_instagram(export)
    liked = Message(message_id="h-liked", author="Ann", timestamp=datetime(2024, 3, 4, 10, 3, 20, tzinfo=UTC), text="Liked a message")
    write_batches(vault, [replace(batch, messages=(*batch.messages, liked))])
    settled = snapshot_files(vault)
    again = ingest_paths("chat", [export], vault)
    assert (again.messages_added, again.written, again.warnings) == (0, [], [])
    assert snapshot_files(vault) == settled
    newer = write(tmp_path / "new/messages/inbox/bob_42", "message_1.json", _thread(
        [{"sender_name": "Bob", "timestamp_ms": 1709546800000, "content": "great"}, *_with_reactions()]
    ))
    assert ingest_paths("chat", [newer], vault).messages_added == 1
