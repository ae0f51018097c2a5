"""Leaves of a note: token-budget sections, or one leaf per chat/email message.

Sections (documents, user notes, summaries, entity notes) — `section_leaves`:
- The body is cut along its heading tree. A heading section whose whole subtree fits the budget
  is one leaf; a larger one is packed greedily from its own blocks (paragraphs, lists, tables,
  quotes, code fences, math and comment blocks, never split) and then its child sections (small
  consecutive siblings share a leaf; a too-large child is cut recursively). Text before the
  first heading, and each top-level section, always start a new leaf.
- A block larger than the budget is split: paragraphs by sentence, then line, then whitespace,
  then characters; lists, tables, quotes by line first. A code fence larger than the budget is
  split by lines, each part re-wrapped in the fence's opening and closing lines.
- Every leaf is self-describing: a leaf that does not start with its section's heading gets
  that heading line (normalised to ATX: as many `#` as its level, a space, its text — `# Text`
  for a `===` setext heading, `## Text` for a `---` one; cut with "…" past a quarter of the
  budget) prepended, then a blank line.
- Texts are slices of the body (plus that prefix): no non-blank text is lost, but for a
  setext heading's underline when its section is split: the first leaf then starts with the
  prefix in place of the heading as written (every leaf of the section starts alike).
- `heading_path` is the heading texts from the top; `anchor` is "#" + the heading as Obsidian
  links it, or "^id" when the leaf starts with a block carrying a block id, or "" before any
  heading.

Messages (chat/email source notes) — `message_leaves`: see docs/vault-format.md. The parser is
structural: a message starts only at a `> [!message]` / `> [!email]` line that follows a
non-quoted line, so a message's own text (every line of it is quoted) cannot start another one.

Ids are content-derived (docs/vault-format.md): `section_leaf_id` and `message_leaf_id`.

The section chunker is `markdown.sections`; it cuts oversized blocks with `markdown.spans` and
names headings with `markdown.anchors`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence

from vaultmind.markdown.blocks import BlockScan, atx_heading, fence_after, scan_blocks
from vaultmind.markdown.quote_ends import join_quotes
from vaultmind.markdown.render import parse_meta, unescape_text
from vaultmind.markdown.sections import SectionChunker
from vaultmind.markdown.tokens import MIN_CHUNK_TOKENS, count_tokens
from vaultmind.model import Leaf

DEFAULT_CHUNK_TOKENS = 400

_MSG_START_RE = re.compile(r">[ \t]?\[!([A-Za-z]+)\][+-]?(?:[ \t]+(.*)|[ \t]*)$")
_BLOCK_LINE_RE = re.compile(r"\^([A-Za-z0-9-]+)[ \t]*$")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def section_leaf_id(note_key: str, occurrence: int, text: str) -> str:
    """Id of a section leaf; `note_key` is a source note's `source_id`, else the vault path;
    `occurrence` counts the leaves of the same text before it in the note (0 for most), so an
    edit elsewhere in the note leaves the id alone and identical leaves still differ."""
    return _sha(f"section\0{note_key}\0{occurrence}\0{text}")[:32]


def message_leaf_id(source_id: str, message_id: str, text: str) -> str:
    return _sha(f"message\0{source_id}\0{message_id}\0{text}")[:32]


# --- sections -------------------------------------------------------------------------------


def section_leaves(
    body: str,
    *,
    note_key: str,
    budget: int = DEFAULT_CHUNK_TOKENS,
    scan: BlockScan | None = None,
    source_ref: str | None = None,
    timestamp: str | None = None,
    read_as_shown: Callable[[str], str] | None = None,
    read_opening: Callable[[str], str] | None = None,
) -> list[Leaf]:
    """Token-budget section leaves of a body (see the module docstring).

    `budget` is raised to MIN_CHUNK_TOKENS when smaller. `source_ref` (a document source
    note's front matter `source_ref`) and `timestamp` (its `time_end`: the document as of its
    last change) are set on every leaf. `read_as_shown`: the body is a note vaultmind wrote
    escaped, each leaf's text is read through it (`render.unescape_shown` for a summary or an
    entity note, `render.unescape_markup` for a document: `note.shown_reader`); `read_opening`:
    the first leaf's text is read through it besides (a document's title heading,
    `note.opening_reader`), no other leaf's.
    """
    if not body.strip():
        return []
    if scan is None:
        scan = scan_blocks(body)
    chunks = SectionChunker(body, scan, max(budget, MIN_CHUNK_TOKENS)).run()
    leaves = []
    seen: dict[str, int] = {}  # text → leaves of that text so far
    for seq, (chunk, path, anchor, tokens) in enumerate(chunks):
        text = read_as_shown(chunk) if read_as_shown is not None else chunk
        if seq == 0 and read_opening is not None:
            text = read_opening(text)
        occurrence = seen.get(text, 0)
        seen[text] = occurrence + 1
        leaves.append(
            Leaf(
                id=section_leaf_id(note_key, occurrence, text),
                seq=seq,
                kind="section",
                text=text,
                content_hash=_sha(text),
                token_count=tokens,
                anchor=anchor,
                heading_path=path,
                source_ref=source_ref,
                timestamp=timestamp,
            )
        )
    return leaves


# --- messages -------------------------------------------------------------------------------


def message_leaves(
    body: str,
    *,
    source_id: str,
    callout_types: Sequence[str] = ("message", "email"),
    ref_for: Callable[[str], str | None] | None = None,
    indexed: bool = True,
) -> list[Leaf]:
    """One leaf per `> [!message]` / `> [!email]` callout of a chat/email source note.
    `ref_for(message id)` gives the `source_ref` of a message whose meta line has an id and no
    `ref` (the index's `render.derived_ref`); without it such a leaf has none, as the note says
    (the writer reads messages back so, and writes no `ref` the export did not give).
    `indexed=False`: the messages only, as the writer reads a note back, without what only the
    index uses (the leaf's id and hash are "", its token count 0): counting tokens and hashing
    every message was a third of reading back the notes of a large chat ingested again."""
    lines = body.split("\n")
    n = len(lines)
    wanted = {t.lower() for t in callout_types}
    leaves: list[Leaf] = []
    path: tuple[str, ...] = ()
    in_fence = ""
    i = 0
    while i < n:
        line = lines[i]
        if not line.startswith(">"):
            toggled = fence_after(line, in_fence)
            if toggled is not None:
                in_fence = toggled
            elif not in_fence and line.startswith("#"):
                atx = atx_heading(line)
                if atx is not None:
                    path = (*path[: atx[0] - 1], atx[1])
            i += 1
            continue
        start = _MSG_START_RE.match(line) if not in_fence else None
        j = i + 1
        while j < n and lines[j].startswith(">"):
            j += 1
        if start is None or start.group(1).lower() not in wanted:
            i = j
            continue
        content = [_unquote(q) for q in lines[i + 1 : j]]
        meta: dict[str, str] = {}
        for k in range(len(content) - 1, -1, -1):
            parsed = parse_meta(content[k])
            if parsed is not None:
                meta = parsed
                del content[k]
                break
        if meta.get("fence") == "1" and content:
            content.pop()  # the fence closing a code block the text left open, written after it
        if meta.get("quote") == "1":
            content = join_quotes(content)  # the empty line after each quote its text ends
        text = unescape_text(content, markup=meta.get("esc") == "1")
        k = j
        while k < n and not lines[k].strip():
            k += 1
        block_id = None
        if k < n:
            bm = _BLOCK_LINE_RE.match(lines[k])
            if bm is not None:
                block_id = bm.group(1)
                j = k + 1
        title = (start.group(2) or "").strip()
        seq = len(leaves)
        message_id = meta.get("id") or block_id or str(seq)
        author = meta.get("author") or (title.split(" · ", 1)[0].strip() if title else None) or None
        leaves.append(
            Leaf(
                id=message_leaf_id(source_id, message_id, text) if indexed else "",
                seq=seq,
                kind="message",
                text=text,
                content_hash=_sha(text) if indexed else "",
                token_count=count_tokens(text) if indexed else 0,
                anchor="^" + block_id if block_id else "",
                heading_path=path,
                message_id=message_id,
                author=author,
                timestamp=meta.get("at") or None,
                source_ref=meta.get("ref") or (ref_for(meta["id"]) if ref_for and meta.get("id") else None),
                to=_people(meta.get("to")),
                cc=_people(meta.get("cc")),
            )
        )
        i = j
    return leaves


def _people(listed: str | None) -> tuple[str, ...]:
    """The recipients of a meta line's `to` or `cc` ("; "-separated)."""
    return tuple(person for person in (listed or "").split("; ") if person.strip())


def _unquote(line: str) -> str:
    if line.startswith("> "):
        return line[2:]
    return line[1:]
