"""Part files: a file beside the index (a snapshot, a handover promise) is written whole under
a name of its writer's own (`<name>.<pid>.part`) and then moved over its name, so a reader finds
the old file or the new one whole, and two processes writing at once never write into, or move,
each other's part. A writer killed before the move (SIGKILL, a power cut) leaves its part, which
no later write takes: the next writer, or the next process that opens the index, deletes it.
"""

from __future__ import annotations

import contextlib
import glob
import os
from collections.abc import Sequence
from pathlib import Path


def part_path(path: Path) -> Path:
    """The name this process writes `path` under before moving it over `path`."""
    return path.with_name(f"{path.name}.{os.getpid()}.part")


def remove_dead_parts(path: Path, shared: Sequence[str] = ()) -> None:
    """Delete the part files of `path` whose writer is gone, and those under the names every
    writer shared before (`shared`, beside `path`: `<name>.part` of a snapshot)."""
    from vaultmind.client import alive

    for name in shared:
        with contextlib.suppress(OSError):
            path.with_name(name).unlink()
    for part in path.parent.glob(f"{glob.escape(path.name)}.*.part"):
        writer = part.name[len(path.name) + 1 : -len(".part")]
        if writer.isdigit() and not alive(int(writer)):
            with contextlib.suppress(OSError):
                part.unlink()
