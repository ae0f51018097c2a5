"""A Claude Code session resumed (`claude --resume`, `--continue`): its new file repeats the earlier
session's turns, same `uuid`s, under the new session id. Each turn is written once, whichever
file it comes from and whichever order the files are read in, in one ingest or in several."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import said_in, write
from vaultmind.ingest.detect import ingest_paths

OLD, NEW, AGAIN = "adc10fa5-61dc-47fd-a1af-47fdd6d2007c", "57f6f27a-f714-44de-a160-29f6de7bfd73", "9e1f2a3b-0000-4000-8000-000000000003"


def turn(session: str, uuid: str, role: str, text: str, at: str) -> dict[str, Any]:
    """A line as Claude Code writes it: the message wrapped with its `uuid`, session and time."""
    message: dict[str, Any] = {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]}
    return {
        "parentUuid": None, "isSidechain": False, "sessionId": session, "type": role, "uuid": uuid,
        "timestamp": f"2025-08-01T{at}.000Z", "message": message,
    }


ASKED = [("u1", "user", "what is 4 + 4 * 4?", "13:46:00"), ("a1", "assistant", "20", "13:46:03")]
THEN = [("u2", "user", "remove 10 from it", "13:47:00"), ("a2", "assistant", "10", "13:47:02")]
LATER = [("u3", "user", "and double it", "14:10:00"), ("a3", "assistant", "20", "14:10:04")]


def session(folder: Path, sid: str, *turns: tuple[str, str, str, str]) -> Path:
    return write(folder, f"{sid}.jsonl", "".join(json.dumps(turn(sid, *t)) + "\n" for t in turns))


def bodies(vault: Path) -> dict[str, str]:
    """Each agent note's messages, by note name: `author: text` a line."""
    return {note.stem: " | ".join(said_in(note)) for note in sorted((vault / "sources/chat/agent").glob("*.md"))}


def sources(vault: Path) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted((vault / "sources").rglob("*.md"))}


def test_a_resumed_session_keeps_only_its_own_turns_in_one_ingest(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    session(folder, OLD, *ASKED)
    session(folder, NEW, *ASKED, *THEN)
    session(folder, AGAIN, *ASKED, *THEN, *LATER)  # resumed a second time, from the resumed one
    vault = tmp_path / "v1"
    report = ingest_paths("agent", [folder], vault)
    assert (report.messages_added, report.messages_known) == (6, 6)
    assert bodies(vault) == {
        OLD: "user: what is 4 + 4 * 4? | assistant: 20",
        NEW: "user: remove 10 from it | assistant: 10",
        AGAIN: "user: and double it | assistant: 20",
    }
    # whichever order the files are given in: the same notes, byte for byte
    other = tmp_path / "v2"
    ingest_paths("agent", [folder / f"{AGAIN}.jsonl", folder / f"{NEW}.jsonl", folder / f"{OLD}.jsonl"], other)
    assert sources(other) == sources(vault)
    again = ingest_paths("agent", [folder], vault)
    assert (again.messages_added, again.written) == (0, [])


def test_a_session_resumed_after_its_ingest_adds_only_its_new_turns(tmp_path: Path, vault: Path) -> None:
    session(tmp_path / "then", OLD, *ASKED)
    ingest_paths("agent", [tmp_path / "then"], vault)
    folder = tmp_path / "now"  # the project folder later: the earlier file and the resumed one
    session(folder, OLD, *ASKED)
    session(folder, NEW, *ASKED, *THEN)
    report = ingest_paths("agent", [folder / f"{NEW}.jsonl"], vault)
    assert (report.messages_added, report.messages_known) == (2, 2)
    assert report.written == [f"sources/chat/agent/{NEW}.md"]
    assert bodies(vault)[NEW] == "user: remove 10 from it | assistant: 10"
    again = ingest_paths("agent", [folder], vault)
    assert (again.messages_added, again.written) == (0, [])


def test_the_earlier_session_ingested_after_the_resumed_one_adds_nothing(tmp_path: Path, vault: Path) -> None:
    """The resumed file ingested alone holds the whole conversation; its earlier session's file,
    ingested later, repeats nothing."""
    session(tmp_path, NEW, *ASKED, *THEN)
    ingest_paths("agent", [tmp_path / f"{NEW}.jsonl"], vault)
    report = ingest_paths("agent", [session(tmp_path, OLD, *ASKED)], vault)
    assert (report.messages_added, report.messages_known, report.written) == (0, 2, [])
    assert list(bodies(vault)) == [NEW]


def test_ids_that_are_positions_are_no_other_sessions_turns(tmp_path: Path, vault: Path) -> None:
    """Transcripts without `uuid`s number their messages: two runs' message 0 are two messages."""
    for run, words in (("a", "Plan the trip"), ("b", "Plan the party")):
        write(tmp_path / run, "transcript.json", json.dumps([{"role": "user", "content": words}, {"role": "assistant", "content": "Sure."}]))
    report = ingest_paths("agent", [tmp_path / "a", tmp_path / "b"], vault)
    assert (report.messages_added, len(report.written)) == (4, 2)
