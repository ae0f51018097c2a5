"""The index's connection, closed on purpose by a compaction and not opened again because
another process took the file in that moment, recovers: the next statement says what is wrong
(the file, and what to do) until the other process lets go, then the index is opened again —
by the next statement, or by the background retries — with every row as it was."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vaultmind.config import Config, load_config
from vaultmind.errors import IndexUnavailable
from vaultmind.index.store import Index
from vaultmind.memory import Memory

from .conftest import write

# holds a write connection to the file (waiting for it while this process holds it) until a
# line comes on stdin
HOLDER = textwrap.dedent(
    """
    import sys, time, duckdb
    while True:
        try:
            con = duckdb.connect(sys.argv[1])
            break
        except duckdb.Error:
            time.sleep(0.01)
    print("held", flush=True)
    sys.stdin.readline()
    con.close()
    """
)

# syncs the vault into the index in another process, and holds it until a line comes on stdin
SYNCER = textwrap.dedent(
    """
    import sys
    from vaultmind.config import load_config
    from vaultmind.memory import Memory
    with Memory.open(load_config(sys.argv[1], embed_provider="none")) as memory:
        memory.sync()
        print("held", flush=True)
        sys.stdin.readline()
    """
)


class Holder:
    """Another process holding the index file (DuckDB: one read-write process per file):
    `script` run with `arg`, which says "held" once it holds it."""

    def __init__(self, arg: Path, script: str = HOLDER):
        self.process = subprocess.Popen(
            [sys.executable, "-c", script, str(arg)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def wait_held(self) -> None:
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "held"

    def release(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.write("go\n")
            self.process.stdin.close()
            self.process.wait(timeout=30)
        assert self.process.stdout is not None
        self.process.stdout.close()


@pytest.fixture
def holders() -> Iterator[list[Holder]]:
    held: list[Holder] = []
    yield held
    for holder in held:  # a test that failed midway leaves no process behind
        holder.release()


def _index(path: Path) -> Index:
    """An index of 1,000 rows that waits 0.3 s (not ten minutes) to open its file again."""
    index = Index.open(path)
    with index.transaction() as con:
        con.execute("CREATE TABLE kept (n INTEGER)")
        con.execute("INSERT INTO kept SELECT range FROM range(1000)")
    index.reopen_wait_s = 0.3
    return index


@pytest.fixture
def index(tmp_path: Path) -> Iterator[Index]:
    index = _index(tmp_path / "index.duckdb")
    yield index
    index.close()


def _compact_while_held(index: Index, holders: list[Holder], holder: Callable[[], Holder] | None = None) -> Holder:
    """Compact `index`; another process (`holder`, else one holding the file) takes the file
    once the compaction closed its connection and renamed the copy into place, so the open
    after it fails. The holder, still holding."""
    assert index.path is not None
    path = index.path

    def step(phase: str, done: int, total: int) -> None:
        if done == total and not holders:  # the compacted file in place, not opened again yet
            holders.append(holder() if holder is not None else Holder(path))
            holders[0].wait_held()

    with pytest.raises(IndexUnavailable) as raised:
        index.compact(step)
    assert holders, "the compaction never reached its rename"
    assert str(index.path) in raised.value.to_dict()["path"]
    return holders[0]


@pytest.mark.slow
def test_a_failed_reopen_says_so_then_the_next_statement_opens_the_file_again(index: Index, holders: list[Holder]) -> None:
    holder = _compact_while_held(index, holders)
    with pytest.raises(IndexUnavailable) as raised:  # at once, not DuckDB's "connection already closed"
        index.scalar("SELECT count(*) FROM kept")
    said = raised.value.to_dict()
    assert "another process holds it" in said["message"] and said["path"] == str(index.path)
    assert "end the other vaultmind process" in said["hint"] and "nothing is lost" in said["hint"]
    assert index.unavailable is not None
    index._reopening.stop()  # type: ignore[union-attr]  (the statement's own try, not the background's)
    holder.release()
    assert index.scalar("SELECT count(*) FROM kept") == 1000  # the compacted file, every row in it
    assert index.unavailable is None
    with index.transaction() as con:  # and it is written as before
        con.execute("INSERT INTO kept VALUES (1000)")
    assert index.scalar("SELECT count(*) FROM kept") == 1001


@pytest.mark.slow
def test_the_background_opens_the_file_again_without_a_request(index: Index, holders: list[Holder]) -> None:
    holder = _compact_while_held(index, holders)
    holder.release()
    deadline = time.monotonic() + 20
    while index.unavailable is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert index.unavailable is None
    assert index.scalar("SELECT count(*) FROM kept") == 1000


@pytest.mark.slow
def test_an_index_closed_while_it_waits_to_be_opened_again_stops_trying(tmp_path: Path, holders: list[Holder]) -> None:
    index = _index(tmp_path / "index.duckdb")
    holder = _compact_while_held(index, holders)
    reopening = index._reopening
    assert reopening is not None
    index.close()  # nothing to checkpoint: the file was closed whole
    holder.release()
    time.sleep(1.5)  # past the background's first tries
    assert index.unavailable is None and reopening._stopped.is_set()
    reopened = Index.open(index.path)
    try:
        assert reopened.scalar("SELECT count(*) FROM kept") == 1000
    finally:
        reopened.close()


@pytest.mark.slow
def test_what_another_process_wrote_meanwhile_is_answered_once_open_again(
    config: Config, memory: Memory, holders: list[Holder]
) -> None:
    """The resident leaves loaded before are loaded again: they would answer without the note
    the other process indexed while it held the file. By the question's own try, not the
    background's (stopped here): a search answered from the resident leaves runs no statement,
    and answered without the note until the background's next try (the test failed about one
    run in six, when the search came before the background's first try)."""
    write(config.vault, "Launch.md", "# Launch\n\nMarco preferred the harbour venue.\n")
    memory.sync()
    assert [hit["note_path"] for hit in memory.search("harbour venue")["hits"]] == ["Launch.md"]
    memory.index.reopen_wait_s = 0.3
    write(config.vault, "Axolotl.md", "# Axolotl\n\nThe axolotlgrid sensor sits in tank four.\n")
    holder = _compact_while_held(memory.index, holders, lambda: Holder(config.vault, SYNCER))
    memory.index._reopening.stop()  # type: ignore[union-attr]
    holder.release()
    assert [hit["note_path"] for hit in memory.search("axolotlgrid")["hits"]] == ["Axolotl.md"]
    assert memory.search("harbour venue")["hits"][0]["note_path"] == "Launch.md"


