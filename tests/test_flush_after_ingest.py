"""`vaultmind ingest` then `vaultmind flush`, with no sync and no daemon between: the flush writes
the entity notes the messages earn before it seals, so the summaries link the people in them
(they had been sealed with `entities: []`, and no entity note was written until a `sync`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_main as run
from tests.conftest import write
from vaultmind.markdown.frontmatter import split_frontmatter

PEOPLE = ("Alice Chen", "Bob Stone", "Carla Diaz")
TOPICS = ("the venue deposit", "the catering quote", "the press kit", "the landing page")


def _export(path: Path) -> Path:
    messages = [
        {
            "id": i + 1,
            "author": PEOPLE[i % 3],
            "timestamp": f"2024-03-0{1 + i // 6}T{9 + i % 6:02d}:00:00Z",
            "text": f"I checked {TOPICS[i % 4]} today, update {i}: the numbers hold and we decide on Friday.",
        }
        for i in range(18)
    ]
    path.write_text(json.dumps({"platform": "slack", "conversation": "team", "title": "Team", "messages": messages}))
    return path


def test_ingest_then_flush_links_the_entity_notes_of_the_people_in_the_summaries(
    tmp_path: Path, cli_vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(cli_vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n[trees]\nsummarizer = "fallback"\n')
    code, _, _ = run(capsys, "ingest", "chat", str(_export(tmp_path / "team.json")), "--vault", str(cli_vault), "--json")
    assert code == 0 and not (cli_vault / "entities" / "person").exists()
    code, data, _ = run(capsys, "flush", "--all", "--vault", str(cli_vault), "--json")
    assert code == 0 and data["sealed"]
    notes = sorted(p.stem for p in (cli_vault / "entities" / "person").glob("*.md"))
    assert notes == ["alice-chen", "bob-stone", "carla-diaz"]
    for sealed in data["sealed"]:
        front = split_frontmatter((cli_vault / sealed["path"]).read_text(encoding="utf-8")).data
        assert any("entities/person/" in link for link in front["entities"]), sealed["path"]
    code, again, _ = run(capsys, "flush", "--all", "--vault", str(cli_vault), "--json")
    assert code == 0 and not again["sealed"] and not again.get("refreshed")  # a rerun rewrites nothing
