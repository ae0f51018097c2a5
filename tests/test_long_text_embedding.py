"""A long email or message is one leaf: its vector reads all of it (in windows), and an index
from before, whose vectors of long texts read only their start, embeds those texts again."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.ingest.email import parse_email_paths
from vaultmind.ingest.writer import write_batches
from vaultmind.memory import Memory

from .conftest import migrations_through, write

LAST = "Finally, the spare key for the boathouse is hidden under the blue flower pot."
POINTS = "\n\n".join(f"Point {n}: about the agenda of the committee meeting and its minutes." for n in range(80))


def long_mail(folder: Path) -> Path:
    """A mail of 80 short paragraphs, about 1,500 tokens, with what matters in its last one."""
    path = folder / "long.eml"
    path.write_text(
        "From: Ana <ana@example.org>\nTo: Bob <bob@example.org>\nSubject: Committee notes\n"
        "Date: Tue, 02 Jan 2024 10:00:00 +0000\nMessage-ID: <long-1@example.org>\n"
        f"Content-Type: text/plain; charset=utf-8\n\n{POINTS}\n\n{LAST}\n",
        encoding="utf-8",
    )
    return path


def vectors(memory: Memory) -> dict[str, bytes]:
    """Each leaf's stored vector, by the leaf's note path."""
    rows = memory.index.query(
        "SELECT l.note_path, e.vec FROM leaves l JOIN embeddings e ON e.content_hash = l.content_hash AND e.model = ?",
        [memory.embedder.model_id],
    )
    return {str(path): bytes(vec) for path, vec in rows}


def test_an_index_from_before_embeds_its_long_texts_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Migration 0037: the vectors of texts past the model's reach are dropped and embedded again
    by the next sync (as windows); those of short texts are kept, not embedded again."""
    migrations_through(monkeypatch, "0037_long_texts_embedded_whole")  # seen alone
    vault = tmp_path / "vault"
    write(vault, "plain.md", "# Plain\n\nA note about the projector.\n")
    write_batches(vault, parse_email_paths([long_mail(tmp_path)]))
    config = load_config(vault)
    with Memory.open(config) as memory:
        memory.sync()
        fresh = vectors(memory)
        (mail,) = [path for path in fresh if path != "plain.md"]
        assert memory.index.scalar("SELECT max(token_count) FROM leaves WHERE note_path = ?", [mail]) > 1000
        # as an index from before: each leaf holds a vector the sync would not give it
        con = memory.index.con
        con.execute("UPDATE embeddings SET vec = ? WHERE content_hash <> ''", [fresh["plain.md"][::-1]])
        con.execute("DELETE FROM migrations WHERE name = '0037_long_texts_embedded_whole'")
    with Memory.open(config) as memory:
        memory.sync()
        after = vectors(memory)
        assert after[mail] == fresh[mail], "the long text is embedded again"
        assert after["plain.md"] == fresh["plain.md"][::-1], "a short text's vector is kept"

