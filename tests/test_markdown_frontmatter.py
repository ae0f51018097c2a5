from __future__ import annotations

import json
import random

import pytest

from vaultmind.markdown.frontmatter import (
    body_sha256,
    parse_yaml_mapping,
    simple_mapping,
    split_frontmatter,
    yaml_mapping,
)
from vaultmind.markdown.note import parse_note


def test_plain_front_matter_and_body() -> None:
    fm = split_frontmatter("---\ntitle: Hello\ncount: 3\n---\n# Body\n\ntext\n")
    assert fm.data == {"title": "Hello", "count": 3}
    assert fm.body == "# Body\n\ntext\n"
    assert fm.error is None
    assert fm.body_offset_lines == 4


def test_no_front_matter() -> None:
    text = "# Just a note\n---\nkey: value\n---\n"
    fm = split_frontmatter(text)
    assert fm.data == {}
    assert fm.body == text
    assert fm.error is None
    assert fm.body_offset_lines == 0


def test_front_matter_must_be_first_line() -> None:
    text = "\n---\ntitle: x\n---\nbody"
    fm = split_frontmatter(text)
    assert fm.data == {}
    assert fm.body == text


@pytest.mark.parametrize("text", ["----\ntitle: x\n----\n", "--- x\ntitle: y\n---\n", "---"])
def test_not_a_front_matter_opener(text: str) -> None:
    fm = split_frontmatter(text)
    assert fm.data == {}
    assert fm.body == text
    assert fm.error is None


def test_bom_and_crlf_tolerated() -> None:
    fm = split_frontmatter("\ufeff---\r\ntitle: Ünïcode 日本\r\n---\r\nline one\r\nline two\r\n")
    assert fm.data == {"title": "Ünïcode 日本"}
    assert fm.body == "line one\nline two\n"
    assert fm.body_offset_lines == 3


def test_empty_front_matter() -> None:
    fm = split_frontmatter("---\n---\nbody")
    assert (fm.data, fm.body, fm.error, fm.body_offset_lines) == ({}, "body", None, 2)


def test_front_matter_at_end_of_file_without_newline() -> None:
    fm = split_frontmatter("---\na: 1\n---")
    assert (fm.data, fm.body, fm.error, fm.body_offset_lines) == ({"a": 1}, "", None, 3)


def test_closing_line_may_have_trailing_spaces() -> None:
    fm = split_frontmatter("---  \na: 1\n---   \nbody\n")
    assert fm.data == {"a": 1}
    assert fm.body == "body\n"


def test_unclosed_front_matter_is_body_with_error() -> None:
    text = "---\ntitle: x\n\nNo closing line here.\n"
    fm = split_frontmatter(text)
    assert fm.data == {}
    assert fm.body == text
    assert fm.error is not None and "never closed" in fm.error


def test_dates_stay_iso_strings_recursively() -> None:
    fm = split_frontmatter(
        "---\ndate: 2024-03-04\nat: 2024-03-04T09:00:00Z\nlocal: 2024-03-04 09:00:00\n"
        "history:\n  - when: 2023-01-02\n  - 2022-12-31\nnested: {d: 2021-05-06}\n---\n"
    )
    assert fm.data == {
        "date": "2024-03-04",
        "at": "2024-03-04T09:00:00Z",
        "local": "2024-03-04 09:00:00",
        "history": [{"when": "2023-01-02"}, "2022-12-31"],
        "nested": {"d": "2021-05-06"},
    }
    json.dumps(fm.data)  # JSON-serialisable


def test_non_string_keys_and_sets_are_json_safe() -> None:
    fm = split_frontmatter(
        "---\n2024: year\ntrue: yes\nnull: n\nset: !!set {b, a}\nbin: !!binary aGk=\n---\n"
    )
    assert fm.error is None
    assert fm.data == {"2024": "year", "true": True, "null": "n", "set": ["a", "b"], "bin": "aGk="}
    json.dumps(fm.data)


@pytest.mark.parametrize(
    ("yaml_text", "kind"),
    [("- a\n- b", "list"), ("just a string", "string"), ("42", "int")],
)
def test_non_mapping_front_matter_is_read_as_body(yaml_text: str, kind: str) -> None:
    """Prose between a leading `---` rule and a later `---` is no front matter: Obsidian shows it
    as text, so it is the body (and searchable), reported as such."""
    text = f"---\n{yaml_text}\n---\nbody\n"
    fm = split_frontmatter(text)
    assert (fm.data, fm.body, fm.body_offset_lines) == ({}, text, 0)
    assert fm.error is not None and kind in fm.error and fm.error.endswith("read as body")


def test_prose_between_two_rules_is_in_a_leaf() -> None:
    text = "---\nMeeting with Dana about the kiln repair; she quoted 400 euros.\n\n---\n\nOther notes #kiln.\n"
    note = parse_note("journal.md", text)
    assert "kiln repair" in "\n".join(leaf.text for leaf in note.leaves)
    assert note.tags == ("kiln",) and note.frontmatter == {}


def test_template_placeholders_do_not_raise() -> None:
    text = "---\ncreated: {{date}}\ntitle: {{title}}\ntags:\n  - journal\n---\n# {{title}}\n"
    fm = split_frontmatter(text)
    assert fm.error is not None and "invalid YAML" in fm.error and "line" in fm.error
    assert fm.data == {"created": "{{date}}", "title": "{{title}}", "tags": ["journal"]}
    assert fm.body == "# {{title}}\n"
    assert fm.body_offset_lines == 6


