"""Reading the entity graph: list, show, neighbours, ambiguous names. Plain dicts for CLI and API.

`entities_request(index, body)` is the one entry point adapters call (the CLI locally, the
daemon for `POST /v1/entities`): `{"action": "list" | "show" | "neighbours" | "ambiguous",
"id": str?, "kind": str? (list only), "limit": int?}`. `id` may also be a name (`Alice`), resolved the
way text is, or one word that is a person's first name or surname (`Okafor`); a name that fits
several entities is an error listing them, never a guess, and one that fits none an error that
names the closest entities.
"""

from __future__ import annotations

from typing import Any

from vaultmind.arguments import whole_number
from vaultmind.entities.fuzzy_names import FUZZY_CUTOFF, entity_names
from vaultmind.entities.ids import (
    NAME_KINDS,
    canonical_id,
    canonical_kind,
    key_of,
    kind_of,
    make_id,
    people_by_first_name,
    slug,
)
from vaultmind.entities.query import stored_fuzzy_threshold
from vaultmind.entities.registry import Registry
from vaultmind.entities.registry_store import load_registry
from vaultmind.entities.tables import META_NER, get_meta
from vaultmind.errors import NotFound, UsageError
from vaultmind.index.store import Index
from vaultmind.index.tables import has_table
from vaultmind.vault.layout import obsidian_link

ACTIONS = ("list", "show", "neighbours", "ambiguous")
DEFAULT_LIMIT = 50
DEFAULT_LIMITS = {"show": 20, "ambiguous": 200}  # the others: DEFAULT_LIMIT

_ENTITY_COLS = "id, kind, display_name, note_path, aliases, emails, handles, mentions"


def _entity(row: tuple[Any, ...]) -> dict[str, Any]:
    ident, kind, display, path, aliases, emails, handles, mentions = row[:8]
    return {
        "id": ident,
        "kind": kind,
        "display_name": display,
        "note_path": path,
        "aliases": list(aliases or []),
        "emails": list(emails or []),
        "handles": list(handles or []),
        "mentions": int(mentions),
    }


def _registry(index: Index) -> Registry:
    with index.lock:
        return load_registry(index.con, fuzzy_threshold=stored_fuzzy_threshold(index.con))


def ner_status(index: Index) -> dict[str, Any]:
    """Which NER model built the index's entities (`off` when none)."""
    with index.lock:
        package = get_meta(index.con, META_NER)
    return {"model": package or "off", "ner": bool(package and package != "off")}


