"""A daemon that is stopping answers until its API stops: its `daemon.json` goes last, so a
command meanwhile is answered instead of finding the index held with no address to ask; a
stop — a second signal's, a failed start's — always ends with the API stopped and daemon.json gone."""

from __future__ import annotations

import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.fakes import FakeOllama
from vaultmind.client import daemon_file, find_daemon
from vaultmind.config import load_config
from vaultmind.daemon import WATCHFILES_LOG, Daemon
from vaultmind.memory import Memory

from .conftest import READY_S, WAIT_S, end_process, run_main, write
from .test_admission import CHAT, MESSAGES, chat_note


def test_a_command_while_the_daemon_stops_its_background_work_is_answered_by_it(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, "a.md", "# A\n\nThe atlas launch moved to March.\n")
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    memory = Memory.open(config)
    runner = Daemon(config, memory)
    stopping, release = threading.Event(), threading.Event()
    stop_trees = runner.trees.stop

    def slow_stop(
        give_up: threading.Event | None = None,
    ) -> None:  # the upkeep finishing a summary before it stops
        stopping.set()
        release.wait(WAIT_S)
        stop_trees(give_up)

    runner.trees.stop = slow_stop  # type: ignore[method-assign]
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        assert runner.ready.wait(READY_S)
        runner.stop()
        assert stopping.wait(WAIT_S)
        assert find_daemon(config) is not None  # still published, and answering
        code, data, err = run_main(capsys, "query", "search", "atlas", "--vault", str(vault), "--json")
        assert code == 0 and data["hits"], err
    finally:
        release.set()
        thread.join(WAIT_S)
        memory.close()
    assert not daemon_file(config).exists()  # gone once the API stopped


def _daemon_threads() -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("vaultmind-") and t.is_alive())


def test_a_start_that_fails_stops_what_it_had_started(vault: Path) -> None:
    """A failure late in the start (here daemon.json cannot be written: a full disk would do the
    same) undoes it all: the API no longer listens, the workers and the upkeep end, the signal
    handlers and watchfiles' log filter are the process's own again."""
    write(vault, "a.md", "# A\n\nThe atlas launch moved to March.\n")
    (vault / ".vaultmind" / "daemon.tmp").mkdir(parents=True)  # where daemon.json is written first
    config = load_config(vault, embed_provider="none")
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    interrupt = logging.LogRecord(
        "watchfiles.main", logging.WARNING, __file__, 0, "KeyboardInterrupt caught", None, None
    )
    memory = Memory.open(config)
    runner = Daemon(config, memory)
    try:
        with pytest.raises(IsADirectoryError):
            runner.run()
        assert runner.api is not None
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", runner.api.port), timeout=5).close()
        assert {sig: signal.getsignal(sig) for sig in before} == before
        assert WATCHFILES_LOG.filter(interrupt), "watchfiles' log is as it was"
        assert _daemon_threads() == []
        assert not daemon_file(config).exists()
    finally:
        for sig, handler in before.items():  # (for the tests after this one, had it failed)
            signal.signal(sig, handler)
        memory.close()


