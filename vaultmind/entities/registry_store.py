"""Reading the registry from the index: one `EntityNote` per note under `entities/`, and one
per note of yours that says in its front matter what it is about (`typed_note_from`).

The rules for ids, kinds and names are in `registry.py`; this module reads the `notes` rows
(`kind = 'entity'`, and your notes with a `categories`, `type` or `tags` property), caches the
built `Registry` by a cheap fingerprint of those notes, and names entity note files.

A note of yours whose `categories`, `type` or `tags` name a kind of entity (`[[People]]`,
`person`, `Companies`, `Places`, `Books`, `Movies`, `Games`, `Events`, …: `CATEGORY_KINDS`) is
the entity its title names: `References/Paul Chambers.md` with `categories: ["[[People]]"]` is
`person:paul-chambers`, whose note it is. Its title and aliases are names claimed as an entity
note's display name and aliases are (a wikilink to it is a mention of it; the language model's
guess of another kind for the name gives way); an entity note under `entities/` of the same id
wins over it. A note naming two kinds (`People` and `Companies`) types nothing.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

import duckdb

from vaultmind.entities.ids import canonical_id, canonical_kind, key_of, kind_of, make_id, slug
from vaultmind.entities.registry import ID_LIKE, EntityNote, Registry
from vaultmind.index.pool import setting_while
from vaultmind.markdown.frontmatter import body_sha256
from vaultmind.markdown.note import alias_items
from vaultmind.markdown.render import render_note, title_heading
from vaultmind.vault.layout import ENTITIES_DIR, windows_safe

if TYPE_CHECKING:
    from vaultmind.index.store import Index


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
    """The registry entry of one note under `entities/` (None for README-like notes). Its `kind`
    wins over the kind its `id` spells — the property Obsidian shows, the one a person corrects:
    `id: "org:harbor-hall"` with `kind: place` is `place:harbor-hall`, and `org:harbor-hall` is
    merged into it (as an id in `aliases` is), so what named the old id names the new."""
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
    merged: tuple[str, ...] = ()
    if ident is not None and kind != kind_of(ident):  # `kind:` edited: the note's entity is of that kind now
        rekinded = canonical_id(f"{kind}:{key_of(ident)}")  # None where the key is no such thing ("email")
        if rekinded is not None and rekinded != ident:
            merged, ident = (ident,), rekinded
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
    aliases = _strings(alias_items(frontmatter)) + merged  # the id it had: merged into it, as an alias's is
    return EntityNote(
        id=ident,
        kind=kind_of(ident),
        display_name=display,
        note_path=path,
        aliases=tuple(dict.fromkeys(aliases)),
        emails=_strings(frontmatter.get("emails")) + _strings(frontmatter.get("email")),
        handles=_strings(frontmatter.get("handles")) + _strings(frontmatter.get("handle")),
        paths=(path,),
        generated=frontmatter.get("vaultmind_body_sha256") in {body_sha256(b) for b in entity_note_bodies(display)},
    )


CATEGORY_KINDS = {
    **{name: "person" for name in ("people", "person", "persons", "contacts", "contact")},
    **{name: "org" for name in ("companies", "company", "organizations", "organisations", "organization", "organisation", "orgs", "org")},
    **{name: "place" for name in ("places", "place", "cities", "city", "countries", "country", "locations", "location")},
    **{name: "event" for name in ("events", "event", "conferences", "conference")},
    **{name: "product" for name in ("products", "product")},
    **{
        name: "work"
        for name in (
            "books", "book", "movies", "movie", "films", "film", "shows", "show", "albums", "album",
            "games", "game", "board games", "board game", "podcasts", "podcast",
        )
    },
}
"""A category, type or tag of a note of yours (as `_category` reads it) → the kind of entity the
note is about. Not `work`: `#work` tags the notes of one's job (a meeting, a daily note), which
are about no creative work."""
TYPING_KEYS = ("categories", "category", "type", "tags")
_LINK = re.compile(r"^\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]$")


def typed_note_from(path: str, title: str, frontmatter: Mapping[str, Any]) -> EntityNote | None:
    """The registry entry of a note of yours whose front matter says what kind of entity it is
    about (`CATEGORY_KINDS`), named by its title; None when it names no kind, or two."""
    kinds = {
        kind
        for key in TYPING_KEYS
        for value in _strings(frontmatter.get(key))
        if (kind := CATEGORY_KINDS.get(_category(value))) is not None
    }
    name = title.strip()
    if len(kinds) != 1 or not name:
        return None
    ident = make_id(kinds.pop(), name)
    if ident is None:
        return None
    aliases = _strings(alias_items(frontmatter))
    return EntityNote(
        id=ident, kind=kind_of(ident), display_name=name, note_path=path, aliases=tuple(dict.fromkeys(aliases)), paths=(path,)
    )


def _category(value: str) -> str:
    """`[[People]]`, `#people`, `Board games`, `type/person` → `people`, `people`, `board games`,
    `person`: the name a category, type or tag gives, lower-cased."""
    text = value.strip()
    link = _LINK.match(text)
    if link:
        text = link.group(1)
    return " ".join(text.lstrip("#").rsplit("/", 1)[-1].replace("-", " ").replace("_", " ").split()).lower()


def entity_note_body(display: str) -> str:
    """The body of an entity note as vaultmind writes it: its heading, nothing more, escaped as a
    source note's titles are (`shown_line`): "Dana Whitfield #ops" tags no note with `ops`, and a
    `%%` in a name hides nothing. A note whose `vaultmind_body_sha256` is the hash of this body,
    or of the unescaped one written before (`entity_note_bodies`), is vaultmind's, with the
    display name it read in the text (the user's display name or a note the user wrote has
    none or another)."""
    return f"{title_heading(display)}\n"


def render_entity_note(ident: str, kind: str, display: str, emails: list[str]) -> str:
    """A new entity note: no aliases (the user adds them), the body `entity_note_body`."""
    items: list[tuple[str, Any]] = [
        ("vaultmind", "entity"),
        ("id", ident),
        ("kind", kind),
        ("display_name", display),
        ("aliases", []),
        ("emails", emails),
        ("handles", []),
    ]
    return render_note(items, entity_note_body(display))


def unescaped_entity_note_body(display: str) -> str:
    """The body vaultmind wrote for an entity note of `display` before its heading was escaped:
    `# <display>` as it is (`entities.headings` writes such a note once more, escaped)."""
    return f"# {display}\n"


def entity_note_bodies(display: str) -> tuple[str, ...]:
    """The bodies vaultmind wrote for an entity note of `display`: now, and before its heading was
    escaped. An entity note written then is still vaultmind's."""
    return tuple(dict.fromkeys((entity_note_body(display), unescaped_entity_note_body(display))))


