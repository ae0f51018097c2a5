"""The daemon's loopback HTTP API (JSON over HTTP, bearer token per launch).

Routes (all require `Authorization: Bearer <token>`):
    GET  /v1/health            liveness: pid, vault, ready (false while the daemon starts up),
                               loading (a whole-vault load is running: other answers wait for it),
                               doing (while it starts: what it does, "reading the vault's notes 1,200/50,000")
    GET  /v1/status            same JSON as `vaultmind status --json` (a quarantine's notice is
                               left for the user's `vaultmind status`, which sends ?notice=take)
    POST /v1/search            {"query": str, "limit": int?} → {hits, total, truncated}
    POST /v1/query             {"mode": str, "args": {…}} → any memory_tree mode (retrieval/dispatch.py)
    POST /v1/sync              {"paths": [str]?} → sync stats (all when no paths: and the counts;
                               with paths: and `missing`, those not in the vault)
    POST /v1/reindex           full rebuild → sync stats and the counts (`notes`, `chunks` = `leaves`)

Also /v1/entities, /v1/tree, /v1/flush, /v1/explain, /v1/queue and /v1/queue/retry (their
modules' routes; docs/architecture.md lists them all).

Errors come back as `{"error": {"code", "message", "path", "hint"}}`: 400 for a wrong request,
401 (the hint names `daemon.json`, which holds the token), 404 (the hint lists the routes), 405 for
another method (the hint and `Allow` name the route's own methods; on a path no route has, the
API's: GET and POST), 413 for a body over `MAX_BODY`, 503 while the server stops (`ApiServer.stop`
waits for the requests being answered), 500 when vaultmind failed.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import parse_qsl

from vaultmind.config import CONFIG_RELPATH
from vaultmind.errors import (
    ConfigError,
    Internal,
    NotFound,
    Unauthorized,
    UsageError,
    VaultmindError,
    storage_error,
)
from vaultmind.ingest.document import MAX_DOCUMENT_BYTES
from vaultmind.memory import Memory
from vaultmind.model import SyncStats

log = logging.getLogger(__name__)

# A request body's limit: a document `ingest_document` takes (`MAX_DOCUMENT_BYTES`, as without a
# daemon) with its JSON escapes, and the paths an `ingest` of hundreds of thousands of notes hands over.
MAX_BODY = 2 * MAX_DOCUMENT_BYTES + (1 << 20)
_DRAIN_CHUNK = 1 << 16
# How long a stop waits for the requests being answered before the server closes (the daemon
# then closes the index: a request still running would fail on it).
STOP_WAIT_S = 30.0
# How long a connection may be silent while the server waits for the rest of a request (or the
# next request on a kept-alive connection); the time a route takes to answer is not bounded by it.
SOCKET_TIMEOUT_S = 60.0

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
    ("POST", "/v1/tree"): (frozenset({"tree"}), None),
    ("POST", "/v1/flush"): (frozenset({"all", "at", "max_stale"}), None),
    ("POST", "/v1/entities"): (frozenset({"action", "id", "kind", "limit"}), None),
    ("POST", "/v1/explain"): (frozenset({"leaf_id"}), None),
    ("GET", "/v1/queue"): (frozenset(), None),
    ("POST", "/v1/queue/retry"): (frozenset({"job_id", "failed", "deferred"}), None),
}


def refuse_stray_keys(route: tuple[str, str], body: dict[str, Any]) -> None:
    """A UsageError naming the keys of `body` that `route` does not take (`KEYS`), if any."""
    from vaultmind.retrieval.dispatch import refuse_stray

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
    stats = memory.reindex()
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
}


def _all_routes() -> dict[tuple[str, str], Route]:
    from vaultmind.entities.read import entities_request
    from vaultmind.queue.routes import ROUTES as QUEUE_ROUTES
    from vaultmind.tree.view import route_flush, route_tree

    routes = dict(ROUTES)
    routes.update(QUEUE_ROUTES)
    routes[("POST", "/v1/tree")] = route_tree
    routes[("POST", "/v1/flush")] = route_flush
    routes[("POST", "/v1/entities")] = lambda m, body: entities_request(m.index, body, vault_name=m.vault_name)
    return routes


class ApiServer:
    """A threaded loopback server in front of one `Memory`."""

    def __init__(
        self,
        memory: Memory,
        token: str,
        host: str = "127.0.0.1",
        port: int = 0,
        ready: Callable[[], bool] | None = None,
        on_batch: OnBatch | None = None,
        doing: Callable[[], str | None] | None = None,
    ):
        """`ready`: whether the daemon has finished starting (its first reconcile, and loading
        what queries read); `/v1/health` reports it, so clients know a first answer may be slow,
        and, until then, what the daemon is doing (`doing`: "reading the vault's notes 1,200/50,000").
        `on_batch`: told of every sync or reindex a request applied."""
        self.memory = memory
        self.requests = _Requests()
        handler = _make_handler(memory, token, ready or (lambda: True), on_batch, doing or (lambda: None), self.requests)
        host = host.strip().strip("[]")  # "[::1]" as a URL writes it
        try:
            self.httpd = (_Server6 if ":" in host else _Server)((host, port), handler)
        except OSError as exc:  # the port is taken, or not ours to take
            config = memory.config.vault / CONFIG_RELPATH
            raise ConfigError(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                path=config,
                hint=f"set [server] port (or host) in {config} to a free one, or port = 0 for any free port",
            ) from exc
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="vaultmind-api", daemon=True)

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def start(self) -> None:
        self.thread.start()

    def stop(self, *, give_up: threading.Event | None = None) -> None:
        """Stop: a request from now on is answered 503 (`stopping`), those being answered are
        waited for, up to `STOP_WAIT_S` (or until `give_up` is set: a second signal), then the server
        closes. Its owner closes the `Memory` after it: a request still running then fails (500)."""
        left = self.requests.drain(STOP_WAIT_S, give_up)
        if left:
            log.warning("api: %d request(s) still running; stopping without them", left)
        if self.thread.is_alive():  # (`shutdown` waits for a serving loop: forever if none started)
            self.httpd.shutdown()
        self.httpd.server_close()


class _Requests:
    """The requests being answered, and whether the server stops (then no new one is taken)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._running = 0
        self.stopping = False

    def enter(self) -> bool:
        """Count a request in; False (not counted) once the server stops."""
        with self._changed:
            if self.stopping:
                return False
            self._running += 1
            return True

    def leave(self) -> None:
        with self._changed:
            self._running -= 1
            self._changed.notify_all()

    def drain(self, wait_s: float, give_up: threading.Event | None) -> int:
        """Take no new request, and wait for those running (bounded); how many still run."""
        deadline = time.monotonic() + wait_s
        with self._changed:
            self.stopping = True
            while self._running and (left := deadline - time.monotonic()) > 0 and not (give_up and give_up.is_set()):
                self._changed.wait(min(left, 0.1))
            return self._running


