"""Chat with a local Ollama model through the real `ollama` client: text or strict JSON answers.

Used by the gray-band importance judge and by the `ollama` summarizer of the trees. Every
request is bounded by its timeout (`[ollama] timeout_s`; the summarizer's: `[trees]
summarizer_timeout_s`), runs with temperature 0 (same input, same answer as far as the model
allows) and never streams. Failures are classified once, here, so callers can decide what to
do without looking at HTTP details:

- `LlmUnreachable` — nothing answers at the host (connection refused or timed out, DNS): the work waits
  and is retried later; no attempt is burned.
- `LlmTransient` — the server answered badly or too slowly (a read timeout, `LlmTimeout`; HTTP
  5xx/429, a broken connection, a body that is not JSON): retried with backoff, attempts counted.
- `LlmUnrecoverable` — retrying cannot help until the user acts (model not pulled, HTTP 4xx,
  not a chat model): the work is parked with a hint.

The hints name the settings of the caller (`ErrorHints`): the judge's `[ollama]` ones and
`vaultmind retry` by default, the summarizer's `[trees]` ones and what re-does its summaries.

Every request asks the model not to think (`think: false`): a reasoning model (qwen3,
deepseek-r1) otherwise spends the small `num_predict` of a summary on its reasoning. A server
that refuses the field is asked again without it (and never with it again). Whatever reasoning
still comes back in the answer's text, a leading `<think>…</think>` block, an unclosed one (the
answer was cut off while thinking) or the end of one the model's template opened, is stripped
(`strip_thinking`): no reasoning is ever written as a summary or parsed as the judge's JSON.

`chat_json` asks for JSON (`format="json"` or a JSON schema) and parses the answer defensively:
a JSON object is taken from the first `{` to the matching `}` even when the model wraps it in
prose or a code fence; an answer with no JSON object raises `LlmBadAnswer`, which callers
treat as a result ("the model gave no usable answer"), not as a failure to retry.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from vaultmind.errors import VaultmindError
from vaultmind.llm.ollama_client import open_client
from vaultmind.shell import command_line

if TYPE_CHECKING:
    import ollama

    from vaultmind.config import Config

_CONFIG_HINT = "check [ollama] host in .vaultmind/config.toml"
_CANCEL_POLL_S = 0.1  # how often a call that may be interrupted looks at its event
_THINK_BLOCK_RE = re.compile(r"\A\s*<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN_RE = re.compile(r"\A\s*<(?:think|thinking|reasoning)>", re.IGNORECASE)
_THINK_OPEN_ANY_RE = re.compile(r"<(?:think|thinking|reasoning)>", re.IGNORECASE)
# the end of a block the model's template opened: the closing tag ends its line (the model
# breaks the line after it); one inside a sentence or a JSON string is the answer's text
_THINK_CLOSE_RE = re.compile(r"</(?:think|thinking|reasoning)>[ \t]*(?:\r?\n|\Z)", re.IGNORECASE)


class LlmError(VaultmindError):
    """The language model could not answer."""

    code = "llm"


class LlmUnreachable(LlmError):
    """No Ollama server answers at the configured host: wait and retry later."""

    code = "llm_unreachable"


class LlmTransient(LlmError):
    """Ollama answered badly or too slowly; a retry may succeed."""

    code = "llm_transient"


class LlmTimeout(LlmTransient):
    """Ollama took longer than the timeout to answer."""


class LlmUnrecoverable(LlmError):
    """Retrying cannot help until the configuration or the server changes."""

    code = "llm_unrecoverable"


class LlmCancelled(LlmError):
    """The call was given up because vaultmind is stopping (its answer is no longer wanted)."""

    code = "llm_cancelled"


class LlmBadAnswer(LlmError):
    """The model answered, but not with what was asked (e.g. no JSON object)."""

    code = "llm_bad_answer"

    def __init__(self, message: str, *, raw: str, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.raw = raw


@dataclass(frozen=True, slots=True)
class ErrorHints:
    """What the hints of a client's errors name: its model and timeout settings, and what to
    run once they are fixed (None: `vaultmind retry`, which runs the parked jobs again)."""

    model: str = "[ollama] chat_model"
    timeout: str = "[ollama] timeout_s"
    then: str | None = None


class OllamaChat:
    """A small, thread-safe wrapper over `ollama.Client.chat` for one model; the commands its
    errors' hints name are for `vault` (without it: for the vault of the current folder).
    With `slots`, each call first takes one (waiting for it); once `interrupt_on(event)` is
    called, a call (or its wait for a slot) ends with `LlmCancelled` as soon as `event` is set
    — a stopping daemon does not wait out a two-minute seal. `on_answer` is called, in the
    asking thread, each time the model answers (the worker pool's LLM gate opens on that only)."""

    def __init__(
        self,
        model: str,
        *,
        host: str = "http://127.0.0.1:11434",
        timeout_s: float = 30.0,
        vault: Path | None = None,
        slots: threading.Semaphore | None = None,
        hints: ErrorHints = ErrorHints(),
        on_answer: Callable[[], None] | None = None,
    ) -> None:
        if not model:
            raise LlmUnrecoverable(
                "no Ollama chat model configured", hint=f"set {hints.model} in .vaultmind/config.toml"
            )
        if timeout_s <= 0:
            raise LlmUnrecoverable(f"{hints.timeout} must be positive, got {timeout_s}")
        self._hints = hints
        self._model = model
        self._host = host
        self._timeout_s = timeout_s
        self._vault = vault
        self._client: ollama.Client | None = None
        self._lock = threading.Lock()
        self._slots = slots
        self._cancel: threading.Event | None = None
        self._on_answer = on_answer  # told, in the asking thread, each time the model answers
        self._think_field = True  # False once the server refused `think` (an Ollama before 0.9)

    @classmethod
    def from_config(cls, config: Config, *, on_answer: Callable[[], None] | None = None) -> OllamaChat:
        return cls(
            config.ollama_chat_model,
            host=config.ollama_host,
            timeout_s=config.ollama_timeout_s,
            vault=config.vault,
            on_answer=on_answer,
        )

    @property
    def model(self) -> str:
        return self._model

    @property
    def model_id(self) -> str:
        """Stable identity of the model for caches: `ollama:<model>`."""
        return f"ollama:{self._model}"

    @property
    def host(self) -> str:
        return self._host

    def interrupt_on(self, event: threading.Event) -> None:
        """End a call in flight, or waiting for a slot, with `LlmCancelled` once `event` is set."""
        self._cancel = event

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()  # type: ignore[no-untyped-call]
                self._client = None

    # -- asking ------------------------------------------------------------------------------

    def chat(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        format: Literal["json"] | Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> str:
        """The assistant's answer to `messages` ({"role", "content"} dicts), as text."""
        import httpx
        import ollama

        opts: dict[str, Any] = {"temperature": 0}
        opts.update(options or {})
        where = f"Ollama at {self._host}"
        fmt: Literal["", "json"] | dict[str, Any] | None = (
            dict(format) if isinstance(format, Mapping) else format
        )
        request: dict[str, Any] = {
            "model": self._model,
            "messages": [dict(m) for m in messages],
            "stream": False,
            "format": fmt,
            "options": opts,
        }
        self._take_slot()
        try:
            response = self._ask_without_thinking(request)
        except ollama.ResponseError as exc:
            raise self._response_error(exc, where) from exc
        # ConnectionError: the client's translation of httpx.ConnectError; a connect that times
        # out (a host that drops packets, a full backlog) finds no server either
        except (ConnectionError, httpx.ConnectTimeout) as exc:
            raise LlmUnreachable(
                f"cannot connect to {where}", hint=f"start it with `ollama serve`, or {_CONFIG_HINT}"
            ) from exc
        except httpx.TimeoutException as exc:
            raise LlmTimeout(
                f"{where} did not answer within {self._timeout_s:g} s (model {self._model!r})",
                hint=f"the model may still be loading; raise {self._hints.timeout} if this persists",
            ) from exc
        except httpx.HTTPError as exc:  # connection dropped mid-answer, protocol errors
            raise LlmTransient(
                f"request to {where} failed: {_short(exc)}",
                hint="the server broke off its answer (did Ollama stop, restart or run out of memory? see its log, "
                f"the `ollama serve` output); it is asked again later. If the host is wrong: {_CONFIG_HINT}",
            ) from exc
        except (ValueError, TypeError) as exc:  # a body that is not JSON, or of the wrong shape
            raise LlmTransient(
                f"{where} sent a malformed chat response: {_short(exc)}",
                hint=f"is {self._host} an Ollama server? {_CONFIG_HINT}",
            ) from exc
        finally:
            if self._slots is not None:
                self._slots.release()
        content = getattr(getattr(response, "message", None), "content", None)
        if not isinstance(content, str):
            raise LlmTransient(f"{where} sent a chat response without message content")
        if self._on_answer is not None:
            self._on_answer()
        return strip_thinking(content)

    def chat_json(
        self,
        system: str,
        user: str,
        *,
        schema: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Ask for a JSON object (constrained by `schema` when given) and parse it defensively."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        raw = self.chat(messages, format=schema if schema is not None else "json", options=options)
        return parse_json_object(raw)

    # -- internals ---------------------------------------------------------------------------

    def _take_slot(self) -> None:
        if self._slots is None:
            return
        while not self._slots.acquire(timeout=_CANCEL_POLL_S):
            self._check_cancel()

    def _check_cancel(self) -> None:
        if self._cancel is not None and self._cancel.is_set():
            raise LlmCancelled(f"the call to Ollama at {self._host} was given up: vaultmind is stopping")

    def _ask_without_thinking(self, request: dict[str, Any]) -> Any:
        """`_ask` with `think: false`; asked again without the field when the server refuses it."""
        import ollama

        if not self._think_field:
            return self._ask(request)
        try:
            return self._ask({**request, "think": False})
        except ollama.ResponseError as exc:
            if exc.status_code != 400 or "think" not in str(exc.error).lower():
                raise
            self._think_field = False
            return self._ask(request)

    def _ask(self, request: dict[str, Any]) -> Any:
        """The client's answer to `request`; with an interrupting event, asked on a thread of its
        own while this one watches the event (an HTTP read cannot be interrupted otherwise)."""
        client = self._get_client()
        if self._cancel is None:
            return client.chat(**request)
        outcome: dict[str, Any] = {}
        done = threading.Event()

        def ask() -> None:
            try:
                outcome["answer"] = client.chat(**request)
            except BaseException as exc:  # handed to the caller's thread, classified there
                outcome["error"] = exc
            finally:
                done.set()

        threading.Thread(target=ask, name="vaultmind-llm-call", daemon=True).start()
        while not done.wait(_CANCEL_POLL_S):
            if self._cancel.is_set():
                self.close()  # its connection goes; the thread ends with it or at the timeout
                self._check_cancel()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["answer"]

    def _get_client(self) -> ollama.Client:
        with self._lock:
            if self._client is None:
                self._client = open_client(self._host, self._timeout_s)
            return self._client

    def _response_error(self, exc: ollama.ResponseError, where: str) -> LlmError:
        message = _clip(str(exc.error))
        status = exc.status_code
        then = self._hints.then or f"`{command_line('retry', vault=self._vault)}`"
        if status == 404 or "not found" in message.lower():
            return LlmUnrecoverable(
                f"{where} has no model {self._model!r}: {message}",
                hint=f"run `ollama pull {self._model}` (or set {self._hints.model}), then {then}",
            )
        if status == 400 and "does not support" in message.lower():
            return LlmUnrecoverable(
                f"{self._model!r} is not a chat model: {message}",
                hint=f"set {self._hints.model} to a chat model such as llama3.2, then {then}",
            )
        if status >= 500 or status in (408, 429) or status < 0:
            return LlmTransient(
                f"{where} failed with HTTP {status}: {message}",
                hint="the error is on the Ollama side: see its log (the `ollama serve` output)",
            )
        return LlmUnrecoverable(f"{where} answered HTTP {status}: {message}", hint=_CONFIG_HINT)


def pulled_models(host: str, timeout_s: float) -> set[str]:
    """The models the Ollama server at `host` has (`/api/tags`); raises what the client raises
    when nothing (or no Ollama) answers."""
    client = open_client(host, timeout_s)
    try:
        return {str(getattr(m, "model", "") or "") for m in client.list().models}
    finally:
        client.close()  # type: ignore[no-untyped-call]


def has_model(pulled: set[str], model: str) -> bool:
    """Whether `model` is among the `pulled` ones: a name without a tag is its `latest`."""
    return model in pulled or (":" not in model and f"{model}:latest" in pulled)


def parse_json_object(raw: str) -> dict[str, Any]:
    """The first JSON object in `raw` (prose, code fences and trailing text tolerated)."""
    text = raw.strip()
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise LlmBadAnswer(f"the model did not answer with a JSON object: {_clip(text, 120)!r}", raw=raw)


def strip_thinking(text: str) -> str:
    """`text` without a reasoning model's thinking: leading `<think>…</think>` blocks (also
    `<thinking>`, `<reasoning>`), everything when one is never closed (the answer was cut off
    while thinking), and everything up to a closing tag whose opening the model's template
    wrote (the text starts inside the block; that tag ends its line, so an answer naming the
    tag in a sentence is not cut). An answer with no such tag is returned as is."""
    stripped = False
    while (block := _THINK_BLOCK_RE.match(text)) is not None:
        text, stripped = text[block.end() :], True
    if _THINK_OPEN_RE.match(text):
        return ""
    close = None if stripped else _THINK_CLOSE_RE.search(text)
    if close is not None and not _THINK_OPEN_ANY_RE.search(text, 0, close.start()):
        return text[close.end() :].lstrip()
    return text.lstrip() if stripped else text


def prompt_hash(*parts: str) -> str:
    """12 hex of sha256 over prompt parts: part of every LLM cache key, so a prompt change re-asks."""
    digest = hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()
    return digest[:12]


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]
