"""What a daemon holds and answers while it starts: a status asked during its start-up answers
at once, says the daemon is loading and leaves out the counts that hash every leaf; and the
resident leaves and vectors hold one copy of the leaf ids when they hold the same ones, and
answer as structures loaded apart would, before and after an edit the watcher applies."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultmind.cli.output import print_status
from vaultmind.client import DaemonClient, find_daemon
from vaultmind.config import Config, load_config
from vaultmind.daemon import Daemon
from vaultmind.index.resident import ResidentLeaves
from vaultmind.index.resident_vectors import ResidentVectors
from vaultmind.memory import Memory

from .conftest import READY_S, WAIT_S, until, write

QUERIES = ["quokka migration", "budget review friday", "rollback plan noon"]


def _write_notes(vault: Path) -> None:
    write(vault, "notes/a.md", "# Migration\n\nThe quokka migration starts on Monday.\n\n## Budget\n\nThe budget review moves to Friday.\n")
    write(vault, "notes/b.md", "# Plan\n\n## Rollback\n\nThe rollback runs at noon.\n\n## Owners\n\nBob owns the plan.\n")
    write(vault, "notes/c.md", "# Diary\n\nA quiet day; the quokka slept.\n")


def _config(vault: Path) -> Config:
    return load_config(vault, embed_provider="static", debounce_ms=50, step_ms=20)


def _client(config: Config) -> DaemonClient:
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        client = find_daemon(config)
        if client is not None:
            return client
        time.sleep(0.05)
    raise AssertionError("the daemon's API did not answer")


@pytest.fixture
def starting(vault: Path) -> Iterator[tuple[Config, Memory, Daemon]]:
    """A daemon whose start-up waits: the test holds the sync lock its first reconcile takes."""
    _write_notes(vault)
    config = _config(vault)
    memory = Memory.open(config)
    memory.sync()  # an index to start from
    daemon = Daemon(config, memory)
    memory.sync_lock.acquire()
    thread = threading.Thread(target=daemon.run, daemon=True)
    thread.start()
    held = True
    try:
        yield config, memory, daemon
        memory.sync_lock.release()
        held = False
    finally:
        if held:
            memory.sync_lock.release()
        daemon.stop()
        thread.join(WAIT_S)
        memory.close()


def test_a_status_asked_while_the_daemon_starts_answers_and_says_it_is_loading(
    starting: tuple[Config, Memory, Daemon], capsys: pytest.CaptureFixture[str]
) -> None:
    config, memory, daemon = starting
    client = _client(config)
    status = client.call("GET", "/v1/status", timeout=10.0)
    assert not daemon.ready.is_set()  # its first reconcile still waits
    assert status["loading"] is True
    assert status["index"]["health"] == "loading" and "starting" in status["index"]["notice"]
    with memory.index.lock:
        leaves = int(memory.index.scalar("SELECT count(*) FROM leaves"))
    assert status["notes"]["total"] == 3 and status["leaves"] == leaves > 0
    # the counts that hash every leaf are left for later, not guessed
    assert status["embeddings"]["model"] and status["embeddings"]["missing"] is None
    assert status["embeddings"]["embedded"] is None and status["entities"]["ner_pending"] is None
    print_status(status)  # the command line shows such an answer too
    assert "counted once the daemon has started" in capsys.readouterr().out

    memory.sync_lock.release()  # the start-up goes on
    try:
        assert daemon.ready.wait(READY_S), "daemon did not become ready"
    finally:
        memory.sync_lock.acquire()  # (the fixture releases it)
    ready = client.call("GET", "/v1/status", timeout=10.0)
    assert ready["loading"] is False and ready["index"]["health"] == "ok"
    assert ready["embeddings"]["missing"] == 0 and ready["embeddings"]["embedded"] == leaves
    assert ready["entities"]["ner_pending"] is not None
    assert {k: v for k, v in ready["notes"].items()} == status["notes"]


def _fresh_answers(memory: Memory) -> tuple[dict[str, list[tuple[str, float]]], dict[str, list[tuple[str, float]]]]:
    """Lexical and dense answers of structures loaded apart from the memory's (no ids shared)."""
    assert memory.embedder is not None
    leaves, vectors = ResidentLeaves(memory.index), ResidentVectors(memory.index, memory.embedder.model_id)
    try:
        lexical = {q: leaves.search(q.split(), 5) for q in QUERIES}
        dense = {q: vectors.search(memory.embedder.embed([q])[0], 5) for q in QUERIES}
    finally:
        leaves.close()
        vectors.close()
    return lexical, dense


