"""`vaultmind eval …`: retrieval benchmarks on real data, given by path (docs/eval.md).

    vaultmind eval locomo FILE [--qa QA_JSONL] [--out results.jsonl] [--mode walk|search|bm25-baseline]
                               [--limit-samples N] [--embeddings PROVIDER] [--ner] [--json]

The harness lives in `vaultmind.eval.locomo`; this module parses arguments, prints progress
on stderr, writes `--out` as each conversation finishes and formats the figures. Ctrl-C, or
SIGTERM (a timeout's kill), stops the run with its temporary vault removed and says what was
kept: the answers of the conversations finished, in `--out`; a new run starts over.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultmind.cli.output import emit
from vaultmind.errors import CtrlC, by_ctrl_c
from vaultmind.eval import DEFAULT_MODE, MODES

if TYPE_CHECKING:
    from vaultmind.eval.locomo import EvalReport

INTERRUPTED_EXIT = 130


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "eval",
        help="retrieval benchmarks on real data (see docs/eval.md)",
        description="Measure retrieval on a benchmark data set, given by path; nothing is copied.",
    )

    esub = p.add_subparsers(title="benchmarks", metavar="BENCHMARK")
    lo = esub.add_parser(
        "locomo",
        help="LoCoMo: ingest each conversation into a fresh vault, ask its questions, score the ranking",
        description=(
            "Ingest each LoCoMo conversation into its own temporary vault through the chat adapter, ask "
            "every question of categories 1-4, and report S@5, S-MRR, T-R@5, T-B1k and latency per "
            "category and overall."
        ),
    )
    lo.add_argument("file", type=Path, help="a LoCoMo JSON file (a list of samples, or one sample)")
    lo.add_argument(
        "--qa",
        type=Path,
        default=None,
        help="JSON-lines file with the gold evidence per question (default: qa_flat_dev.jsonl next to FILE, "
        "when present; else the evidence in FILE)",
    )
    lo.add_argument(
        "--out",
        type=Path,
        default=None,
        help="write one JSON line per question (ranked items) here, rewritten as each conversation finishes",
    )
    lo.add_argument(
        "--mode", choices=MODES, default=DEFAULT_MODE, help=f"retrieval to measure (default {DEFAULT_MODE})"
    )
    lo.add_argument(
        "--limit-samples", type=int, default=None, metavar="N", help="only the first N conversations"
    )
    lo.add_argument(
        "--embeddings",
        default=None,
        metavar="PROVIDER",
        help="embeddings provider for the temporary vaults (default: vaultmind's default, static)",
    )
    lo.add_argument(
        "--ner",
        action="store_true",
        help="run NER and write entity notes before the questions, as a daemon's background work does",
    )
    lo.add_argument("--json", action="store_true", help="print the figures as JSON")
    lo.set_defaults(handler=cmd_locomo)


@dataclass(slots=True)
class _Kept:
    """What a stopped run has kept: the conversations finished and the questions written to
    `out` as of the last checkpoint (the report itself goes on changing after it)."""

    out: Path | None
    planned: int | None = None
    finished: int = 0
    written: int = 0

    def __call__(self, report: EvalReport) -> None:
        from vaultmind.eval.locomo import write_results

        if self.out is not None and report.samples:  # the answers so far, whatever comes after
            write_results(report, self.out)
        self.planned, self.finished, self.written = report.planned, len(report.samples), len(report.results)

    def interrupted(self) -> str:
        """The line said on Ctrl-C or SIGTERM: what was written, and that a new run starts over."""
        if self.planned is None:
            return "vaultmind eval: interrupted before the first conversation was indexed; nothing was written"
        done = f"after {self.finished} of {self.planned} conversations"
        if self.out is not None and self.finished:
            from vaultmind.eval.locomo import partial_path

            kept = f"the {self.written} questions answered are in {self.out}, without figures"
            if self.finished < self.planned:  # (stopped after the last one: the file holds the whole run)
                kept += f" — a partial run, as {partial_path(self.out)} beside it says"
        elif self.out is not None:
            kept = f"nothing was written to {self.out}"
        else:
            kept = "nothing was written (--out keeps each conversation's answers as it finishes)"
        return (
            f"vaultmind eval: interrupted {done}; {kept}; the temporary vault was removed, "
            "and running the command again starts over"
        )


@contextmanager
def _sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM (a timeout's kill, `kill PID`) taken as Ctrl-C for the run, so its temporary
    vault is removed and what was answered is said, rather than the process ending at once.
    It is recorded as Ctrl-C is (`CtrlC.seen`): DuckDB stopped by it may raise an error of its
    own with nothing chained, which `by_ctrl_c` then reads as the stop it is. A SIGTERM that is
    ignored, or handled by the program that runs the command, is left to it, as the command
    line leaves such a SIGINT."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return

    def stop(_signo: int, _frame: object) -> None:
        CtrlC.seen = True
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def cmd_locomo(args: argparse.Namespace) -> int:
    from vaultmind.cli.bench import StderrProgress
    from vaultmind.embed.providers import check_provider_flag
    from vaultmind.eval.locomo import check_out, run_locomo

    if args.out is not None:
        check_out(args.out)  # before the run, not after it
    check_provider_flag(args.embeddings)  # before the first conversation is ingested
    steps = StderrProgress("eval")  # a line for each step of a conversation's indexing that takes seconds
    kept = _Kept(args.out)
    try:
        with _sigterm_as_ctrl_c():
            report = run_locomo(
                args.file,
                qa_path=args.qa,
                mode=args.mode,
                limit_samples=args.limit_samples,
                embed_provider=args.embeddings,
                ner=args.ner,
                progress=steps.announce,
                steps=steps,
                checkpoint=kept,
            )
    except BaseException as exc:
        if not (isinstance(exc, KeyboardInterrupt) or by_ctrl_c(exc)):
            raise
        steps.close()  # its line ended before the interruption is said
        print(kept.interrupted(), file=sys.stderr, flush=True)
        return INTERRUPTED_EXIT
    finally:
        steps.close()
    if args.out is not None:
        print(f"vaultmind eval: wrote {len(report.results)} lines to {args.out}", file=sys.stderr, flush=True)
    figures = report.to_dict()
    if args.json:
        emit(figures)
    else:
        print_figures(figures)
    return 0


_COLUMNS = ("S@5", "S-MRR", "T-R@5", "T-B1k")


def print_figures(figures: dict[str, Any]) -> None:
    print(
        f"vaultmind eval locomo — mode {figures['mode']}, {figures['n_questions']} questions "
        f"from {len(figures['samples'])} conversation{'' if len(figures['samples']) == 1 else 's'}, embeddings {figures['embeddings'] or 'none'}"
        + (f", NER first ({figures['ner_texts']} texts)" if figures["ner_texts"] is not None else "")
        + f", gold evidence from {figures['evidence']}"
        + (
            f" ({figures['evidence_from_data_file']} questions from the data file)"
            if figures["evidence_from_data_file"]
            else ""
        )
        + (
            f", {figures['dropped_evidence_ids']} evidence ids naming no turn dropped"
            if figures["dropped_evidence_ids"]
            else ""
        )
        + (
            f", {figures['skipped_no_evidence']} skipped (no evidence)"
            if figures["skipped_no_evidence"]
            else ""
        )
    )
    header = (
        f"{'category':18}{'n':>5}"
        + "".join(f"{c:>8}" for c in _COLUMNS)
        + f"{'ms mean':>9}{'p50':>8}{'p95':>8}"
    )
    print(header)
    rows = [(f"{k} {v['name']}", v) for k, v in figures["per_category"].items()]
    rows.append(("overall", figures["overall"]))
    for label, row in rows:
        lat = row["latency_ms"]
        print(
            f"{label:18}{row['n']:>5}"
            + "".join(f"{row[c]:>8.3f}" for c in _COLUMNS)
            + f"{lat['mean']:>9.1f}{lat['p50']:>8.1f}{lat['p95']:>8.1f}"
        )
