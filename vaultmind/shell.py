"""A vaultmind command line as a message shows it for the user to copy and run."""

from __future__ import annotations

import shlex
from pathlib import Path


def command_line(*words: str | Path, vault: Path | None = None) -> str:
    """`vaultmind WORDS…`, each word quoted for a POSIX shell where it needs it: a vault at
    `~/My Notes` or an entity named "Alice Chen" stays one argument when the line is pasted.
    `vault`: `--vault VAULT` follows the words (without it, the line runs on the vault of the
    current folder: for a layer that may not know which vault it serves)."""
    at = ("--vault", vault) if vault is not None else ()
    return " ".join(["vaultmind", *(shlex.quote(str(word)) for word in (*words, *at))])
