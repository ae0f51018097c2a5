"""Every message cites its original: WhatsApp, Signal and an email without a Message-ID get a
`source_ref` from their note's `source_id` and their id, derived when indexed (no note holds it)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_main as run
from tests.conftest import snapshot_files, write
from vaultmind.config import load_config
from vaultmind.markdown.note import parse_note
from vaultmind.memory import Memory

WHATSAPP_EXPORT = (
    "04/03/2024, 09:00 - Alice: The boat rental opens on Saturday\n"
    "04/03/2024, 09:02 - Bob: Book the boat rental for ten people\n"
)
SIGNAL_EXPORT = (
    "[2024-03-05, 18:00] Carol: The boat rental wants a deposit\n"
    "[2024-03-05, 18:05] Dan: I paid the boat rental yesterday\n"
)
EMAIL_WITHOUT_ID = (
    "From: Erin <erin@example.org>\n"
    "To: Alice <alice@example.org>\n"
    "Subject: Boat rental receipt\n"
    "Date: Wed, 06 Mar 2024 10:00:00 +0000\n"
    "\n"
    "The boat rental receipt is attached to the club's account.\n"
)
REF = re.compile(
    r"chat://whatsapp/Family%20Group/h-[0-9a-f]{16}|chat://signal/Book%20club/h-[0-9a-f]{16}"
    r"|email://inbox/nomid-[0-9a-f]{20}"
)


pytestmark = pytest.mark.usefixtures("cli_vault")  # every test: a vault the command line takes, no embedder


def _exports(folder: Path) -> list[Path]:
    return [
        write(folder, "WhatsApp Chat with Family Group.txt", WHATSAPP_EXPORT),
        write(folder, "Book club.txt", SIGNAL_EXPORT),
        write(folder, "inbox/receipt.eml", EMAIL_WITHOUT_ID),
    ]


def _ingest(capsys: pytest.CaptureFixture[str], vault: Path, exports: list[Path]) -> list[dict[str, Any]]:
    whatsapp, signal, mail = exports
    return [
        run(capsys, "ingest", *args, "--vault", str(vault), "--json")[1]
        for args in (("chat", str(whatsapp)), ("chat", "--format", "signal", str(signal)), ("email", str(mail)))
    ]


def test_whatsapp_signal_and_an_email_without_message_id_cite_their_original(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exports = _exports(tmp_path / "exports")
    assert all(result["written"] for result in _ingest(capsys, vault, exports))
    assert not any("ref=" in p.read_text(encoding="utf-8") for p in (vault / "sources").rglob("*.md")), (
        "no note holds the derived ref: notes read as they always did"
    )

    code, result, _ = run(capsys, "query", "walk", "boat rental", "--vault", str(vault), "--json", "--evidence")
    hits = result["hits"]
    assert code == 0 and len(hits) == 5
    refs = [ref for hit in hits for ref in hit["source_refs"]]
    assert all(len(hit["source_refs"]) == 1 for hit in hits) and all(REF.fullmatch(ref) for ref in refs), refs
    assert {ref.split("/")[2] for ref in refs} == {"whatsapp", "signal", "inbox"}
    for word, platform in (("Saturday", "whatsapp"), ("deposit", "signal"), ("receipt", "inbox")):
        code, found, _ = run(capsys, "query", "walk", word, "--vault", str(vault), "--json", "--evidence")
        cited = [ref for ref in refs if ref.split("/")[2] == platform and ref in found["evidence"]]
        assert code == 0 and cited, found["evidence"]

    mail = next(hit for hit in hits if hit["note_path"].startswith("sources/email/"))
    code, explained, _ = run(capsys, "explain", mail["node_id"], "--vault", str(vault), "--json")
    assert code == 0 and explained["leaf"]["source_ref"] == mail["source_refs"][0]

    before = snapshot_files(vault)
    again = _ingest(capsys, vault, exports)
    assert [r["written"] for r in again] == [[], [], []] and not any(r.get("warnings") for r in again)
    assert snapshot_files(vault) == before


OLD_NOTE = """---
vaultmind: source
kind: chat
source_id: "whatsapp:Family Group"
scope: whatsapp/Family Group
title: Family Group
participants:
  - Alice
