"""A chat note over the vault's cap on the notes it indexes (`[vault] max_file_mb`) is split
into numbered parts under the cap, every message indexed once; ingesting again changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_main, snapshot_files, write
from vaultmind.ingest.held import message_ids

CAP = 0.01  # MB: 10,485 bytes
FOLDER = "sources/chat/chat/team"


def _export(tmp_path: Path, count: int, *, start: int = 0, name: str = "team.json") -> Path:
    """`count` messages of one day, from the `start`-th, each some 800 bytes, as a generic export."""
    messages = [
        {
            "id": f"m{n:03d}",
            "author": "Alice" if n % 2 else "Bob",
            "timestamp": f"2024-03-04T{9 + n // 60:02d}:{n % 60:02d}:00Z",
            "text": f"kumquat{n:03d} " + "shipment ledger line " * 40,
        }
        for n in range(start, start + count)
    ]
    return write(tmp_path, name, json.dumps(messages))


def _held(vault: Path) -> dict[str, list[str]]:
    """Message id → the notes of the folder that hold it."""
    out: dict[str, list[str]] = {}
    for path in sorted((vault / FOLDER).glob("*.md")):
        for message_id in message_ids(path.read_bytes()):
            out.setdefault(message_id, []).append(path.name)
    return out


def test_a_day_over_the_cap_is_split_into_parts_each_indexed(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, ".vaultmind/config.toml", f"[vault]\nmax_file_mb = {CAP}\n")
    export = _export(tmp_path, 30)  # ~26 KB of messages on one day
    code, data, _ = run_main(capsys, "ingest", "chat", str(export), "--format", "generic", "--vault", str(vault), "--json")
    assert code == 0 and data["messages_added"] == 30
    assert sorted(data["written"]) == [f"{FOLDER}/2024-03-04.2.md", f"{FOLDER}/2024-03-04.3.md", f"{FOLDER}/2024-03-04.md"]
    assert all((vault / path).stat().st_size <= CAP * 2**20 for path in data["written"])
    assert any("split into 3 notes" in w and "max_file_mb" in w for w in data["warnings"])
    assert data["sync"]["problems"] == [] and data["sync"]["added"] == 3
    held = _held(vault)
    assert sorted(held) == [f"m{n:03d}" for n in range(30)] and all(len(notes) == 1 for notes in held.values())
    first = [int(m[1:]) for m, notes in held.items() if notes == ["2024-03-04.md"]]
    assert first == list(range(len(first))), "the first part holds the first messages in time"

    code, data, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert "too_large" not in json.dumps(data)

    before = snapshot_files(vault / "sources")
    code, data, _ = run_main(capsys, "ingest", "chat", str(export), "--format", "generic", "--vault", str(vault), "--json")
    assert code == 0 and data["written"] == [] and data["messages_known"] == 30
    assert snapshot_files(vault / "sources") == before, "ingesting again changes no byte"


def test_new_messages_of_a_split_day_are_written_once_under_the_cap(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, ".vaultmind/config.toml", f"[vault]\nmax_file_mb = {CAP}\n")
    args = ("--format", "generic", "--vault", str(vault), "--json")
    code, _, _ = run_main(capsys, "ingest", "chat", str(_export(tmp_path, 20)), *args)
    assert code == 0
    later = _export(tmp_path, 25, start=10, name="later/team.json")  # 10 known, 15 new
    code, data, _ = run_main(capsys, "ingest", "chat", str(later), *args)
    assert code == 0 and data["messages_added"] == 15 and data["messages_known"] == 10
    held = _held(vault)
    assert sorted(held) == [f"m{n:03d}" for n in range(35)] and all(len(notes) == 1 for notes in held.values())
    assert all(path.stat().st_size <= CAP * 2**20 for path in (vault / FOLDER).glob("*.md"))
    assert data["sync"]["problems"] == []


def test_a_note_over_the_cap_from_before_is_split_when_its_export_comes_again(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A note written over the cap (by an earlier vaultmind, or before the cap was lowered) is
    split the next time its export is ingested, nothing new in it."""
    write(vault, ".vaultmind/config.toml", "")
    export = _export(tmp_path, 30)
    args = ("--format", "generic", "--vault", str(vault), "--json")
    code, data, _ = run_main(capsys, "ingest", "chat", str(export), *args)
    assert code == 0 and data["written"] == [f"{FOLDER}/2024-03-04.md"]
    write(vault, ".vaultmind/config.toml", f"[vault]\nmax_file_mb = {CAP}\n")
    code, data, _ = run_main(capsys, "ingest", "chat", str(export), *args)
    assert code == 0 and data["messages_added"] == 0 and data["messages_known"] == 30
    assert len(data["written"]) == 3 and data["sync"]["problems"] == []
    held = _held(vault)
    assert sorted(held) == [f"m{n:03d}" for n in range(30)] and all(len(notes) == 1 for notes in held.values())