@pytest.mark.slow
@pytest.mark.parametrize("signals", [1, 2])
def test_a_stop_cuts_a_jobs_llm_call_in_flight_and_a_second_signal_skips_no_cleanup(
    vault: Path, signals: int
) -> None:
    """SIGTERM while a job's LLM call is in flight: the call is cut and the daemon stops at once
    (it waited up to `[ollama] timeout_s` + 5 s), the job ready again without an attempt spent.
    A second SIGTERM meanwhile gives up the waits — and still stops the API and removes
    daemon.json (it escaped the stop half-way: daemon.json stayed, and the index was closed
    under the API)."""
    chat_note(vault, CHAT, MESSAGES)  # a gray leaf: a job for the LLM's admission decision
    with FakeOllama(delay_s=120) as fake:
        write(
            vault,
            ".vaultmind/config.toml",
            '[entities]\nner_model = "off"\n[trees]\nsummarizer = "fallback"\n'
            f'[watch]\ndebounce_ms = 50\n[ollama]\nhost = "{fake.host}"\ntimeout_s = 120\n',
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "vaultmind", "watch", "--vault", str(vault)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "VAULTMIND_EMBED_PROVIDER": "none"},
        )
        try:
            deadline = time.monotonic() + 60
            while not fake.requests_to("/api/chat") and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            assert fake.requests_to("/api/chat"), "the job's LLM call is in flight"
            assert daemon_file(load_config(vault, embed_provider="none")).exists()
            started = time.monotonic()
            for _ in range(signals):
                proc.send_signal(signal.SIGTERM)
                time.sleep(0.05)
            err = proc.communicate(timeout=30)[1]
            took = time.monotonic() - started
        finally:
            end_process(proc)
    assert took < 20, f"the stop cut the LLM call ({took:.1f} s)"
    assert not (vault / ".vaultmind" / "daemon.json").exists(), err
    assert "Traceback" not in err, err
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        jobs = memory.index.query(
            "SELECT status, attempts, last_error FROM jobs WHERE kind = 'llm_importance'"
        )
    assert [job[:2] for job in jobs] == [("ready", 0)], jobs
    cut = "its LLM call was given up for a stop; no attempt counted"
    if signals == 1:
        assert jobs[0][2] == cut, jobs
    else:  # the second signal ends the stop's wait: the job is put back by whichever of the stop
        # and its worker (whose call was cut) writes first — on a loaded host, often the stop
        assert jobs[0][2] == cut or re.fullmatch(
            r"put back by a stop that could not wait for it \(still running after [\d.]+ s\); no attempt counted", jobs[0][2]
        ), jobs


def test_a_stop_waits_for_the_requests_being_answered_and_refuses_new_ones(vault: Path) -> None:
    """A question being answered when the daemon stops gets its answer, not a 500 from the
    index closed under it; a request that comes meanwhile is answered 503 (`stopping`)."""
    import json
    import urllib.error
    import urllib.request

    from .conftest import until

    write(vault, "a.md", "# A\n\nThe atlas launch moved to March.\n")
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    memory = Memory.open(config)
    runner = Daemon(config, memory)
    asked, release = threading.Event(), threading.Event()
    query = memory.query

    def slow_query(mode: str, args: dict[str, object]) -> dict[str, object]:  # a long question
        asked.set()
        release.wait(WAIT_S)
        return query(mode, args)

    memory.query = slow_query  # type: ignore[method-assign]

    def serve() -> None:  # as `vaultmind watch` runs it: the memory closed once the daemon stopped
        try:
            runner.run()
        finally:
            memory.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    answers: list[object] = []
    try:
        assert runner.ready.wait(READY_S)
        client = find_daemon(config)
        assert client is not None
        asking = threading.Thread(
            target=lambda: answers.append(
                client.call(
                    "POST", "/v1/query", {"mode": "search", "args": {"query": "atlas"}}, timeout=WAIT_S
                )
            ),
            daemon=True,
        )
        asking.start()
        assert asked.wait(WAIT_S)
        threading.Thread(target=runner.stop, daemon=True).start()

        def health() -> int:
            request = urllib.request.Request(
                client.base + "/v1/health", headers={"Authorization": f"Bearer {client.token}"}
            )
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    return int(response.status)
            except urllib.error.HTTPError as exc:
                assert json.loads(exc.read())["error"]["code"] == "stopping"
                return int(exc.code)

        assert until(lambda: health() == 503), "a request while the daemon stops is refused, not answered"
        assert thread.is_alive(), "the daemon waits for the question being answered"
    finally:
        release.set()
    asking.join(WAIT_S)
    thread.join(WAIT_S)
    assert not thread.is_alive()
    [answer] = answers
    assert isinstance(answer, dict) and answer["hits"][0]["note_path"] == "a.md"
