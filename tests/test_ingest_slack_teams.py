"""A Slack channel's file whose messages name their team is never merged into another
workspace's export where their `ts` meet (Slack's ids are the channel's): each keeps its
messages, in one ingest or one after the other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_main, write

TS = "1736478514.897649"  # one `ts` in both workspaces


def _export(root: Path) -> Path:
    write(root, "users.json", json.dumps([{"id": "U1", "team_id": "T1", "name": "alice", "real_name": "Alice"}]))
    write(root, "channels.json", json.dumps([{"id": "C1", "name": "general", "members": ["U1"]}]))
    day = [{"type": "message", "user": "U1", "team": "T1", "text": "kumquat order from acme", "ts": TS}]
    write(root, "general/2025-01-10.json", json.dumps(day))
    return root


def _channel_file(root: Path) -> Path:
    lone = [
        {"type": "message", "user": "U9", "team": "T2", "text": "fig delivery from globex", "ts": TS},
        {"type": "message", "user": "U9", "team": "T2", "text": "second fig note", "ts": "1736478630.905399"},
    ]
    return write(root, "chan1.json", json.dumps(lone))


def _texts(vault: Path) -> str:
    return "".join(path.read_text(encoding="utf-8") for path in sorted((vault / "sources").rglob("*.md")))


@pytest.mark.parametrize("order", ["together", "file first", "export first"])
def test_a_channel_file_of_another_team_keeps_its_messages(
    order: str, tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, ".vaultmind/config.toml", "")
    export, lone = str(_export(tmp_path / "acme")), str(_channel_file(tmp_path / "globex"))
    runs = {"together": [[export, lone]], "file first": [[lone], [export]], "export first": [[export], [lone]]}[order]
    added = 0
    for paths in runs:
        code, data, _ = run_main(capsys, "ingest", "chat", *paths, "--format", "slack", "--vault", str(vault), "--json")
        assert code == 0, data
        added += data["messages_added"]
    assert added == 3
    texts = _texts(vault)
    assert "kumquat order from acme" in texts and "fig delivery from globex" in texts and "second fig note" in texts
    assert sorted(p.parent.relative_to(vault / "sources/chat/slack").as_posix() for p in (vault / "sources").rglob("*.md")) == [
        "t1/general",
        "t2/chan1",
    ]


def test_a_slack_folder_of_lists_alone_says_so(tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Slack export's metadata without its channels' folders (users.json, channels.json) is
    said to be that, not a chat whose messages are all system notices."""
    write(vault, ".vaultmind/config.toml", "")
    meta = _export(tmp_path / "acme")
    (meta / "general/2025-01-10.json").unlink()
    (meta / "general").rmdir()
    code, data, _ = run_main(capsys, "ingest", "chat", str(meta), "--vault", str(vault), "--json")
    assert code == 0 and data["written"] == []
    assert data["warnings"] == [f"{meta}: a Slack export's lists of users and channels, without a channel's messages; nothing to ingest"]
