"""`vaultmind mcp`: the memory_tree tool over stdio, as an agent client uses it."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from vaultmind.client import find_daemon
from vaultmind.config import load_config
from vaultmind.mcp_server import OWN_ARGUMENTS, McpServer, tool_definition
from vaultmind.memory import Memory
from vaultmind.retrieval.dispatch import ARGUMENTS, MODES

from .conftest import READY_S, WAIT_S, end_process, run_main, write

# `vaultmind mcp` on a vault not indexed yet starts, indexes it and answers within this: a
# daemon's start (its NER child, its first index) and a question — 71-134 s on two cores at
# load 24-34, where 120 s cut the cited-walk test off.
SERVE_S = READY_S + WAIT_S

_NOTE = "# Boat\n\nWe bought the red kayak from Harbor Sports on 3 May.\n"


def _request(ident: int, method: str, params: dict[str, Any] | None = None) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, **({"params": params} if params else {})})


def _call(ident: int, **arguments: Any) -> str:
    return _request(ident, "tools/call", {"name": "memory_tree", "arguments": arguments})


def _answers(out: str) -> dict[Any, dict[str, Any]]:
    """The answers on stdout by id; every line of it is one JSON-RPC message."""
    answers = [json.loads(line) for line in out.splitlines()]
    assert all(a["jsonrpc"] == "2.0" for a in answers)
    return {a["id"]: a for a in answers}


def boat_vault(vault: Path) -> Path:
    """A vaultmind vault (made by `vaultmind init --existing`) with one note, about a kayak."""
    write(vault, "Notes/boat.md", _NOTE)
    done = subprocess.run(
        [sys.executable, "-m", "vaultmind", "init", "--existing", str(vault)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return vault


def test_an_agent_client_lists_the_tool_and_asks_the_vault_with_good_and_bad_calls(tmp_path: Path) -> None:
    vault = boat_vault(tmp_path / "My vault ü")
    lines = [
        _request(1, "initialize", {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t"}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),  # a notification: no answer
        _request(2, "tools/list"),
        _call(3, mode="walk", query="where did we buy the kayak?", evidence=True),
        _call(4, mode="walk", question="kayak"),
        _call(5, mode="wlak", query="kayak"),
        _call(6, mode="drill_down", node_id="zzzzzz"),
        _request(7, "resources/list"),
        _request(8, "tools/call", {"name": "search"}),
        "not json",
        _request(9, "ping"),
    ]
    answers = _serve_lines(vault, lines)
    assert sorted(answers, key=str) == [1, 2, 3, 4, 5, 6, 7, 8, 9, None]

    assert answers[1]["result"]["protocolVersion"] == "2025-03-26"
    assert answers[1]["result"]["capabilities"] == {"tools": {}}
    (tool,) = answers[2]["result"]["tools"]
    assert tool["name"] == "memory_tree" and tool["inputSchema"]["properties"]["mode"]["enum"] == list(MODES)

    walked = answers[3]["result"]
    assert walked["isError"] is False
    evidence, data = walked["content"]
    assert "Harbor Sports" in evidence["text"] and "[[Notes/boat" in evidence["text"]
    ids = [{"node_id": h["node_id"], "node_kind": h["node_kind"]} for h in walked["structuredContent"]["hits"]]
    assert json.loads(data["text"])["hits"] == ids  # the block's [n] is hits[n-1]
    assert walked["structuredContent"]["hits"][0]["note_path"] == "Notes/boat.md"

    for ident, said in (
        (4, "unknown argument 'question' for walk; hint: walk takes query"),
        (5, "'mode' must be one of: walk, search"),
        (6, "no node with id zzzzzz"),
    ):
        assert answers[ident]["result"]["isError"] is True and said in answers[ident]["result"]["content"][0]["text"]
    assert answers[7]["error"]["code"] == -32601
    assert answers[8]["error"]["code"] == -32602 and "memory_tree" in answers[8]["error"]["message"]
    assert answers[None]["error"]["code"] == -32700
    assert answers[9]["result"] == {}


def test_calls_go_through_the_running_daemon_which_holds_the_index(
    vault: Path, daemon: Memory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, "Notes/boat.md", _NOTE)
    client = find_daemon(daemon.config)  # the note reaches the index through the daemon, as a save would
    assert client is not None
    client.call("POST", "/v1/sync", {"paths": ["Notes/boat.md"]})
    monkeypatch.setattr(sys, "stdin", io.StringIO(_call(1, mode="search", query="kayak", limit=1) + "\n"))
    code, out, err = run_main(capsys, "mcp", "--vault", str(vault))
    assert code == 0, err
    result = _answers(out)[1]["result"]
    assert result["isError"] is False
    assert [h["note_path"] for h in result["structuredContent"]["hits"]] == ["Notes/boat.md"]


def test_bytes_that_are_not_utf8_are_named_in_the_answer_and_every_answer_is_utf8(tmp_path: Path) -> None:
    vault = boat_vault(tmp_path / "vault")
    bad_value = _call(1, mode="search", query="kayak OLD").encode().replace(b"OLD", b"\xff")
    bad_name = _call(2, mode="search", query="kayak", limiX=1).encode().replace(b"X", b"\xfe")
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultmind", "mcp", "--vault", str(vault)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},  # strict: an undecodable byte must not end the server
    )
    try:
        out, err = proc.communicate(b"\n".join([bad_value, bad_name, _request(3, "ping").encode()]) + b"\n", timeout=SERVE_S)
    finally:
        end_process(proc)
    assert proc.returncode == 0, err
    answers = _answers(out.decode("utf-8"))  # strict: the client reads UTF-8 only
    assert answers[1]["result"]["isError"] is True
    assert "'query' is not valid Unicode" in answers[1]["result"]["content"][0]["text"]
    assert answers[2]["result"]["isError"] is True
    assert "unknown argument 'limi\\udcfe'" in answers[2]["result"]["content"][0]["text"]  # the byte, escaped
    assert answers[3]["result"] == {}


def test_the_tool_schema_names_every_argument_a_mode_takes() -> None:
    """A validating client refuses an argument the tool's schema does not name: a mode's
    argument added to `dispatch.ARGUMENTS` must be in the schema too, and the schema names none
    that no mode takes (but the server's own: how it tells the answer)."""
    properties = dict(tool_definition()["inputSchema"]["properties"])
    assert properties.pop("mode")["enum"] == list(MODES)
    for own in OWN_ARGUMENTS:
        properties.pop(own)
    assert set(properties) == {name for names in ARGUMENTS.values() for name in names}


def test_answers_are_one_line_each_for_a_client_splitting_on_unicode_line_ends(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Answers were written with U+2028, U+2029 and U+0085 raw: a client splitting lines on them
    (as str.splitlines does) read one answer as several, none of them JSON."""
    write(vault, "Notes/boat.md", "# Boat\n\nThe red kayak\u2028from Harbor Sports\u2029on 3 May\x85in the rain.\n")
    assert run_main(capsys, "init", "--existing", str(vault))[0] == 0
    monkeypatch.setattr(sys, "stdin", io.StringIO(_call(1, mode="search", query="kayak", limit=1) + "\n"))
    code, out, err = run_main(capsys, "mcp", "--vault", str(vault))
    assert code == 0, err
    assert out.isascii()
    (hit,) = _answers(out)[1]["result"]["structuredContent"]["hits"]
    assert "kayak\u2028from Harbor Sports\u2029on 3 May\x85in" in hit["content"]


def test_a_clients_response_gets_no_answer_and_batches_only_under_the_protocols_that_had_them(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JSON-RPC response from the client (an id with a result or an error) was answered as
    an invalid request; batches, dropped from the protocol in 2025-06-18, were answered under
    every version."""
    batch = "[" + _request(2, "ping") + "," + _request(3, "ping") + "]"
    response = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {}})
    failed = json.dumps({"jsonrpc": "2.0", "id": 8, "error": {"code": -1, "message": "no"}})
    write(vault, "Notes/boat.md", _NOTE)
    assert run_main(capsys, "init", "--existing", str(vault))[0] == 0

    def session(version: str) -> list[Any]:
        hello = _request(1, "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t"}})
        monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join([hello, response, failed, batch]) + "\n"))
        code, out, err = run_main(capsys, "mcp", "--vault", str(vault))
        assert code == 0, err
        return [json.loads(line) for line in out.splitlines()][1:]  # after initialize's

    (answer,) = session("2025-06-18")
    assert answer["id"] is None and answer["error"]["code"] == -32600 and "2025-06-18" in answer["error"]["message"]
    (answers,) = session("2025-03-26")
    assert [(a["id"], a["result"]) for a in answers] == [(2, {}), (3, {})]


