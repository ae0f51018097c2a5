"""ChatGPT canvas documents: the answer ChatGPT wrote to a canvas, kept in the conversation.

When ChatGPT answers in a canvas, the export holds the document in the assistant's message to
the canvas tool (`recipient` `canmore.create_textdoc`; its text a JSON object `{"name",
"type", "content"}`), and the reply shown beside it is one line ("I've drafted the letter in
the canvas."). Later edits are messages to `canmore.update_textdoc` (`{"updates": [{"pattern",
"multiple", "replacement"}]}`: a regular expression, usually `.*`, and its replacement), and the
tool's answer after each names the document (`metadata.canvas.textdoc_id`). Each becomes a
message of ChatGPT's: `[canvas: <name>]` and the document as it then reads (a code document in
a fenced block of its language); an edit that cannot be applied keeps its replacement text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vaultmind.ingest.common import as_str

CREATE = "canmore.create_textdoc"
UPDATE = "canmore.update_textdoc"
CANVAS_RECIPIENTS = frozenset({CREATE, UPDATE})


@dataclass(slots=True)
class _Document:
    name: str
    kind: str  # "document", "code/python" …
    content: str


@dataclass(slots=True)
class Canvas:
    """The canvas documents of one conversation as its messages create and edit them, in order."""

    documents: dict[str, _Document] = field(default_factory=dict)  # by textdoc id ("" when not said)
    last: str | None = None  # the id of the document written last (an edit names none itself)

    def text(self, message: dict[str, Any], answer: dict[str, Any] | None) -> str:
        """The text of `message`, a message to the canvas tool; `answer`: the tool's answer."""
        payload = _payload(message)
        data = _json(payload)
        doc_id = _textdoc_id(answer)
        if message.get("recipient") == CREATE:
            if not isinstance(data, dict) or not isinstance(data.get("content"), str):
                return payload
            doc = _Document(as_str(data.get("name")) or "canvas", as_str(data.get("type")) or "document", data["content"])
        else:
            key = doc_id if doc_id is not None and doc_id in self.documents else self.last
            before = self.documents.get(key or "") if key is not None else None
            updates = data.get("updates") if isinstance(data, dict) else None
            if before is None or not isinstance(updates, list):
                return f"[canvas edit]\n\n{_replacements(updates) if isinstance(updates, list) else payload}".strip()
            content = _applied(before.content, updates)
            if content is None:
                return f"[canvas: {before.name}, an edit]\n\n{_replacements(updates)}".strip()
            doc = _Document(before.name, before.kind, content)
            doc_id = doc_id or key
        key = doc_id or ""
        self.documents[key] = doc
        self.last = key
        return f"[canvas: {doc.name}]\n\n{_shown(doc)}".strip()


def _payload(message: dict[str, Any]) -> str:
    content = message.get("content") if isinstance(message.get("content"), dict) else {}
    assert isinstance(content, dict)
    if isinstance(content.get("text"), str):
        return str(content["text"])
    parts = [p for p in content.get("parts") or [] if isinstance(p, str)]
    return "\n".join(parts)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None


def _textdoc_id(answer: dict[str, Any] | None) -> str | None:
    metadata = answer.get("metadata") if isinstance(answer, dict) else None
    canvas = metadata.get("canvas") if isinstance(metadata, dict) else None
    return as_str(canvas.get("textdoc_id")) if isinstance(canvas, dict) else None


def _applied(content: str, updates: list[Any]) -> str | None:
    """`content` with each update applied, or None when one cannot be (not a pattern Python reads,
    or matching nothing)."""
    for update in updates:
        if not isinstance(update, dict) or not isinstance(update.get("pattern"), str):
            return None
        replacement = str(update.get("replacement") or "")
        try:
            pattern = re.compile(update["pattern"], re.DOTALL)
        except (re.error, RecursionError):
            return None
        if pattern.search(content) is None:
            return None
        content = pattern.sub(_literal(replacement), content, count=0 if update.get("multiple") else 1)
    return content


def _literal(text: str) -> Callable[[re.Match[str]], str]:
    """A replacement taken as written (no group references, as the canvas applies it), in place
    of each match but an empty one just where the match before it ended: `.*` matches the
    whole document, then the nothing at its end, and the document is not written twice."""
    ended = -1

    def replaced(match: re.Match[str]) -> str:
        nonlocal ended
        after_last = match.start() == match.end() == ended
        ended = match.end()
        return "" if after_last else text

    return replaced


def _replacements(updates: list[Any]) -> str:
    return "\n\n".join(str(u["replacement"]) for u in updates if isinstance(u, dict) and isinstance(u.get("replacement"), str))


def _shown(doc: _Document) -> str:
    if not doc.kind.startswith("code/"):
        return doc.content
    fence = "```"
    while fence in doc.content:
        fence += "`"
    return f"{fence}{doc.kind[5:]}\n{doc.content.rstrip()}\n{fence}"
