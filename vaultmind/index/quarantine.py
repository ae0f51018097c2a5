"""Move an index file that cannot be opened aside, to `.vaultmind/quarantine/`, and keep the
notice a later `status` reports."""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import NamedTuple

import duckdb

from vaultmind.errors import index_access_error
from vaultmind.index.connection import connect
from vaultmind.index.migrate import migrate
from vaultmind.index.salvage import salvage

QUARANTINE_DIR = "quarantine"
QUARANTINE_NOTICE = "notice.txt"  # the last quarantine's notice, until a status reports it
QUARANTINE_KEEP = 3  # quarantined copies kept


def quarantine(path: Path) -> Path:
    """Move the index file and its WAL aside; return where they went. Only the last
    `QUARANTINE_KEEP` copies are kept (at 50k notes each is about a gigabyte).

    A rename, never a copy left beside a file that stays: a file the system will not let go of
    (made immutable, guarded by macOS's privacy protection) was copied whole by each command
    that tried, and the copies were never pruned (`_move`). When a move fails, what was moved
    goes back (a WAL left behind would be replayed into the fresh index, or into the next
    open's after a Ctrl-C) and the error is raised: the access error when the file is refused
    to this user."""
    qdir = path.parent / QUARANTINE_DIR
    qdir.mkdir(parents=True, exist_ok=True)
    numbers = sorted(_copy_numbers(qdir, path))
    n = numbers[-1] + 1 if numbers else 1  # numbered on from the newest (older ones are gone)
    target = qdir / f"{path.stem}-{n}{path.suffix}"
    moved: list[tuple[Path, Path]] = []
    try:
        for suffix in ("", ".wal"):
            src, dst = Path(str(path) + suffix), Path(str(target) + suffix)
            if src.exists():
                _move(src, dst)
                moved.append((src, dst))
    except BaseException as exc:  # Ctrl-C too (a copy to another disk takes a while)
        for src, dst in reversed(moved):
            with suppress(OSError):
                _move(dst, src)
        denied = index_access_error(exc, path) if isinstance(exc, OSError) else None
        if denied is not None:
            raise denied from exc
        raise
    for old in [*numbers, n][:-QUARANTINE_KEEP]:
        for suffix in ("", ".wal"):
            with suppress(FileNotFoundError):
                (qdir / f"{path.stem}-{old}{path.suffix}{suffix}").unlink()
    return target


def _move(src: Path, dst: Path) -> None:
    """Rename `src` to `dst`; when `dst` is on another file system (a `quarantine/` folder linked
    to another disk, where a rename cannot go), copy it there and remove `src`. A file that
    cannot be removed (or a copy that fails) leaves no copy behind: the error is raised."""
    try:
        os.replace(src, dst)
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    try:
        shutil.copyfile(src, dst)
        src.unlink()
    except BaseException:
        with suppress(OSError):
            dst.unlink()
        raise


def _copy_numbers(qdir: Path, path: Path) -> Iterator[int]:
    """The numbers of the quarantined copies of `path` in `qdir` (`index-3.duckdb`: 3)."""
    prefix, suffix = f"{path.stem}-", path.suffix
    for copy in qdir.glob(f"{prefix}*{suffix}"):
        number = copy.name[len(prefix) : len(copy.name) - len(suffix)]
        if number.isdigit():
            yield int(number)


def keep_notice(path: Path, notice: str) -> str:
    """Write the quarantine's notice beside the copies, for the next `status` of any process
    (`take_quarantine_notice`): the command that moved the index may not be a status."""
    with suppress(OSError):
        (path.parent / QUARANTINE_DIR / QUARANTINE_NOTICE).write_text(notice + "\n", encoding="utf-8")
    return notice


def take_quarantine_notice(path: Path | None, *, keep: bool = False) -> str | None:
    """The notice of the last quarantine of the index at `path` not yet reported, and forget it
    (the user's status reports it once); `keep`: leave it for that status (a status bar's or
    `doctor`'s read, which the user may never see)."""
    if path is None:
        return None
    notice_file = path.parent / QUARANTINE_DIR / QUARANTINE_NOTICE
    try:
        notice = notice_file.read_text(encoding="utf-8").strip()
        if not keep:
            notice_file.unlink()
    except OSError:
        return None
    return notice or None


class Fresh(NamedTuple):
    """An empty index opened in the place of one moved aside."""

    con: duckdb.DuckDBPyConnection
    notice: str  # why, where the old file went, what was kept of it (`status` reports it)
    moved: Path  # where the old file went
    kept: str | None  # what was read back of it ("kept 48,210 embeddings from it"), None: nothing


def fresh_index(path: Path, reason: str) -> Fresh:
    """Move the index file at `path` aside and open an empty one in its place, holding what
    could be read back of the moved file's caches (`salvage`: vectors, NER results, LLM
    answers, which the rebuild then need not compute again); the notice says why, where the
    old one went and what was kept of it, and is kept for the next `status`."""
    moved = quarantine(path)
    con = connect(path)
    migrate(con)
    kept = salvage(moved, con).said()
    con.execute("CHECKPOINT")  # the copied rows in the file, the WAL empty (see `Index._checkpoint_row_groups`)
    notice = f"{reason}; moved to {moved}" + (f"; {kept}" if kept else "")
    return Fresh(con, keep_notice(path, notice), moved, kept)
