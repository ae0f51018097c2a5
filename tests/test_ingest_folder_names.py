"""A conversation's folder keeps the letters of its name, and a conversation ingested before
keeps the folder its notes are in."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import write
from vaultmind.ingest.detect import ingest_paths
from vaultmind.ingest.names import scope_folder, slugify
from vaultmind.markdown.frontmatter import split_frontmatter

DAY_1 = "2024-03-04, 09:00 - Jörg: Who brings the grill?\n2024-03-04, 09:05 - Łucja: I do.\n"
DAY_2 = "2024-03-05, 18:00 - Jörg: Grill is back in the shed.\n"


def test_a_folder_name_spells_the_letters_no_accent_makes() -> None:
    """ß ø ł æ đ þ were dropped by the fold that only strips accents ("Straße Crew" was
    `strae-crew`, "Łódź trip" `odz-trip`); a source id keeps the slug it had."""
    assert scope_folder("whatsapp/Straße Crew") == "whatsapp/strasse-crew"
    assert scope_folder("telegram/Łódź trip") == "telegram/lodz-trip"
    assert scope_folder("signal/Æsir · Đorđe · Þórunn · Søren") == "signal/aesir-dorde-thorunn-soren"
    assert scope_folder("Slack/Acme Corp//#general") == "slack/acme-corp/general"
    assert slugify("Straße") == "strae"  # (ids made of slugs, such as a mailbox's, stay as they were)


def test_a_chat_s_notes_go_to_the_folder_of_its_name(tmp_path: Path, vault: Path) -> None:
    path = write(tmp_path, "WhatsApp Chat with Straße Crew.txt", DAY_1)
    report = ingest_paths("chat", [path], vault)
    assert report.written == ["sources/chat/whatsapp/strasse-crew/2024-03-04.md"]


def test_a_chat_ingested_before_keeps_the_folder_its_notes_are_in(tmp_path: Path, vault: Path) -> None:
    """Its notes in the folder an earlier version named (`strae-crew`): its next day's note joins
    them there, and the messages it holds are known, not written again."""
    path = write(tmp_path, "WhatsApp Chat with Straße Crew.txt", DAY_1)
    ingest_paths("chat", [path], vault)
    chat = vault / "sources/chat/whatsapp"
    shutil.move(chat / "strasse-crew", chat / "strae-crew")  # where an earlier version put it
    write(tmp_path, "WhatsApp Chat with Straße Crew.txt", DAY_1 + DAY_2)
    report = ingest_paths("chat", [path], vault)
    assert report.written == ["sources/chat/whatsapp/strae-crew/2024-03-05.md"], report.written
    assert report.messages_added == 1
    assert sorted(p.name for p in chat.iterdir()) == ["strae-crew"]
    note = split_frontmatter((chat / "strae-crew/2024-03-05.md").read_text(encoding="utf-8")).data
    assert (note["source_id"], note["scope"]) == ("whatsapp:Straße Crew", "whatsapp/Straße Crew")
