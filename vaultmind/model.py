"""Plain data shared by every layer: parsed notes, leaves, links, scan entries, hits.

Nothing here does I/O. Paths are vault-relative POSIX strings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

NoteKind = Literal["source", "summary", "entity", "user"]
"""What a note is, decided by where it lives (see `vault.layout.note_kind`)."""

USER_TREE_PREFIX = "notes:"  # the tree of a top folder of the user's own notes: `notes:<folder>`
ROOT_USER_TREE = "notes:/"  # … of the notes at the vault's root
ENTITY_TREE = "entities"  # the tree an entity hit names (no source note has it)

LeafKind = Literal["message", "section"]
"""`message`: one chat/email message of a source note. `section`: a token-budget chunk."""

LinkKind = Literal["wikilink", "embed", "markdown"]

Progress = Callable[[str, int, int], None]
"""progress(phase, done, total): called during a sync's long work; phases "read", "embed"."""


class Pickled:
    """A dataclass base: pickles as (class, field values); unpickling calls the constructor,
    about twice as fast as the slots dataclass default (parse workers send thousands of these
    per batch)."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return type(self), tuple(getattr(self, name) for name in self.__dataclass_fields__)  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class Link(Pickled):
    """An outgoing link found in a note's body (never inside code)."""

    target: str  # the note part as written: "Folder/Note" (may be "" for same-note links)
    kind: LinkKind
    heading: str | None = None  # "Heading" from [[Note#Heading]]
    block: str | None = None  # "abc123" from [[Note#^abc123]]
    alias: str | None = None  # display text from [[Note|alias]]
    line: int = 0  # 1-based line in the body


@dataclass(frozen=True, slots=True)
class Leaf(Pickled):
    """The smallest unit of memory: one message, or one chunk of a document.

    `id` is content-derived (see `markdown.chunking`); `anchor` locates the leaf in its
    note for Obsidian: "^block-id" or "#Heading" or "" for the top of the note.
    """

    id: str
    seq: int
    kind: LeafKind
    text: str
    content_hash: str  # sha256 hex of `text`
    token_count: int
    anchor: str = ""
    heading_path: tuple[str, ...] = ()
    message_id: str | None = None
    author: str | None = None
    timestamp: str | None = None  # ISO 8601, UTC, "2023-05-08T13:56:00Z"
    source_ref: str | None = None
    to: tuple[str, ...] = ()  # an email's recipients ("Name <addr>"), from its meta line
    cc: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ParsedNote(Pickled):
    """Everything vaultmind derives from one Markdown file. Pure function of (path, text)."""

    path: str
    kind: NoteKind
    title: str
    frontmatter: dict[str, Any]
    frontmatter_error: str | None
    body: str
    links: tuple[Link, ...]
    tags: tuple[str, ...]  # without "#", nested kept as "a/b"; lower-cased for matching
    leaves: tuple[Leaf, ...]
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class WrittenNote(Pickled):
    """What a sync's derivers read of a note whose rows it has just written (`sync.Deriver`);
    its leaves, links and tags are in those rows. A parse worker that builds a note's rows
    sends this with them instead of the `ParsedNote`: at 10,000 notes, 86k `Leaf` and 38k
    `Link` objects less to pickle there and to build again in the applying process."""

    path: str
    kind: NoteKind
    frontmatter: dict[str, Any]
    frontmatter_error: str | None
    body: str
    leaf_ids: tuple[str, ...]

    @classmethod
    def of(cls, note: ParsedNote) -> WrittenNote:
        leaf_ids = tuple(leaf.id for leaf in note.leaves)
        return cls(note.path, note.kind, note.frontmatter, note.frontmatter_error, note.body, leaf_ids)


@dataclass(frozen=True, slots=True)
class FileStat(Pickled):
    """What a scan sees of one file without reading it."""

    path: str
    size: int
    mtime_ns: int
    # The inode's change time: a rename sets it, so two notes of one size and one mtime that
    # swap names (written in the same clock tick) are told apart. 0: not known.
    ctime_ns: int = 0
    # The inode: a folder renamed sets neither time of the files in it, so two folders of notes
    # of one size written in one tick that swap names are told apart by it. 0: not known.
    ino: int = 0


@dataclass(frozen=True, slots=True)
class Problem:
    """A file that was skipped or failed, with the reason shown by `status`."""

    path: str
    kind: str  # "unreadable", "not_utf8", "utf16", "utf32", "nul_bytes", "binary", "too_large", "frontmatter", "symlink_loop", "symlink_duplicate", "unreadable_folder", "unreadable_file", "unreadable_link", "case_clash", "changed_while_reading", "parse_error", "merge_conflict"
    message: str


@dataclass(slots=True)
class SyncStats:
    """What one pass of scan → diff → apply did."""

    scanned: int = 0
    unchanged: int = 0
    added: int = 0
    modified: int = 0
    touched: int = 0  # stat changed, content identical
    renamed: int = 0
    deleted: int = 0
    kept_unreadable: int = 0
    leaves_written: int = 0
    leaves_deleted: int = 0
    embedded: int = 0
    rebuilt: bool = False  # the index was rebuilt from the vault: its notes were read again, not new
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    # of a sync of given paths (`Syncer.sync_paths`): those the ignore rules leave out, and
    # those neither in the vault nor in the index; None for a whole vault's sync
    ignored: list[str] | None = None
    missing: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        given = {} if self.missing is None else {"ignored": self.ignored or [], "missing": self.missing}
        return {
            "scanned": self.scanned,
            "unchanged": self.unchanged,
            "added": self.added,
            "modified": self.modified,
            "touched": self.touched,
            "renamed": self.renamed,
            "deleted": self.deleted,
            "kept_unreadable": self.kept_unreadable,
            "leaves_written": self.leaves_written,
            "leaves_deleted": self.leaves_deleted,
            "embedded": self.embedded,
            "rebuilt": self.rebuilt,
            "problems": [{"path": p.path, "kind": p.kind, "message": p.message} for p in self.problems],
            "seconds": round(self.seconds, 3),
            **given,
        }
