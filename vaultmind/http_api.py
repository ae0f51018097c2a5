"""The daemon's loopback HTTP API: JSON over HTTP, a bearer token per launch, one thread a request.

This module is the server: it reads a request, checks its token, its body and its keys, hands it
to its route (`http_routes`, which lists them all) and answers. Every route requires
`Authorization: Bearer <token>`.

Errors come back as `{"error": {"code", "message", "path", "hint"}}`: 400 for a wrong request,
401 (the hint names `daemon.json`, which holds the token), 404 (the hint lists the routes), 405 for
another method (the hint and `Allow` name the route's own methods; on a path no route has, the
API's: GET and POST; HEAD on a GET route or on a path no route has is answered as the GET, with its headers only), 413 for a body over `MAX_BODY`, 503 while the server stops (`ApiServer.stop`
waits for the requests being answered) and while the index could not be opened again after a
compaction (`index.reopening`), 500 when vaultmind failed.
"""

from __future__ import annotations

import hmac
import json
import logging
import select
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from vaultmind.config import CONFIG_RELPATH
from vaultmind.errors import (
    ConfigError,
    IndexUnavailable,
    Internal,
    NotFound,
    Unauthorized,
    UsageError,
    VaultmindError,
    storage_error,
)
from vaultmind.http_routes import PASSIVE, OnBatch, daemon_routes, read_only, refuse_stray_keys
from vaultmind.ingest.document import MAX_DOCUMENT_BYTES
from vaultmind.memory import Memory
from vaultmind.shared_answer import client_waits

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
# How long an answer given without reading the request's body (a refusal) reads the body first
# (`_drop_unread_body`): 82 MiB come over a loopback in well under a second
DRAIN_S = 30.0


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


class _TooLarge(UsageError):
    """A request body over `MAX_BODY` (answered 413)."""


class _Stopping(VaultmindError):
    """A request that came while the daemon stops (answered 503)."""

    code = "stopping"


class _LengthRequired(UsageError):
    """A body sent without a Content-Length (chunked): answered 411, never read as empty."""


def _drain_chunks(rfile: Any, limit: int, deadline: float) -> bool:
    """Read (and drop) a chunked body up to `limit` bytes, until `deadline` (`_drop_unread_body`);
    whether it was read to its end. A malformed, longer or slower body is left unread."""
    total = 0
    while time.monotonic() < deadline:
        line = rfile.readline(1024)
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            return False
        if size == 0:  # the trailer, up to its blank line
            while time.monotonic() < deadline:
                if rfile.readline(1024) in (b"\r\n", b"\n", b""):
                    return True
            return False
        total += size
        if size < 0 or total > limit or not _drain(rfile, size + 2, deadline):  # the chunk and its CRLF
            return False
    return False


def _drain(rfile: Any, length: int, deadline: float) -> bool:
    """Read (and drop) `length` bytes of a body, or up to its end, until `deadline`; whether it
    was read to its end (or the client's). `read1`: what has come, so a body trickled in is
    looked at against the deadline at each piece (`read` waits for the whole 64 KiB)."""
    while length > 0 and time.monotonic() < deadline and (chunk := rfile.read1(min(length, _DRAIN_CHUNK))):
        length -= len(chunk)
    return length <= 0 or time.monotonic() < deadline


def _still_connected(conn: socket.socket) -> bool:
    """Whether the client of a request being answered still waits: False once it has closed the
    connection or reset it (a client whose timeout passed). A client sends nothing more while it
    waits, so a connection with something to read has either a next request (still there) or its
    end (gone). A client that only shut down its sending side to wait is taken as gone, as the
    HTTP servers that check for it do."""
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        return not readable or conn.recv(1, socket.MSG_PEEK) != b""
    except ConnectionError:  # reset
        return False
    except (OSError, ValueError):  # a descriptor `select` cannot take (over its limit): answered, as before
        return True


def _chunked(headers: Any) -> bool:
    """Whether a request's body is sent in chunks (any Transfer-Encoding but identity)."""
    return bool((headers.get("Transfer-Encoding") or "identity").strip().lower() != "identity")


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


def _head_as_get(methods: list[str]) -> bool:
    """Whether a HEAD on a path whose routes take `methods` is answered as its GET: on a GET
    route, and on a path no route has (the GET's 404, not a 405 for HEAD); on a POST-only
    route it is the 405 naming POST."""
    return "GET" in methods or not methods


