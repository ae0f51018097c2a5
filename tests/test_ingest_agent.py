"""Agent transcripts: prose kept, tool traffic, base64 and model-written recaps dropped."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import snapshot_files, write
from vaultmind.ingest.agent import is_recap, parse_agent
from vaultmind.ingest.detect import detect_chat_format, ingest_paths
from vaultmind.ingest.errors import IngestError
from vaultmind.ingest.writer import write_batches
from vaultmind.markdown.note import parse_note

PNG = (
    "data:image/png;base64,"
    + "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==" * 3
)

TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a helpful agent. Secret instructions."},
    {"role": "user", "content": "Find the Q3 budget owner."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "search", "arguments": '{"q": "Q3 budget"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"results": [{"owner": "Alice"}]}'},
    {"role": "assistant", "content": "Alice Chen owns the Q3 budget."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Is this her chart?"},
            {"type": "image_url", "image_url": {"url": PNG}},
        ],
    },
    {
        "role": "assistant",
        "content": f'Yes, that chart ({PNG}) is hers. <tool_call>{{"name": "open"}}</tool_call>',
    },
    {"role": "assistant", "content": "Here's a summary of our conversation so far: Alice owns the budget."},
    {"role": "assistant", "content": "## Summary of the conversation\n\n- Alice owns it"},
    {"role": "assistant", "content": "Recap: we found Alice."},
    {"role": "assistant", "content": "Noted.", "metadata": {"type": "summary"}},
    {
        "role": "user",
        "content": "This session is being continued from a previous conversation that ran out of context.",
    },
    {"role": "assistant", "content": '{"name": "search", "arguments": {"q": "x"}}'},
    {"role": "assistant", "content": "Here is a summary of the report you sent: revenue is up."},
]


def test_openai_message_list_keeps_prose_only(tmp_path: Path) -> None:
    path = write(tmp_path, "sess-42.json", json.dumps(TRANSCRIPT, indent=1))
    assert detect_chat_format(path) == "agent"
    batches = parse_agent(path)
    assert len(batches) == 1
    batch = batches[0]
    # no session id in the transcript: the file's name and the hash of its first message
    sid = "sess-42-" + hashlib.sha256(json.dumps(TRANSCRIPT[0], sort_keys=True).encode()).hexdigest()[:8]
    assert batch.bucket == "whole" and batch.note_name == sid and batch.meta.scope == "agent"
    assert batch.meta.source_id == f"agent:{sid}" and batch.meta.title == "Find the Q3 budget owner."
    got = [(m.message_id, m.author, m.text, m.source_ref) for m in batch.messages]
    assert got == [
        ("1", "user", "Find the Q3 budget owner.", f"agent://session/{sid}/1"),
        ("4", "assistant", "Alice Chen owns the Q3 budget.", f"agent://session/{sid}/4"),
        ("5", "user", "Is this her chart?\n\n[image]", f"agent://session/{sid}/5"),
        ("6", "assistant", "Yes, that chart ([image]) is hers.", f"agent://session/{sid}/6"),
        # an assistant summarizing a document (not the conversation) is prose and kept
        (
            "13",
            "assistant",
            "Here is a summary of the report you sent: revenue is up.",
            f"agent://session/{sid}/13",
        ),
    ]
    all_text = "\n".join(m.text for m in batch.messages)
    assert "base64" not in all_text and "Secret" not in all_text and 'owner": ' not in all_text
    times = [m.timestamp for m in batch.messages]
    assert times == sorted(times) and len(set(times)) == len(times), "order kept without timestamps"


def test_session_objects_and_jsonl(tmp_path: Path) -> None:
    sessions = [
        {"id": "a", "created_at": "2024-03-04T09:00:00Z", "messages": TRANSCRIPT[:2]},
        {
            "id": "b",
            "title": "Second",
            "messages": [{"role": "user", "content": "hi", "timestamp": 1709629200}],
        },
    ]
    as_array = parse_agent(write(tmp_path, "s.json", json.dumps(sessions)))
    as_jsonl = parse_agent(write(tmp_path, "s.jsonl", "\n".join(json.dumps(s) for s in sessions)))
    assert as_array == as_jsonl
    assert [b.meta.source_id for b in as_array] == ["agent:a", "agent:b"]
    assert str(as_array[0].messages[0].timestamp) == "2024-03-04 09:00:00.000001+00:00"
    assert as_array[1].meta.title == "Second"
    single = parse_agent(write(tmp_path, "one.json", json.dumps(sessions[0], indent=2)))
    assert single == as_array[:1]


def test_wrapped_jsonl_lines_with_compaction(tmp_path: Path) -> None:
    lines = [
        {
            "type": "user",
            "uuid": "u-1",
            "sessionId": "S1",
            "timestamp": "2024-03-04T09:00:00Z",
            "message": {"role": "user", "content": "Plan the launch."},
        },
        {
            "type": "assistant",
            "uuid": "a-1",
            "sessionId": "S1",
            "timestamp": "2024-03-04T09:00:05Z",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm"},
                    {"type": "text", "text": "Launch on May 2."},
                    {"type": "tool_use", "id": "t", "name": "cal", "input": {}},
                ],
            },
        },
        {
            "type": "user",
            "uuid": "u-2",
            "sessionId": "S1",
            "timestamp": "2024-03-04T09:00:06Z",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}],
            },
        },
        {
            "type": "user",
            "uuid": "u-3",
            "sessionId": "S1",
            "timestamp": "2024-03-04T10:00:00Z",
            "isCompactSummary": True,
            "message": {"role": "user", "content": "Summary: the launch is planned."},
        },
        {"type": "summary", "summary": "Launch planning", "leafUuid": "a-1"},
    ]
    batches = parse_agent(write(tmp_path, "t.jsonl", "\n".join(json.dumps(x) for x in lines)))
    assert [(m.message_id, m.author, m.text) for b in batches for m in b.messages] == [
        ("u-1", "user", "Plan the launch."),
        ("a-1", "assistant", "Launch on May 2."),
    ]
    assert batches[0].meta.source_id == "agent:S1"
    assert batches[0].messages[1].source_ref == "agent://session/S1/1"


def test_recap_rule() -> None:
    assert is_recap({"role": "assistant", "name": "Recap", "content": "x"})
    assert is_recap({"role": "assistant", "is_summary": True, "content": "x"})
    assert not is_recap({"role": "assistant", "content": "Summaries of papers are useful."})


def test_growing_session_merges_and_reingest_is_a_noop(tmp_path: Path, vault: Path) -> None:
    path = write(
        tmp_path,
        "sess.json",
        json.dumps({"id": "s1", "created_at": "2024-03-04T09:00:00Z", "messages": TRANSCRIPT[:5]}),
    )
    first = ingest_paths("agent", [path], vault)
    assert first.written == ["sources/chat/agent/s1.md"] and first.messages_added == 2
    before = snapshot_files(vault)
    assert ingest_paths("agent", [path], vault).written == []
    assert snapshot_files(vault) == before
    write(
        tmp_path,
        "sess.json",
        json.dumps({"id": "s1", "created_at": "2024-03-04T09:00:00Z", "messages": TRANSCRIPT}),
    )
    grown = ingest_paths("agent", [path], vault)
    assert grown.messages_added == 3 and grown.messages_known == 2
    note = parse_note(grown.written[0], (vault / grown.written[0]).read_text(encoding="utf-8"))
    assert [leaf.message_id for leaf in note.leaves] == ["1", "4", "5", "6", "13"]
    assert all(leaf.source_ref and leaf.source_ref.startswith("agent://session/s1/") for leaf in note.leaves)


def test_agent_folder_and_malformed_line(tmp_path: Path, vault: Path) -> None:
    folder = tmp_path / "runs"
    write(folder, "2024/a.json", json.dumps(TRANSCRIPT[:2]))
    write(folder, "2024/b.jsonl", json.dumps({"role": "user", "content": "ok"}) + "\n" + "[1, 2\n")
    with pytest.raises(IngestError) as info:
        ingest_paths("agent", [folder], vault)
    assert "b.jsonl" in str(info.value) and "line 2" in str(info.value)
    assert snapshot_files(vault) == {}
    write(folder, "2024/b.jsonl", json.dumps({"role": "user", "content": "ok", "timestamp": "noon"}) + "\n")
    with pytest.raises(IngestError, match=r"line 1: .*unreadable time"):
        ingest_paths("agent", [folder], vault)


def test_two_runs_named_alike_are_two_sessions_and_a_grown_one_is_the_same(tmp_path: Path, vault: Path) -> None:
    """`runs/a/transcript.json` and `runs/b/transcript.json` (no session id): both had been
    `agent:transcript`, and the second's turns were dropped as 'already known'."""
    haiku = [{"role": "user", "content": "Write a haiku about autumn"}, {"role": "assistant", "content": "Red leaves drift."}]
    capital = [{"role": "user", "content": "What is the capital of Australia?"}, {"role": "assistant", "content": "Canberra."}]
    write(tmp_path / "runs" / "a", "transcript.json", json.dumps(haiku))
    b = write(tmp_path / "runs" / "b", "transcript.json", json.dumps(capital))
    report = ingest_paths("agent", [tmp_path / "runs"], vault)
    assert (report.messages_added, report.messages_known, len(report.written)) == (4, 0, 2)
    texts = "\n".join((vault / path).read_text(encoding="utf-8") for path in report.written)
    assert "Red leaves drift." in texts and "Canberra." in texts
    write(b.parent, "transcript.json", json.dumps([*capital, {"role": "user", "content": "And of Canada?"}]))
    grown = ingest_paths("agent", [b], vault)
    assert (grown.messages_added, grown.messages_known) == (1, 2)
    assert len(grown.written) == 1 and grown.written[0] in report.written


