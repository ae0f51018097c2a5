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


def test_a_serving_memory_s_entity_names_see_the_entity_notes_a_flush_wrote(vault: Path) -> None:
    """A flush through the daemon (`/v1/flush`) writes entity notes and syncs them: the daemon's
    entity names (`search_entities`, fuzzy) and its entity list, each read before the flush, give
    the new notes right after it, without a save or a restart between."""
    from vaultmind.config import load_config
    from vaultmind.entities.read import entities_request
    from vaultmind.memory import Memory
    from vaultmind.tree.view import route_flush

    from .conftest import write_chat

    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n[trees]\nsummarizer = "fallback"\n')
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.serve()
        for day in ("2024-03-01", "2024-03-02", "2024-03-03"):
            write_chat(vault, day, [(name, f"I checked the venue deposit today, {name} here") for name in PEOPLE] * 2)
        memory.sync()

        def note_paths() -> tuple[list[str], list[str | None]]:
            names = [hit["note_path"] for hit in memory.query("search_entities", {"query": "Alise Chen"})["hits"]]
            listed = entities_request(memory.index, {"action": "list", "kind": "person"})["entities"]
            return names, [entity["note_path"] for entity in listed]

        assert note_paths() == ([""], [None, None, None])  # (no entity note yet: the sync wrote none)
        route_flush(memory, {"all": True})
        notes = [f"entities/person/{name.lower().replace(' ', '-')}.md" for name in PEOPLE]
        assert all((vault / note).is_file() for note in notes)
        assert note_paths() == (notes[:1], notes)
