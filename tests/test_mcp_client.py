"""`vaultmind mcp` driven by the official MCP Python SDK's client, as an agent host drives it.

The client starts `python -m vaultmind mcp --vault V` itself, negotiates, lists the tool and
calls it; whatever the SDK refuses (a version it does not speak, a schema or result it cannot
read, a line on stdout that is not a message) fails the test.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.client import stdio as mcp_stdio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from .test_mcp import boat_vault

pytestmark = pytest.mark.slow


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def test_the_sdk_client_negotiates_lists_the_tool_calls_it_and_shuts_the_server_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = boat_vault(tmp_path / "vault")
    # The client kills a server still there 2 s after it closed its stdin: a loaded machine can
    # take longer than that to end two Python processes. Waited for longer, a server that does
    # not end by itself is still killed, and the wrapper still says nothing.
    monkeypatch.setattr(mcp_stdio, "PROCESS_TERMINATION_TIMEOUT", 60.0)
    # a wrapper says how the server ended: by itself when stdin closed, or killed by the client
    # (then the wrapper is killed too, and says nothing)
    wrapper = (
        "import subprocess, sys\n"
        "code = subprocess.call([sys.executable, '-m', 'vaultmind', 'mcp', '--vault', sys.argv[1]])\n"
        "print(f'mcp exited with {code}', file=sys.stderr)\n"
    )
    server = StdioServerParameters(command=sys.executable, args=["-c", wrapper, str(vault)])
    seen: dict[str, Any] = {}

    async def session() -> None:
        with (tmp_path / "stderr.log").open("w") as errlog:
            async with stdio_client(server, errlog=errlog) as (read, write_), ClientSession(read, write_) as client:
                seen["init"] = await client.initialize()
                seen["tools"] = (await client.list_tools()).tools

                async def call(**arguments: Any) -> Any:
                    return await client.call_tool("memory_tree", arguments)

                seen["walk"] = await call(mode="walk", query="where did we buy the kayak?", evidence=True)
                leaf_ids = [hit["node_id"] for hit in seen["walk"].structured_content["hits"]]
                seen["fetch"] = await call(mode="fetch_leaves", ids=leaf_ids)
                seen["entities"] = await call(mode="search_entities", query="Harbor Sports")
                seen["wrong"] = [
                    await call(mode="walk", question="kayak"),
                    await call(mode="search_entities", query=3),
                    await call(mode="fetch_leaves", ids="abc"),
                    await call(mode="wlak", query="kayak"),
                ]
                with pytest.raises(MCPError) as unknown_tool:
                    await client.call_tool("search", {"query": "kayak"})
                seen["unknown_tool"] = unknown_tool.value
                await client.send_ping()

    anyio.run(session)
    init = seen["init"]
    assert init.protocol_version == "2025-11-25"  # the version this client offers, accepted as is
    assert init.server_info.name == "vaultmind" and init.capabilities.tools is not None
    assert "memory_tree" in (init.instructions or "")

    (tool,) = seen["tools"]
    assert tool.name == "memory_tree"
    Draft202012Validator.check_schema(tool.input_schema)  # valid JSON Schema, and it means what it says:
    schema = Draft202012Validator(tool.input_schema)
    assert schema.is_valid({"mode": "fetch_leaves", "ids": ["a", "b"]})
    assert not schema.is_valid({"mode": "wlak"}) and not schema.is_valid({"query": "kayak"})

    walk = seen["walk"]
    assert walk.is_error is False
    assert "Harbor Sports" in walk.content[0].text and "[[Notes/boat" in walk.content[0].text
    ids = [hit["node_id"] for hit in walk.structured_content["hits"]]
    assert [hit["node_id"] for hit in json.loads(walk.content[1].text)["hits"]] == ids  # beside the block: the ids
    assert walk.structured_content["hits"][0]["note_path"] == "Notes/boat.md"

    fetched = seen["fetch"].structured_content
    assert seen["fetch"].is_error is False and fetched["missing"] == []
    assert [hit["note_path"] for hit in fetched["hits"]] == ["Notes/boat.md"] * len(fetched["hits"])
    assert "Harbor Sports" in fetched["hits"][0]["content"]

    entities = seen["entities"]
    assert entities.is_error is False
    assert [hit["content"] for hit in entities.structured_content["hits"]][:1] == ["Harbor Sports"]

    # a wrong call is the tool's answer, with the hint, for the agent to correct: not a protocol failure
    for result, said in zip(
        seen["wrong"],
        (
            "unknown argument 'question' for walk; hint: walk takes query",
            "'query' must be a non-empty string",
            "'ids' must be a list of strings",
            "'mode' must be one of: walk, search",
        ),
        strict=True,
    ):
        assert result.is_error is True and said in _text(result) and result.structured_content is None
    assert seen["unknown_tool"].code == -32602 and "memory_tree" in str(seen["unknown_tool"])

    log = (tmp_path / "stderr.log").read_text()
    assert "mcp exited with 0" in log, log  # it left when the client closed its stdin
    assert "Traceback" not in log, log


def test_the_protocol_streams_are_utf8_whatever_the_environment_says(tmp_path: Path) -> None:
    """A host that sets PYTHONIOENCODING (here ASCII) still gets UTF-8 lines, as the transport requires.

    The client here connects as the SDK does by default: it first probes `server/discover`
    (2026-07-28), is told the method is unknown, and falls back to `initialize`."""
    vault = boat_vault(tmp_path / "vault")
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "vaultmind", "mcp", "--vault", str(vault)], env={"PYTHONIOENCODING": "ascii"}
    )
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with Client(server) as client:
            seen["version"] = client.session.protocol_version
            seen["tools"] = (await client.list_tools()).tools  # the description has an em dash
            seen["walk"] = await client.call_tool("memory_tree", {"mode": "walk", "query": "the kayak from Zürich"})

    anyio.run(session)
    assert seen["version"] == "2025-11-25"
    assert "—" in seen["tools"][0].description
    walk = seen["walk"]
    assert walk.is_error is False and walk.structured_content["hits"][0]["note_path"] == "Notes/boat.md"
