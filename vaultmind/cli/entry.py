"""The `vaultmind` command's entry (the console script and `python -m vaultmind`): Ctrl-C at any
moment, including while the command's modules are still being imported (a second or so, before
the command line's own Ctrl-C handling is in place), ends with one line and exit 130, not a
traceback through whichever library was loading. Imports nothing heavy before that guard."""

from __future__ import annotations

import sys

from vaultmind.errors import INTERRUPTED


def run() -> int:
    """Run the command line; on Ctrl-C that reached no handler of its, say so and give 130."""
    try:
        from vaultmind.cli.main import main

        return main()
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130


def console() -> None:
    """The console script: `run`'s code as the process's exit status."""
    sys.exit(run())
