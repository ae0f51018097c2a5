"""A fake Ollama HTTP server on loopback, for tests that go through the real `ollama` client.

    with FakeOllama(embed_models={"nomic-embed-text": 8}) as fake:
        client = ollama.Client(host=fake.host, timeout=2)
        client.embed(model="nomic-embed-text", input=["a", "b"])
        assert fake.requests[-1].body["input"] == ["a", "b"]

It speaks the subset of the Ollama API vaultmind uses:

- `POST /api/embed`      deterministic vectors derived from sha256(model, text), deliberately
                         not unit length (callers must normalise); `dimensions` truncates. A
                         model given a context (`contexts`, or a smaller `num_ctx`: tokens, here
                         words) reads an input only up to it, as Ollama does: the vector of a longer one is that of its
                         first words (`truncated`).
- `POST /api/chat`       non-streaming reply from `responder` (streaming: one chunk + done).
- `POST /api/generate`   same, as `response`.
- `POST /api/show`       minimal model details; `model_info` holds `fake.context_length`
                         (from `contexts`), `parameters` a `num_ctx` line (from `num_ctx`).
- `GET  /api/tags`       the configured models.
- `GET  /api/version`    a fixed version.

An unknown model answers 404 `{"error": "model \"x\" not found, try pulling it first"}`,
as Ollama does. Failure modes (`failure`, applied to `failure_paths`, for the first
`failure_times` matching requests or forever when None): "500" (an error JSON), "garbage"
(200 with a body that is not JSON), "hang" (no answer until the client gives up or the fake
stops), "disconnect" (the connection is closed without an answer). `delay_s` postpones every
POST answer; `gate` (an Event, None: open) holds every `/api/embed` answer until it is set
(a slow embedding a test ends when it chooses); `refuse_think` answers a chat request that has a `think` field 400 "does not support
thinking" (as Ollama does for a model without it); `embed_answer` turns the vectors `/api/embed` would send into what it sends (one
fewer, empty ones). Attributes may be changed while the server runs. Every request is recorded in
`requests` (thread-safe list of `RecordedRequest`).

Only the standard library is used; the server listens on 127.0.0.1 on a free port (or on
`port`: stopped and started again there, it is an Ollama that went away and came back).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

FAILURES = ("500", "404", "garbage", "hang", "disconnect")
FAKE_VERSION = "0.12.0-fake"
_CREATED_AT = "2025-01-01T00:00:00Z"
_HANG_LIMIT_S = 120.0


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when the body was not JSON, or None
    at: float = field(default_factory=time.monotonic)


Responder = Callable[[RecordedRequest], str]


def default_responder(request: RecordedRequest) -> str:
    """A deterministic reply that names the last user message (or the prompt)."""
    body = request.body if isinstance(request.body, dict) else {}
    if request.path == "/api/chat":
        messages = body.get("messages") or []
        text = str(messages[-1].get("content", "")) if messages else ""
    else:
        text = str(body.get("prompt", ""))
    return f"fake reply to: {text[:80]}"


def fake_vector(model: str, text: str, dim: int) -> list[float]:
    """The vector the fake returns for `text`: deterministic, in [-3, 3], not normalised."""
    seed = hashlib.sha256(f"{_canonical(model)}\0{text}".encode()).digest()
    raw = hashlib.shake_256(seed).digest(2 * dim)
    return [round((v / 65535.0 * 2.0 - 1.0) * 3.0, 6) for v in struct.unpack(f"<{dim}H", raw)]


def truncated(text: str, words: int | None) -> str:
    """`text` as a model whose context holds `words` tokens reads it: up to the end of its
    `words`-th word (a word a token, in this fake); the whole of it when None or shorter."""
    if words is None:
        return text
    ends = [m.end() for m in re.finditer(r"\S+", text)]
    return text if len(ends) <= words else text[: ends[words - 1]]


def _canonical(model: str) -> str:
    return model if ":" in model else f"{model}:latest"


class FakeOllama:
    """Context manager running the fake server in a background thread."""

    def __init__(
        self,
        *,
        embed_models: Mapping[str, int] | None = None,
        chat_models: Iterable[str] = ("llama3.2",),
        responder: Responder = default_responder,
        delay_s: float = 0.0,
        failure: str | None = None,
        failure_paths: Iterable[str] = ("/api/chat", "/api/generate", "/api/embed"),
        failure_times: int | None = None,
        embed_answer: Callable[[list[list[float]]], Any] | None = None,
        contexts: Mapping[str, int] | None = None,
        num_ctx: Mapping[str, int] | None = None,
        refuse_think: bool = False,
        port: int = 0,
    ) -> None:
        if failure is not None and failure not in FAILURES:
            raise ValueError(f"failure must be one of {FAILURES}, got {failure!r}")
        self.embed_models: dict[str, int] = {
            _canonical(k): v for k, v in (embed_models or {"nomic-embed-text": 768}).items()
        }
        self.chat_models: set[str] = {_canonical(m) for m in chat_models}
        self.responder = responder
        self.delay_s = delay_s
        self.failure = failure
        self.failure_paths: set[str] = set(failure_paths)
        self.failure_times = failure_times
        self.refuse_think = refuse_think
        self.listen_port = port  # 0: a free one; a given one: an Ollama that comes back where it was
        self.embed_answer = embed_answer  # what `/api/embed` answers in `embeddings`, from the vectors
        self.contexts: dict[str, int] = {_canonical(k): v for k, v in (contexts or {}).items()}  # its context_length
        self.num_ctx: dict[str, int] = {_canonical(k): v for k, v in (num_ctx or {}).items()}  # its Modelfile's num_ctx
        self.gate: threading.Event | None = None  # set: `/api/embed` answers; unset: it waits for it
        self.show_model_info = True  # False: `/api/show` answers without `model_info`, as servers before 0.3 did
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> FakeOllama:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        if self._server is not None:
            raise RuntimeError("FakeOllama already started")
        self._stop.clear()
        server = ThreadingHTTPServer(("127.0.0.1", self.listen_port), _make_handler(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()  # releases hanging handlers
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    # -- what tests read -----------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeOllama is not running")
        return int(self._server.server_address[1])

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == path]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()

    # -- internals used by the handler ----------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _take_failure(self, path: str) -> str | None:
        with self._lock:
            if self.failure is None or path not in self.failure_paths:
                return None
            if self.failure_times is not None:
                if self.failure_times <= 0:
                    return None
                self.failure_times -= 1
            return self.failure


def free_port() -> int:
    """A loopback port nothing listens on right now (for connection-refused tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def silent_host() -> Iterator[str]:
    """The address of a loopback port that listens but never accepts, its backlog full: a
    connect there times out (as to a host that drops packets) instead of being refused."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    fillers = []
    try:
        for _ in range(8):  # a few connects fill the (kernel-rounded) backlog
            filler = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(server.getsockname())
            fillers.append(filler)
        time.sleep(0.2)
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        for filler in fillers:
            filler.close()
        server.close()


def _make_handler(fake: FakeOllama) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "FakeOllama/1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._guarded(self._get)

        def do_POST(self) -> None:
            self._guarded(self._post)

        def do_HEAD(self) -> None:
            self._guarded(lambda _req: self._send(200, b"", "text/plain"))

        # -- dispatch ----------------------------------------------------------------------

        def _guarded(self, action: Callable[[RecordedRequest], None]) -> None:
            try:
                request = self._read_request()
                fake._record(request)
                action(request)
            except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError):
                self.close_connection = True

        def _read_request(self) -> RecordedRequest:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body: Any = None
            if raw:
                try:
                    body = json.loads(raw)
                except (UnicodeDecodeError, json.JSONDecodeError):
                    body = raw.decode("utf-8", "replace")
            path = self.path.split("?", 1)[0]
            return RecordedRequest(self.command, path, {k.lower(): v for k, v in self.headers.items()}, body)

        def _get(self, request: RecordedRequest) -> None:
            if request.path in ("/", ""):
                self._send(200, b"Ollama is running", "text/plain; charset=utf-8")
            elif request.path == "/api/version":
                self._json(200, {"version": FAKE_VERSION})
            elif request.path == "/api/tags":
                self._json(
                    200,
                    {
                        "models": [
                            _model_entry(m) for m in sorted(fake.embed_models.keys() | fake.chat_models)
                        ]
                    },
                )
            else:
                self._send(404, b"404 page not found", "text/plain")

        def _post(self, request: RecordedRequest) -> None:
            routes: dict[str, Callable[[RecordedRequest, dict[str, Any]], None]] = {
                "/api/embed": self._embed,
                "/api/chat": self._complete,
                "/api/generate": self._complete,
                "/api/show": self._show,
            }
            route = routes.get(request.path)
            if route is None:
                self._send(404, b"404 page not found", "text/plain")
                return
            if fake.delay_s > 0:
                fake._stop.wait(fake.delay_s)
            gate = fake.gate
            if gate is not None and request.path == "/api/embed":
                gate.wait(_HANG_LIMIT_S)
            failure = fake._take_failure(request.path)
            if failure is not None:
                self._fail(failure)
                return
            if not isinstance(request.body, dict):
                self._json(400, {"error": "invalid request body"})
                return
            route(request, request.body)

        # -- endpoints ---------------------------------------------------------------------

        def _embed(self, request: RecordedRequest, body: dict[str, Any]) -> None:
            model = str(body.get("model") or "")
            name = _canonical(model)
            if name not in fake.embed_models:
                if name in fake.chat_models:
                    self._json(400, {"error": f'"{model}" does not support embeddings'})
                else:
                    self._not_found(model)
                return
            inputs = body.get("input", "")
            texts = [inputs] if isinstance(inputs, str) else inputs
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                self._json(400, {"error": "invalid input type"})
                return
            dim = fake.embed_models[name]
            wanted = body.get("dimensions")
            if isinstance(wanted, int) and 0 < wanted < dim:
                dim = wanted
            # what the model reads: its context, or less when its Modelfile sets a smaller num_ctx
            limits = [n for n in (fake.contexts.get(name), fake.num_ctx.get(name)) if n is not None]
            context = min(limits) if limits else None
            vectors = [fake_vector(model, truncated(t, context), dim) for t in texts]
            self._json(
                200,
                {
                    "model": model,
                    "embeddings": vectors if fake.embed_answer is None else fake.embed_answer(vectors),
                    "total_duration": 1000,
                    "load_duration": 10,
                    "prompt_eval_count": sum(len(t.split()) for t in texts),
                },
            )

        def _complete(self, request: RecordedRequest, body: dict[str, Any]) -> None:
            path = request.path
            model = str(body.get("model") or "")
            name = _canonical(model)
            if name not in fake.chat_models:
                if name in fake.embed_models:
                    kind = "chat" if path == "/api/chat" else "generate"
                    self._json(400, {"error": f'"{model}" does not support {kind}'})
                else:
                    self._not_found(model)
                return
            if fake.refuse_think and "think" in body:
                self._json(400, {"error": f'"{model}" does not support thinking'})
                return
            text = fake.responder(request)
            base = {
                "model": model,
                "created_at": _CREATED_AT,
                "done": True,
                "done_reason": "stop",
                "total_duration": 1000,
                "load_duration": 10,
                "prompt_eval_count": 1,
                "prompt_eval_duration": 10,
                "eval_count": max(1, len(text.split())),
                "eval_duration": 100,
            }
            if path == "/api/chat":
                final = {**base, "message": {"role": "assistant", "content": text}}
                partial = {
                    "model": model,
                    "created_at": _CREATED_AT,
                    "done": False,
                    "message": {"role": "assistant", "content": text},
                }
                last = {**base, "message": {"role": "assistant", "content": ""}}
            else:
                final = {**base, "response": text}
                partial = {"model": model, "created_at": _CREATED_AT, "done": False, "response": text}
                last = {**base, "response": ""}
            if body.get("stream") is False:
                self._json(200, final)
            else:  # Ollama streams unless told not to
                lines = b"".join(json.dumps(chunk).encode() + b"\n" for chunk in (partial, last))
                self._send(200, lines, "application/x-ndjson")

        def _show(self, request: RecordedRequest, body: dict[str, Any]) -> None:
            model = str(body.get("model") or body.get("name") or "")
            name = _canonical(model)
            if name not in fake.embed_models and name not in fake.chat_models:
                self._not_found(model)
                return
            capabilities = ["embedding"] if name in fake.embed_models else ["completion"]
            info: dict[str, Any] = {"general.architecture": "fake"}
            if name in fake.contexts:
                info["fake.context_length"] = fake.contexts[name]
            parameters = f"num_ctx                        {fake.num_ctx[name]}" if name in fake.num_ctx else ""
            self._json(
                200,
                {
                    "modelfile": "",
                    "parameters": parameters,
                    "template": "",
                    "details": _details(),
                    "capabilities": capabilities,
                }
                | ({"model_info": info} if fake.show_model_info else {}),
            )

        # -- responses ---------------------------------------------------------------------

        def _not_found(self, model: str) -> None:
            self._json(404, {"error": f'model "{model}" not found, try pulling it first'})

        def _fail(self, failure: str) -> None:
            if failure == "500":
                self._json(500, {"error": "fake ollama: internal server error"})
            elif failure == "404":  # a route this server does not serve
                self._send(404, b"404 page not found", "text/plain")
            elif failure == "garbage":
                self._send(200, b"\x00<html>this is not json{", "application/json")
            elif failure == "hang":
                fake._stop.wait(_HANG_LIMIT_S)
                self.close_connection = True
            else:  # disconnect
                self.close_connection = True

        def _json(self, status: int, payload: object) -> None:
            self._send(status, json.dumps(payload).encode(), "application/json; charset=utf-8")

        def _send(self, status: int, data: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            self.wfile.flush()

    return Handler


def _details() -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": "fake",
        "families": ["fake"],
        "parameter_size": "1M",
        "quantization_level": "F16",
    }


def _model_entry(name: str) -> dict[str, Any]:
    digest = hashlib.sha256(name.encode()).hexdigest()
    return {
        "name": name,
        "model": name,
        "modified_at": _CREATED_AT,
        "size": 1000,
        "digest": digest,
        "details": _details(),
    }
