"""Job kinds: what a job of each kind does, whether it needs the LLM, and how to re-derive it.

A kind is registered once (`JobKind`); the worker pool claims, runs and settles jobs through
it, and `reconcile` asks each kind which jobs *should* exist given the index (`wanted`), so
work lost in a crash — or never enqueued — is recreated, and work whose target is gone is
cancelled. Handlers must be idempotent: a job may run again after a crash between its side
effects and its settlement.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb

from vaultmind.queue.store import Job, NewJob

if TYPE_CHECKING:
    from vaultmind.config import Config
    from vaultmind.index.store import Index
    from vaultmind.llm.ollama_chat import OllamaChat


class JobContext:
    """What a handler gets: the index, the config, the clock and a shared chat client. With
    `stopping` (the worker pool's stop), a call of that client in flight ends with
    `LlmCancelled` once it is set: a stop does not wait out a slow answer (up to `[ollama]
    timeout_s`), and the pool puts the job back without counting an attempt."""

    def __init__(
        self,
        index: Index,
        config: Config,
        clock: Callable[[], int],
        stopping: threading.Event | None = None,
    ):
        self.index = index
        self.config = config
        self.clock = clock
        self._stopping = stopping
        self._chat: OllamaChat | None = None
        self._lock = threading.Lock()
        self._heard = threading.local()  # the model's answers each worker thread received

    def chat(self) -> OllamaChat:
        """The Ollama chat client (created on first use, shared by the workers); each answer
        it receives is counted for the thread that asked (`answers_heard`)."""
        from vaultmind.llm.ollama_chat import OllamaChat

        with self._lock:
            if self._chat is None:
                self._chat = OllamaChat.from_config(self.config, on_answer=self.model_answered)
                if self._stopping is not None:
                    self._chat.interrupt_on(self._stopping)
            return self._chat

    def model_answered(self) -> None:
        """Count an answer of the model for this thread (the chat client calls it; a handler
        that reaches a model another way calls it too)."""
        self._heard.count = self.answers_heard() + 1

    def answers_heard(self) -> int:
        """How many answers of the model this thread has received: the worker pool compares
        it before and after a job, and only a job that heard one re-opens the LLM gate (one
        that ended stale, from a cached answer or with nothing to do proves nothing)."""
        count: int = getattr(self._heard, "count", 0)
        return count

    def close(self) -> None:
        with self._lock:
            if self._chat is not None:
                self._chat.close()
                self._chat = None


Handler = Callable[[JobContext, Job], str | None]
"""Runs one job; returns an optional note (kept as the done job's `last_error` column for
diagnosis, e.g. "target gone"). Raising settles the job by the exception's failure class."""

Wanted = Callable[[duckdb.DuckDBPyConnection, "Config"], Sequence[NewJob]]
Repair = Callable[[duckdb.DuckDBPyConnection, "Config"], int]


@dataclass(frozen=True, slots=True)
class JobKind:
    name: str
    run: Handler
    llm_bound: bool = False
    max_attempts: int = 5
    wanted: Wanted | None = None  # every job that should exist now; None: not reconcilable
    # what an LLM job does instead when no Ollama answers at the host (its try found none, or
    # the gate is closed): settled done, asking nothing. None: the job waits for Ollama.
    without_llm: Handler | None = None
    repair: Repair | None = None  # bring derived rows in line with finished work (run before `wanted`)
