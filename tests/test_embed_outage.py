"""Vectors through Ollama in a serving memory when the embedder fails or changes: texts saved
while it was down get their vectors later and the resident vectors take them in; a model whose
dimension changed behind its name is said, searched lexically, and embedded again."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import write
from tests.fakes import FakeOllama
from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval import dense

BIG = "\n\n".join(f"# Part {i}\n\nParagraph number {i} about topic{i} and gardens." for i in range(12)) + "\n"


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(embed_models={"nomic-embed-text": 8}) as server:
        yield server


def _open(vault: Path, fake: FakeOllama) -> Memory:
    return Memory.open(load_config(vault, embed_provider="ollama", ollama_host=fake.host))


def _stored(memory: Memory) -> int:
    """Leaves with a vector of the memory's model in the index."""
    return int(
        memory.index.scalar(
            """SELECT count(DISTINCT l.id) FROM leaves l JOIN embeddings e
               ON e.content_hash = l.content_hash AND e.model = ?""",
            [memory.vectors.model_id],
        )
    )


def _nearest(memory: Memory, path: str) -> list[str]:
    """For each leaf of `path`, the leaf the resident vectors find nearest its own text."""
    assert memory.embedder is not None
    leaves = memory.index.query("SELECT id, text FROM leaves WHERE note_path = ? ORDER BY id", [path])
    vectors = memory.embedder.embed([text for _, text in leaves])
    return [hits[0][0] if (hits := memory.vectors.search(v, 1)) else "" for v in vectors]


def test_leaves_saved_while_ollama_failed_reach_the_resident_vectors_with_the_next_save(
    vault: Path, fake: FakeOllama
) -> None:
    """A save while Ollama fails keeps its lexical rows and defers its vectors; the next save
    once it answers embeds those too (the backlog), and the serving memory's resident vectors
    take them in: before, a saved 12-leaf note's 3 vectors were not more than its 12 leaves,
    the resident vectors were not told, and the deferred leaves stayed out of dense search."""
    write(vault, "B.md", BIG)
    for k in range(80):  # the rows a save replaces stay few: no reload for them
        write(vault, f"n{k}.md", f"# N{k}\n\nfiller note {k} words here\n")
    with _open(vault, fake) as memory:
        memory.sync()
        assert memory.vectors.size == _stored(memory) == memory.index.scalar("SELECT count(*) FROM leaves")
        fake.failure, fake.failure_paths, fake.failure_times = "500", {"/api/embed"}, None
        write(vault, "A.md", "# Alpha\n\nzebra migration notes alpha\n\n# Beta\n\nzebra migration beta\n")
        memory.sync_paths(["A.md"])
        assert memory.syncer.embed_error is not None and "HTTP 500" in memory.syncer.embed_error
        assert memory.index.scalar("SELECT count(*) FROM leaves WHERE note_path = 'A.md'") == 2  # the lexical rows are in
        assert memory.vectors.size == _stored(memory) == memory.index.scalar("SELECT count(*) FROM leaves") - 2
        fake.failure = None
        write(vault, "B.md", BIG.replace("Paragraph number 3 about", "Paragraph number 3 (edited) about"))
        stats = memory.sync_paths(["B.md"])
        assert memory.syncer.embed_error is None
        assert stats.embedded == 3  # B's changed leaf and A's two
        assert memory.vectors.size == _stored(memory) == memory.index.scalar("SELECT count(*) FROM leaves")
        a_leaves = [row[0] for row in memory.index.query("SELECT id FROM leaves WHERE note_path = 'A.md' ORDER BY id")]
        assert _nearest(memory, "A.md") == a_leaves



def _dims(memory: Memory) -> list[tuple[int, int]]:
    return [(int(d), int(n)) for d, n in memory.index.query("SELECT dim, count(*) FROM embeddings GROUP BY dim ORDER BY dim")]


def _garden_vault(vault: Path) -> int:
    for k in range(20):
        write(vault, f"n{k}.md", f"# N{k}\n\nfiller note {k} about gardens\n")
    return 20


