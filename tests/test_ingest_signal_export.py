"""Signal chats as signal-export writes them (the usual tool for Signal Desktop): one folder per
chat, `<chat name>/chat.md`, lines `[YYYY-MM-DD HH:MM:SS] Name: text`, a blank line after each
message, reactions on a line `(- Name: emoji -)` and attachments as links into the export."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import chat_ingested_alike, snapshot_files, write
from vaultmind.ingest.chat_formats import detect_chat_format
from vaultmind.ingest.detect import ingest_paths
from vaultmind.markdown.note import ParsedNote, parse_note


def _line(at: str, sender: str, body: str) -> str:
    """A message as signal-export writes it: the line, then the blank line `print` adds."""
    return f"[{at}] {sender}: {body}\n\n"


ALICE = [
    _line("2024-03-04 09:15:12", "Alice Smith", "Are we still on for Friday?"),
    _line("2024-03-04 09:16:40", "Me", "Yes! 7pm at Luigi's\n(- Alice Smith: 👍 -)"),
    _line("2024-03-04 09:18:00", "Me", "the menu![IMG_1234.jpg](./media/2024-03-04T09-18-00.000_00_IMG_1234.jpg)  "),
]
BOOK_CLUB = [
    _line("2024-03-05 20:00:00", "Dana", "Next book: Piranesi"),
    _line("2024-03-05 20:01:00", "Me", "Ordered it"),
]


def _export(root: Path, alice: list[str], book_club: list[str]) -> Path:
    write(root, "Alice Smith/chat.md", "".join(alice))
    write(root, "Alice Smith/data.json", '{"date": "2024-03-04T09:15:12", "sender": "Alice Smith", "body": "Are we"}\n')
    write(root, "Book club/chat.md", "".join(book_club))
    return root


def _notes(vault: Path) -> list[ParsedNote]:
    return [
        parse_note(path.relative_to(vault).as_posix(), path.read_text(encoding="utf-8"))
        for path in sorted((vault / "sources/chat/signal").rglob("*.md"))
    ]


def test_signal_export_folder_gives_one_conversation_per_chat_named_by_its_folder(tmp_path: Path, vault: Path) -> None:
    export = _export(tmp_path / "signal", ALICE, BOOK_CLUB)
    assert detect_chat_format(export / "Book club" / "chat.md") == "signal"
    report = ingest_paths("chat", [export], vault)
    assert report.messages_added == 5
    assert not report.warnings or all("data.json" not in w for w in report.warnings)
    notes = _notes(vault)
    assert [(n.path, n.frontmatter["source_id"]) for n in notes] == [
        ("sources/chat/signal/alice-smith/2024-03-04.md", "signal:Alice Smith"),
        ("sources/chat/signal/book-club/2024-03-05.md", "signal:Book club"),
    ]
    alice = [(leaf.author, leaf.text) for leaf in notes[0].leaves]
    assert alice == [
        ("Alice Smith", "Are we still on for Friday?"),
        ("Me", "Yes! 7pm at Luigi's"),  # the reaction is no text of the message
        ("Me", "the menu[attachment: IMG_1234.jpg]"),  # not a broken link into the export
    ]


def test_signal_export_file_named_directly_is_named_by_its_folder(tmp_path: Path, vault: Path) -> None:
    export = _export(tmp_path / "signal", ALICE, BOOK_CLUB)
    ingest_paths("chat", [export / "Alice Smith" / "chat.md", export / "Book club" / "chat.md"], vault)
    assert [n.frontmatter["source_id"] for n in _notes(vault)] == ["signal:Alice Smith", "signal:Book club"]


def test_signal_export_is_deterministic_and_a_newer_export_adds_only_what_is_new(tmp_path: Path) -> None:
    first = _export(tmp_path / "first", ALICE, BOOK_CLUB)
    a, before = chat_ingested_alike(first, tmp_path)
    # a newer export: Dana reacted to a message since (no new id, no second copy), one message more
    # (signal-export writes the reactions before the attachments)
    reacted = [*ALICE[:2], _line("2024-03-04 09:18:00", "Me", "the menu\n(- Dana: ❤️ -)![IMG_1234.jpg](./media/2024-03-04T09-18-00.000_00_IMG_1234.jpg)  ")]
    newer = _export(tmp_path / "newer", reacted, [*BOOK_CLUB, _line("2024-03-06 08:00:00", "Dana", "Chapter 3 tonight?")])
    report = ingest_paths("chat", [newer], a)
    assert report.messages_added == 1
    assert [p for p in snapshot_files(a) if p not in before] == ["sources/chat/signal/book-club/2024-03-06.md"]
    shutil.rmtree(newer)


def test_a_markdown_file_in_another_shape_is_no_chat(tmp_path: Path) -> None:
    readme = write(tmp_path, "README.md", "# Notes\n\n[2024-03-04] shopping\n")
    assert detect_chat_format(readme) is None


LOG = "[2024-05-01 09:12:33] Standup: shipped the importer fix\n[2024-05-01 14:02:10] Review: Ana asked for tests\n"


def test_a_log_of_yours_in_signals_shape_is_no_chat_in_a_folder_or_in_the_vault(tmp_path: Path, vault: Path) -> None:
    """A Markdown file whose lines start `[2024-05-01 09:12:33] Standup: ` — a log of yours, in
    a folder of exports or among the vault's own notes — was taken for a Signal chat: copied
    into a conversation of made-up people "Standup" and "Review". In a folder, only
    signal-export's `chat.md` is a chat; a note of the vault itself never is (as for documents
    and emails), and is said to be skipped."""
    exports = _export(tmp_path / "exports", ALICE, BOOK_CLUB)
    write(exports, "work log.md", LOG)
    report = ingest_paths("chat", [exports], vault)
    assert sorted(report.written) == [
        "sources/chat/signal/alice-smith/2024-03-04.md", "sources/chat/signal/book-club/2024-03-05.md",
    ]
    assert not report.warnings, report.warnings
    mine = write(vault, "journal/log.md", LOG)
    kept = _export(vault / "inbox", ALICE, BOOK_CLUB)  # (an export kept in the vault: its notes, indexed as they are)
    before = snapshot_files(vault)
    for given in (mine.parent, mine, kept):
        report = ingest_paths("chat", [given], vault)
        assert (report.written, report.messages_added) == ([], 0)
        said = [w for w in report.warnings if "of the vault itself skipped" in w]
        assert said if given != mine.parent else not said, report.warnings
    assert snapshot_files(vault) == before
