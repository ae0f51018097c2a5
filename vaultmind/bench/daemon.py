"""The daemon under benchmark: a `vaultmind watch` subprocess, started on a vault, waited for
until its API answers and its first reconcile is done, then stopped with SIGINT."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from vaultmind.bench.figures import Progress, no_progress
from vaultmind.bench.processes import TreeSampler, child_env
from vaultmind.bench.vaults import note_paths, refuse_running_daemon, vault_config
from vaultmind.child import python_command
from vaultmind.client import DaemonClient, daemon_file, find_daemon
from vaultmind.errors import DaemonError

STATUS_TIMEOUT_S = 300.0
"""How long the bench waits for one `/v1/status`. The daemon answers status requests one at a
time, and one it took is worked out even once its client gave up. At 50k notes on a busy host a
status beside the NER catch-up (which changes the index between two asks, so its counts that
hash every leaf are read again each time) took more than the 10 s the bench once waited: it
gave up and asked again every second, 46 requests queued in the daemon, and the bench never
reached its saves. It waits for each answer instead: never more than one request in flight."""


class DaemonProcess:
    """A `vaultmind watch` subprocess, its API client and its stderr (drained by a thread)."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        self.proc = proc
        self.timeline = TreeSampler(proc.pid, interval_s=0.25, with_pss=True)
        self.timeline.start()
        self.client: DaemonClient | None = None
        self.status: dict[str, Any] = {}  # `/v1/status` when it became ready
        self.output: list[str] = []
        self.thread = threading.Thread(target=self._drain, name="bench-daemon-stderr", daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            self.output.append(raw.decode("utf-8", "replace"))
            del self.output[:-200]

    def said(self, text: str) -> bool:
        return any(text in line for line in list(self.output))

    def tail(self) -> str:
        return "".join(self.output[-10:]).strip()

    def search(self, query: str, limit: int = 5, timeout: float | None = None) -> dict[str, Any]:
        assert self.client is not None
        body = {"query": query, "limit": limit}
        result: dict[str, Any] = self.client.call("POST", "/v1/search", body, timeout=timeout)
        return result


@contextmanager
def running_daemon(
    vault: Path, *, embed_provider: str | None, progress: Progress | None = None, timeout_s: float = 1800.0
) -> Iterator[tuple[DaemonProcess, float]]:
    """Start `vaultmind watch` on `vault`; yield (daemon, start-up seconds) once its API answers
    and its first reconcile is done; stop it with SIGINT (then kill) on exit."""
    progress = progress or no_progress
    refuse_running_daemon(vault)
    config = vault_config(vault, embed_provider)
    expected = len(note_paths(vault, config.all_ignores))
    cmd = python_command("-m", "vaultmind", "watch", "--vault", str(vault))
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=child_env(embed_provider), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    daemon = DaemonProcess(proc)
    try:
        full_since: float | None = None
        last_poll = 0.0
        while not daemon.said("vaultmind: watching"):
            if proc.poll() is not None:
                raise DaemonError(f"the daemon exited with code {proc.returncode}: {daemon.tail()}")
            if time.perf_counter() - started > timeout_s:
                raise DaemonError(f"the daemon was not ready after {timeout_s:.0f} s: {daemon.tail()}")
            if daemon.client is None and daemon_file(config).exists():
                daemon.client = find_daemon(config)
            if daemon.client is not None and time.perf_counter() - last_poll >= 1.0:
                last_poll = time.perf_counter()
                status = _status(daemon)
                if status:
                    indexed = int(status["notes"]["total"])
                    progress("daemon start-up", min(indexed, expected), expected)
                    if status.get("daemon", {}).get("ready"):
                        break
                    # fallback should the start-up line change: counts complete and stable for 10 s
                    if indexed >= expected and not status.get("loading") and not status["embeddings"].get("missing"):
                        full_since = full_since or time.perf_counter()
                        if time.perf_counter() - full_since > 10.0:
                            break
                    else:
                        full_since = None
            time.sleep(0.05)
        while daemon.client is None or not _status(daemon):  # the API answers: record its status
            if daemon.client is None and daemon_file(config).exists():
                daemon.client = find_daemon(config)
            if time.perf_counter() - started > timeout_s:
                raise DaemonError(f"the daemon's API did not answer after {timeout_s:.0f} s: {daemon.tail()}")
            time.sleep(0.1)
        yield daemon, time.perf_counter() - started
    finally:
        _stop(proc)
        daemon.timeline.stop()
        daemon.thread.join(5)  # its stderr ends with it
        if proc.stderr is not None:
            proc.stderr.close()


def _status(daemon: DaemonProcess, timeout_s: float = STATUS_TIMEOUT_S) -> dict[str, Any]:
    """`/v1/status`, or {} while the daemon is too busy to answer within `timeout_s`."""
    assert daemon.client is not None
    try:
        status = daemon.client.call("GET", "/v1/status", timeout=timeout_s)
    except DaemonError:
        return {}
    if isinstance(status, dict):
        daemon.status = status
        return status
    return {}


def waiting_jobs(daemon: DaemonProcess) -> int | None:
    """Background jobs waiting when the daemon became ready (they compete with saves)."""
    depth = (
        daemon.status.get("queue", {}).get("depth") if isinstance(daemon.status.get("queue"), dict) else None
    )
    return depth if isinstance(depth, int) else None


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(2)  # SIGINT: the CLI stops the daemon cleanly
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
