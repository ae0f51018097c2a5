"""`vaultmind bench …`: performance benchmarks over a deterministic synthetic vault.

    vaultmind bench generate OUT --notes N [--seed S]
    vaultmind bench run [--notes N ...] [--sizes 1000,50000] [--only rescan,cold,save,rss,query,walk,entities]
                        [--workdir DIR] [--json]

The benchmarks themselves live in `vaultmind.bench.run`; this module parses arguments, shows
progress on stderr and formats the figures (see docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from vaultmind.cli.output import StatusLine, emit
from vaultmind.errors import UsageError

PROGRESS_AFTER_S = 2.0


def add_bench_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "bench",
        help="benchmarks over a synthetic vault (see docs/benchmarks.md)",
        description="Generate a deterministic synthetic vault, or run the performance benchmarks on one.",
    )

    bsub = p.add_subparsers(title="actions", metavar="ACTION")

    g = bsub.add_parser(
        "generate", help="write a deterministic synthetic vault (same seed and size, same bytes)"
    )
    g.add_argument("out", type=Path, help="folder to create (must be missing or empty)")
    g.add_argument("--notes", type=int, default=1000, help="number of notes, sources included (default 1000)")
    g.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    g.add_argument(
        "--sources-share", type=float, default=0.2, help="share of chat source notes (default 0.2)"
    )
    g.add_argument("--json", action="store_true", help="print the generator's counts as JSON")
    g.set_defaults(handler=cmd_generate)

    r = bsub.add_parser("run", help="generate vaults and run the benchmarks")
    r.add_argument("--notes", type=int, nargs="+", metavar="N", help="vault size(s) in notes")
    r.add_argument(
        "--sizes", type=_int_list, help="comma-separated vault sizes, e.g. 1000,50000 (default 1000)"
    )
    r.add_argument(
        "--only", type=_name_list, help="comma-separated benchmarks: rescan,cold,save,rss,query,walk,entities (default all)"
    )
    r.add_argument(
        "--workdir", type=Path, help="keep the generated vaults here and reuse them (default: a temp dir)"
    )
    r.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    r.add_argument("--samples", type=int, default=30, help="save→query samples (default 30)")
    r.add_argument(
        "--repeats", type=int, help="repeats of rescan/cold/query/walk (default 5/3/3/3; cold once above 5k notes)"
    )
    r.add_argument(
        "--embeddings",
        default="static",
        help="embeddings provider for rescan, rss, query, walk and save (default static; cold always runs without)",
    )
    r.add_argument("--check", action="store_true", help="exit with code 1 when a target is missed")
    r.add_argument("--json", action="store_true", help="print the figures as JSON")
    r.set_defaults(handler=cmd_run)


def _int_list(text: str) -> list[int]:
    try:
        values = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from exc
    return values


def _name_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


class StderrProgress:
    """Step headers, and a progress line for any step that runs longer than ~2 s (`bench`, `eval`).

    Between progress calls (a subprocess, a long database commit) a ticker thread keeps the
    line alive with the elapsed time, so no long step looks stuck.
    """

    def __init__(self, command: str = "bench") -> None:
        self.command = command  # the command whose lines these are (`vaultmind bench: …`)
        self.lock = threading.Lock()
        self.step_started = time.monotonic()
        self.last = 0.0
        self.phase = ""
        self.line = ""
        self.status = StatusLine()
        self.stop = threading.Event()
        self.ticker = threading.Thread(target=self._tick, name=f"{command}-progress", daemon=True)
        self.ticker.start()

    def announce(self, text: str) -> None:
        with self.lock:
            self._end_line()
            print(f"vaultmind {self.command}: {text}", file=sys.stderr, flush=True)
            self.step_started = time.monotonic()
            self.phase = self.line = ""

    def __call__(self, phase: str, done: int, total: int) -> None:
        with self.lock:
            now = time.monotonic()
            if now - self.step_started < PROGRESS_AFTER_S:
                return
            if now - self.last < 0.5 and phase == self.phase and done < total:
                return  # (a phase's last count always shows: a log written off a terminal ends on it)
            self.phase = phase
            self.line = f"{phase}: {done:,}/{total:,}" + (f" ({100.0 * done / total:.0f}%)" if total else "")
            self._write(now)

    def _tick(self) -> None:
        while not self.stop.wait(1.0):
            with self.lock:
                now = time.monotonic()
                if now - self.step_started >= PROGRESS_AFTER_S and now - self.last >= 1.0:
                    self._write(now)

    def _write(self, now: float) -> None:
        self.last = now
        label = self.line or "working"
        self.status.show(f"  {label}, {now - self.step_started:.0f} s", phase=self.phase, now=now)

    def _end_line(self) -> None:
        self.status.end()

    def close(self) -> None:
        self.stop.set()
        self.ticker.join()
        with self.lock:
            self._end_line()


def cmd_generate(args: argparse.Namespace) -> int:
    from vaultmind.bench.synth import generate_vault

    progress = StderrProgress()
    try:
        stats = generate_vault(
            args.out, args.notes, args.seed, sources_share=args.sources_share, progress=progress
        )
    finally:
        progress.close()
    if args.json:
        emit({"vault": str(args.out), **stats.to_dict()})
    else:
        print(
            f"vaultmind: wrote {stats.notes:,} notes ({stats.user_notes:,} user, {stats.source_notes:,} chat sources, "
            f"{stats.note_bytes / 1e6:.1f} MB) and {stats.other_files} other files to {args.out} in {stats.seconds:.1f} s"
        )
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from vaultmind.bench.run import BENCHMARKS, run_benchmarks
    from vaultmind.bench.targets import missed

    sizes = list(dict.fromkeys([*(args.notes or []), *(args.sizes or [])])) or [1000]
    if any(n < 1 for n in sizes):
        raise UsageError("vault sizes must be positive")
    only = args.only or list(BENCHMARKS)
    if args.samples < 1 or (args.repeats is not None and args.repeats < 1):
        raise UsageError("--samples and --repeats must be at least 1")
    from vaultmind.embed.providers import check_provider_flag

    check_provider_flag(args.embeddings)  # before any vault is generated, not in every benchmark
    workdir = args.workdir
    temporary = workdir is None
    if temporary:
        workdir = Path(tempfile.mkdtemp(prefix="vaultmind-bench-"))
    try:
        workdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"cannot use --workdir {workdir}: {exc.strerror or exc}", hint="give a folder that can be created"
        ) from exc
    progress = StderrProgress()
    try:
        report = run_benchmarks(
            sizes,
            only=only,
            workdir=workdir,
            seed=args.seed,
            embed_provider=args.embeddings,
            samples=args.samples,
            repeats=args.repeats,
            progress=progress,
            announce=progress.announce,
        )
    finally:
        progress.close()
        if temporary:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        emit(report)
    else:
        print_report(report)
    failed = failed_benchmarks(report)
    if failed:  # its figures are missing ("–"): never a run that passes
        print(f"vaultmind: error: {len(failed)} benchmark(s) failed: {'; '.join(failed)}", file=sys.stderr)
        return 1
    return 1 if args.check and missed(report["pass"]) else 0


def failed_benchmarks(report: dict[str, Any]) -> list[str]:
    """`<size> notes: <benchmark> (<error>)` for each benchmark of the report that raised (the
    rss benchmark's daemon part included)."""
    out: list[str] = []
    for size, results in report["sizes"].items():
        for name, result in results.items():
            error = result.get("error") or result.get("daemon_error") if isinstance(result, dict) else None
            if error:
                out.append(f"{int(size):,} notes: {name} ({str(error).splitlines()[0][:200]})")
    return out


# -- the table -----------------------------------------------------------------------------------


def _fmt(value: Any, scale: float = 1.0, digits: int = 0) -> str:
    if not isinstance(value, int | float):
        return "–"
    return f"{value * scale:,.{digits}f}"


_ROWS: tuple[tuple[str, str, str, float, int], ...] = (
    # label, bench, metric, scale, digits
    ("rescan, no change (files/s)", "rescan", "files_per_s", 1, 0),
    ("cold index (notes/s)", "cold", "notes_per_s", 1, 0),
    ("read+hash baseline (files/s)", "cold", "baseline.files_per_s", 1, 0),
    ("cold / baseline (×)", "cold", "ratio_to_baseline", 1, 1),
    ("save→query p50 (ms)", "save", "p50_s", 1000, 0),
    ("save→query p95 (ms)", "save", "p95_s", 1000, 0),
    ("save→query max (ms)", "save", "max_s", 1000, 0),
    ("reindex tree, peak PSS summed (MB)", "rss", "reindex_tree_pss_peak_mb", 1, 0),
    ("reindex, largest process RSS (MB)", "rss", "reindex_peak_mb", 1, 0),
    ("daemon + NER, peak PSS summed (MB)", "rss", "daemon_tree_pss_peak_mb", 1, 0),
    ("daemon alone, peak RSS (MB)", "rss", "daemon_peak_mb", 1, 0),
    ("daemon + NER, peak RSS summed (MB)", "rss", "daemon_tree_peak_mb", 1, 0),
    ("query p50 (ms)", "query", "p50_s", 1000, 1),
    ("query p95 (ms)", "query", "p95_s", 1000, 1),
    ("walk p50, without embedding (ms)", "walk", "p50_s", 1000, 1),
    ("walk p95, without embedding (ms)", "walk", "p95_s", 1000, 1),
    ("walk p95 with the embedding (ms)", "walk", "with_embedding.p95_s", 1000, 1),
    ("walk: question embedding p50 (ms)", "walk", "embed_p50_s", 1000, 2),
    ("walk: dense recall@100 vs full scan", "walk", "dense_recall_at_100", 1, 3),
    ("walk: leaves", "walk", "leaves", 1, 0),
    ("walk: process RSS (MB)", "walk", "process_rss_mb", 1, 0),
    ("search_entities p95 (ms)", "entities", "p95_s", 1000, 1),
)


def _get(results: dict[str, Any], bench: str, metric: str) -> Any:
    value: Any = results.get(bench, {})
    for part in metric.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def print_report(report: dict[str, Any]) -> None:
    from vaultmind.bench.targets import NA, TARGETS

    m = report["machine"]
    print(
        f"vaultmind bench — {m['cpus']} CPUs, load {m['load_avg_1m']:.1f}→{m.get('load_avg_1m_end', 0):.1f}, "
        f"Python {m['python']}, embeddings {report['embeddings']}"
    )
    sizes = list(report["sizes"])
    rows = [row for row in _ROWS if any(row[1] in report["sizes"][s] for s in sizes)]
    width = max((len(row[0]) for row in rows), default=0) + 2  # every label's cells in the same columns
    header = " " * width + "".join(f"{int(s):>14,}" for s in sizes) + "   target"
    print(header)
    for label, bench, metric, scale, digits in rows:
        cells = ""
        reasons: list[str] = []  # "n/a (no /proc/PID/smaps_rollup on this system)": said once, after the target
        for s in sizes:
            value = _get(report["sizes"][s], bench, metric)
            ok = report["pass"][s].get(f"{bench}.{metric}")
            mark = "" if ok is None else f" {NA}" if isinstance(ok, str) else (" ✓" if ok else " ✗")
            if isinstance(ok, str) and ok != NA and ok not in reasons:
                reasons.append(ok)
            cells += f"{_fmt(value, scale, digits) + mark:>14}"
        target = TARGETS.get(f"{bench}.{metric}")
        bound = f"{target.op} {_fmt(target.bound, scale, digits if scale == 1 else 0)}" if target else ""
        bound += f" at {target.stated_for}" if target and target.stated_for else ""
        bound += "".join(f"; {reason}" for reason in reasons)
        print(f"{label:{width}}{cells}   {bound}")