def registry_fingerprint(con: duckdb.DuckDBPyConnection) -> str:
    """Changes whenever an entity note is added, removed or edited (cheap: one aggregate).

    The scan of every note's front matter runs on one DuckDB thread: a daemon runs it once a
    save (the write's re-derivation; the sync's preparer takes the registry the last write
    read, `recent_registry`), and at 50k notes, with a thread per core (two), each scan lifted
    the process by 20–27 MiB and kept it (the second thread's buffers), at the top of a save's
    peak; on one, by 12 MiB and gave it back, in 0.4–0.7 s rather than 0.3–0.4. Its callers hold
    the index's lock (a sync's preparer, a transaction, `Index.cached`, `committed_registry`),
    so no other thread's setting of the threads begins or ends in between (`Index.threads`);
    the setting is put back through a connection of its own (`pool.setting_while`), as a scan
    failing inside a transaction aborts it."""
    with setting_while(con, "threads", "1"):
        row = con.execute(
            f"SELECT count(*), coalesce(bit_xor(hash(path || chr(0) || {_READ})), 0) FROM notes WHERE {_REGISTRY_NOTES}"
        ).fetchone()
    assert row is not None
    return f"{row[0]}:{row[1]}"


def _may_type_sql() -> str:
    """Where a note of yours may name a kind of entity: the JSON text of its `TYPING_KEYS`
    holds a word of a `CATEGORY_KINDS` name in any case, as a word (no letter on either side),
    or a `\\u` escape, which could spell one. Only such a note can be typed (`typed_note_from`:
    `_category` takes a value's last part and lower-cases its words, which must then be a
    name's; the characters Python lower-cases to ASCII letters alone are ASCII letters and the
    Kelvin sign, which the pattern's case folding matches as "k"). So the registry reads every
    note it builds from and few others (a name inside a word, `#productivity` or `notebook`,
    is none), without parsing the front matter of every note with tags (at each batch of a
    first index, every such note indexed so far)."""
    words = "|".join(sorted({word for name in CATEGORY_KINDS for word in name.split()}))
    typing = " || chr(0) || ".join(
        f"coalesce(json_extract_string(frontmatter, '$.{key}'), '')" for key in TYPING_KEYS
    )
    # (in SQL's text, `\\\\u` is the pattern's `\\u`)
    return f"regexp_matches({typing}, '(?i)(^|[^a-z])({words})($|[^a-z])|\\\\u')"