def test_a_model_that_changed_its_dimension_is_searched_lexically_then_embedded_again(vault: Path) -> None:
    """The model behind a name answers vectors of another dimension (replaced by a pull): a
    search and a walk fall back to the lexical signals (before, a matrix product of mismatched
    shapes raised), and the next whole sync drops the old vectors and embeds every text again
    (before, it found nothing missing: status said every text had its vector)."""
    leaves = _garden_vault(vault)
    with FakeOllama(embed_models={"nomic-embed-text": 8}) as fake, _open(vault, fake) as memory:
        memory.sync()
        assert _dims(memory) == [(8, leaves)]
    with FakeOllama(embed_models={"nomic-embed-text": 16}) as fake, _open(vault, fake) as memory:
        assert memory.vectors.size == leaves  # the 8-d rows, before any sync
        hits = memory.search("filler note 7 about gardens", limit=3)["hits"]
        assert hits and hits[0]["note_path"] == "n7.md"
        assert all("dense" not in hit["breakdown"] for hit in hits)
        assert memory.walk("filler note 7 about gardens")["hits"]
        assert memory.vectors.asked_width == 16
        assert memory.sync().embedded == leaves
        assert _dims(memory) == [(16, leaves)]
        assert memory.status()["embeddings"]["missing"] == 0
        assert memory.vectors.size == leaves
        assert _nearest(memory, "n7.md") == [row[0] for row in memory.index.query("SELECT id FROM leaves WHERE note_path = 'n7.md'")]


def test_a_save_after_the_model_changed_its_dimension_embeds_every_text_again(vault: Path, fake: FakeOllama) -> None:
    """A live memory whose model changes dimension between two saves: the save drops the old
    vectors, embeds every text again, and the resident vectors reload (before: the Ollama
    embedder refused every answer from then on, and dense search stayed on the old vectors)."""
    leaves = _garden_vault(vault)
    with _open(vault, fake) as memory:
        memory.sync()
        assert memory.vectors.size == leaves
        fake.embed_models["nomic-embed-text:latest"] = 16
        write(vault, "new.md", "# New\n\nzebra gardens\n")
        stats = memory.sync_paths(["new.md"])
        assert memory.syncer.embed_error is None
        assert stats.embedded == leaves + 1 and _dims(memory) == [(16, leaves + 1)]
        assert memory.vectors.size == leaves + 1
        new = [row[0] for row in memory.index.query("SELECT id FROM leaves WHERE note_path = 'new.md'")]
        assert _nearest(memory, "new.md") == new
        assert memory.search("zebra gardens", limit=1)["hits"][0]["breakdown"]["dense_rank"] == 1


@pytest.mark.parametrize(("first", "then"), [("nomic-embed-text", "nomic-embed-text:latest"), ("nomic-embed-text:latest", "nomic-embed-text")])
def test_a_model_named_with_or_without_its_latest_tag_keeps_its_vectors(
    vault: Path, fake: FakeOllama, first: str, then: str
) -> None:
    """Ollama gives a name without a tag its `latest`: both spellings are one model, whose
    vectors are kept when the setting changes from one to the other (before, each was a model
    id of its own: every text embedded again)."""
    leaves = _garden_vault(vault)
    with Memory.open(load_config(vault, embed_provider="ollama", ollama_host=fake.host, embed_model=first)) as memory:
        assert memory.sync().embedded == leaves
    with Memory.open(load_config(vault, embed_provider="ollama", ollama_host=fake.host, embed_model=then)) as memory:
        assert memory.sync().embedded == 0
        assert memory.status()["embeddings"]["missing"] == 0 and memory.vectors.size == leaves


