"""The real daemon with real watchfiles: watcher path == cold rebuild; queries keep working."""

from __future__ import annotations

import json
import logging
import os
import random
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from vaultmind.claim import daemon_claim
from vaultmind.client import find_daemon
from vaultmind.config import Config, load_config
from vaultmind.daemon import Daemon
from vaultmind.entities.backfill import entity_deriver
from vaultmind.errors import DaemonError, UsageError, VaultmindError
from vaultmind.memory import Memory

from .conftest import (
    READY_S,
    WAIT_S,
    cold_rows,
    dump_index,
    end_process,
    run_main,
    running_daemon,
    sealed_summaries,
    snapshot_files,
    until,
    write,
)

WORDS = [
    "atlas",
    "budget",
    "launch",
    "river",
    "copper",
    "meadow",
    "lantern",
    "harbor",
    "violet",
    "summit",
    "orbit",
    "falcon",
]


@pytest.fixture
def running(vault: Path) -> Iterator[tuple[Config, Memory, Daemon]]:
    write(vault, "start.md", "# Start\n\nThe first note mentions atlas.\n")
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    with running_daemon(config) as (memory, daemon):
        yield config, memory, daemon


def _wait_for_parity(config: Config, memory: Memory, tmp: Path, timeout: float = READY_S) -> None:
    """Wait until the daemon's index is what a cold rebuild of the vault gives — the vault as it
    is then: the daemon's upkeep may still write a note of its own into it (an entity note once
    a tag has enough evidence), which a rebuild made before that lacks."""
    deadline = time.monotonic() + timeout
    files = snapshot_files(config.vault)
    expected = cold_rows(config, tmp)
    while True:
        if (now := snapshot_files(config.vault)) != files:
            files, expected = now, cold_rows(config, tmp)
        actual = dump_index(memory)
        if actual == expected:
            return
        if time.monotonic() > deadline:
            for table in expected:
                if actual[table] != expected[table]:
                    missing = [row for row in expected[table] if row not in actual[table]]  # rows may hold lists
                    extra = [row for row in actual[table] if row not in expected[table]]
                    pytest.fail(f"{table} differs: missing {missing[:3]} extra {extra[:3]}")
        time.sleep(0.1)


class Batches:
    """The batches the daemon applies (`Memory.sync_paths`), in order; a batch the test `hold`s
    waits until the test lets it go on. So a test orders the watcher's batches and its own
    writes as a slow host would not: under load, a bulk the test writes reached the watcher in
    several batches, and the slices of a bulk (250 ms apart) were all in before the test had
    written its save."""

    def __init__(self, memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
        self.batches: list[list[str]] = []
        self.waiting = threading.Event()  # a held batch waits
        self._holds: list[tuple[Callable[[list[str], list[list[str]]], bool], threading.Event]] = []
        sync_paths = memory.sync_paths

        def recorded(rels: list[str], *args: Any, **kwargs: Any) -> Any:
            earlier = list(self.batches)
            self.batches.append(list(rels))
            for hold in self._holds:
                which, go_on = hold
                if which(rels, earlier):
                    self._holds.remove(hold)
                    self.waiting.set()
                    go_on.wait(WAIT_S)
                    self.waiting.clear()
                    break
            return sync_paths(rels, *args, **kwargs)

        monkeypatch.setattr(memory, "sync_paths", recorded)

    def hold(self, which: Callable[[list[str], list[list[str]]], bool]) -> threading.Event:
        """The next batch for which `which(paths, earlier batches)` is true waits until the event
        returned is set (`WAIT_S` at most)."""
        go_on = threading.Event()
        self._holds.append((which, go_on))
        return go_on

    def applied_before(self, path: str, prefix: str) -> int:
        """How many paths starting with `prefix` were applied before the batch holding `path`,
        or with it."""
        done = 0
        for batch in self.batches:
            done += sum(rel.startswith(prefix) for rel in batch)
            if path in batch:
                return done
        raise AssertionError(f"{path} was never applied: {self.batches}")


def a_later_slice(prefix: str) -> Callable[[list[str], list[list[str]]], bool]:
    """A batch of paths under `prefix` only, after one that held some (a bulk's second slice)."""

    def which(rels: list[str], earlier: list[list[str]]) -> bool:
        under = all(rel.startswith(prefix) for rel in rels)
        return under and any(rel.startswith(prefix) for batch in earlier for rel in batch)

    return which


def _random_note(rng: random.Random) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30)))
    target = rng.choice(WORDS).title()
    return f"---\ntags: [{rng.choice(WORDS)}]\n---\n# {rng.choice(WORDS).title()}\n\n{words} [[{target}]] #{rng.choice(WORDS)}\n"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_random_events_equal_cold_rebuild(
    running: tuple[Config, Memory, Daemon], tmp_path: Path, seed: int
) -> None:
    config, memory, _ = running
    vault = config.vault
    rng = random.Random(seed)
    existing: list[str] = ["start.md"]
    for step in range(60):
        op = rng.choice(["create", "create", "edit", "edit", "rename", "delete", "atomic", "folder"])
        if op == "create" or not existing:
            rel = f"{rng.choice(['', 'a/', 'a/b/', 'c/'])}n{step}.md"
            write(vault, rel, _random_note(rng))
            existing.append(rel)
        elif op == "edit":
            rel = rng.choice(existing)
            with open(vault / rel, "a", encoding="utf-8") as fh:
                fh.write(f"\nedit {step} {rng.choice(WORDS)}\n")
        elif op == "rename":
            rel = rng.choice(existing)
            new = f"{rng.choice(['', 'a/', 'd/'])}r{step}.md"
            (vault / new).parent.mkdir(parents=True, exist_ok=True)
            os.rename(vault / rel, vault / new)
            existing[existing.index(rel)] = new
        elif op == "delete":
            rel = rng.choice(existing)
            (vault / rel).unlink()
            existing.remove(rel)
        elif op == "atomic":  # how editors and sync tools save: temp file + rename over
            rel = rng.choice(existing)
            tmp = vault / (rel + ".tmp~")
            tmp.write_text(_random_note(rng), encoding="utf-8")
            os.replace(tmp, vault / rel)
        elif op == "folder":  # move a whole folder, as a git checkout or file manager would
            src = rng.choice(["a", "c", "d"])
            if (vault / src).is_dir():
                dst = f"moved{step}"
                os.rename(vault / src, vault / dst)
                existing = [dst + p[len(src) :] if p.startswith(src + "/") else p for p in existing]
        if rng.random() < 0.3:
            time.sleep(rng.choice([0.0, 0.01, 0.08]))
    _wait_for_parity(config, memory, tmp_path)


