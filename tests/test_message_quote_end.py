"""A message that quotes and then answers: its note ends the quote where it ends, so Markdown
(Obsidian, markdown-it) shows the answer outside the quote, and it reads back as sent. A note
written before this rule reads as it did, and re-ingesting into it loses or doubles nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from .conftest import run_main

ASK = "Shall we leave Friday?"
ANSWER = "> Shall we leave Friday?\nSaturday is better for me."
TEXTS = [
    ASK,
    ANSWER,
    ">> the first plan\n> the second plan\nneither, sorry",  # two quotes that end, one inside the other
    "> a quote already ended\n\nby an empty line",  # reads back with its one empty line
    "```\n> code, not a quote\nstill code\n```",  # code is left as it is
    "> - a listed point\n>\n>> deeper\n\n\nafter two empty lines\n> and a last quote",
]
# A note as vaultmind wrote the first two messages before: the answer shows inside the quote.
OLD_NOTE = """---
vaultmind: source
kind: chat
source_id: "chat:trip"
scope: chat/trip
title: "Trip · 2024-05-01"
participants:
  - Ann
  - Ben
time_start: "2024-05-01T10:00:00Z"
time_end: "2024-05-01T10:01:00Z"
messages: 2
vaultmind_body_sha256: "90d6601079485568f2aedd1bde6fddbbaa5cccfa494f5135e9f5c5db9b6cafdc"
---
# Trip · 2024-05-01

> [!message] Ann · 2024-05-01 10:00
> Shall we leave Friday?
> %% vaultmind id="1" at="2024-05-01T10:00:00Z" author="Ann" %%

^m-1

> [!message] Ben · 2024-05-01 10:01
> > Shall we leave Friday?
> Saturday is better for me.
> %% vaultmind id="2" at="2024-05-01T10:01:00Z" author="Ben" %%

^m-2
"""


def _export(tmp_path: Path, texts: list[str]) -> Path:
    export = tmp_path / "trip.json"
    messages = [
        {"id": str(n), "author": "Ann" if n % 2 else "Ben", "timestamp": f"2024-05-01T10:{n - 1:02d}:00Z", "text": text}
        for n, text in enumerate(texts, start=1)
    ]
    export.write_text(json.dumps({"title": "Trip", "messages": messages}), encoding="utf-8")
    return export


def _quote_depths(markdown: str) -> dict[str, int]:
    """Each line of the paragraphs CommonMark reads in `markdown`, with how many quotes its
    paragraph is inside (a line written twice: its last paragraph)."""
    depths: dict[str, int] = {}
    depth = 0
    for token in MarkdownIt("commonmark").parse(markdown):
        depth += {"blockquote_open": 1, "blockquote_close": -1}.get(token.type, 0)
        if token.type == "inline":
            depths.update(dict.fromkeys(token.content.split("\n"), depth))
    return depths


def _texts(capsys: pytest.CaptureFixture[str], vault: Path) -> list[str]:
    code, hits, _ = run_main(capsys, "query", "source", "--source-id", "chat:trip", "--vault", str(vault), "--json")
    assert code == 0
    return [hit["content"] for hit in hits["hits"]]


def test_an_answer_after_a_quote_shows_outside_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = _export(tmp_path, TEXTS)
    vault = tmp_path / "vault"
    assert run_main(capsys, "init", str(vault))[0] == 0
    assert run_main(capsys, "ingest", "chat", str(export), "--vault", str(vault))[0] == 0
    (note,) = (vault / "sources" / "chat").rglob("*.md")
    written = note.read_bytes()
    depths = _quote_depths(written.decode("utf-8"))
    # the callout is one quote: a message's own text is inside it, what it quotes one deeper
    assert depths[ASK] == 2 and depths["Saturday is better for me."] == 1, depths
    assert depths["the first plan"] == 3 and depths["the second plan"] == 2 and depths["neither, sorry"] == 1, depths
    assert depths["a quote already ended"] == 2 and depths["by an empty line"] == 1, depths
    assert depths["deeper"] == 3 and depths["after two empty lines"] == 1, depths
    assert "> ```\n> > code, not a quote\n> still code\n> ```\n" in written.decode("utf-8")
    assert _texts(capsys, vault) == TEXTS
    code, report, _ = run_main(capsys, "ingest", "chat", str(export), "--vault", str(vault), "--json")
    assert code == 0 and report["messages_added"] == 0 and note.read_bytes() == written, report


def test_a_note_written_before_reads_as_it_did_and_re_ingests_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    assert run_main(capsys, "init", str(vault))[0] == 0
    note = vault / "sources" / "chat" / "chat" / "trip" / "2024-05-01.md"
    note.parent.mkdir(parents=True)
    note.write_bytes(OLD_NOTE.encode("utf-8"))
    # the same export again: every message is known, the note is left as it is
    code, report, _ = run_main(capsys, "ingest", "chat", str(_export(tmp_path, TEXTS[:2])), "--vault", str(vault), "--json")
    assert code == 0 and report["messages_added"] == 0 and report["messages_known"] == 2, report
    assert note.read_bytes() == OLD_NOTE.encode("utf-8")
    assert _texts(capsys, vault) == TEXTS[:2]
    # a longer export: the note gets the new messages, each message once, and ends its quotes
    export = _export(tmp_path, TEXTS)
    code, report, _ = run_main(capsys, "ingest", "chat", str(export), "--vault", str(vault), "--json")
    assert code == 0 and report["messages_added"] == len(TEXTS) - 2 and report["messages_known"] == 2, report
    assert list((vault / "sources" / "chat").rglob("*.md")) == [note]
    written = note.read_bytes()
    assert written.decode("utf-8").count("> [!message]") == len(TEXTS)
    assert _quote_depths(written.decode("utf-8"))["Saturday is better for me."] == 1
    assert _texts(capsys, vault) == TEXTS
    code, report, _ = run_main(capsys, "ingest", "chat", str(export), "--vault", str(vault), "--json")
    assert code == 0 and report["messages_added"] == 0 and note.read_bytes() == written, report
