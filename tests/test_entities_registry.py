"""Entity notes as the alias registry: edits, merges, deletions, ambiguity, fuzzy matching.

NER is off here (`[entities] ner_model = "off"`) so every occurrence comes from the registry,
regex and message authors, and the expectations do not depend on a statistical model.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from vaultmind.config import load_config
from vaultmind.entities.ner import NerEngine
from vaultmind.entities.notes import create_entity_notes, render_entity_note
from vaultmind.entities.read import ambiguous
from vaultmind.entities.registry import EntityNote, Registry
from vaultmind.entities.registry_store import committed_registry, entity_note_from
from vaultmind.entities.resolve import Ambiguity, resolve_text
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory

from .conftest import write

_TICK = [1_700_000_000_000_000_000]


def put(vault: Path, rel: str, text: str) -> None:
    """Write a file with a fresh mtime, so a sync never mistakes it for unchanged."""
    path = write(vault, rel, text)
    _TICK[0] += 1_000_000_000
    os.utime(path, ns=(_TICK[0], _TICK[0]))


def entity(
    ident: str, display: str, aliases: list[str] = (), emails: list[str] = (), handles: list[str] = ()
) -> str:  # type: ignore[assignment]
    def items(values: list[str]) -> str:
        return "[" + ", ".join(f'"{v}"' for v in values) + "]"

    kind = ident.split(":")[0]
    return (
        f'---\nvaultmind: entity\nid: "{ident}"\nkind: {kind}\ndisplay_name: {display}\n'
        f"aliases: {items(list(aliases))}\nemails: {items(list(emails))}\nhandles: {items(list(handles))}\n---\n# {display}\n"
    )


def chat(messages: list[tuple[str, str]], day: str = "2024-03-04") -> str:
    meta = SourceMeta(
        kind="chat", source_id="slack:acme/general", scope="slack/acme/general", title=f"general {day}"
    )
    return render_source_note(
        meta,
        [
            Message(f"m{i}", author, f"{day}T09:{i:02d}:00Z", text)
            for i, (author, text) in enumerate(messages)
        ],
    )


def occ(memory: Memory, path: str | None = None) -> list[tuple[str, str]]:
    where = "WHERE note_path = ?" if path else ""
    rows = memory.index.query(
        f"SELECT entity_id, surface FROM occurrences {where} ORDER BY ALL", [path] if path else None
    )
    return [(r[0], r[1]) for r in rows]


def ids(memory: Memory, path: str) -> set[str]:
    return {e for e, _ in occ(memory, path)}


@pytest.fixture
def mem(vault: Path) -> Iterator[Memory]:
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        yield memory


def test_new_alias_applies_to_every_occurrence_on_next_sync(vault: Path, mem: Memory) -> None:
    put(vault, "entities/person/alice-chen.md", entity("person:alice-chen", "Alice Chen", ["Alice"]))
    put(vault, "notes/lunch.md", "Lunch with Ally; later Alice joined.\n")
    put(vault, "sources/chat/general.md", chat([("Ally", "hi all"), ("Bob", "hello Ally")]))
    mem.sync()
    assert occ(mem, "notes/lunch.md") == [("person:alice-chen", "Alice")]
    assert "person:ally" in ids(mem, "sources/chat/general.md")  # an author nobody knows yet

    put(vault, "entities/person/alice-chen.md", entity("person:alice-chen", "Alice Chen", ["Alice", "Ally"]))
    mem.sync()
    assert occ(mem, "notes/lunch.md") == [("person:alice-chen", "Ally")]
    assert ids(mem, "sources/chat/general.md") == {"person:alice-chen", "person:bob"}
    assert mem.index.scalar("SELECT mentions FROM entities WHERE id = 'person:alice-chen'") == 3
    assert mem.index.scalar("SELECT count(*) FROM entities WHERE id = 'person:ally'") == 0


def test_merge_two_people_by_alias_or_by_id(vault: Path, mem: Memory) -> None:
    put(vault, "entities/person/alice-chen.md", entity("person:alice-chen", "Alice Chen"))
    put(vault, "entities/person/bob-stone.md", entity("person:bob-stone", "Bob Stone", ["Bobby"]))
    put(vault, "entities/person/robert-stone.md", entity("person:robert-stone", "Robert Stone", ["Rob"]))
    put(vault, "notes/a.md", "Alice Chen met Bob Stone.\n")
    put(vault, "notes/b.md", "Rob and Alice Chen; Bobby too.\n")
    mem.sync()
    assert ids(mem, "notes/a.md") == {"person:alice-chen", "person:bob-stone"}
    assert ids(mem, "notes/b.md") == {"person:alice-chen", "person:robert-stone", "person:bob-stone"}

    # an alias beats another note's display name: "Bob Stone" now means Robert
    put(
        vault,
        "entities/person/robert-stone.md",
        entity("person:robert-stone", "Robert Stone", ["Rob", "Bob Stone"]),
    )
    mem.sync()
    assert ids(mem, "notes/a.md") == {"person:alice-chen", "person:robert-stone"}
    assert ids(mem, "notes/b.md") == {"person:alice-chen", "person:robert-stone", "person:bob-stone"}  # Bobby

    # listing the other's id merges everything that resolves to it
    put(
        vault,
        "entities/person/robert-stone.md",
        entity("person:robert-stone", "Robert Stone", ["Rob", "person:bob-stone"]),
    )
    mem.sync()
    assert ids(mem, "notes/b.md") == {"person:alice-chen", "person:robert-stone"}
    edges = mem.index.query("SELECT a, b, weight FROM edges ORDER BY ALL")
    assert edges == [("person:alice-chen", "person:robert-stone", 2)]
    rows = dict(mem.index.query("SELECT id, mentions FROM entities"))
    assert rows["person:robert-stone"] == 2 and rows["person:bob-stone"] == 0


def test_deleting_an_entity_note_falls_back_to_extraction(vault: Path, mem: Memory) -> None:
    put(
        vault,
        "entities/person/alice-chen.md",
        entity("person:alice-chen", "Alice Chen", ["Ally"], ["alice@example.com"]),
    )
    put(
        vault, "sources/chat/general.md", chat([("Alice Chen", "mail me: alice@example.com"), ("Ally", "ok")])
    )
    mem.sync()
    assert occ(mem, "sources/chat/general.md") == [
        ("person:alice-chen", "Alice Chen"),
        ("person:alice-chen", "Ally"),
    ]
    (vault / "entities/person/alice-chen.md").unlink()
    mem.sync()
    assert occ(mem, "sources/chat/general.md") == [
        ("email:alice@example.com", "alice@example.com"),
        ("person:alice-chen", "Alice Chen"),
        ("person:ally", "Ally"),
    ]
    row = mem.index.query("SELECT note_path, display_name FROM entities WHERE id = 'person:alice-chen'")
    assert row == [(None, "Alice Chen")]


def test_ambiguous_names_are_reported_never_guessed(vault: Path, mem: Memory) -> None:
    put(vault, "entities/person/alex-kim.md", entity("person:alex-kim", "Alex Kim", ["Alex"]))
    put(vault, "entities/person/alex-lee.md", entity("person:alex-lee", "Alex Lee", ["Alex"]))
    put(vault, "notes/a.md", "Alex said hi to Alex Kim.\n")
    put(vault, "sources/chat/general.md", chat([("Alex", "hello")]))
    mem.sync()
    assert ids(mem, "notes/a.md") == {"person:alex-kim"}  # the unambiguous full name only
    assert ids(mem, "sources/chat/general.md") == {"person:alex"}  # the author keeps their own surface
    report = ambiguous(mem.index)
    assert {
        "name": "alex",
        "candidates": ["person:alex-kim", "person:alex-lee"],
        "why": "registry",
        "mentions": 1,
    } in report["ambiguous"]


def test_authors_resolve_afresh_when_the_registry_changes(vault: Path, mem: Memory) -> None:
    """A message's author is resolved once per registry and remembered on it: an edited entity
    note makes a new registry, and the same author resolves again."""
    put(vault, "entities/person/alex-kim.md", entity("person:alex-kim", "Alex Kim", ["Alex"]))
    put(vault, "entities/person/alex-lee.md", entity("person:alex-lee", "Alex Lee", ["Alex"]))
    put(vault, "sources/chat/general.md", chat([("Alex", "hello"), ("Alex", "again")]))
    mem.sync()
    assert ids(mem, "sources/chat/general.md") == {"person:alex"}  # ambiguous: its own surface
    (vault / "entities/person/alex-lee.md").unlink()
    mem.sync()
    assert ids(mem, "sources/chat/general.md") == {"person:alex-kim"}


def test_a_remembered_author_still_reports_its_ambiguity() -> None:
    registry = Registry.build(
        [
            EntityNote("person:alex-kim", "person", "Alex Kim", "entities/person/alex-kim.md", ("Alex",)),
            EntityNote("person:alex-lee", "person", "Alex Lee", "entities/person/alex-lee.md", ("Alex",)),
        ]
    )
    first, second = (resolve_text(registry, "hello", None, author="Alex") for _ in range(2))
    assert first == second
    assert [m.entity_id for m in second.mentions] == ["person:alex"]
    assert second.ambiguous == [Ambiguity("Alex", ("person:alex-kim", "person:alex-lee"))]


def test_fuzzy_matching_within_a_kind_and_its_ambiguity(vault: Path, mem: Memory) -> None:
    put(vault, "entities/person/priya-raman.md", entity("person:priya-raman", "Priya Raman"))
    put(vault, "entities/person/maria-lopez.md", entity("person:maria-lopez", "Maria Lopez"))
    put(vault, "entities/person/mario-lopez.md", entity("person:mario-lopez", "Mario Lopez"))
    put(vault, "sources/chat/general.md", chat([("Priya Ramen", "typo in my name"), ("Marie Lopez", "hi")]))
    mem.sync()
    assert ids(mem, "sources/chat/general.md") == {"person:priya-raman", "person:marie-lopez"}
    fuzzy = [i for i in ambiguous(mem.index)["ambiguous"] if i["why"] == "fuzzy"]
    assert fuzzy == [
        {"name": "Marie Lopez", "candidates": ["person:maria-lopez", "person:mario-lopez"], "why": "fuzzy",
         "id": "person:marie-lopez", "mentions": 1}
    ]  # fmt: skip


def test_short_and_all_caps_aliases_match_only_their_case(vault: Path, mem: Memory) -> None:
    put(vault, "entities/person/alice-chen.md", entity("person:alice-chen", "Alice Chen", ["AC", "Ali"]))
    put(vault, "notes/a.md", "AC and Ali agreed.\n")
    put(vault, "notes/b.md", "the ac unit is broken, ali baba\n")
    mem.sync()
    assert occ(mem, "notes/a.md") == [("person:alice-chen", "AC")]
    assert occ(mem, "notes/b.md") == []


def test_emails_handles_links_and_authors_resolve_through_the_registry(vault: Path, mem: Memory) -> None:
    put(
        vault,
        "entities/person/alice-chen.md",
        entity("person:alice-chen", "Alice Chen", [], ["alice@example.com"], ["@alice", "slack:U01ALICE"]),
    )
    put(vault, "entities/org/fernhill-labs.md", entity("org:fernhill-labs", "Fernhill Labs", ["Fernhill"]))
    put(vault, "notes/a.md", "Write to ALICE@example.com or ping @alice; see [[fernhill-labs|the studio]].\n")
    put(vault, "sources/chat/general.md", chat([("U01ALICE", "hi"), ("Alice <alice@example.com>", "again")]))
    mem.sync()
    assert occ(mem, "notes/a.md") == [
        ("org:fernhill-labs", "the studio"),
        ("person:alice-chen", "ALICE@example.com"),
    ]
    assert occ(mem, "sources/chat/general.md") == [
        ("person:alice-chen", "Alice <alice@example.com>"),
        ("person:alice-chen", "U01ALICE"),
    ]


def test_entity_notes_mention_others_but_not_themselves(vault: Path, mem: Memory) -> None:
    put(
        vault,
        "entities/person/alice-chen.md",
        entity("person:alice-chen", "Alice Chen") + "\nWorks at Fernhill with Alice Chen's team.\n",
    )
    put(vault, "entities/org/fernhill-labs.md", entity("org:fernhill-labs", "Fernhill Labs", ["Fernhill"]))
    write(vault, "entities/README.md", "---\nvaultmind: readme\n---\n# Entities\n\nNot an entity.\n")
    mem.sync()
    assert occ(mem, "entities/person/alice-chen.md") == [("org:fernhill-labs", "Fernhill")]
    assert mem.index.query("SELECT a, b, weight FROM edges") == []  # one entity per leaf
    assert sorted(r[0] for r in mem.index.query("SELECT id FROM entities")) == [
        "org:fernhill-labs",
        "person:alice-chen",
    ]


def test_notes_without_front_matter_and_duplicate_ids(vault: Path, mem: Memory) -> None:
    put(vault, "entities/person/Dana Whitfield.md", "---\naliases: [Dana]\n---\n# Dana Whitfield\n")
    put(vault, "entities/person/dana-2.md", entity("person:dana-whitfield", "Dana W.", ["D. Whitfield"]))
    put(vault, "notes/a.md", "Dana and D. Whitfield are the same person.\n")
    mem.sync()
    assert occ(mem, "notes/a.md") == [("person:dana-whitfield", "Dana")]
    row = mem.index.query(
        "SELECT display_name, note_path, aliases FROM entities WHERE id = 'person:dana-whitfield'"
    )
    assert row == [("Dana Whitfield", "entities/person/Dana Whitfield.md", ["Dana", "D. Whitfield"])]
    problems = ambiguous(mem.index)["problems"]
    assert problems == [
        "entities/person/dana-2.md: declares id person:dana-whitfield like entities/person/Dana Whitfield.md; their names are merged"
    ]


def test_a_first_name_resolves_to_the_one_person_with_that_full_name(vault: Path, mem: Memory) -> None:
    put(vault, "entities/person/dana-whitfield.md", entity("person:dana-whitfield", "Dana Whitfield"))
    put(vault, "entities/person/alex-kim.md", entity("person:alex-kim", "Alex Kim"))
    put(vault, "entities/person/alex-lee.md", entity("person:alex-lee", "Alex Lee"))
    put(vault, "sources/chat/general.md", chat([("Dana", "The Loft is free."), ("Alex", "Great")]))
    mem.sync()
    found = ids(mem, "sources/chat/general.md")
    assert "person:dana-whitfield" in found and "person:dana" not in found
    assert "person:alex" in found, "two people named Alex: never guessed"
    assert not any(item["name"] == "alex" for item in ambiguous(mem.index)["ambiguous"])

    put(vault, "entities/person/dana-scott.md", entity("person:dana-scott", "Dana Scott"))
    mem.sync()
    assert "person:dana" in ids(mem, "sources/chat/general.md"), "a second Dana: no longer resolved"


@pytest.mark.parametrize(
    ("author", "expected"),
    [
        ("WgO268Xc0KtFylJ", []),  # a chat export's randomised name
        ("4hMU9nZIB", []),
        ("xxx", []),  # a placeholder
        ("ZZZZ", []),
        ("Aa", ["person:aa"]),  # a name of two letters, even one letter twice: someone's
        ("Al", ["person:al"]),
        ("YAlzoXESudhug", []),  # letters alone in random case
        ("kPVTqHcBWssWFAU", []),
        ("McDonald", ["person:mcdonald"]),  # capitals inside a name
        ("DeLaCruz", ["person:delacruz"]),
        ("NCRlCV7C <n@example.com>", ["email:n@example.com"]),  # the address still names them
        ("john1985", ["person:john1985"]),  # a name and a year: a username of a person
        ("R2D2", ["person:r2d2"]),
        ("Dana Whitfield", ["person:dana-whitfield"]),
        ("A <hello@example.com>", ["email:hello@example.com"]),  # a placeholder: one letter
        ("J.", []),
        ("Author 1", []),  # a placeholder: words and a number of their own
        ("User 12 <u12@example.com>", ["email:u12@example.com"]),
    ],
)
def test_an_author_shaped_as_a_random_token_is_no_person(author: str, expected: list[str]) -> None:
    """A message's author written as a generated token — letters after digits inside one long
    word, one letter repeated, or letters whose case turns again and again with capitals in a
    row inside — or as a placeholder (one letter, "Author 1") is no person's name; an entity
    note may still claim it."""
    registry = Registry.build([])
    assert [m.entity_id for m in resolve_text(registry, "hello", None, author=author).mentions] == expected
    claimed = Registry.build(
        [EntityNote("person:bot", "person", "Bot", "entities/person/bot.md", ("WgO268Xc0KtFylJ",))]
    )
    assert [m.entity_id for m in resolve_text(claimed, "hello", None, author="WgO268Xc0KtFylJ").mentions] == [
        "person:bot"
    ]


def _guess(text: str, surface: str, label: str, nth: int = 0) -> tuple[int, int, str]:
    at = -1
    for _ in range(nth + 1):
        at = text.index(surface, at + 1)
    return (at, at + len(surface), label)


@pytest.mark.parametrize(
    ("text", "guesses", "expected"),
    [
        # the model reads the first name alone as a place, beside the full name it read as a person
        ("Hello\n\nOn Mon, Apr 2, 2012 at 6:26 PM, Megan One wrote:\n\n> Hi Megan, see you soon",
         [("Megan One", "PERSON", 0), ("Megan", "GPE", 1)], ["person:megan-one"]),
        # a place the text names is no one's first name
        ("Priya Natarajan flew to Berlin for the launch.",
         [("Priya Natarajan", "PERSON", 0), ("Berlin", "GPE", 0)], ["person:priya-natarajan", "place:berlin"]),
        # two people of that first name: the place read is kept, never guessed
        ("Megan One and Megan Two met. Megan was late.",
         [("Megan One", "PERSON", 0), ("Megan Two", "PERSON", 0), ("Megan", "GPE", 2)],
         ["person:megan-one", "person:megan-two", "place:megan"]),
    ],
)
def test_a_first_name_read_as_a_place_is_the_person_named_in_full(
    text: str, guesses: list[tuple[str, str, int]], expected: list[str]
) -> None:
    """The small models read a first name alone as a place now and then ("Megan" in a quoted
    reply of Megan One's): beside exactly one person of that first name named in full in the
    same text, it is that person, as an organization's read already was."""
    spans = [_guess(text, surface, label, nth) for surface, label, nth in guesses]
    found = [m.entity_id for m in resolve_text(Registry.build([]), text, spans).mentions]
    assert found == expected


def test_a_generated_one_word_note_matches_only_as_it_was_written(vault: Path, mem: Memory) -> None:
    """A note vaultmind wrote for the tag #launch and one for "Apple" do not make the common
    words theirs: "the rocket launch", "an apple" mention neither. A note the user wrote, an
    alias the user added, still match in any case."""
    for when in ("soon", "now", "later"):
        put(vault, f"notes/{when}.md", f"#launch {when}\n")
    mem.sync()
    assert create_entity_notes(mem).paths == ["entities/topic/launch.md"]  # written by vaultmind
    put(vault, "entities/org/apple.md", render_entity_note("org:apple", "org", "Apple", []))
    put(vault, "entities/topic/harvest.md", entity("topic:harvest", "Harvest"))  # the user's
    put(vault, "notes/words.md", "The rocket launch slipped. I ate an apple at the harvest.\n")
    put(vault, "notes/names.md", "Apple shipped it; see #launch.\n")
    mem.sync()
    assert occ(mem, "notes/words.md") == [("topic:harvest", "harvest")]
    assert occ(mem, "notes/names.md") == [("org:apple", "Apple"), ("topic:launch", "#launch")]
    launch = vault / "entities/topic/launch.md"
    put(vault, "entities/topic/launch.md", launch.read_text(encoding="utf-8").replace("aliases: []", "aliases: [launch]"))
    mem.sync()
    assert occ(mem, "notes/words.md") == [("topic:harvest", "harvest"), ("topic:launch", "launch")]


def test_a_short_capital_name_of_a_note_matches_as_written(vault: Path, mem: Memory) -> None:
    """`org:ibm` displayed "IBM": the id's own word may never match in running text, the
    display name's may, as written ("IBM", not "ibm")."""
    put(vault, "entities/org/ibm.md", entity("org:ibm", "IBM"))
    put(vault, "notes/a.md", "We met IBM today; ibm is lower case.\n")
    mem.sync()
    assert occ(mem, "notes/a.md") == [("org:ibm", "IBM")]


def _named(kind: str, name: str) -> EntityNote:
    """The entity note of `name` (its id and path the name's words in lower case, hyphened)."""
    key = name.lower().replace(" ", "-")
    return EntityNote(f"{kind}:{key}", kind, name, f"entities/{kind}/{key}.md")


def _person(key: str, *aliases: str) -> EntityNote:
    return EntityNote(f"person:{key}", "person", key.title(), f"entities/person/{key}.md", aliases, paths=(f"entities/person/{key}.md",))


@pytest.mark.parametrize("outside", ["aaron", "zed"])  # the id that leads into the loop before it, and after
def test_a_merge_cycle_is_said_once_and_nothing_in_it_is_merged(outside: str) -> None:
    """`bob` lists `carl`'s id, `carl` lists `bob`'s: neither absorbs the other; a third id
    `bob` lists too (a merge leading into the loop) still merges into him, and the cycle is
    reported once, whatever the order of the ids."""
    registry = Registry.build(
        [_person("bob", "person:carl", f"person:{outside}"), _person("carl", "person:bob"), _person(outside)]
    )
    assert registry.problems == ["merge cycle between person:bob, person:carl; not merged"]
    assert (registry.final("person:bob"), registry.final("person:carl")) == ("person:bob", "person:carl")
    assert registry.final(f"person:{outside}") == "person:bob"


def test_an_id_in_the_aliases_of_two_notes_is_merged_into_neither() -> None:
    registry = Registry.build([_person("bob", "person:carl"), _person("dana", "person:carl"), _person("carl")])
    assert registry.problems == ["person:carl is listed in the aliases of person:bob, person:dana; not merged"]
    assert registry.final("person:carl") == "person:carl"


def test_aliases_given_as_one_string_with_commas_are_several_aliases(vault: Path, mem: Memory) -> None:
    """`aliases: Nana, Aninha` (the form people type, and Obsidian's older string form) is two
    aliases, as `tags: family, travel` is two tags: each nickname is found in the text."""
    put(
        vault,
        "entities/person/ana-lima.md",
        '---\nvaultmind: entity\nid: "person:ana-lima"\nkind: person\ndisplay_name: Ana Lima\n'
        "aliases: Nana, Aninha\n---\n# Ana Lima\n",
    )
    put(vault, "Journal/nana.md", "Nana called about the tickets.\n")
    put(vault, "Journal/aninha.md", "Aninha sent the photos.\n")
    mem.sync()
    assert occ(mem) == [("person:ana-lima", "Aninha"), ("person:ana-lima", "Nana")]
    hit = mem.query("search_entities", {"query": "Nana"})["hits"][0]
    assert (hit["node_id"], hit["aliases"]) == ("person:ana-lima", ["Nana", "Aninha"])


def test_a_suffix_after_a_comma_stays_with_the_alias_it_ends(vault: Path, mem: Memory) -> None:
    """`aliases: Acme, Inc.` is one alias: split on its comma, "Inc." would be an alias of
    Acme, and every other company's "Inc." a mention of it."""
    put(
        vault,
        "entities/org/acme.md",
        '---\nvaultmind: entity\nid: "org:acme"\nkind: org\ndisplay_name: Acme Corporation\n'
        "aliases: Acme, Inc., ACME\n---\n# Acme Corporation\n",
    )
    put(vault, "Journal/globex.md", "Hank Scorpio of Globex, Inc. called about the merger.\n")
    put(vault, "Journal/acme.md", "ACME shipped the anvils.\n")
    mem.sync()
    assert occ(mem) == [("org:acme", "ACME")]
    hit = mem.query("search_entities", {"query": "Acme"})["hits"][0]
    assert (hit["node_id"], hit["aliases"]) == ("org:acme", ["Acme, Inc.", "ACME"])


def test_a_one_word_place_or_org_guess_is_the_one_note_its_name_starts() -> None:
    """"Priya" read as a place beside the note "Priya Shah" is Priya Shah, "Acme" read as a place
    or an organization beside "Acme Corp" is Acme Corp — only when exactly one note of a person or
    an organization starts so; a word that starts none, or two, stays the model's own."""
    notes = [
        _named("person", "Priya Shah"),
        _named("org", "Acme Corp"),
        _named("person", "Jordan Lee"),
        _named("org", "Jordan Foods"),
    ]
    registry = Registry.build(notes)
    text = "Sean is coming too, and maybe Priya. Tom sent the numbers from Acme. Then Jordan and Oslo."
    spans = [(text.index(w), text.index(w) + len(w), label) for w, label in
             (("Priya", "GPE"), ("Acme", "ORG"), ("Jordan", "GPE"), ("Oslo", "GPE"))]  # fmt: skip
    found = {m.surface: m.entity_id for m in resolve_text(registry, text, spans).mentions}
    assert found["Priya"] == "person:priya-shah"
    assert found["Acme"] == "org:acme-corp"
    assert found["Jordan"] == "place:jordan"  # a person's and an organization's: neither
    assert found["Oslo"] == "place:oslo"
    assert registry.resolve_name("Acme", "place").entity_id == "org:acme-corp"
    assert registry.resolve_name("Acme", "person").entity_id is None  # a person's first name only


def test_a_place_after_a_preposition_of_place_stays_a_place_beside_a_person_it_starts() -> None:
    """Places that are also first names ("Austin", "Paris") beside the notes "Austin Lee" and
    "Paris Green": read as a place after "to", "in", "from", "near", they stay places; the same
    word where the sentence speaks of a person ("with Austin", "talked to Paris", "Austin's")
    is the person, and "and maybe Priya" still Priya Shah."""
    notes = [
        _named("person", "Austin Lee"),
        _named("person", "Paris Green"),
        _named("person", "Priya Shah"),
        _named("org", "Acme Corp"),
    ]
    registry = Registry.build(notes)

    def read(text: str, word: str, label: str = "GPE") -> list[str]:
        start = text.index(word)
        return [m.entity_id for m in resolve_text(registry, text, [(start, start + len(word), label)]).mentions]

    assert read("I flew to Austin last week.", "Austin") == ["place:austin"]
    assert read("Three days in Paris, then home.", "Paris") == ["place:paris"]
    assert read("The flight from Austin was late.", "Austin") == ["place:austin"]
    assert read("We may move near Austin.", "Austin") == ["place:austin"]
    assert read("Had lunch with Austin today.", "Austin") == ["person:austin-lee"]
    assert read("I talked to Paris about it.", "Paris") == ["person:paris-green"]
    assert read("We met at Austin's place.", "Austin") == ["person:austin-lee"]
    assert read("Sean is coming too, and maybe Priya.", "Priya") == ["person:priya-shah"]
    assert read("Tom sent the numbers from Acme.", "Acme", "ORG") == ["org:acme-corp"]  # an org, not a person


@pytest.mark.slow
def test_a_city_that_starts_a_persons_name_stays_a_city_with_the_model(vault: Path) -> None:
    """The same with the language model: "I flew to Austin" in a vault with the note "Austin Lee"
    is the place Austin; "maybe Priya" beside "Priya Shah" is Priya Shah."""
    if not NerEngine().available:
        pytest.skip(NerEngine().status()["message"])
    write(vault, "entities/person/austin-lee.md", render_entity_note("person:austin-lee", "person", "Austin Lee", []))
    write(vault, "entities/person/priya-shah.md", render_entity_note("person:priya-shah", "person", "Priya Shah", []))
    write(vault, "Journal/a.md", "---\ndate: 2026-11-02\n---\nI flew to Austin last week for the conference.\n")
    write(vault, "Journal/b.md", "---\ndate: 2026-11-03\n---\nSean is coming too, and maybe Priya.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        rows = memory.index.query("SELECT note_path, entity_id FROM occurrences ORDER BY 1, 2")
    found = {(str(p), str(e)) for p, e in rows}
    assert ("Journal/a.md", "place:austin") in found
    assert ("Journal/a.md", "person:austin-lee") not in found
    assert ("Journal/b.md", "person:priya-shah") in found


def test_an_edited_kind_in_an_entity_note_changes_the_entitys_kind(vault: Path) -> None:
    """A note vaultmind wrote as `org:harbor-hall` whose `kind` the user corrects to `place`:
    the entity is `place:harbor-hall` (found as a place), its mentions follow, and the old id
    is merged into it, so it still names the same entity."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    note = render_entity_note("org:harbor-hall", "org", "Harbor Hall", [])
    path = write(vault, "entities/org/harbor-hall.md", note)
    write(vault, "Journal/a.md", "---\ndate: 2026-11-02\n---\nThe gig at Harbor Hall was loud.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert {str(r[0]) for r in memory.index.query("SELECT entity_id FROM occurrences")} == {"org:harbor-hall"}
        path.write_text(note.replace("kind: org", "kind: place"), encoding="utf-8")
        memory.sync()
        assert {str(r[0]) for r in memory.index.query("SELECT entity_id FROM occurrences")} == {"place:harbor-hall"}
        hits = memory.query("search_entities", {"query": "Harbor Hall", "kind": "place"})["hits"]
        assert [h["node_id"] for h in hits][:1] == ["place:harbor-hall"]
        registry = committed_registry(memory.index)
        assert registry.final("org:harbor-hall") == "place:harbor-hall"
    assert path.read_text(encoding="utf-8") == note.replace("kind: org", "kind: place")  # the note is not touched


@pytest.mark.parametrize("kind", ["email", "url", "phone", "persn"])
def test_a_kind_the_notes_id_cannot_take_leaves_the_entity_as_it_was(kind: str) -> None:
    """`kind: email` (or a typo) in the note `org:harbor-hall`: no e-mail address is
    `harbor-hall`, so the entity stays `org:harbor-hall`, with no alias of its own id."""
    front = {"vaultmind": "entity", "id": "org:harbor-hall", "kind": kind, "display_name": "Harbor Hall"}
    entry = entity_note_from("entities/org/harbor-hall.md", "Harbor Hall", front)
    assert entry is not None and (entry.id, entry.aliases) == ("org:harbor-hall", ())


def test_a_save_reads_the_registrys_fingerprint_once_and_an_alias_edit_still_counts(
    vault: Path, mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon's save read the fingerprint (a scan of every note's front matter: at 50k notes
    0.3–0.7 s and 20–27 MiB, at the top of the save's peak) for its preparer and again for its
    write. The preparer now takes the registry the last write read; a save that edits an
    entity note's aliases with a note using the new alias finds it all the same (the write
    re-derives what the preparer resolved with the registry before)."""
    import vaultmind.entities.registry_store as registry_store

    put(vault, "entities/person/alice-chen.md", entity("person:alice-chen", "Alice Chen", ["Alice"]))
    put(vault, "notes/lunch.md", "Lunch with Alice.\n")
    mem.sync()
    scans: list[str] = []
    fingerprint = registry_store.registry_fingerprint

    def counted(con: duckdb.DuckDBPyConnection) -> str:
        scans.append(fingerprint(con))
        return scans[-1]

    monkeypatch.setattr(registry_store, "registry_fingerprint", counted)
    put(vault, "notes/tea.md", "Tea with Alice.\n")
    mem.sync_paths(["notes/tea.md"])
    assert len(scans) == 1 and occ(mem, "notes/tea.md") == [("person:alice-chen", "Alice")]
    put(vault, "entities/person/alice-chen.md", entity("person:alice-chen", "Alice Chen", ["Alice", "Ally"]))
    put(vault, "notes/walk.md", "A walk with Ally.\n")
    mem.sync_paths(["entities/person/alice-chen.md", "notes/walk.md"])
    assert occ(mem, "notes/walk.md") == [("person:alice-chen", "Ally")]
    assert len(scans) == 2


def test_a_save_that_moves_an_alias_to_another_entity_note_reads_as_a_cold_rebuild(vault: Path) -> None:
    """The sync's preparer resolves with the registry the last write read (`recent_registry`),
    stale when the same save edits the entity notes: the entity note that held "Ally" removed
    and another claiming it, with a note saying "Ally", in one save. Every note then reads as
    a rebuild from nothing reads it."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    config = load_config(vault, embed_provider="none")
    put(vault, "entities/person/alice-chen.md", entity("person:alice-chen", "Alice Chen", ["Alice", "Ally"]))
    put(vault, "notes/lunch.md", "Lunch with Ally.\n")
    with Memory.open(config) as memory:
        memory.sync()
        put(vault, "notes/tea.md", "Tea with Ally.\n")
        memory.sync_paths(["notes/tea.md"])  # its write's registry: the preparer's next
        assert occ(memory, "notes/tea.md") == [("person:alice-chen", "Ally")]
        (vault / "entities/person/alice-chen.md").unlink()
        put(vault, "entities/person/ally-brown.md", entity("person:ally-brown", "Ally Brown", ["Ally"]))
        put(vault, "notes/walk.md", "A walk with Ally.\n")
        memory.sync_paths(
            ["entities/person/ally-brown.md", "notes/walk.md"], gone=["entities/person/alice-chen.md"]
        )
        saved = occ(memory)
        memory.reindex()
        assert saved == occ(memory)
    assert ("person:ally-brown", "Ally") in saved and not any(e == "person:alice-chen" for e, _ in saved)
