"""Embedders: the shipped static model for real, and Ollama through the real client + a fake server."""

from __future__ import annotations

import json
import mmap
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.fakes import FakeOllama, fake_vector, free_port
from vaultmind.config import Config
from vaultmind.embed.ollama import OllamaEmbedder
from vaultmind.embed.providers import create_embedder
from vaultmind.embed.static import DEFAULT_MODEL, MAX_WINDOWS, MODELS_DIR, StaticEmbedder
from vaultmind.errors import EmbedError

# -- the static model ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def static() -> StaticEmbedder:
    embedder = StaticEmbedder()
    embedder.load()
    return embedder


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


def test_shipped_model_files_are_complete_and_small() -> None:
    folder = MODELS_DIR / DEFAULT_MODEL
    names = {p.name for p in folder.iterdir()}
    assert {"embeddings.npy", "tokenizer.json", "model.json", "LICENSE", "README.md"} <= names
    total = sum(p.stat().st_size for p in folder.iterdir())
    assert total < 20 * 1024 * 1024
    meta = json.loads((folder / "model.json").read_text(encoding="utf-8"))
    assert meta["embeddings_bytes"] == (folder / "embeddings.npy").stat().st_size


def test_static_identity_and_dim_do_not_load_the_table() -> None:
    embedder = StaticEmbedder()
    assert embedder.dim == 256
    assert embedder.model_id.startswith(f"static:{DEFAULT_MODEL}@")
    assert len(embedder.model_id.rsplit("@", 1)[1]) == 12
    assert not embedder.loaded


def test_static_model_id_is_the_table_hash() -> None:
    import hashlib

    npy = MODELS_DIR / DEFAULT_MODEL / "embeddings.npy"
    digest = hashlib.sha256(npy.read_bytes()).hexdigest()
    assert StaticEmbedder().model_id == f"static:{DEFAULT_MODEL}@{digest[:12]}"


def test_static_shapes_norms_and_dtype(static: StaticEmbedder) -> None:
    vectors = static.embed(["hello world", "Another sentence, with punctuation!", "x"])
    assert vectors.shape == (3, 256)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert static.embed([]).shape == (0, 256)


def test_static_is_deterministic_and_batch_independent(static: StaticEmbedder) -> None:
    texts = ["the cat sat on the mat", "a kitten rested on the rug", "quarterly budget spreadsheet"]
    together = static.embed(texts)
    alone = np.vstack([static.embed([t]) for t in texts])
    again = StaticEmbedder().embed(texts)
    assert np.array_equal(together, again)
    assert np.allclose(together, alone, atol=1e-6)


def test_static_semantic_sanity(static: StaticEmbedder) -> None:
    cat, kitten, budget = static.embed(
        ["the cat sat on the mat", "a kitten rested on the rug", "quarterly budget spreadsheet"]
    )
    assert _cos(cat, kitten) > _cos(cat, budget) + 0.2
    doctor, physician, guitar = static.embed(
        ["I have an appointment with my doctor", "seeing the physician tomorrow", "I bought a new guitar"]
    )
    assert _cos(doctor, physician) > _cos(doctor, guitar)


def test_static_empty_and_unknown_only_texts_are_zero_vectors(static: StaticEmbedder) -> None:
    vectors = static.embed(["", "   \n\t", "😀🙂", "real words"])
    assert np.all(vectors[0] == 0) and np.all(vectors[1] == 0) and np.all(vectors[2] == 0)
    assert np.isclose(np.linalg.norm(vectors[3]), 1.0, atol=1e-5)


