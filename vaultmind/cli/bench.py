"""`vaultmind bench …`: performance benchmarks over a deterministic synthetic vault."""

from __future__ import annotations

import argparse
from typing import Any


def add_bench_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("bench", help="benchmarks over a synthetic vault (see docs/benchmarks.md)")
    p.set_defaults(handler=lambda args: (p.print_help(), 2)[1])
