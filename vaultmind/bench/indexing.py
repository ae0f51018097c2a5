"""Benchmarks of building the index: a no-change rescan (`bench_rescan`) and a cold rebuild
next to a read+hash baseline (`bench_cold`, the rebuild in a subprocess: `cold_reindex`)."""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vaultmind.bench.figures import MB, Progress, no_progress, spread
from vaultmind.bench.processes import child_env, run_tree_measured
from vaultmind.bench.vaults import delete_index, note_paths, refuse_running_daemon, vault_config
from vaultmind.child import python_command
from vaultmind.config import DEFAULT_IGNORE
from vaultmind.errors import VaultmindError
from vaultmind.memory import Memory


def bench_rescan(
    vault: Path, *, repeats: int = 5, embed_provider: str | None = "none", progress: Progress | None = None
) -> dict[str, Any]:
    """`sync_all` on an up-to-date index (one untimed sync first brings it up to date)."""
    progress = progress or no_progress
    config = vault_config(vault, embed_provider)
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


def read_hash_baseline(
    vault: Path, ignore: Sequence[str] = DEFAULT_IGNORE, progress: Progress | None = None
) -> tuple[int, int, float]:
    """(files, bytes, seconds) to walk the vault, read every note and sha256 it: the floor."""
    progress = progress or no_progress
    started = time.perf_counter()
    paths = note_paths(vault, ignore)
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
    progress = progress or no_progress
    refuse_running_daemon(vault)
    config = vault_config(vault, "none")
    cold: list[float] = []
    base: list[float] = []
    cpu: list[float] = []  # CPU seconds of the reindex process tree per rebuild
    peak_max: list[int] = []
    peak_sum: list[int] = []
    notes = leaves = files = size = 0
    cmd = python_command("-c", "import sys; from vaultmind.bench.indexing import cold_reindex; cold_reindex(sys.argv[1])")
    cmd.append(str(vault))
    for run in range(repeats):
        files, size, seconds = read_hash_baseline(vault, config.all_ignores, progress)
        base.append(seconds)
        delete_index(config)
        progress("cold index", run, repeats)
        with tempfile.TemporaryFile() as err:
            measured = run_tree_measured(cmd, child_env("none"), err)
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
    with Memory.open(vault_config(Path(vault), "none")) as memory:
        memory.reindex()
