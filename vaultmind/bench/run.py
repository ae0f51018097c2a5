"""The benchmarks, as library functions returning plain dicts of numbers.

Each runs on any vault (usually one written by `bench.synth.generate_vault`) at any size:

- `bench_rescan`        a no-change `sync_all` on an up-to-date index: files/s
- `bench_cold`          delete the index, rebuild it without embeddings (a reindex in a
                        subprocess): notes/s, next to a baseline that only walks, reads and
                        sha256-hashes the same notes; peak RSS of the reindex's process tree
- `bench_save_to_query` the real daemon in a subprocess: write a unique word into a note, poll
                        the API until a search finds it: latency p50/p95/max
- `bench_rss`           peak RSS of a `vaultmind reindex` subprocess (cold) and of the daemon
                        after start-up and a few queries, with its RSS (and any workers') every 0.25 s
- `bench_query`         in-process search latency over a fixed query set

Timings are wall-clock (`time.perf_counter`); repeated measurements are summarised as
min/median/max (or percentiles for latencies). `run_benchmarks` generates vaults, runs the
chosen benchmarks and checks them against `TARGETS`. Peak RSS comes from the kernel
(`wait4` rusage for a finished child, `/proc/<pid>/status` VmHWM for a live one), so no extra
dependency is needed at run time.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from vaultmind import __version__
from vaultmind.bench.synth import bench_queries, build_vocabulary, generate_vault, read_manifest
from vaultmind.child import python_command, python_env
from vaultmind.client import DaemonClient, daemon_file, find_daemon
from vaultmind.config import DEFAULT_IGNORE, Config, load_config
from vaultmind.errors import DaemonError, UsageError, VaultmindError
from vaultmind.index.store import Index
from vaultmind.index.vector_codec import matrix_of
from vaultmind.memory import Memory
from vaultmind.vault.layout import ENTITIES_DIR, SOURCES_DIR, SUMMARIES_DIR, is_note
from vaultmind.vault.scan import IgnoreRules

Progress = Callable[[str, int, int], None]
"""progress(phase, done, total), the same shape as `sync.Progress`."""

BENCHMARKS = ("rescan", "cold", "query", "rss", "save", "walk", "entities")
"""All benchmarks, in the order `run_benchmarks` runs them."""

TARGETS: dict[str, tuple[str, float]] = {
    "rescan.files_per_s": (">=", 10_000),
    "cold.notes_per_s": (">=", 500),
    "cold.ratio_to_baseline": ("<=", 10),
    "save.p95_s": ("<=", 1.0),
    "rss.reindex_peak_mb": ("<=", 500),
    "rss.daemon_peak_mb": ("<=", 500),
    "walk.p50_s": ("<=", 0.020),
    "walk.p95_s": ("<=", 0.050),
    "entities.p95_s": ("<=", 0.010),
}
"""metric → (comparison, bound). The RSS bound is stated for 50k notes; it is checked at every size."""

MB = 1_000_000
SERVE_S_PER_NOTE = 0.0012  # rss: how long the daemon keeps answering questions (50k notes: 60 s) ...
SERVE_EVERY_S = 3.0  # ... one every this often (background work waits for a pause of `memory.QUIET_S`)
_STATE_FILES = ("index.duckdb", "index.duckdb.wal")


def _noop(phase: str, done: int, total: int) -> None:
    return None


# -- summaries -----------------------------------------------------------------------------------


def spread(values: Sequence[float]) -> dict[str, float]:
    """min / median / max of repeated runs."""
    arr = np.asarray(values, dtype=np.float64)
    return {
        "min": float(arr.min()),
        "median": float(np.median(arr)),
        "max": float(arr.max()),
        "runs": len(values),
    }


def latency(values: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / max (and min, mean) of latency samples, in seconds."""
    arr = np.asarray(values, dtype=np.float64)
    return {
        "p50_s": float(np.percentile(arr, 50)),
        "p95_s": float(np.percentile(arr, 95)),
        "max_s": float(arr.max()),
        "min_s": float(arr.min()),
        "mean_s": float(arr.mean()),
        "samples": len(values),
    }


def _config(vault: Path, embed_provider: str | None) -> Config:
    return load_config(vault, embed_provider=embed_provider)


def _delete_index(config: Config) -> None:
    for name in _STATE_FILES:
        (config.state_dir / name).unlink(missing_ok=True)


def _note_paths(vault: Path, ignore: Sequence[str] = DEFAULT_IGNORE) -> list[str]:
    """Vault-relative paths of the notes vaultmind indexes (sorted), with these ignore rules."""
    rules = IgnoreRules(ignore)
    out: list[str] = []
    for folder, dirs, files in os.walk(vault):
        rel_dir = os.path.relpath(folder, vault).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirs[:] = sorted(d for d in dirs if not rules.ignores_dir(rel_dir + d))
        out.extend(rel_dir + f for f in files if is_note(f) and not rules.ignores_file(rel_dir + f))
    return sorted(out)


