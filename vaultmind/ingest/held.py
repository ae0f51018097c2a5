"""The notes already in the vault, as the writer reads them: a note's front matter, body and
messages, whether vaultmind still owns it, and the quick reads (head, meta lines) that tell a
folder's notes apart without parsing them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultmind.errors import VaultmindError
from vaultmind.markdown.chunking import message_leaves
from vaultmind.markdown.frontmatter import body_sha256, split_frontmatter, user_blocks
from vaultmind.markdown.render import CALLOUT_TYPES, Message, parse_meta, to_utc
from vaultmind.vault.encoding import DecodedText, decode_text
from vaultmind.vault.scan import walk_folders


@dataclass(slots=True)
class Existing:
    path: str
    raw: bytes
    data: dict[str, Any]
    body: str
    owned: bool  # the body still hashes to vaultmind_body_sha256
    frontmatter_ok: bool = True  # its front matter is valid YAML
    _body_hash: str | None = None
    encoding: str = "utf-8"  # "utf-16-le", "gb18030" …: re-saved so (`read_existing`), read, never rewritten
    bad_line: int | None = None  # the line of its first byte that is not text in its encoding: read, never rewritten
    _messages: dict[str, Message] | None = field(default=None, repr=False, compare=False)  # `messages`, parsed once

    @property
    def body_hash(self) -> str:
        """`body_sha256` of its body, computed once (documents compare every note's text)."""
        if self._body_hash is None:
            self._body_hash = body_sha256(self.body)
        return self._body_hash

    @property
    def source_id(self) -> str:
        value = self.data.get("source_id")
        return "" if value is None else str(value)

    def messages(self) -> dict[str, Message]:
        """The messages of a chat/email note, by message id, as they read back: parsed once (an
        export whose authors were renamed reads every note's messages to match them, then plans
        its notes from them), each caller given its own dict to change."""
        if self._messages is None:
            self._messages = self._parsed_messages()
        return dict(self._messages)

    def _parsed_messages(self) -> dict[str, Message]:
        kind = str(self.data.get("kind") or "")
        if kind not in CALLOUT_TYPES:
            return {}
        headers: dict[str, dict[str, str]] = {}  # an email's subject and recipients, by message id
        for meta in meta_lines(self.body):
            headers.setdefault(meta["id"], meta)
        out: dict[str, Message] = {}
        for leaf in message_leaves(self.body, source_id=self.source_id, callout_types=(CALLOUT_TYPES[kind],), indexed=False):
            if leaf.message_id is None or leaf.message_id in out or leaf.timestamp is None:
                continue
            try:
                timestamp = to_utc(leaf.timestamp)
            except VaultmindError:
                continue
            out[leaf.message_id] = Message(
                message_id=leaf.message_id,
                author=leaf.author or "",
                timestamp=timestamp,
                text=leaf.text,
                source_ref=leaf.source_ref,
                subject=headers.get(leaf.message_id, {}).get("subject"),
                to=_people(headers.get(leaf.message_id, {}).get("to")),
                cc=_people(headers.get(leaf.message_id, {}).get("cc")),
                answers=tuple((headers.get(leaf.message_id, {}).get("answers") or "").split()),
                edited=headers.get(leaf.message_id, {}).get("edited"),
            )
        return out


def _people(value: str | None) -> tuple[str, ...]:
    """A meta line's `to` / `cc` ("A <a@x>; b@y") as its recipients."""
    return tuple(part.strip() for part in (value or "").split(";") if part.strip())


def notes_below(root: Path) -> list[Path]:
    """The `.md` files below `root` (hidden folders too; symlinked folders not followed, as
    `Path.rglob` has it), sorted; none when it is no folder."""
    if not root.is_dir():
        return []
    return sorted(folder / name for folder, names in walk_folders(root) for name in names if name.endswith(".md"))


def read_existing(vault: Path, rel: str) -> Existing | None:
    """The note at `rel`, or None when nothing is there. Unreadable files count as foreign. A
    note re-saved as UTF-16 or UTF-32 (Windows Notepad's "Unicode"), or in a legacy East Asian
    code page (its "ANSI" on a Chinese, Japanese or Korean Windows), is read as the text it is,
    but is never vaultmind's to rewrite (that would re-encode it): as a note you edited, its
    messages are known and new ones go to a sibling (`plan.say_wide`)."""
    full = vault / rel
    if not os.path.lexists(full):
        return None
    try:
        raw = full.read_bytes() if full.is_file() and not full.is_symlink() else b""
    except OSError:
        raw = b""
    decoded = decode_text(raw)
    if decoded.text is None:  # (a binary file)
        raw, decoded = b"", DecodedText("", "utf-8")
    # a byte that does not decode (a sync tool's, an editor's) reads as U+FFFD: the note's
    # messages are still known (it had been read as empty, and every one written again to a
    # sibling), but it is never rewritten, which would lose the byte
    bad_line = None if decoded.bad_byte is None else raw[decoded.mark :][: decoded.bad_byte].count(b"\n") + 1
    fm = split_frontmatter(decoded.text or "")
    stored = fm.data.get("vaultmind_body_sha256")
    owned = (
        bool(raw) and decoded.encoding == "utf-8" and bad_line is None
        and isinstance(stored, str) and stored == body_sha256(fm.body)
    )
    return Existing(rel, raw, fm.data, fm.body, owned, fm.error is None, encoding=decoded.encoding, bad_line=bad_line)


def text_of(raw: bytes) -> str:
    """A note's text to look into (its meta lines, its front matter): UTF-8, or what a byte order
    mark or NUL bytes say (`vault.encoding`); what does not decode, replaced."""
    decoded = decode_text(raw)
    return decoded.text if decoded.text is not None else raw.decode("utf-8", errors="replace")


# The front matter keys vaultmind writes in source notes; any other key of a note vaultmind owns
# (a tag, an alias, a property added in Obsidian) is the user's and is kept when the note is
# rewritten.
GENERATED_KEYS = frozenset(
    """vaultmind kind source_id scope title subject participants time_start time_end messages version
    source_ref vaultmind_body_sha256""".split()
)


def carries(note: Existing) -> bool:
    """Whether the front matter keys vaultmind does not write can be carried into a rewrite of
    `note` as they are: written alone, they read back as the same values (else the note is
    treated as one you edited: new messages go to a sibling, and it is left as it is)."""
    mine = {k: v for k, v in note.data.items() if k not in GENERATED_KEYS}
    blocks = user_blocks(text_of(note.raw), GENERATED_KEYS)
    if not mine and not any(line.strip() and not line.lstrip().startswith("#") for b in blocks for line in b.split("\n")):
        return True
    alone = split_frontmatter("---\n" + "".join(blocks) + "---\n")
    return note.frontmatter_ok and alone.error is None and alone.data == mine


def head_source_id(path: Path) -> str | None:
    """The `source_id` of a source note, from its front matter when that ends in the first 8 KB
    (as vaultmind writes it): a platform's folders are told apart by one such read each."""
    data = _head_frontmatter(path)
    value = None if data is None else data.get("source_id")
    return None if value is None else str(value)


def _head_frontmatter(path: Path) -> dict[str, Any] | None:
    """The front matter of a note when it ends in its first 8 KB (as vaultmind writes it)."""
    try:
        with path.open("rb") as f:
            head = text_of(f.read(8192))
    except OSError:
        return None
    end = head.find("\n---", 3)
    if not head.startswith("---") or end < 0:
        return None
    return split_frontmatter(head[: end + 4] + "\n").data


def message_ids(raw: bytes) -> list[str]:
    """The message ids of a source note's meta lines (read without parsing the note)."""
    return [meta["id"] for meta in meta_lines(text_of(raw))]


def meta_lines(text: str) -> Iterator[dict[str, str]]:
    """The attributes of each message's meta line (`> %% vaultmind id="…" … %%`) in `text`
    (its line ends LF or CRLF: a note a sync tool or git gave Windows line ends)."""
    for line in text.split("\n"):
        if line.startswith("> %%"):
            meta = parse_meta(line[2:].rstrip("\r"))
            if meta and "id" in meta:
                yield meta