def _returns_within(call: Callable[[], object], seconds: float) -> bool:
    """Whether `call()` returns within `seconds`, run in a thread of its own (one that hangs
    is left behind: a deadlock holds the index's lock, which a close would wait for)."""
    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(seconds)
    return not thread.is_alive()


@pytest.mark.slow
@pytest.mark.parametrize("loads", ["leaves", "vectors"])
def test_a_load_whose_first_statement_opens_the_file_again_does_not_hang(
    vault: Path, holders: list[Holder], loads: str
) -> None:
    """The resident leaves or vectors, not loaded, load once the other process let go: the
    load's first statement opens the file again, which tells the resident structures to load
    again — the one loading among them too, whose lock this thread holds. That lock was not
    reentrant: the load hung, holding the index's lock, and with it every request (a search
    of a daemon whose leaves a large sync had left to load again did)."""
    write(vault, "Launch.md", "# Launch\n\nMarco preferred the harbour venue.\n")
    memory = Memory.open(load_config(vault, embed_provider="static"))
    memory.sync()
    memory.syncer.reload_residents()  # neither is loaded (as after a large sync's batches)
    memory.index.reopen_wait_s = 0.3
    holder = _compact_while_held(memory.index, holders)
    memory.index._reopening.stop()  # type: ignore[union-attr]  (the load's own try, not the background's)
    holder.release()
    assert memory.vectors is not None
    load = memory.leaves.authors if loads == "leaves" else memory.vectors.prepare
    assert _returns_within(load, 20), f"loading the resident {loads} hung once the file was opened again"
    assert memory.search("harbour venue")["hits"][0]["note_path"] == "Launch.md"
    memory.close()


@pytest.mark.slow
def test_the_api_answers_503_while_the_index_cannot_be_opened_again(
    config: Config, memory: Memory, holders: list[Holder]
) -> None:
    """A request that needs the index meanwhile is told so (`index_unavailable`, 503: a
    request later may be answered), not answered 500 as vaultmind failing."""
    import json
    import urllib.error
    import urllib.request

    from vaultmind import http_api

    write(config.vault, "Launch.md", "# Launch\n\nMarco preferred the harbour venue.\n")
    memory.sync()
    memory.syncer.reload_residents()  # the search loads the leaves: it needs the index
    memory.index.reopen_wait_s = 0.3
    _compact_while_held(memory.index, holders)  # still held
    memory.index._reopening.stop()  # type: ignore[union-attr]
    server = http_api.ApiServer(memory, "secret")
    server.start()
    try:
        request = urllib.request.Request(
            f"http://127.0.0.1:{server.port}/v1/query",
            data=json.dumps({"mode": "search", "args": {"query": "harbour venue"}}).encode(),
            headers={"Authorization": "Bearer secret", "Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(request, timeout=30)
        assert raised.value.code == 503
        error = json.loads(raised.value.read())["error"]
        assert error["code"] == "index_unavailable" and "another process holds it" in error["message"]
        raised.value.close()
    finally:
        server.stop()
        holders[0].release()


@pytest.mark.slow
def test_what_another_process_wrote_while_the_reopen_waited_is_answered(
    config: Config, memory: Memory, holders: list[Holder]
) -> None:
    """Another process takes the file once the compaction closed it, indexes a note and lets
    go within the reopen's wait: the open succeeds, and the resident leaves loaded before are
    loaded again. They were not: they follow the index's changes made in this process alone,
    and the note's rows were already there for every later sync, so the daemon's searches
    never found it until it restarted."""
    write(config.vault, "Launch.md", "# Launch\n\nMarco preferred the harbour venue.\n")
    memory.sync()
    assert [hit["note_path"] for hit in memory.search("harbour venue")["hits"]] == ["Launch.md"]
    write(config.vault, "Axolotl.md", "# Axolotl\n\nThe axolotlgrid sensor sits in tank four.\n")
    path = memory.index.path
    assert path is not None

    letting_go: list[threading.Timer] = []

    def step(phase: str, done: int, total: int) -> None:
        if done == total and not holders:  # the compacted file in place, not opened again yet
            holders.append(Holder(config.vault, SYNCER))
            holders[0].wait_held()
            letting_go.append(threading.Timer(0.3, holders[0].release))  # within the wait
            letting_go[0].start()

    memory.index.compact(step)
    letting_go[0].join()
    assert holders and memory.index.unavailable is None
    assert [hit["note_path"] for hit in memory.search("axolotlgrid")["hits"]] == ["Axolotl.md"]
    assert memory.sync().added == 0  # the other process indexed it
