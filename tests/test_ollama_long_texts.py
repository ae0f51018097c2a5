"""Texts longer than an Ollama embedding model reads (a long email is one leaf): sent in windows
that fit its context, learned from Ollama or set, their vectors averaged; and the stored vectors
of long texts embedded again when the windows change. Through the real client against the fake
server, which reads an input only up to the model's context, as Ollama does."""

from __future__ import annotations

import random
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import write, write_chat
from tests.fakes import FakeOllama, fake_vector, free_port
from tests.fakes.ollama_server import truncated
from vaultmind.config import load_config
from vaultmind.embed.ollama import DEFAULT_CONTEXT, SERVER_CONTEXT, OllamaEmbedder, context_of
from vaultmind.errors import ConfigError, EmbedError
from vaultmind.markdown.spans import hard_split, window_spans
from vaultmind.markdown.tokens import count_tokens
from vaultmind.memory import Memory

MODEL = "nomic-embed-text"
WORDS = "the harbour boats sailed at dawn while gulls circled over quiet water and nets dried on the pier".split()


def long_text(words: int, seed: int = 7) -> str:
    """An email of `words` plain words in paragraphs of forty."""
    rng = random.Random(seed)
    paragraphs = [" ".join(rng.choice(WORDS) for _ in range(40)) + "." for _ in range(words // 40)]
    return "\n\n".join(paragraphs)


def unit(vector: list[float]) -> Any:
    array = np.asarray(vector, dtype=np.float32)
    return array / np.linalg.norm(array)


def sent_texts(fake: FakeOllama) -> list[str]:
    """The texts embedded, but the probe of the model's dimension."""
    texts = [text for request in fake.requests_to("/api/embed") for text in request.body["input"]]
    return [text for text in texts if text != "dimension probe"]


def test_a_text_longer_than_the_models_context_is_the_mean_of_windows_it_reads_whole() -> None:
    """Before, the long text was sent whole and the model read its first 512 tokens: its
    vector was that of its beginning. Now its windows each fit, together they hold all its
    words, and its vector is their token-weighted mean; a short text is sent as before."""
    text, short = long_text(1600), "a short note about boats"
    with FakeOllama(embed_models={MODEL: 8}, contexts={MODEL: 512}, num_ctx={MODEL: 8192}) as fake:
        embedder = OllamaEmbedder(MODEL, host=fake.host, timeout_s=5.0, batch=4)
        try:
            vectors = embedder.embed([short, text])
            assert embedder.context == 512 and embedder.window_tokens < 512
        finally:
            embedder.close()
        assert len(fake.requests_to("/api/show")) == 1
        sent = sent_texts(fake)
    assert sent[0] == short and np.allclose(vectors[0], unit(fake_vector(MODEL, short, 8)), atol=1e-6)
    windows = sent[1:]
    assert len(windows) >= 4
    assert all(truncated(window, 512) == window for window in windows)  # each read to its end
    assert " ".join(windows).split() == text.split()  # and nothing of the text left out
    expected = sum(unit(fake_vector(MODEL, window, 8)) * count_tokens(window) for window in windows)
    assert np.allclose(vectors[1], expected / np.linalg.norm(expected), atol=1e-6)
    assert not np.allclose(vectors[1], unit(fake_vector(MODEL, truncated(text, 512), 8)), atol=1e-3)


@pytest.mark.parametrize(
    ("info", "parameters", "context"),
    [
        ({"general.architecture": "nomic-bert", "nomic-bert.context_length": 2048}, "num_ctx                        8192", 2048),
        ({"bert.context_length": 512}, "", 512),  # mxbai-embed-large
        ({"bert.context_length": 8192}, "", SERVER_CONTEXT),  # no num_ctx: Ollama's default caps it
        ({"qwen3.context_length": 40960}, 'stop "<|im_end|>"\nnum_ctx 4096', 4096),
        ({"general.architecture": "x"}, "", DEFAULT_CONTEXT),
        (None, None, DEFAULT_CONTEXT),
    ],
)
def test_the_context_is_what_ollama_reads(info: dict[str, Any] | None, parameters: str | None, context: int) -> None:
    assert context_of(info, parameters) == context


@pytest.mark.parametrize(
    "server",
    [
        {"show_model_info": False},  # `/api/show` without `model_info` (older servers): the client cannot read it
        {"failure": "404", "failure_paths": {"/api/show"}},  # a proxy serving `/api/embed` only: 404, no model named
    ],
    ids=["no-model-info", "no-details-route"],
)
def test_a_server_whose_model_details_say_nothing_is_read_in_default_windows(server: dict[str, Any]) -> None:
    """A server whose `/api/show` tells nothing of the model: the texts are embedded all the
    same, in windows of the default context (before, a proxy without the route failed every
    embedding with advice to pull the model)."""
    options = {key: value for key, value in server.items() if key != "show_model_info"}
    with FakeOllama(embed_models={MODEL: 8}, **options) as fake:
        fake.show_model_info = server.get("show_model_info", True)
        embedder = OllamaEmbedder(MODEL, host=fake.host, timeout_s=5.0)
        try:
            assert embedder.embed([long_text(1200)]).shape == (1, 8)
            assert embedder.context == DEFAULT_CONTEXT
        finally:
            embedder.close()
        assert len(sent_texts(fake)) >= 3


def test_a_model_ollama_does_not_have_is_said_when_its_details_are_asked() -> None:
    with FakeOllama(embed_models={"mxbai-embed-large": 8}) as fake:
        embedder = OllamaEmbedder(MODEL, host=fake.host, timeout_s=5.0)
        try:
            with pytest.raises(EmbedError, match="has no model") as raised:
                embedder.embed(["a short note"])
        finally:
            embedder.close()
        assert "ollama pull" in (raised.value.hint or "") and fake.requests_to("/api/embed") == []


def test_a_set_context_is_used_without_asking_ollama(vault: Path) -> None:
    write(vault, ".vaultmind/config.toml", "[ollama]\nembed_context = 300\n")
    with FakeOllama(embed_models={MODEL: 8}, contexts={MODEL: 2048}) as fake:
        embedder = OllamaEmbedder.from_config(load_config(vault, ollama_host=fake.host))
        try:
            embedder.embed([long_text(1200)])
        finally:
            embedder.close()
        assert embedder.context == 300 and fake.requests_to("/api/show") == []
        windows = sent_texts(fake)
    assert len(windows) >= 4 and all(count_tokens(window) <= embedder.window_tokens for window in windows)
    write(vault, ".vaultmind/config.toml", "[ollama]\nembed_context = 10\n")
    with pytest.raises(ConfigError, match="embed_context"):
        load_config(vault)


def test_long_texts_are_embedded_again_when_their_windows_change_and_short_ones_keep_their_vectors(vault: Path) -> None:
    """The window the stored vectors were made with is kept: an index from before windows (none
    kept: its long texts were read up to Ollama's context only), or a context set or learned
    anew, has the vectors of its long texts embedded again, and only theirs."""
    email, reply = long_text(1200), "thanks, see you at the pier"
    write_chat(vault, "2024-03-04", [("ann", email), ("bob", reply)])
    key = f"embed_window:ollama:{MODEL}"
    with FakeOllama(embed_models={MODEL: 8}, contexts={MODEL: 512}) as fake:
        config = load_config(vault, embed_provider="ollama", ollama_host=fake.host)
        with Memory.open(config) as memory:
            memory.sync()
            assert memory.index.get_meta(key) == str(memory.embedder.window_tokens)  # type: ignore[union-attr]
            assert reply in sent_texts(fake) and email not in sent_texts(fake)  # the email in windows
            # a first index embeds the email's windows once (before, its batches embedded them,
            # then the window, kept only then, dropped their vectors and embedded them again)
            assert sorted(" ".join(sent_texts(fake)).split()) == sorted(f"{email} {reply}".split())
            fake.clear()
            assert memory.sync().embedded == 0 and sent_texts(fake) == []  # nothing changed

            with memory.index.transaction() as con:  # as an index of before: no window kept
                con.execute("DELETE FROM meta WHERE key = ?", [key])
            fake.clear()
            assert memory.sync().embedded == 1
            assert " ".join(sent_texts(fake)).split() == email.split()  # the email's windows alone

        fake.clear()
        with Memory.open(config.with_(ollama_embed_context=256)) as memory:
            assert memory.sync().embedded == 1  # smaller windows: the email again, the reply not
            windows = sent_texts(fake)
            assert " ".join(windows).split() == email.split() and all(count_tokens(w) <= 240 for w in windows)
            assert memory.index.get_meta(key) == "240"
            hits = memory.index.scalar("SELECT count(*) FROM embeddings WHERE model = ?", [f"ollama:{MODEL}"])
            assert hits == memory.index.scalar("SELECT count(DISTINCT content_hash) FROM leaves")


def test_windows_found_by_the_running_count_fit_and_lose_nothing() -> None:
    """`window_spans` (one running count) against `hard_split` (a search of counts per span):
    every window within the budget, in order, all the text's non-blank characters kept, and as
    few windows; a word longer than the budget is cut, as `hard_split` cuts it."""
    rng = random.Random(3)
    words = ["the", "harbour", "2024", "Q3", "ÉCOLE", "résumé", "Привет", "東京", "😀", "https://example.com/a?b=c", "x" * 300, "\n\n", "deadbeef1234", "camelCaseWord"]
    for _ in range(12):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(50, 1500)))
        limit = rng.choice([64, 120, 496])
        spans = window_spans(text, limit, 10**6)
        reference = [(s, e) for s, e in hard_split(text, 0, len(text), limit, snap=True) if text[s:e].strip()]
        assert all(count_tokens(text[s:e]) <= limit for s, e in spans)
        assert all(end <= start for (_, end), (start, _) in pairwise(spans))
        assert "".join("".join(text[s:e] for s, e in spans).split()) == "".join(text.split())
        assert len(spans) == len(reference)
    assert len(window_spans("word " * 5000, 64, 3)) == 3  # no more than asked for