def test_a_transcript_ingested_under_its_file_name_alone_is_found_again(tmp_path: Path, vault: Path) -> None:
    """Before its first message's hash was part of the id, an unnamed session was `agent:<file
    name>`: its note is found again and grows, not written a second time."""
    turns = [{"role": "user", "content": "Plan the trip"}, {"role": "assistant", "content": "Train to Lyon."}]
    path = write(tmp_path, "transcript.json", json.dumps(turns))
    [batch] = parse_agent(path)
    assert (batch.legacy_source_id, batch.legacy_note_name) == ("agent:transcript", "transcript")
    old = replace(batch, meta=replace(batch.meta, source_id="agent:transcript"), note_name="transcript")
    write_batches(vault, [replace(old, legacy_source_id=None, legacy_note_name=None)])  # as written before
    write(tmp_path, "transcript.json", json.dumps([*turns, {"role": "user", "content": "And back?"}]))
    report = ingest_paths("agent", [path], vault)
    assert (report.messages_added, report.messages_known) == (1, 2)
    assert report.written == ["sources/chat/agent/transcript.md"]
    other = write(tmp_path / "b", "transcript.json", json.dumps([{"role": "user", "content": "Plan the dinner"}]))
    assert ingest_paths("agent", [other], vault).written[0] != "sources/chat/agent/transcript.md"