def test_what_a_worker_process_writes_to_stdout_does_not_reach_the_protocol(tmp_path: Path) -> None:
    """stdout was redirected for Python's prints only: a process started during a call (or
    native code) writing to file descriptor 1 put its bytes among the answers."""
    vault = boat_vault(tmp_path / "vault")
    worker = (
        "import subprocess, sys\n"
        "import vaultmind.cli.mcp as mcp\n"
        "from vaultmind.cli.main import main\n"
        "asked = mcp.ask\n"
        "def ask(config, mode, args, **how):\n"
        "    subprocess.run([sys.executable, '-c', 'print(\"a worker says hello\")'], check=True)\n"
        "    return asked(config, mode, args, **how)\n"
        "mcp.ask = ask\n"
        "sys.exit(main(['mcp', '--vault', sys.argv[1]]))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", worker, str(vault)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        out, err = proc.communicate(_call(1, mode="search", query="kayak", limit=1) + "\n" + _request(2, "ping") + "\n", timeout=SERVE_S)
    finally:
        end_process(proc)
    assert proc.returncode == 0, err
    answers = _answers(out)
    assert answers[1]["result"]["structuredContent"]["hits"][0]["note_path"] == "Notes/boat.md"
    assert answers[2]["result"] == {}
    assert "a worker says hello" in err


def test_a_vault_missing_at_start_is_each_calls_error_until_it_is_set_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An agent host starts the server as a command and shows its stderr to nobody: a server
    that ended at a missing vault left the agent with "connection closed" and no reason. It
    answers instead, each call with what is wrong, and uses the vault once it is set up."""
    vault = tmp_path / "Later vault"
    answered = threading.Semaphore(0)  # released as each tool call's answer is made (calls run on threads)
    call = McpServer._call

    def counted(server: McpServer, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            return call(server, arguments)
        finally:
            answered.release()

    monkeypatch.setattr(McpServer, "_call", counted)

    def lines() -> Any:
        yield _request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}})
        yield _call(2, mode="walk", query="where did we buy the kayak?")
        assert answered.acquire(timeout=60)  # an agent that waits for the answer
        boat_vault(vault)  # the user runs `vaultmind init` while the agent's server runs
        yield _call(3, mode="walk", query="where did we buy the kayak?")

    monkeypatch.setattr(sys, "stdin", (line + "\n" for line in lines()))
    code, out, err = run_main(capsys, "mcp", "--vault", str(vault))
    assert code == 0, err
    answers = _answers(out)
    assert answers[1]["result"]["serverInfo"]["name"] == "vaultmind"
    missing = answers[2]["result"]
    assert missing["isError"] is True
    assert f"vault folder {vault} does not exist" in missing["content"][0]["text"]
    assert "vaultmind init" in missing["content"][0]["text"]  # what to do, said to the agent
    assert "does not exist" in err  # and to whoever reads the host's log
    found = answers[3]["result"]
    assert found["isError"] is False
    assert found["structuredContent"]["hits"][0]["note_path"] == "Notes/boat.md"


def test_a_vault_named_by_the_environment_and_missing_is_still_named_to_the_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server's instructions name the vault an agent reads from, also when $VAULTMIND_VAULT
    names it and it is not there yet (they said "the Obsidian vault ''")."""
    monkeypatch.setenv("VAULTMIND_VAULT", str(tmp_path / "Later vault"))
    hello = _request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}})
    monkeypatch.setattr(sys, "stdin", iter([hello + "\n"]))
    code, out, err = run_main(capsys, "mcp")
    assert code == 0, err
    assert "the Obsidian vault 'Later vault'" in _answers(out)[1]["result"]["instructions"]


