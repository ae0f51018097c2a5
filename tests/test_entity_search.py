"""`search_entities`: the trigram-indexed fuzzy search equals a full scan, and follows the index."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from rapidfuzz import fuzz, process

from vaultmind.entities.fuzzy_names import MAX_SCORED, EntityNames, EntityRow, adjusted_score, search_form
from vaultmind.errors import NotFound, UsageError
from vaultmind.memory import Memory
from vaultmind.retrieval.modes import FUZZY_CUTOFF

from .conftest import write, write_chat

FIRST = ["alice", "bob", "carmen", "dana", "émile", "farid", "grace", "hiro", "ines", "jonas", "kofi", "lena"]
LAST = ["chen", "whitfield", "okafor", "müller", "tanaka", "silva", "novak", "haddad", "larsen", "ng"]


def registry(count: int, seed: int = 7) -> EntityNames:
    rng = random.Random(seed)
    rows = []
    for i in range(count):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        name = f"{first.title()} {last.title()} {i}" if i % 3 else f"{first.title()} {last.title()}"
        aliases = (first.title(),) if i % 5 == 0 else ()
        kind = "org" if i % 7 == 0 else "person"
        rows.append(EntityRow(f"{kind}:{i}", kind, name, aliases, (f"{first}{i}@example.org",), i % 13, None))
    return EntityNames(rows)


def full_scan(names: EntityNames, query: str, kind: str | None) -> dict[int, float]:
    """Every name scored as `EntityNames` scores its candidates (`WRatio`, then `adjusted_score`)."""
    best: dict[int, float] = {}
    needle = search_form(query)
    for name, score, pos in process.extract(needle, names.names, scorer=fuzz.WRatio, limit=None, score_cutoff=FUZZY_CUTOFF):
        owner = int(names.owners[pos])
        adjusted = adjusted_score(needle, name, float(score), bool(names.addresses[pos]))
        if (kind is None or names.rows[owner].kind == kind) and adjusted >= FUZZY_CUTOFF:
            best[owner] = max(best.get(owner, 0.0), adjusted)
    return best


def test_trigram_candidates_give_the_same_scores_as_a_full_scan() -> None:
    names = registry(3000)
    queries = ["alice chen", "Alise Chen", "chen alice", "whitfield", "dana", "bob", "ng", "emile", "müller",
               "grace tanaka 12", "kofi@", "hiro tanaka 2999", "zzzz", "a", "lena larsen"]  # fmt: skip
    for query in queries:
        for kind in (None, "org"):
            assert names.search(query, kind=kind, cutoff=FUZZY_CUTOFF) == full_scan(names, query, kind), (query, kind)


def test_a_broad_query_scores_a_bounded_number_of_names() -> None:
    names = registry(20_000)
    assert len(names.candidates("alice chen")) <= MAX_SCORED
    assert len(names.candidates("qqqq")) == 0


def entity_note(vault: Path, slug: str, name: str, aliases: list[str], *, kind: str = "person") -> None:
    lines = "".join(f"  - {a}\n" for a in aliases)
    write(
        vault,
        f"entities/{kind}/{slug}.md",
        f'---\nvaultmind: entity\nid: "{kind}:{slug}"\nkind: {kind}\ndisplay_name: {name}\n'
        f"aliases:\n{lines}---\n# {name}\n",
    )


def test_search_entities_finds_names_aliases_and_follows_changes(vault: Path, memory: Memory) -> None:
    entity_note(vault, "alice-chen", "Alice Chen", ["Ally"])
    entity_note(vault, "bob-okafor", "Bob Okafor", [])
    memory.sync()
    hits = memory.query("search_entities", {"query": "alise chen"})["hits"]
    assert [h["node_id"] for h in hits][:1] == ["person:alice-chen"]
    assert hits[0]["aliases"] == ["Ally"]
    assert hits[0]["wikilink"] == "[[entities/person/alice-chen]]"  # cited as a leaf's note is
    assert hits[0]["link"] == "obsidian://open?vault=vault&file=entities%2Fperson%2Falice-chen"
    assert memory.query("search_entities", {"query": "ally"})["hits"][0]["node_id"] == "person:alice-chen"
    assert memory.query("search_entities", {"query": "carmen silva"})["hits"] == []
    entity_note(vault, "carmen-silva", "Carmen Silva", [])
    memory.sync()
    found = memory.query("search_entities", {"query": "carmen silva"})["hits"]
    assert [h["node_id"] for h in found] == ["person:carmen-silva"]
    assert memory.query("search_entities", {"query": "carmen", "kind": "org"})["hits"] == []


def test_an_unknown_kind_is_named_not_answered_with_nothing(memory: Memory) -> None:
    with pytest.raises(UsageError, match=r"unknown entity kind 'peson'.*person"):
        memory.query("search_entities", {"query": "alice", "kind": "peson"})
    with pytest.raises(UsageError, match=r"'kind' = 'emails' is not a kind of source.*email"):
        memory.query("query_source", {"kind": "emails"})
    assert memory.query("query_source", {"kind": "note"})["total"] == 0  # a known kind, no notes yet


def test_entity_hits_have_the_common_shape_and_the_more_mentioned_of_near_matches_first(
    vault: Path, memory: Memory
) -> None:
    entity_note(vault, "priya-natarajan", "Priya Natarajan", [])
    for day in range(6):
        write(vault, f"n{day}.md", f"# Day {day}\n\nPriya Natarajan reviewed rollout plan {day}.\n")
    write(vault, "ping.md", "# Ping\n\nPing @Priya about it.\n")
    memory.sync()
    hits = memory.query("search_entities", {"query": "Priya"})["hits"]
    assert [h["node_id"] for h in hits] == ["person:priya-natarajan", "handle:priya"]
    person, handle = hits
    assert handle["breakdown"]["name"] > person["breakdown"]["name"], "the handle's name matches a little better"
    assert (person["mentions"], handle["mentions"]) == (6, 1) and person["score"] > handle["score"]
    walked = memory.query("walk", {"query": "rollout plan"})["hits"][0]
    assert set(walked) <= set(person), "every field of a walk hit"
    assert person["node_kind"] == "entity" and person["entities"] == ["person:priya-natarajan"]
    assert person["title"] == person["content"] == "Priya Natarajan"


def test_an_entity_id_drills_down_to_its_leaves_and_is_fetched_as_its_hit(vault: Path, memory: Memory) -> None:
    entity_note(vault, "priya-natarajan", "Priya Natarajan", [])
    write(vault, "old.md", "# Old\n\nPriya Natarajan reviewed the rollout plan in March.\n")
    write_chat(vault, "2025-06-14", [("Priya Natarajan", "The rollback plan is in the wiki."), ("Jonas Weber", "Thanks!")])
    memory.sync()
    (entity,) = memory.query("search_entities", {"query": "Priya Natarajan"})["hits"][:1]
    drilled = memory.query("drill_down", {"node_id": entity["node_id"].upper()})
    assert [(h["content"], h["breakdown"]["entity"]) for h in drilled["hits"]] == [
        ("The rollback plan is in the wiki.", "author"),  # newest first
        ("# Old\n\nPriya Natarajan reviewed the rollout plan in March.", "mention"),
    ], drilled
    assert drilled["total"] == 2
    assert memory.query("drill_down", {"node_id": entity["node_id"], "limit": 1})["truncated"] is True
    fetched = memory.query("fetch_leaves", {"ids": [drilled["hits"][0]["node_id"], entity["node_id"], "nope"]})
    assert [h["node_id"] for h in fetched["hits"]] == [drilled["hits"][0]["node_id"], "person:priya-natarajan"]
    assert fetched["hits"][1]["node_kind"] == "entity" and fetched["missing"] == ["nope"]
    with pytest.raises(NotFound, match="no node with id person:nobody"):
        memory.query("drill_down", {"node_id": "person:nobody"})


def test_a_name_typed_without_its_accents_or_curly_apostrophe_is_an_exact_match(
    vault: Path, memory: Memory
) -> None:
    """ "Lea" is Léa (as walk and `entities show` read it), not the closest ASCII name ("Leeds")."""
    entity_note(vault, "lea-martin", "Léa Martin", ["Léa"])
    entity_note(vault, "zoe-obrien", "Zoë O'Brien", [])
    entity_note(vault, "joe", "Uncle Joe", [])
    entity_note(vault, "leeds", "Leeds", [], kind="place")
    memory.sync()
    lea = memory.query("search_entities", {"query": "Lea"})["hits"]
    assert (lea[0]["node_id"], lea[0]["breakdown"]["name"]) == ("person:lea-martin", 1.0), lea
    zoe = memory.query("search_entities", {"query": "Zoe"})["hits"]
    assert zoe[0]["node_id"] == "person:zoe-obrien" and not zoe[0]["ambiguous"], zoe
    curly = memory.query("search_entities", {"query": "Zoë O\u2019Brien"})["hits"][0]
    assert (curly["node_id"], curly["breakdown"]["name"]) == ("person:zoe-obrien", 1.0)


def test_a_hit_is_ambiguous_exactly_when_another_has_the_name_that_matched(
    vault: Path, memory: Memory
) -> None:
    """Two entity notes listing the alias "Chema": both hits ambiguous. Two people who share
    only a surname are two weak matches, not an ambiguity."""
    entity_note(vault, "jose-alvarez", "José Álvarez", ["Chema"])
    entity_note(vault, "chema-garcia", "Chema García", ["Chema"])
    entity_note(vault, "alice-chen", "Alice Chen", [])
    entity_note(vault, "daniel-chen", "Daniel Chen", [])
    memory.sync()
    chema = memory.query("search_entities", {"query": "Chema"})["hits"]
    assert {h["node_id"]: h["ambiguous"] for h in chema} == {
        "person:jose-alvarez": True,
        "person:chema-garcia": True,
    }, chema
    chen = memory.query("search_entities", {"query": "chen"})["hits"]
    assert [(h["node_id"], h["ambiguous"]) for h in chen][:2] == [
        ("person:alice-chen", False),
        ("person:daniel-chen", False),
    ], chen
    alvarez = memory.query("search_entities", {"query": "Jose Alvarez"})["hits"]
    assert (alvarez[0]["node_id"], alvarez[0]["ambiguous"]) == ("person:jose-alvarez", False)


def test_an_initial_and_a_surname_find_the_person_with_that_initial_first(vault: Path, memory: Memory) -> None:
    """"A. Chen" (a signature's, a citation's form) is Alice Chen, not Daniel Chen, whose name has
    more letters in common with it; "Chen, A." too."""
    for slug, name in (("alice-chen", "Alice Chen"), ("daniel-chen", "Daniel Chen"), ("helen-okafor", "Helen Okafor")):
        entity_note(vault, slug, name, [])
    memory.sync()
    for query, first in (("A. Chen", "alice-chen"), ("Chen, A.", "alice-chen"), ("D. Chen", "daniel-chen"), ("H. Okafor", "helen-okafor")):
        hits = memory.query("search_entities", {"query": query})["hits"]
        assert (hits[0]["node_id"], hits[0]["breakdown"]["name"]) == (f"person:{first}", 0.95), (query, hits)


def test_two_people_an_initial_and_a_surname_fit_are_both_ambiguous(vault: Path, memory: Memory) -> None:
    """"A. Chen" fits Alice Chen and Amy Chen alike: both hits say the query cannot tell them
    apart; "D. Chen" fits Daniel Chen alone."""
    for slug, name in (("alice-chen", "Alice Chen"), ("amy-chen", "Amy Chen"), ("daniel-chen", "Daniel Chen")):
        entity_note(vault, slug, name, [])
    memory.sync()
    hits = memory.query("search_entities", {"query": "A. Chen"})["hits"]
    assert {h["node_id"]: h["ambiguous"] for h in hits[:2]} == {"person:alice-chen": True, "person:amy-chen": True}, hits
    daniel = memory.query("search_entities", {"query": "D. Chen"})["hits"][0]
    assert (daniel["node_id"], daniel["ambiguous"]) == ("person:daniel-chen", False)


def test_a_query_starting_a_full_name_ranks_it_over_a_shorter_name_and_an_address_domain_lower() -> None:
    """"Priya S" and "Daniel K" name Priya Shah and Daniel Kim with a better name score than
    Priya and Dan, whom the query says more than; "Acme" names Acme Corp above Tom Baker, whose
    address is at acme.example, while his address itself and "tom" still find him."""
    rows = [
        EntityRow("person:priya-shah", "person", "Priya Shah", (), (), 3, None),
        EntityRow("person:priya", "person", "Priya", (), (), 3, None),
        EntityRow("person:daniel-kim", "person", "Daniel Kim", (), (), 3, None),
        EntityRow("person:dan", "person", "Dan", (), (), 3, None),
        EntityRow("org:acme-corp", "org", "Acme Corp", (), (), 3, None),
        EntityRow("person:tom-baker", "person", "Tom Baker", (), ("tom@acme.example",), 3, None),
    ]
    names = EntityNames(rows)

    def ranked(query: str) -> list[tuple[str, float]]:
        found = names.search(query, cutoff=FUZZY_CUTOFF)
        return sorted(((rows[i].id, score) for i, score in found.items()), key=lambda p: (-p[1], p[0]))

    for query, full, short in (("Priya S", "person:priya-shah", "person:priya"), ("Daniel K", "person:daniel-kim", "person:dan")):
        scores = dict(ranked(query))
        assert ranked(query)[0][0] == full and scores[full] > scores[short], query
    acme = ranked("Acme")
    assert acme[0] == ("org:acme-corp", 90.0) and dict(acme)["person:tom-baker"] < 90.0
    assert ranked("tom@acme.example")[0] == ("person:tom-baker", 100.0)
    assert ranked("Tom")[0][0] == "person:tom-baker"
