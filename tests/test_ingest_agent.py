"""Agent transcripts: prose kept, tool traffic, base64 and model-written recaps dropped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import snapshot_files, write
from vaultmind.ingest.agent import is_recap, parse_agent
from vaultmind.ingest.detect import detect_chat_format, ingest_paths
from vaultmind.ingest.errors import IngestError
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
    assert batch.bucket == "whole" and batch.note_name == "sess-42" and batch.meta.scope == "agent"
    assert batch.meta.source_id == "agent:sess-42" and batch.meta.title == "Find the Q3 budget owner."
    got = [(m.message_id, m.author, m.text, m.source_ref) for m in batch.messages]
    assert got == [
        ("1", "user", "Find the Q3 budget owner.", "agent://session/sess-42/1"),
        ("4", "assistant", "Alice Chen owns the Q3 budget.", "agent://session/sess-42/4"),
        ("5", "user", "Is this her chart?\n\n[image]", "agent://session/sess-42/5"),
        ("6", "assistant", "Yes, that chart ([image]) is hers.", "agent://session/sess-42/6"),
        # an assistant summarizing a document (not the conversation) is prose and kept
        (
            "13",
            "assistant",
            "Here is a summary of the report you sent: revenue is up.",
            "agent://session/sess-42/13",
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