# -- 1. no-change rescan -------------------------------------------------------------------------


def bench_rescan(
    vault: Path, *, repeats: int = 5, embed_provider: str | None = "none", progress: Progress | None = None
) -> dict[str, Any]:
    """`sync_all` on an up-to-date index (one untimed sync first brings it up to date)."""
    progress = progress or _noop
    config = _config(vault, embed_provider)
    with Memory.open(config, progress=progress) as memory:
        started = time.perf_counter()
        warm = memory.sync()
        warmup_s = time.perf_counter() - started
        seconds: list[float] = []
        scanned = changed = 0
        for run in range(repeats):
            progress("rescan", run, repeats)
            started = time.perf_counter()
            stats = memory.sync()
            seconds.append(time.perf_counter() - started)
            scanned = stats.scanned
            changed += stats.added + stats.modified + stats.deleted + stats.renamed + stats.touched
        progress("rescan", repeats, repeats)
    timing = spread(seconds)
    return {
        "files": scanned,
        "files_per_s": scanned / timing["median"],
        "seconds": timing,
        "changed": changed,  # must be 0: the index was up to date
        "warmup_s": warmup_s,
        "warmup_written": warm.added + warm.modified,
        "embeddings": config.embed_provider,
    }


# -- 2. cold index vs. read+hash baseline --------------------------------------------------------


def read_hash_baseline(
    vault: Path, ignore: Sequence[str] = DEFAULT_IGNORE, progress: Progress | None = None
) -> tuple[int, int, float]:
    """(files, bytes, seconds) to walk the vault, read every note and sha256 it: the floor."""
    progress = progress or _noop
    started = time.perf_counter()
    paths = _note_paths(vault, ignore)
    total = 0
    for done, rel in enumerate(paths, start=1):
        with open(vault / rel, "rb") as fh:
            data = fh.read()
        hashlib.sha256(data).hexdigest()
        total += len(data)
        if done % 1000 == 0:
            progress("baseline", done, len(paths))
    return len(paths), total, time.perf_counter() - started


def bench_cold(vault: Path, *, repeats: int = 3, progress: Progress | None = None) -> dict[str, Any]:
    """Delete the index and rebuild it without embeddings (`cold_reindex` in a subprocess, start
    to exit), `repeats` times, each run next to the read+hash baseline over the same
    notes. Peak RSS is that of the reindex's process tree (it and its parsing workers): the
    largest single process (kernel high-water marks) and the largest sum over the tree
    (sampled every 20 ms)."""
    progress = progress or _noop
    config = _config(vault, "none")
    cold: list[float] = []
    base: list[float] = []
    cpu: list[float] = []  # CPU seconds of the reindex process tree per rebuild
    peak_max: list[int] = []
    peak_sum: list[int] = []
    notes = leaves = files = size = 0
    cmd = python_command("-c", "import sys; from vaultmind.bench.run import cold_reindex; cold_reindex(sys.argv[1])")
    cmd.append(str(vault))
    for run in range(repeats):
        files, size, seconds = read_hash_baseline(vault, config.all_ignores, progress)
        base.append(seconds)
        _delete_index(config)
        progress("cold index", run, repeats)
        with tempfile.TemporaryFile() as err:
            measured = run_tree_measured(cmd, _child_env("none"), err)
            if measured.code != 0:
                err.seek(0)
                raise VaultmindError(f"the cold reindex failed with code {measured.code}: {err.read().decode()[-2000:]}")
        cold.append(measured.seconds)
        cpu.append(measured.cpu_s)
        peak_max.append(measured.peak_max)
        peak_sum.append(measured.peak_sum)
    progress("cold index", repeats, repeats)
    with Memory.open(config) as memory:
        notes = int(memory.index.scalar("SELECT count(*) FROM notes"))
        leaves = int(memory.index.scalar("SELECT count(*) FROM leaves"))
    cold_t, base_t = spread(cold), spread(base)
    ratios = [c / b for c, b in zip(cold, base, strict=True)]
    return {
        "notes": notes,
        "leaves": leaves,
        "mb": size / MB,
        "notes_per_s": notes / cold_t["median"],
        "leaves_per_s": leaves / cold_t["median"],
        "seconds": cold_t,
        "baseline": {"files": files, "files_per_s": files / base_t["median"], "seconds": base_t},
        "ratio_to_baseline": float(np.median(ratios)),
        "index_mb": (config.index_path.stat().st_size if config.index_path.exists() else 0) / MB,
        # CPU time is less sensitive than wall time to other jobs on a shared machine
        "cpu_s": float(np.median(cpu)),
        "peak_mb": max(peak_max) / MB,  # the largest process of the tree (the applying one)
        "peak_tree_mb": max(peak_sum) / MB,  # the tree's summed RSS at its largest
    }


def cold_reindex(vault: str) -> None:
    """What `bench_cold` times, in its own process: `Memory.open` + `reindex` + close, without
    embeddings (`vaultmind reindex` also finishes NER and entity notes on a small vault)."""
    with Memory.open(_config(Path(vault), "none")) as memory:
        memory.reindex()