# the notes the registry reads, and what of a note of yours it reads (an edit of its text
# changes nothing of the registry)
_REGISTRY_NOTES = f"kind = 'entity' OR (kind = 'user' AND {_may_type_sql()})"
_READ = "CASE WHEN kind = 'entity' THEN sha256 ELSE coalesce(title, '') || chr(0) || " + " || chr(0) || ".join(
    f"coalesce(json_extract_string(frontmatter, '$.{key}'), '')" for key in (*TYPING_KEYS, "aliases", "alias")
) + " END"

_CACHE: dict[tuple[str, float], Registry] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_MAX = 4


# per connection (its id) and fuzzy threshold: the registry `load_registry` last gave it
_LAST: dict[tuple[int, float], Registry] = {}


def recent_registry(con: duckdb.DuckDBPyConnection, *, fuzzy_threshold: float = 90.0) -> Registry:
    """The registry `load_registry` last gave `con`, without its fingerprint's scan of every
    note (read when there is none). A commit since may have changed it: only for work checked
    against the registry in force, as a sync's preparer is (`EntityDeriver.apply` takes its
    results only where the digests agree). A daemon's save read the fingerprint for the
    preparer, then again for the write; the write's registry is the next save's preparer's."""
    with _CACHE_LOCK:
        last = _LAST.get((id(con), float(fuzzy_threshold)))
    return last if last is not None else load_registry(con, fuzzy_threshold=fuzzy_threshold)


def _remember(con: duckdb.DuckDBPyConnection, fuzzy_threshold: float, registry: Registry) -> Registry:
    """`registry` as the one `con` read last (`recent_registry`); call under `_CACHE_LOCK`."""
    key = (id(con), float(fuzzy_threshold))
    _LAST.pop(key, None)
    if len(_LAST) >= _CACHE_MAX:
        _LAST.pop(next(iter(_LAST)))
    _LAST[key] = registry
    return registry


def load_registry(con: duckdb.DuckDBPyConnection, *, fuzzy_threshold: float = 90.0) -> Registry:
    """The registry of the entity notes in the index (cached by their fingerprint)."""
    key = (registry_fingerprint(con), float(fuzzy_threshold))
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            return _remember(con, fuzzy_threshold, cached)
    rows = con.execute(f"SELECT path, title, frontmatter, kind FROM notes WHERE {_REGISTRY_NOTES} ORDER BY path").fetchall()
    notes: list[EntityNote] = []
    typed: list[EntityNote] = []
    for path, title, fm_json, kind in rows:
        try:
            data = json.loads(fm_json) if fm_json else {}
        except ValueError:
            data = {}
        read = entity_note_from if kind == "entity" else typed_note_from
        note = read(path, title or "", data if isinstance(data, dict) else {})
        if note is not None:
            (notes if kind == "entity" else typed).append(note)
    declared = {note.id for note in notes}
    notes += [note for note in typed if note.id not in declared]  # an entity note of the id wins
    registry = Registry.build(notes, fuzzy_threshold=fuzzy_threshold)
    with _CACHE_LOCK:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = registry
        return _remember(con, fuzzy_threshold, registry)


def committed_registry(index: Index, *, fuzzy_threshold: float = 90.0) -> Registry:
    """The registry of the notes as committed (call it under `index.lock`, outside a transaction
    that wrote notes), kept per `Index.notes_generation`: only a commit that may change notes
    bumps it, and the daemon's NER catch-up commits a step every second or so without one. Each
    step's re-derivation needs the registry, whose fingerprint (`load_registry`) scans the front
    matter of every note of yours (at 50k notes 0.2–0.7 s and ~12 MiB on a busy host, once a
    step); kept, the fingerprint runs once after each save instead."""
    name = f"entity_registry:{float(fuzzy_threshold)}"
    with index.lock:
        kept = index.view(name)
        if kept is not None and kept[0] == index.notes_generation:
            return cast(Registry, kept[1])
        registry = load_registry(index.con, fuzzy_threshold=fuzzy_threshold)
        index.keep_view(name, index.notes_generation, registry)
        return registry


def entity_note_path(ident: str) -> str:
    """The vault path of the entity note vaultmind writes for `ident` (`person:dana-whitfield`)."""
    return f"{ENTITIES_DIR}/{ident.partition(':')[0]}/{slug_of(ident)}.md"


def slug_of(entity_id: str) -> str:
    """The file name (without `.md`) of an entity note for `entity_id`."""
    key = key_of(entity_id)
    safe = re.sub(r'[\\/:*?"<>|\x00-\x1f]', "_", key).strip(". ")
    return windows_safe(safe or slug(entity_id))
