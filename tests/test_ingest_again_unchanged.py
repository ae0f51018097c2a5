"""An export ingested again with nothing new in it: each note that already holds all its
messages is known as it is, not rendered again to measure it (a 100,000-message chat took a
minute to add nothing); a day that gets a message is written as it would be in one ingest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import snapshot_files, write
from vaultmind.ingest import parts
from vaultmind.ingest.detect import ingest_paths

LINES = [
    "04/03/2024, 09:15 - Alice: Who brings the tent?",
    "04/03/2024, 09:20 - Bob: I will, and the stove",
    "05/03/2024, 18:02 - Alice: Train at 7:40 from platform 3",
    "06/03/2024, 08:00 - Dana: Running late",
    "continuing on a second line",
]
LATER = "06/03/2024, 08:05 - Bob: We wait at the kiosk"


def _rendered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The titles of the notes rendered from here on (the real renderer runs)."""
    titles: list[str] = []
    real = parts.render_source_note

    def counting(meta: Any, *args: Any, **kwargs: Any) -> str:
        titles.append(meta.title)
        return real(meta, *args, **kwargs)

    monkeypatch.setattr(parts, "render_source_note", counting)
    return titles


def test_an_unchanged_export_is_not_rendered_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    export = write(tmp_path, "WhatsApp Chat with Camp.txt", "\n".join(LINES) + "\n")
    vault = tmp_path / "vault"
    first = ingest_paths("chat", [export], vault, date_order="dmy")
    assert len(first.written) == 3
    before = snapshot_files(vault / "sources")
    rendered = _rendered(monkeypatch)
    again = ingest_paths("chat", [export], vault, date_order="dmy")
    assert (again.written, again.messages_known, sorted(again.unchanged)) == ([], 4, sorted(first.written))
    assert rendered == [], "a note that holds every message is not rendered again"
    assert snapshot_files(vault / "sources") == before

    write(tmp_path, "WhatsApp Chat with Camp.txt", "\n".join([*LINES, LATER]) + "\n")
    grown = ingest_paths("chat", [export], vault, date_order="dmy")
    assert (grown.messages_added, grown.written) == (1, ["sources/chat/whatsapp/camp/2024-03-06.md"])
    assert rendered == ["Camp · 2024-03-06"]
    whole = tmp_path / "whole"  # the grown export in one ingest: the same notes, byte for byte
    ingest_paths("chat", [export], whole, date_order="dmy")
    assert snapshot_files(whole / "sources") == snapshot_files(vault / "sources")
