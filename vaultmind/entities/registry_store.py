"""Reading the registry from the index: one `EntityNote` per note under `entities/`.

The rules for ids, kinds and names are in `registry.py`; this module reads the `notes` rows
(`kind = 'entity'`), caches the built `Registry` by a cheap fingerprint of those notes, and
names entity note files.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from typing import Any

import duckdb

from vaultmind.entities.ids import canonical_id, canonical_kind, key_of, kind_of, make_id, slug
from vaultmind.entities.registry import ID_LIKE, EntityNote, Registry
from vaultmind.markdown.frontmatter import body_sha256
from vaultmind.vault.layout import windows_safe


def _strings(value: Any) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    out: dict[str, None] = {}
    for item in items:
        if isinstance(item, Mapping):
            val = item.get("value") or item.get("id") or item.get("handle")
            if val is None:
                continue
            platform = item.get("kind") or item.get("platform")
            text = f"{platform}:{val}" if platform else str(val)
        elif item is None or isinstance(item, list | bool):
            continue
        else:
            text = str(item)
        text = text.strip()
        if text:
            out.setdefault(text, None)
    return tuple(out)


def entity_note_from(path: str, title: str, frontmatter: Mapping[str, Any]) -> EntityNote | None:
    """The registry entry of one note under `entities/` (None for README-like notes)."""
    marker = frontmatter.get("vaultmind")
    if marker is not None and str(marker).strip().lower() not in ("entity", ""):
        return None
    parts = path.split("/")
    stem = parts[-1][:-3] if parts[-1].lower().endswith(".md") else parts[-1]
    folder_kind = canonical_kind(parts[1]) if len(parts) >= 3 else None
    fm_kind_raw = frontmatter.get("kind")
    fm_kind = canonical_kind(str(fm_kind_raw)) if isinstance(fm_kind_raw, str) else None
    raw_id = frontmatter.get("id")
    ident = canonical_id(str(raw_id)) if isinstance(raw_id, str) and ID_LIKE.match(raw_id.strip()) else None
    kind = fm_kind or (kind_of(ident) if ident else None) or folder_kind or "topic"
    if ident is None:
        ident = make_id(kind, stem) or make_id(kind, title)
        if ident is None:
            return None
    raw_display = frontmatter.get("display_name")
    display = (
        str(raw_display).strip()
        if isinstance(raw_display, str | int | float) and not isinstance(raw_display, bool)
        else ""
    )
    display = display or title.strip() or stem
    aliases = _strings(frontmatter.get("aliases")) + _strings(frontmatter.get("alias"))
    return EntityNote(
        id=ident,
        kind=kind_of(ident),
        display_name=display,
        note_path=path,
        aliases=tuple(dict.fromkeys(aliases)),
        emails=_strings(frontmatter.get("emails")) + _strings(frontmatter.get("email")),
        handles=_strings(frontmatter.get("handles")) + _strings(frontmatter.get("handle")),
        paths=(path,),
        generated=frontmatter.get("vaultmind_body_sha256") == body_sha256(entity_note_body(display)),
    )


def entity_note_body(display: str) -> str:
    """The body of an entity note as vaultmind writes it: its heading, nothing more. A note whose
    `vaultmind_body_sha256` is this body's hash is vaultmind's, with the display name it read in
    the text (the user's display name or a note the user wrote has none or another)."""
    return f"# {display}\n"


def registry_fingerprint(con: duckdb.DuckDBPyConnection) -> str:
    """Changes whenever an entity note is added, removed or edited (cheap: one aggregate)."""
    row = con.execute(
        "SELECT count(*), coalesce(bit_xor(hash(path || chr(0) || sha256)), 0) FROM notes WHERE kind = 'entity'"
    ).fetchone()
    assert row is not None
    return f"{row[0]}:{row[1]}"


_CACHE: dict[tuple[str, float], Registry] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_MAX = 4


def load_registry(con: duckdb.DuckDBPyConnection, *, fuzzy_threshold: float = 90.0) -> Registry:
    """The registry of the entity notes in the index (cached by their fingerprint)."""
    key = (registry_fingerprint(con), float(fuzzy_threshold))
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
    if cached is not None:
        return cached
    rows = con.execute(
        "SELECT path, title, frontmatter FROM notes WHERE kind = 'entity' ORDER BY path"
    ).fetchall()
    notes: list[EntityNote] = []
    for path, title, fm_json in rows:
        try:
            data = json.loads(fm_json) if fm_json else {}
        except ValueError:
            data = {}
        note = entity_note_from(path, title or "", data if isinstance(data, dict) else {})
        if note is not None:
            notes.append(note)
    registry = Registry.build(notes, fuzzy_threshold=fuzzy_threshold)
    with _CACHE_LOCK:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = registry
    return registry


def slug_of(entity_id: str) -> str:
    """The file name (without `.md`) of an entity note for `entity_id`."""
    key = key_of(entity_id)
    safe = re.sub(r'[\\/:*?"<>|\x00-\x1f]', "_", key).strip(". ")
    return windows_safe(safe or slug(entity_id))
