"""Opening the index file: connect, check it, bring its schema up to date — or, when it cannot
be opened, move it aside and open a fresh one (`quarantine.fresh_index`).

A file another vaultmind process holds is `IndexBusy` (the CLI then talks to the daemon), as is
one attached in this process outside `connection.open_index` (`connection.attached_here`), and a
sound file this user cannot write is its access error: none is a broken file, so none is moved. Anything else that stops the open (corrupt, cut short, a WAL that cannot be replayed,
written by an incompatible version) is: the next sync rebuilds the index from the vault. An
open Ctrl-C stopped (an upgrade's migration, say) leaves the file as it is, for the next open
to finish.
`store.Index.open` wraps what this returns.
"""

from __future__ import annotations

import logging
from contextlib import suppress
from pathlib import Path

import duckdb

from vaultmind.errors import IndexBusy, index_access_error
from vaultmind.index.compact import remove_stale_copy
from vaultmind.index.connection import close_index, connect, is_lock_error, session
from vaultmind.index.damage import TruncatedIndex, check_length, interrupted
from vaultmind.index.migrate import create_suspended_indexes, migrate, migrations_compatible
from vaultmind.index.quarantine import fresh_index
from vaultmind.model import Progress

log = logging.getLogger("vaultmind.index.store")  # where it logged before it moved here


def open_in_memory() -> duckdb.DuckDBPyConnection:
    """An in-memory index, its schema in place (tests, benchmarks)."""
    con = duckdb.connect(":memory:")
    session(con)
    migrate(con)
    return con


def open_file(path: Path, progress: Progress | None = None) -> tuple[duckdb.DuckDBPyConnection, str | None]:
    """The connection to the index at `path` (created if needed), and the notice of a broken
    file moved aside by this open (None when none was). `progress` hears an upgrade's
    migrations (`migrate`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    opened: duckdb.DuckDBPyConnection | None = None  # closed on any failure, before a file moves
    try:
        had_wal = Path(f"{path}.wal").exists()
        con = opened = connect(path)
        if not had_wal:
            check_length(con, path)
        if not migrations_compatible(con):
            close_index(con)
            fresh = fresh_index(path, "index was written by an incompatible version")
            return fresh.con, fresh.notice
        migrate(con, progress)
        create_suspended_indexes(con)
        remove_stale_copy(path)  # a compaction's, ended by a crash (the file is ours now)
        return con, None
    except BaseException as exc:
        if opened is not None:  # before the file moves: a connect to its path would reuse this one
            with suppress(duckdb.Error):
                close_index(opened)
        if isinstance(exc, IndexBusy) or not isinstance(exc, (duckdb.Error, OSError, TruncatedIndex)):
            raise
        if interrupted(exc):  # Ctrl-C stopped the open (an upgrade, say): the file is sound
            raise
        return _in_place_of_broken(path, exc)


def _in_place_of_broken(path: Path, exc: duckdb.Error | OSError | TruncatedIndex) -> tuple[duckdb.DuckDBPyConnection, str]:
    """A fresh index in the place of the file at `path` that failed to open with `exc` (moved
    aside), and the notice saying so; the error to say instead when the file is sound but held
    by another process, or one this user may not write."""
    if is_lock_error(exc):
        raise IndexBusy(
            "the index is in use by another vaultmind process",
            path=path,
            hint="stop it, or let the CLI talk to the running daemon",
        ) from exc
    denied = index_access_error(exc, path)
    if denied is not None:  # a sound index this user cannot write: not a broken one
        raise denied from exc
    log.warning("index %s could not be opened (%s); moving it aside", path, exc)
    fresh = fresh_index(path, f"index could not be opened ({first_line(exc)})")
    return fresh.con, fresh.notice


def first_line(exc: BaseException) -> str:
    """An error's first line, at most 160 characters (its type's name when it says nothing)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:160]
