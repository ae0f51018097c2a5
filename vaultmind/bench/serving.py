"""Benchmarks of the running daemon: save→query latency (`bench_save_to_query`) and peak RSS
of a `vaultmind reindex` and of the daemon while it serves questions (`bench_rss`)."""

from __future__ import annotations

import itertools
import random
import re
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vaultmind.bench.daemon import DaemonProcess, running_daemon, waiting_jobs
from vaultmind.bench.figures import MB, Progress, latency, no_progress
from vaultmind.bench.processes import (
    child_env,
    descendants,
    peak_rss,
    proc_rss,
    pss_unknown,
    run_tree_measured,
)
from vaultmind.bench.vaults import delete_index, note_paths, refuse_running_daemon, vault_config
from vaultmind.bench.vocabulary import bench_queries
from vaultmind.child import python_command
from vaultmind.errors import DaemonError, UsageError, VaultmindError
from vaultmind.vault.layout import SOURCES_DIR

# The line a save sample appends to a note (removed after the run, and by `restore_saved`
# from a reused vault whose run was killed before it could)
SAVED_LINE = "\nAdded {nonce} while benchmarking.\n"
_SAVED = re.compile(re.escape(SAVED_LINE).replace(re.escape("{nonce}"), "vmnonce[a-z]{6}[0-9]{4}x") + r"\Z")


def restore_saved(vault: Path, notes: Sequence[str]) -> None:
    """Take the lines save samples appended off the end of `notes` (a run killed before it
    restored them)."""
    for rel in notes:
        path = vault / rel
        data = text = path.read_text(encoding="utf-8")
        while match := _SAVED.search(text):
            text = text[: match.start()]
        if text != data:
            path.write_text(text, encoding="utf-8")


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
    progress = progress or no_progress
    rng = random.Random(f"vm-bench-save:{seed}")
    notes = note_paths(vault, vault_config(vault, embed_provider).all_ignores)
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
            queue_depth = waiting_jobs(daemon)
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
                        fh.write(SAVED_LINE.format(nonce=nonce))
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
            hwm, rss = peak_rss(daemon.proc.pid)
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
    """Peak memory of `vaultmind reindex` (after deleting the index when `cold`: the first run on
    a vault, embeddings included) and of the daemon after start-up plus a few queries, then
    while it keeps answering one every `SERVE_EVERY_S` for `serve_s` seconds, through the NER
    catch-up a cold index leaves. Each as its process tree's summed PSS at its largest
    (`*_tree_pss_peak_mb`: the reindex with its parsing workers, the daemon with its NER
    process; shared pages counted once), which the targets are checked on, beside the largest
    single process's high-water mark (`reindex_peak_mb`, `daemon_peak_mb`, as measured before)."""
    progress = progress or no_progress
    refuse_running_daemon(vault)
    config = vault_config(vault, embed_provider)
    if cold:
        delete_index(config)
    cmd = python_command("-m", "vaultmind", "reindex", "--vault", str(vault), "--json")
    progress("reindex (subprocess)", 0, 1)
    with tempfile.TemporaryFile() as err:
        run = run_tree_measured(cmd, child_env(embed_provider), err, interval_s=0.05, with_pss=True)
        if run.code != 0:
            err.seek(0)
            raise VaultmindError(
                f"`vaultmind reindex` failed with code {run.code}: {err.read().decode()[-2000:]}"
            )
    progress("reindex (subprocess)", 1, 1)
    result: dict[str, Any] = {
        "reindex_peak_mb": run.peak_max / MB,  # its largest single process (kernel high-water marks)
        "reindex_tree_rss_peak_mb": run.peak_sum / MB,  # the tree's RSS summed (shared pages n times)
        "reindex_tree_pss_peak_mb": _mb(run.peak_pss),  # the tree's PSS summed: the target's figure
        "reindex_s": run.seconds,
        "reindex_cold": cold,
        "embeddings": config.embed_provider,
    }
    why = pss_unknown()
    if why is not None:  # the PSS figures, the targets', are missing: why, in the JSON and the table
        result["not_measured"] = {"reindex_tree_pss_peak_mb": why, "daemon_tree_pss_peak_mb": why}
    try:
        with running_daemon(vault, embed_provider=embed_provider, progress=progress) as (daemon, startup_s):
            started = time.perf_counter()
            daemon.search(bench_queries(seed, 1)[0], timeout=600.0)  # loads the resident structures
            result["daemon_first_query_s"] = time.perf_counter() - started
            for query in bench_queries(seed, queries):
                daemon.search(query, timeout=600.0)
            result["daemon_served_s"] = _keep_serving(daemon, bench_queries(seed, queries), serve_s, progress)
            hwm, rss = peak_rss(daemon.proc.pid)
            tree_rss = sum(proc_rss(pid)[1] for pid in descendants(daemon.proc.pid))
            tree_peak = daemon.timeline.peak_sum
            tree_pss_peak = daemon.timeline.peak_pss
            timeline = list(daemon.timeline.samples)
            own = list(daemon.timeline.own)
            result["queue_depth_at_start"] = waiting_jobs(daemon)
    except DaemonError as exc:  # keep the reindex figure
        result["daemon_error"] = str(exc)
        return result
    result["daemon_peak_mb"] = hwm / MB if hwm is not None else None
    result["daemon_rss_mb"] = rss / MB if rss is not None else None
    # with its child processes (the NER model's, while it has texts): summed now, and the
    # largest sum sampled (every 0.25 s) since its launch
    result["daemon_tree_rss_mb"] = tree_rss / MB if tree_rss else None
    result["daemon_tree_peak_mb"] = tree_peak / MB if tree_peak else None
    # the same tree's PSS summed (pages it shares counted once): what the target is checked on
    result["daemon_tree_pss_peak_mb"] = _mb(tree_pss_peak)
    result["daemon_startup_s"] = startup_s
    if timeline:  # from the daemon's launch to the end of the queries: where its peak fell
        result["daemon_rss_timeline"] = [[round(t, 2), round(b / MB, 1)] for t, b in timeline]
        result["daemon_largest_sample_at_s"] = round(max(timeline, key=lambda s: s[1])[0], 2)
        at, largest = max(own, key=lambda s: s[1])  # the daemon alone, without its NER child
        result["daemon_own_largest_sample_mb"] = largest / MB
        result["daemon_own_largest_sample_at_s"] = round(at, 2)
    return result


def _mb(size: int | None) -> float | None:
    """Bytes as MB; None for a figure not measured (0: no `/proc/<pid>/smaps_rollup` here)."""
    return size / MB if size else None


SERVE_EVERY_S = 3.0  # rss: the daemon is asked a question this often (background work waits for a pause of `memory.QUIET_S`)


def _keep_serving(daemon: DaemonProcess, queries: Sequence[str], serve_s: float, progress: Progress) -> float:
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
