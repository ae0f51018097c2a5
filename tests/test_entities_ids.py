"""Canonical ids and the one normalization shared by ingest and queries."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.entities.graph import query_entities
from vaultmind.entities.ids import (
    canonical_id,
    canonical_kind,
    make_id,
    normalize,
    parse_id,
    slug,
    word_spans,
    words,
)
from vaultmind.memory import Memory

from .conftest import write


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Alice Chen", "alice chen"),
        ("  ALICE   chen ", "alice chen"),
        ("Zoë O'Brien", "zoe o brien"),
        ("Zoe\u0308 O’Brien", "zoe o brien"),  # decomposed accent, typographic apostrophe
        ("José-María", "jose maria"),
        ("Straße", "strasse"),
        ("İstanbul", "istanbul"),
        ("A. Chen", "a chen"),
        ("...", ""),
    ],
)
def test_normalize_ignores_accents_case_and_punctuation(text: str, expected: str) -> None:
    assert normalize(text) == expected
    assert slug(text) == expected.replace(" ", "-")


def test_slug_of_long_names_stays_short_and_distinct() -> None:
    a, b = slug("word " * 40 + "one"), slug("word " * 40 + "two")
    assert len(a) <= 80 and len(b) <= 80 and a != b
    assert slug("Alice Chen") == "alice-chen"


def test_make_id_per_kind() -> None:
    assert make_id("person", "Alice Chen") == "person:alice-chen"
    assert make_id("organization", "Fernhill Labs, Inc.") == "org:fernhill-labs-inc"
    assert make_id("email", "Alice@Example.COM") == "email:alice@example.com"
    assert make_id("email", "mailto:bob@example.com") == "email:bob@example.com"
    assert make_id("handle", "@Bob.Stone") == "handle:bob.stone"
    assert make_id("url", "HTTPS://Example.com/Path/#frag") == "url:https://example.com/Path"
    assert make_id("phone", "+353 85 123 4567") == "phone:+353851234567"
    assert make_id("hashtag", "Q3-Budget") == "topic:q3-budget"
    assert make_id("person", "!!!") is None
    assert make_id("spaceship", "x") is None


def test_parse_and_canonicalize_ids() -> None:
    assert parse_id("person:alice-chen") == ("person", "alice-chen")
    assert canonical_id("Person:Alice Chen") == "person:alice-chen"
    assert canonical_id("organisation:acme") == "org:acme"
    assert canonical_id("Re: budget") is None
    assert canonical_id("no colon") is None
    assert canonical_kind("People") == "person"
    assert canonical_kind("galaxy") is None


def test_word_spans_match_words_and_point_into_the_text() -> None:
    text = "Met Zoe\u0308 O’Brien at café-bar #7"
    spans = list(word_spans(text))
    assert [w for w, _, _ in spans] == words(text)
    assert [text[s:e] for _, s, e in spans][:3] == ["Met", "Zoe\u0308", "O"]


def test_a_script_written_without_spaces_is_matched_character_by_character() -> None:
    """A run of Han or Kana is a sentence, not a word: each character is a word of the matching
    form (so a name matches inside it), while the id keeps the name whole (ids stay as stored)."""
    text = "昨日、田中さんと李明さんに会った。Met 李明."
    spans = word_spans(text)
    assert [w for w, _, _ in spans] == normalize(text).split()
    assert [text[s:e] for _, s, e in spans][7:9] == ["李", "明"]
    assert normalize("李明") == "李 明" and slug("李雷") == "李雷" and make_id("person", "李明") == "person:李明"


def test_half_width_katakana_is_matched_character_by_character_too() -> None:
    """"ｶﾀｶﾅ" folds to "カタカナ": its words are the same characters whether the text is folded
    first (`normalize`, an alias) or cut first (`word_spans`, a leaf), each pointing at its own."""
    text = "ﾀﾅｶさんとｶﾞｯｺｳへ"
    spans = word_spans(text)
    assert [w for w, _, _ in spans] == normalize(text).split() == ["タ", "ナ", "カ", "さ", "ん", "と", "カ", "ッ", "コ", "ウ", "へ"]
    assert [text[s:e] for _, s, e in spans][:3] == ["ﾀ", "ﾅ", "ｶ"]


def test_a_chinese_or_japanese_alias_is_found_in_chinese_and_japanese_text(vault: Path) -> None:
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    write(
        vault,
        "entities/person/li-ming.md",
        "---\nid: person:li-ming\nkind: person\ndisplay_name: Li Ming\naliases: [李明]\n---\n# Li Ming\n",
    )
    write(vault, "entities/person/李雷.md", "---\nkind: person\n---\n# 李雷\n")
    write(vault, "Journal/zh.md", "李明说明天去北京。我和李明一起吃饭。\n")
    write(vault, "Journal/ja.md", "昨日、田中さんと李明さんに会った。\n")
    write(vault, "Journal/lei.md", "李雷明天来。\n")
    write(vault, "Journal/tag.md", "Meeting #北京大学\n")  # an entity of no note: known by its id
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        found = memory.index.query("SELECT note_path, entity_id, surface FROM occurrences ORDER BY ALL")
        with memory.index.lock:
            asked = query_entities(memory.index.con, "李明和李雷说了什么?")
            at_pku = query_entities(memory.index.con, "在北京大学的会议")
    assert found == [
        ("Journal/ja.md", "person:li-ming", "李明"),
        ("Journal/lei.md", "person:李雷", "李雷"),
        ("Journal/tag.md", "topic:北京大学", "#北京大学"),
        ("Journal/zh.md", "person:li-ming", "李明"),
    ], found
    assert asked == [("person:li-ming", "李明"), ("person:李雷", "李雷")], asked
    assert at_pku == [("topic:北京大学", "北京大学")], at_pku


def test_query_uses_the_ingest_normalization(vault: Path) -> None:
    """A name in a question resolves to the id its occurrences were indexed under."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    write(
        vault,
        "entities/person/zoe-obrien.md",
        "---\nid: person:zoe-obrien\nkind: person\ndisplay_name: Zoë O'Brien\naliases: [Zoë]\n---\n# Zoë O'Brien\n",
    )
    write(vault, "notes/a.md", "Lunch with ZOE O’BRIEN and zoë about #Sailing, mail zoe@Example.com\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        indexed = sorted(
            r[0]
            for r in memory.index.query("SELECT entity_id FROM occurrences WHERE note_path = 'notes/a.md'")
        )
        with memory.index.lock:
            asked = query_entities(
                memory.index.con, "what did zoe o'brien say about #sailing? zoe@example.com"
            )
    assert indexed == ["email:zoe@example.com", "person:zoe-obrien", "topic:sailing"]
    assert sorted({ident for ident, _ in asked}) == indexed