@dataclass(slots=True)
class TreeRun:
    """A finished child process: exit code, wall seconds, stdout, CPU seconds (it and its reaped
    children), peak RSS bytes of its largest process and of its process tree summed."""

    code: int
    seconds: float
    stdout: bytes
    cpu_s: float
    peak_max: int
    peak_sum: int


def run_tree_measured(cmd: list[str], env: dict[str, str], stderr: IO[bytes] | int | None) -> TreeRun:
    """Run `cmd` to its end, sampling the RSS of it and its descendants (Linux `/proc`; elsewhere
    only the kernel's figure for the child, via `wait4`, is known)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=stderr)
        tree = _TreeSampler(proc.pid)
        tree.start()
        try:
            if hasattr(os, "wait4"):
                _, status, usage = os.wait4(proc.pid, 0)
                proc.returncode = os.waitstatus_to_exitcode(status)
                scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
                cpu, hwm = usage.ru_utime + usage.ru_stime, usage.ru_maxrss * scale
            else:
                proc.wait()
                cpu, hwm = 0.0, 0
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        finally:
            tree.stop()
        seconds = time.perf_counter() - started
        out.seek(0)
        stdout = out.read()
    return TreeRun(proc.returncode, seconds, stdout, cpu, max(hwm, tree.peak_max), max(tree.peak_sum, hwm))


class _TreeSampler(threading.Thread):
    """Samples the summed RSS of a process and its descendants, and their high-water marks;
    `samples` keeps each sum, [(seconds since the sampler was made, bytes)], and `own` the
    process's own RSS at the same times: they show where a peak falls (start-up, loading,
    queries, a child's work), which the high-water mark alone does not."""

    def __init__(self, pid: int, interval_s: float = 0.02):
        super().__init__(name="bench-rss-sampler", daemon=True)
        self.pid = pid
        self.interval_s = interval_s
        self.peak_sum = 0
        self.peak_max = 0
        self.samples: list[tuple[float, int]] = []
        self.own: list[tuple[float, int]] = []
        self._done = threading.Event()
        self._t0 = time.perf_counter()

    def stop(self) -> None:
        self._done.set()
        self.join()

    def run(self) -> None:
        if not os.path.isdir("/proc"):
            return
        while not self._done.is_set():
            total = own = 0
            for pid in _descendants(self.pid):
                hwm, rss = _proc_rss(pid)
                total += rss
                own = rss if pid == self.pid else own
                self.peak_max = max(self.peak_max, hwm)
            self.peak_sum = max(self.peak_sum, total)
            if total:
                now = time.perf_counter() - self._t0
                self.samples.append((now, total))
                self.own.append((now, own))
            self._done.wait(self.interval_s)


def _proc_rss(pid: int) -> tuple[int, int]:
    """(VmHWM, VmRSS) of a process in bytes from `/proc`; (0, 0) once it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            fields = dict(line.split(":", 1) for line in fh if ":" in line)
        return int(fields["VmHWM"].split()[0]) * 1024, int(fields["VmRSS"].split()[0]) * 1024
    except (OSError, KeyError, ValueError, IndexError):
        return 0, 0


def _descendants(root: int) -> list[int]:
    """`root` and every live process below it (from `/proc/*/stat`)."""
    parent: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            parent[int(name)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    out, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, ppid in parent.items() if ppid in frontier]
        out.extend(frontier)
    return out


# -- the daemon in a subprocess -------------------------------------------------------------------


def _child_env(embed_provider: str | None) -> dict[str, str]:
    env = python_env()
    if embed_provider:
        env["VAULTMIND_EMBED_PROVIDER"] = embed_provider
    return env


class _Daemon:
    """A `vaultmind watch` subprocess, its API client and its stderr (drained by a thread)."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        self.proc = proc
        self.timeline = _TreeSampler(proc.pid, interval_s=0.25)
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
) -> Iterator[tuple[_Daemon, float]]:
    """Start `vaultmind watch` on `vault`; yield (daemon, start-up seconds) once its API answers
    and its first reconcile is done; stop it with SIGINT (then kill) on exit."""
    progress = progress or _noop
    config = _config(vault, embed_provider)
    if find_daemon(config) is not None:
        raise UsageError(f"a vaultmind daemon already runs for {vault}", hint="stop it before benchmarking")
    expected = len(_note_paths(vault, config.all_ignores))
    cmd = python_command("-m", "vaultmind", "watch", "--vault", str(vault))
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=_child_env(embed_provider), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    daemon = _Daemon(proc)
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


def _status(daemon: _Daemon) -> dict[str, Any]:
    """`/v1/status`, or {} while the daemon is too busy to answer within 10 s."""
    assert daemon.client is not None
    try:
        status = daemon.client.call("GET", "/v1/status", timeout=10.0)
    except DaemonError:
        return {}
    if isinstance(status, dict):
        daemon.status = status
        return status
    return {}


