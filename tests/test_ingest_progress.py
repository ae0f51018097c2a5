"""An ingest says how far it is while it parses email and documents and while it plans the
notes, not only while it writes them: re-reading a large mailbox was half a minute unsaid."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import write
from vaultmind.ingest.detect import ingest_paths


def _calls(kind: str, paths: list[Path], vault: Path, **kw: str) -> dict[str, list[tuple[int, int]]]:
    seen: dict[str, list[tuple[int, int]]] = {}
    ingest_paths(kind, paths, vault, progress=lambda phase, done, total: seen.setdefault(phase, []).append((done, total)), **kw)
    return seen


def _ends_whole(calls: list[tuple[int, int]]) -> bool:
    dones = [done for done, _ in calls]
    return dones == sorted(dones) and calls[-1][0] == calls[-1][1] > 0 and all(done < total for done, total in calls[:-1])


def test_an_mbox_is_parsed_and_planned_with_progress(tmp_path: Path, vault: Path) -> None:
    mails = "".join(
        f"From alice@example.com Mon Mar  4 09:0{n}:00 2024\nFrom: Alice <alice@example.com>\nTo: bob@example.com\n"
        f"Subject: Kumquat crate {n}\nMessage-ID: <m{n}@example.com>\nDate: Mon, 4 Mar 2024 09:0{n}:00 +0000\n\n"
        f"Crate {n} ships Friday.\n\n"
        for n in range(4)
    )
    box = write(tmp_path, "Inbox.mbox", mails)
    calls = _calls("email", [box], vault)
    assert _ends_whole(calls["parsing"]) and calls["parsing"][-1][1] == box.stat().st_size
    assert len(calls["parsing"]) == 5, "once a message, then its end"
    assert calls["planning"] == [(n, 4) for n in range(1, 5)], "each thread's note planned"
    again = _calls("email", [box], vault)  # nothing to write: still said while it reads
    assert _ends_whole(again["parsing"]) and again["planning"][-1] == (4, 4) and "writing" not in again


def test_documents_are_parsed_and_planned_with_progress(tmp_path: Path, vault: Path) -> None:
    docs = tmp_path / "docs"
    for n in range(3):
        write(docs, f"note{n}.md", f"# Note {n}\n\nThe kumquat order {n} ships Friday.\n")
    calls = _calls("document", [docs], vault)
    assert calls["parsing"] == [(1, 3), (2, 3), (3, 3)] and calls["planning"] == [(1, 3), (2, 3), (3, 3)]


def test_chat_notes_are_planned_with_progress(tmp_path: Path, vault: Path) -> None:
    messages = [{"id": f"m{d}", "author": "Alice", "timestamp": f"2024-03-0{d}T09:00:00Z", "text": "kumquat"} for d in (4, 5)]
    calls = _calls("chat", [write(tmp_path, "team.json", json.dumps(messages))], vault, fmt="generic")
    assert calls["parsing"] == [(1, 1)] and calls["planning"] == [(1, 2), (2, 2)]
