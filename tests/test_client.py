"""Finding the vault's daemon: a stale `daemon.json` whose port another server now holds."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from vaultmind.client import find_daemon
from vaultmind.config import load_config

from .conftest import run_main, write


@contextmanager
def _other_server(body: bytes, content_type: str) -> Iterator[int]:
    """A loopback HTTP server that answers every GET 200 with `body`; its port."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("body", "content_type"),
    [(b"<html>hello</html>", "text/html"), (b'{"status": "fine"}', "application/json")],
)
def test_a_stale_daemon_file_naming_another_server_means_no_daemon(
    vault: Path, capsys: pytest.CaptureFixture[str], body: bytes, content_type: str
) -> None:
    """The pid lives (this process: a reused pid) and the port answers 200, but not as
    vaultmind: no daemon there, and commands work on the index themselves."""
    write(vault, "a.md", "# A\n\nThe atlas launch.\n")
    with _other_server(body, content_type) as port:
        info = {"pid": os.getpid(), "port": port, "token": "x", "host": "127.0.0.1"}
        write(vault, ".vaultmind/daemon.json", json.dumps(info))
        assert find_daemon(load_config(vault, embed_provider="none")) is None
        code, data, err = run_main(capsys, "sync", "--vault", str(vault), "--json")
        assert code == 0, err
        assert data["added"] == 1  # synced by this process: no daemon was asked