def _queue_depth(daemon: _Daemon) -> int | None:
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


def _peak_rss(pid: int) -> tuple[int | None, int | None]:
    """(VmHWM, VmRSS) of a live process in bytes, from /proc (Linux), else psutil if present."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            fields = dict(line.split(":", 1) for line in fh if ":" in line)
        return int(fields["VmHWM"].split()[0]) * 1024, int(fields["VmRSS"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        pass
    try:
        import psutil  # optional (dev extra): only where /proc is missing
    except ImportError:
        return None, None
    rss = int(psutil.Process(pid).memory_info().rss)
    return None, rss


# -- 3. save → query ------------------------------------------------------------------------------


def bench_save_to_query(
    vault: Path,
    samples: int = 30,
    *,
    embed_provider: str | None = "static",
    create_share: float = 0.2,
    gap_s: float = 0.3,
    poll_s: float = 0.01,
    timeout_s: float = 30.0,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Latency from writing a unique word into a note (or a new note) to a daemon search
    finding it. The vault is restored afterwards (appended lines and new notes removed)."""
    progress = progress or _noop
    rng = random.Random(f"vm-bench-save:{seed}")
    notes = _note_paths(vault, _config(vault, embed_provider).all_ignores)
    candidates = [p for p in notes if not p.startswith(SOURCES_DIR + "/")] or notes
    if not candidates:
        raise UsageError(f"{vault} has no notes to edit")
    token = "".join(rng.choices("abcdefghjkmnpqrtuvwxyz", k=6))
    originals: dict[str, bytes] = {}
    created: list[Path] = []
    latencies: list[float] = []
    timeouts = 0
    try:
        with running_daemon(vault, embed_provider=embed_provider, progress=progress) as (daemon, startup_s):
            queue_depth = _queue_depth(daemon)
            for i in range(samples):
                progress("save→query", i, samples)
                nonce = f"vmnonce{token}{i:04d}x"
                if rng.random() < create_share:
                    path = vault / "Inbox" / f"bench {token} {i}.md"
                    path.parent.mkdir(exist_ok=True)
                    created.append(path)
                    started = time.perf_counter()
                    path.write_text(f"# Quick note {i}\n\nJotted down {nonce} for later.\n", encoding="utf-8")
                else:
                    path = vault / rng.choice(candidates)
                    originals.setdefault(str(path), path.read_bytes())
                    started = time.perf_counter()
                    with open(path, "a", encoding="utf-8") as fh:
                        fh.write(f"\nAdded {nonce} while benchmarking.\n")
                found = False
                while time.perf_counter() - started < timeout_s:
                    try:
                        hits = daemon.search(nonce)["hits"]
                    except DaemonError:  # busy past the client timeout: keep polling
                        hits = []
                    if any(nonce in hit["content"].lower() for hit in hits):
                        found = True
                        break
                    time.sleep(poll_s)
                elapsed = time.perf_counter() - started
                latencies.append(elapsed)
                timeouts += not found
                time.sleep(gap_s)
            progress("save→query", samples, samples)
            hwm, rss = _peak_rss(daemon.proc.pid)
    finally:
        for key, data in originals.items():
            Path(key).write_bytes(data)
        for path in created:
            path.unlink(missing_ok=True)
        inbox = vault / "Inbox"
        if inbox.is_dir() and not any(inbox.iterdir()):
            inbox.rmdir()
    return {
        **latency(latencies),
        "timeouts": timeouts,
        "latencies_s": [round(x, 3) for x in latencies],  # in sample order: shows warm-up and stalls
        "daemon_startup_s": startup_s,
        "daemon_peak_mb": hwm / MB if hwm is not None else None,  # while saving, after start-up
        "daemon_rss_mb": rss / MB if rss is not None else None,
        "queue_depth_at_start": queue_depth,
        "embeddings": embed_provider,
    }


# -- 4. peak RSS ---------------------------------------------------------------------------------


