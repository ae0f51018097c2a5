"""ChatGPT data exports: `conversations.json` (a list of conversations, each a `mapping` tree).

- one note per conversation: `sources/chat/chatgpt/<YYYY-MM-DD>-<first 8 of its id>.md`
  (the date it was created; stable when the conversation is renamed or continued);
- the current branch only: from `current_node` up to the root, in order; regenerated answers
  and edited prompts on other branches are left out — one an earlier ingest wrote (the current
  branch then) stays in the note, marked as replaced (`SourceBatch.replaced`);
- user and assistant prose only: system and tool messages, messages to tools (`recipient` other
  than `all`: code, browsing), hidden context (custom instructions, memory), reasoning
  (`thoughts`, `reasoning_recap`) and hidden messages are dropped; images become `[image]`,
  inline base64 data `[data]`, citation markers are removed;
- a document ChatGPT wrote to a canvas (its message to the canvas tool) is kept as its message,
  `[canvas: <name>]` and the document, each edit as the document then reads (`chatgpt_canvas`);
- message id: ChatGPT's; `source_ref`: the conversation's address.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from vaultmind.ingest.chatgpt_canvas import CANVAS_RECIPIENTS, Canvas
from vaultmind.ingest.common import as_str, epoch_to_utc, json_array_items, read_text, strip_base64
from vaultmind.ingest.errors import ingest_error
from vaultmind.ingest.model import SourceBatch
from vaultmind.markdown.render import Message, SourceMeta

AUTHORS = {"user": "user", "assistant": "ChatGPT"}
TEXT_TYPES = frozenset({"text", "multimodal_text"})
_CITE_RE = re.compile(r"\ue200[^\ue201]*\ue201|【\d+(?::\d+)?†[^】]*】")


def parse_chatgpt(path: Path, *, warn: Callable[[str], None] | None = None) -> list[SourceBatch]:
    """Parse a ChatGPT `conversations.json`."""
    text = read_text(path)
    batches = []
    for index, (line, conv) in enumerate(json_array_items(path, text, warn)):
        batch = _conversation(path, line, index, conv)
        if batch is not None:
            batches.append(batch)
    return batches


def _conversation(path: Path, line: int, index: int, conv: Any) -> SourceBatch | None:
    if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
        raise ingest_error(path, f'conversation {index}: expected an object with a "mapping"', line=line)
    conv_id = as_str(conv.get("conversation_id")) or as_str(conv.get("id"))
    if not conv_id:
        raise ingest_error(path, f"conversation {index}: no id", line=line)
    created = _time(conv.get("create_time"))
    messages: list[Message] = []
    last = created
    branch = _branch(conv["mapping"], as_str(conv.get("current_node")))
    canvas = Canvas()
    for place, node in enumerate(branch):
        message = node.get("message")
        if not isinstance(message, dict) or not _kept(message):
            continue
        author = AUTHORS[message["author"]["role"]]
        if message.get("recipient") in CANVAS_RECIPIENTS:
            answer = branch[place + 1].get("message") if place + 1 < len(branch) else None
            text = canvas.text(message, answer if isinstance(answer, dict) else None)
        else:
            text = _text(message.get("content") or {})
        if not text.strip():
            continue
        timestamp = _time(message.get("create_time")) or last
        if timestamp is None:
            raise ingest_error(path, f"conversation {index}: message without a time", line=line)
        last = timestamp
        message_id = as_str(message.get("id")) or as_str(node.get("id")) or str(len(messages))
        messages.append(
            Message(
                message_id=message_id,
                author=author,
                timestamp=timestamp,
                text=text,
                source_ref=f"https://chatgpt.com/c/{conv_id}",
            )
        )
    if not messages:
        return None
    start = created or min(m.timestamp for m in messages if isinstance(m.timestamp, datetime))
    meta = SourceMeta(
        kind="chat",
        source_id=f"chatgpt:{conv_id}",
        scope="chatgpt",
        title=as_str(conv.get("title")) or "ChatGPT conversation",
    )
    name = f"{start:%Y-%m-%d}-{conv_id[:8]}"
    replaced = _replaced(conv["mapping"], {id(node) for node in branch})
    return SourceBatch(meta=meta, messages=tuple(messages), bucket="whole", note_name=name, replaced=replaced)


def _replaced(mapping: dict[str, Any], shown: set[int]) -> tuple[tuple[str, str], ...]:
    """(message id, why) of every kept message off the current branch: an answer regenerated, a
    prompt edited, or a message below one (the branch left then). Such a message, written into
    the note by an earlier ingest, is marked (`SourceBatch.replaced`); none is written anew."""
    nodes = {key: node for key, node in mapping.items() if isinstance(node, dict)}
    out: dict[str, str] = {}
    for key in sorted(nodes):
        node = nodes[key]
        message = node.get("message")
        if id(node) in shown or not isinstance(message, dict) or not _kept(message):
            continue
        fork, seen = node, {key}  # the node where its branch leaves the current one
        while (parent := as_str(fork.get("parent"))) in nodes and id(nodes[parent]) not in shown and parent not in seen:
            seen.add(parent)
            fork = nodes[parent]
        fork_message = fork.get("message") if isinstance(fork.get("message"), dict) else {}
        assert isinstance(fork_message, dict)
        author = fork_message.get("author")
        prompt = isinstance(author, dict) and author.get("role") == "user"
        if fork is node:
            why = "an earlier version of this prompt, edited in ChatGPT" if prompt else "an earlier answer, regenerated in ChatGPT"
        else:
            why = "on a branch left in ChatGPT when " + ("a prompt was edited" if prompt else "an answer was regenerated")
        message_id = as_str(message.get("id")) or as_str(node.get("id")) or key
        out.setdefault(message_id, why)
    return tuple(sorted(out.items()))


def _branch(mapping: dict[str, Any], current: str | None) -> list[dict[str, Any]]:
    """The nodes from the root to `current` (or to the newest leaf when it is missing)."""
    nodes = {key: node for key, node in mapping.items() if isinstance(node, dict)}
    if current not in nodes:
        leaves = [k for k, n in nodes.items() if not n.get("children")]
        if not leaves:
            return []
        current = max(leaves, key=lambda k: (_node_time(nodes[k]), k))
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    key: str | None = current
    while key is not None and key in nodes and key not in seen:
        seen.add(key)
        chain.append(nodes[key])
        key = as_str(nodes[key].get("parent"))
    chain.reverse()
    return chain


def _node_time(node: dict[str, Any]) -> float:
    message = node.get("message")
    value = message.get("create_time") if isinstance(message, dict) else None
    return float(value) if isinstance(value, int | float) else 0.0


def _kept(message: dict[str, Any]) -> bool:
    author = message.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    content = message.get("content")
    metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
    assert isinstance(metadata, dict)
    recipient = message.get("recipient", "all")
    return (
        role in AUTHORS
        and isinstance(content, dict)
        and (
            (content.get("content_type") in TEXT_TYPES and recipient == "all")
            or (role == "assistant" and recipient in CANVAS_RECIPIENTS)  # a canvas document
        )
        and message.get("weight", 1) != 0
        and not metadata.get("is_visually_hidden_from_conversation")
        and not metadata.get("is_user_system_message")
    )


def _text(content: dict[str, Any]) -> str:
    parts = []
    for part in content.get("parts") or []:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict):
            kind = str(part.get("content_type") or "")
            parts.append("[image]" if "image" in kind else "[audio]" if "audio" in kind else "[attachment]")
    text = "\n".join(p for p in parts if p)
    return strip_base64(_CITE_RE.sub("", text)).strip()


def _time(value: Any) -> datetime | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return epoch_to_utc(value)
    return None