def test_lowercase_queries_find_known_entities_by_their_words(vault: Path) -> None:
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    write(
        vault,
        "sources/chat/a.md",
        _chat([("Dana Whitfield <dana@hall.example>", "the hall is free #launch")]),
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        with memory.index.lock:
            asked = query_entities(
                memory.index.con, "what did dana whitfield say about the #launch and budget?"
            )
    assert asked == [("topic:launch", "#launch"), ("person:dana-whitfield", "dana whitfield")]


def _chat(messages: list[tuple[str, str]]) -> str:
    from vaultmind.markdown.render import Message, SourceMeta, render_source_note

    meta = SourceMeta("chat", "slack:acme/general", "slack/acme/general", "general")
    return render_source_note(
        meta, [Message(f"m{i}", a, "2024-03-04T09:00:00Z", t) for i, (a, t) in enumerate(messages)]
    )


def test_a_persons_title_is_not_part_of_their_id() -> None:
    """The sender "Dr. Elena Rossi" and the signature "Elena Rossi" are one person."""
    assert make_id("person", "Dr. Elena Rossi") == make_id("person", "Elena Rossi") == "person:elena-rossi"
    assert make_id("person", "Prof Mrs Ada Byron") == "person:ada-byron"
    assert make_id("person", "Dr") == "person:dr", "a title alone stays a name"
    assert make_id("org", "Dr Pepper") == "org:dr-pepper", "only people have titles"
    assert canonical_id("person:dr-elena-rossi") == "person:elena-rossi"


def test_a_kinship_title_is_not_part_of_the_id() -> None:
    """"Auntie Lin", "Aunt Lin" and the Lin of her own messages are one person."""
    assert make_id("person", "Auntie Lin") == make_id("person", "Aunt Lin") == make_id("person", "Lin") == "person:lin"
    assert make_id("person", "Uncle Bob") == "person:bob"
    assert make_id("person", "Grandma") == "person:grandma", "a title alone stays a name"