@pytest.mark.slow
def test_queries_work_while_watching_and_edits_become_searchable(
    running: tuple[Config, Memory, Daemon],
) -> None:
    config, _, daemon = running
    client = find_daemon(config)
    assert client is not None, "the daemon publishes itself in .vaultmind/daemon.json"
    info = config.state_dir / "daemon.json"
    assert (info.stat().st_mode & 0o777) == 0o600
    before = snapshot_files(config.vault)
    write(config.vault, "fresh.md", "# Fresh\n\nThe quokkafestival happens in June.\n")
    deadline = time.monotonic() + WAIT_S
    hits: list[dict[str, object]] = []
    while time.monotonic() < deadline and not hits:
        hits = client.call("POST", "/v1/search", {"query": "quokkafestival"})["hits"]
        time.sleep(0.02)
    assert hits and hits[0]["note_path"] == "fresh.md"
    status = client.call("GET", "/v1/status")
    assert status["notes"]["total"] == 2
    walked = client.call("POST", "/v1/query", {"mode": "walk", "args": {"query": "quokkafestival"}})
    assert walked["hits"][0]["note_path"] == "fresh.md"
    with pytest.raises(UsageError, match="unknown key 'query'"):  # arguments belong under "args"
        client.call("POST", "/v1/query", {"mode": "walk", "query": "quokkafestival"})
    bad = type(client)(
        client.base.split("//")[1].split(":")[0], int(client.base.rsplit(":", 1)[1]), "wrong-token"
    )
    with pytest.raises(DaemonError):
        bad.call("GET", "/v1/status")
    after = snapshot_files(config.vault)
    after.pop("fresh.md")
    assert after == before
    daemon.stop()


@pytest.mark.slow
def test_daemon_seals_summaries_in_the_background(vault: Path) -> None:
    """Write a chat note while the daemon runs: its background upkeep seals a summary note."""
    from vaultmind.markdown.render import Message, SourceMeta, render_source_note

    config = load_config(
        vault,
        embed_provider="none",
        debounce_ms=50,
        step_ms=20,
        extra={"trees.l0_tokens": 64, "trees.summarizer": "fallback", "admission.llm": False},
    )
    memory = Memory.open(config)
    daemon = Daemon(config, memory)
    thread = threading.Thread(target=daemon.run, daemon=True)
    thread.start()
    try:
        assert daemon.ready.wait(READY_S)
        meta = SourceMeta(kind="chat", source_id="slack:acme/ops", scope="slack/acme/ops", title="#ops")
        messages = [
            Message(
                f"m{i}",
                "Alice Chen",
                f"2024-05-08T09:{i:02d}:00Z",
                f"Deploy step {i} of the lighthouse service finished without errors.",
            )
            for i in range(12)
        ]
        write(vault, "sources/chat/slack/acme/ops/2024-05-08.md", render_source_note(meta, messages))
        summaries = sealed_summaries(vault)
        assert summaries, f"no summary sealed (upkeep error: {daemon.trees.last_error})"
        text = summaries[0].read_text(encoding="utf-8")
        assert "vaultmind: summary" in text and "[[sources/chat/slack/acme/ops/2024-05-08#^m-" in text
    finally:
        daemon.stop()
        thread.join(WAIT_S)
        memory.close()


