"""Ingest throughput: chat messages per second from an export to canonical notes + index.

`bench_ingest(n)` writes a deterministic synthetic chat export in the generic format (several
channels over several days), then times the whole path a user runs — parse, write the source
notes (atomic, one per channel and day), and sync them into the index (leaves, postings,
derivers, embeddings with the configured offline embedder). No LLM is involved.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from vaultmind.config import load_config
from vaultmind.ingest.detect import ingest_paths
from vaultmind.memory import Memory
from vaultmind.sync import Syncer

_WORDS = (
    "budget launch review deadline meeting draft design customer invoice roadmap sprint release "
    "bug fix deploy server report numbers forecast hiring offsite travel lunch coffee plan idea "
    "question answer update status blocker owner team alice bob carol dave erin frank quarter"
).split()
_AUTHORS = ("Alice Chen", "Bob Stone", "Carol Diaz", "Dave Kim", "Erin Wu")
MESSAGES_PER_CHANNEL_DAY = 40


def synthetic_export(path: Path, n_messages: int, *, seed: int = 0, channels: int = 8) -> Path:
    """A generic-format JSON Lines export of `n_messages` messages (same seed, same bytes)."""
    rng = random.Random(seed)
    start = datetime(2024, 1, 1, 8, 0, tzinfo=UTC)
    lines = []
    for i in range(n_messages):
        channel = i % channels
        slot = i // channels
        day, within = divmod(slot, MESSAGES_PER_CHANNEL_DAY)
        at = start + timedelta(days=day, minutes=within * 7 + channel)
        words = rng.choices(_WORDS, k=rng.randint(4, 30))
        message: dict[str, Any] = {
            "id": f"c{channel}-{i}",
            "conversation": f"channel-{channel}",
            "author": _AUTHORS[rng.randrange(len(_AUTHORS))],
            "timestamp": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "text": " ".join(words).capitalize() + ".",
        }
        lines.append(json.dumps(message))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def bench_ingest(
    n_messages: int = 5000,
    *,
    embed_provider: str = "static",
    derivers: bool = True,
    workdir: Path | None = None,
) -> float:
    """Messages per second for parse + write + sync of `n_messages` synthetic chat messages."""
    figures = run_ingest_bench(n_messages, embed_provider=embed_provider, derivers=derivers, workdir=workdir)
    return figures["messages_per_s"]


def run_ingest_bench(
    n_messages: int, *, embed_provider: str = "static", derivers: bool = True, workdir: Path | None = None
) -> dict[str, float]:
    """The figures behind `bench_ingest`: seconds per phase, notes written, messages/s.

    `derivers=False` syncs leaves, postings and embeddings only (no entity extraction or
    admission), to tell the ingest path's own cost from the derivers'.
    """
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        root = Path(tmp)
        export = synthetic_export(root / "export.jsonl", n_messages)
        vault = root / "vault"
        vault.mkdir()
        config = load_config(vault, embed_provider=embed_provider)
        with Memory.open(config) as memory:
            if not derivers:
                memory.syncer = Syncer(config, memory.index, memory.embedder, None, ())
            memory.sync()  # create the index outside the timing
            started = time.perf_counter()
            report = ingest_paths("chat", [export], vault, fmt="generic")
            written = time.perf_counter()
            memory.sync_paths(report.written)
            done = time.perf_counter()
        total = done - started
        return {
            "messages": float(report.messages_added),
            "notes": float(len(report.written)),
            "write_s": round(written - started, 3),
            "sync_s": round(done - written, 3),
            "total_s": round(total, 3),
            "messages_per_s": round(report.messages_added / total, 1) if total > 0 else 0.0,
        }