def _run_and_measure(
    cmd: list[str], env: dict[str, str], stderr: IO[bytes] | int | None
) -> tuple[int, float, int | None]:
    """(exit code, seconds, peak RSS in bytes) of a child process, via wait4 where available."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr)
    if not hasattr(os, "wait4"):
        return proc.wait(), time.perf_counter() - started, None
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return proc.returncode, seconds, usage.ru_maxrss * scale


def bench_rss(
    vault: Path,
    *,
    embed_provider: str | None = "static",
    queries: int = 10,
    cold: bool = True,
    seed: int = 0,
    serve_s: float = 0.0,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Peak RSS of `vaultmind reindex` (after deleting the index when `cold`: the first run on
    a vault, embeddings included) and of the daemon after start-up plus a few queries, then
    while it keeps answering one every `SERVE_EVERY_S` for `serve_s` seconds, through the NER
    catch-up a cold index leaves."""
    progress = progress or _noop
    config = _config(vault, embed_provider)
    if cold:
        _delete_index(config)
    cmd = python_command("-m", "vaultmind", "reindex", "--vault", str(vault), "--json")
    progress("reindex (subprocess)", 0, 1)
    with tempfile.TemporaryFile() as err:
        code, seconds, peak = _run_and_measure(cmd, _child_env(embed_provider), err)
        if code != 0:
            err.seek(0)
            raise VaultmindError(
                f"`vaultmind reindex` failed with code {code}: {err.read().decode()[-2000:]}"
            )
    progress("reindex (subprocess)", 1, 1)
    result: dict[str, Any] = {
        "reindex_peak_mb": peak / MB if peak is not None else None,
        "reindex_s": seconds,
        "reindex_cold": cold,
        "embeddings": config.embed_provider,
    }
    try:
        with running_daemon(vault, embed_provider=embed_provider, progress=progress) as (daemon, startup_s):
            started = time.perf_counter()
            daemon.search(bench_queries(seed, 1)[0], timeout=600.0)  # loads the resident structures
            result["daemon_first_query_s"] = time.perf_counter() - started
            for query in bench_queries(seed, queries):
                daemon.search(query, timeout=600.0)
            result["daemon_served_s"] = _keep_serving(daemon, bench_queries(seed, queries), serve_s, progress)
            hwm, rss = _peak_rss(daemon.proc.pid)
            tree_rss = sum(_proc_rss(pid)[1] for pid in _descendants(daemon.proc.pid))
            tree_peak = daemon.timeline.peak_sum
            timeline = list(daemon.timeline.samples)
            own = list(daemon.timeline.own)
            result["queue_depth_at_start"] = _queue_depth(daemon)
    except DaemonError as exc:  # keep the reindex figure
        result["daemon_error"] = str(exc)
        return result
    result["daemon_peak_mb"] = hwm / MB if hwm is not None else None
    result["daemon_rss_mb"] = rss / MB if rss is not None else None
    # with its child processes (the NER model's, while it has texts): summed now, and the
    # largest sum sampled (every 0.25 s) since its launch
    result["daemon_tree_rss_mb"] = tree_rss / MB if tree_rss else None
    result["daemon_tree_peak_mb"] = tree_peak / MB if tree_peak else None
    result["daemon_startup_s"] = startup_s
    if timeline:  # from the daemon's launch to the end of the queries: where its peak fell
        result["daemon_rss_timeline"] = [[round(t, 2), round(b / MB, 1)] for t, b in timeline]
        result["daemon_largest_sample_at_s"] = round(max(timeline, key=lambda s: s[1])[0], 2)
        at, largest = max(own, key=lambda s: s[1])  # the daemon alone, without its NER child
        result["daemon_own_largest_sample_mb"] = largest / MB
        result["daemon_own_largest_sample_at_s"] = round(at, 2)
    return result


def _keep_serving(daemon: _Daemon, queries: Sequence[str], serve_s: float, progress: Progress) -> float:
    """Ask the daemon a question every `SERVE_EVERY_S` for `serve_s` seconds (at least one):
    after a cold index its memory is highest while it catches up with NER, not at start-up.
    Nothing else is asked meanwhile (a `status` counts what waits for NER, which scans every
    leaf). Returns the seconds served."""
    started = time.perf_counter()
    for k in itertools.count():
        served = time.perf_counter() - started
        if k and served >= serve_s:
            break
        progress("serving through background work", int(served), int(serve_s))
        daemon.search(queries[k % len(queries)], timeout=600.0)
        time.sleep(min(SERVE_EVERY_S, max(serve_s - served, 0.0)))
    return time.perf_counter() - started


def _vault_seed(vault: Path) -> int:
    """The seed a synthetic vault was generated with (0 when it records none)."""
    recorded = (read_manifest(vault) or {}).get("seed")
    return recorded if isinstance(recorded, int) else 0


# -- 5. query latency ----------------------------------------------------------------------------


