"""walk: what a question sets aside ("what did Mei say apart from the garden?") is not what it
asks for: asked nothing else, the leaves that hold it go behind; with other words to search,
the question is read as before (`retrieval/set_aside.py`)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.set_aside import set_aside

from .conftest import write_chat

MARCH_12 = datetime(2024, 3, 12, 12)


def test_the_thing_set_aside_ends_with_its_phrase() -> None:
    garden = set_aside("What did Mei say, apart from the garden?")
    assert garden is not None and (garden.phrase, garden.thing, garden.terms) == ("apart from the garden", "the garden", {"garden"})
    yoga = set_aside("Which sport has John tried apart from yoga at the gym?")
    assert yoga is not None and yoga.thing == "yoga", "the gym is still asked about"
    evening = set_aside("Which messages mention the launch, except the launch evening?")
    assert evening is not None and evening.terms == {"evening"}, "the launch is said outside it too"
    assert set_aside("What did he do, except that he called?") is None
    assert set_aside("Besides, what did she say?") is None


def _chats(vault: Path) -> None:
    write_chat(
        vault,
        "2024-03-09",
        [
            ("Mei Chen", "Auntie Lin and Uncle Joe are coming from Leeds, they arrive Friday."),
            ("Daniel Chen", "Great, I will pick them up at the station."),
            ("Mei Chen", "Please bring the photo album from your flat."),
            ("Mei Chen", "He must not find out!! I told him Saturday is for the garden, the garden needs weeding."),
            ("Daniel Chen", "The garden centre opens at nine on Saturday."),
            ("Tim Hale", "I play basketball every week, and I go surfing in the summer."),
            ("Tim Hale", "Basketball practice moved to Thursday."),
        ],
    )


def test_asked_nothing_else_the_thing_set_aside_goes_behind(vault: Path) -> None:
    _chats(vault)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        plain = memory.walk("What did Mei say about the garden?", limit=5, reference_time=MARCH_12)
        assert "garden" in plain["hits"][0]["content"]

        aside = memory.walk("What did Mei say apart from the garden?", limit=5, reference_time=MARCH_12)
        assert "garden" not in aside["query"]["content_terms"] and "apart" not in aside["query"]["content_terms"]
        top = aside["hits"][:2]
        assert {h["author"] for h in top} == {"Mei Chen"}
        assert all("garden" not in h["content"] for h in top), "her other words lead"
        behind = [h for h in aside["hits"] if "garden" in h["content"]]
        assert behind and all(h["breakdown"]["set_aside"] for h in behind)
        assert aside["hits"].index(behind[0]) >= 2

        besides = memory.walk("What sports does Tim like besides basketball?", limit=5, reference_time=MARCH_12)
        assert "basketbal" in besides["query"]["content_terms"], "other words to search: read as before"
        assert "surfing" in besides["hits"][0]["content"], "the answer names basketball beside it"
        assert not any(h["breakdown"]["set_aside"] for h in besides["hits"])