def test_vectors_of_before_windows_stored_under_the_models_former_id_are_taken_then_checked(vault: Path) -> None:
    """An index from before both changes: its vectors under the name with its `latest` tag,
    no window kept. They are taken as the model's own, and then the long texts' among them
    (read to Ollama's context only) are embedded again in windows; the short ones' kept."""
    email, reply = long_text(1200), "thanks, see you at the pier"
    write_chat(vault, "2024-03-04", [("ann", email), ("bob", reply)])
    with FakeOllama(embed_models={MODEL: 8}, contexts={MODEL: 512}) as fake:
        config = load_config(vault, embed_provider="ollama", ollama_host=fake.host)
        with Memory.open(config) as memory:
            memory.sync()
            with memory.index.transaction() as con:  # as the index of before
                con.execute("UPDATE embeddings SET model = ?", [f"ollama:{MODEL}:latest"])
                con.execute("DELETE FROM meta WHERE key = ?", [f"embed_window:ollama:{MODEL}"])
        fake.clear()
        with Memory.open(config) as memory:
            assert memory.sync().embedded == 1
            assert " ".join(sent_texts(fake)).split() == email.split()  # the email's windows alone
            assert memory.index.query("SELECT DISTINCT model FROM embeddings") == [(f"ollama:{MODEL}",)]


