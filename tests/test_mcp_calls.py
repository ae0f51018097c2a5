"""`vaultmind mcp` answering an agent's tool calls side by side over stdio: a slow call (a walk on
a busy index, a large document's ingest) holds no other, and writes still apply one at a time,
in the order sent."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from vaultmind.client import find_daemon
from vaultmind.config import load_config
from vaultmind.memory import Memory

from .conftest import end_process, running_daemon, write
from .test_mcp import _NOTE, _call

pytestmark = pytest.mark.slow

WAIT_S = 60.0  # for what must come (generous: the machine may be loaded)


@contextmanager
def _mcp(vault: Path, log: Path) -> Iterator[tuple[Any, queue.Queue[Any]]]:
    """`vaultmind mcp --vault vault` as an agent host runs it: a function sending one line to
    its stdin, and the answers it writes, each line read as JSON as it comes."""
    env = {**os.environ, "VAULTMIND_EMBED_PROVIDER": "none"}
    with log.open("w") as errlog:
        proc = subprocess.Popen(
            [sys.executable, "-m", "vaultmind", "mcp", "--vault", str(vault)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog, text=True, env=env,
        )
        answers: queue.Queue[Any] = queue.Queue()

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                answers.put(json.loads(line))  # (a line that is not one message fails here: never taken)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()

        def send(line: str) -> None:
            assert proc.stdin is not None
            proc.stdin.write(line + "\n")
            proc.stdin.flush()

        try:
            yield send, answers
            assert proc.stdin is not None
            proc.stdin.close()  # the server ends when its stdin does
            assert proc.wait(WAIT_S) == 0, log.read_text()
            reader.join(WAIT_S)
        finally:
            end_process(proc)


def _hold(memory: Memory, monkeypatch: pytest.MonkeyPatch, mode: str) -> tuple[threading.Event, threading.Event, list[str]]:
    """The daemon's first call of `mode` held until released: (asked, release, the modes asked)."""
    asked, release, modes = threading.Event(), threading.Event(), []
    query = memory.query

    def held(asked_mode: str, args: dict[str, Any]) -> Any:
        modes.append(asked_mode)
        if asked_mode == mode and not asked.is_set():
            asked.set()
            release.wait(2 * WAIT_S)
        return query(asked_mode, args)

    monkeypatch.setattr(memory, "query", held)
    return asked, release, modes


def _hits(answer: dict[str, Any]) -> list[str]:
    assert answer["result"]["isError"] is False, answer
    return [hit["note_path"] for hit in answer["result"]["structuredContent"]["hits"]]


@pytest.fixture
def served(vault: Path) -> Iterator[Memory]:
    """The vault's daemon running, its one note, about a kayak, indexed."""
    write(vault, "Notes/boat.md", _NOTE)
    with running_daemon(load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)) as (memory, _):
        client = find_daemon(memory.config)
        assert client is not None
        client.call("POST", "/v1/sync", {"paths": ["Notes/boat.md"]})
        yield memory


def test_a_call_the_daemon_is_slow_to_answer_holds_no_other_call(
    vault: Path, served: Memory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The server answered one line at a time: a walk the daemon was slow to answer held the
    agent's next call, a quick search, until it was done."""
    asked, release, _ = _hold(served, monkeypatch, "walk")
    try:
        with _mcp(vault, tmp_path / "mcp.log") as (send, answers):
            send(_call(1, mode="walk", query="where did we buy the kayak?"))
            assert asked.wait(WAIT_S), "the walk reached the daemon"
            send(_call(2, mode="search", query="kayak", limit=1))
            try:
                first = answers.get(timeout=WAIT_S)
            except queue.Empty:
                pytest.fail("the search was not answered while the walk ran")
            assert first["id"] == 2 and _hits(first) == ["Notes/boat.md"]
            release.set()
            second = answers.get(timeout=WAIT_S)
            assert second["id"] == 1 and _hits(second)[0] == "Notes/boat.md"
    finally:
        release.set()


def test_documents_are_written_one_at_a_time_in_the_order_sent_while_reads_go_on(
    vault: Path, served: Memory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two versions of one document sent back to back: the second is not sent to the daemon
    before the first is written (the later version is the one kept), and a read sent meanwhile
    is answered at once."""
    asked, release, modes = _hold(served, monkeypatch, "ingest_document")
    document = {"mode": "ingest_document", "title": "Trip plan", "source_id": "doc:trip"}
    try:
        with _mcp(vault, tmp_path / "mcp.log") as (send, answers):
            send(_call(1, **document, body="We leave on Friday by train."))
            assert asked.wait(WAIT_S), "the first version reached the daemon"
            send(_call(2, **document, body="We leave on Saturday by ferry."))
            send(_call(3, mode="search", query="kayak", limit=1))
            first = answers.get(timeout=WAIT_S)
            assert first["id"] == 3 and _hits(first) == ["Notes/boat.md"]
            assert modes.count("ingest_document") == 1, "the second version waits for the first"
            release.set()
            written = [answers.get(timeout=WAIT_S) for _ in range(2)]
        assert [a["id"] for a in written] == [1, 2]
        assert all(a["result"]["isError"] is False for a in written), written
    finally:
        release.set()
    note = json.loads(written[1]["result"]["content"][0]["text"])["ingested"]["note"]
    text = (vault / note).read_text(encoding="utf-8")
    assert "Saturday by ferry" in text and "Friday" not in text


def test_calls_without_a_daemon_open_the_index_one_at_a_time_and_are_all_answered(tmp_path: Path) -> None:
    """Without a daemon each call opens the index in the server's process: calls sent together
    take turns there, and each is answered as it would be alone."""
    vault = tmp_path / "vault"
    write(vault, "Notes/boat.md", _NOTE)
    (vault / ".vaultmind").mkdir()
    with _mcp(vault, tmp_path / "mcp.log") as (send, answers):
        for ident in range(1, 5):
            send(_call(ident, mode="search", query="kayak", limit=1))
        got = {a["id"]: a for a in (answers.get(timeout=2 * WAIT_S) for _ in range(4))}
    assert sorted(got) == [1, 2, 3, 4]
    assert all(_hits(a) == ["Notes/boat.md"] for a in got.values()), got


def test_a_server_without_a_daemon_answers_from_the_vault_as_it_is_now(tmp_path: Path) -> None:
    """A long-lived server with no daemon brings the index up to date before each call: a note
    deleted since the last call is not answered, and one saved since is found."""
    vault = tmp_path / "vault"
    write(vault, "Notes/boat.md", _NOTE)
    (vault / ".vaultmind").mkdir()
    with _mcp(vault, tmp_path / "mcp.log") as (send, answers):
        send(_call(1, mode="search", query="kayak", limit=3))
        assert _hits(answers.get(timeout=2 * WAIT_S)) == ["Notes/boat.md"]
        (vault / "Notes/boat.md").unlink()
        write(vault, "Notes/canoe.md", "# Canoe\n\nThe green kayak went to Lena.\n")
        send(_call(2, mode="search", query="kayak", limit=3))
        assert _hits(answers.get(timeout=2 * WAIT_S)) == ["Notes/canoe.md"]