def _serve_lines(vault: Path, lines: list[str]) -> dict[Any, dict[str, Any]]:
    """The answers of `vaultmind mcp --vault vault` to `lines`, run as an agent host runs it."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultmind", "mcp", "--vault", str(vault)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        out, err = proc.communicate("\n".join(lines) + "\n", timeout=SERVE_S)
    finally:
        end_process(proc)
    assert proc.returncode == 0, err
    return _answers(out)


def test_the_text_an_agent_reads_for_a_cited_walk_stays_within_the_budget_it_asked_for(tmp_path: Path) -> None:
    """The evidence block keeps to `budget_tokens`, but the text beside it was the whole answer
    as JSON — every hit's content, breakdown and links: on real mail 40–140 KB for a 1,000-token
    block, all of it in the model's context. The text is the block and the hits' ids; the whole
    answer stays in `structuredContent`."""
    vault = boat_vault(tmp_path / "vault")
    filler = " ".join(f"The harbour log entry {n} notes tide, wind and the kayak racks." for n in range(40))
    for n in range(12):
        write(vault, f"Log/day {n}.md", f"# Day {n}\n\nThe kayak went out on day {n}. {filler}\n")
    budget = 300
    answers = _serve_lines(vault, [_call(1, mode="walk", query="where did we buy the kayak?", evidence=True, budget_tokens=budget, limit=10)])
    result = answers[1]["result"]
    assert result["isError"] is False
    block, ids = (item["text"] for item in result["content"])
    full = result["structuredContent"]
    assert len(full["hits"]) == 10 and len(json.dumps(full)) > 5 * len(block)  # what the text no longer carries
    assert "Harbor Sports" in block and block == full["evidence"]
    assert len(block) <= budget * 4 + 200  # the block's own budget (and its note of what it left out)
    assert len(ids) <= 80 * len(full["hits"])  # ids only: a few tokens a hit
    assert [h["node_id"] for h in json.loads(ids)["hits"]] == [h["node_id"] for h in full["hits"]]


def test_an_agent_sees_that_a_name_fits_two_entities(tmp_path: Path) -> None:
    """Two entity notes share the alias "Chema": the agent's hits keep each entity's kind,
    aliases, mentions and `ambiguous`, so it can ask which one is meant (they had only the
    leaf fields: both hits alike, scored 1.0, nothing saying the name fits two people)."""
    vault = boat_vault(tmp_path / "vault")
    for name in ("Jose Maria Ruiz", "Chema Lopez"):
        slug = name.lower().replace(" ", "-")
        write(
            vault,
            f"entities/person/{slug}.md",
            f'---\nvaultmind: entity\nid: "person:{slug}"\nkind: person\ndisplay_name: {name}\naliases:\n  - Chema\n---\n# {name}\n',
        )
    answers = _serve_lines(vault, [_call(1, mode="search_entities", query="Chema")])
    hits = answers[1]["result"]["structuredContent"]["hits"]
    assert sorted(h["node_id"] for h in hits) == ["person:chema-lopez", "person:jose-maria-ruiz"]
    for hit in hits:
        assert hit["kind"] == "person" and hit["aliases"] == ["Chema"] and hit["ambiguous"] is True
        assert isinstance(hit["mentions"], int)
    lone = _serve_lines(vault, [_call(1, mode="search_entities", query="Jose Maria Ruiz", limit=1)])
    [hit] = lone[1]["result"]["structuredContent"]["hits"]
    assert hit["node_id"] == "person:jose-maria-ruiz" and "ambiguous" not in hit  # only when true


def test_the_text_an_agent_reads_for_an_ingested_document_says_what_was_written_not_the_document(tmp_path: Path) -> None:
    """An `ingest_document`'s text was every leaf as JSON, with scores and links: the document
    said back, larger than it was given, and `structuredContent` still is (1.4 MB for a 3.4 MB
    document). Both say what was written, and the ids of its first leaves."""
    vault = boat_vault(tmp_path / "vault")
    body = "\n\n".join(f"Paragraph {n}: the harbour ferry leaves pier {n} at dawn, and the kayak racks open." for n in range(300))
    answers = _serve_lines(vault, [_call(1, mode="ingest_document", title="Harbour guide", body=body, source_id="agent:harbour")])
    result = answers[1]["result"]
    assert result["isError"] is False
    [text] = [item["text"] for item in result["content"]]
    full = result["structuredContent"]
    assert len(text) < 1000 < len(body), len(text)
    said = json.loads(text)
    assert said == full and said["ingested"]["note"] == "sources/document/agent/harbour-guide.md"
    assert said["ingested"]["leaves"] > 10 and len(said["first_leaves"]) == 10 and "harbour-guide" in said["link"]


def test_an_ingested_documents_answer_keeps_the_notice_a_question_would_get(tmp_path: Path) -> None:
    """An index an older vaultmind built, not rebuilt yet: a walk through MCP said so, with the
    command that rebuilds it, and an `ingest_document` answered without it."""
    vault = boat_vault(tmp_path / "vault")
    assert subprocess.run([sys.executable, "-m", "vaultmind", "sync", "--vault", str(vault)], capture_output=True, check=False).returncode == 0
    with Memory.open(load_config(vault)) as memory:  # what a migration asking for a rebuild leaves
        memory.index.con.execute("INSERT INTO meta VALUES ('needs_rebuild', '1')")
    answers = _serve_lines(vault, [_call(1, mode="ingest_document", title="Ferry", body="The ferry leaves at 7:40.", source_id="agent:ferry")])
    said = answers[1]["result"]["structuredContent"]
    assert said["ingested"]["note"] == "sources/document/agent/ferry.md"
    assert "built by an older vaultmind" in said["notice"] and "vaultmind sync" in said["notice"], said


def test_the_tool_schema_says_what_each_mode_does_and_the_kinds_it_takes(tmp_path: Path) -> None:
    """A model picks a mode and fills its arguments from the schema alone: `mode` listed eight
    names with no word on what each does or needs, and `kind` no kind — an agent asking
    `ingest_document` without `source_id`, or `search_entities` with kind "people", learnt it
    from an error."""
    from vaultmind.entities.ids import KINDS as ENTITY_KINDS
    from vaultmind.retrieval.modes import SOURCE_KINDS

    vault = boat_vault(tmp_path / "vault")
    answers = _serve_lines(vault, [_request(1, "tools/list"), _call(2, mode="ingest_document", title="t", body="b")])
    (tool,) = answers[1]["result"]["tools"]
    properties = tool["inputSchema"]["properties"]
    said = properties["mode"]["description"]
    for mode in MODES:
        assert f"{mode}: " in said
    assert "ingest_document: write a document into the vault, its one write (needs title, body and source_id)" in said
    refused = answers[2]["result"]  # what the description says it needs is what the mode refuses without
    assert refused["isError"] is True and "'source_id'" in refused["content"][0]["text"]
    kinds = properties["kind"]["description"]
    assert all(kind in kinds for kind in (*ENTITY_KINDS, *SOURCE_KINDS))
    assert all(prop.get("description") for prop in properties.values())
