"""The MCP server: the `memory_tree` tool for agent clients, over stdio.

The Model Context Protocol's stdio transport: one JSON-RPC 2.0 message per line on stdin, one
answer per line on stdout (ASCII: JSON's escapes for the rest), logs on stderr. The server answers `initialize`, `ping`,
`tools/list` and `tools/call`; its one tool, `memory_tree`, takes a `mode` and that mode's
arguments (`retrieval/dispatch.py`'s `ARGUMENTS`) and answers with the mode's JSON, as
`POST /v1/query` does, each hit as an agent uses it (`mcp_answers`: no score breakdown unless
`scores` asks), as text and as `structuredContent` (a walk asked with evidence answers as text
with its cited block and its hits' ids only). A call the client cancels is not answered.
A mistake in the arguments is the tool's error (`isError`, with the message and its hint, so the
agent can correct its call); a message that is not JSON-RPC, an unknown method or tool are
protocol errors.

`ask(mode, args)` runs the mode: `vaultmind mcp` goes through the vault's daemon when one runs
and answers from the index it keeps open between calls otherwise (`cli/mcp.py`). Tool calls run on threads, so a slow
one holds no other: reads side by side, the one write (`ingest_document`) one at a time in the
order sent (`_Calls`); `ask` is called from several threads at once.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import IO, Any

from vaultmind import __version__
from vaultmind.config import MAX_LIMIT
from vaultmind.entities.ids import KINDS as ENTITY_KINDS
from vaultmind.errors import VaultmindError
from vaultmind.mcp_answers import agent_answer, hit_ids, ingested
from vaultmind.retrieval.budget import EVIDENCE_BUDGET
from vaultmind.retrieval.dispatch import ARGUMENTS, MAX_QUESTION_CHARS, MODES
from vaultmind.retrieval.modes import MAX_DEPTH, SOURCE_KINDS

log = logging.getLogger(__name__)

Ask = Callable[[str, dict[str, Any]], Any]

TOOL = "memory_tree"
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first
BATCHED = frozenset({"2025-03-26", "2024-11-05"})  # versions that take a JSON array of messages (2025-06-18 dropped them)

# Tool calls answered at the same time (more wait for a thread): each is a question to the daemon,
# whose API answers every request on a thread of its own.
MAX_CALLS = 8
READ, WRITE = "read", "write"  # the lanes tool calls run in (`_Calls`)
WRITES = frozenset({"ingest_document"})  # the modes that write into the vault

# JSON-RPC 2.0 error codes
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603

# What each mode does and what it needs, as the model choosing a mode reads it (the schema's
# `mode`): a mode named without saying what it does, or an argument it needs, is guessed at.
MODE_USES: dict[str, str] = {
    "walk": "answer a question: the best leaves and summaries, each with why it ranked (needs query; evidence true adds a cited block)",
    "search": "plain text search over the leaves, lexical and dense fused (needs query)",
    "search_entities": "people, organizations, places, … by name or alias, fuzzy; their node_id drills down (needs query)",
    "query_source": "the leaves of one source (source_id) or of a kind of source (kind), oldest first, within since/until; query reorders them by meaning (needs source_id or kind)",
    "drill_down": "what a summary folds, or the leaves an entity appears in (needs node_id: a hit's)",
    "cover_window": "the fewest summaries and leaves covering a time window, and how many leaves no summary covers (needs start and end)",
    "fetch_leaves": "nodes by id, in the order given, e.g. the hits an evidence block numbers; ids not found are listed as missing (needs ids)",
    "ingest_document": "write a document into the vault, its one write (needs title, body and source_id)",
}

_ARGUMENT_SCHEMA: dict[str, dict[str, Any]] = {
    "query": {"type": "string", "description": f"the question or the words to look for (at most {MAX_QUESTION_CHARS:,} characters)"},
    "limit": {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_LIMIT,
        "description": f"hits to return (at most {MAX_LIMIT}; default: walk and search the vault's [search] limit, 10 unless set; query_source 50; drill_down and cover_window 100)",
    },
    "reference_time": {
        "type": "string",
        "description": "ISO 8601 time that 'last week' is read from, on the calendar of its offset (without one: UTC; default now)",
    },
    "evidence": {"type": "boolean", "description": "walk: add a cited evidence block within budget_tokens"},
    "budget_tokens": {"type": "integer", "minimum": 1, "description": f"walk: the evidence block's size (default {EVIDENCE_BUDGET})"},
    "kind": {
        "type": "string",
        "description": (
            f"search_entities: an entity kind ({', '.join(ENTITY_KINDS)}); "
            f"query_source: a source kind ({', '.join(SOURCE_KINDS)}; note: the vault's own notes)"
        ),
    },
    "source_id": {
        "type": "string",
        "description": "query_source: a source note's source_id (e.g. slack:T1/C1), or any hit's tree; ingest_document: the document's own id (e.g. agent:<name>; never a notes:… tree nor entities)",
    },
    "since": {"type": "string", "description": "query_source: ISO 8601 start (without an offset: UTC)"},
    "until": {"type": "string", "description": "query_source: ISO 8601 end (without an offset: UTC)"},
    "node_id": {"type": "string", "description": "drill_down: a hit's id (a summary or an entity)"},
    "depth": {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_DEPTH,
        "description": f"drill_down: levels to go down (default 1, at most {MAX_DEPTH})",
    },
    "start": {"type": "string", "description": "cover_window: ISO 8601 start (without an offset: UTC)"},
    "end": {"type": "string", "description": "cover_window: ISO 8601 end (without an offset: UTC)"},
    "ids": {
        "type": "array",
        "items": {"type": "string"},
        "maxItems": MAX_LIMIT,
        "description": f"fetch_leaves: node ids, in order (at most {MAX_LIMIT})",
    },
    "title": {"type": "string", "description": "ingest_document: the document's title"},
    "body": {"type": "string", "description": "ingest_document: the document's text (Markdown)"},
    "source_ref": {"type": "string", "description": "ingest_document: where it came from (a URL, an id)"},
}

# The server's own arguments, which no mode takes: how the answer is told
OWN_ARGUMENTS: dict[str, dict[str, Any]] = {
    "scores": {
        "type": "boolean",
        "description": "true: each hit also carries its score's breakdown (why it ranked), to debug a ranking; default false",
    },
}


def tool_definition() -> dict[str, Any]:
    """The `memory_tree` tool as `tools/list` describes it: every mode, and which arguments each takes."""
    takes = "; ".join(f"{mode}: {', '.join(ARGUMENTS[mode])}" for mode in MODES)
    return {
        "name": TOOL,
        "title": "Search the vault's memory",
        "description": (
            "Ask the Obsidian vault's memory. Every hit cites its note path, anchor, obsidian:// link and "
            "original source_ref. Start with mode 'walk' and evidence true for a cited answer block; "
            "'ingest_document' writes a document into the vault (its one write); "
            f"each mode takes these arguments — {takes}."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "mode": {
                    "type": "string",
                    "enum": list(MODES),
                    "description": "what to do — " + "; ".join(f"{mode}: {MODE_USES[mode]}" for mode in MODES),
                },
                **_ARGUMENT_SCHEMA,
                **OWN_ARGUMENTS,
            },
            "required": ["mode"],
            "additionalProperties": False,
        },
    }


class McpServer:
    """Answers MCP messages with `ask`; `serve` runs it over a pair of text streams."""

    def __init__(self, ask: Ask, *, vault_name: str = ""):
        self.ask = ask
        self.vault_name = vault_name
        self.protocol: str | None = None  # the version agreed at `initialize`

    def serve(self, stdin: IO[str], stdout: IO[str]) -> None:
        """Read messages until stdin ends, answering each on one line. A tool call is answered
        on a thread (`_Calls`), so a slow one holds no other; the rest are answered in turn as
        they come. The calls still running when stdin ends are waited for and answered."""
        lines = _Lines(stdout)
        with _Calls() as calls:
            for line in stdin:
                if lines.broken is not None:  # the client is gone: nobody reads the answers
                    break
                if not line.strip():
                    continue
                try:
                    message = _read(line)
                except _Unread as exc:
                    lines.write(exc.answer)
                    continue
                cancelled = _cancelled(message)
                if cancelled is not None:  # the client gave up on a call: it gets no answer
                    calls.cancel(cancelled)
                    continue
                lane = _lane(message)
                if lane is None:
                    lines.write(self.answer_message(message))
                else:
                    ident = message.get("id") if isinstance(message, dict) else None
                    calls.run(lane, ident, partial(self._reply, message, lines, calls))
        if lines.broken is not None:
            raise lines.broken

    def _reply(self, message: Any, lines: _Lines, calls: _Calls) -> None:
        """Answer a tool call (or a batch holding one) on a calls' thread: an answer JSON cannot
        hold is the call's failed answer (`_writable`), never no answer for the agent to wait for
        — unless the client cancelled the call meanwhile (MCP: a cancelled request is not answered)."""
        answer = self.answer_message(message)
        if isinstance(message, dict) and calls.dropped(message.get("id")):
            return
        try:
            lines.write(answer)
        except (TypeError, ValueError):  # (nothing was written: the line is made before)
            lines.write(_writable(answer))

    def answer_message(self, message: Any) -> Any:
        """The answer to one message read, or to a batch of them (a list); None for notifications only."""
        if isinstance(message, list):  # a batch: protocols 2025-03-26 and before only
            if self.protocol not in BATCHED:
                return _error(None, INVALID_REQUEST, f"protocol {self.protocol or '(not initialized)'} takes one message per line, not a batch")
            if not message:
                return _error(None, INVALID_REQUEST, "an empty batch")
            answers = [a for a in (self.answer(m) for m in message) if a is not None]
            return answers or None
        return self.answer(message)

    def answer(self, message: Any) -> dict[str, Any] | None:
        if isinstance(message, dict) and "method" not in message and "id" in message and ("result" in message or "error" in message):
            return None  # the client's response (to a request the server never sends): never answered
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
            ident = message.get("id") if isinstance(message, dict) else None
            return _error(ident, INVALID_REQUEST, 'a JSON-RPC 2.0 request has "jsonrpc": "2.0" and a "method"')
        if "id" not in message:
            return None  # a notification (notifications/initialized, …): nothing to answer
        try:
            params = message.get("params")  # (absent or null: none; anything but an object is refused)
            return self._dispatch(message["id"], message["method"], {} if params is None else params)
        except Exception as exc:  # the server answers on, whatever one call broke
            log.exception("mcp: %s failed", message["method"])
            return _error(message["id"], INTERNAL_ERROR, _failure(exc))

    def _dispatch(self, ident: Any, method: str, params: Any) -> dict[str, Any]:
        if not isinstance(params, dict):
            return _error(ident, INVALID_PARAMS, "params must be an object")
        if method == "initialize":
            return _result(ident, self._initialize(params))
        if method == "ping":
            return _result(ident, {})
        if method == "tools/list":
            return _result(ident, {"tools": [tool_definition()]})
        if method == "tools/call":
            name = params.get("name")
            if name != TOOL:
                return _error(ident, INVALID_PARAMS, f"unknown tool {name!r}; the one tool is {TOOL!r}")
            arguments = params.get("arguments")
            arguments = {} if arguments is None else arguments  # ([], 0, false are no object: refused)
            if not isinstance(arguments, dict):
                return _error(ident, INVALID_PARAMS, "arguments must be an object")
            return _result(ident, self._call(arguments))
        return _error(ident, METHOD_NOT_FOUND, f"unknown method {method!r}")

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        self.protocol = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        return {
            "protocolVersion": self.protocol,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "vaultmind", "version": __version__},
            "instructions": (
                f"The memory of {f'the Obsidian vault {self.vault_name!r}' if self.vault_name else 'an Obsidian vault'}: "
                f"call {TOOL} with mode 'walk', a question as query and evidence true; cite the notes its hits name."
            ),
        }

    def _call(self, arguments: dict[str, Any]) -> dict[str, Any]:
        args = dict(arguments)
        mode = args.pop("mode", None)
        if not isinstance(mode, str) or mode not in MODES:
            return _tool_error(f"'mode' must be one of: {', '.join(MODES)} (got {mode!r})")
        scores = args.pop("scores", None)  # the server's own argument: no mode's
        scores = False if scores is None else scores  # null is absent, as every mode's arguments take it
        if not isinstance(scores, bool):
            return _tool_error(f"'scores' must be true or false (got {scores!r})")
        try:
            answer = self.ask(mode, args)
        except VaultmindError as exc:
            return _tool_error(str(exc))
        except Exception as exc:  # as a daemon's 500 reaches the agent: the tool's failed answer
            log.exception("mcp: %s failed", mode)
            return _tool_error(_failure(exc))
        if mode == "ingest_document":  # what was written, not the document said back
            told = ingested(answer)
            return {"content": [{"type": "text", "text": json.dumps(told, ensure_ascii=False)}], "structuredContent": told, "isError": False}
        told = agent_answer(answer, scores=scores)  # each hit as an agent uses it (`mcp_answers`)
        if isinstance(told.get("evidence"), str):  # walk's cited block, as it reads, and the hits' ids
            content = [{"type": "text", "text": told["evidence"]}, {"type": "text", "text": json.dumps(hit_ids(told))}]
        else:
            content = [{"type": "text", "text": json.dumps(told, ensure_ascii=False)}]
        return {"content": content, "structuredContent": told, "isError": False}


class _Unread(Exception):
    """A line that is no JSON this server reads; `answer` is the error it is answered with."""

    def __init__(self, answer: dict[str, Any]):
        super().__init__(answer["error"]["message"])
        self.answer = answer


def _read(line: str) -> Any:
    """The message (or the batch: a list) one line holds."""
    try:
        return json.loads(line)
    except ValueError as exc:  # not JSON, or JSON Python does not read (an integer of thousands of digits)
        raise _Unread(_error(None, PARSE_ERROR, f"not JSON: {exc}")) from None
    except RecursionError:  # a line of thousands of nested brackets: the server reads on
        raise _Unread(_error(None, PARSE_ERROR, "not JSON this server reads: it nests too deeply")) from None


def _lane(message: Any) -> str | None:
    """Where a message is answered: `WRITE` for a tool call that writes (`WRITES`), `READ` for
    another tool call, None for the rest (answered in turn: they take no time, and `initialize`
    comes before what follows it). A batch goes where its calls would."""
    calls = [m for m in (message if isinstance(message, list) else [message]) if _is_call(m)]
    if not calls:
        return None
    return WRITE if any(_mode(m) in WRITES for m in calls) else READ


def _is_call(message: Any) -> bool:
    return isinstance(message, dict) and message.get("method") == "tools/call" and "id" in message


def _mode(call: dict[str, Any]) -> Any:
    params = call.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    return arguments.get("mode") if isinstance(arguments, dict) else None


class _Lines:
    """The stream the answers go to: one line each, written whole by one thread at a time."""

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self.broken: OSError | None = None  # the client closed its end: answers are dropped
        self._lock = threading.Lock()

    def write(self, answer: Any) -> None:
        if answer is None:  # notifications only
            return
        line = json.dumps(answer, ensure_ascii=True) + "\n"  # ASCII: a client splitting lines on U+2028, U+2029 or U+0085 sees one message
        with self._lock:
            if self.broken is not None:
                return
            try:
                self.stream.write(line)
                self.stream.flush()
            except OSError as exc:  # (BrokenPipeError) `serve` stops reading, and raises it
                self.broken = exc


def _writable(answer: Any) -> Any:
    """`answer` with each answer of it (of a batch, or the one) that JSON cannot hold (a value of
    no JSON type, from a mode's bug) replaced by its call's failed answer, as a failure of
    vaultmind's own is answered (`McpServer._call`)."""
    if isinstance(answer, list):
        return [_writable(one) for one in answer]
    try:
        json.dumps(answer)
    except (TypeError, ValueError) as exc:
        log.error("mcp: the answer to call %r is no JSON: %s", answer.get("id"), exc)
        return _result(answer.get("id"), _tool_error(_failure(exc)))
    return answer


class _Calls:
    """The threads tool calls are answered on: reads side by side, up to `MAX_CALLS` at once;
    writes on one thread of their own, so they apply one at a time, in the order the agent sent
    them. A read does not wait for a write sent before it: a call sent before an earlier one is
    answered may run first (an agent reads a document it gives once `ingest_document` answers)."""

    def __init__(self) -> None:
        self._lanes = {
            READ: ThreadPoolExecutor(MAX_CALLS, thread_name_prefix="vaultmind-mcp-read"),
            WRITE: ThreadPoolExecutor(1, thread_name_prefix="vaultmind-mcp-write"),
        }
        self._lock = threading.Lock()
        self._pending: dict[str, Future[None]] = {}  # by request id (`_key`): those not answered yet
        self._cancelled: set[str] = set()  # of those, the ones the client cancelled while they ran

    def run(self, lane: str, ident: Any, answer: Callable[[], None]) -> None:
        key = _key(ident)
        with self._lock:
            future = self._lanes[lane].submit(_logged, answer)
            self._pending[key] = future
        future.add_done_callback(lambda _: self._done(key, future))

    def _done(self, key: str, future: Future[None]) -> None:
        with self._lock:
            if self._pending.get(key) is future:
                del self._pending[key]
                self._cancelled.discard(key)

    def cancel(self, ident: Any) -> None:
        """`notifications/cancelled` of the call `ident`: one still waiting for a thread never
        runs (a document never written); one running runs on — a mode cannot be stopped midway
        — and is not answered. A call answered already, or unknown, is let be (as MCP says)."""
        key = _key(ident)
        with self._lock:
            future = self._pending.get(key)
            if future is None:
                return
            self._cancelled.add(key)
        if future.cancel():
            log.debug("mcp: call %s cancelled before it ran", key)

    def dropped(self, ident: Any) -> bool:
        """Whether the call `ident`'s answer is to be dropped: the client cancelled it."""
        with self._lock:
            return _key(ident) in self._cancelled

    def __enter__(self) -> _Calls:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        """Wait for the calls running (and, but when the server is interrupted, those waiting)."""
        for pool in self._lanes.values():
            pool.shutdown(wait=True, cancel_futures=kind is not None)


def _key(ident: Any) -> str:
    """A request id as a key: 1 and "1" are two ids (JSON-RPC keeps an id's type)."""
    return json.dumps(ident)


def _cancelled(message: Any) -> Any:
    """The id of the call a `notifications/cancelled` names (`params.requestId`), else None."""
    if not (isinstance(message, dict) and message.get("method") == "notifications/cancelled" and "id" not in message):
        return None
    params = message.get("params")
    return params.get("requestId") if isinstance(params, dict) else None


def _logged(answer: Callable[[], None]) -> None:
    try:
        answer()
    except Exception:  # (`answer` answers every failure of a call itself: this is the server's own)
        log.exception("mcp: answering a call failed")


def _result(ident: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def _failure(exc: Exception) -> str:
    """What an unexpected failure says to the client, as a JSON-RPC error or the tool's answer."""
    return f"vaultmind failed: {type(exc).__name__}: {exc}"


def _tool_error(message: str) -> dict[str, Any]:
    """A failed call, told to the agent as the tool's answer so it can correct its arguments."""
    return {"content": [{"type": "text", "text": message}], "isError": True}
