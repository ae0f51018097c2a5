"""Unnamed scratch files beside the index: derived data a serving process reads back by offset,
kept in the operating system's page cache (which can drop it under memory pressure) rather than
in the process's memory. Used for the leaf rows (`leaf_rows.LeafRowStore`) and the int8 vector rows
(`vector_scan.RowFile`)."""

from __future__ import annotations

import os
import tempfile
import weakref
from pathlib import Path


class ScratchFile:
    """An unnamed file in `folder` (the system's temporary folder when None or missing): created
    with `O_TMPFILE` where the system has it, so it is gone when closed or when the process ends,
    however it ends. Reads and writes are positional: threads share it without a lock."""

    def __init__(self, folder: Path | None, prefix: str):
        folder = folder if folder is not None and folder.is_dir() else None
        self._file = tempfile.TemporaryFile(prefix=prefix, dir=folder)  # noqa: SIM115 (open for its holder's life)
        self.fd = self._file.fileno()
        self.close = weakref.finalize(self, self._file.close)  # at the latest when dropped

    def write(self, offset: int, data: bytes | memoryview) -> None:
        """All of `data` at `offset`."""
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            done += os.pwrite(self.fd, view[done:], offset + done)

    def read_into(self, offset: int, buffer: memoryview) -> None:
        """Fill `buffer` from `offset`; OSError when the file ends first."""
        view = buffer.cast("B")
        done = 0
        while done < len(view):
            got = _read_into(self.fd, view[done:], offset + done)
            if got <= 0:
                raise OSError(f"scratch file ends at byte {offset + done}, {len(view) - done} bytes short")
            done += got

    def read(self, offset: int, size: int) -> bytes:
        """`size` bytes from `offset` (one `pread` unless the system returns fewer)."""
        data = os.pread(self.fd, size, offset)
        if len(data) < size:
            rest = bytearray(size - len(data))
            self.read_into(offset + len(data), memoryview(rest))
            data += rest
        return data

    def truncate(self) -> None:
        self._file.truncate(0)


def _pread_into(fd: int, view: memoryview, offset: int) -> int:
    data = os.pread(fd, len(view), offset)
    view[: len(data)] = data
    return len(data)


def _preadv_into(fd: int, view: memoryview, offset: int) -> int:
    return os.preadv(fd, [view], offset)


# `preadv` reads straight into the buffer; a system without it reads a copy
_read_into = _preadv_into if hasattr(os, "preadv") else _pread_into
