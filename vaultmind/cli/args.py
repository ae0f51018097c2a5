"""Arguments every command shares, defined once."""

from __future__ import annotations

import argparse
from pathlib import Path


def vault_args(p: argparse.ArgumentParser, *, json_flag: bool = True) -> None:
    """`--vault PATH` (default: $VAULTMIND_VAULT, else the vault the current folder is in) and `--json`."""
    p.add_argument(
        "--vault",
        type=Path,
        default=None,
        help="vault folder (default: $VAULTMIND_VAULT, else the vault the current folder is in)",
    )
    if json_flag:
        p.add_argument("--json", action="store_true", help="print JSON")
