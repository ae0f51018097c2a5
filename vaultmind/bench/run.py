"""A whole benchmark run: generate (or reuse) a synthetic vault per size, run the chosen
benchmarks, check their figures against `TARGETS` (`bench.targets`: each at the size it is
stated for).

The benchmarks are library functions returning plain dicts of numbers, each for any vault
(usually one written by `bench.synth.generate_vault`) at any size:

- `bench_rescan`        a no-change `sync_all` on an up-to-date index: files/s (`bench.indexing`)
- `bench_cold`          delete the index, rebuild it without embeddings (a reindex in a
                        subprocess): notes/s, next to a baseline that only walks, reads and
                        sha256-hashes the same notes; peak RSS of the reindex's process tree
                        (`bench.indexing`)
- `bench_save_to_query` the real daemon in a subprocess: write a unique word into a note, poll
                        the API until a search finds it: latency p50/p95/max (`bench.serving`)
- `bench_rss`           peak memory of a `vaultmind reindex` subprocess (cold) and of the daemon
                        after start-up and a few queries: each process tree's summed PSS (the
                        targets' figure) beside its largest process's RSS (`bench.serving`)
- `bench_query`         in-process search latency over a fixed query set (`bench.search`)
- `bench_walk`, `bench_entity_search`  in-process walk latency (without the question's
                        embedding, which is reported apart) and entity search latency (`bench.search`)

Timings are wall-clock (`time.perf_counter`); repeated measurements are summarised as
min/median/max (or percentiles for latencies, `bench.figures`). Peak memory comes from the
kernel (`/proc/<pid>/status` VmHWM and a process tree's PSS from `/proc/<pid>/smaps_rollup`,
sampled; `wait4` rusage for a finished child where there is no `/proc`: `bench.processes`), so
no extra dependency is needed at run time.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vaultmind import __version__
from vaultmind.bench.figures import Progress
from vaultmind.bench.indexing import bench_cold, bench_rescan
from vaultmind.bench.search import bench_entity_search, bench_query, bench_walk
from vaultmind.bench.serving import bench_rss, bench_save_to_query, restore_saved
from vaultmind.bench.synth import SOURCES_SHARE, generate_vault, read_manifest
from vaultmind.bench.targets import TARGETS, check_targets, describe
from vaultmind.bench.vaults import note_paths, refuse_running_daemon
from vaultmind.errors import ConfigError, UsageError
from vaultmind.vault.layout import ENTITIES_DIR, SUMMARIES_DIR

BENCHMARKS = ("rescan", "cold", "query", "rss", "save", "walk", "entities")
"""All benchmarks, in the order `run_benchmarks` runs them."""

VAULT_FREE = ("entities",)
"""Benchmarks that build their own data, the same at every vault size: run once per run."""

SERVE_S_PER_NOTE = 0.0012  # rss: how long the daemon keeps answering questions (50k notes: 60 s)


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


def vault_dir(workdir: Path, notes: int, seed: int) -> Path:
    """Where a run keeps the synthetic vault of (notes, seed)."""
    return workdir / f"vault-{notes}-s{seed}"


def prepare_vault(
    workdir: Path, notes: int, seed: int, progress: Progress | None = None
) -> tuple[Path, dict[str, Any]]:
    """The synthetic vault for (notes, seed) under `workdir`: reused when its manifest matches
    (a vault generated with another share of chat sources does not) and it still holds exactly
    its notes, else (re)generated. Returns (vault, generation figures)."""
    vault = vault_dir(workdir, notes, seed)
    manifest = read_manifest(vault)
    wanted = {"notes": notes, "seed": seed, "sources_share": SOURCES_SHARE}
    matches = manifest is not None and all(manifest.get(key) == value for key, value in wanted.items())
    if matches:
        for folder in (SUMMARIES_DIR, ENTITIES_DIR):  # written by an earlier run's daemon, not generated
            shutil.rmtree(vault / folder, ignore_errors=True)
    if manifest is not None and matches and len(paths := note_paths(vault)) == notes:
        restore_saved(vault, paths)  # lines left by a save benchmark killed before it restored them
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


def _refuse_a_served_vault(vault: Path) -> None:
    """Stop the run before a reused vault that a daemon serves is cleaned or benchmarked. A
    vault whose configuration does not load is left to the benchmarks, each of which fails on
    it and is named."""
    if vault.is_dir():
        with contextlib.suppress(ConfigError):
            refuse_running_daemon(vault)


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
        return bench_entity_search(seed=seed, progress=progress)
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
    embeds every leaf), rescan, query, walk, entities (once per run: `VAULT_FREE`), save (the
    daemon edits the vault and restores it).
    """
    unknown = sorted(set(only) - set(BENCHMARKS))
    if unknown:
        raise UsageError(
            f"unknown benchmark(s): {', '.join(unknown)}", hint=f"choose from {', '.join(BENCHMARKS)}"
        )
    say = announce or (lambda text: None)
    once: dict[str, tuple[int, dict[str, Any]]] = {}  # VAULT_FREE benchmark → (size measured at, figures)
    report: dict[str, Any] = {"machine": machine(), "seed": seed, "embeddings": embed_provider, "sizes": {}}
    for notes in sizes:
        _refuse_a_served_vault(vault_dir(workdir, notes, seed))
        say(f"{notes:,} notes: preparing the vault")
        vault, gen = prepare_vault(workdir, notes, seed, progress)
        size: dict[str, Any] = {"vault": gen}
        plan = [name for name in ("cold", "rss", "rescan", "query", "walk", "entities", "save") if name in only]
        for name in plan:
            if name in once:  # the same figures at every size: measured at the first
                size[name] = {**once[name][1], "measured_at_size": once[name][0]}
                say(f"{notes:,} notes: {name}: the figures of {once[name][0]:,} notes (it uses no vault)")
                continue
            say(f"{notes:,} notes: {name}")
            try:
                size[name] = _run_one(name, vault, notes, seed, embed_provider, samples, repeats, progress)
            except Exception as exc:  # whatever broke (DuckDB included): keep the other figures
                message = f"{type(exc).__name__}: {exc}"
                size[name] = {"error": message}
                say(f"{notes:,} notes: {name} failed: {message.splitlines()[0][:300]}")
            if name in VAULT_FREE and "error" not in size[name]:
                once[name] = (notes, size[name])
        report["sizes"][str(notes)] = size
    report["machine"]["load_avg_1m_end"] = machine()["load_avg_1m"]
    report["targets"] = {key: describe(key) for key in TARGETS}
    report["pass"] = {size: check_targets(results, int(size)) for size, results in report["sizes"].items()}
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
