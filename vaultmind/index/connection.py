"""Connect to the index file: every connection's settings, and a wait while another process
holds the file for a moment (DuckDB allows one read-write process per file). On import, a
finder spares DuckDB's client its searches for dataframe libraries that are not installed."""

from __future__ import annotations

import collections
import importlib.util
import json
import os
import re
import sys
import threading
import time
import weakref
from collections.abc import Collection
from contextlib import suppress
from pathlib import Path

import duckdb

from vaultmind.errors import IndexBusy
from vaultmind.index.part_files import part_path, remove_dead_parts
from vaultmind.index.pool import MEMORY_LIMIT, limit_setting

BUSY_WAIT_S = 10.0  # another CLI call may hold the file for a moment; wait rather than fail
# how long a process that closed its connection waits to open the file again (`reconnect`: a
# compaction, a reopen after a rebuild): another process (a command run without the daemon) may
# take it in that moment. Longer than a command waits, but not for long: the wait holds the index
# lock, and a failed open is retried in the background (`reopening.py`), so requests get a clear
# error instead of waiting minutes
REOPEN_WAIT_S = 30.0
# how long a wait for the file goes on, at most, while its holder says it lets the file go to this
# process once its call ends (`HeldMemory`: `vaultmind mcp`, whose first call, opening and
# loading the index, takes 7-18 s at 10k notes on a loaded machine)
HANDOVER_WAIT_S = 120.0
# Rows of each row group of the index file (DuckDB's default is 122,880). A transaction holds
# the row group each table is filling in memory until it is full and written; a whole-vault
# load fills several tables at once, and at 50k notes the full default groups of `leaves` and
# `admission` held together were its peak (~170 MiB). A group of 16,384 rows holds an eighth
# of that. DuckDB does not keep the size in the file: each open sets it (`open_index`), and a
# checkpoint under another size would merge the groups into groups of that size.
ROW_GROUP_ROWS = 16_384
INDEX_CATALOG = "vaultmind"  # the name the index file is attached under


class _Absent:
    """A finder that says at once that a module is not installed (see below)."""

    def __init__(self, names: frozenset[str]):
        self.names = names

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


def _skip_absent_dataframe_libraries() -> None:
    """DuckDB's client tries `import pandas` / `import polars` for every element of a list
    parameter; when they are not installed each failed import searches the whole path again
    (a list of 2,000 paths cost 600 ms instead of 65). A finder in front answers "not
    installed" at once for the ones that are absent now."""
    absent = frozenset(n for n in ("pandas", "polars") if n not in sys.modules and importlib.util.find_spec(n) is None)
    if absent and not any(isinstance(f, _Absent) for f in sys.meta_path):
        sys.meta_path.insert(0, _Absent(absent))


_skip_absent_dataframe_libraries()


def session(con: duckdb.DuckDBPyConnection) -> None:
    """Settings of every connection: no progress bar, and Arrow tables found by name in any
    calling frame (`arrow.execute_with`), not only in the one that calls `execute` — a wrapped
    connection (a test's, a tracer's) calls it from a frame of its own."""
    con.execute("SET enable_progress_bar = false")
    con.execute("SET python_scan_all_frames = true")


