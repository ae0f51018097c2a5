"""walk: author names in a question are matched by the author signal, not by content."""

from __future__ import annotations

from pathlib import Path

from vaultmind.config import load_config
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory
from vaultmind.retrieval.walk import author_terms, without_words

from .conftest import write


def _chat(vault: Path, day: str, messages: list[tuple[str, str]]) -> None:
    meta = SourceMeta(kind="chat", source_id="chat:two", scope="chat/two", title=f"chat {day}")
    msgs = [
        Message(
            message_id=f"{day}-{i}",
            author=author,
            timestamp=f"{day}T10:{i:02d}:00Z",
            text=text,
            source_ref=f"chat://two/{day}-{i}",
        )
        for i, (author, text) in enumerate(messages)
    ]
    write(vault, f"sources/chat/two/{day}.md", render_source_note(meta, msgs))


def test_without_words_drops_names_and_possessives() -> None:
    names = frozenset({"nate", "joanna"})
    assert without_words("What are Joanna's hobbies?", names) == "What are hobbies?"
    assert without_words("How do Nate and Joanna relax?", names) == "How do and relax?"
    assert without_words("Nate?", names) == "Nate?", "nothing else left: the question stays"
    assert without_words("What did Natalie say?", names) == "What did Natalie say?"


def test_question_naming_an_author_finds_what_they_wrote(vault: Path) -> None:
    _chat(
        vault,
        "2024-05-02",
        [
            ("Bob Stone", "Alice, the ferry schedule changed again, Alice!"),
            ("Alice Chen", "I took the morning ferry to Ischia and swam all afternoon."),
            ("Bob Stone", "Alice, are you coming to the ferry terminal party?"),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        assert {"alice", "chen", "bob", "stone"} <= author_terms(memory)
        result = memory.query("walk", {"query": "Where did Alice go by ferry?"})
        assert "alice" in result["query"]["terms"]
        assert "alice" not in result["query"]["content_terms"]
        top = result["hits"][0]
        assert top["author"] == "Alice Chen", [h["content"] for h in result["hits"]]
        assert top["breakdown"]["author"] == 1.0


def test_author_terms_follow_the_index(vault: Path) -> None:
    _chat(vault, "2024-05-02", [("Bob Stone", "Lunch at noon?")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert "dana" not in author_terms(memory)
        _chat(vault, "2024-05-03", [("Dana Whitfield", "Sure, noon works.")])
        memory.sync()
        assert {"dana", "whitfield"} <= author_terms(memory)