def test_vectors_stored_under_the_tagged_name_are_kept(vault: Path, fake: FakeOllama) -> None:
    """An index whose vectors were stored under `ollama:<name>:latest` (a setting that wrote
    the tag) keeps them: the next whole sync takes them as the model's, embedding nothing."""
    leaves = _garden_vault(vault)
    with _open(vault, fake) as memory:
        memory.sync()
        with memory.index.transaction() as con:
            con.execute("UPDATE embeddings SET model = 'ollama:nomic-embed-text:latest'")
    with _open(vault, fake) as memory:
        assert memory.vectors.model_id == "ollama:nomic-embed-text"
        assert memory.sync().embedded == 0 and memory.vectors.size == leaves
        assert memory.index.query("SELECT DISTINCT model FROM embeddings") == [("ollama:nomic-embed-text",)]


def _outage(fake: FakeOllama, how: str) -> None:
    """Ollama stops embedding: an error on its side, the model gone, or no answer in time."""
    if how == "model gone":
        fake.embed_models.clear()
    else:
        fake.failure, fake.failure_paths, fake.failure_times = how, {"/api/embed"}, None


@pytest.mark.parametrize("how", ["500", "model gone", "hang"])
def test_questions_are_answered_without_dense_search_while_ollama_cannot_embed(vault: Path, how: str) -> None:
    """Ollama fails to embed a question (HTTP 500, its model removed, no answer within
    `[ollama] timeout_s`): walk, search and query_source answer from the other signals and
    their `notice` says dense search was left out; the evidence block says it too, and the
    daemon's warm-up does not fail. Before, every one of them raised the EmbedError."""
    write(vault, "Garden.md", "# Garden\n\nWe plant peppers in April with Alice.\n")
    write(vault, "Bikes.md", "# Bikes\n\nThe bike needs new brakes.\n")
    with FakeOllama(embed_models={"nomic-embed-text": 8}) as fake:
        config = load_config(vault, embed_provider="ollama", ollama_host=fake.host, ollama_timeout_s=1.0)
        with Memory.open(config) as memory:
            memory.sync()
            _outage(fake, how)
            walked = memory.query("walk", {"query": "peppers", "evidence": True})
            searched = memory.search("peppers")
            sourced = memory.query("query_source", {"kind": "note", "query": "peppers"})
            for answer in (walked, searched, sourced):
                assert answer["hits"][0]["note_path"] == "Garden.md"
                assert "no dense search" in answer["notice"]
            assert "No dense search" in walked["evidence"]
            assert all("dense" not in hit["breakdown"] for hit in searched["hits"])
            memory.warm()
            fake.failure, fake.embed_models["nomic-embed-text:latest"] = None, 8  # Ollama is back: no notice
            dense.OUTAGES.clock = _later(dense.RETRY_AFTER_S)  # once the failure is not remembered any more
            assert "notice" not in memory.walk("peppers")


def test_a_sync_while_ollama_fails_says_so_once(vault: Path, fake: FakeOllama, caplog: pytest.LogCaptureFixture) -> None:
    """A sync whose save fails to embed does not ask again for the backlog in the same sync:
    one warning, one failed request. Before, the same warning came twice (and a timing-out
    Ollama was waited for twice)."""
    write(vault, "A.md", "# A\n\nfirst note about gardens\n")
    with _open(vault, fake) as memory:
        memory.sync()
        fake.failure, fake.failure_paths, fake.failure_times = "500", {"/api/embed"}, None
        write(vault, "B.md", "# B\n\nsecond note about bikes\n")
        fake.clear()
        with caplog.at_level("WARNING", logger="vaultmind"):
            memory.sync()
        deferred = [r for r in caplog.records if r.getMessage().startswith("embeddings deferred")]
        assert len(deferred) == 1 and "HTTP 500" in deferred[0].getMessage()
        assert len(fake.requests_to("/api/embed")) == 1
        assert memory.syncer.embed_error is not None
        fake.failure = None
        assert memory.sync().embedded == 1  # the next sync embeds what waited


def _later(seconds: float) -> Callable[[], float]:
    """A clock `seconds` ahead of the real one."""
    return lambda: time.monotonic() + seconds


