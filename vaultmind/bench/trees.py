"""Tree benchmarks: seals per second with the fallback summarizer, LLM calls per 1,000 leaves.

    python -m vaultmind.bench.trees [--messages 3000] [--l0-tokens 3000] [--fanout 8] [--ner]
                                    [--refresh-passes 5] [--json]
    python -m vaultmind.bench.trees --scale …   (tens of thousands of summaries: `bench.tree_scale`)

A deterministic chat vault (three channels, about 40 messages a day, 12-40 words each, a few
recurring people and topics) is written into a fresh folder and indexed (not timed); then
`seal_ready` and a final `flush` fold everything (timed). A seal is the whole two-phase
commit: derive the buffer, read the children, summarize, render, write atomically, sync the
note into the index (the entity and admission derivers run on it too), re-check the buffer.

Refresh: then the daemon's last step on the folded vault, `refresh_summaries` (entity links
and titles), `--refresh-passes` times each way, alternated: a full pass, as every daemon pass
ran it before the refresh was gated (`always`), and a gated pass over the unchanged vault;
medians and their ratio.

LLM calls: an LLM summarizer makes one call per seal and at most two (one retry when the
answer fails a check), so the calls per 1,000 leaves are `1000 · seals / leaves`, bounded by
twice that. With fan-out f the seals per level-1 summary are 1 + 1/f + 1/f² + … < f/(f − 1).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vaultmind.bench.tree_vault import CountingSummarizer, write_chat_vault
from vaultmind.config import load_config
from vaultmind.errors import UsageError
from vaultmind.memory import Memory
from vaultmind.tree.engine import flush, seal_ready
from vaultmind.tree.refresh import refresh_summaries


def bench_trees(
    workdir: Path,
    *,
    messages: int = 3000,
    l0_tokens: int = 3000,
    fanout: int = 8,
    ner: bool = False,
    seed: int = 0,
    refresh_passes: int = 5,
) -> dict[str, Any]:
    """Fold a fresh chat vault of `messages` messages; return the figures."""
    if messages <= 0:
        raise UsageError("--messages must be positive")
    workdir.mkdir(parents=True, exist_ok=True)
    if any(workdir.iterdir()):
        raise UsageError(f"{workdir} is not empty", hint="the benchmark writes a fresh vault")
    notes = write_chat_vault(workdir, messages, seed)
    extra = {
        "admission.llm": False,
        "entities.ner_model": "auto" if ner else "off",
        "trees.l0_tokens": l0_tokens,
        "trees.fanout": fanout,
    }
    config = load_config(workdir, embed_provider="none", extra=extra)
    summarizer = CountingSummarizer()
    with Memory.open(config) as memory:
        memory.sync()
        leaves = int(memory.index.scalar("SELECT count(*) FROM leaves"))
        started = time.perf_counter()
        report = seal_ready(memory, summarizer=summarizer)
        report.merge(
            flush(memory, now=datetime.max.replace(tzinfo=UTC), summarizer=summarizer, older_than_hours=0)
        )
        seconds = time.perf_counter() - started
        levels = dict(
            memory.index.query("SELECT level, count(*) FROM summaries GROUP BY level ORDER BY level")
        )
        refresh_summaries(memory)  # titles and links as they are now: the passes below write nothing
        full: list[float] = []
        gated: list[float] = []
        for _ in range(refresh_passes):
            for always, times in ((True, full), (False, gated)):
                at = time.perf_counter()
                refresh_summaries(memory, always=always)
                times.append(time.perf_counter() - at)
    seals = len(report.sealed)
    per_1000 = 1000.0 * seals / leaves if leaves else 0.0
    return {
        "messages": messages,
        "notes": notes,
        "leaves": leaves,
        "l0_tokens": l0_tokens,
        "fanout": fanout,
        "ner": ner,
        "seals": seals,
        "summaries_per_level": {str(k): int(v) for k, v in levels.items()},
        "aborted": len(report.aborted),
        "seconds": round(seconds, 3),
        "seals_per_s": round(seals / seconds, 2) if seconds > 0 else 0.0,
        "summarizer_seconds": round(summarizer.seconds, 3),
        "llm_calls_per_1000_leaves": per_1000,
        "llm_calls_per_1000_leaves_max": 2 * per_1000,
        "summaries": int(sum(levels.values())),
        "refresh_full_s": round(statistics.median(full), 4) if full else None,
        "refresh_gated_s": round(statistics.median(gated), 4) if gated else None,
        "refresh_gated_ratio": round(statistics.median(gated) / statistics.median(full), 4)
        if full and statistics.median(full) > 0
        else None,
    }


def main(argv: Sequence[str] | None = None) -> int:
    import tempfile

    parser = argparse.ArgumentParser(
        prog="python -m vaultmind.bench.trees", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--l0-tokens", type=int, default=3000)
    parser.add_argument("--fanout", type=int, default=8)
    parser.add_argument("--ner", action="store_true", help="run spaCy NER in the entity deriver (slower)")
    parser.add_argument("--refresh-passes", type=int, default=5, help="timed refresh passes each way (default 5)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--scale", action="store_true", help="write the fold instead of sealing it: time the daemon at scale"
    )
    parser.add_argument("--leaves-per-summary", type=int, default=2, help="with --scale (default 2)")
    parser.add_argument("--passes", type=int, default=3, help="with --scale: timed passes (default 3)")
    args = parser.parse_args(argv)
    if args.scale:
        return _main_scale(args)
    with tempfile.TemporaryDirectory(prefix="vaultmind-bench-trees-") as tmp:
        result = bench_trees(
            Path(tmp) / "vault",
            messages=args.messages,
            l0_tokens=args.l0_tokens,
            fanout=args.fanout,
            ner=args.ner,
            refresh_passes=args.refresh_passes,
        )
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"{result['seals']} seals over {result['leaves']} leaves in {result['seconds']:.2f} s "
            f"({result['seals_per_s']:.1f} seals/s; summarizer {result['summarizer_seconds']:.2f} s); "
            f"levels {result['summaries_per_level']}; LLM calls per 1,000 leaves: "
            f"{result['llm_calls_per_1000_leaves']:.1f} (at most {result['llm_calls_per_1000_leaves_max']:.1f})"
        )
        if result["refresh_full_s"] is not None:
            print(
                f"refresh over {result['summaries']} summaries: full pass {result['refresh_full_s']:.4f} s, "
                f"gated (nothing changed) {result['refresh_gated_s']:.4f} s, ratio {result['refresh_gated_ratio']}"
            )
    return 0


def _main_scale(args: argparse.Namespace) -> int:
    import tempfile

    from vaultmind.bench.tree_scale import bench_tree_scale, describe

    with tempfile.TemporaryDirectory(prefix="vaultmind-bench-trees-") as tmp:
        result = bench_tree_scale(
            Path(tmp) / "vault",
            messages=args.messages,
            per_summary=args.leaves_per_summary,
            fanout=args.fanout,
            passes=args.passes,
        )
    print(json.dumps(result, indent=2) if args.json else "\n".join(describe(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
