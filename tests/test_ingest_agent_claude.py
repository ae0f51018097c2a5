"""Claude Code transcripts: a session named by its own id though its file opens with lines
without one (a summary, a file-history snapshot), one note however that line changes, a note
named the old way (`<id>-<hash of the first line>`) found again; a subagent's turns
(`isSidechain`) said to be the agent's and the subagent's, never the user's."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from tests.conftest import write
from vaultmind.ingest.agent import parse_agent
from vaultmind.ingest.detect import ingest_paths
from vaultmind.ingest.writer import write_batches

SID = "0b5c1d2e-1111-2222-3333-444455556666"


def line(uuid: str, role: str, text: str, at: str, **more: Any) -> dict[str, Any]:
    return {
        "parentUuid": None, "isSidechain": False, "sessionId": SID, "type": role, "uuid": uuid,
        "timestamp": f"2025-06-01T{at}.000Z", "message": {"role": role, "content": [{"type": "text", "text": text}]},
        **more,
    }


ASK = line("u1", "user", "Why does test_login fail on CI only?", "10:00:00")
ANSWER = line("u2", "assistant", "The test depends on the local time zone.", "10:00:09")
MORE = line("u3", "user", "Fix it then.", "10:01:00")


def summary(text: str) -> dict[str, Any]:
    return {"type": "summary", "summary": text, "leafUuid": "u2"}


def transcript(folder: Path, *lines: dict[str, Any], name: str = SID) -> Path:
    return write(folder, f"{name}.jsonl", "".join(json.dumps(x) + "\n" for x in lines))


def old_name(first_line: dict[str, Any], name: str = SID) -> str:
    """The name an earlier vaultmind gave the session: its name and the hash of the first line."""
    text = json.dumps(first_line, sort_keys=True, ensure_ascii=False)
    return f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def test_a_session_opening_with_a_summary_line_is_named_by_its_id(tmp_path: Path) -> None:
    snapshot = {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {}}
    [batch] = parse_agent(transcript(tmp_path, summary("Flaky login test"), snapshot, ASK, ANSWER))
    assert (batch.note_name, batch.meta.source_id) == (SID, f"agent:{SID}")


def test_a_changed_summary_line_does_not_write_the_session_twice(tmp_path: Path, vault: Path) -> None:
    path = transcript(tmp_path, summary("Flaky login test"), ASK, ANSWER)
    first = ingest_paths("agent", [path], vault)
    transcript(tmp_path, summary("Fix flaky login test (TZ)"), ASK, ANSWER, MORE)
    again = ingest_paths("agent", [path], vault)
    assert (again.messages_added, again.messages_known) == (1, 2)
    assert again.written == first.written == [f"sources/chat/agent/{SID}.md"]


def test_a_note_named_by_the_first_lines_hash_keeps_its_name(tmp_path: Path, vault: Path) -> None:
    """Written before: `<id>-<hash of the summary line>`. It grows there, whether that line is
    the same or was rewritten since; no second note."""
    opening = summary("Flaky login test")
    [batch] = parse_agent(transcript(tmp_path, opening, ASK, ANSWER))
    before = old_name(opening)
    write_batches(vault, [replace(batch, meta=replace(batch.meta, source_id=f"agent:{before}"), note_name=before)])
    same = ingest_paths("agent", [tmp_path], vault)
    assert (same.messages_added, same.messages_known, same.written) == (0, 2, [])
    transcript(tmp_path, summary("Fix flaky login test (TZ)"), ASK, ANSWER, MORE)
    grown = ingest_paths("agent", [tmp_path], vault)
    assert (grown.messages_added, grown.messages_known) == (1, 2)
    assert grown.written == [f"sources/chat/agent/{before}.md"]
    assert sorted(p.name for p in (vault / "sources/chat/agent").iterdir()) == [f"{before}.md"]


def test_a_note_named_by_the_first_lines_hash_is_found_by_its_first_turn_as_read_then(tmp_path: Path, vault: Path) -> None:
    """Its first turn written with a `<system-reminder>` an agent put in it, which is no longer
    read as the user's words: the note is still found by that turn, and grows there."""
    reminder = "<system-reminder>\nThe user opened src/login.py in the IDE.\n</system-reminder>"
    ask = line("u1", "user", f"Why does test_login fail on CI only?\n\n{reminder}", "10:00:00")
    opening = summary("Flaky login test")
    [batch] = parse_agent(transcript(tmp_path, opening, ask, ANSWER))
    then = tuple(replace(m, text=ask["message"]["content"][0]["text"]) if m.message_id == "u1" else m for m in batch.messages)
    before = old_name(opening)
    write_batches(vault, [replace(batch, messages=then, meta=replace(batch.meta, source_id=f"agent:{before}"), note_name=before)])
    transcript(tmp_path, summary("Fix flaky login test (TZ)"), ask, ANSWER, MORE)
    grown = ingest_paths("agent", [tmp_path], vault)
    assert (grown.messages_added, grown.messages_known, grown.warnings) == (1, 2, [])
    assert grown.written == [f"sources/chat/agent/{before}.md"]
    assert sorted(p.name for p in (vault / "sources/chat/agent").iterdir()) == [f"{before}.md"]