def test_static_handles_cjk_and_accents(static: StaticEmbedder) -> None:
    vectors = static.embed(["東京タワーに行きました", "我喜欢喝茶", "naïve café résumé", "naive cafe resume"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert _cos(vectors[2], vectors[3]) > 0.999  # the BERT normaliser strips accents after lowercasing


def test_static_reads_a_long_text_in_windows(static: StaticEmbedder) -> None:
    """A text past the model's 512 tokens (a long email is one leaf) is the normalised mean of
    its windows' vectors: a change to its last sentence changes its vector, and the vector
    leans towards what its later windows say; past `MAX_WINDOWS` windows nothing is read."""
    body = "".join(f"Point {n}: about the agenda of the committee meeting. " for n in range(120))  # ~1.3k tokens
    key = body + "Finally, the spare key for the boathouse is hidden under the blue flower pot."
    changed = body + "Finally, the invoice for the printer toner was paid in March."
    a, b, question = static.embed([key, changed, "where is the spare key for the boathouse"])
    assert not np.allclose(a, b, atol=1e-3)
    assert _cos(a, question) > _cos(b, question)
    assert np.isclose(np.linalg.norm(a), 1.0, atol=1e-5)
    # one window: the same vector as the mean of its tokens
    short = "alpha beta gamma delta " * 100
    assert np.allclose(static.embed([short])[0], static.embed([short + " "])[0])
    head = "alpha beta gamma delta " * (static.max_tokens * MAX_WINDOWS // 4)  # every window full
    long = head + "zebra giraffe elephant " * 20_000
    c, d = static.embed([head, long])
    assert np.allclose(c, d, atol=1e-6)  # nothing after the last window is read


def test_static_a_short_last_window_weighs_its_tokens(static: StaticEmbedder) -> None:
    """A text one word past a full window is not half that word: each window weighs as many
    tokens as it holds, so the vector stays the text's, leaning on the word by its share."""
    words = ("the committee discussed the budget of the new library and its opening hours . " * 60).split()
    head = " ".join(words[: next(n for n in range(len(words)) if len(_ids(static, " ".join(words[:n]))) >= static.max_tokens)])
    assert len(_ids(static, head)) == static.max_tokens and len(_ids(static, head + " zebra")) == static.max_tokens + 1
    whole, longer, zebra = static.embed([head, head + " zebra", "zebra"])
    assert _cos(whole, longer) > 0.99
    assert _cos(longer, zebra) < 0.5 and _cos(longer, zebra) > _cos(whole, zebra)


def _ids(static: StaticEmbedder, text: str) -> list[int]:
    tokenizer = static._tokenizer
    assert tokenizer is not None
    return tokenizer.token_ids([text])[0]


def test_static_ascii_fast_path_matches_the_tokenizers_pipeline(static: StaticEmbedder) -> None:
    import random

    token_ids = static._tokenizer
    assert token_ids is not None and token_ids.ascii_fast_path
    rng = random.Random(7)
    pieces = [
        "Hello",
        "world",
        "don't",
        "e-mail",
        "snake_case",
        "1,000.50",
        "[UNK]",
        "[PAD]",
        "[unk]",
        "x" * 150,
        "\t",
        "\n",
        "\x00",
        "\x1f",
        "\x7f",
        " ",
        "...",
        "C++",
        "~/path/to",
        "#tag",
        "@alice",
    ]
    texts = ["", " ", "The Cat SAT on the mat!!", "word " * 700]
    for _ in range(3000):
        texts.append(
            "".join(
                rng.choice(pieces) if rng.random() < 0.6 else chr(rng.randrange(128))
                for _ in range(rng.randrange(0, 30))
            )
        )
    texts += ["naïve café", "東京タワー", "emoji 😀 inside"]  # non-ASCII: the reference path
    assert token_ids.token_ids(texts) == token_ids.reference_ids(texts)
    assert len(token_ids.token_ids(["word " * 20_000])[0]) == 512 * MAX_WINDOWS


def _is_mapped(array: np.ndarray) -> bool:
    base = array.base
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None)
    return base is not None


def _mapped_resident_kib(npy: Path) -> int | None:
    """The resident KiB of this process's mapping of `npy` (None when it is not mapped)."""
    lines = Path("/proc/self/smaps").read_text(encoding="utf-8").splitlines()
    resident: int | None = None
    for i, line in enumerate(lines):
        if line.endswith(" " + str(npy)):
            rss = next(x for x in lines[i + 1 :] if x.startswith("Rss:"))
            resident = (resident or 0) + int(rss.split()[1])
    return resident


def test_a_table_kept_as_stored_is_mapped_and_embeds_to_the_same_bits(
    static: StaticEmbedder, tmp_path: Path
) -> None:
    texts = [
        "Alice moved the launch to Friday.", "budget review at the harbor, 3pm", "日本語 テキスト café",
        "x" * 3000, "", "[UNK] literal", "[UNK]", "The quick brown fox jumps over the lazy dog " * 40,
        "ᚠᛇᚻ ᛒᛦᚦ [UNK] otter", "\x00\x01 control", "emoji 😀 inside",
    ]  # fmt: skip
    rng = np.random.default_rng(7)
    words = ["otter", "river", "harbor", "launch", "Friday", "zxqv", "naïve", "budget", "[UNK]", "3pm"]
    texts += [" ".join(rng.choice(words, size=int(rng.integers(1, 30)))) for _ in range(300)]
    full = static.embed(texts)
    folder = _copy_model(tmp_path)  # its own file, so that its mapping is this test's alone
    npy = folder / "embeddings.npy"
    on_disk = npy.read_bytes()
    kept = StaticEmbedder(folder)  # told before it loads: the table is mapped
    kept.keep_as_stored()
    kept.load()
    assert kept._table is not None and static._table is not None
    assert kept._table.dtype == np.float16 and kept._table.nbytes * 2 == static._table.nbytes
    resident = _mapped_resident_kib(npy)
    assert resident is not None and resident < 64  # checked finite without paging the table in
    assert kept.embed(texts).tobytes() == full.tobytes()
    assert _mapped_resident_kib(npy) == 0  # the pages the texts used are given back
    for text, vector in zip(texts, full, strict=True):
        assert kept.embed([text])[0].tobytes() == vector.tobytes()
    one = StaticEmbedder(folder)
    one.keep_as_stored()
    one.embed(["otter river"])
    assert npy.read_bytes() == on_disk  # the unknown token's row is skipped, not zeroed in the file
    loaded = StaticEmbedder(folder)
    loaded.load()
    assert loaded._table is not None and loaded._table.dtype == np.float32
    loaded.keep_as_stored()  # told once loaded: the float32 copy gives way to the mapping
    assert loaded._table is not None and loaded._table.dtype == np.float16
    assert _is_mapped(loaded._table)
    assert loaded.embed(texts).tobytes() == full.tobytes()
    assert _mapped_resident_kib(npy) == 0
    data = bytearray(on_disk)
    middle = len(data) // 2 & ~1
    data[middle : middle + 2] = np.array([np.nan], dtype=np.float16).tobytes()
    npy.unlink()  # a new file: the mappings above keep the old one
    npy.write_bytes(bytes(data))
    damaged = StaticEmbedder(folder)
    damaged.keep_as_stored()
    with pytest.raises(EmbedError, match="non-finite"):  # checked on the file, as it is mapped
        damaged.embed(["x"])


def test_a_warm_serving_memory_keeps_its_static_table_as_stored(tmp_path: Path) -> None:
    from vaultmind.config import load_config
    from vaultmind.memory import Memory

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n\notter river\n", encoding="utf-8")
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        assert isinstance(memory.embedder, StaticEmbedder)
        assert memory.embedder._table is not None and memory.embedder._table.dtype == np.float32
        before = memory.vectors.search(memory.embedder.embed(["otter"])[0], 1) if memory.vectors else []
        memory.serve()
        assert memory.embedder._table.dtype == np.float32  # a daemon's first sync may embed a whole vault
        memory.warm()  # past it: questions and saves
        assert memory.embedder._table.dtype == np.float16
        assert _is_mapped(memory.embedder._table)  # mapped from the model's file
        assert memory.vectors is not None and memory.vectors.search(memory.embedder.embed(["otter"])[0], 1) == before


def test_static_lazy_load_happens_on_first_embed() -> None:
    embedder = StaticEmbedder()
    assert not embedder.loaded
    embedder.embed(["x"])
    assert embedder.loaded


def _copy_model(tmp_path: Path) -> Path:
    target = tmp_path / "model"
    shutil.copytree(MODELS_DIR / DEFAULT_MODEL, target)
    return target


def test_static_missing_model_folder_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(EmbedError) as info:
        StaticEmbedder(missing).embed(["x"])
    assert str(missing) in str(info.value)


def test_static_missing_table_names_the_file(tmp_path: Path) -> None:
    folder = _copy_model(tmp_path)
    (folder / "embeddings.npy").unlink()
    embedder = StaticEmbedder(folder)
    assert embedder.dim == 256  # model.json alone still answers
    with pytest.raises(EmbedError) as info:
        embedder.embed(["x"])
    assert str(folder / "embeddings.npy") in str(info.value)


@pytest.mark.parametrize(
    ("file", "damage"),
    [
        ("embeddings.npy", b"\x93NUMPY garbage"),
        ("tokenizer.json", b"{not a tokenizer"),
        ("model.json", b"[1, 2"),
    ],
)
def test_static_corrupt_files_raise_embed_error(tmp_path: Path, file: str, damage: bytes) -> None:
    folder = _copy_model(tmp_path)
    (folder / file).write_bytes(damage)
    with pytest.raises(EmbedError) as info:
        StaticEmbedder(folder).embed(["x"])
    assert str(folder) in str(info.value)


def test_static_truncated_table_with_matching_size_is_rejected(tmp_path: Path) -> None:
    folder = _copy_model(tmp_path)
    npy = folder / "embeddings.npy"
    data = bytearray(npy.read_bytes())
    data[-4096:] = b"\xff" * 4096  # same size, NaN-like payload
    npy.write_bytes(bytes(data))
    with pytest.raises(EmbedError):
        StaticEmbedder(folder).embed(["x"])


def test_registry_creates_static_by_default(tmp_path: Path) -> None:
    embedder = create_embedder(Config(vault=tmp_path))
    assert isinstance(embedder, StaticEmbedder)
    assert embedder.dim == 256
    assert create_embedder(Config(vault=tmp_path, embed_provider="none")) is None


def test_registry_static_model_may_be_a_path(tmp_path: Path) -> None:
    folder = _copy_model(tmp_path)
    embedder = create_embedder(Config(vault=tmp_path, embed_model=str(folder)))
    assert isinstance(embedder, StaticEmbedder)
    assert embedder.model_dir == folder


# -- Ollama, through the real client against the fake server ------------------------------


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(embed_models={"nomic-embed-text": 8, "tiny-embed": 3}) as server:
        yield server


def _ollama(fake: FakeOllama, **kwargs: object) -> OllamaEmbedder:
    options: dict[str, object] = {"host": fake.host, "timeout_s": 5.0, "batch": 2}
    options.update(kwargs)
    return OllamaEmbedder("nomic-embed-text", **options)  # type: ignore[arg-type]


def test_ollama_batches_and_normalises(fake: FakeOllama) -> None:
    embedder = _ollama(fake)
    texts = ["one", "two", "three", "four", "five"]
    try:
        vectors = embedder.embed(texts)
    finally:
        embedder.close()
    assert vectors.shape == (5, 8) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    calls = fake.requests_to("/api/embed")
    assert [c.body["input"] for c in calls] == [["one", "two"], ["three", "four"], ["five"]]
    assert all(c.body["model"] == "nomic-embed-text" for c in calls)
    expected = np.asarray(fake_vector("nomic-embed-text", "three", 8), dtype=np.float32)
    assert np.allclose(vectors[2], expected / np.linalg.norm(expected), atol=1e-6)
    assert embedder.dim == 8
    assert embedder.model_id == "ollama:nomic-embed-text"


def test_ollama_dim_is_learned_with_one_probe(fake: FakeOllama) -> None:
    embedder = OllamaEmbedder("tiny-embed", host=fake.host, timeout_s=5.0)
    try:
        assert embedder.dim == 3
        assert embedder.dim == 3
    finally:
        embedder.close()
    assert len(fake.requests_to("/api/embed")) == 1


def test_ollama_from_config_and_registry(fake: FakeOllama, tmp_path: Path) -> None:
    config = Config(vault=tmp_path, embed_provider="ollama", ollama_host=fake.host, embed_batch=3)
    embedder = create_embedder(config)
    assert isinstance(embedder, OllamaEmbedder)
    assert embedder.model == "nomic-embed-text"
    try:
        assert embedder.embed(["a", "b", "c", "d"]).shape == (4, 8)
    finally:
        embedder.close()
    assert [len(c.body["input"]) for c in fake.requests_to("/api/embed")] == [3, 1]
    assert OllamaEmbedder.from_config(config.with_(embed_model="tiny-embed")).model == "tiny-embed"


def test_ollama_unknown_model_says_pull(fake: FakeOllama) -> None:
    embedder = OllamaEmbedder("mxbai-embed-large", host=fake.host, timeout_s=5.0)
    with pytest.raises(EmbedError) as info:
        embedder.embed(["x"])
    embedder.close()
    message = str(info.value)
    assert "ollama pull mxbai-embed-large" in message
    assert "not found" in message


def test_ollama_chat_model_is_not_an_embedding_model(fake: FakeOllama) -> None:
    embedder = OllamaEmbedder("llama3.2", host=fake.host, timeout_s=5.0)
    with pytest.raises(EmbedError, match="not an embedding model"):
        embedder.embed(["x"])
    embedder.close()


def test_ollama_connection_refused_fails_fast() -> None:
    host = f"http://127.0.0.1:{free_port()}"
    embedder = OllamaEmbedder("nomic-embed-text", host=host, timeout_s=60.0)
    start = time.perf_counter()
    with pytest.raises(EmbedError) as info:
        embedder.embed(["x"])
    # not the timeout's wait (60 s): a refused connection is known at once (a loaded host can
    # take seconds to import the client the first call imports)
    assert time.perf_counter() - start < 10.0
    embedder.close()
    assert host in str(info.value)
    assert "ollama serve" in str(info.value) and "config.toml" in str(info.value)


def test_ollama_timeout_is_honoured(fake: FakeOllama) -> None:
    fake.failure = "hang"
    embedder = _ollama(fake, timeout_s=0.5)
    embedder._get_client()  # made before the clock starts: its first import and set-up take seconds on a loaded host
    start = time.perf_counter()
    with pytest.raises(EmbedError, match=r"did not answer within 0\.5 s"):
        embedder.embed(["x"])
    elapsed = time.perf_counter() - start
    embedder.close()
    assert 0.4 < elapsed < 3.0


@pytest.mark.parametrize("failure", ["garbage", "500", "disconnect"])
def test_ollama_bad_answers_become_embed_errors(fake: FakeOllama, failure: str) -> None:
    fake.failure = failure
    embedder = _ollama(fake)
    with pytest.raises(EmbedError) as info:
        embedder.embed(["x"])
    embedder.close()
    assert fake.host in str(info.value)


@pytest.mark.parametrize(
    ("answer", "texts", "said"),
    [
        (lambda vectors: vectors[:-1], ["x"], "sent 0 embeddings for 1 text (model"),
        (lambda vectors: vectors[:-1], ["x", "y", "z"], "sent 2 embeddings for 3 texts (model"),
        (lambda vectors: [[] for _ in vectors], ["x"], "sent 1 embedding of width 0 for 1 text"),
    ],
)
def test_an_embed_answer_of_the_wrong_shape_is_said_in_words(
    fake: FakeOllama, answer: Any, texts: list[str], said: str
) -> None:
    """Before: "sent (0,) embeddings for 1 texts", numpy's shape of the answer."""
    fake.embed_answer = answer
    embedder = _ollama(fake, batch=8)
    with pytest.raises(EmbedError) as info:
        embedder.embed(texts)
    embedder.close()
    assert said in str(info.value) and "(0," not in str(info.value)
    assert "one vector is wanted per text" in str(info.value)


def test_ollama_recovers_after_a_transient_failure(fake: FakeOllama) -> None:
    fake.failure, fake.failure_times = "500", 1
    embedder = _ollama(fake)
    with pytest.raises(EmbedError, match="HTTP 500"):
        embedder.embed(["x"])
    assert embedder.embed(["x"]).shape == (1, 8)
    embedder.close()


# -- the fake itself, for the endpoints other modules use -----------------------------------


def test_fake_serves_chat_generate_tags_version(fake: FakeOllama) -> None:
    import ollama

    fake.responder = lambda req: "pong" if req.path == "/api/chat" else "generated"
    with ollama.Client(host=fake.host, timeout=5) as client:
        chat = client.chat(model="llama3.2", messages=[{"role": "user", "content": "ping"}])
        assert chat.message.content == "pong"
        assert client.generate(model="llama3.2", prompt="hi").response == "generated"
        streamed = "".join(
            part.message.content or ""
            for part in client.chat(
                model="llama3.2", messages=[{"role": "user", "content": "x"}], stream=True
            )
        )
        assert streamed == "pong"
        names = {m.model for m in client.list().models}
        assert {"llama3.2:latest", "nomic-embed-text:latest"} <= names
        with pytest.raises(ollama.ResponseError) as info:
            client.chat(model="missing", messages=[])
        assert info.value.status_code == 404
    assert fake.requests_to("/api/chat")[0].body["messages"][0]["content"] == "ping"


def test_fake_delay_applies(fake: FakeOllama) -> None:
    import ollama

    fake.delay_s = 0.3
    with ollama.Client(host=fake.host, timeout=5) as client:
        start = time.perf_counter()
        client.generate(model="llama3.2", prompt="slow")
        assert time.perf_counter() - start >= 0.3
