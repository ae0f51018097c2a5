"""Chat exports whose shape is odd or bad: nothing they hold is lost or reordered, nothing is
written twice, and what is left out is said."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write
from vaultmind.ingest.detect import ingest_paths
from vaultmind.markdown.note import parse_note


def _note_texts(vault: Path, rel: str) -> list[str]:
    """The texts of a note's messages, in the note's order."""
    return [leaf.text for leaf in parse_note(rel, (vault / rel).read_text(encoding="utf-8")).leaves]


# --- messages of one minute -------------------------------------------------------------------

ONE_MINUTE = (
    "14/03/2024, 09:30 - Alice: Are you coming tonight?\n"
    "14/03/2024, 09:30 - Bob: yes\n"
    "14/03/2024, 09:30 - Alice: great, see you\n"
    "14/03/2024, 09:30 - Bob: bring wine?\n"
    "14/03/2024, 09:30 - Alice: no\n"
)


def test_messages_of_one_minute_keep_the_exports_order(tmp_path: Path, vault: Path) -> None:
    """WhatsApp ids hash the message: sorted by (time, id), a minute's replies came before
    their questions. The export's order stays; a later export's new messages of that minute
    follow the note's; the same export again writes nothing."""
    export = write(tmp_path, "WhatsApp Chat with Order.txt", ONE_MINUTE)
    first = ingest_paths("chat", [export], vault)
    rel = "sources/chat/whatsapp/order/2024-03-14.md"
    assert first.written == [rel]
    said = ["Are you coming tonight?", "yes", "great, see you", "bring wine?", "no"]
    assert _note_texts(vault, rel) == said
    before = (vault / rel).read_bytes()
    again = ingest_paths("chat", [export], vault)
    assert (again.written, again.messages_added) == ([], 0) and (vault / rel).read_bytes() == before
    write(tmp_path, "WhatsApp Chat with Order.txt", ONE_MINUTE + "14/03/2024, 09:30 - Bob: ok, no wine\n")
    later = ingest_paths("chat", [export], vault)
    assert later.messages_added == 1 and _note_texts(vault, rel) == [*said, "ok, no wine"]
