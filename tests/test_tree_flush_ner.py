"""A flush asked for seals what a run with NER done first seals: the extractive summarizer
picks sentences by their entities, and a summary sealed before its leaves' entities were
known was never sealed again."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.entities.backfill import complete_ner, entity_deriver, ner_pending
from vaultmind.memory import Memory
from vaultmind.tree.view import route_flush

from .conftest import write

CONFIG = '[embeddings]\nprovider = "none"\n[entities]\nner_inline = 0\n[trees]\nsummarizer = "fallback"\n'
FRUIT = ["apple", "pear", "plum", "fig", "lime", "kiwi", "peach", "cherry", "mango", "grape"]


def _vault(root: Path) -> Path:
    """Notes where a sentence naming someone (a name the model finds and no date or number
    pattern does) competes with one naming no one, every text waiting for NER (`ner_inline = 0`):
    the extractive summarizer counts a known name as a fact."""
    write(root, ".vaultmind/config.toml", CONFIG)
    for n, fruit in enumerate(FRUIT):
        body = f"Intro line for the {fruit} day of the week here.\n\nSomeone waited at the {fruit} stall.\n\nOskar waited at the {fruit} stall.\n"
        write(root, f"journal/Day {n:02d}.md", f"# Day {n:02d}\n\n{body}")
    return root


def _summaries(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "summaries").rglob("*.md"))}


@pytest.mark.slow
def test_a_flush_with_ner_pending_seals_what_a_run_with_ner_done_first_seals(tmp_path: Path) -> None:
    first = load_config(_vault(tmp_path / "first"))
    with Memory.open(first) as memory:
        deriver = entity_deriver(memory)
        assert deriver is not None
        if not deriver.ner.available:
            pytest.skip(deriver.ner.status()["message"])
        memory.sync()
        assert complete_ner(memory) > 0  # NER done before anything is sealed
        assert route_flush(memory, {"all": True})["sealed"]
    expected = _summaries(first.vault)
    assert expected

    pending = load_config(_vault(tmp_path / "pending"))
    with Memory.open(pending) as memory:
        memory.sync()
        deriver = entity_deriver(memory)
        assert deriver is not None and ner_pending(memory.index, deriver) > 0  # the flush meets texts waiting
        assert route_flush(memory, {"all": True})["sealed"]
    assert _summaries(pending.vault) == expected  # byte for byte
