"""`vaultmind eval …`: retrieval benchmarks on real data, given by path (docs/eval.md).

    vaultmind eval locomo FILE [--qa QA_JSONL] [--out results.jsonl] [--mode walk|search|bm25-baseline]
                               [--limit-samples N] [--embeddings PROVIDER] [--ner] [--json]

The harness lives in `vaultmind.eval.locomo`; this module parses arguments, prints progress
on stderr and formats the figures.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from vaultmind.cli.output import emit
from vaultmind.eval import DEFAULT_MODE, MODES


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
        "--out", type=Path, default=None, help="write one JSON line per question (ranked items) here"
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


def cmd_locomo(args: argparse.Namespace) -> int:
    from vaultmind.cli.bench import StderrProgress
    from vaultmind.embed.providers import check_provider_flag
    from vaultmind.eval.locomo import check_out, run_locomo, write_results

    if args.out is not None:
        check_out(args.out)  # before the run, not after it
    check_provider_flag(args.embeddings)  # before the first conversation is ingested
    steps = StderrProgress("eval")  # a line for each step of a conversation's indexing that takes seconds
    try:
        report = run_locomo(
            args.file,
            qa_path=args.qa,
            mode=args.mode,
            limit_samples=args.limit_samples,
            embed_provider=args.embeddings,
            ner=args.ner,
            progress=steps.announce,
            steps=steps,
        )
    finally:
        steps.close()
    if args.out is not None:
        write_results(report, args.out)
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
