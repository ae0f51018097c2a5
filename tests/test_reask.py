"""Decisions the rules took while no Ollama answered are asked again once one does: the real
worker pool against the fake Ollama on loopback, which is away at first and comes back on the
same port (as an Ollama installed or started later)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.fakes import FakeOllama, RecordedRequest, free_port
from vaultmind.admission.decide import Policy
from vaultmind.config import Config
from vaultmind.errors import ConfigError
from vaultmind.memory import Memory
from vaultmind.queue.status import queue_status
from vaultmind.queue.workers import WorkerPool
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.view import maintain, tree_view

from .conftest import running_daemon, until
from .test_admission import BORDERLINE, SUBSTANTIVE, chat_note, make_config

CHAT = "sources/chat/slack/acme/general/2024-03-04.md"
KEPT_BY_RULES = [BORDERLINE, "The weather was okay today, a bit cloudy in the afternoon"]
DROPPED_BY_RULES = ["Traffic was heavy on the way back from the city", "The coffee place downtown changed its menu again"]
MESSAGES = [  # (author, text, _): one a minute, the newest last
    ("Alice Chen", "ok lol", ""),
    ("Bob Stone", SUBSTANTIVE, ""),
    ("Dan Moe", KEPT_BY_RULES[0], ""),
    ("Carol Diaz", DROPPED_BY_RULES[0], ""),
    ("Dan Moe", KEPT_BY_RULES[1], ""),
    ("Eve Park", DROPPED_BY_RULES[1], ""),
]
NEWEST_FIRST = [DROPPED_BY_RULES[1], KEPT_BY_RULES[1], DROPPED_BY_RULES[0], KEPT_BY_RULES[0]]
LATER = datetime(2030, 1, 1, tzinfo=UTC)
FALLBACK = FallbackSummarizer()
MINUTE_MS = 60_000


def judge(request: RecordedRequest) -> str:
    """The model's view: the traffic is worth remembering, the hike and the weather are not."""
    text = json.dumps(request.body)
    important = "Traffic" in text or "coffee" in text
    return json.dumps({"importance": 0.9 if important else 0.2, "reason": "judged"})


def reask_config(vault: Path, port: int, per_pass: int = 200) -> Config:
    return make_config(
        vault,
        f'[ollama]\nhost = "http://127.0.0.1:{port}"\ntimeout_s = 5\n\n'
        f'[admission]\nreask_per_pass = {per_pass}\n\n[trees]\nsummarizer = "fallback"\n',
    )


def decisions(memory: Memory) -> dict[str, tuple[str, str]]:
    """Text → (decision, stage) of the messages of the gray band."""
    rows = memory.index.query(
        "SELECT l.text, a.decision, a.stage FROM admission a JOIN leaves l ON l.id = a.leaf_id AND l.note_path = a.note_path"
    )
    return {str(t): (str(d), str(s)) for t, d, s in rows if t in KEPT_BY_RULES + DROPPED_BY_RULES}


def asked(fake: FakeOllama) -> list[str]:
    """The messages the model was asked about, in order."""
    texts = KEPT_BY_RULES + DROPPED_BY_RULES
    return [t for r in fake.requests_to("/api/chat") for t in texts if t in json.dumps(r.body)]


def summarized(memory: Memory) -> set[str]:
    rows = memory.index.query(
        "SELECT DISTINCT l.text FROM summaries s, unnest(s.leaf_ids) AS u(id) JOIN leaves l ON l.id = u.id"
    )
    return {str(r[0]) for r in rows}


class Clock:
    """The pool's clock, moved on by hand past the LLM gate's backoff."""

    def __init__(self) -> None:
        self.now = 1_800_000_000_000

    def __call__(self) -> int:
        return self.now


@contextmanager
def pool_of(memory: Memory, clock: Clock) -> Iterator[WorkerPool]:
    with WorkerPool(memory.config, memory, clock=clock) as pool:
        yield pool


def decided_by_rules(vault: Path, port: int, per_pass: int = 200) -> tuple[Memory, Clock]:
    """The vault synced and its gray band decided while nothing listens at `port`."""
    chat_note(vault, CHAT, MESSAGES)
    memory = Memory.open(reask_config(vault, port, per_pass))
    memory.sync()
    clock = Clock()
    with pool_of(memory, clock) as pool:
        pool.reconcile()
        pool.drain(timeout_s=20)
    return memory, clock