def bench_query(
    vault: Path,
    *,
    repeats: int = 3,
    count: int = 40,
    embed_provider: str | None = "static",
    seed: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """In-process `Memory.search` latency over a fixed set of `count` queries from the vault's
    vocabulary (`synth.bench_queries`), each run `repeats` times after one untimed warm-up."""
    progress = progress or _noop
    seed = _vault_seed(vault) if seed is None else seed
    queries = bench_queries(seed, count)
    config = _config(vault, embed_provider)
    with Memory.open(config, progress=progress) as memory:
        memory.sync()
        started = time.perf_counter()
        memory.search(queries[0])
        first_s = time.perf_counter() - started  # loads the vector matrix, warms caches
        with_hits = sum(1 for q in queries if memory.search(q)["hits"])
        samples: list[float] = []
        for run in range(repeats):
            for query in queries:
                started = time.perf_counter()
                memory.search(query)
                samples.append(time.perf_counter() - started)
            progress("query", run + 1, repeats)
    return {**latency(samples), "first_query_s": first_s, "queries": len(queries),
            "queries_with_hits": with_hits, "embeddings": config.embed_provider}  # fmt: skip


# -- 6. walk and entity search ------------------------------------------------------------------


def walk_questions(seed: int = 0, count: int = 40) -> list[str]:
    """Questions in the shapes people ask a memory: a person and a topic, a topic and a time,
    a name alone, plain words (from `synth.bench_queries` and the vault's people)."""
    vocab = build_vocabulary(seed)
    rng = random.Random(f"vm-bench-walk:{seed}")
    shapes = (
        "What did {person} say about {q}?",
        "{q} last week",
        "When did {person} and {other} talk about {q}?",
        "{q}",
        "What happened with {q} in May 2023?",
    )
    out = []
    for i, query in enumerate(bench_queries(seed, count)):
        person, other = rng.sample(vocab.people, 2)
        out.append(shapes[i % len(shapes)].format(person=person, other=other, q=query))
    return out


def bench_walk(
    vault: Path,
    *,
    repeats: int = 3,
    count: int = 40,
    embed_provider: str | None = "static",
    seed: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """In-process `Memory.walk` latency over `count` questions (`walk_questions`), `repeats`
    rounds after one warm-up round, with the daemon's memory settings (`Memory.serve`); the
    question's embedding is timed separately, and the process's RSS and the resident
    structures' bytes (`memory_mb`) are reported after the queries, the memory still open, then
    the dense search's recall against an exact scan (`_dense_recall`). Every round asks new
    questions: a repeated one would find the terms of its strongest leaves cached (the phrase
    and near-duplicate passes), which a new question pays for."""
    progress = progress or _noop
    seed = _vault_seed(vault) if seed is None else seed
    asked = walk_questions(seed, count * (repeats + 1))
    questions = asked[:count]
    config = _config(vault, embed_provider)
    with Memory.open(config, progress=progress) as memory:
        memory.serve()
        memory.sync()
        started = time.perf_counter()
        memory.warm()
        warm_s = time.perf_counter() - started
        for question in questions:
            memory.walk(question)
        samples: list[float] = []
        embed: list[float] = []
        for run in range(repeats):
            for question in asked[count * (run + 1) : count * (run + 2)]:
                if memory.embedder is not None:
                    started = time.perf_counter()
                    memory.embedder.embed([question])
                    embed.append(time.perf_counter() - started)
                started = time.perf_counter()
                memory.walk(question)
                samples.append(time.perf_counter() - started)
            progress("walk", run + 1, repeats)
        leaves = int(memory.index.scalar("SELECT count(*) FROM leaves"))
        resident = resident_memory(memory)
        hwm, rss = _peak_rss(os.getpid())
        recall = _dense_recall(memory, questions)  # last: it streams every vector through DuckDB
    return {
        **latency(samples),
        "embed_p50_s": statistics.median(embed) if embed else None,
        "dense_recall_at_100": recall,
        "leaves": leaves,
        "questions": len(questions),
        "warm_s": warm_s,
        "process_rss_mb": rss / MB if rss is not None else None,
        "process_peak_mb": hwm / MB if hwm is not None else None,
        "memory_mb": resident,
        "embeddings": config.embed_provider,
    }


def resident_memory(memory: Memory) -> dict[str, float]:
    """MB held by each resident structure of a warm `memory`, and by DuckDB (`duckdb_memory()`);
    `vectors.file` is the size of the int8 rows' scratch file, which is not in the process."""
    parts = {f"leaves.{k}": v for k, v in memory.leaves.memory().items()}
    if memory.vectors is not None:
        parts.update({f"vectors.{k}": v for k, v in memory.vectors.memory().items()})
    parts["duckdb"] = sum(memory.index.duckdb_memory().values())
    return {k: round(v / MB, 1) for k, v in parts.items()}


def _dense_recall(memory: Memory, questions: Sequence[str], top: int = 100) -> float | None:
    """Mean share of the exact top `top` leaves by cosine (`exact_nearest`: every stored vector
    of a live leaf, as float32) that the resident search returns: what its int8 rows and its
    clusters cost."""
    if memory.vectors is None or memory.embedder is None:
        return None
    queries = np.stack([memory.embedder.embed([question])[0] for question in questions]).astype(np.float32)
    exact = exact_nearest(memory.index, memory.vectors.model_id, queries, top)
    shares = []
    for q, want in zip(queries, exact, strict=True):
        found = {leaf_id for leaf_id, _ in memory.vectors.search(q, top)}
        shares.append(len(found & set(want)) / max(1, len(want)))
    return statistics.mean(shares) if shares else None


def exact_nearest(index: Index, model_id: str, queries: np.ndarray, top: int) -> list[list[str]]:
    """For each of `queries`, the `top` leaves with the highest cosine (ties by id), scored in
    float32 against the stored vectors, which are streamed: the memory held stays small at any
    vault size. Leaves that share a text share its vector."""
    best_hashes: list[list[str]] = [[] for _ in queries]
    best_scores = [np.zeros(0, dtype=np.float32) for _ in queries]
    with index.lock:
        reader = index.con.execute(
            "SELECT content_hash, vec, dim FROM embeddings WHERE model = ? AND content_hash IN (SELECT content_hash FROM leaves)",
            [model_id],
        ).to_arrow_reader(8_192)
        for batch in reader:
            matrix = matrix_of(batch.column(1), batch.column(2))
            if len(matrix) != batch.num_rows or matrix.shape[1] != queries.shape[1]:
                continue  # a vector of another dimension: only after a model mix-up
            hashes = batch.column(0).to_pylist()
            scores = matrix @ queries.T
            for k in range(len(queries)):
                pool = np.concatenate((best_scores[k], scores[:, k]))
                names = best_hashes[k] + hashes
                keep = np.argsort(-pool, kind="stable")[:top]  # a leaf per text at least: `top` texts suffice
                best_scores[k], best_hashes[k] = pool[keep], [names[i] for i in keep.tolist()]
        wanted = sorted({h for hashes in best_hashes for h in hashes})
        leaves = index.con.execute(
            "SELECT id, content_hash FROM leaves WHERE list_contains(?::VARCHAR[], content_hash)", [wanted]
        ).fetchall()
    by_hash: dict[str, list[str]] = {}
    for leaf_id, content_hash in leaves:
        by_hash.setdefault(content_hash, []).append(leaf_id)
    out = []
    for hashes, scores in zip(best_hashes, best_scores, strict=True):
        ranked = sorted(
            ((-float(score), leaf_id) for h, score in zip(hashes, scores.tolist(), strict=True) for leaf_id in by_hash.get(h, []))
        )
        out.append([leaf_id for _, leaf_id in ranked[:top]])
    return out


def bench_entity_search(entities: int = 50_000, *, queries: int = 200, seed: int = 0) -> dict[str, Any]:
    """`search_entities` latency over `entities` synthetic people and organizations (names and
    aliases from the synthetic vocabulary), in a scratch vault whose entity table is filled
    directly; the first query (which builds the name index) is reported separately."""
    vocab = build_vocabulary(seed)
    rng = random.Random(f"vm-bench-entities:{seed}")
    words = [w.title() for w in vocab.words[100:20_000]]
    rows: dict[str, tuple[str, str, str, list[str]]] = {}
    while len(rows) < entities:
        kind = "org" if rng.random() < 0.2 else "person"
        name = f"{rng.choice(words)} {rng.choice(words)}" if kind == "person" else f"{rng.choice(words)} Labs"
        ident = f"{kind}:{name.lower().replace(' ', '-')}"
        aliases = [name.split()[0]] if rng.random() < 0.3 else []
        rows.setdefault(ident, (ident, kind, name, aliases))
    table = list(rows.values())
    asked = [rng.choice(table)[2] for _ in range(queries // 2)]
    asked += [_typo(rng, rng.choice(table)[2]) for _ in range(queries // 4)]
    asked += [rng.choice(table)[2].split()[0] for _ in range(queries - len(asked))]
    with tempfile.TemporaryDirectory(prefix="vm-bench-entities-") as tmp:
        config = load_config(Path(tmp), embed_provider="none")
        with Memory.open(config) as memory:
            with memory.index.transaction() as con:
                con.executemany(
                    "INSERT INTO entities VALUES (?, ?, ?, NULL, ?, [], [], ?)",
                    [(i, k, n, a, rng.randint(1, 50)) for i, k, n, a in table],
                )
            started = time.perf_counter()
            memory.query("search_entities", {"query": asked[0]})
            first_s = time.perf_counter() - started
            samples = []
            found = 0
            for query in asked:
                started = time.perf_counter()
                hits = memory.query("search_entities", {"query": query})["hits"]
                samples.append(time.perf_counter() - started)
                found += bool(hits)
    return {**latency(samples), "entities": len(table), "first_query_s": first_s, "queries": len(asked),
            "queries_with_hits": found}  # fmt: skip


def _typo(rng: random.Random, name: str) -> str:
    i = rng.randrange(1, max(2, len(name) - 1))
    return name[:i] + name[i + 1 :]


# -- a whole run ---------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "cpus": os.cpu_count(),
        "load_avg_1m": load[0],
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "vaultmind": __version__,
    }


def prepare_vault(
    workdir: Path, notes: int, seed: int, progress: Progress | None = None
) -> tuple[Path, dict[str, Any]]:
    """The synthetic vault for (notes, seed) under `workdir`: reused when its manifest matches
    and it still holds exactly its notes, else (re)generated. Returns (vault, generation figures)."""
    vault = workdir / f"vault-{notes}-s{seed}"
    manifest = read_manifest(vault)
    matches = manifest is not None and manifest.get("notes") == notes and manifest.get("seed") == seed
    if matches:
        for folder in (SUMMARIES_DIR, ENTITIES_DIR):  # written by an earlier run's daemon, not generated
            shutil.rmtree(vault / folder, ignore_errors=True)
    if manifest is not None and matches and len(_note_paths(vault)) == notes:
        return vault, {
            "reused": True,
            **{k: manifest[k] for k in ("notes", "note_bytes", "links", "messages")},
        }
    if vault.exists():
        if manifest is None and any(vault.iterdir()):
            raise UsageError(
                f"{vault} exists and is not a generated vault", path=vault, hint="choose another --workdir"
            )
        shutil.rmtree(vault)
    stats = generate_vault(vault, notes, seed, progress=progress)
    return vault, {"reused": False, "seconds": stats.seconds, "notes": stats.notes, "note_bytes": stats.note_bytes,
                   "links": stats.links, "messages": stats.messages}  # fmt: skip


def check_targets(results: dict[str, dict[str, Any]]) -> dict[str, bool]:
    """metric → met, for the metrics of `TARGETS` present in one size's results."""
    out: dict[str, bool] = {}
    for key, (op, bound) in TARGETS.items():
        bench, metric = key.split(".", 1)
        failed = "error" in results.get(bench, {}) or (
            bench == "rss" and "daemon_error" in results.get(bench, {})
        )
        if failed and results.get(bench, {}).get(metric) is None:
            out[key] = False  # the benchmark did not finish
            continue
        value = results.get(bench, {}).get(metric)
        if isinstance(value, int | float):
            out[key] = value >= bound if op == ">=" else value <= bound
    return out


def _run_one(
    name: str,
    vault: Path,
    notes: int,
    seed: int,
    embed_provider: str,
    samples: int,
    repeats: int | None,
    progress: Progress | None,
) -> dict[str, Any]:
    if name == "cold":
        return bench_cold(vault, repeats=repeats or (3 if notes <= 5000 else 1), progress=progress)
    if name == "rss":
        serve_s = notes * SERVE_S_PER_NOTE
        return bench_rss(vault, embed_provider=embed_provider, seed=seed, serve_s=serve_s, progress=progress)
    if name == "rescan":
        return bench_rescan(vault, repeats=repeats or 5, embed_provider=embed_provider, progress=progress)
    if name == "walk":
        return bench_walk(vault, repeats=repeats or 3, embed_provider=embed_provider, seed=seed, progress=progress)
    if name == "entities":
        return bench_entity_search(seed=seed)
    if name == "query":
        return bench_query(
            vault, repeats=repeats or 3, embed_provider=embed_provider, seed=seed, progress=progress
        )
    return bench_save_to_query(vault, samples, embed_provider=embed_provider, seed=seed, progress=progress)


def run_benchmarks(
    sizes: Sequence[int],
    *,
    only: Sequence[str] = BENCHMARKS,
    workdir: Path,
    seed: int = 0,
    embed_provider: str = "static",
    samples: int = 30,
    repeats: int | None = None,
    progress: Progress | None = None,
    announce: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Generate (or reuse) a vault per size under `workdir` and run the chosen benchmarks.

    Order: cold (no embeddings), rss (a cold `reindex` with `embed_provider`, which also
    embeds every leaf), rescan, query, walk, entities, save (the daemon edits the vault and
    restores it).
    """
    unknown = sorted(set(only) - set(BENCHMARKS))
    if unknown:
        raise UsageError(
            f"unknown benchmark(s): {', '.join(unknown)}", hint=f"choose from {', '.join(BENCHMARKS)}"
        )
    say = announce or (lambda text: None)
    report: dict[str, Any] = {"machine": machine(), "seed": seed, "embeddings": embed_provider, "sizes": {}}
    for notes in sizes:
        say(f"{notes:,} notes: preparing the vault")
        vault, gen = prepare_vault(workdir, notes, seed, progress)
        size: dict[str, Any] = {"vault": gen}
        plan = [name for name in ("cold", "rss", "rescan", "query", "walk", "entities", "save") if name in only]
        for name in plan:
            say(f"{notes:,} notes: {name}")
            try:
                size[name] = _run_one(name, vault, notes, seed, embed_provider, samples, repeats, progress)
            except Exception as exc:  # whatever broke (DuckDB included): keep the other figures
                message = f"{type(exc).__name__}: {exc}"
                size[name] = {"error": message}
                say(f"{notes:,} notes: {name} failed: {message.splitlines()[0][:300]}")
        report["sizes"][str(notes)] = size
    report["machine"]["load_avg_1m_end"] = machine()["load_avg_1m"]
    report["targets"] = {key: {"op": op, "bound": bound} for key, (op, bound) in TARGETS.items()}
    report["pass"] = {size: check_targets(results) for size, results in report["sizes"].items()}
    return report


__all__ = [
    "BENCHMARKS",
    "TARGETS",
    "bench_cold",
    "bench_entity_search",
    "bench_query",
    "bench_rescan",
    "bench_rss",
    "bench_save_to_query",
    "bench_walk",
    "check_targets",
    "run_benchmarks",
]