def list_entities(index: Index, *, kind: str | None = None, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    """Entities by mentions (most first), then id; optionally of one kind."""
    params: list[Any] = []
    where = ""
    if kind:
        k = canonical_kind(kind)
        if k is None:
            raise UsageError(
                f"unknown entity kind {kind!r}",
                hint="person, org, place, product, event, work, topic, email, handle, url, phone",
            )
        where = "WHERE kind = ?"
        params.append(k)
    total = int(index.scalar(f"SELECT count(*) FROM entities {where}", params))
    rows = index.query(
        f"SELECT {_ENTITY_COLS} FROM entities {where} ORDER BY mentions DESC, id LIMIT ?", [*params, limit]
    )
    return {
        "entities": [_entity(r) for r in rows],
        "total": total,
        "truncated": total > len(rows),
        **ner_status(index),
    }


def resolve_ref(index: Index, ref: str) -> str:
    """An entity id from an id or a name; NotFound / UsageError (ambiguous) otherwise. An id
    merged into another note (listed in its `aliases`) is that note's entity."""
    text = ref.strip()
    if not text:
        raise UsageError("give an entity id or name")
    registry = _registry(index)
    ident = canonical_id(text)
    if ident is not None:
        ident = registry.final(ident)
        if index.scalar("SELECT count(*) FROM entities WHERE id = ?", [ident]):
            return ident
    for match in (registry.by_name(text), registry.by_email(text), registry.by_handle(text)):
        if match.entity_id is not None:
            return match.entity_id
        if match.ambiguous:
            raise UsageError(
                f"{text!r} names several entities: {', '.join(match.candidates)}",
                hint="give the id, or add the name to one entity note's aliases",
            )
    key = slug(text)
    names = set(_name_ids(text))
    if key and "-" not in key:  # one word: also the first name or the surname of a person ("Marco" →
        # person:marco-ruiz, "Okafor" → person:helen-okafor, as walk reads them), and what the
        # person's whole name names ("Helen" → person:helen-okafor, place:helen-okafor)
        known = [str(r[0]) for r in index.query("SELECT id FROM entities WHERE kind = 'person'")]
        surnamed = [p for p in known if "-" in key_of(p) and key_of(p).rsplit("-", 1)[1] == key]
        for person in (*people_by_first_name(known).get(key, ()), *surnamed):
            names.update(f"{k}:{key_of(person)}" for k in NAME_KINDS)
    rows = index.query(
        "SELECT id FROM entities WHERE id IN (SELECT unnest(?::VARCHAR[])) ORDER BY mentions DESC, id", [sorted(names)]
    )
    found = [str(row[0]) for row in rows]
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise UsageError(f"{text!r} names several entities: {', '.join(found)}", hint="give the id")
    raise NotFound(f"no entity {text!r}", hint=_closest_hint(index, text))


def _closest_hint(index: Index, text: str) -> str:
    """The hint for a name no entity has: the closest names (`search_entities`' fuzzy match, as
    `vaultmind query entities` finds them), else where the known ones are listed."""
    if not has_table(index, "entities"):
        return "`vaultmind entities list` shows the known ones"
    names = entity_names(index)
    found = names.search(text, cutoff=FUZZY_CUTOFF)
    closest = sorted(found, key=lambda i: (-found[i], names.rows[i].id))[:3]
    if not closest:
        return "`vaultmind entities list` shows the known ones"
    listed = ", ".join(f"{names.rows[i].id} ({names.rows[i].display_name})" for i in closest)
    return f"closest: {listed}; `vaultmind query entities {text}` searches names and aliases"


def neighbours(index: Index, ref: str, *, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    """The entities related to `ref`: `weight`, the distinct leaves naming both (`edges`), and
    `talks`, the messages in which one replies to or mails the other (`talks`, summed over the
    notes); strongest first by the two together, so the people one talks with in a chat come
    before those named once beside them."""
    ident = resolve_ref(index, ref)
    talked = (
        "SELECT CASE WHEN a = $id THEN b ELSE a END AS other, sum(weight) AS talks FROM talks WHERE a = $id OR b = $id GROUP BY 1"
        if has_table(index, "talks")
        else "SELECT NULL::VARCHAR AS other, 0 AS talks WHERE false"
    )
    rows = index.query(
        f"""
        WITH co AS (
            SELECT b AS other, weight FROM edges WHERE a = $id
            UNION ALL
            SELECT a AS other, weight FROM edges WHERE b = $id
        ), t AS ({talked}),
        nb AS (
            SELECT coalesce(co.other, t.other) AS other, coalesce(co.weight, 0) AS weight, coalesce(t.talks, 0) AS talks
            FROM co FULL OUTER JOIN t ON co.other = t.other
        )
        SELECT nb.other, nb.weight, nb.talks, coalesce(e.display_name, nb.other), coalesce(e.kind, ''), count(*) OVER ()
        FROM nb LEFT JOIN entities e ON e.id = nb.other
        ORDER BY nb.weight + nb.talks DESC, nb.talks DESC, nb.other LIMIT $limit
        """,
        {"id": ident, "limit": limit},
    )
    total = int(rows[0][5]) if rows else 0
    items = [
        {"id": other, "display_name": display, "kind": kind or kind_of(other), "weight": int(weight), "talks": int(talks)}
        for other, weight, talks, display, kind, _ in rows
    ]
    return {"id": ident, "neighbours": items, "total": total, "truncated": total > len(items)}


def show_entity(index: Index, ref: str, *, limit: int = DEFAULT_LIMITS["show"], vault_name: str = "") -> dict[str, Any]:
    """One entity: its row, first/last mention, strongest neighbours and latest occurrences."""
    ident = resolve_ref(index, ref)
    row = index.query(f"SELECT {_ENTITY_COLS} FROM entities WHERE id = ?", [ident])
    if not row:
        raise NotFound(f"no entity {ident}")
    entity = _entity(row[0])
    span = index.query(
        "SELECT min(ts), max(ts), count(DISTINCT note_path) FROM occurrences WHERE entity_id = ?", [ident]
    )
    first, last, notes = span[0] if span else (None, None, 0)
    entity["first_seen"] = first.isoformat() + "Z" if first else None
    entity["last_seen"] = last.isoformat() + "Z" if last else None
    entity["notes"] = int(notes or 0)
    occ = index.query(
        """
        SELECT o.leaf_id, o.note_path, o.surface, o.ts, l.anchor, l.source_ref
        FROM occurrences o LEFT JOIN leaves l ON l.id = o.leaf_id AND l.note_path = o.note_path
        WHERE o.entity_id = ? ORDER BY o.ts DESC NULLS LAST, o.note_path, o.leaf_id LIMIT ?
        """,
        [ident, limit],
    )
    entity["occurrences"] = [
        {
            "leaf_id": leaf_id,
            "note_path": path,
            "surface": surface,
            "ts": ts.isoformat() + "Z" if ts else None,
            "anchor": anchor or "",
            "source_ref": source_ref,
            "link": obsidian_link(vault_name, path, anchor or "") if vault_name else None,
        }
        for leaf_id, path, surface, ts, anchor, source_ref in occ
    ]
    entity["neighbours"] = neighbours(index, ident, limit=limit)["neighbours"]
    return entity


def ambiguous(index: Index, *, limit: int = DEFAULT_LIMITS["ambiguous"]) -> dict[str, Any]:
    """Names that fit several entities (never resolved to one), and registry problems.

    - `registry`: a name, address or handle listed with equal strength in several entity notes;
    - `fuzzy`: an extracted entity whose name is close to the names of several entity notes;
    - `kinds`: one name found as entities of several kinds (`person:helen-okafor` and
      `place:helen-okafor`: the name model read it as a place somewhere), which `show` refuses
      by the name alone.
    """
    registry = _registry(index)
    items = registry.ambiguous_names()
    rows = index.query(
        "SELECT id, kind, display_name, mentions FROM entities WHERE note_path IS NULL ORDER BY id"
    )
    for ident, kind, display, mentions in rows:
        if kind not in NAME_KINDS:
            continue
        if registry.by_name(display).ambiguous:
            continue  # exactly a name several entity notes list: a `registry` item already
        match = registry.resolve_name(display, kind)
        if match.ambiguous:
            items.append(
                {
                    "name": display,
                    "candidates": list(match.candidates),
                    "why": "fuzzy",
                    "id": ident,
                    "mentions": int(mentions),
                }
            )
    extracted = {ident: int(m) for ident, _, _, m in rows}
    by_key: dict[str, list[tuple[str, str, int]]] = {}  # a name's key → (id, display, mentions) by kind
    rows = index.query("SELECT id, kind, display_name, mentions FROM entities ORDER BY id")
    for ident, kind, display, mentions in rows:
        if kind in NAME_KINDS:
            by_key.setdefault(str(ident).partition(":")[2], []).append((str(ident), str(display), int(mentions)))
    for found in by_key.values():
        if len(found) > 1:
            name = min(found, key=lambda f: (-f[2], NAME_KINDS.index(kind_of(f[0]))))[1]  # person first
            ids, count = [f[0] for f in found], sum(f[2] for f in found)
            items.append({"name": name, "candidates": ids, "why": "kinds", "mentions": count})
    for item in items:
        if item["why"] == "registry":  # an ambiguous name keeps the id of its own surface
            item["mentions"] = sum(extracted.get(ident, 0) for ident in _own_ids(item))
    items.sort(key=lambda i: (-int(i.get("mentions", 0)), i["name"]))
    return {
        "ambiguous": items[:limit],
        "total": len(items),
        "truncated": len(items) > limit,
        "problems": list(registry.problems),
    }


def _own_ids(item: dict[str, Any]) -> list[str]:
    """The ids an ambiguous registry name is indexed under: the address's or handle's, or those
    the name's own words spell."""
    if item.get("id"):
        return [str(item["id"])]
    return _name_ids(str(item["name"]))


def _name_ids(name: str) -> list[str]:
    """The ids a name's own words spell, one for each kind a name may be ("Dr. X" is person:x)."""
    return [ident for k in NAME_KINDS if (ident := make_id(k, name)) is not None]


def entities_request(index: Index, body: dict[str, Any], *, vault_name: str = "") -> dict[str, Any]:
    """Dispatch one request (see the module docstring)."""
    action = str(body.get("action") or "list")
    if action not in ACTIONS:
        raise UsageError(f"unknown entities action {action!r}", hint=", ".join(ACTIONS))
    if body.get("kind") and action != "list":
        raise UsageError(f"`entities {action}` takes no kind", hint="a kind filters `list`")
    limit = whole_number(body.get("limit"), "'limit'", least=1)
    if limit is None:
        limit = DEFAULT_LIMITS.get(action, DEFAULT_LIMIT)
    if not has_table(index, "entities"):
        raise UsageError("this index has no entity tables yet", hint="run `vaultmind sync`")
    if action == "list":
        kind = body.get("kind")
        return list_entities(index, kind=str(kind) if kind else None, limit=limit)
    if action == "ambiguous":
        return ambiguous(index, limit=limit)
    ref = body.get("id")
    if not isinstance(ref, str) or not ref.strip():
        raise UsageError(f"`entities {action}` needs an entity id or name")
    if action == "show":
        return show_entity(index, ref, limit=limit, vault_name=vault_name)
    return neighbours(index, ref, limit=limit)