def test_background_enrichment_never_holds_up_a_save(vault: Path) -> None:
    """NER catch-up runs batch by batch without the sync lock: a save is applied while it is
    paused mid-way, and in the background it waits while a save is pending."""
    write(vault, ".vaultmind/config.toml", "[entities]\nner_inline = 0\nner_batch = 1\n")
    for i in range(4):
        write(vault, f"notes/n{i}.md", f"Dana Whitfield met Marco Ruiz {i} at Google in Paris.\n")
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        deriver = entity_deriver(memory)
        assert deriver is not None
        if not deriver.ner.available:
            pytest.skip(deriver.ner.status()["message"])
        inside, release = threading.Event(), threading.Event()
        steps: list[int] = []

        def paused(phase: str, done: int, total: int) -> None:
            steps.append(done)
            inside.set()
            assert release.wait(WAIT_S)

        worker = threading.Thread(target=memory.enrich, kwargs={"progress": paused})
        worker.start()
        assert inside.wait(WAIT_S), "NER never started"
        write(vault, "notes/fresh.md", "A quokka named Sprocket.\n")
        saver = threading.Thread(target=memory.sync_paths, args=(["notes/fresh.md"],))
        saver.start()
        saver.join(WAIT_S)
        assert not saver.is_alive(), "the save waited for NER to finish"
        assert memory.search("sprocket")["hits"]
        release.set()
        worker.join(WAIT_S)
        assert not worker.is_alive() and steps

        # In the background, upkeep waits while foreground work is pending.
        write(vault, "notes/more.md", "Priya Raman called Alice Chen from Dublin.\n")
        memory.sync()
        seen: list[int] = []
        with memory.foreground():
            worker = threading.Thread(
                target=memory.enrich, kwargs={"progress": lambda *a: seen.append(1), "background": True}
            )
            worker.start()
            worker.join(1.0)
            assert worker.is_alive() and seen == [], "background NER ran past a pending save"
        worker.join(WAIT_S)
        assert not worker.is_alive() and seen

        # Waiting for a quiet spell after a save ends as soon as the daemon stops.
        with memory.foreground():
            pass
        waiter = threading.Thread(target=memory.yield_to_foreground, kwargs={"quiet_s": 60.0})
        waiter.start()
        waiter.join(0.5)
        assert waiter.is_alive(), "did not wait for the quiet spell"
        memory.stopping.set()
        waiter.join(WAIT_S)
        assert not waiter.is_alive(), "kept waiting for quiet after the daemon stopped"


def test_the_daemon_gets_ready_while_its_state_folder_is_written_without_pause(vault: Path) -> None:
    """Writes under .vaultmind/ (the index's own WAL, busy background work) are ignored, but
    they must not keep the watch loop from reconciling and reporting ready."""
    write(vault, "a.md", "# A\n\nhello\n")
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    stop = threading.Event()

    def busy() -> None:
        scratch = config.state_dir / "scratch.bin"
        while not stop.is_set():
            scratch.write_bytes(os.urandom(64))
            time.sleep(0.005)

    config.state_dir.mkdir(parents=True, exist_ok=True)
    writer = threading.Thread(target=busy, daemon=True)
    writer.start()
    with Memory.open(config) as memory:
        daemon = Daemon(config, memory)
        thread = threading.Thread(target=daemon.run, daemon=True)
        thread.start()
        try:
            assert daemon.ready.wait(READY_S), "the watch loop never reached its first reconcile"
            assert memory.search("hello")["hits"]
        finally:
            stop.set()
            daemon.stop()
            thread.join(WAIT_S)
    writer.join(5)


