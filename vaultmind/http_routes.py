"""The daemon's loopback API's routes: what each takes and answers (`http_api` serves them).

    GET  /v1/health            liveness (its query ignored): pid, vault, ready (false while the daemon starts up),
                               loading (a whole-vault load is running: other answers wait for it),
                               doing (while it starts: what it does, "reading the vault's notes 1,200/50,000")
    GET  /v1/status            same JSON as `vaultmind status --json` (a quarantine's notice is
                               left for the user's `vaultmind status`, which sends ?notice=take)
    POST /v1/search            {"query": str, "limit": int?} → {hits, total, truncated}
    POST /v1/query             {"mode": str, "args": {…}} → any memory_tree mode (retrieval/dispatch.py)
    POST /v1/sync              {"paths": [str]?} → sync stats (all when no paths: and the counts;
                               with paths: and `missing`, those not in the vault)
    POST /v1/reindex           full rebuild → sync stats and the counts (`notes`, `chunks` = `leaves`)
    POST /v1/compact           the index file copied into a new one (index/compact.py) → its size
                               before and after, the rows copied by table

Also /v1/entities, /v1/tree, /v1/flush, /v1/explain, /v1/queue and /v1/queue/retry (their
modules' routes; docs/architecture.md lists them all). A route is a function of the `Memory`
and the request's keys (a POST's body, a GET's query), each checked here (`KEYS`): its answer is
the response's JSON, its `VaultmindError` the error the server answers with.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from vaultmind.errors import UsageError
from vaultmind.http_joined import Joined
from vaultmind.memory import Memory
from vaultmind.model import SyncStats

log = logging.getLogger(__name__)

Route = Callable[[Memory, dict[str, Any]], Any]
OnBatch = Callable[[str, SyncStats], None]  # what applied changes to the index, and its stats


def _search(memory: Memory, body: dict[str, Any]) -> Any:
    """`{"query", "limit"?}`: the `search` mode, its arguments checked as `/v1/query` checks them."""
    return memory.query("search", body)


# The keys each route takes (a POST's body's, a GET's query's), and what to say of another: every
# other key is refused, naming it (`refuse_stray_keys`). A misspelt one read as absent did the
# widest thing: `{"jobid": 2}` retried every failed job, `{"pathz": […]}` synced the whole vault.
KEYS: dict[tuple[str, str], tuple[frozenset[str], str | None]] = {
    ("GET", "/v1/health"): (frozenset(), None),
    ("GET", "/v1/status"): (frozenset({"notice"}), None),
    ("POST", "/v1/search"): (
        frozenset({"query", "limit"}),
        'send {"query": …, "limit"?: …}; /v1/query takes every mode with its arguments',
    ),
    ("POST", "/v1/query"): (
        frozenset({"mode", "args"}),
        'send {"mode": …, "args": {…}}; a mode\'s arguments go under "args"',
    ),
    ("POST", "/v1/sync"): (frozenset({"paths", "gone"}), None),
    ("POST", "/v1/reindex"): (frozenset(), None),
    ("POST", "/v1/compact"): (frozenset(), None),
    ("POST", "/v1/tree"): (frozenset({"tree"}), None),
    ("POST", "/v1/flush"): (frozenset({"all", "at", "max_stale"}), None),
    ("POST", "/v1/entities"): (frozenset({"action", "id", "kind", "limit"}), None),
    ("POST", "/v1/explain"): (frozenset({"leaf_id"}), None),
    ("GET", "/v1/queue"): (frozenset(), None),
    ("POST", "/v1/queue/retry"): (frozenset({"job_id", "failed", "deferred"}), None),
}


# Routes that read no key and so refuse none: the liveness probe, which monitors and browsers
# send with a cache-busting query (`/v1/health?_=1700000000`) and which does nothing a misspelt
# key could widen
QUERY_IGNORED = frozenset({("GET", "/v1/health")})


def read_only(query: dict[str, Any]) -> dict[str, Any]:
    """The query a HEAD is answered with: its GET's, less what would change what a later GET
    says (`notice=take` forgets a quarantine's notice, which a HEAD's answer, headers only,
    never shows)."""
    return {key: value for key, value in query.items() if key != "notice"}


def refuse_stray_keys(route: tuple[str, str], body: dict[str, Any]) -> None:
    """A UsageError naming the keys of `body` that `route` does not take (`KEYS`), if any
    (none for a route in `QUERY_IGNORED`)."""
    from vaultmind.retrieval.dispatch import refuse_stray

    if route in QUERY_IGNORED:
        return
    known, hint = KEYS.get(route, (frozenset(), None))
    takes = f"{route[0]} {route[1]} takes " + (", ".join(sorted(known)) if known else "no keys")
    refuse_stray(body, known, noun="key", where="in the request", hint=hint or takes)


def _sync(memory: Memory, body: dict[str, Any], on_batch: OnBatch | None = None) -> Any:
    """`{"paths"?, "gone"?}`: the paths given (as `ingest` hands its notes to a running daemon,
    with the places its renamed notes left as `gone`), or the whole vault; `on_batch` hears what
    was applied (the daemon logs it as a watcher's batch)."""
    paths, gone = body.get("paths"), body.get("gone", [])
    for key, value in (("paths", paths), ("gone", gone)):
        if (value is not None or key == "gone") and not (
            isinstance(value, list) and all(isinstance(p, str) for p in value)
        ):
            raise UsageError(f"{key!r} must be a list of vault-relative paths")
    if paths is None:
        stats = memory.sync()
        _heard(on_batch, "api sync", stats)
        return {**stats.to_dict(), **memory.counts()}
    # (the paths given that sync nothing, a typo or an ignored folder, are named: `Syncer.sync_paths`)
    stats = memory.sync_paths(
        [_vault_relative(memory, p) for p in paths], gone=[_vault_relative(memory, p) for p in gone]
    )
    _heard(on_batch, "api sync", stats)
    return stats.to_dict()


def _reindex(memory: Memory, body: dict[str, Any], on_batch: OnBatch | None = None) -> Any:
    stats = memory.reindex(reopen=True)  # (a serving process: what the load left in DuckDB let go of)
    _heard(on_batch, "api reindex", stats)
    return {**stats.to_dict(), **memory.counts()}


def _heard(on_batch: OnBatch | None, what: str, stats: SyncStats) -> None:
    """Tell `on_batch` of a batch already committed: its failure (a closed output, say) is
    logged, never answered as the request's, which would say the notes were not applied."""
    if on_batch is None:
        return
    try:
        on_batch(what, stats)
    except Exception:
        log.exception("reporting the %s batch failed (the batch is applied)", what)


def _vault_relative(memory: Memory, path: str) -> str:
    """`path` as a vault-relative POSIX path: an absolute one inside the vault is made relative;
    one outside it, one that climbs out with "..", or one with a NUL (no file has one) is an
    error (it would sync nothing)."""
    if "\x00" in path:
        raise UsageError(f"{path!r} holds a NUL character, which no file name has")
    if PurePosixPath(path).is_absolute():
        vault = memory.config.vault.as_posix()
        for candidate, root in ((os.path.normpath(path), vault), (os.path.realpath(path), os.path.realpath(vault))):
            try:  # as written, or through a symlink to the vault (~/vault, macOS /tmp)
                return PurePosixPath(candidate).relative_to(root).as_posix()
            except ValueError:
                continue
        raise UsageError(f"{path!r} is outside the vault {memory.config.vault}")
    inside = os.path.normpath(path)
    if inside == ".." or inside.startswith("../"):
        raise UsageError(f"{path!r} leaves the vault", hint="give paths relative to the vault's folder")
    return PurePosixPath(inside).as_posix()


def _query(memory: Memory, body: dict[str, Any]) -> Any:
    mode = body.get("mode")
    if not isinstance(mode, str):
        raise UsageError("'mode' must be a string")
    args = body.get("args")
    args = {} if args is None else args  # ([], 0, false are no object: refused)
    if not isinstance(args, dict):
        raise UsageError("'args' must be an object")
    return memory.query(mode, args)


# Routes a client polls (a status bar, a health check): answered without marking foreground work,
# so polling every second never holds background upkeep (NER, sealing) back for good.
PASSIVE = frozenset({("GET", "/v1/status"), ("GET", "/v1/health")})

ROUTES: dict[tuple[str, str], Route] = {
    # (`PASSIVE`; `?notice=take` from `vaultmind status`, the user's: a quarantine's notice is said once, to it)
    ("GET", "/v1/status"): lambda m, b: m.status(take_notice=b.get("notice") == "take"),
    ("POST", "/v1/search"): _search,
    ("POST", "/v1/query"): _query,
    ("POST", "/v1/sync"): _sync,
    ("POST", "/v1/reindex"): _reindex,
    ("POST", "/v1/compact"): lambda m, b: m.compact(),
}


def all_routes() -> dict[tuple[str, str], Route]:
    """The routes, but for the health check a daemon answers and the report of its syncs (`daemon_routes`)."""
    from vaultmind.entities.read import entities_request
    from vaultmind.queue.routes import ROUTES as QUEUE_ROUTES
    from vaultmind.tree.view import route_flush, route_tree

    routes = dict(ROUTES)
    routes.update(QUEUE_ROUTES)
    routes[("POST", "/v1/tree")] = route_tree
    routes[("POST", "/v1/flush")] = route_flush
    routes[("POST", "/v1/entities")] = lambda m, body: entities_request(m.index, body, vault_name=m.vault_name)
    return routes


def _health(memory: Memory, ready: bool, doing: Callable[[], str | None]) -> dict[str, Any]:
    return {
        "ok": True,
        "pid": os.getpid(),
        "vault": str(memory.config.vault),
        "ready": ready,
        "loading": memory.index.in_bulk,
        "compacting": memory.index.compacting,  # its steps done and in all while a compaction holds the index
        "doing": None if ready else doing(),  # while starting: what it does
    }


def daemon_routes(
    on_batch: OnBatch | None, ready: Callable[[], bool], doing: Callable[[], str | None]
) -> dict[tuple[str, str], Route]:
    """Every route, as a running daemon answers them: its syncs and reindexes told to
    `on_batch`, its health saying whether it is `ready` and, until then, what it is `doing`;
    a reindex, whole-vault sync or flush asked for while the same one runs joins it."""
    routes = all_routes()
    once = Joined()  # a repeated whole-vault request joins the one running (`http_joined`)
    flush = routes[("POST", "/v1/flush")]

    def sync(memory: Memory, body: dict[str, Any]) -> Any:
        if body.get("paths") is not None:  # a sync of some notes: cheap, and never the same twice
            return _sync(memory, body, on_batch)
        return once.run(("sync", json.dumps(body, sort_keys=True)), lambda: _sync(memory, body, on_batch))

    routes[("POST", "/v1/sync")] = sync
    routes[("POST", "/v1/reindex")] = lambda m, b: once.run("reindex", lambda: _reindex(m, b, on_batch))
    routes[("POST", "/v1/compact")] = lambda m, b: once.run("compact", m.compact)
    # (a flush as of another time is other work: its `at` is part of what it is; the command
    # line sends one only when `--at` gives it, so that its retries are the same flush)
    routes[("POST", "/v1/flush")] = lambda m, b: once.run(
        ("flush", json.dumps([b.get("all"), b.get("at"), b.get("max_stale")])), lambda: flush(m, b)
    )
    routes[("GET", "/v1/health")] = lambda m, b: _health(m, ready(), doing)
    return routes