def bare(text: str, role: str = "user") -> dict[str, Any]:
    return {"role": role, "content": text}


def test_a_transcript_without_ids_is_named_by_its_first_message_not_a_metadata_line(tmp_path: Path, vault: Path) -> None:
    """No session id anywhere: the hash is of the first message, not a line without a role, so a rewritten
    metadata line above it changes nothing; a note named by the old hash grows where it is."""
    turns = [bare("Plan the trip"), bare("Train to Lyon.", "assistant")]
    opening = {"type": "summary", "summary": "Trip"}
    [batch] = parse_agent(transcript(tmp_path, opening, *turns, name="transcript"))
    [plain] = parse_agent(transcript(tmp_path / "plain", *turns, name="transcript"))
    assert batch.note_name == plain.note_name  # the summary line is not hashed
    before = old_name(opening, "transcript")
    write_batches(vault, [replace(batch, meta=replace(batch.meta, source_id=f"agent:{before}"), note_name=before)])
    transcript(tmp_path, {"type": "summary", "summary": "Trip to Lyon"}, *turns, bare("And back?"), name="transcript")
    report = ingest_paths("agent", [tmp_path / "transcript.jsonl"], vault)
    assert (report.messages_added, report.messages_known) == (1, 2)
    assert report.written == [f"sources/chat/agent/{before}.md"]


def test_another_run_opening_with_the_same_words_stays_its_own_session(tmp_path: Path, vault: Path) -> None:
    """A second run's `transcript.jsonl` (no ids) that opens with the same prompt at another
    time is another session, not the note named the old way of the first run."""
    opening = {"type": "summary", "summary": "Trip"}
    run = [{**bare("Plan the trip"), "timestamp": "2025-06-01T10:00:00Z"}, bare("Train to Lyon.", "assistant")]
    [batch] = parse_agent(transcript(tmp_path / "a", opening, *run, name="transcript"))
    before = old_name(opening, "transcript")
    write_batches(vault, [replace(batch, meta=replace(batch.meta, source_id=f"agent:{before}"), note_name=before)])
    other = [{**bare("Plan the trip"), "timestamp": "2025-07-01T10:00:00Z"}, bare("Bus to Turin.", "assistant")]
    report = ingest_paths("agent", [transcript(tmp_path / "b", opening, *other, name="transcript")], vault)
    assert report.messages_added == 2 and report.written != [f"sources/chat/agent/{before}.md"]


def test_a_subagents_prompt_is_the_agents_not_the_users(tmp_path: Path, vault: Path) -> None:
    """Claude Code keeps a subagent's run (`isSidechain`: true) in `agent-<id>.jsonl` beside the
    session (older versions in the session's file): its prompt, written by the agent as a
    `user` turn, and its answer are marked as what they are."""
    delegate = line("u2", "assistant", "I'll ask a subagent to search.", "10:00:05")
    transcript(tmp_path, ASK, delegate, line("u5", "assistant", "Fixed: tests now pin TZ=UTC.", "10:02:00"))
    prompt = line("s1", "user", "Search the repo for every read of TZ.", "10:00:06", isSidechain=True, agentId="a1")
    found = line("s2", "assistant", "app/clock.py:12", "10:01:00", isSidechain=True, agentId="a1")
    transcript(tmp_path, prompt, found, name="agent-a1")
    report = ingest_paths("agent", [tmp_path], vault)
    assert report.written == [f"sources/chat/agent/{SID}.md"]
    text = (vault / report.written[0]).read_text(encoding="utf-8")
    assert "> [!message] assistant (to subagent) · 2025-06-01 10:00\n> Search the repo for every read of TZ." in text
    assert "> [!message] subagent · 2025-06-01 10:01\n> app/clock.py:12" in text
    assert text.count("> [!message] user ·") == 1