def test_rule_decisions_are_asked_again_when_ollama_comes_back_and_the_trees_follow(vault: Path) -> None:
    """Ollama away: the gray band is decided by rules, and the kept messages are summarized.
    Ollama back: a pass asks each of them once, newest first; an answer that differs changes
    the decision; the summary over a message now dropped turns stale and is sealed again
    without it, a message now kept joins a summary. Before, the rules' decisions stayed for
    good: nothing asked the model about them again."""
    port = free_port()
    memory, clock = decided_by_rules(vault, port)
    try:
        assert decisions(memory) == {
            **{t: ("admitted", "fallback") for t in KEPT_BY_RULES},
            **{t: ("dropped", "fallback") for t in DROPPED_BY_RULES},
        }
        assert memory.status()["admission"]["by_rules"] == 4
        maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK)
        assert summarized(memory) & set(KEPT_BY_RULES + DROPPED_BY_RULES) == set(KEPT_BY_RULES)
        user_files = {p: p.read_bytes() for p in vault.rglob("*.md") if "summaries" not in p.parts}

        with FakeOllama(responder=judge, port=port) as fake, pool_of(memory, clock) as pool:
            clock.now += 11 * MINUTE_MS  # past the gate's backoff
            assert pool.reconcile()["created"] == 1  # a probe: no model is known to answer yet
            pool.drain(timeout_s=30)
            assert asked(fake) == NEWEST_FIRST
            assert pool.status()["llm_gate"] == "open"
        assert decisions(memory) == {
            **{t: ("dropped", "llm") for t in KEPT_BY_RULES},
            **{t: ("admitted", "llm") for t in DROPPED_BY_RULES},
        }
        assert memory.status()["admission"]["by_rules"] == 0
        assert queue_status(memory.index)["health"] == "ok"
        stale = tree_view(memory, "slack:acme/general")["stale"]
        assert stale and "no longer admitted" in stale[0]["why"], stale

        report = maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK)
        assert report.unsealed and report.sealed
        assert summarized(memory) & set(KEPT_BY_RULES + DROPPED_BY_RULES) == set(DROPPED_BY_RULES)
        assert memory.index.scalar("SELECT count(*) FROM summaries WHERE stale") == 0
        assert {p: p.read_bytes() for p in vault.rglob("*.md") if "summaries" not in p.parts} == user_files
        rows = memory.index.query("SELECT * FROM summaries ORDER BY id")
        memory.reindex()  # a cold rebuild gives the same decisions (the answers are cached) and trees
        assert memory.index.query("SELECT * FROM summaries ORDER BY id") == rows
        assert decisions(memory)[KEPT_BY_RULES[0]] == ("dropped", "llm")
    finally:
        memory.close()


def test_a_pass_asks_at_most_its_cap_newest_first_and_a_restart_resumes(vault: Path) -> None:
    """`[admission] reask_per_pass = 2`: a pass asks two, the newest; the next start's pass (a
    model is known to answer now) asks the next two, and then nothing is left to ask."""
    port = free_port()
    memory, clock = decided_by_rules(vault, port, per_pass=2)
    try:
        with FakeOllama(responder=judge, port=port) as fake:
            with pool_of(memory, clock) as pool:
                clock.now += 11 * MINUTE_MS
                pool.reconcile()
                pool.drain(timeout_s=30)
                assert asked(fake) == NEWEST_FIRST[:2]
                assert pool.drain(timeout_s=5) == 0  # the cap: the rest waits for the next pass
            assert memory.status()["admission"]["by_rules"] == 2
            memory.close()
            memory = Memory.open(reask_config(vault, port, per_pass=2))  # a restart
            with pool_of(memory, clock) as pool:
                assert pool.reconcile()["created"] == 2
                pool.drain(timeout_s=30)
                assert asked(fake) == NEWEST_FIRST
                assert pool.reconcile()["created"] == 0
        assert memory.status()["admission"]["by_rules"] == 0
    finally:
        memory.close()


def test_a_pass_stops_when_ollama_goes_away_and_the_next_one_goes_on(vault: Path) -> None:
    """Ollama answers the probe, then goes away: the next job finds none, the pass's queued jobs
    are cancelled, the decisions left stay the rules', and the queue stays healthy (nothing
    waits, nothing fails); once it is back, a later pass asks the rest."""
    port = free_port()
    memory, clock = decided_by_rules(vault, port)
    try:
        with FakeOllama(responder=judge, port=port) as fake, pool_of(memory, clock) as pool:
            clock.now += 11 * MINUTE_MS
            pool.reconcile()
            assert pool.run_once()  # the probe: answered, the rest of the pass queued
            assert len(asked(fake)) == 1
            fake.stop()
            pool.context.close()  # its kept-alive connection to the fake went with it, as with an Ollama that exits
            assert pool.run_once()  # finds no Ollama: the pass ends
            assert pool.status()["llm_gate"] == "closed"
            assert pool.drain(timeout_s=5) == 0
            assert memory.status()["admission"]["by_rules"] == 3
            status = queue_status(memory.index)
            assert status["health"] == "ok" and status["depth"] == 0, status
            assert memory.index.scalar("SELECT count(*) FROM jobs WHERE kind = 'llm_reask' AND status = 'cancelled'") == 2

            fake.start()
            clock.now += 11 * MINUTE_MS
            assert pool.reconcile()["created"] == 1  # the last try found none: a probe first
            pool.drain(timeout_s=30)
        assert memory.status()["admission"]["by_rules"] == 0
        assert sorted(asked(fake)) == sorted(KEPT_BY_RULES + DROPPED_BY_RULES)  # each once
    finally:
        memory.close()


