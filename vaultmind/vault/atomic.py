"""Atomic file writes: a reader sees the old bytes or the new bytes, never half a file.

The data goes to a temporary file next to the target, is fsynced, then moved into place:
`os.replace` when overwriting is allowed, `os.link` when it is not (a hard link fails if the
target exists, so a file created concurrently by the user, a sync tool or git is never
clobbered). The folder is fsynced afterwards so the new name survives a crash.

Temporary files are hidden and end in `TEMP_SUFFIX` (`is_temp_name`), not `.md`: the scanner
and the watcher, which take notes only, never index them. One a crash left behind is removed by
the next whole-vault sync (a `sync`, the daemon's start and reconciles: `remove_stale_temps`)
once it is `STALE_TEMP_S` old; only a name of exactly `temp_name`'s form is ever removed.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import secrets
import stat
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from vaultmind.errors import RefuseToClobber, VaultError
from vaultmind.vault.layout import utf8_prefix

log = logging.getLogger(__name__)

TEMP_SUFFIX = ".vaultmind-tmp"
_TEMP_NAME = re.compile(r"\..*\.[0-9a-f]{12}" + re.escape(TEMP_SUFFIX), re.DOTALL)  # `temp_name`'s form
STALE_TEMP_S = 60.0  # a temporary file older than this is no write's in progress: a crash left it

# Errors meaning "this file system cannot hard-link" (FAT/exFAT, some network and FUSE mounts).
_NO_LINK_ERRNOS = frozenset(
    code
    for code in (
        errno.EPERM,
        errno.EACCES,
        errno.EXDEV,
        errno.EMLINK,
        getattr(errno, "ENOTSUP", None),
        getattr(errno, "EOPNOTSUPP", None),
        getattr(errno, "ENOSYS", None),
    )
    if code is not None
)


def make_folders(folder: Path) -> None:
    """`folder` and the folders above it that are missing, like `mkdir(parents=True,
    exist_ok=True)` but one level after the other: pathlib recurses once per missing level,
    and a tree deeper than about 990 folders (an ingested folder mirrored below `sources/`)
    hit Python's recursion limit."""
    missing: list[Path] = []
    while not folder.is_dir():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            path.mkdir()
        if not path.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))


def is_temp_name(name: str) -> bool:
    """True for the temporary files `write_atomic` creates (and may leave behind after a crash):
    `.{name}.{12 lowercase hex}.vaultmind-tmp`, nothing looser."""
    return _TEMP_NAME.fullmatch(name) is not None


def remove_stale_temps(vault: Path, rels: Iterable[str], *, now: float | None = None) -> list[str]:
    """Remove the temporary files among `rels` (vault-relative) that a crash left: a regular
    file (never a symlink) with `is_temp_name`'s name, last written over `STALE_TEMP_S` ago
    (a younger one may be a write in progress, another process's). The paths removed."""
    now = time.time() if now is None else now
    removed = []
    for rel in rels:
        path = vault / rel
        try:
            st = path.lstat()
            if not (is_temp_name(path.name) and stat.S_ISREG(st.st_mode) and now - st.st_mtime > STALE_TEMP_S):
                continue
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:  # a read-only folder: left, said
            log.warning("could not remove %s, a temporary file left by an interrupted write: %s", rel, exc.strerror)
            continue
        removed.append(rel)
    return removed


NAME_MAX_BYTES = 255  # the longest file name (in UTF-8 bytes) common file systems hold


def temp_name(name: str) -> str:
    """The name of a temporary file for writing `name`: `.{name}.{12 hex}.vaultmind-tmp`, with
    `name` cut (at a character) so the whole fits in `NAME_MAX_BYTES`: a target whose own name
    fits can always be written."""
    tail = f".{secrets.token_hex(6)}{TEMP_SUFFIX}"
    room = NAME_MAX_BYTES - 1 - len(tail)
    return f".{utf8_prefix(name, room)}{tail}"


class ChangedOnDisk(RefuseToClobber):
    """The file to replace no longer holds the bytes it was read with (`write_atomic`'s `expect`)."""


def write_atomic(
    path: str | Path, data: bytes, *, overwrite: bool, mode: int = 0o666, expect: bytes | None = None
) -> None:
    """Write `data` to `path` atomically and durably.

    With `overwrite=False` an existing target (file, folder or symlink, even a dangling one)
    raises `RefuseToClobber` and is left untouched. With `expect` (and `overwrite`), the target
    is replaced only while it holds those bytes, read once the new ones are on disk, just
    before the rename (an editor's save during the write is not lost: `ChangedOnDisk`, the
    target left). `mode` is applied to a newly created file (filtered by the umask); pass
    0o600 for owner-only files. The parent folder must exist.
    """
    target = Path(path)
    folder = target.parent
    if not overwrite and os.path.lexists(target):
        raise _clobber(target)
    temp = folder / temp_name(target.name)
    try:
        _write_new(temp, data, mode)
        if overwrite:
            if expect is not None and _held(target) != expect:
                raise ChangedOnDisk(f"{target.name} changed on disk before it was written", path=target)
            os.replace(temp, target)
        else:
            _link_new(temp, target, data, mode)
    except FileNotFoundError as exc:
        raise VaultError("cannot write: the folder does not exist", path=folder) from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    fsync_dir(folder)


def _held(path: Path) -> bytes | None:
    """The bytes of the file at `path`; None when there is none."""
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None


def fsync_dir(folder: str | Path) -> None:
    """Make renames and new names in `folder` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # e.g. Windows: folders cannot be opened; NTFS journals the rename itself
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on folders; the data itself is already synced
    finally:
        os.close(fd)


def _write_new(path: Path, data: bytes, mode: int) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, mode)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)


def _link_new(temp: Path, target: Path, data: bytes, mode: int) -> None:
    """Give `temp`'s content the name `target`, failing if `target` exists."""
    try:
        os.link(temp, target)  # the source is our own regular file
    except FileExistsError as exc:
        raise _clobber(target) from exc
    except OSError as exc:
        if exc.errno not in _NO_LINK_ERRNOS:
            raise
        # No hard links here: create the target exclusively and write it in place. Still never
        # clobbers; a crash mid-write can leave a short file, which the body hash reveals.
        try:
            _write_new(target, data, mode)
        except FileExistsError as exc2:
            raise _clobber(target) from exc2


def _clobber(target: Path) -> RefuseToClobber:
    return RefuseToClobber(
        "already exists; vaultmind does not overwrite it",
        path=target,
        hint="move it aside or remove it if you want vaultmind to write this file",
    )


@contextlib.contextmanager
def folder_locked(folder: Path) -> Iterator[None]:
    """An exclusive lock on `folder` (the folder itself: no file to leave behind) for the
    block, waited for: two processes updating one file in it (read, changed, written whole)
    take turns; none where there is no such lock (Windows) or no folder yet."""
    if sys.platform == "win32" or not folder.is_dir():
        yield
        return
    import fcntl

    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
