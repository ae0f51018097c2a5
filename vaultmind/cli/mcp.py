"""`vaultmind mcp`: the MCP server over stdio, for agent clients.

    vaultmind mcp [--vault V]

Each tool call goes through the vault's daemon when one runs (`vaultmind serve`: the index
stays loaded, answers take milliseconds), else answers from the index opened here, kept open
for the next call (`HeldMemory`) and let go as soon as another process waits for it, or after
a minute without a call, so a daemon can start at any time. A vault that is missing or not set up does not stop the
server: each call answers with what is wrong (the tool's error) until it is mended.

stdout carries the protocol only: anything else is written to stderr, from Python
(`sys.stdout`) and below it (file descriptor 1: a worker process, native code), while the
answers go to a duplicate of the real stdout. Both protocol streams are UTF-8, as MCP's stdio
transport says, whatever the locale or PYTHONIOENCODING would make them.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from vaultmind.cli.args import vault_args
from vaultmind.cli.context import config_from_args, held_memory
from vaultmind.cli.query import ask
from vaultmind.errors import VaultmindError

if TYPE_CHECKING:
    from vaultmind.config import Config
    from vaultmind.held_memory import HeldMemory


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "mcp",
        help="serve the memory_tree tool to an agent client over stdio (MCP)",
        description=(
            "Run an MCP (Model Context Protocol) server on stdin/stdout with one tool, memory_tree: every "
            "`vaultmind query` mode with its arguments, answered as the API's /v1/query answers. An agent "
            "client starts it as a command: `vaultmind mcp --vault PATH`. Calls go through the vault's "
            "daemon when one runs, else open the index here, synced with the vault first at each call and kept "
            "open between calls until another vaultmind process asks for it or a minute passes without one."
        ),
    )
    vault_args(p, json_flag=False)
    p.set_defaults(handler=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    from vaultmind.mcp_server import McpServer

    config = _config_or_none(args)
    # the name `initialize`'s instructions give: also of a vault named (by --vault or
    # $VAULTMIND_VAULT) but not set up yet; none when none is named or found (a host starting
    # the server in / said "the Obsidian vault ''")
    named = args.vault or os.environ.get("VAULTMIND_VAULT")
    vault_name = config.vault.name if config is not None else Path(named).expanduser().resolve().name if named else ""

    held: HeldMemory | None = None

    def ask_mode(mode: str, mode_args: dict[str, Any]) -> dict[str, Any]:
        """A vault that is missing or not set up yet is each call's error, read again at the
        next call: the agent is told what is wrong, and a vault set up meanwhile is used."""
        nonlocal config, held
        if config is None:
            config = config_from_args(args)
        if held is None:
            held = held_memory(config)
        return ask(config, mode, mode_args, held=held)

    # a byte that is not UTF-8 is read as a lone surrogate, which the mode names ("'query' is not
    # valid Unicode"); echoed back in a message, it is written as its JSON escape
    stdin = _utf8(sys.stdin, errors="surrogateescape")
    try:
        with _protocol_stdout() as protocol:
            McpServer(ask_mode, vault_name=vault_name).serve(stdin, protocol)
    finally:
        if held is not None:
            held.close()
    return 0


def _config_or_none(args: argparse.Namespace) -> Config | None:
    """The vault's settings, or None with the reason on stderr. An agent host starts the server
    as a command and shows its stderr to nobody: a server that ended here would leave the agent
    with "connection closed", where each call's error can say what to do."""
    try:
        config: Config = config_from_args(args)
    except VaultmindError as exc:
        print(f"vaultmind mcp: {exc}; every call answers with this until it is mended", file=sys.stderr)
        return None
    return config


@contextlib.contextmanager
def _protocol_stdout() -> Iterator[TextIO]:
    """stdout for the protocol's answers alone. A stray print goes to stderr (`sys.stdout`), and
    so does whatever is written to file descriptor 1 below Python — a worker process started
    meanwhile, native code: fd 1 points at stderr, the answers go to a duplicate of the real
    stdout (answers are ASCII: JSON escapes every other character). A stdout that is no
    file (an embedding program's stream) is used as it is."""
    stdout = sys.stdout
    stdout.flush()
    try:
        real = stdout.fileno() == 1 and stdout is sys.__stdout__
    except (OSError, ValueError):  # (io.UnsupportedOperation is both)
        real = False
    if real:
        protocol: TextIO = open(os.dup(1), "w", encoding="utf-8", errors="backslashreplace", newline="\n")  # noqa: SIM115 (closed on the way out)
        try:
            os.dup2(sys.stderr.fileno(), 1)
        except (OSError, ValueError):  # a stderr with no descriptor: the duplicate is not left open
            protocol.close()
            raise
    else:
        protocol = _utf8(stdout, errors="backslashreplace")
    sys.stdout = sys.stderr  # a stray print must not break a message
    try:
        yield protocol
    finally:
        sys.stdout = stdout
        if real:
            try:  # a reader gone (BrokenPipeError) fails the flush: fd 1 is given back all the same
                protocol.flush()
            finally:
                os.dup2(protocol.fileno(), 1)
                with contextlib.suppress(OSError):
                    protocol.close()


def _utf8(stream: TextIO, *, errors: str) -> TextIO:
    """The stream, reading or writing UTF-8."""
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(encoding="utf-8", errors=errors)
    return stream