def _health(memory: Memory, ready: bool, doing: Callable[[], str | None]) -> dict[str, Any]:
    return {
        "ok": True,
        "pid": os.getpid(),
        "vault": str(memory.config.vault),
        "ready": ready,
        "loading": memory.index.in_bulk,
        "doing": None if ready else doing(),  # while starting: what it does
    }


class _TooLarge(UsageError):
    """A request body over `MAX_BODY` (answered 413)."""


class _Stopping(VaultmindError):
    """A request that came while the daemon stops (answered 503)."""

    code = "stopping"


class _LengthRequired(UsageError):
    """A body sent without a Content-Length (chunked): answered 411, never read as empty."""


def _error(exc: VaultmindError) -> dict[str, Any]:
    """The one error body every answer but 200 has: `{"error": {"code", "message", "path", "hint"}}`."""
    return {"error": exc.to_dict()}


class _Server(ThreadingHTTPServer):
    # Connections the kernel queues before the server accepts them: the default, 5, reset the
    # connections of a burst of agents' parallel calls (half of 320 requests from 64 clients).
    request_queue_size = 128


class _Server6(_Server):
    """The same on an IPv6 address ([server] host = "::1")."""

    address_family = socket.AF_INET6


def _make_handler(
    memory: Memory,
    token: str,
    ready: Callable[[], bool],
    on_batch: OnBatch | None,
    doing: Callable[[], str | None],
    requests: _Requests,
) -> type[BaseHTTPRequestHandler]:
    expected = f"Bearer {token}".encode()
    routes = _all_routes()
    routes[("POST", "/v1/sync")] = lambda m, b: _sync(m, b, on_batch)
    routes[("POST", "/v1/reindex")] = lambda m, b: _reindex(m, b, on_batch)
    routes[("GET", "/v1/health")] = lambda m, b: _health(m, ready(), doing)

    def allowed(path: str) -> list[str]:
        """The methods `path`'s routes take (none: no route has the path)."""
        return sorted(m for m, p in routes if p == path)

    class Handler(BaseHTTPRequestHandler):
        server_version = "vaultmind"
        timeout = SOCKET_TIMEOUT_S  # a client that stops sending mid-request frees its thread

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("api: " + format, *args)

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def _not_allowed(self) -> None:  # PUT, DELETE, …: no route takes them (BaseHTTPRequestHandler would answer with an HTML page)
            if not self._authorized():  # which routes exist is said to a client holding the token only
                return
            path = self.path.split("?", 1)[0]
            methods = allowed(path)
            hint = f"use {' or '.join(methods)} {path}" if methods else "use GET or POST"
            self._send(405, _error(UsageError(f"method {self.command} is not allowed", hint=hint)), allow=methods or ["GET", "POST"])

        do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = do_TRACE = do_CONNECT = _not_allowed

        def _handle(self, method: str) -> None:
            try:
                self._answer(method)
            except ConnectionError:  # the client gave up waiting (its timeout) and hung up
                log.debug("api: the client of %s %s left before its answer", method, self.path)
            except TimeoutError:  # it sent part of its request, then nothing for SOCKET_TIMEOUT_S
                log.debug("api: the client of %s %s stopped sending; its connection is closed", method, self.path)
                self.close_connection = True

        def _authorized(self) -> bool:
            """True for a request bearing the token; else it is answered 401 here."""
            given = (self.headers.get("Authorization") or "").encode()
            if hmac.compare_digest(given, expected):
                return True
            self._send(401, _error(Unauthorized(  # (no path: the caller has not shown it may know the vault)
                "missing or wrong bearer token",
                hint="send `Authorization: Bearer TOKEN` with the token in the vault's .vaultmind/daemon.json "
                "(a new one at every start of the daemon)",
            )))
            return False

        def _answer(self, method: str) -> None:
            if not self._authorized():
                return
            if not requests.enter():
                self.close_connection = True
                self._send(503, _error(_Stopping(
                    "the daemon is stopping", hint="run the command again in a moment: it then works without the daemon"
                )))
                return
            try:
                self._route(method)
            finally:
                requests.leave()

        def _route(self, method: str) -> None:
            route_path, _, query = self.path.partition("?")
            key = (method, route_path)
            route = routes.get(key)
            if route is None:
                self._no_route(method, key[1])
                return
            try:
                body = self._body() if method == "POST" else dict(parse_qsl(query))
                refuse_stray_keys(key, body)  # a key the route does not take is named, never read as absent
                if key in PASSIVE:
                    answer = route(memory, body)  # polled: never a reason for background work to wait
                else:
                    with memory.foreground():  # background upkeep pauses while a client waits
                        answer = route(memory, body)
                self._send(200, answer)
            except (ConnectionError, TimeoutError):  # the client hung up or went silent: nobody to tell (`_handle`)
                raise
            except _TooLarge as exc:
                self._send(413, _error(exc))
            except _LengthRequired as exc:
                self._send(411, _error(exc))
            except VaultmindError as exc:
                status = 400 if isinstance(exc, UsageError) else 404 if isinstance(exc, NotFound) else 500
                self._send(status, _error(exc))
            except Exception as exc:  # the API must answer, whatever broke
                storage = storage_error(exc)  # a full disk: said as the command line says it
                if storage is not None:
                    log.error("api route failed: %s (%s)", storage, exc)
                    self._send(500, _error(storage))
                    return
                log.exception("api route failed")
                self._send(500, _error(Internal(
                    f"{type(exc).__name__}: {exc}", hint="the daemon's output has the traceback; please report it"
                )))

        def _no_route(self, method: str, path: str) -> None:
            """404 for a path no route has; 405, naming the method it takes, for one asked with
            another method (`GET /v1/search` is not a missing route)."""
            methods = allowed(path)
            if methods:
                self._send(405, _error(UsageError(
                    f"{path} does not take {method}", hint=f"use {' or '.join(methods)} {path}"
                )), allow=methods)
                return
            listed = ", ".join(f"{m} {p}" for m, p in sorted(routes, key=lambda route: (route[1], route[0])))
            self._send(404, _error(NotFound(f"no route {method} {path}", hint=f"the routes are {listed}")))

        def _body(self) -> dict[str, Any]:
            if (self.headers.get("Transfer-Encoding") or "identity").strip().lower() != "identity":
                self.close_connection = True  # its chunks are left unread
                raise _LengthRequired(
                    "a request body must be sent with a Content-Length (not chunked)",
                    hint="send the JSON body whole, with its Content-Length header",
                )
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError as exc:
                raise UsageError("the Content-Length header is not a number") from exc
            if length < 0:
                self.close_connection = True
                raise UsageError(f"the Content-Length header is negative ({length})")
            if length > MAX_BODY:
                if length <= 2 * MAX_BODY:  # read (and dropped), so the client can finish sending and read the answer
                    left = length
                    while left > 0 and (chunk := self.rfile.read(min(left, _DRAIN_CHUNK))):
                        left -= len(chunk)
                else:
                    self.close_connection = True
                raise _TooLarge(
                    f"request body too large ({length:,} bytes; at most {MAX_BODY:,})",
                    hint=f"a document is at most {MAX_DOCUMENT_BYTES:,} bytes: split it; "
                    "or stop the daemon (`vaultmind stop`) and run the command without it",
                )
            raw = self.rfile.read(length) if length > 0 else b"{}"
            try:
                data = json.loads((raw or b"{}").decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise UsageError(f"request body is not UTF-8 (byte {exc.start})") from exc
            except ValueError as exc:  # not JSON, or JSON Python does not read (an integer of thousands of digits)
                raise UsageError(f"request body is not JSON: {exc}") from exc
            except RecursionError as exc:  # thousands of nested brackets
                raise UsageError("request body nests too deeply to be read") from exc
            if not isinstance(data, dict):
                raise UsageError("request body must be a JSON object")
            return data

        def _send(self, status: int, payload: Any, allow: list[str] | None = None) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode()
            self.send_response(status)
            if allow:
                self.send_header("Allow", ", ".join(allow))
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
