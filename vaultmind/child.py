"""How vaultmind starts a Python process that imports vaultmind (the NER child, the bench's
reindex and daemon): the interpreter running this process, with `-P` so that the working
directory — which `python -m` and `python -c` put first on the path — cannot hold another
`vaultmind` that the child would import instead, and the folder this copy of vaultmind was
imported from first on `PYTHONPATH`."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path


def python_command(*args: str) -> list[str]:
    """The command line of a Python child running `args` (`-m module …`, `-c code …`)."""
    return [sys.executable, "-P", *args]


def python_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this process's environment) with this vaultmind's folder first on
    `PYTHONPATH`."""
    env = dict(os.environ if base is None else base)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env