def test_no_reask_with_a_cap_of_zero_and_a_bad_cap_is_refused(vault: Path) -> None:
    port = free_port()
    memory, clock = decided_by_rules(vault, port, per_pass=0)
    try:
        with FakeOllama(responder=judge, port=port) as fake, pool_of(memory, clock) as pool:
            clock.now += 11 * MINUTE_MS
            assert pool.reconcile()["created"] == 0
            assert pool.drain(timeout_s=5) == 0 and asked(fake) == []
    finally:
        memory.close()
    for bad in (-1, 1.5, True, "10"):
        with pytest.raises(ConfigError, match="reask_per_pass"):
            Policy.from_extra({"admission.reask_per_pass": bad}, "m")


@pytest.mark.slow
def test_the_daemon_asks_again_a_pass_at_each_start(vault: Path) -> None:
    """The real daemon, started once Ollama is there: its workers' first pass asks the newest
    two (`reask_per_pass = 2`) and no more; stopped and started again, the next pass asks the
    other two."""
    port = free_port()
    memory, _ = decided_by_rules(vault, port, per_pass=2)
    memory.close()
    config = reask_config(vault, port, per_pass=2)
    with FakeOllama(responder=judge, port=port) as fake:
        with running_daemon(config) as (memory, _daemon):
            assert until(lambda: len(asked(fake)) == 2)
            assert until(lambda: memory.status()["admission"]["by_rules"] == 2)
            time.sleep(1.5)  # the workers poll every second: nothing more is asked in this pass
            assert asked(fake) == NEWEST_FIRST[:2]
        with running_daemon(config) as (memory, _daemon):
            assert until(lambda: memory.status()["admission"]["by_rules"] == 0)
            assert asked(fake) == NEWEST_FIRST
            assert decisions(memory)[KEPT_BY_RULES[0]] == ("dropped", "llm")


def test_a_model_switched_to_is_probed_before_a_whole_pass_is_queued(vault: Path) -> None:
    """`[ollama] chat_model` changed, after the old model answered, to one not pulled: the new
    model is not known to answer, so the next pass queues its probe alone, which fails once
    (before: the whole pass was queued at once, and each of its jobs failed)."""
    port = free_port()
    memory, clock = decided_by_rules(vault, port, per_pass=2)
    try:
        with FakeOllama(responder=judge, port=port) as fake:
            with pool_of(memory, clock) as pool:
                clock.now += 11 * MINUTE_MS
                pool.reconcile()
                pool.drain(timeout_s=30)
            assert len(asked(fake)) == 2
            memory.close()
            memory = Memory.open(replace(reask_config(vault, port, per_pass=2), ollama_chat_model="not-pulled"))
            with pool_of(memory, clock) as pool:
                assert pool.reconcile()["created"] == 1  # the probe of the new model
                pool.drain(timeout_s=30)
            assert memory.index.scalar("SELECT count(*) FROM jobs WHERE kind = 'llm_reask' AND status = 'failed'") == 1
            assert memory.status()["admission"]["by_rules"] == 2
    finally:
        memory.close()


def test_the_gray_jobs_cancelled_with_the_rules_decision_are_still_asked_when_ollama_comes_back(vault: Path) -> None:
    """With no Ollama, the first gray leaf's job decides every gray leaf by the rules and
    cancels the other gray leaves' jobs (`importance.cancel_decided`). Those leaves are not
    lost to the model: the re-ask reads the rules' decisions, not the jobs, and asks each of
    them once Ollama answers."""
    port = free_port()
    memory, clock = decided_by_rules(vault, port)
    try:
        jobs = memory.index.query("SELECT status, count(*) FROM jobs WHERE kind = 'llm_importance' GROUP BY ALL ORDER BY ALL")
        assert jobs == [("cancelled", 3), ("done", 1)], jobs
        with FakeOllama(responder=judge, port=port) as fake, pool_of(memory, clock) as pool:
            clock.now += 11 * MINUTE_MS  # past the gate's backoff
            pool.reconcile()
            pool.drain(timeout_s=30)
            assert asked(fake) == NEWEST_FIRST
        assert {stage for _, stage in decisions(memory).values()} == {"llm"}
        assert memory.status()["admission"]["by_rules"] == 0
    finally:
        memory.close()
