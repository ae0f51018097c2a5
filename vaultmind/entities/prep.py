"""The entity work of a parsed note that needs no index: each leaf's mentions, resolved where
notes are parsed (in the parsing workers of a large sync) with the registry committed when the
work was handed out, without NER. `graph.EntityDeriver` uses such a result only when that
registry is the one in force and NER has nothing for the leaf (`EntityDeriver.preparer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vaultmind.entities.changes import registry_from_snapshot, registry_snapshot
from vaultmind.entities.common_words import NoteWords
from vaultmind.entities.kinds import first_per_name
from vaultmind.entities.ner import RawSpan
from vaultmind.entities.registry import Registry
from vaultmind.entities.resolve import resolve_text
from vaultmind.model import ParsedNote

Mentions = tuple[tuple[str, str], ...]
"""(entity id, surface) of each mention of one leaf, in order (`resolve_text` without NER)."""
PreparedLeaf = tuple[str, str, str | None, Mentions]
"""(leaf id, content hash, author, mentions)"""
PreparedNote = tuple[str, tuple[PreparedLeaf, ...]] | None
"""`EntityPrep`'s result for one note: (the registry digest it used, its leaves)."""


def mentions_of(
    registry: Registry,
    note_path: str,
    text: str,
    ner: Sequence[RawSpan] | None,
    author: str | None,
    companions: Sequence[str] = (),
    title: str = "",
    note: NoteWords | None = None,
) -> Mentions:
    """The (entity id, surface) of each mention of one leaf's text: `resolve_text` with the
    note's own entity (when it is an entity note), the note's `title` and what its texts say of
    their words (`note`), one read per settled name (`kinds`)."""
    self_id = registry.by_path.get(note_path)
    resolved = resolve_text(
        registry, text, ner, author=author, self_id=registry.final(self_id) if self_id else None,
        companions=companions, title=title, note=note,
    )  # fmt: skip
    return first_per_name(registry, [(m.entity_id, m.surface) for m in resolved.mentions])


class EntityPrep:
    """The entity work of one parsed note that needs no index: each leaf's mentions without NER,
    with the registry in force when the work was handed out (see `EntityDeriver.preparer`).
    It pickles as the registry's snapshot (made once), which a worker process builds back once."""

    def __init__(self, registry: Registry, snapshot: str | None = None):
        self.registry = registry
        self._snapshot = snapshot

    def __reduce__(self) -> tuple[Any, ...]:
        if self._snapshot is None:
            self._snapshot = registry_snapshot(self.registry)
        return _prep_from_snapshot, (self._snapshot, self.registry.digest, self.registry.fuzzy_threshold)

    def __call__(self, note: ParsedNote, frontmatter_json: str) -> PreparedNote:
        registry = self.registry
        people = conversation_people(note)
        leaves = tuple(
            (leaf.id, leaf.content_hash, leaf.author, self._mentions(note.path, leaf.text, leaf.author, people))
            for leaf in note.leaves
        )
        return registry.digest, leaves

    def _mentions(self, path: str, text: str, author: str | None, people: tuple[str, ...]) -> Mentions:
        """A leaf's mentions without NER; a message's with its conversation's people."""
        return mentions_of(self.registry, path, text, None, author, people if author else ())


def conversation_people(note: ParsedNote) -> tuple[str, ...]:
    """The authors of a note's messages and the recipients of its mails, sorted: what
    `leaf_reads.note_authors` reads of the note's rows in the index."""
    found = {who for leaf in note.leaves for who in (leaf.author, *leaf.to, *leaf.cc) if who is not None}
    return tuple(sorted(found))


class _NoPrep:
    """What an `EntityPrep` unpickles to when its snapshot does not build the same registry."""

    def __call__(self, note: ParsedNote, frontmatter_json: str) -> PreparedNote:
        return None


def _prep_from_snapshot(snapshot: str, digest: str, fuzzy_threshold: float) -> EntityPrep | _NoPrep:
    registry = _snapshot_registry(snapshot, digest, fuzzy_threshold)
    return _NoPrep() if registry is None else EntityPrep(registry, snapshot)


_SNAPSHOTS: dict[tuple[str, float], Registry | None] = {}  # per (digest, fuzzy): built once per process


def _snapshot_registry(snapshot: str, digest: str, fuzzy_threshold: float) -> Registry | None:
    key = (digest, fuzzy_threshold)
    if key not in _SNAPSHOTS:
        if len(_SNAPSHOTS) >= 4:
            _SNAPSHOTS.pop(next(iter(_SNAPSHOTS)))
        registry = registry_from_snapshot(snapshot, fuzzy_threshold=fuzzy_threshold)
        # a snapshot that does not give the same registry back: nothing is prepared
        _SNAPSHOTS[key] = registry if registry is not None and registry.digest == digest else None
    return _SNAPSHOTS[key]
