"""`vaultmind mcp`: the memory_tree tool over stdio, as an agent client uses it."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vaultmind.client import find_daemon
from vaultmind.config import load_config
from vaultmind.daemon import Daemon
from vaultmind.memory import Memory
from vaultmind.retrieval.dispatch import MODES

from .conftest import end_process, run_main, write

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
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultmind", "mcp", "--vault", str(vault)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        out, err = proc.communicate("\n".join(lines) + "\n", timeout=120)
    finally:
        end_process(proc)
    assert proc.returncode == 0, err
    answers = _answers(out)
    assert sorted(answers, key=str) == [1, 2, 3, 4, 5, 6, 7, 8, 9, None]

    assert answers[1]["result"]["protocolVersion"] == "2025-03-26"
    assert answers[1]["result"]["capabilities"] == {"tools": {}}
    (tool,) = answers[2]["result"]["tools"]
    assert tool["name"] == "memory_tree" and tool["inputSchema"]["properties"]["mode"]["enum"] == list(MODES)

    walked = answers[3]["result"]
    assert walked["isError"] is False
    evidence, data = walked["content"]
    assert "Harbor Sports" in evidence["text"] and "[[Notes/boat" in evidence["text"]
    assert json.loads(data["text"]) == walked["structuredContent"]
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


@pytest.fixture
def daemon(vault: Path) -> Iterator[Memory]:
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    memory = Memory.open(config)
    runner = Daemon(config, memory)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    assert runner.ready.wait(20), "daemon did not become ready"
    try:
        yield memory
    finally:
        runner.stop()
        thread.join(10)
        memory.close()


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
        out, err = proc.communicate(b"\n".join([bad_value, bad_name, _request(3, "ping").encode()]) + b"\n", timeout=120)
    finally:
        end_process(proc)
    assert proc.returncode == 0, err
    answers = _answers(out.decode("utf-8"))  # strict: the client reads UTF-8 only
    assert answers[1]["result"]["isError"] is True
    assert "'query' is not valid Unicode" in answers[1]["result"]["content"][0]["text"]
    assert answers[2]["result"]["isError"] is True
    assert "unknown argument 'limi\\udcfe'" in answers[2]["result"]["content"][0]["text"]  # the byte, escaped
    assert answers[3]["result"] == {}