def _make_handler(
    memory: Memory,
    token: str,
    ready: Callable[[], bool],
    on_batch: OnBatch | None,
    doing: Callable[[], str | None],
    requests: _Requests,
) -> type[BaseHTTPRequestHandler]:
    expected = f"Bearer {token}".encode()
    routes = daemon_routes(on_batch, ready, doing)

    def allowed(path: str) -> list[str]:
        """The methods `path`'s routes take (none: no route has the path)."""
        return sorted(m for m, p in routes if p == path)

    class Handler(BaseHTTPRequestHandler):
        server_version = "vaultmind"
        timeout = SOCKET_TIMEOUT_S  # a client that stops sending mid-request frees its thread

        body_unread = False  # the request's body is not read yet (`_body` reads it, `_send` drops it)

        def parse_request(self) -> bool:
            self.body_unread = True
            return super().parse_request()

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

        def _other_method(self) -> None:
            self._handle(self.command)

        do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = do_TRACE = do_CONNECT = _other_method

        def _handle(self, method: str) -> None:
            try:
                if method in ("GET", "POST"):
                    self._answer(method)
                elif method == "HEAD" and _head_as_get(allowed(self.path.split("?", 1)[0])):
                    self._answer("GET")  # (`curl -I`, an uptime checker): `_send` leaves the body out
                else:
                    self._not_allowed()
            except ConnectionError:  # the client gave up waiting (its timeout) and hung up
                log.debug("api: the client of %s %s left before its answer", method, self.path)
                self.close_connection = True
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
            asked = client_waits.set(lambda: _still_connected(self.connection))
            try:
                self._route(method)
            finally:
                client_waits.reset(asked)
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
                if self.command == "HEAD":
                    body = read_only(body)
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
                # 503: the index could not be opened again yet (`index.reopening`), a request later may be answered
                status = (
                    400 if isinstance(exc, UsageError) else 404 if isinstance(exc, NotFound)
                    else 503 if isinstance(exc, IndexUnavailable) else 500
                )
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
            if _chunked(self.headers):
                raise _LengthRequired(
                    "a request body must be sent with a Content-Length (not chunked)",
                    hint="send the JSON body whole, with its Content-Length header",
                )
            length = self._length()
            if length > MAX_BODY:
                raise _TooLarge(
                    f"request body too large ({length:,} bytes; at most {MAX_BODY:,})",
                    hint=f"a document is at most {MAX_DOCUMENT_BYTES:,} bytes: split it; "
                    "or stop the daemon (`vaultmind stop`) and run the command without it",
                )
            self.body_unread = False
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

        def _length(self) -> int:
            """The body's Content-Length (0 when there is none)."""
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError as exc:
                raise UsageError("the Content-Length header is not a number") from exc
            if length < 0:
                raise UsageError(f"the Content-Length header is negative ({length})")
            return length

        def _drop_unread_body(self) -> None:
            """Read (and drop) the body of a request answered without it — refused (401, 404,
            405, 411, 413, 503) or a GET's — so a client still sending it is not cut off: a
            connection closed with its request unread is reset, and the client gets a broken
            pipe or a reset instead of the answer. A body that cannot be read to its end (no
            length to trust, over twice `MAX_BODY`, malformed chunks, one still coming after
            `DRAIN_S`: a client trickling it held a thread as long as it went on) is left, and the
            connection closed; so is one the client sends only when told to (`Expect:
            100-continue`, which this HTTP/1.0 server never says): told the answer, it sends none."""
            if not self.body_unread:
                return
            self.body_unread = False
            if (self.headers.get("Expect") or "").strip().lower() == "100-continue":
                self.close_connection = True
                return
            if _chunked(self.headers):
                self.close_connection = True  # (`_drain_chunks` may stop inside the body)
                self._draining(lambda deadline: _drain_chunks(self.rfile, 2 * MAX_BODY, deadline))
                return
            try:
                length = self._length()
            except UsageError:
                self.close_connection = True
                return
            if length > 2 * MAX_BODY or not self._draining(lambda deadline: _drain(self.rfile, length, deadline)):
                self.close_connection = True

        def _draining(self, drain: Callable[[float], bool]) -> bool:
            """Run `drain` until its deadline, `DRAIN_S` from now, a read of the socket waiting
            no longer than that (not `SOCKET_TIMEOUT_S`: a client that waits for the answer
            before it sends its body got none); False when the body was not read to its end."""
            self.connection.settimeout(DRAIN_S)
            try:
                return drain(time.monotonic() + DRAIN_S)
            except TimeoutError:
                return False
            finally:
                self.connection.settimeout(self.timeout)

        def _send(self, status: int, payload: Any, allow: list[str] | None = None) -> None:
            self._drop_unread_body()
            data = json.dumps(payload, ensure_ascii=False).encode()
            self.send_response(status)
            if allow:
                self.send_header("Allow", ", ".join(allow))
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":  # a HEAD's answer is the headers of the GET's, never a body
                self.wfile.write(data)

    return Handler
