"""Benchmarks of the read path, in process: search latency (`bench_query`), walk latency with
its resident memory and dense recall (`bench_walk`), entity search latency
(`bench_entity_search`)."""

from __future__ import annotations

import os
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from vaultmind.bench.figures import MB, Progress, latency, no_progress
from vaultmind.bench.processes import peak_rss
from vaultmind.bench.vaults import vault_config, vault_seed
from vaultmind.bench.vocabulary import bench_queries, build_vocabulary
from vaultmind.calendar_names import MONTHS
from vaultmind.config import load_config
from vaultmind.embed.base import Embedder, Vectors, embed_query
from vaultmind.index.store import Index
from vaultmind.index.vector_codec import matrix_of
from vaultmind.memory import Memory


def bench_query(
    vault: Path,
    *,
    repeats: int = 3,
    count: int = 40,
    embed_provider: str | None = "static",
    seed: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """In-process `Memory.search` latency over a fixed set of `count` queries from the vault's
    vocabulary (`vocabulary.bench_queries`), each run `repeats` times after one untimed warm-up."""
    progress = progress or no_progress
    seed = vault_seed(vault) if seed is None else seed
    queries = bench_queries(seed, count)
    config = vault_config(vault, embed_provider)
    with Memory.open(config, progress=progress) as memory:
        memory.sync()
        started = time.perf_counter()
        memory.search(queries[0])
        first_s = time.perf_counter() - started  # loads the vector matrix, warms caches
        with_hits = sum(1 for q in queries if memory.search(q)["hits"])
        samples: list[float] = []
        for run in range(repeats):
            for query in queries:
                started = time.perf_counter()
                memory.search(query)
                samples.append(time.perf_counter() - started)
            progress("query", run + 1, repeats)
    return {**latency(samples), "first_query_s": first_s, "queries": len(queries),
            "queries_with_hits": with_hits, "embeddings": config.embed_provider}  # fmt: skip


def walk_questions(seed: int = 0, count: int = 40) -> list[str]:
    """Questions in the shapes people ask a memory: a person and a topic, a topic and a time
    (last week, a month, yesterday), a day ("What happened on 14 March 2023?": a window short
    enough that the leaves naming its days are looked for too), a name alone, plain words (from
    `vocabulary.bench_queries` and the vault's people; the days within the generated notes' years)."""
    vocab = build_vocabulary(seed)
    rng = random.Random(f"vm-bench-walk:{seed}")
    days = random.Random(f"vm-bench-walk-days:{seed}")  # apart: the other shapes' people as before
    shapes = (
        "What did {person} say about {q}?",
        "{q} last week",
        "When did {person} and {other} talk about {q}?",
        "{q}",
        "What happened with {q} in May 2023?",
        "What happened on {day}?",
        "What did {person} say about {q} yesterday?",
    )
    out = []
    for i, query in enumerate(bench_queries(seed, count)):
        person, other = rng.sample(vocab.people, 2)
        day = date(2019, 1, 1) + timedelta(days=days.randrange(2200))
        said = f"{day.day} {MONTHS[day.month - 1].title()} {day.year}"
        out.append(shapes[i % len(shapes)].format(person=person, other=other, q=query, day=said))
    return out


def bench_walk(
    vault: Path,
    *,
    repeats: int = 3,
    count: int = 40,
    embed_provider: str | None = "static",
    seed: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """In-process `Memory.walk` latency over `count` questions (`walk_questions`), `repeats`
    rounds after one warm-up round, with the daemon's memory settings (`Memory.serve`). The
    time the walk spends embedding the question (`TimedEmbedder`: the query form of the text
    it searches with, which it derives from the question) is taken out of the walk's figures
    and reported apart (`embed_p50_s`; the whole time is `with_embedding`): a slower model
    (e5, Ollama) would otherwise hide the walk's own latency. The process's RSS and the resident
    structures' bytes (`memory_mb`) are reported after the queries, the memory still open, then
    the dense search's recall against an exact scan (`_dense_recall`). Every round asks new
    questions: a repeated one would find the terms of its strongest leaves cached (the phrase
    and near-duplicate passes), which a new question pays for."""
    progress = progress or no_progress
    seed = vault_seed(vault) if seed is None else seed
    asked = walk_questions(seed, count * (repeats + 1))
    questions = asked[:count]
    config = vault_config(vault, embed_provider)
    with Memory.open(config, progress=progress) as memory:
        memory.serve()
        memory.sync()
        started = time.perf_counter()
        memory.warm()
        warm_s = time.perf_counter() - started
        timed = TimedEmbedder(memory.embedder) if memory.embedder is not None else None
        memory.embedder = timed  # after `serve`, which set the embedder itself up
        for question in questions:
            memory.walk(question)
        vectors = list(timed.vectors) if timed is not None else []  # the warm-up's questions
        samples: list[float] = []
        whole: list[float] = []
        embed: list[float] = []
        for run in range(repeats):
            for question in asked[count * (run + 1) : count * (run + 2)]:
                spent = timed.seconds if timed is not None else 0.0
                started = time.perf_counter()
                memory.walk(question)
                took = time.perf_counter() - started
                spent = (timed.seconds if timed is not None else 0.0) - spent
                samples.append(took - spent)
                whole.append(took)
                embed.append(spent)
            progress("walk", run + 1, repeats)
        memory.embedder = timed.inner if timed is not None else None
        leaves = int(memory.index.scalar("SELECT count(*) FROM leaves"))
        resident = resident_memory(memory)
        hwm, rss = peak_rss(os.getpid())
        recall = _dense_recall(memory, vectors)  # last: it streams every vector through DuckDB
    return {
        **latency(samples),  # the walk without the question's embedding (the target's figure)
        "with_embedding": latency(whole),
        "embed_p50_s": statistics.median(embed) if timed is not None else None,
        "embed_p95_s": latency(embed)["p95_s"] if timed is not None else None,
        "dense_recall_at_100": recall,
        "leaves": leaves,
        "questions": len(questions),
        "warm_s": warm_s,
        "process_rss_mb": rss / MB if rss is not None else None,
        "process_peak_mb": hwm / MB if hwm is not None else None,
        "memory_mb": resident,
        "embeddings": config.embed_provider,
    }


def resident_memory(memory: Memory) -> dict[str, float]:
    """MB held by each resident structure of a warm `memory`, and by DuckDB (`duckdb_memory()`);
    `vectors.file` is the size of the int8 rows' scratch file, which is not in the process."""
    parts = {f"leaves.{k}": v for k, v in memory.leaves.memory().items()}
    if memory.vectors is not None:
        parts.update({f"vectors.{k}": v for k, v in memory.vectors.memory().items()})
    parts["duckdb"] = sum(memory.index.duckdb_memory().values())
    return {k: round(v / MB, 1) for k, v in parts.items()}


class TimedEmbedder:
    """An embedder that counts the seconds spent in it and keeps the question vectors asked of
    it (`embed_query`, the form searches and walks use); everything else is the wrapped one's."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.vectors: list[Vectors] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        started = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - started

    def embed_query(self, text: str) -> Vectors:
        started = time.perf_counter()
        try:
            vector = embed_query(self.inner, text)
        finally:
            self.seconds += time.perf_counter() - started
        self.vectors.append(vector)
        return vector


def _dense_recall(memory: Memory, vectors: Sequence[Vectors], top: int = 100) -> float | None:
    """Mean share of the exact top `top` leaves by cosine (`exact_nearest`: every stored vector
    of a live leaf, as float32) that the resident search returns for the question vectors the
    walks used: what its int8 rows and its clusters cost."""
    if memory.vectors is None or not vectors:
        return None
    queries = np.stack(list(vectors)).astype(np.float32)
    exact = exact_nearest(memory.index, memory.vectors.model_id, queries, top)
    shares = []
    for q, want in zip(queries, exact, strict=True):
        found = {leaf_id for leaf_id, _ in memory.vectors.search(q, top)}
        shares.append(len(found & set(want)) / max(1, len(want)))
    return statistics.mean(shares) if shares else None


def exact_nearest(index: Index, model_id: str, queries: np.ndarray, top: int) -> list[list[str]]:
    """For each of `queries`, the `top` leaves with the highest cosine (ties by id), scored in
    float32 against the stored vectors, which are streamed: the memory held stays small at any
    vault size. Leaves that share a text share its vector."""
    best_hashes: list[list[str]] = [[] for _ in queries]
    best_scores = [np.zeros(0, dtype=np.float32) for _ in queries]
    with index.lock:
        reader = index.con.execute(
            "SELECT content_hash, vec, dim FROM embeddings WHERE model = ? AND content_hash IN (SELECT content_hash FROM leaves)",
            [model_id],
        ).to_arrow_reader(8_192)
        for batch in reader:
            matrix, kept = matrix_of(batch.column(1), batch.column(2), int(queries.shape[1]))
            if not len(matrix):
                continue  # vectors of another dimension: only after a model change
            hashes = batch.column(0).filter(pa.array(kept)).to_pylist()
            scores = matrix @ queries.T
            for k in range(len(queries)):
                pool = np.concatenate((best_scores[k], scores[:, k]))
                names = best_hashes[k] + hashes
                keep = np.argsort(-pool, kind="stable")[:top]  # a leaf per text at least: `top` texts suffice
                best_scores[k], best_hashes[k] = pool[keep], [names[i] for i in keep.tolist()]
        wanted = sorted({h for hashes in best_hashes for h in hashes})
        leaves = index.con.execute(
            "SELECT id, content_hash FROM leaves WHERE list_contains(?::VARCHAR[], content_hash)", [wanted]
        ).fetchall()
    by_hash: dict[str, list[str]] = {}
    for leaf_id, content_hash in leaves:
        by_hash.setdefault(content_hash, []).append(leaf_id)
    out = []
    for hashes, scores in zip(best_hashes, best_scores, strict=True):
        ranked = sorted(
            ((-float(score), leaf_id) for h, score in zip(hashes, scores.tolist(), strict=True) for leaf_id in by_hash.get(h, []))
        )
        out.append([leaf_id for _, leaf_id in ranked[:top]])
    return out


def bench_entity_search(
    entities: int = 50_000, *, queries: int = 200, seed: int = 0, progress: Progress | None = None
) -> dict[str, Any]:
    """`search_entities` latency over `entities` synthetic people and organizations (names and
    aliases from the synthetic vocabulary), in a scratch vault whose entity table is filled
    directly, in one insert of an Arrow table (row by row it took over a minute, most of the
    benchmark); the first query (which builds the name index) is reported separately."""
    progress = progress or no_progress
    vocab = build_vocabulary(seed)
    rng = random.Random(f"vm-bench-entities:{seed}")
    words = [w.title() for w in vocab.words[100:20_000]]
    rows: dict[str, tuple[str, str, str, list[str]]] = {}
    while len(rows) < entities:
        kind = "org" if rng.random() < 0.2 else "person"
        name = f"{rng.choice(words)} {rng.choice(words)}" if kind == "person" else f"{rng.choice(words)} Labs"
        ident = f"{kind}:{name.lower().replace(' ', '-')}"
        aliases = [name.split()[0]] if rng.random() < 0.3 else []
        rows.setdefault(ident, (ident, kind, name, aliases))
    table = list(rows.values())
    asked = [rng.choice(table)[2] for _ in range(queries // 2)]
    asked += [_typo(rng, rng.choice(table)[2]) for _ in range(queries // 4)]
    asked += [rng.choice(table)[2].split()[0] for _ in range(queries - len(asked))]
    rows_table = pa.table({
        "id": [row[0] for row in table],
        "kind": [row[1] for row in table],
        "display_name": [row[2] for row in table],
        "aliases": pa.array([row[3] for row in table], type=pa.list_(pa.string())),
        "mentions": pa.array([rng.randint(1, 50) for _ in table], type=pa.int32()),
    })  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="vm-bench-entities-") as tmp:
        config = load_config(Path(tmp), embed_provider="none")
        progress("entities: filling the table", 0, len(table))
        with Memory.open(config) as memory:
            with memory.index.transaction() as con:
                con.register("bench_entities", rows_table)
                con.execute(
                    "INSERT INTO entities SELECT id, kind, display_name, NULL, aliases, [], [], mentions FROM bench_entities"
                )
                con.unregister("bench_entities")
            progress("entities: filling the table", len(table), len(table))
            started = time.perf_counter()
            memory.query("search_entities", {"query": asked[0]})
            first_s = time.perf_counter() - started
            samples = []
            found = 0
            for done, query in enumerate(asked, start=1):
                started = time.perf_counter()
                hits = memory.query("search_entities", {"query": query})["hits"]
                samples.append(time.perf_counter() - started)
                found += bool(hits)
                if done % 20 == 0:
                    progress("entities: queries", done, len(asked))
    return {**latency(samples), "entities": len(table), "first_query_s": first_s, "queries": len(asked),
            "queries_with_hits": found}  # fmt: skip


def _typo(rng: random.Random, name: str) -> str:
    i = rng.randrange(1, max(2, len(name) - 1))
    return name[:i] + name[i + 1 :]
