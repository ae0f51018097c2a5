"""A question answered without a daemon (`vaultmind query`, the MCP server) is answered from
the vault as it is: the index opened in the process is synced first, through the one sync."""

from __future__ import annotations

from pathlib import Path

from vaultmind.cli.query import ask
from vaultmind.config import load_config

from .conftest import write


def _paths(answer: dict[str, object]) -> list[str]:
    hits = answer["hits"]
    assert isinstance(hits, list)
    return [hit["note_path"] for hit in hits]


def test_a_deleted_note_is_not_answered_and_a_new_one_is_found(vault: Path) -> None:
    write(vault, "Meetings/Launch sync.md", "# Launch sync\n\nMarco preferred the harbour venue for the launch.\n")
    (vault / ".vaultmind").mkdir()
    config = load_config(vault, embed_provider="none")
    assert _paths(ask(config, "walk", {"query": "where did Marco want the launch?"})) == ["Meetings/Launch sync.md"]
    (vault / "Meetings/Launch sync.md").unlink()
    write(vault, "Axolotl.md", "# Axolotl\n\nThe axolotlgrid sensor sits in tank four.\n")
    assert _paths(ask(config, "walk", {"query": "where did Marco want the launch?"})) == []
    answer = ask(config, "search", {"query": "axolotlgrid"})
    assert _paths(answer) == ["Axolotl.md"] and "notice" not in answer


def test_an_index_an_older_vaultmind_built_answers_saying_it_is_not_up_to_date(vault: Path) -> None:
    """Such an index is not rebuilt for a question, so it is not synced either: the answer says
    so in its `notice` (it was said on stderr alone, which an agent's MCP host shows nobody),
    as it does when the index cannot be written."""
    from vaultmind.memory import Memory

    write(vault, "Meetings/Launch sync.md", "# Launch sync\n\nMarco preferred the harbour venue for the launch.\n")
    (vault / ".vaultmind").mkdir()
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:  # what a migration asking for a rebuild leaves
        memory.sync()
        memory.index.con.execute("INSERT INTO meta VALUES ('needs_rebuild', '1')")
    (vault / "Meetings/Launch sync.md").unlink()
    answer = ask(config, "walk", {"query": "where did Marco want the launch?"})
    assert _paths(answer) == ["Meetings/Launch sync.md"]  # as it was indexed
    assert "built by an older vaultmind" in answer["notice"] and "vaultmind sync" in answer["notice"]


def test_an_edited_note_is_answered_as_it_is_now(vault: Path) -> None:
    write(vault, "Garden.md", "# Garden\n\nThe quinceblossom tree needs pruning in March.\n")
    (vault / ".vaultmind").mkdir()
    config = load_config(vault, embed_provider="none")
    assert _paths(ask(config, "search", {"query": "quinceblossom"})) == ["Garden.md"]
    write(vault, "Garden.md", "# Garden\n\nThe marrowvine bed needs water in July.\n")
    assert _paths(ask(config, "search", {"query": "quinceblossom"})) == []
    assert _paths(ask(config, "search", {"query": "marrowvine"})) == ["Garden.md"]


def test_a_question_with_nothing_changed_writes_nothing(vault: Path) -> None:
    """A question's sync that finds every note as indexed commits nothing (it had run the
    whole apply step, a transaction, and counted the vectors' backlog: ~0.3 s a question at
    10k notes); a scan problem that appears meanwhile is still written."""
    from vaultmind.cli.query import answer_here
    from vaultmind.memory import Memory

    write(vault, "Garden.md", "# Garden\n\nThe quinceblossom tree needs pruning in March.\n")
    (vault / ".vaultmind").mkdir()
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        before = memory.index.generation
        assert _paths(answer_here(config, memory, "search", {"query": "quinceblossom"})) == ["Garden.md"]
        assert memory.index.generation == before
        (vault / "Gone.md").symlink_to(vault / "nowhere.md")
        answer_here(config, memory, "search", {"query": "quinceblossom"})
        assert memory.index.generation > before
        assert ("Gone.md", "broken_symlink") in memory.index.query("SELECT path, kind FROM problems")