def test_vectors_taken_from_the_former_id_with_ollama_down_are_told_to_the_resident_vectors(vault: Path) -> None:
    """The former id's vectors are taken without Ollama; with Ollama down the sync then embeds
    nothing, but the resident vectors are still told that stored vectors changed (before, they
    were told only when the embedding that followed succeeded)."""
    write_chat(vault, "2024-03-04", [("ann", "the boats sailed at dawn"), ("bob", "thanks, see you at the pier")])
    with FakeOllama(embed_models={MODEL: 8}) as fake:
        config = load_config(vault, embed_provider="ollama", ollama_host=fake.host)
        with Memory.open(config) as memory:
            memory.sync()
            with memory.index.transaction() as con:
                con.execute("UPDATE embeddings SET model = ?", [f"ollama:{MODEL}:latest"])
    down = config.with_(ollama_host=f"http://127.0.0.1:{free_port()}", ollama_timeout_s=2.0)
    with Memory.open(down) as memory:
        told: list[bool] = []
        memory.syncer.listeners.append(lambda change: told.append(change.backfilled))
        memory.sync()
        assert memory.syncer.embed_error and memory.index.scalar("SELECT count(*) FROM embeddings WHERE model = ?", [f"ollama:{MODEL}"]) == 2
        assert True in told


def test_an_ollama_down_at_the_first_sync_leaves_no_window_kept_and_the_next_sync_embeds_once(vault: Path) -> None:
    """The window is learned from Ollama before a whole sync embeds: with Ollama down the sync
    still indexes the notes, says why the vectors wait, and keeps no window; once Ollama is
    there the next sync keeps it and embeds every text, the long one's windows once."""
    email, reply = long_text(1200), "thanks, see you at the pier"
    write_chat(vault, "2024-03-04", [("ann", email), ("bob", reply)])
    key = f"embed_window:ollama:{MODEL}"
    down = load_config(vault, embed_provider="ollama", ollama_host=f"http://127.0.0.1:{free_port()}", ollama_timeout_s=2.0)
    with Memory.open(down) as memory:
        stats = memory.sync()
        assert stats.embedded == 0 and memory.syncer.embed_error and "connect" in memory.syncer.embed_error
        assert memory.index.get_meta(key) is None and memory.index.scalar("SELECT count(*) FROM leaves") > 0
    with FakeOllama(embed_models={MODEL: 8}, contexts={MODEL: 512}) as fake, Memory.open(down.with_(ollama_host=fake.host)) as memory:
        assert memory.sync().embedded == 2
        assert memory.index.get_meta(key) == str(memory.embedder.window_tokens)  # type: ignore[union-attr]
        assert sorted(" ".join(sent_texts(fake)).split()) == sorted(f"{email} {reply}".split())
