"""The API and the MCP server answer on, whatever one client sends: a body nested thousands of
levels deep, a request body left half sent, params that are no object; and an answer has the
same shape whether the daemon or this process gives it."""

from __future__ import annotations

import io
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from vaultmind import http_api
from vaultmind.client import DaemonClient
from vaultmind.mcp_server import McpServer
from vaultmind.memory import Memory

from .conftest import run_main, write

_DEEP = "[" * 200_000 + "]" * 200_000


def _mcp(ask: Any, *messages: str) -> dict[Any, dict[str, Any]]:
    out = io.StringIO()
    McpServer(ask).serve(io.StringIO("\n".join(messages) + "\n"), out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    return {a["id"]: a for line in lines for a in (line if isinstance(line, list) else [line])}  # a batch's answers, each


def _request(ident: int, method: str, **rest: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, **rest})


def test_the_mcp_server_reads_on_after_a_deep_line_and_names_params_that_are_no_object() -> None:
    def ask(mode: str, args: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("broken")  # a failure of vaultmind's own, not a mistake of the call

    answers = _mcp(
        ask,
        _DEEP,
        _request(1, "tools/call", params=[]),
        _request(2, "tools/call", params={"name": "memory_tree", "arguments": {"mode": "walk", "query": "kayak"}}),
        _request(3, "ping"),
    )
    assert answers[None]["error"]["code"] == -32700 and "nests too deeply" in answers[None]["error"]["message"]
    assert answers[1]["error"] == {"code": -32602, "message": "params must be an object"}
    # as a daemon's failure reaches the agent (its 500, a DaemonError): the tool's failed answer
    assert answers[2]["result"]["isError"] is True and "vaultmind failed: KeyError" in answers[2]["result"]["content"][0]["text"]
    assert answers[3]["result"] == {}  # the server answered on
    # JSON Python does not read (an integer of thousands of digits): a parse error, the server reads on
    answers = _mcp(ask, '{"jsonrpc": "2.0", "id": 4, "method": "ping", "params": {"n": ' + "9" * 5000 + "}}", _request(5, "ping"))
    assert answers[None]["error"]["code"] == -32700 and "Exceeds the limit" in answers[None]["error"]["message"]
    assert answers[5]["result"] == {}
    # arguments that are no object are refused, whatever they are; never read as none
    wrong: list[Any] = [[], 0, False, "x"]
    answers = _mcp(ask, *(_request(n, "tools/call", params={"name": "memory_tree", "arguments": a}) for n, a in enumerate(wrong)))
    assert [answers[n]["error"] for n in range(len(wrong))] == [{"code": -32602, "message": "arguments must be an object"}] * len(wrong)


def test_an_mcp_answer_json_cannot_hold_is_the_calls_failure_and_the_server_answers_on() -> None:
    """A cited walk's answer holding a value of no JSON type where only its structured content
    has it (the text is the evidence block): the call is answered with the failure, alone and
    in a batch beside a sound answer. It was never answered, and the agent waited for ever."""

    def ask(mode: str, args: dict[str, Any]) -> dict[str, Any]:
        found = {"kayak"} if args["query"] == "kayak" else []  # a set: no JSON type
        return {"evidence": "[1] The kayak.", "hits": [], "total": 0, "truncated": False, "found": found}

    def walk(ident: int, query: str) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                "params": {"name": "memory_tree", "arguments": {"mode": "walk", "query": query, "evidence": True}}}

    hello = _request(0, "initialize", params={"protocolVersion": "2024-11-05"})
    batch = json.dumps([walk(2, "kayak"), walk(3, "canoe")])
    answers = _mcp(ask, hello, json.dumps(walk(1, "kayak")), batch, _request(4, "ping"))
    for ident in (1, 2):
        assert answers[ident]["result"]["isError"] is True, answers[ident]
        assert "vaultmind failed: TypeError" in answers[ident]["result"]["content"][0]["text"]
    assert answers[3]["result"]["isError"] is False and answers[3]["result"]["structuredContent"]["found"] == []
    assert answers[4]["result"] == {}


def test_the_api_answers_a_deep_body_400_and_closes_a_half_sent_one(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_api, "SOCKET_TIMEOUT_S", 0.5)
    server = http_api.ApiServer(memory, "secret")
    server.start()
    try:
        client = DaemonClient("127.0.0.1", server.port, "secret")
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
            body = b'{"mode": "walk", "args": {"query": ' + _DEEP.encode() + b"}}"
            conn.sendall(
                b"POST /v1/query HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body
            )
            answer = conn.makefile("rb").read()
        assert answer.startswith(b"HTTP/1.0 400") and b"nests too deeply" in answer, answer[:300]
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
            conn.sendall(b"POST /v1/query HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\nContent-Length: 100\r\n\r\n{\"mo")
            started = time.monotonic()
            assert conn.recv(1024) == b""  # closed by the server once the client is silent: its thread is free
            assert time.monotonic() - started < 5
        assert client.call("GET", "/v1/health")["ok"] is True
    finally:
        server.stop()


def test_sync_answers_the_same_keys_through_the_daemon_as_without_it(
    vault: Path, daemon: Memory, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, "a.md", "# A\n\nThe atlas launch.\n")
    for command in ("sync", "reindex"):
        code, data, err = run_main(capsys, command, "--vault", str(vault), "--json")
        assert code == 0, err
        assert data["enriched"]["background"] is True, data  # the daemon does it: said, as a local run says what it did


def test_an_argument_that_is_not_utf8_is_named_through_the_daemon_as_without_it(
    vault: Path, daemon: Memory, capsys: pytest.CaptureFixture[str]
) -> None:
    """A byte that is not UTF-8 in an argument reaches Python as a lone surrogate: the request
    to the daemon is still sent, and the daemon names the argument."""
    write(vault, "a.md", "# A\n\nThe atlas launch.\n")
    code, _, err = run_main(capsys, "query", "walk", "atlas \udcff", "--vault", str(vault))
    assert code == 2 and "'query' is not valid Unicode" in err, err