def test_tabs_in_front_matter_best_effort() -> None:
    fm = split_frontmatter("---\ntitle: Tabbed\ntags:\n\t- one\n\t- two\nrating: 4\n---\nbody")
    assert fm.error is not None
    assert fm.data == {"title": "Tabbed", "tags": ["one", "two"], "rating": 4}
    assert fm.body == "body"


def test_garbage_front_matter_keeps_body() -> None:
    fm = split_frontmatter('---\n: : :\n"unterminated\n  - stray\n---\nthe body\n')
    assert fm.error is not None
    assert fm.body == "the body\n"
    json.dumps(fm.data)


def test_duplicate_keys_do_not_raise_last_wins() -> None:
    fm = split_frontmatter("---\ntitle: one\ntitle: two\n---\n")
    assert fm.data == {"title": "two"}


def test_unquoted_wikilinks_become_link_strings() -> None:
    fm = split_frontmatter("---\nup: [[Home]]\nrelated:\n  - [[Alice Chen|Alice]]\n  - plain\n---\n")
    assert fm.error is None
    assert fm.data == {"up": "[[Home]]", "related": ["[[Alice Chen|Alice]]", "plain"]}


def test_several_unquoted_wikilinks_on_one_line_best_effort() -> None:
    fm = split_frontmatter("---\nrelated: [[A]], [[B]]\nok: 1\n---\n")
    assert fm.data == {"related": "[[A]], [[B]]", "ok": 1}
    assert fm.error is not None


def test_quoted_values_and_unicode_survive_fallback() -> None:
    fm = split_frontmatter('---\nname: "Zoë 陳"\nbad: {{x}}\n---\n')
    assert fm.data == {"name": "Zoë 陳", "bad": "{{x}}"}


def test_body_offset_lines_maps_body_lines_to_file_lines() -> None:
    text = "---\na: 1\nb: 2\n---\nfirst body line\nsecond\n"
    fm = split_frontmatter(text)
    file_lines = text.split("\n")
    body_lines = fm.body.split("\n")
    assert file_lines[fm.body_offset_lines] == body_lines[0] == "first body line"


def test_body_sha256() -> None:
    assert body_sha256("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert body_sha256("é") != body_sha256("e")


# -- the flat shape read directly, against PyYAML --------------------------------------------

COMMON = """title: "Launch sync · 7 March"
created: 2024-03-07
updated: 2024-03-07T14:45:00
status: in progress
rating: 4
draft: no
source: https://example.com/a?b=1#c
aliases: [Launch sync, launch-sync]
tags:
  - meeting
  - 'q''s'
  - ~
participants:
- Alice Chen
- José Yilmaz
empty:
"""


def test_common_front_matter_is_read_directly_as_yaml_reads_it() -> None:
    direct = simple_mapping(COMMON)
    assert direct is not None  # the shape Obsidian and vaultmind write takes the direct path
    assert direct == yaml_mapping(COMMON)[0]
    assert direct["rating"] == 4 and direct["draft"] is False and direct["empty"] is None
    assert direct["updated"] == "2024-03-07T14:45:00" and direct["tags"] == ["meeting", "q's", None]


@pytest.mark.parametrize(
    "raw",
    [
        "a: 3.5", "a: 012", "a: 1:20", "a: 0x1F", "on: x", "a: x: y", "a: b # c", "a: &x b", "a: !t b",
        'a: "esc\\""', "a: 'open", "a:\n  b: c", "a: [x: y]", "a: {b: c}", "a: x\n  more", "# note\na: b",
        "a:\n  - x\n    - y", "a:\n  - x\n - y", "a: ~\n- x", "a: b\tc", "a: nel\x85x", "a: ls\u2028x", "a: [a,,b]",
    ],
)  # fmt: skip
def test_anything_outside_the_flat_shape_goes_to_yaml(raw: str) -> None:
    assert simple_mapping(raw) is None
    assert parse_yaml_mapping(raw) == yaml_mapping(raw)


def test_the_direct_reading_agrees_with_yaml_on_generated_front_matter() -> None:
    keys = ["title", "tags", "created", "a.b", "due-date", "_x", "on", "no", "y", "null", "True", "é"]
    values = [
        "hello", "José Yilmaz", "it's", 'say "hi"', "a, b", "a]b", "a#b", "a #b", "a:b", "a: b", "a:", "yes", "No",
        "TRUE", "off", "y", "~", "null", "", "0", "12", "+5", "-5", "012", "1_000", "1:20", "09:30", "3.5", "1e3",
        ".inf", "2022-04-18", "2022-04-18T09:00:00Z", "<<", "=", "!x", "&a", "*a", "|", ">", "%x", "@x", "`x`", "?x",
        "- x", '"q"', '"e\\"s"', '"a: b"', "'s'", "'it''s'", "'open", "[a, b]", "[]", "[a,]", "[a,,b]",
        "[yes, ~, 12, 012]", "[a:b]", "[a, [b]]", "['q']", "{a: b}", "[a", "🎉", "中文", "a  b", "https://x.y/z",
    ]  # fmt: skip
    rng = random.Random(7)
    direct = 0
    for _ in range(4000):
        lines: list[str] = []
        for _ in range(rng.randint(1, 5)):
            key = rng.choice(keys)
            if rng.random() < 0.6:
                lines.append(f"{key}: {rng.choice(values)}".rstrip())
            else:
                lines.append(f"{key}:")
                indent = rng.choice(["", "  ", "    "])
                lines.extend(f"{indent}- {rng.choice(values)}".rstrip() for _ in range(rng.randint(0, 3)))
        raw = "\n".join(lines)
        got = simple_mapping(raw)
        if got is not None:
            direct += 1
            want, error = yaml_mapping(raw)
            assert error is None and json.dumps(got) == json.dumps(want), raw  # types too (1 vs True)
    assert direct > 200
