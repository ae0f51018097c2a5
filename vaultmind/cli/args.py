"""Arguments every command shares, defined once."""

from __future__ import annotations

import argparse
from datetime import datetime
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


def positive_int(text: str) -> int:
    """An argparse type for counts (`--limit`, `--depth`, `--budget`): 0 or less is refused at
    once, naming the flag and the value, instead of deep in a mode under an API argument's name."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (e.g. 10)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} is not a positive whole number (e.g. 10)")
    return value


def question(text: str) -> str:
    """An argparse type for the text a query asks: blank is refused with an example of a question."""
    if not text.strip():
        raise argparse.ArgumentTypeError('the question is empty; ask something, e.g. "when did we move the launch?"')
    return text


def entity_name(text: str) -> str:
    """An argparse type for the name `query entities` looks up: blank is refused with an example."""
    if not text.strip():
        raise argparse.ArgumentTypeError('the name is empty; give a name, alias, email or handle, e.g. "Alice Chen"')
    return text


def iso_time(text: str) -> str:
    """An argparse type for an ISO 8601 date or time (`--at`), refused with examples of the forms
    it takes; the value goes on as given (a mode reads it)."""
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO 8601 date or time (e.g. 2024-03-12, 2024-03-12T09:30 or 2024-03-12T09:30+02:00)"
        ) from None
    return text
