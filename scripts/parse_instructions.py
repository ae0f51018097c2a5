#!/usr/bin/env python3
"""Count the instructions of a sync's per-note work: a host-independent measure of its cost.

Wall and CPU time of the cold index move by 30 % and more from one hour to the next on a shared
machine; the number of instructions the parsing work executes does not (runs agree to 0.05 %).
This script runs what a parse worker does for a batch (`sync_note.load_many`: read, hash,
parse, term counts, admission and entity preparation, Arrow rows) over the first N/2 source
notes and N/2 other notes of a vault, under valgrind's callgrind with counting switched on
for that call only, and prints the instructions in total and per note. With `--crossing`, the
count also holds the result's way to the applying process: pickled as a worker sends it and
unpickled as the applying process reads it back.

    python scripts/parse_instructions.py --vault BENCH_VAULT [--notes 300] [--crossing]

Needs valgrind on the PATH; the vault needs an index (run `vaultmind reindex` or a bench once).
Compare two versions of the code by running it from each checkout with PYTHONPATH set to it.
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path


def _note_paths(vault: Path, count: int) -> list[str]:
    def rel(paths: list[Path]) -> list[str]:
        return sorted(str(p.relative_to(vault)) for p in paths)

    sources = rel(list((vault / "sources").rglob("*.md")))[: count // 2]
    tops = {p: p.relative_to(vault).parts[0] for p in vault.rglob("*.md")}
    others = rel([p for p, top in tops.items() if top != "sources" and not top.startswith(".")])
    return sources + others[: count - len(sources)]


def _inner(vault: Path, count: int, crossing: bool) -> None:
    from vaultmind.config import load_config
    from vaultmind.memory import Memory
    from vaultmind.sync_note import load_many

    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        preparers = memory.syncer._preparers()
    paths = _note_paths(vault, count)
    shas: list[str | None] = [None] * len(paths)
    pid = str(os.getpid())
    subprocess.run(["callgrind_control", "-i", "on", pid], check=True, capture_output=True)
    batch = load_many(vault, paths, config.max_file_bytes, config.chunk_tokens, shas, preparers, True)
    if crossing:
        pickle.loads(pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL))
    subprocess.run(["callgrind_control", "-i", "off", pid], check=True, capture_output=True)
    print(f"notes {len(paths)}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--crossing", action="store_true", help="count pickling the result and reading it back")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        _inner(args.vault, args.notes, args.crossing)
        return
    cmd = [
        "valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=/dev/null",
        sys.executable, __file__, "--inner", "--vault", str(args.vault), "--notes", str(args.notes),
        *(["--crossing"] if args.crossing else []),
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    found = re.search(r"Collected : (\d+)", done.stderr)
    notes = re.search(r"notes (\d+)", done.stderr)
    if done.returncode != 0 or found is None or notes is None:
        sys.exit(f"the measurement failed:\n{done.stderr[-2000:]}")
    total, n = int(found.group(1)), int(notes.group(1))
    print(f"{total} instructions, {total // max(n, 1)} per note ({n} notes)")


if __name__ == "__main__":
    main()
