"""Half an emoji in an export (a JSON `\\ud83d` escape without its other half: no character)
reads as U+FFFD, said naming the file, instead of stopping the ingest with a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_main, write

# the JSON text of each export, with `{text}` standing for a message's text
EXPORTS = {
    "generic": ("team.json", '[{"author": "Alice", "timestamp": "2024-03-04T09:00:00Z", "text": "{text}"}]'),
    "generic-ids": (
        "crew.json",
        '[{"id": "m1", "author": "Alice", "timestamp": "2024-03-04T09:00:00Z", "text": "{text}"}]',
    ),
    "telegram": (
        "result.json",
        '{"name": "Crew", "type": "personal_chat", "id": 5, "messages": [{"id": 1, "type": "message", '
        '"date": "2024-03-04T10:00:00", "date_unixtime": "1709546400", "from": "Alice", "from_id": "user1", "text": "{text}"}]}',
    ),
    "instagram": (
        "message_1.json",
        '{"participants": [{"name": "Alice"}, {"name": "Bob"}], "title": "Bob", "thread_path": "inbox/bob_1",'
        ' "messages": [{"sender_name": "Alice", "timestamp_ms": 1709546400000, "content": "{text}"}]}',
    ),
    "slack": ("general.json", '[{"type": "message", "user": "U1", "text": "{text}", "ts": "1709542800.000100"}]'),
}


@pytest.mark.parametrize("fmt", sorted(EXPORTS))
def test_a_lone_surrogate_reads_as_a_replacement_character_and_is_said(
    fmt: str, tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, ".vaultmind/config.toml", "")
    name, template = EXPORTS[fmt]
    broken = write(tmp_path, name, template.replace("{text}", r"kumquat \ud83d cut, \\ud83d typed, \ud83d\ude00 whole"))
    args = ("--format", fmt.split("-")[0], "--vault", str(vault), "--json")
    code, data, _ = run_main(capsys, "ingest", "chat", str(broken), *args)
    assert code == 0, data
    said = [w for w in data["warnings"] if "lone surrogate" in w]
    assert len(said) == 1 and said[0].startswith(f"{broken}: line 1: 1 lone surrogate escape") and "U+FFFD" in said[0]
    notes = "".join(path.read_text(encoding="utf-8") for path in sorted((vault / "sources").rglob("*.md")))
    assert "kumquat \ufffd cut, \\ud83d typed, \U0001f600 whole" in notes, "an escaped backslash stays text, a pair its character"
    assert data["sync"]["problems"] == []
