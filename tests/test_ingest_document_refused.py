"""`ingest_document` refuses, with the reason, a document this vault would never find: one whose
note is over the vault's cap on a note it indexes, one written into a folder the vault ignores,
and one whose `source_id` is another source's (a file's document, a chat)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_chat
from vaultmind.config import load_config
from vaultmind.errors import NotFound, UsageError
from vaultmind.ingest.detect import ingest_paths
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.memory import Memory

MINUTES = "The atlas launch moved to March, and Lina wrote the budget.\n\n"


def test_a_document_over_the_vaults_cap_on_a_note_is_refused_and_not_written(vault: Path) -> None:
    with Memory.open(load_config(vault, embed_provider="none", max_file_bytes=4096)) as memory:
        with pytest.raises(UsageError, match=r"over this vault's cap of .* MB a note \(\[vault\] max_file_mb\)"):
            memory.query("ingest_document", {"title": "Minutes", "body": MINUTES * 100, "source_id": "minutes"})
        assert not (vault / "sources" / "document" / "agent").exists(), "nothing was written"
        under = memory.query("ingest_document", {"title": "Minutes", "body": MINUTES * 10, "source_id": "minutes"})
        assert under["ingested"]["leaves"] >= 1


def test_a_note_written_where_the_vault_ignores_says_so_never_that_the_source_does_not_exist(vault: Path) -> None:
    config = load_config(vault, embed_provider="none", ignore=("sources/document/agent/**",))
    with Memory.open(config) as memory:
        with pytest.raises(UsageError, match=r"sources/document/agent/minutes\.md was written but is not indexed: \[vault\] ignore") as caught:
            memory.query("ingest_document", {"title": "Minutes", "body": MINUTES, "source_id": "minutes"})
        assert not isinstance(caught.value, NotFound)
        assert (vault / "sources" / "document" / "agent" / "minutes.md").is_file(), "the note written is kept"


def test_an_agents_document_never_replaces_a_files_document_of_the_same_id(vault: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "Plan.md").write_text("# Plan\n\nThe quarterly plan says we launch in May.\n", encoding="utf-8")
    [rel] = ingest_paths("document", [docs / "Plan.md"], vault).written
    before = (vault / rel).read_bytes()
    source_id = split_frontmatter(before.decode("utf-8")).data["source_id"]
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        with pytest.raises(UsageError, match=rf"source_id {source_id!r} is taken by a document source \({rel}\)"):
            memory.query("ingest_document", {"title": "Agent notes", "body": "an agent's text", "source_id": source_id})
        assert (vault / rel).read_bytes() == before, "the file's note is as it was"
        assert not (vault / "sources" / "document" / "agent").exists()


def test_an_agents_document_never_joins_a_chat_of_the_same_id(vault: Path, memory: Memory) -> None:
    write_chat(vault, "2024-03-01", [("alice", "We moved the launch to the Lisbon office")])
    memory.sync()
    with pytest.raises(UsageError, match=r"source_id 'chat:two' is taken by a chat source \(sources/chat/two/2024-03-01\.md\)"):
        memory.query("ingest_document", {"title": "Agent memo", "body": "agent text only", "source_id": "chat:two"})
    assert memory.query("query_source", {"source_id": "chat:two"})["total"] == 1
    mine = memory.query("ingest_document", {"title": "Agent memo", "body": "agent text only", "source_id": "agent:memo"})
    assert mine["ingested"]["leaves"] == 1, "an id of its own is taken as before"


@pytest.mark.parametrize("folder", ["", "Meetings/"])
def test_an_agents_document_never_joins_the_tree_of_your_notes_a_hit_names(vault: Path, memory: Memory, folder: str) -> None:
    (vault / folder).mkdir(exist_ok=True)
    for i in (1, 2):
        (vault / f"{folder}user{i}.md").write_text(f"# User note {i}\n\nRho planning item {i} written by the user.\n", encoding="utf-8")
    memory.sync()
    tree = memory.query("search", {"query": "Rho planning"})["hits"][0]["tree"]
    assert tree == f"notes:{folder.rstrip('/') or '/'}"
    before = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    for source_id in (tree, "notes:Later", "entities"):
        with pytest.raises(UsageError, match=rf"source_id {source_id!r} is the tree of (your own notes|the entities)"):
            memory.query("ingest_document", {"title": "Agent summary", "body": "Rho summary by the agent.", "source_id": source_id})
    assert sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md")) == before, "nothing was written"
    assert memory.query("query_source", {"source_id": tree})["total"] == 2


def test_an_agents_document_an_older_version_kept_under_your_notes_tree_id_is_named_with_how_to_move_it(
    vault: Path, memory: Memory
) -> None:
    """An older vaultmind took `notes:…` as an agent's id. Its document can no longer be updated
    under that id: the refusal names its note, so the user can give it an id of its own and
    delete the old note, instead of only "use another id" while the old one stays searchable."""
    from vaultmind.ingest.agent_document import AGENT_SCOPE
    from vaultmind.ingest.model import DocumentInput
    from vaultmind.ingest.writer import write_documents

    older = DocumentInput("notes:Ideas", AGENT_SCOPE, "Agent ideas", "Rho ideas by the agent.\n", modified="2024-03-01T00:00:00Z", id_given=True)
    report = write_documents(vault, [older])
    written, gone = report.to_sync()
    memory.sync_paths(written, gone=gone)
    (note,) = written
    text = (vault / note).read_text(encoding="utf-8")
    with pytest.raises(UsageError, match=r"source_id 'notes:Ideas' is the tree of your own notes") as caught:
        memory.query("ingest_document", {"title": "Agent ideas", "body": "Rho ideas, revised.", "source_id": "notes:Ideas"})
    said = f"{caught.value} {caught.value.hint}"
    assert note in said and "delete" in said, said
    assert (vault / note).read_text(encoding="utf-8") == text, "the older note is left as it was"