def test_content_given_as_one_object_is_kept(tmp_path: Path, vault: Path) -> None:
    """A message whose `content` is one object, not a string or a list of parts: a text part's
    text is kept, an object of no known kind is kept as a JSON code block, tool traffic is
    dropped as it is in a list of parts."""
    lines = [
        {"role": "user", "content": {"type": "text", "text": "What is in the repo?"}},
        {"role": "assistant", "content": {"type": "tool_result", "tool_use_id": "t", "content": "ls"}},
        {"role": "assistant", "content": {"status": "done", "files": 3}},
        {"role": "assistant", "content": {"content_type": "text", "parts": ["Three files."]}},
    ]
    path = write(tmp_path, "obj.jsonl", "\n".join(json.dumps(line) for line in lines) + "\n")
    report = ingest_paths("agent", [path], vault)
    assert report.messages_added == 3
    note = parse_note(report.written[0], (vault / report.written[0]).read_text(encoding="utf-8"))
    assert [(leaf.message_id, leaf.text) for leaf in note.leaves] == [
        ("0", "What is in the repo?"),
        ("2", '```json\n{"files": 3, "status": "done"}\n```'),
        ("3", "Three files."),
    ]
    assert note.title == "What is in the repo?"
    before = snapshot_files(vault)
    assert ingest_paths("agent", [path], vault).written == []
    assert snapshot_files(vault) == before