@pytest.mark.slow
def test_a_query_sent_while_the_daemon_starts_waits_for_it_and_says_so(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The daemon publishes itself before its first reconcile and load are done; a client
    that finds it then is told the daemon is starting, waits past its usual timeout, and gets
    the answer once the daemon is ready."""
    from vaultmind.cli.context import through_daemon_or_local

    write(vault, "start.md", "# Start\n\nThe first note mentions atlas.\n")
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    memory = Memory.open(config)
    loading = threading.Event()
    release = threading.Event()
    warm = memory.warm

    def slow_warm() -> None:  # a large vault's load: queries wait on the structures' lock
        with memory.leaves._lock:
            loading.set()
            release.wait(READY_S)
        warm()

    monkeypatch.setattr(memory, "warm", slow_warm)
    daemon = Daemon(config, memory)
    thread = threading.Thread(target=daemon.run, daemon=True)
    thread.start()
    try:
        assert loading.wait(READY_S)
        client = find_daemon(config)
        assert client is not None and client.starting and client.timeout >= 600
        client.timeout = 1.0  # what a client that did not know would wait
        with pytest.raises(DaemonError):
            client.call("POST", "/v1/search", {"query": "atlas"})
        answers: list[object] = []

        def ask() -> None:
            answers.append(
                through_daemon_or_local(
                    config,
                    lambda c: c.call("POST", "/v1/search", {"query": "atlas"}),
                    lambda m: pytest.fail("the daemon owns the index: no local fallback"),
                )
            )

        asking = threading.Thread(target=ask)
        asking.start()
        time.sleep(1.5)  # past the usual timeout of the client above
        assert not answers
        release.set()
        asking.join(WAIT_S)
        assert answers and answers[0]["hits"][0]["note_path"] == "start.md"  # type: ignore[index]
        assert "still starting" in capsys.readouterr().err
        assert daemon.ready.wait(READY_S)
        again = find_daemon(config)
        assert again is not None and not again.starting and again.timeout == 30.0
    finally:
        release.set()
        daemon.stop()
        thread.join(WAIT_S)
        memory.close()


@pytest.mark.slow
def test_a_client_of_a_daemon_in_a_whole_vault_load_waits_for_it_and_says_so(
    running: tuple[Config, Memory, Daemon], capsys: pytest.CaptureFixture[str]
) -> None:
    """A rebuild holds the index for the whole load (one transaction): the health answer says
    so, and a client then waits past its usual timeout instead of failing."""
    from vaultmind.cli.context import _remote

    config, memory, _ = running
    quiet = find_daemon(config)
    assert quiet is not None and not quiet.loading and quiet.timeout == 30.0
    answers: list[object] = []
    with memory.index.bulk():  # what a rebuild's load holds until its commit
        client = find_daemon(config)
        assert client is not None and client.loading and not client.starting and client.timeout >= 600
        asking = threading.Thread(target=lambda: answers.append(_remote(client, lambda c: c.call("GET", "/v1/status"), config)))
        asking.start()
        time.sleep(1.0)
        assert not answers  # the status waits for the load
    asking.join(WAIT_S)
    assert answers and answers[0]["notes"]["total"] == 1  # type: ignore[index]
    assert "loading the whole vault" in capsys.readouterr().err


def test_a_file_name_that_is_not_utf8_is_reported_and_stops_neither_a_sync_nor_the_watcher(
    running: tuple[Config, Memory, Daemon],
) -> None:
    """A name of Latin-1 bytes (an old archive's) cannot go into the index: it is reported and
    skipped. The watcher, whose own library fails on such a name, watches on after a full pass,
    and the other notes of the vault, and later edits, are indexed."""
    config, memory, _ = running
    vault = config.vault
    with open(os.path.join(os.fsencode(vault), b"caf\xe9.md"), "wb") as f:  # not UTF-8
        f.write(b"# Cafe\n\nlatin name\n")
    write(vault, "river.md", "# River\n\nThe river note mentions copper.\n")
    assert until(lambda: bool(memory.search("copper", limit=5)["hits"])), "the note beside the bad name"
    write(vault, "later.md", "# Later\n\nA later note mentions falcon.\n")
    assert until(lambda: bool(memory.search("falcon", limit=5)["hits"])), "the watcher still watches"
    problems = memory.status()["problems"]
    assert any(p["kind"] == "bad_name" and p["path"] == "caf\ufffd.md" for p in problems)
    assert memory.index.scalar("SELECT count(*) FROM notes WHERE path LIKE 'caf%'") == 0


def test_a_symlink_made_while_watching_follows_the_rules_of_a_full_scan_and_is_watched(
    running: tuple[Config, Memory, Daemon], tmp_path: Path
) -> None:
    """A link to a folder holding the vault, made while the daemon runs, is reported and not
    followed (it used to index every note a second time under it); a link to a folder outside
    the vault is indexed, and what is written in that folder later is seen."""
    config, memory, _ = running
    vault = config.vault
    (vault / "sub").mkdir()
    time.sleep(1.0)  # the watcher is watching the new folder
    (vault / "sub" / "loop").symlink_to("..")
    assert until(lambda: any(p["kind"] == "symlink_loop" for p in memory.status()["problems"]))
    assert memory.index.scalar("SELECT count(*) FROM notes WHERE path LIKE 'sub/%'") == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f1.md").write_text("# F1\n\nThe first outside note mentions orbit.\n")
    (vault / "linked").symlink_to(outside)
    assert until(lambda: bool(memory.search("orbit", limit=3)["hits"]))
    time.sleep(1.5)  # the watcher starts over to follow the new link
    (outside / "f2.md").write_text("# F2\n\nA later outside note mentions summit.\n")
    assert until(lambda: any(h["note_path"] == "linked/f2.md" for h in memory.search("summit", limit=3)["hits"]))


@pytest.mark.slow
def test_status_says_the_index_is_behind_while_the_disk_is_full(running: tuple[Config, Memory, Daemon]) -> None:
    """The index's write-ahead log on a device with no space (/dev/full): the watcher cannot
    apply a save, status says the index is behind and why (not "ok"), and the retries back off.
    (DuckDB keeps the log it opened, so this index cannot recover in the test; a reconcile that
    succeeds clears the state, as the first part shows.)"""
    config, memory, daemon = running
    memory.behind = "the index is behind the vault: a test"
    daemon.force_reconcile = True
    assert until(lambda: memory.behind is None), "a pass that succeeds clears it"
    assert memory.status()["index"]["health"] == "ok"
    wal = config.vault / ".vaultmind" / "index.duckdb.wal"
    memory.index.checkpoint()
    assert not wal.exists()
    wal.symlink_to("/dev/full")
    write(config.vault, "river.md", "# River\n\nThe river note mentions copper.\n")
    assert until(lambda: memory.behind is not None), "the failed batch is known"
    index = memory.status()["index"]
    assert index["health"] == "behind" and "no space left on the device" in index["notice"]
    assert until(lambda: daemon._retry_s >= 8), "the retries back off"
    assert not memory.search("copper", limit=5)["hits"]
    client = find_daemon(config)
    assert client is not None
    with pytest.raises(VaultmindError) as failed:  # a sync asked through the daemon: the same words
        client.call("POST", "/v1/sync", {})
    assert failed.value.message == "no space left on the device that holds the index"


def test_a_long_command_through_the_daemon_says_where_its_progress_is(
    running: tuple[Config, Memory, Daemon], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from vaultmind.cli import context

    config, _, _ = running
    monkeypatch.setattr(context, "REMOTE_QUIET_S", 0.05)

    def slow_sync(client: Any) -> Any:
        time.sleep(0.3)  # a reindex of a big vault: the daemon answers when it is done
        return client.call("POST", "/v1/sync", {})

    result = context.through_daemon_or_local(config, slow_sync, lambda m: None, progress=True, daemon_shows_progress=True)
    assert result["notes"] >= 1
    assert "its progress shows in its own output" in capsys.readouterr().err
    context.through_daemon_or_local(config, lambda c: c.call("POST", "/v1/sync", {}), lambda m: None, progress=False)
    assert capsys.readouterr().err == "", "a short or quiet command says nothing"


def test_a_slow_query_through_the_daemon_says_it_waits_for_the_daemon_not_for_progress_it_never_shows(
    running: tuple[Config, Memory, Daemon], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The daemon shows no progress for a query: a `vaultmind query` it holds up (here its
    leaves are held, as a load or a batch holds them) says it waits for the daemon's answer."""
    from vaultmind.cli import context

    config, memory, _ = running
    monkeypatch.setattr(context, "REMOTE_QUIET_S", 0.05)
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    held, asked = threading.Event(), threading.Event()
    query = memory.query

    def asking(*args: Any, **kwargs: Any) -> Any:
        asked.set()
        return query(*args, **kwargs)

    monkeypatch.setattr(memory, "query", asking)

    def hold() -> None:  # until the question has reached the daemon, then 40 times the quiet time
        with memory.leaves._lock:
            held.set()
            asked.wait(WAIT_S)
            time.sleep(2.0)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(WAIT_S)
    code, out, err = run_main(capsys, "query", "search", "atlas", "--vault", str(config.vault), "--json")
    holder.join(WAIT_S)
    assert asked.is_set(), "asked through the daemon"
    assert code == 0 and out["hits"][0]["note_path"] == "start.md"
    assert f"waiting for the daemon at http://127.0.0.1:{running[2].api.port} to answer" in err, err  # type: ignore[union-attr]
    assert "progress shows" not in err


@pytest.mark.slow
def test_a_command_run_while_the_daemon_opens_the_index_waits_for_its_address(vault: Path) -> None:
    """A daemon holds its claim and the index before it has an address: a `status` run then
    names it and waits for its address (not 10 s for the index's lock), then asks it."""
    write(vault, "start.md", "# Start\n\nThe first note mentions atlas.\n")
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    with daemon_claim(config):
        memory = Memory.open(config)  # what a starting daemon holds before its api is up
        daemon = Daemon(config, memory)
        thread = threading.Thread(target=daemon.run, daemon=True)
        proc = _cli("status", "--vault", str(vault), "--json")
        try:
            assert proc.stderr is not None
            said = proc.stderr.readline()
            assert f"the daemon for {vault} (pid {os.getpid()}) is starting; waiting for its api" in said, said
            thread.start()
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            assert json.loads(out)["daemon"]["running"] is True, "answered by the daemon"
        finally:
            end_process(proc)
            daemon.stop()
            if thread.ident is not None:
                thread.join(WAIT_S)
            memory.close()


@pytest.mark.slow
def test_a_command_waiting_for_a_starting_daemon_that_dies_opens_the_index_itself(vault: Path) -> None:
    """The claim's holder ends before it has an address (killed, or failed to start): the
    `query` waiting for it opens the index itself and answers."""
    write(vault, "start.md", "# Start\n\nThe first note mentions atlas.\n")
    holder = subprocess.Popen(
        [sys.executable, "-c", CLAIM_AND_WAIT, str(vault)], stdout=subprocess.PIPE, text=True
    )
    proc: subprocess.Popen[str] | None = None
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "claimed"
        proc = _cli("query", "search", "atlas", "--vault", str(vault), "--json")
        assert proc.stderr is not None
        said = proc.stderr.readline()
        assert f"(pid {holder.pid}) is starting; waiting for its api" in said, said
        holder.kill()
        holder.wait(20)  # (reaped: a zombie would still count as alive)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert json.loads(out)["hits"][0]["note_path"] == "start.md"
    finally:
        holder.kill()
        holder.wait(20)
        if holder.stdout is not None:
            holder.stdout.close()
        if proc is not None:
            end_process(proc)


CLAIM_AND_WAIT = """
import sys, time
from pathlib import Path
from vaultmind.claim import daemon_claim
from vaultmind.config import load_config
with daemon_claim(load_config(Path(sys.argv[1]))):
    print("claimed", flush=True)
    time.sleep(120)
"""


def _cli(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "VAULTMIND_EMBED_PROVIDER": "none"}
    return subprocess.Popen(
        [sys.executable, "-m", "vaultmind", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


@pytest.mark.slow
def test_a_save_during_a_large_change_waits_for_one_slice_not_for_all(
    running: tuple[Config, Memory, Daemon], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Thousands of files arriving at once (a sync tool, a checkout) are applied a slice at a
    time, and a save made meanwhile comes in before the rest; status says the daemon is
    catching up; in the end the index equals a cold rebuild."""
    import vaultmind.daemon as daemon_module

    config, memory, _ = running
    monkeypatch.setattr(daemon_module, "BULK_SLICE", 20)
    batches = Batches(memory, monkeypatch)
    gate = batches.hold(lambda rels, _: rels == ["gate.md"])
    write(config.vault, "gate.md", "# Gate\n\nThe watcher waits in this note's batch.\n")
    assert until(batches.waiting.is_set)
    second_slice = batches.hold(a_later_slice("bulk-"))
    bulk = 160
    for i in range(bulk):  # one burst: one batch of the watcher (it heard them all as it waited)
        (config.vault / f"bulk-{i:03d}.md").write_text(f"# Bulk {i}\n\nA synced note about copper {i}.\n")
    gate.set()

    def indexed() -> int:
        return int(memory.index.scalar("SELECT count(*) FROM notes WHERE path LIKE 'bulk-%'"))

    assert until(lambda: indexed() > 0), "the first slice"
    write(config.vault, "save.md", "# Save\n\nThe kingfisher note saved by hand.\n")
    second_slice.set()
    assert until(lambda: bool(memory.search("kingfisher", limit=5)["hits"]))
    assert batches.applied_before("save.md", "bulk-") < bulk, "the save came in before the whole bulk"
    assert memory.status()["index"]["health"] in ("catching up", "ok")
    assert until(lambda: indexed() == bulk, seconds=READY_S)
    assert until(lambda: memory.catching_up == 0) and memory.status()["index"]["health"] == "ok"
    _wait_for_parity(config, memory, tmp_path)


def test_a_folder_ignored_in_the_config_while_serving_leaves_the_index(running: tuple[Config, Memory, Daemon]) -> None:
    """`[vault] ignore` edited while the daemon runs takes effect: the notes it now excludes
    leave the index, and edits to them are not indexed again. (It used to apply only at the
    next start, and `sync` said "unchanged".)"""
    config, memory, _ = running
    write(config.vault, "Private/diary.md", "# Diary\n\nThe heronsecret stays here.\n")
    until(lambda: memory.search("heronsecret")["hits"])
    assert memory.search("heronsecret")["hits"], "indexed first"
    write(config.vault, ".vaultmind/config.toml", '[vault]\nignore = ["Private/**"]\n')
    until(lambda: not memory.search("heronsecret")["hits"])
    assert not memory.search("heronsecret")["hits"], "the ignored folder left the index"
    write(config.vault, "Private/diary.md", "# Diary\n\nThe heronsecret and the otterplan.\n")
    time.sleep(1.0)
    assert not memory.search("otterplan")["hits"] and memory.config.ignore == ("Private/**",)


def test_a_templates_folder_configured_in_obsidian_while_serving_leaves_the_index(
    running: tuple[Config, Memory, Daemon],
) -> None:
    """Obsidian's Templates plugin given a folder while the daemon runs (it writes
    .obsidian/templates.json): the folder's notes leave the index, status names it, and a new
    template there is not indexed."""
    config, memory, _ = running
    write(config.vault, "Templates/Daily.md", "---\ntitle: {{title}}\n---\n# {{title}}\n\nThe kestrelplaceholder.\n")
    assert until(lambda: bool(memory.search("kestrelplaceholder")["hits"])), "indexed first: no folder configured"
    write(config.vault, ".obsidian/templates.json", json.dumps({"folder": "Templates"}))
    assert until(lambda: not memory.search("kestrelplaceholder")["hits"]), "the templates folder left the index"
    status = memory.status()
    assert [f["path"] for f in status["left_out"]] == ["Templates/"]
    assert not [p for p in status["problems"] if p["path"].startswith("Templates/")], "its warnings went with it"
    write(config.vault, "Templates/Meeting.md", "# {{title}}\n\nThe ploverplaceholder.\n")
    write(config.vault, "kept.md", "# Kept\n\nThe lapwing note.\n")
    assert until(lambda: bool(memory.search("lapwing")["hits"]))
    assert not memory.search("ploverplaceholder")["hits"]


def test_a_batch_applied_through_the_api_is_reported_as_a_watched_one(vault: Path, caplog: pytest.LogCaptureFixture) -> None:
    """`ingest` while `serve` runs hands its notes to the daemon (`POST /v1/sync`): the daemon
    reports that batch as it reports the watcher's (its log line, and the line `serve` prints),
    where it used to say nothing. The watcher hands a batch over only after 2.5 s without a
    change here, so the API applies the notes first."""
    write(vault, "start.md", "# Start\n\nThe first note.\n")
    config = load_config(vault, embed_provider="none", debounce_ms=6000, step_ms=2500)
    batches: list[tuple[str, int]] = []
    with Memory.open(config) as memory:
        daemon = Daemon(config, memory, on_batch=lambda what, stats: batches.append((what, stats.added)))
        thread = threading.Thread(target=daemon.run, daemon=True)
        thread.start()
        try:
            assert daemon.ready.wait(READY_S), "daemon did not become ready"
            client = find_daemon(config)
            assert client is not None
            write(vault, "sources/chat/2024-03-04.md", "# Chat\n\nThe godwit arrived.\n")
            write(vault, "sources/chat/2024-03-05.md", "# Chat\n\nThe godwit left.\n")
            with caplog.at_level(logging.INFO, logger="vaultmind.daemon"):
                stats = client.call("POST", "/v1/sync", {"paths": ["sources/chat/2024-03-04.md", "sources/chat/2024-03-05.md"]})
                client.call("POST", "/v1/reindex")
        finally:
            daemon.stop()
            thread.join(WAIT_S)
    assert stats["added"] == 2
    assert ("api sync", 2) in batches, batches
    assert any(what == "api reindex" for what, _ in batches), batches
    lines = [r.getMessage() for r in caplog.records if r.name == "vaultmind.daemon"]
    assert any(re.fullmatch(r"api sync: \+2 ~0 -0 renamed 0 \(\d+ ms\)", line) for line in lines), lines


@pytest.mark.slow
def test_a_symlink_to_a_parent_folder_neither_renames_notes_nor_deafens_the_watcher(
    running: tuple[Config, Memory, Daemon],
) -> None:
    """`uplink -> ..` while watching: the system reports the vault's files through the link,
    which are indexed by their own path; once the link is removed, edits are still seen (the
    watcher shared its watch of the vault with the link, and was deaf after it went)."""
    config, memory, _ = running
    vault = config.vault
    (vault / "uplink").symlink_to("..")
    assert until(lambda: any(p["kind"] == "symlink_loop" for p in memory.status()["problems"]))
    time.sleep(1.5)  # the watcher starts over, following the new link
    write(vault, "a1.md", "# A\n\nalphaword one.\n")
    assert until(lambda: bool(memory.search("alphaword", limit=3)["hits"]))
    assert [h["note_path"] for h in memory.search("alphaword", limit=3)["hits"]] == ["a1.md"]
    (vault / "uplink").unlink()
    time.sleep(1.5)
    write(vault, "a2.md", "# A\n\nbetaword two.\n")
    assert until(lambda: bool(memory.search("betaword", limit=3)["hits"])), "the watcher still hears"
    assert memory.index.scalar("SELECT count(*) FROM notes WHERE path LIKE 'uplink/%'") == 0


def test_a_symlink_to_a_note_made_while_watching_is_reported_and_not_indexed_twice(
    running: tuple[Config, Memory, Daemon], tmp_path: Path
) -> None:
    """`alias.md -> plan.md` made while the daemon runs: the watcher's event for the link
    indexes nothing under it (it indexed the note a second time) and `status` names it; saves
    of the note are heard under its own path, as a full pass and a cold rebuild have them."""
    config, memory, daemon = running
    vault = config.vault
    write(vault, "notes/plan.md", "# Plan\n\nThe launch is in May.\n")
    assert until(lambda: bool(memory.search("launch", limit=3)["hits"]))
    (vault / "notes" / "alias.md").symlink_to("plan.md")
    assert until(lambda: ("notes/alias.md", "symlink_duplicate") in {(p["path"], p["kind"]) for p in memory.status()["problems"]})
    write(vault, "notes/plan.md", "# Plan\n\nThe launch moved to quarterly planning.\n")
    assert until(lambda: bool(memory.search("quarterly", limit=3)["hits"]))
    assert [h["note_path"] for h in memory.search("quarterly", limit=3)["hits"]] == ["notes/plan.md"]
    assert memory.index.scalar("SELECT count(*) FROM notes WHERE path = 'notes/alias.md'") == 0
    daemon.force_reconcile = True
    assert until(lambda: not daemon.force_reconcile)
    assert dump_index(memory) == cold_rows(config, tmp_path)


def test_a_symlink_to_a_folder_inside_the_vault_leaves_the_watched_notes_under_their_own_path(
    running: tuple[Config, Memory, Daemon], tmp_path: Path
) -> None:
    """`Archive -> notes`, its name before the real folder's: the system may report a save in
    `notes/` through the link, and the note keeps its own path, as in a full pass and a cold
    rebuild; once the link is removed, saves are still heard."""
    config, memory, daemon = running
    vault = config.vault
    write(vault, "notes/plan.md", "# Plan\n\nThe launch is in May.\n")
    assert until(lambda: bool(memory.search("launch", limit=3)["hits"]))
    (vault / "Archive").symlink_to(vault / "notes")
    assert until(lambda: ("Archive", "symlink_loop") in {(p["path"], p["kind"]) for p in memory.status()["problems"]})
    time.sleep(1.5)  # the watcher starts over, following the new link
    write(vault, "notes/plan.md", "# Plan\n\nThe launch moved to quarterly planning.\n")
    assert until(lambda: bool(memory.search("quarterly", limit=3)["hits"]))
    assert [h["note_path"] for h in memory.search("quarterly", limit=3)["hits"]] == ["notes/plan.md"]
    assert memory.index.scalar("SELECT count(*) FROM notes WHERE path LIKE 'Archive/%'") == 0
    daemon.force_reconcile = True
    assert until(lambda: not daemon.force_reconcile)
    assert dump_index(memory) == cold_rows(config, tmp_path)
    (vault / "Archive").unlink()
    time.sleep(1.5)
    write(vault, "notes/later.md", "# Later\n\nA later note mentions falcon.\n")
    assert until(lambda: bool(memory.search("falcon", limit=3)["hits"])), "the watcher still hears"
