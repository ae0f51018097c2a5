"""Telegram Desktop's HTML export (its export dialog's default): said as such, with the export
to make instead, whether the page is named or found in a folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import write
from vaultmind.ingest.detect import ingest_paths
from vaultmind.ingest.errors import IngestError

PAGE = (
    '<!DOCTYPE html>\n<html><head><meta charset="utf-8"/><title>Exported Data</title></head>\n'
    '<body><div class="page_wrap"><div class="page_header"><div class="text bold">Trip planning</div></div>\n'
    '<div class="page_body chat_page"><div class="history">\n'
    '<div class="message default clearfix" id="message2"><div class="body">'
    '<div class="from_name">Alice</div><div class="text">Check the hotel</div></div></div>\n'
    "</div></div></div></body></html>\n"
)


@pytest.mark.parametrize("fmt", ["auto", "telegram"])
def test_a_telegram_html_page_named_says_to_export_json(tmp_path: Path, vault: Path, fmt: str) -> None:
    page = write(tmp_path, "ChatExport_2024-03-04/messages.html", PAGE)
    with pytest.raises(IngestError) as caught:
        ingest_paths("chat", [page], vault, fmt=fmt)
    assert "Telegram's HTML export" in caught.value.message
    assert caught.value.hint is not None and "Machine-readable JSON" in caught.value.hint


def test_a_folder_of_telegram_html_says_to_export_json(tmp_path: Path, vault: Path) -> None:
    folder = tmp_path / "ChatExport_2024-03-04"
    write(folder, "messages.html", PAGE)
    write(folder, "messages2.html", PAGE)
    report = ingest_paths("chat", [folder], vault)
    assert len(report.warnings) == 1
    [said] = report.warnings
    assert "messages.html and 1 more: Telegram's HTML export" in said and "Machine-readable JSON" in said


def test_html_beside_the_json_of_the_same_export_is_passed_over_quietly(tmp_path: Path, vault: Path) -> None:
    folder = tmp_path / "ChatExport_2024-03-04"
    write(folder, "messages.html", PAGE)
    chat = {"name": "Trip planning", "type": "private_group", "id": 1, "messages": [
        {"id": 2, "type": "message", "date": "2024-03-04T09:01:00", "date_unixtime": "1709542860",
         "from": "Alice", "from_id": "user1", "text": "Check the hotel"},
    ]}
    write(folder, "result.json", json.dumps(chat))
    report = ingest_paths("chat", [folder], vault)
    assert (report.messages_added, report.warnings) == (1, [])


def test_another_html_file_is_no_telegram_export(tmp_path: Path, vault: Path) -> None:
    page = write(tmp_path, "messages.html", "<html><body><p>my notes</p></body></html>\n")
    with pytest.raises(IngestError, match="cannot tell which chat export"):
        ingest_paths("chat", [page], vault)
