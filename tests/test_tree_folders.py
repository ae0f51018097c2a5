"""Each tree's summaries in a folder of its own, named readably, and kept where they are."""

from __future__ import annotations

import hashlib
import shutil
from datetime import UTC, datetime
from pathlib import Path

from vaultmind.memory import Memory
from vaultmind.tree.engine import flush
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.note import tree_slug
from vaultmind.tree.view import tree_view

from .treekit import chat_day, summary_rows, tree_config

LATER = datetime(2030, 1, 1, tzinfo=UTC)


def tree_digest(tree: str) -> str:
    return hashlib.sha256(tree.encode("utf-8")).hexdigest()[:8]


def _folders(memory: Memory) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for row in summary_rows(memory):
        out.setdefault(row["tree"], set()).add(row["note_path"].split("/")[1])
    return out


def test_a_tree_s_folder_keeps_the_letters_of_its_name() -> None:
    """"Straße Crew" was `stra-e-crew`, "Łódź trip" `d-trip`; a name in another script was
    nothing (every such chat of a platform shared `whatsapp/`)."""
    assert tree_slug("whatsapp:Straße Crew") == "whatsapp-strasse-crew"
    assert tree_slug("whatsapp:Łódź trip") == "whatsapp-lodz-trip"
    assert tree_slug("whatsapp:Færøy · Þór") == "whatsapp-faeroy-thor"
    assert tree_slug("whatsapp:家族") == f"whatsapp-{tree_digest('whatsapp:家族')}" != tree_slug("whatsapp:友達")
    assert tree_slug("slack:acme/general") == "slack-acme-general"


def test_two_trees_whose_ids_slug_alike_get_a_folder_each(vault: Path) -> None:
    """"Team A" and "team-a" are two chats whose tree ids slug to one folder: the first to seal
    has it, the other its slug and its id's digest; `vaultmind tree` names each tree's folder,
    and the next pass writes nothing."""
    chat_day(vault, 0, 0, 3, source_id="chat:Team A", scope="chat/team-a")
    chat_day(vault, 0, 3, 3, source_id="chat:team-a", scope="chat/team-a-2")
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        assert flush(memory, now=LATER, summarizer=FallbackSummarizer()).sealed
        folders = _folders(memory)
        assert folders == {"chat:Team A": {"chat-team-a"}, "chat:team-a": {f"chat-team-a-{tree_digest('chat:team-a')}"}}
        listed = {t["tree"]: t["folder"] for t in tree_view(memory)["trees"]}
        assert listed == {tree: "summaries/" + folder for tree, (folder,) in folders.items()}
        assert tree_view(memory, "chat:team-a")["folder"] == listed["chat:team-a"]
        again = flush(memory, now=LATER, summarizer=FallbackSummarizer())
        assert not again.sealed and not again.unsealed


def test_a_tree_keeps_the_folder_its_summaries_are_in(vault: Path) -> None:
    """Summaries an earlier version put under another name (`whatsapp-stra-e-crew`) stay there,
    and the tree's next summaries join them: a tree's folder never splits."""
    tree = "whatsapp:Straße Crew"
    chat_day(vault, 0, 0, 3, source_id=tree, scope="whatsapp/strae-crew")
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        assert flush(memory, now=LATER, summarizer=FallbackSummarizer()).sealed
        assert _folders(memory) == {tree: {"whatsapp-strasse-crew"}}
        shutil.move(vault / "summaries/whatsapp-strasse-crew", vault / "summaries/whatsapp-stra-e-crew")
        chat_day(vault, 1, 3, 3, source_id=tree, scope="whatsapp/strae-crew")
        memory.sync()
        assert flush(memory, now=LATER, summarizer=FallbackSummarizer()).sealed
        assert _folders(memory) == {tree: {"whatsapp-stra-e-crew"}}
        assert not any(row["stale"] for row in summary_rows(memory))