def test_a_question_right_after_an_embed_failure_does_not_wait_for_ollama_again(vault: Path) -> None:
    """Ollama not answering in time: the first question waits `[ollama] timeout_s` and is
    answered without dense search; the questions of the next `RETRY_AFTER_S` seconds get the
    same notice without asking it (no request, no wait); after that one asks again, and once
    Ollama answers dense search is back and the failure forgotten. Before, every question
    waited the full timeout."""
    write(vault, "Garden.md", "# Garden\n\nWe plant peppers in April with Alice.\n")
    now = [1000.0]
    dense.OUTAGES.clock = lambda: now[0]
    with FakeOllama(embed_models={"nomic-embed-text": 8}) as fake:
        config = load_config(vault, embed_provider="ollama", ollama_host=fake.host, ollama_timeout_s=1.0)
        with Memory.open(config) as memory:
            memory.sync()
            fake.failure, fake.failure_paths, fake.failure_times = "hang", {"/api/embed"}, None
            fake.clear()
            first = memory.walk("peppers")
            assert "did not answer within 1 s" in first["notice"] and len(fake.requests_to("/api/embed")) == 1
            now[0] += dense.RETRY_AFTER_S - 1
            for answer in (memory.walk("peppers"), memory.search("peppers"), memory.query("walk", {"query": "peppers", "evidence": True})):
                assert answer["notice"] == first["notice"] and answer["hits"][0]["note_path"] == "Garden.md"
            assert len(fake.requests_to("/api/embed")) == 1  # none of them asked Ollama
            now[0] += 1
            assert memory.search("peppers")["notice"] == first["notice"]
            assert len(fake.requests_to("/api/embed")) == 2  # asked again, failed again: remembered anew
            assert "notice" in memory.walk("peppers") and len(fake.requests_to("/api/embed")) == 2
            fake.failure = None
            now[0] += dense.RETRY_AFTER_S
            back = memory.search("peppers")
            assert "notice" not in back and "dense" in back["hits"][0]["breakdown"]
            fake.failure = "500"  # a new failure is found by the next question: the old one is forgotten
            assert "HTTP 500" in memory.walk("peppers")["notice"]
            assert len(fake.requests_to("/api/embed")) == 4


def test_an_outage_is_remembered_per_provider_and_retried_by_one_question_at_a_time() -> None:
    """Another host or model is asked as usual; once the failure is old enough the first caller
    retries and the others are still told it holds until that one answers or fails."""
    now = [0.0]
    outages = dense.Outages(clock=lambda: now[0], retry_after_s=30.0)
    down, other_model, other_host = ("http://a:1", "ollama:m"), ("http://a:1", "ollama:n"), ("http://b:1", "ollama:m")
    outages.failed(down, "timed out")
    assert outages.recent(down) == "timed out"
    assert outages.recent(other_model) is None and outages.recent(other_host) is None
    now[0] = 30.0
    assert outages.recent(down) is None  # this caller retries …
    assert outages.recent(down) == "timed out"  # … and the next one does not wait for it
    outages.answered(down)
    assert outages.recent(down) is None


def test_questions_from_several_threads_at_once_ask_a_failing_ollama_once(vault: Path) -> None:
    """The daemon answers on several threads: the failure recorded by one is seen by the
    others (one request while it is remembered), and every answer has the notice."""
    write(vault, "Garden.md", "# Garden\n\nWe plant peppers in April with Alice.\n")
    with FakeOllama(embed_models={"nomic-embed-text": 8}) as fake:
        config = load_config(vault, embed_provider="ollama", ollama_host=fake.host)
        with Memory.open(config) as memory:
            memory.sync()
            fake.failure, fake.failure_paths, fake.failure_times = "500", {"/api/embed"}, None
            fake.clear()
            assert "HTTP 500" in memory.search("peppers")["notice"]
            with ThreadPoolExecutor(4) as pool:
                answers = list(pool.map(lambda _: memory.search("peppers"), range(8)))
            assert all("HTTP 500" in answer["notice"] for answer in answers)
            assert len(fake.requests_to("/api/embed")) == 1