def connect(path: Path, wait_s: float = BUSY_WAIT_S) -> duckdb.DuckDBPyConnection:
    """Connect, waiting up to `wait_s` while another process holds the file briefly; one that
    holds it between calls (`vaultmind mcp`: `held_memory.HeldMemory`) is asked to let it go
    (`ask_for_file`), and does within a moment, or once the call it runs ends: while it says so
    (`promised_by`), the wait goes on, up to `HANDOVER_WAIT_S` in all, said once on stderr, and
    for `wait_s` more once it no longer does (the file let go, taken by another process that
    waited too). The request is withdrawn once the wait ends, the file had or not: left, it
    would ask a holder for a file nobody waits for. A single try (`wait_s` 0: the background
    retries of `reopening`, a try each) leaves it, for its next try to find the file let go."""
    started = time.monotonic()
    deadline = started + wait_s
    delay = 0.02
    asked: str | None = None  # this wait's latest request
    said = False  # the wait for a holder's call was said
    try:
        while True:
            try:
                con = open_index(path)
                try:
                    session(con)
                    con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
                except BaseException:
                    close_index(con)
                    raise
                drop_dead_promise(path)
                return con
            except duckdb.Error as exc:
                if attached_here(exc):  # not the file's fault: never taken for a broken one
                    if "being detached" not in str(exc) or time.monotonic() + delay > deadline:
                        raise IndexBusy(
                            "the index is already open in this process through another DuckDB connection",
                            path=path,
                            hint="close that connection to the index file (DuckDB attaches a file once per process)",
                        ) from exc
                    time.sleep(delay)  # (a file another thread detaches is let go in a moment)
                    delay = min(delay * 2, 0.5)
                    continue
                if not is_lock_error(exc):
                    raise
                asked = ask_for_file(path)  # at each try: a holder takes a request away with the file it lets go
                if wait_s > 0 and (holder := promised_by(path, lock_holder(exc))) is not None:
                    deadline = max(deadline, min(started + HANDOVER_WAIT_S, time.monotonic() + wait_s))
                    if not said:
                        said = True
                        print(
                            f"vaultmind: waiting for {holder[1]} (pid {holder[0]}) to finish a call and let the index go "
                            f"(up to {HANDOVER_WAIT_S:g} s)…",
                            file=sys.stderr,
                            flush=True,
                        )
                if time.monotonic() + delay > deadline:
                    raise IndexBusy(
                        "the index is in use by another vaultmind process",
                        path=path,
                        hint="stop it, or run `vaultmind` commands while the daemon is up so they go through it",
                    ) from exc
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
    finally:
        if asked is not None and wait_s > 0 and request_for_file(path) == asked:  # (another's, written since, stays)
            with suppress(OSError):
                wanted_path(path).unlink()


class _Database:
    """An index file attached in this process (`open_index`): the connection it is attached
    through, never handed out, and how many connections to it are open."""

    def __init__(self, root: duckdb.DuckDBPyConnection):
        self.root = root
        self.open = 0


_databases: dict[str, _Database] = {}  # by the file's real path (`_key`)
# each connection handed out (by its id), to the call that lets its file go (`weakref.finalize`:
# run by `close_index`, or by the collector when a connection is dropped unclosed)
_handed: dict[int, weakref.finalize[[str, int], duckdb.DuckDBPyConnection]] = {}
_databases_lock = threading.Lock()
_dropped: collections.deque[str] = collections.deque()  # files of connections let go, to count off (`_count_off`)


def _key(path: Path) -> str:
    """The file's key in `_databases`: its real path. DuckDB knows the file reached through a
    linked folder as the one already attached, and refuses a second attachment of it."""
    return os.path.realpath(path)


def open_index(path: Path) -> duckdb.DuckDBPyConnection:
    """A connection whose database is the index file, attached with its row group size
    (`ROW_GROUP_ROWS`): `duckdb.connect(path)` cannot set it. As with `duckdb.connect`, the
    file is attached once per process: a second open of it gets a connection of its own to
    the same database (DuckDB refuses to attach a file twice), and the file is let go when
    the last is closed (`close_index`) or dropped. Spill files go beside the index, as they
    would for a file opened by `duckdb.connect` (an in-memory database's go to the working
    directory)."""
    key = _key(path)
    try:
        with _databases_lock:
            database = _databases.get(key)
            if database is None:
                database = _Database(_attached(path))
                _databases[key] = database
            database.open += 1  # before the cursor: a collection meanwhile cannot let the file go
            try:
                con = database.root.cursor()
                con.execute(f"USE {INDEX_CATALOG}")
            except BaseException:
                _dropped.append(key)
                raise
            let_go = _handed[id(con)] = weakref.finalize(con, _let_go, key, id(con))
            let_go.atexit = False  # (at exit the process lets its files go as it did without)
    finally:
        _count_off()
    return con


def close_index(con: duckdb.DuckDBPyConnection) -> None:
    """Close a connection to the index (any: one `open_index` gave, or an in-memory one); the
    last one open to a file detaches it, which checkpoints it and lets the file go."""
    let_go = _handed.get(id(con))
    try:
        con.close()
    finally:
        if let_go is not None and (held := let_go.peek()) is not None and held[0] is con:
            let_go()


