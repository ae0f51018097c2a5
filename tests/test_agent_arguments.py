"""Agents' arguments as their hosts send them: a whole number as a float (5.0, which JSON
Schema's "integer" takes), and errors naming the argument as the agent wrote it, not a
command-line flag it has no use for."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from vaultmind import http_api
from vaultmind.errors import UsageError
from vaultmind.mcp_server import McpServer
from vaultmind.memory import Memory

from .conftest import run_main, write


def _boat(vault: Path) -> None:
    write(vault, "Notes/boat.md", "# Boat\n\nWe bought the red kayak from Harbor Sports on 3 May.\n")
    write(vault, "Notes/oars.md", "# Oars\n\nThe kayak's oars came from Harbor Sports too.\n")


def _tool(memory: Memory, **arguments: Any) -> dict[str, Any]:
    """The MCP server's answer to one memory_tree call, asked of `memory`."""
    server = McpServer(memory.query)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_tree", "arguments": arguments}}
    answer = server.answer(call)
    assert answer is not None
    result: dict[str, Any] = answer["result"]
    return result


def test_whole_numbers_sent_as_floats_are_read_as_the_integers_they_are(memory: Memory, vault: Path) -> None:
    """`limit: 5.0` was refused ("'limit' must be a positive integer") by the MCP tool and
    /v1/query, though the tool's own schema takes it; 1.5, true, infinity are still refused."""
    _boat(vault)
    memory.sync()
    walked = _tool(memory, mode="walk", query="kayak", limit=1.0, evidence=True, budget_tokens=300.0)
    assert walked["isError"] is False, walked
    assert len(walked["structuredContent"]["hits"]) == 1
    assert _tool(memory, mode="drill_down", node_id=walked["structuredContent"]["hits"][0]["node_id"], depth=2.0)
    for wrong in (1.5, True, math.inf, math.nan, "5", 0.0):
        refused = _tool(memory, mode="search", query="kayak", limit=wrong)
        assert refused["isError"] is True and "'limit' must be a positive integer" in refused["content"][0]["text"], wrong

    server = http_api.ApiServer(memory, "secret")
    server.start()
    try:
        from .test_api import _ask

        status, found = _ask(server, "POST", "/v1/query", b'{"mode": "search", "args": {"query": "kayak", "limit": 1.0}}')
        assert status == 200 and len(found["hits"]) == 1, found
        status, listed = _ask(server, "POST", "/v1/entities", b'{"action": "list", "limit": 2.0}')
        assert status == 200, listed
        status, flushed = _ask(server, "POST", "/v1/flush", b'{"max_stale": 0.0}')
        assert status == 200, flushed
        status, retried = _ask(server, "POST", "/v1/queue/retry", b'{"job_id": 12345.0}')
        assert status == 404 and "12345" in retried["error"]["message"], retried
        status, refused = _ask(server, "POST", "/v1/flush", b'{"max_stale": 2.5}')
        assert status == 400 and "'max_stale' must be a non-negative integer" in refused["error"]["message"]
    finally:
        server.stop()


def test_an_agent_is_told_the_arguments_name_and_the_command_line_its_flag(
    memory: Memory, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An agent was told "'start' (START on the command line) = 'last week' is not an ISO 8601
    date or time": a command line it does not have. The command line still names its flag."""
    _boat(vault)
    memory.sync()
    answer = _tool(memory, mode="cover_window", start="last week", end="2024-01-01")
    said = answer["content"][0]["text"]
    assert answer["isError"] is True and said.startswith("'start' = 'last week' is not an ISO 8601"), said
    assert "command line" not in said
    answer = _tool(memory, mode="query_source", source_id=5)
    assert answer["content"][0]["text"] == "'source_id' must be a string"
    with pytest.raises(UsageError, match=r"^'since' must be"):
        memory.query("query_source", {"source_id": "x", "since": 3})

    write(vault, ".vaultmind/config.toml", '[embeddings]\nprovider = "none"\n[entities]\nner_model = "off"\n')
    code, _, err = run_main(capsys, "query", "window", "last week", "2024-01-01", "--vault", str(vault))
    assert code == 2 and "'start' (START on the command line) = 'last week'" in err, err
