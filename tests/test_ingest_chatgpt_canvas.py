"""A ChatGPT answer written to a canvas: the document is kept in the conversation's note (it
was dropped, leaving only "I've drafted the letter in the canvas."), its edits as it then reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import write
from vaultmind.ingest.chatgpt import parse_chatgpt
from vaultmind.ingest.detect import ingest_paths

LETTER = "Dear Mr. Keller,\n\nI hereby terminate the tenancy of flat 3B with effect from 31 August 2024."


def node(key: str, parent: str | None, role: str, text: str, *, at: int, recipient: str = "all", kind: str = "text",
         metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    content = {"content_type": kind, "text": text} if kind == "code" else {"content_type": kind, "parts": [text]}
    return {"id": key, "parent": parent, "children": [], "message": {
        "id": key, "author": {"role": role}, "create_time": 1709546400 + at, "content": content,
        "recipient": recipient, "metadata": metadata or {}}}


def conversation(*nodes: dict[str, Any]) -> list[dict[str, Any]]:
    mapping = {"root": {"id": "root", "parent": None, "children": [], "message": None}}
    for item in nodes:
        mapping[item["parent"]]["children"].append(item["id"])
        mapping[item["id"]] = item
    return [{"id": "6650aaaa-bbbb-cccc-dddd-eeeeffff0000", "title": "Termination letter", "create_time": 1709546400,
             "mapping": mapping, "current_node": nodes[-1]["id"]}]


def tool(key: str, parent: str, at: int) -> dict[str, Any]:
    return node(key, parent, "tool", "Successfully updated text document", at=at, recipient="all",
                metadata={"canvas": {"textdoc_id": "doc1", "textdoc_type": "document"}})


def test_a_canvas_document_and_its_edit_are_kept(tmp_path: Path, vault: Path) -> None:
    created = json.dumps({"name": "termination_letter", "type": "document", "content": LETTER})
    edited = json.dumps({"updates": [{"pattern": "31 August 2024", "multiple": False, "replacement": "30 September 2024"}]})
    path = write(tmp_path, "conversations.json", json.dumps(conversation(
        node("u1", "root", "user", "Draft the termination letter for flat 3B.", at=0),
        node("a1", "u1", "assistant", created, at=10, recipient="canmore.create_textdoc", kind="code"),
        tool("t1", "a1", 11),
        node("a2", "t1", "assistant", "I've drafted the letter in the canvas.", at=12),
        node("u2", "a2", "user", "Make it end of September.", at=60),
        node("a3", "u2", "assistant", edited, at=70, recipient="canmore.update_textdoc", kind="code"),
        tool("t2", "a3", 71),
        node("a4", "t2", "assistant", "Changed the date.", at=72),
    )))
    [batch] = parse_chatgpt(path)
    texts = [(m.message_id, m.author, m.text) for m in batch.messages]
    assert texts == [
        ("u1", "user", "Draft the termination letter for flat 3B."),
        ("a1", "ChatGPT", f"[canvas: termination_letter]\n\n{LETTER}"),
        ("a2", "ChatGPT", "I've drafted the letter in the canvas."),
        ("u2", "user", "Make it end of September."),
        ("a3", "ChatGPT", "[canvas: termination_letter]\n\n" + LETTER.replace("31 August", "30 September")),
        ("a4", "ChatGPT", "Changed the date."),
    ]
    report = ingest_paths("chat", [path], vault)
    assert report.messages_added == 6
    assert "I hereby terminate the tenancy" in (vault / report.written[0]).read_text(encoding="utf-8")


def test_a_code_canvas_is_fenced_and_an_edit_that_cannot_apply_keeps_its_text(tmp_path: Path) -> None:
    code = json.dumps({"name": "fib", "type": "code/python", "content": "def fib(n):\n    return n\n"})
    broken = json.dumps({"updates": [{"pattern": "(?<=x", "replacement": "def fib(n):\n    return 1\n"}]})
    path = write(tmp_path, "conversations.json", json.dumps(conversation(
        node("u1", "root", "user", "Write fib.", at=0),
        node("a1", "u1", "assistant", code, at=10, recipient="canmore.create_textdoc"),
        node("a2", "a1", "assistant", broken, at=20, recipient="canmore.update_textdoc"),
    )))
    [batch] = parse_chatgpt(path)
    assert [m.text for m in batch.messages[1:]] == [
        "[canvas: fib]\n\n```python\ndef fib(n):\n    return n\n```",
        "[canvas: fib, an edit]\n\ndef fib(n):\n    return 1",
    ]


def test_a_whole_document_rewrite_marked_multiple_is_the_document_once(tmp_path: Path) -> None:
    """The canvas rewrites a document whole by the pattern `.*`; with `multiple` set, the empty
    match at the document's end (after the whole of it matched) wrote the new document twice."""
    created = json.dumps({"name": "note", "type": "document", "content": "First draft.\nSecond line."})
    rewrite = json.dumps({"updates": [{"pattern": ".*", "multiple": True, "replacement": "Final text."}]})
    path = write(tmp_path, "conversations.json", json.dumps(conversation(
        node("u1", "root", "user", "Draft a note.", at=0),
        node("a1", "u1", "assistant", created, at=10, recipient="canmore.create_textdoc"),
        node("a2", "a1", "assistant", rewrite, at=20, recipient="canmore.update_textdoc"),
    )))
    [batch] = parse_chatgpt(path)
    assert batch.messages[-1].text == "[canvas: note]\n\nFinal text."