def _answers(memory: Memory) -> tuple[dict[str, list[tuple[str, float]]], dict[str, list[tuple[str, float]]]]:
    assert memory.vectors is not None and memory.embedder is not None
    lexical = {q: memory.leaves.search(q.split(), 5) for q in QUERIES}
    dense = {q: memory.vectors.search(memory.embedder.embed([q])[0], 5) for q in QUERIES}
    return lexical, dense


def _shared(memory: Memory) -> bool:
    assert memory.vectors is not None
    return memory.leaves._rows._keys is memory.vectors._rows._keys and len(memory.leaves._rows) > 0


def test_the_leaves_and_their_vectors_hold_one_copy_of_the_ids_through_a_watched_edit(vault: Path) -> None:
    _write_notes(vault)
    config = _config(vault)
    memory = Memory.open(config)
    daemon = Daemon(config, memory)
    thread = threading.Thread(target=daemon.run, daemon=True)
    thread.start()
    try:
        assert daemon.ready.wait(READY_S), "daemon did not become ready"
        assert memory.vectors is not None
        with memory.sync_lock:
            assert _shared(memory)  # warmed: every leaf has a vector, one copy of their ids
            assert memory.vectors.memory()["ids"] < memory.leaves.memory()["ids"]  # counted once
            assert _answers(memory) == _fresh_answers(memory)
        write(vault, "notes/b.md", "# Plan\n\n## Rollback\n\nThe quokka rollback runs at noon.\n")  # a leaf gone, one new
        until(
            lambda: any(
                "quokka rollback" in str(row["text"])
                for row in memory.leaves.rows([leaf for leaf, _ in memory.leaves.search(["rollback"], 5)]).values()
            )
        )
        with memory.sync_lock:  # no other change while both are read
            lexical, dense = _answers(memory)
            assert any("quokka rollback" in str(row["text"]) for row in memory.leaves.rows([leaf for leaf, _ in lexical["rollback plan noon"]]).values())
            fresh_lexical, fresh_dense = _fresh_answers(memory)
            assert lexical == fresh_lexical
            assert [leaf for leaf, _ in dense["rollback plan noon"]] == [leaf for leaf, _ in fresh_dense["rollback plan noon"]]
            for q in QUERIES:  # a vector the save embedded is float32 until a reload reads its float16 copy
                assert [leaf for leaf, _ in dense[q]] == [leaf for leaf, _ in fresh_dense[q]]
                assert [s for _, s in dense[q]] == pytest.approx([s for _, s in fresh_dense[q]], abs=1e-3)
            # loaded again, both: one copy of the ids once more, the same answers
            memory.vectors.close()
            memory.leaves.close()
            again = _answers(memory)
            assert _shared(memory)
            assert again == _fresh_answers(memory)
    finally:
        daemon.stop()
        thread.join(WAIT_S)
        memory.close()


def test_ids_are_not_shared_when_the_leaves_and_vectors_hold_different_ones(vault: Path) -> None:
    _write_notes(vault)
    with Memory.open(_config(vault)) as memory:
        memory.sync()
        with memory.index.lock:  # a leaf of no note: the vectors load it, the leaves do not
            memory.index.con.execute(
                "INSERT INTO leaves SELECT * REPLACE ('ffffffffffffffffffffffffffffffff' AS id, 'gone.md' AS note_path) FROM leaves LIMIT 1"
            )
        memory.serve()
        memory.warm()
        assert memory.vectors is not None
        assert not _shared(memory)
        assert len(memory.vectors._rows) == len(memory.leaves._rows) + 1
        assert _answers(memory) == _fresh_answers(memory)


_FIRST_QUESTION = """
import sys
from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.spelling import english_words
with Memory.open(load_config(sys.argv[1], embed_provider="none")) as memory:
    memory.sync()
    memory.warm()
    loaded, words = set(sys.modules), english_words.cache_info().currsize
    memory.walk("What did Ada plant in the garden last spring?")
    print(sorted(m for m in set(sys.modules) - loaded if m.startswith("vaultmind.")), words)
"""


def test_a_warm_up_loads_what_the_first_question_would(vault: Path) -> None:
    """`warm` (a daemon's, before it serves; the eval's, before its questions) loads the read
    path's modules and the English word list: the first question paid 1-2 s for them, in a
    fresh process, against tens of ms for the next."""
    write(vault, "notes/garden.md", "# Garden\n\nAda planted tulips and garlic in the garden last spring.\n")
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_QUESTION, str(vault)], capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "[] 1", out.stdout
