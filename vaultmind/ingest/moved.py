"""Source notes moved out of their kind's folder: found anywhere in the vault, cheaply.

A note vaultmind wrote under `sources/<kind>/` may be dragged anywhere in Obsidian: to another
folder of `sources/` (still vaultmind's) or out of `sources/`, into a folder of the user's
(theirs now). Its messages are still in the vault, so an ingest must know them (the writer's
`_Plan.placed_outside`). Finding such notes means looking at every note outside
`sources/<kind>/`, so the look is kept cheap:

- the walk skips hidden folders and files (`.obsidian/`, `.trash/`, `.vaultmind/`);
- each note is opened once, raw, for its first `HEAD_BYTES`; a note whose first bytes are not a
  front matter opening (`---`), or whose front matter has no `kind: <kind>` line, is dropped
  without decoding or parsing it — almost every user note, summary and entity note;
- only a note left (vaultmind's `vaultmind: source` and a `source_id`) has its front matter
  parsed; the writer then reads it whole for its message ids. A note re-saved as UTF-16 or
  UTF-32 (told by its first bytes) is read whole and decoded first.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.vault.encoding import decode_text
from vaultmind.vault.layout import SOURCES_DIR
from vaultmind.vault.scan import walk_folders

HEAD_BYTES = 4096  # of each note; a front matter that goes on past them is read whole
_OPENING_RE = re.compile(rb"(?:\xef\xbb\xbf)?---[ \t]*\r?\n")
# lines sought from the opening's line break on, by their own leading one (`^` in MULTILINE
# mode is several times slower)
_CLOSING_RE = re.compile(rb"\n---[ \t]*\r?(?:\n|\Z)")
_SOURCE_RE = re.compile(rb"""\nvaultmind:[ \t]*(["']?)source\1[ \t]*\r?\n""")
_SOURCE_ID_RE = re.compile(rb"\nsource_id:[ \t]*\S")
# a UTF-16 or UTF-32 byte order mark, or a "-" with a NUL beside it (the same without a mark)
_WIDE_RE = re.compile(rb"\xff\xfe|\xfe\xff|-\x00|\x00-")


def moved_notes(vault: Path, kind: str) -> list[tuple[str, str]]:
    """(vault-relative path, source id) of the `kind` source notes vaultmind wrote that are
    anywhere in `vault` outside `sources/<kind>/` and hidden folders, in path order (symbolic
    links are not followed: a link to a note is not another copy of its messages)."""
    kind_re = re.compile(rb"\nkind:[ \t]*([\"']?)" + re.escape(kind.encode("utf-8")) + rb"\1[ \t]*\r?\n")
    found: list[tuple[str, str]] = []
    for rel, full in _notes(vault, kind):
        source_id = _source_id(full, kind, kind_re)
        if source_id is not None:
            found.append((rel, source_id))
    return found


def _notes(vault: Path, kind: str) -> Iterator[tuple[str, str]]:
    """(vault-relative path, full path) of the `.md` files of `vault` (regular files, not links
    to one), but those of `sources/<kind>/` and of hidden folders; folder by folder, each in
    name order."""
    for folder, names in walk_folders(vault, hidden=False, regular=True, skip=vault / SOURCES_DIR / kind):
        rel = folder.relative_to(vault).as_posix()
        prefix, full = "" if rel == "." else rel + "/", os.path.join(folder, "")
        for name in names:
            if name.lower().endswith(".md"):
                yield prefix + name, full + name


def _source_id(path: str, kind: str, kind_re: re.Pattern[bytes]) -> str | None:
    """The `source_id` of the note at `path` when it is a source note of vaultmind's of the
    `kind` (its line matched by `kind_re`); None for any other file (told by its first bytes, mostly)."""
    head = _head(path)
    if _WIDE_RE.match(head):  # a note re-saved as UTF-16 or UTF-32: its bytes as UTF-8 (rare, read whole)
        head = _as_utf8(read_bytes(path))
    opening = _OPENING_RE.match(head)
    if opening is None:
        return None
    start = opening.end() - 1  # its line break
    closing = _CLOSING_RE.search(head, start)
    if closing is None and len(head) == HEAD_BYTES:  # a front matter longer than the head: read it all
        head = read_bytes(path)
        closing = _CLOSING_RE.search(head, start)
    if closing is None:
        return None
    front = head[start : closing.start() + 1]
    if not (kind_re.search(front) and _SOURCE_RE.search(front) and _SOURCE_ID_RE.search(front)):
        return None
    data = split_frontmatter(head[: closing.end()].decode("utf-8", errors="replace")).data
    value = data.get("source_id")
    if data.get("vaultmind") != "source" or data.get("kind") != kind or value is None or not str(value):
        return None
    return str(value)


def _as_utf8(data: bytes) -> bytes:
    text = decode_text(data).text
    return text.encode("utf-8") if text is not None else b""


def _head(path: str) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # (a FIFO named .md never blocks)
    except OSError:
        return b""
    try:
        return os.read(fd, HEAD_BYTES)
    except OSError:
        return b""
    finally:
        os.close(fd)


def read_bytes(path: str | Path) -> bytes:
    """The bytes of the file at `path`; none when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError:
        return b""
