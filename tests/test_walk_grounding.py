"""A question that names nothing ("what was it?": asking words alone) gets no hits, and every
answer of a walk says whether the question was grounded, as the evidence block does."""

from __future__ import annotations

from pathlib import Path

from vaultmind.config import load_config
from vaultmind.memory import Memory

from .conftest import write


def _vault(vault: Path) -> None:
    write(vault, "Garden.md", "# Garden\n\nThe tomatoes need water on Friday, and the fig tree was repotted.\n")
    write(vault, "Chat.md", "# Chat\n\nIt was great, thanks! What was the name of it again?\n")
    write(vault, "Launch.md", "# Launch\n\nThe Tidepool launch is on 23 April at Harbor Hall.\n")


def test_a_question_of_asking_words_alone_gets_no_hits_and_says_it_is_not_grounded(vault: Path) -> None:
    _vault(vault)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        answer = memory.query("walk", {"query": "what was it?", "evidence": True})
        assert answer["hits"] == [] and answer["query"]["grounded"] is False
        assert answer["evidence"].startswith("No grounding")
        named = memory.query("walk", {"query": "when is the Tidepool launch?"})
        assert named["query"]["grounded"] is True and named["hits"][0]["note_path"] == "Launch.md"