def test_codex_rollout_keeps_its_messages_once(tmp_path: Path, vault: Path) -> None:
    """A Codex CLI rollout: the session's id from `session_meta`, the messages from
    `response_item` lines (not again from the `event_msg` lines that repeat them), the injected
    environment context dropped."""
    lines = [
        {"timestamp": "2025-01-01T10:00:00Z", "type": "session_meta", "payload": {"id": "0193-abc", "cwd": "/src"}},
        {"timestamp": "2025-01-01T10:00:00Z", "type": "response_item", "payload": {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "<environment_context>\n<cwd>/src</cwd>\n</environment_context>"}]}},
        {"timestamp": "2025-01-01T10:00:01Z", "type": "response_item", "payload": {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "Fix the bug in main.py"}]}},
        {"timestamp": "2025-01-01T10:00:01Z", "type": "event_msg", "payload": {"type": "user_message", "message": "Fix the bug in main.py"}},
        {"timestamp": "2025-01-01T10:00:03Z", "type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{}"}},
        {"timestamp": "2025-01-01T10:00:05Z", "type": "response_item", "payload": {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "Fixed: the loop was off by one."}]}},
        {"timestamp": "2025-01-01T10:00:05Z", "type": "event_msg", "payload": {"type": "agent_message", "message": "Fixed: the loop was off by one."}},
    ]
    path = write(tmp_path, "rollout-2025-01-01T10-00-00-0193-abc.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n")
    report = ingest_paths("agent", [path], vault)
    assert report.written == ["sources/chat/agent/0193-abc.md"]
    note = parse_note(report.written[0], (vault / report.written[0]).read_text(encoding="utf-8"))
    assert [(leaf.message_id, leaf.author, leaf.text, leaf.timestamp) for leaf in note.leaves] == [
        ("1", "user", "Fix the bug in main.py", "2025-01-01T10:00:01Z"),
        ("3", "assistant", "Fixed: the loop was off by one.", "2025-01-01T10:00:05Z"),
    ]
    before = snapshot_files(vault)
    assert ingest_paths("agent", [path], vault).written == [] and snapshot_files(vault) == before


def test_a_transcript_still_being_written_is_read_up_to_its_last_whole_line(tmp_path: Path, vault: Path) -> None:
    """An agent appends a JSON line at a time: a copy taken meanwhile ends in half a line. The
    whole lines are read, the half one left out with a warning; once complete, the next ingest
    adds it."""
    lines = [
        json.dumps({"type": t, "uuid": f"a{n}", "sessionId": "L1", "timestamp": f"2025-01-01T10:00:0{n}Z",
                    "message": {"role": t, "content": text}})
        for n, (t, text) in enumerate([("user", "hello"), ("assistant", "hi there"), ("user", "bye")])
    ]
    path = write(tmp_path, "live.jsonl", "\n".join(lines[:2]) + "\n" + lines[2][:40])
    report = ingest_paths("agent", [path], vault)
    assert report.messages_added == 2
    assert [w for w in report.warnings if "line 3: the last line is not complete JSON" in w]
    write(tmp_path, "live.jsonl", "\n".join(lines) + "\n")
    assert ingest_paths("agent", [path], vault).messages_added == 1
    write(tmp_path, "broken.jsonl", lines[0] + "\n" + lines[1][:40] + "\n" + lines[2] + "\n")
    with pytest.raises(IngestError, match="line 2"):  # a bad line inside the file is still an error
        ingest_paths("agent", [tmp_path / "broken.jsonl"], vault)


@pytest.mark.parametrize("last", ['{"role": "user", "content": "bye"}}', '{"role": "user", "content": "bye"} x', "{oops}"])
def test_a_last_line_that_is_wrong_json_rather_than_half_written_is_still_an_error(
    tmp_path: Path, vault: Path, last: str
) -> None:
    """A last line that is whole but not JSON (a stray brace, text after the object) is no line
    still being written: the file is refused naming it, as a bad line inside it is, rather than
    its message being left out."""
    path = write(tmp_path, "t.jsonl", json.dumps({"role": "user", "content": "hello"}) + "\n" + last)
    with pytest.raises(IngestError, match="line 2"):
        ingest_paths("agent", [path], vault)


def test_roles_are_read_whatever_their_case(tmp_path: Path, vault: Path) -> None:
    """`"User"`, `"Assistant"`, `"AI"` (exports of other tools capitalise the role) are the
    user and the assistant; before, such a transcript held "no messages"."""
    turns = [{"role": "User", "content": "Capital user"}, {"role": "AI", "content": "Capital answer"},
             {"role": "System", "content": "a system prompt"}]
    path = write(tmp_path, "caps.json", json.dumps(turns))
    report = ingest_paths("agent", [path], vault)
    note = parse_note(report.written[0], (vault / report.written[0]).read_text(encoding="utf-8"))
    assert [(leaf.author, leaf.text) for leaf in note.leaves] == [("user", "Capital user"), ("assistant", "Capital answer")]


DOCUMENT = {"type": "document", "title": "q3.pdf", "source": {"type": "url", "url": "https://example.com/q3.pdf"}}


def _session(messages: list[dict[str, Any]]) -> str:
    return json.dumps({"id": "s2", "created_at": "2024-03-04T09:00:00Z", "messages": messages})