time_start: "2024-03-04T09:00:00Z"
time_end: "2024-03-04T09:00:00Z"
messages: 1
vaultmind_body_sha256: "{sha}"
---
{body}"""
OLD_BODY = """# Family Group · 2024-03-04

> [!message] Alice · 2024-03-04 09:00
> The boat rental opens on Saturday
> %% vaultmind id="h-0123456789abcdef" at="2024-03-04T09:00:00Z" author="Alice" %%

^m-h-0123456789abcdef
"""


def test_a_note_written_before_cites_its_message_and_stays_byte_identical(vault: Path) -> None:
    """A WhatsApp note an earlier vaultmind wrote (its meta line without `ref`) is indexed with the
    ref derived from its front matter and the message's id; the file is not touched."""
    import hashlib

    path = write(
        vault,
        "sources/chat/whatsapp/family-group/2024-03-04.md",
        OLD_NOTE.format(sha=hashlib.sha256(OLD_BODY.encode()).hexdigest(), body=OLD_BODY),
    )
    before = path.read_bytes()
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        refs = memory.index.query("SELECT source_ref FROM leaves")
        assert refs == [("chat://whatsapp/Family%20Group/h-0123456789abcdef",)]
        hit = memory.walk("boat rental", limit=3)["hits"][0]
        assert hit["source_refs"] == ["chat://whatsapp/Family%20Group/h-0123456789abcdef"]
    assert path.read_bytes() == before


def test_a_ref_the_meta_line_gives_is_kept_and_a_message_without_an_id_gets_none() -> None:
    """The derived ref stands in only for a missing one: a Telegram message keeps its own, and a
    callout without a meta line (typed by hand) is given no id-less ref."""
    body = (
        "> [!message] Alice · 2024-03-04 09:00\n> Hi\n"
        '> %% vaultmind id="7" at="2024-03-04T09:00:00Z" author="Alice" ref="telegram://chat/42/7" %%\n\n'
        "> [!message] Bob · 2024-03-04 09:01\n> Typed by hand\n"
    )
    note = f'---\nvaultmind: source\nkind: chat\nsource_id: "telegram:42"\n---\n{body}'
    leaves = parse_note("sources/chat/telegram/x/2024-03-04.md", note).leaves
    assert [leaf.source_ref for leaf in leaves] == ["telegram://chat/42/7", None]


def test_a_summary_of_a_whatsapp_chat_lists_its_messages_refs(vault: Path) -> None:
    """A summary sealed over WhatsApp messages cites, as its sources, the derived refs of the
    messages it folds, in their order."""

    from vaultmind.markdown.render import Message, SourceMeta, render_source_note
    from vaultmind.tree.engine import seal_ready

    meta = SourceMeta(kind="chat", source_id="whatsapp:Family Group", scope="whatsapp/Family Group", title="Family Group")
    messages = [
        Message(
            message_id=f"h-{i:016x}",
            author=name,
            timestamp=f"2024-05-08T09:{i:02d}:00Z",
            text=f"{name} reports progress on the lighthouse restoration, step {i}.",
        )
        for i, name in enumerate(["Alice Chen", "Bob Stone"] * 6)
    ]
    write(vault, "sources/chat/whatsapp/family-group/2024-05-08.md", render_source_note(meta, messages))
    extra = {"trees.l0_tokens": 64, "trees.fanout": 2, "trees.summarizer": "fallback"}
    with Memory.open(load_config(vault, embed_provider="none", extra=extra)) as memory:
        memory.sync()
        assert seal_ready(memory).sealed
        hits = memory.query("walk", {"query": "lighthouse restoration progress", "limit": 30})["hits"]
        summaries = [h for h in hits if h["node_kind"] == "summary"]
        assert summaries and all(h["source_refs"] for h in hits)
        widest = max(summaries, key=lambda h: len(h["source_refs"]))
        steps = [int(ref.rsplit("/h-", 1)[1], 16) for ref in widest["source_refs"]]
        assert len(steps) > 2 and steps == sorted(steps), "in the messages' order"
        assert all(ref.startswith("chat://whatsapp/Family%20Group/h-") for h in hits for ref in h["source_refs"])
