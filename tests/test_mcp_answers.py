"""What an agent is answered over MCP: each hit as it uses it (no ranking internals unless
asked), a document written told in a few lines, a cancelled call never answered, and
instructions that name no vault when there is none."""

from __future__ import annotations

import io
import json
import queue
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vaultmind.mcp_server import McpServer
from vaultmind.memory import Memory

from .conftest import WAIT_S, run_main, write


def _call(ident: Any, **arguments: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": {"name": "memory_tree", "arguments": arguments}}


def _tool(server: McpServer, **arguments: Any) -> dict[str, Any]:
    answer = server.answer(_call(1, **arguments))
    assert answer is not None
    result: dict[str, Any] = answer["result"]
    assert result["isError"] is False, result
    return result


def test_a_hit_names_its_tree_which_query_source_takes(memory: Memory, vault: Path) -> None:
    """query_source takes a source's id, or a tree of your notes, "as a hit's `tree` names it":
    the compact hit an agent got had no `tree`, so it could not narrow to a hit's source."""
    write(vault, "Meetings/standup.md", "# Standup\n\nThe kayak rack repair is due on Friday.\n")
    write(vault, "Log/other.md", "# Other\n\nThe kayak club meets at the harbor.\n")
    memory.sync()
    server = McpServer(memory.query)
    found = _tool(server, mode="search", query="kayak rack repair", limit=1)["structuredContent"]["hits"][0]
    assert found["note_path"] == "Meetings/standup.md" and found["tree"] == "notes:Meetings", found
    narrowed = _tool(server, mode="query_source", source_id=found["tree"], query="kayak")["structuredContent"]
    assert [h["note_path"] for h in narrowed["hits"]] == ["Meetings/standup.md"], narrowed


def test_hits_come_to_an_agent_without_the_ranking_internals_unless_it_asks(memory: Memory, vault: Path) -> None:
    """A walk's text was 7 times its hits' content: each hit carried its score's breakdown (~40
    parts), its tree, message ids, child ids, and `structuredContent` said it all again."""
    filler = " ".join(f"The harbour log's line {k} notes tide, wind and the kayak racks." for k in range(6))
    for n in range(8):
        write(vault, f"Log/day {n}.md", f"# Day {n}\n\nHelen Okafor approved the harbor budget on day {n}. {filler}\n")
    memory.sync()
    server = McpServer(memory.query)
    api = memory.query("walk", {"query": "who approved the budget?", "limit": 8})
    walked = _tool(server, mode="walk", query="who approved the budget?", limit=8)
    told = json.loads(walked["content"][0]["text"])
    assert told == walked["structuredContent"]
    assert [h["node_id"] for h in told["hits"]] == [h["node_id"] for h in api["hits"]]
    hit = told["hits"][0]
    assert {"node_id", "node_kind", "title", "note_path", "anchor", "link", "content", "score"} <= set(hit)
    assert "breakdown" not in hit and "message_ids" not in hit and "scope" not in hit
    content = sum(len(h["content"]) for h in api["hits"])
    text = walked["content"][0]["text"]
    assert len(text) < 2 * content and 4 * content < len(json.dumps(api)), (len(text), content, text)

    explained = _tool(server, mode="walk", query="who approved the budget?", limit=8, scores=True)
    assert explained["structuredContent"]["hits"][0]["breakdown"] == api["hits"][0]["breakdown"]
    refused = server.answer(_call(2, mode="search", query="budget", scores="yes"))
    assert refused is not None and refused["result"]["isError"] is True
    assert "'scores' must be true or false" in refused["result"]["content"][0]["text"]

    nulled = _tool(server, mode="search", query="budget", scores=None)  # null is absent, as for every mode's arguments
    assert all("breakdown" not in h for h in nulled["structuredContent"]["hits"])

    window = _tool(server, mode="cover_window", start="2000-01-01", end="2100-01-01")
    assert all("breakdown" not in h for h in window["structuredContent"]["hits"])


def test_a_new_version_beside_a_document_note_you_edited_says_so_and_points_at_itself(memory: Memory, vault: Path) -> None:
    """Over a document note the user edited, a new version goes to a sibling note (the edits
    are kept): the answer said nothing of it, counted and listed both notes' leaves, and
    linked to the old one."""
    server = McpServer(memory.query)
    doc = {"mode": "ingest_document", "title": "Meeting notes", "source_id": "agent:mtg"}
    first = _tool(server, **doc, body="Version one from the agent.")["structuredContent"]
    edited = first["ingested"]["note"]
    with (vault / edited).open("a", encoding="utf-8") as note:
        note.write("\nA correction the user typed in Obsidian.\n")
    for body in ("Version two from the agent.", "Version two from the agent.", "Version three from the agent."):
        said = _tool(server, **doc, body=body)["structuredContent"]
        sibling = said["ingested"]["note"]
        assert sibling == "sources/document/agent/meeting-notes.2.md" and said["ingested"]["leaves"] == 1, said
        assert said["ingested"]["warnings"] == [
            f"kept your edits in {edited} (the new version went to a sibling note, {sibling}); query_source('agent:mtg') answers both"
        ]
        [leaf] = said["first_leaves"]
        [hit] = memory.query("fetch_leaves", {"ids": [leaf]})["hits"]
        assert hit["note_path"] == sibling and body in hit["content"] and "meeting-notes.2" in said["link"], said
    both = memory.query("query_source", {"source_id": "agent:mtg"})["hits"]
    assert sorted(h["note_path"] for h in both) == sorted([edited, sibling]), "the edited note is kept among the source's leaves"
    assert "A correction the user typed" in (vault / edited).read_text(encoding="utf-8")


class _Held:
    """An `ask` whose calls wait until `release`: what it was asked, in order."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, dict[str, Any]]] = []
        self.started = threading.Event()
        self.go = threading.Event()

    def __call__(self, mode: str, args: dict[str, Any]) -> dict[str, Any]:
        self.asked.append((mode, args))
        self.started.set()
        self.go.wait(WAIT_S)
        return {"hits": [], "total": 0, "truncated": False}


def _lines(sent: queue.Queue[str | None]) -> Iterator[str]:
    """stdin, as a client sends it: a line when the test sends one; the end at None."""
    while (line := sent.get(timeout=WAIT_S)) is not None:
        yield line


def _wait_for_answer(out: io.StringIO, request_id: int) -> None:
    """Until the server has answered `request_id` (it writes whole lines)."""
    deadline = time.monotonic() + WAIT_S
    while not any(json.loads(line).get("id") == request_id for line in out.getvalue().splitlines()):
        assert time.monotonic() < deadline, f"no answer to request {request_id}"
        time.sleep(0.01)


def test_a_cancelled_call_is_not_answered_and_one_not_started_never_runs() -> None:
    """`notifications/cancelled` was ignored: the cancelled call ran to its end and was answered
    (a cancelled `ingest_document` still waiting for the write lane would still write)."""
    held = _Held()
    sent: queue.Queue[str | None] = queue.Queue()
    out = io.StringIO()
    server = McpServer(held)
    serving = threading.Thread(target=server.serve, args=(_lines(sent), out))
    serving.start()

    def send(message: dict[str, Any]) -> None:
        sent.put(json.dumps(message) + "\n")

    send(_call(1, mode="ingest_document", title="a", body="a", source_id="agent:a"))
    assert held.started.wait(WAIT_S)  # the write lane's one thread runs call 1
    send(_call("two", mode="ingest_document", title="b", body="b", source_id="agent:b"))  # waits behind it
    send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "two", "reason": "user"}})
    send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}})  # unknown: let be
    send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    _wait_for_answer(out, 3)  # lines are read in order: the cancellations are in before call 1 ends
    held.go.set()
    send(_call(4, mode="search", query="kayak"))
    sent.put(None)
    serving.join(WAIT_S)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [a["id"] for a in answers] == [3, 4]
    assert [args.get("title") for _, args in held.asked] == ["a", None]  # "b" never ran


def test_the_instructions_name_no_vault_when_none_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Started in a folder that is no vault (an agent host starts servers in /), `initialize`
    said "The memory of the Obsidian vault ''"."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VAULTMIND_VAULT", raising=False)
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}}}
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(hello) + "\n"))
    code, out, err = run_main(capsys, "mcp")
    assert code == 0, err
    said = json.loads(out)["result"]["instructions"]
    assert said.startswith("The memory of an Obsidian vault: ") and "''" not in said and tmp_path.name not in said
    named = McpServer(lambda m, a: {}, vault_name="Notes").answer({**hello})
    assert named is not None and named["result"]["instructions"].startswith("The memory of the Obsidian vault 'Notes': ")