def test_a_part_of_an_unknown_kind_is_kept_and_a_message_written_without_it_stays_as_it_is(
    tmp_path: Path, vault: Path
) -> None:
    """A part of no kind vaultmind knows (a document, a search result) is kept as a compact JSON
    block, as a content object is, and an Assistants text part reads as its value. A message
    written before such parts were kept (its text without them) keeps its text and id: the
    transcript ingested again rewrites nothing, says nothing, and writes its new messages."""
    asked = {"role": "user", "content": [{"type": "text", "text": "Summarize this"}, DOCUMENT]}
    answered = {"role": "assistant", "content": [{"type": "text", "text": {"value": "Q3 grew 4%.", "annotations": []}}]}
    only = {"role": "user", "content": [DOCUMENT]}
    block = "```json\n" + json.dumps(DOCUMENT, ensure_ascii=False, sort_keys=True) + "\n```"
    path = write(tmp_path, "now/s2.json", _session([asked, answered, only]))
    ingest_paths("agent", [path], vault)
    note = parse_note("sources/chat/agent/s2.md", (vault / "sources/chat/agent/s2.md").read_text(encoding="utf-8"))
    assert [(leaf.message_id, leaf.text) for leaf in note.leaves] == [
        ("0", f"Summarize this\n\n{block}"),
        ("1", "Q3 grew 4%."),
        ("2", block),
    ]
    before = tmp_path / "vault-before"
    before.mkdir()
    # as an earlier vaultmind wrote the first message: its text without the document
    then = write(tmp_path, "then/s2.json", _session([{"role": "user", "content": "Summarize this"}]))
    ingest_paths("agent", [then], before)
    report = ingest_paths("agent", [path], before)
    assert (report.messages_added, report.messages_known, report.warnings) == (2, 1, [])
    again = parse_note("sources/chat/agent/s2.md", (before / "sources/chat/agent/s2.md").read_text(encoding="utf-8"))
    assert [(leaf.message_id, leaf.text) for leaf in again.leaves] == [
        ("0", "Summarize this"),
        ("1", "Q3 grew 4%."),
        ("2", block),
    ]
    settled = snapshot_files(before)
    assert ingest_paths("agent", [path], before).warnings == []
    assert snapshot_files(before) == settled


def test_server_and_mcp_tool_parts_are_dropped_as_tool_use_is(tmp_path: Path, vault: Path) -> None:
    """Parts of a Claude Code transcript that are a server's or an MCP server's tool traffic
    (`server_tool_use`, `web_search_tool_result`, `mcp_tool_use`, `mcp_tool_result`) are dropped
    as tool_use and tool_result are, not kept as parts of unknown kinds: a message of nothing
    else is no message, and a transcript an earlier vaultmind wrote gains nothing when ingested
    again."""

    def line(uuid: str, role: str, content: list[dict[str, Any]], second: int) -> str:
        message = {"role": role, "content": content}
        at = f"2025-03-04T09:00:{second:02d}Z"
        return json.dumps({"type": role, "uuid": uuid, "sessionId": "S1", "timestamp": at, "message": message})

    search = {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "python 3.13"}}
    found = {"type": "web_search_tool_result", "tool_use_id": "s1", "content": [{"type": "web_search_result", "url": "https://docs.python.org"}]}
    fetch = {"type": "mcp_tool_use", "id": "m1", "name": "fetch", "server_name": "web", "input": {"url": "https://example.com"}}
    fetched = {"type": "mcp_tool_result", "tool_use_id": "m1", "content": [{"type": "text", "text": "page"}]}
    lines = [
        line("u1", "user", [{"type": "text", "text": "What is new in Python 3.13?"}], 0),
        line("a1", "assistant", [{"type": "text", "text": "Let me search."}, search], 1),
        line("a2", "assistant", [found], 2),
        line("a3", "assistant", [fetch], 3),
        line("u2", "user", [fetched], 4),
        line("a4", "assistant", [{"type": "text", "text": "A free-threaded build."}], 5),
    ]
    path = write(tmp_path, "S1.jsonl", "\n".join(lines) + "\n")
    report = ingest_paths("agent", [path], vault)
    note = parse_note(report.written[0], (vault / report.written[0]).read_text(encoding="utf-8"))
    assert [(leaf.message_id, leaf.text) for leaf in note.leaves] == [
        ("u1", "What is new in Python 3.13?"),
        ("a1", "Let me search."),
        ("a4", "A free-threaded build."),
    ]
    again = ingest_paths("agent", [path], vault)
    assert (again.messages_added, again.written, again.warnings) == (0, [], [])
