"""A vaultmind command line as a message shows it for the user to copy and run."""

from __future__ import annotations

import shlex
from pathlib import Path


def command_line(*words: str | Path) -> str:
    """`vaultmind WORDS…`, each word quoted for a POSIX shell where it needs it: a vault at
    `~/My Notes` or an entity named "Alice Chen" stays one argument when the line is pasted."""
    return " ".join(["vaultmind", *(shlex.quote(str(word)) for word in words)])