def _let_go(key: str, handed: int) -> None:
    """The connection `handed` (its id) to the file `key` closed or collected. Counted off
    at once when the registry is free; else by whoever holds it, once done (a collection can
    run inside `open_index`, on the thread holding the lock)."""
    _handed.pop(handed, None)
    _dropped.append(key)
    _count_off()


def _count_off() -> None:
    """Count off the connections let go (`_dropped`); a file none is left open to is detached.
    Tried again after each use of the lock, so one let go meanwhile is never left waiting."""
    while _dropped and _databases_lock.acquire(blocking=False):
        try:
            while _dropped:
                key = _dropped.popleft()
                database = _databases.get(key)
                if database is not None:
                    database.open -= 1
                    if database.open == 0:
                        del _databases[key]
                        database.root.close()
        finally:
            _databases_lock.release()


def other_connection(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Another connection to the database of `con`, with a transaction of its own, on the same
    catalog: a bare `cursor()` of an index's connection starts on the process's in-memory one."""
    (catalog,) = con.execute("SELECT current_database()").fetchone() or ("memory",)
    other = con.cursor()
    other.execute(f'USE "{catalog}"')
    return other


def _attached(path: Path) -> duckdb.DuckDBPyConnection:
    root = duckdb.connect(":memory:")
    try:
        root.execute(f"ATTACH '{quoted(path)}' AS {INDEX_CATALOG} (ROW_GROUP_SIZE {ROW_GROUP_ROWS})")
        root.execute(f"SET temp_directory = '{quoted(Path(f'{path}.tmp'))}'")
    except BaseException:
        root.close()
        raise
    return root


def quoted(path: Path) -> str:
    """`path` inside a single-quoted SQL string."""
    return str(path).replace("'", "''")


def wanted_path(path: Path) -> Path:
    """The file a process that waits for the index writes beside it: a process that only keeps
    the index open between calls (`HeldMemory`) sees it and closes the index."""
    return path.with_name(path.name + ".wanted")


def ask_for_file(path: Path) -> str | None:
    """Ask the process holding the index to let it go, if it only keeps it between calls. Each
    request differs from every other (this process, this moment), so a holder tells a new one
    from one already there when it opened the file by its text, not by a time a network file
    system's clock or a coarse modification time would blur. The request written; None when the
    folder cannot be written (not asked: the wait goes on as before)."""
    request = f"{os.getpid()} {time.time_ns()}\n"
    try:
        wanted_path(path).write_text(request, encoding="utf-8")
    except OSError:
        return None
    return request


def request_for_file(path: Path) -> str | None:
    """The request for the index's file standing now (`ask_for_file`), None when there is none."""
    try:
        return wanted_path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def promised_path(path: Path) -> Path:
    """The file a holder that lets the index go after the call it runs writes beside it
    (`promise_file`), naming the processes whose requests it has seen."""
    return path.with_name(path.name + ".promised")


def promise_file(path: Path, who: str, waiters: Collection[int]) -> None:
    """Say, as the holder of the index (`who`: "vaultmind mcp"), that it lets the file go once
    its call ends to the processes `waiters` (the pids of the requests it saw)."""
    record = {"pid": os.getpid(), "who": who, "waiters": sorted(waiters)}
    part = part_path(promised_path(path))  # (two holders promising at once: each moves its own)
    try:
        part.write_text(json.dumps(record), encoding="utf-8")
        os.replace(part, promised_path(path))
    except OSError:
        part.unlink(missing_ok=True)  # (a folder that cannot be written: the waiter waits as long as before)


def withdraw_promise(path: Path) -> None:
    with suppress(OSError):
        promised_path(path).unlink()


def promised_by(path: Path, holder: int | None = None) -> tuple[int, str] | None:
    """The holder (pid, what it is) that said it lets the file go to this process after its
    call, while it runs; None when none did (a daemon, a command: the wait stays `BUSY_WAIT_S`).
    `holder`: the process holding the file, as DuckDB's lock error names it (`lock_holder`); a
    promise from any other is not believed: one made by a server whose call waited for the file
    itself, one left by a server killed mid-call whose pid another process has since."""
    record = _promise(path)
    if record is None:
        return None
    pid, who, waiters = record
    if os.getpid() not in waiters or pid == os.getpid() or (holder is not None and pid != holder):
        return None
    return pid, who


def drop_dead_promise(path: Path) -> None:
    """Delete the promise beside the index when the process that made it is gone (a server
    killed mid-call, SIGKILL: it never took it back), and the part file of one killed while it
    wrote it. Left, they would stay beside the index for good, the promise believed by nobody
    (`promised_by`) but read at every wait."""
    if promised_path(path).exists():
        _promise(path)
    remove_dead_parts(promised_path(path), shared=[f"{path.name}.promised.tmp"])


def _promise(path: Path) -> tuple[int, str, set[int]] | None:
    """The promise beside the index (its maker's pid, what it is, the pids it was made to),
    while its maker runs; None when there is none or it cannot be read, and when its maker is
    gone (the promise is then deleted, unless another has been moved in its place since)."""
    from vaultmind.client import alive

    try:
        with promised_path(path).open(encoding="utf-8") as file:  # (closed before it is deleted: Windows)
            read = os.fstat(file.fileno())
            record = json.loads(file.read())
        pid, who, waiters = int(record["pid"]), str(record["who"]), {int(w) for w in record["waiters"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if pid != os.getpid() and not alive(pid):
        with suppress(OSError):
            if os.path.samestat(read, promised_path(path).stat()):  # (each promise is moved in as a file of its own)
                promised_path(path).unlink()
        return None
    return pid, who, waiters


_LOCK_HOLDER = re.compile(r"\(PID (\d+)\)")


def lock_holder(exc: BaseException) -> int | None:
    """The pid of the process holding the file, as DuckDB's lock error names it ("Conflicting
    lock is held in /usr/bin/python3 (PID 1234)"); None where it names none."""
    found = _LOCK_HOLDER.search(str(exc))
    return int(found.group(1)) if found else None


def waiter_of(request: str) -> int | None:
    """The pid of the process that wrote `request` (`ask_for_file`: "pid time")."""
    head = request.split(" ", 1)[0].strip()
    return int(head) if head.isdigit() else None


def attached_here(exc: BaseException) -> bool:
    """Whether `exc` is DuckDB refusing the file because it is attached in this process already,
    outside `open_index` (a plain `duckdb.connect` of it), or is being detached ("Unique file
    handle conflict"): the file is sound, and is neither moved aside nor rebuilt."""
    return "unique file handle conflict" in str(exc).lower()


def is_lock_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "lock" in text and ("conflicting" in text or "could not set lock" in text)


# the settings a process may have changed on the index's connection, set again on a connection
# that replaces it (a new database: DuckDB's defaults otherwise) — the serving pool's allocator
# settings (`ServingPool.serve`) among them, which give freed memory back to the system
CARRIED_SETTINGS = ("memory_limit", "threads", "allocator_flush_threshold", "allocator_background_threads")
_SIZE_SETTINGS = frozenset({"memory_limit", "allocator_flush_threshold"})


def settings_of(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The connection's `CARRIED_SETTINGS` as values to set again (`apply_settings`; sizes as
    DuckDB shows them are cut to 0.1 MiB: `limit_setting`)."""
    shown = con.execute(f"SELECT {', '.join(f'current_setting({name!r})' for name in CARRIED_SETTINGS)}").fetchone()
    values = dict(zip(CARRIED_SETTINGS, (str(v) for v in shown or ()), strict=True))
    return {name: limit_setting(v) if name in _SIZE_SETTINGS else v for name, v in values.items()}


def apply_settings(con: duckdb.DuckDBPyConnection, settings: dict[str, str]) -> None:
    """Each of `settings` set on `con`, as far as DuckDB lets it (a memory limit below what is
    pinned fails: the pool stays as it is)."""
    for name, value in settings.items():
        with suppress(duckdb.Error):
            con.execute(f"SET {name} = '{value}'")


def reconnect(path: Path, settings: dict[str, str], wait_s: float = REOPEN_WAIT_S) -> duckdb.DuckDBPyConnection:
    """A new connection to `path` with a closed one's `settings` (`settings_of`)."""
    con = connect(path, wait_s=wait_s)
    apply_settings(con, settings)
    return con
