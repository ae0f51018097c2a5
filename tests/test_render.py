from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

from vaultmind.errors import UsageError
from vaultmind.markdown.chunking import message_leaf_id
from vaultmind.markdown.frontmatter import body_sha256, split_frontmatter
from vaultmind.markdown.note import parse_note
from vaultmind.markdown.render import (
    Message,
    SourceMeta,
    block_id_for,
    format_meta,
    iso_utc,
    parse_meta,
    render_note,
    render_source_note,
)
from vaultmind.markdown.yaml_out import Quoted, render_frontmatter, yaml_scalar

CHAT = SourceMeta(
    kind="chat", source_id="slack:acme/general", scope="slack/acme/general", title="#general · 2024-03-04"
)
MESSAGES = [
    Message(
        "1709542800.000100",
        "Alice Chen",
        "2024-03-04T09:00:00Z",
        "Has anyone looked at the Q3 budget?\nSecond line of the same message.",
        "slack://archives/C01/p1709542800000100",
    ),
    Message(
        "1709543110.000200",
        "Bob Stone",
        datetime(2024, 3, 4, 9, 5, 10, tzinfo=UTC),
        "Yes, see [[Budget 2024]].",
        "slack://archives/C01/p1709543110000200",
    ),
]

EXPECTED_BODY = """\
# \\#general · 2024-03-04

> [!message] Alice Chen · 2024-03-04 09:00
> Has anyone looked at the Q3 budget?
> Second line of the same message.
> %% vaultmind id="1709542800.000100" at="2024-03-04T09:00:00Z" author="Alice Chen" ref="slack://archives/C01/p1709542800000100" %%

^m-1709542800-000100

> [!message] Bob Stone · 2024-03-04 09:05
> Yes, see [[Budget 2024]].
> %% vaultmind id="1709543110.000200" at="2024-03-04T09:05:10Z" author="Bob Stone" ref="slack://archives/C01/p1709543110000200" %%

^m-1709543110-000200
"""

EXPECTED_FRONTMATTER = """\
---
vaultmind: source
kind: chat
source_id: "slack:acme/general"
scope: slack/acme/general
title: "#general · 2024-03-04"
participants:
  - Alice Chen
  - Bob Stone
time_start: "2024-03-04T09:00:00Z"
time_end: "2024-03-04T09:05:10Z"
messages: 2
vaultmind_body_sha256: "{sha}"
---
"""

PATH = "sources/chat/slack/acme/general/2024-03-04.md"


def test_chat_note_renders_exactly_the_documented_format() -> None:
    text = render_source_note(CHAT, MESSAGES)
    sha = hashlib.sha256(EXPECTED_BODY.encode()).hexdigest()
    assert text == EXPECTED_FRONTMATTER.format(sha=sha) + EXPECTED_BODY


def test_rendering_is_deterministic_and_lf_only() -> None:
    a = render_source_note(CHAT, MESSAGES)
    assert a == render_source_note(CHAT, list(MESSAGES))
    assert "\r" not in a and a.endswith("\n")


def test_every_generated_note_is_lf_only_and_reads_back_as_vaultmind_s() -> None:
    """`render_note` (entity, document and source notes) kept a \\r of its body: the note was not
    LF only, and its recorded hash, of the body with the \\r, was not the hash of the body a
    reader splits off (line breaks read as \\n), so vaultmind's own note read as edited by you."""
    text = render_note([("vaultmind", "entity"), ("id", "person:ann")], "# Ann\r\n\r\nfrom a CRLF file\rend\x01\n")
    assert "\r" not in text and "\x01" not in text
    fm = split_frontmatter(text)
    assert fm.body == "# Ann\n\nfrom a CRLF file\nend\n"
    assert fm.data["vaultmind_body_sha256"] == body_sha256(fm.body)


def test_body_hash_matches_the_parsed_body() -> None:
    fm = split_frontmatter(render_source_note(CHAT, MESSAGES))
    assert fm.error is None
    assert fm.data["vaultmind_body_sha256"] == body_sha256(fm.body)
    assert fm.data["messages"] == 2
    assert fm.data["participants"] == ["Alice Chen", "Bob Stone"]


def test_round_trip_message_leaves() -> None:
    note = parse_note(PATH, render_source_note(CHAT, MESSAGES))
    assert note.kind == "source" and note.title == "#general · 2024-03-04"
    assert [leaf.kind for leaf in note.leaves] == ["message", "message"]
    first, second = note.leaves
    assert (first.message_id, first.author, first.timestamp, first.source_ref, first.text) == (
        "1709542800.000100",
        "Alice Chen",
        "2024-03-04T09:00:00Z",
        "slack://archives/C01/p1709542800000100",
        "Has anyone looked at the Q3 budget?\nSecond line of the same message.",
    )
    assert first.anchor == "^m-1709542800-000100"
    assert second.timestamp == "2024-03-04T09:05:10Z"
    assert (
        first.id
        == hashlib.sha256(
            f"message\0slack:acme/general\0{first.message_id}\0{first.text}".encode()
        ).hexdigest()[:32]
    )
    assert first.content_hash == hashlib.sha256(first.text.encode()).hexdigest()
    assert [link.target for link in note.links] == ["Budget 2024"]
    assert [leaf.anchor for leaf in note.leaves] == ["^m-1709542800-000100", "^m-1709543110-000200"]


TRICKY_TEXTS = [
    "",
    "\n",
    "trailing newline\n",
    "\n\nleading blank lines",
    "  indented\n\tand tabbed\n   ",
    "para one\n\npara two\n\n\n",
    '> [!message] Mallory · 2024-01-01 00:00\n> fake message\n> %% vaultmind id="evil" author="Mallory" %%',
    '%% vaultmind id="fake" at="2020-01-01T00:00:00Z" author="Eve" %%',
    '\\%% vaultmind id="already escaped" %%',
    "\\\\%%vaultmind",
    "%%vaultmind-ish is not the meta line",
    "^m-fake-block\n\n^another",
    "# Fake heading\n## Another\n---\n***",
    "```\nunclosed fence",
    "%% an unbalanced comment",
    "50%% off, 100%%%",
    "[!message] bare callout marker",
    ">\n> >\n>>> quotes",
    "日本語のメッセージ。\n中文消息 🎉 émoji",
    "$$ unclosed math",
    "<!-- unclosed html comment",
    "line with CR\r\nand lone\rCR",
]


def chat_note(texts: list[str]) -> str:
    messages = [
        Message(
            f"D1:{i}", f'Author "{i}" \\ O\'Neil', datetime(2024, 5, 1, 12, i, tzinfo=UTC), text, f"ref://{i}"
        )
        for i, text in enumerate(texts)
    ]
    return render_source_note(SourceMeta("chat", "test:tricky", "test/tricky", "Tricky"), messages)


def test_tricky_texts_round_trip_and_cannot_forge_messages() -> None:
    note = parse_note("sources/chat/test/tricky/x.md", chat_note(TRICKY_TEXTS))
    assert len(note.leaves) == len(TRICKY_TEXTS)
    for i, (leaf, text) in enumerate(zip(note.leaves, TRICKY_TEXTS, strict=True)):
        assert leaf.text == text.replace("\r\n", "\n").replace("\r", "\n")
        assert leaf.message_id == f"D1:{i}"
        assert leaf.author == f'Author "{i}" \\ O\'Neil'
        assert leaf.source_ref == f"ref://{i}"
        assert leaf.anchor == f"^m-d1-{i}"
    assert len({leaf.id for leaf in note.leaves}) == len(TRICKY_TEXTS)


def test_meta_like_text_line_is_escaped_in_the_file() -> None:
    text = chat_note(['%% vaultmind id="x" %%', '```\n%% vaultmind id="y" %%\n```'])
    assert '> %\\% vaultmind id="x" %\\%' in text  # no "%%" left to open a comment
    assert '> \\%% vaultmind id="y" %%' in text  # inside code: the meta line's own escape
    assert text.count("> %% vaultmind ") == 2  # the two real meta lines


def test_notes_written_before_the_markup_escapes_still_read() -> None:
    """A message whose meta line has no `esc="1"` is verbatim but for the meta line's escape:
    its backslashes stay ("C:\\Users\\<you>" was written so, not escaped)."""
    old = '> \\%% vaultmind id="x" %%\n> 50%% <b>bold</b> ^end\n> C:\\Users\\<you>\\Downloads and 50%\\% and a \\^id'
    text = chat_note(["placeholder"]).replace("> placeholder", old)
    (leaf,) = parse_note("sources/chat/test/tricky/x.md", text).leaves
    assert leaf.text == '%% vaultmind id="x" %%\n50%% <b>bold</b> ^end\nC:\\Users\\<you>\\Downloads and 50%\\% and a \\^id'
    new = chat_note(["plain words", "C:\\Users\\<you>"])
    assert new.count(' esc="1" %%') == 1 and '> C:\\Users\\\\<you>' in new
    assert [leaf.text for leaf in parse_note("sources/chat/test/tricky/x.md", new).leaves] == ["plain words", "C:\\Users\\<you>"]


def _html_of_message_lines(note_text: str) -> str:
    from markdown_it import MarkdownIt

    body = "\n".join(
        line[2:] for line in note_text.split("\n") if line.startswith("> ") and "[!message]" not in line
    )
    return MarkdownIt("commonmark").render(body.replace("%% vaultmind", "META"))


def test_markup_a_message_never_meant_is_escaped_and_reads_back() -> None:
    texts = ["<Media omitted>", "50%% done, see %%notes", "block ref ^abc123", "`<div>` and `%%` in code"]
    text = chat_note(texts)
    assert [leaf.text for leaf in parse_note("sources/chat/test/tricky/x.md", text).leaves] == texts
    assert "> \\<Media omitted>" in text
    assert "> 50%\\% done, see %\\%notes" in text
    assert "> block ref \\^abc123" in text
    assert "> `<div>` and `%%` in code" in text  # code spans keep their text: a backslash shows there
    html = _html_of_message_lines(text)
    assert "&lt;Media omitted&gt;" in html and "<media" not in html.lower()
    assert "50%% done, see %%notes" in html and "block ref ^abc123" in html
    assert "<code>&lt;div&gt;</code>" in html


def test_a_title_or_author_with_markup_opens_no_comment_and_hides_nothing() -> None:
    """A subject "Kickoff: 15 April %% notes" as the note's heading: its "%%" had paired with
    the first meta line's, and reading view hid the first message."""
    meta = SourceMeta("email", "mbox:a/inbox", "mbox/a", "Kickoff: 15 April %% notes <Action required>")
    message = Message("m1", "Ops %% <Team>", datetime(2024, 4, 11, 9, tzinfo=UTC), "See you there.", subject="x")
    text = render_source_note(meta, [message])
    heading = next(line for line in text.split("\n") if line.startswith("# "))
    callout = next(line for line in text.split("\n") if "[!email]" in line)
    assert heading == "# Kickoff: 15 April %\\% notes \\<Action required>"
    assert "Ops %\\% \\<Team> ·" in callout
    [leaf] = parse_note("sources/email/mbox/a/x.md", text).leaves
    assert (leaf.text, leaf.author) == ("See you there.", "Ops %% <Team>")
    html = MarkdownIt("commonmark").render(heading + "\n\n" + callout[2:])
    assert "15 April %% notes &lt;Action required&gt;" in html and "Ops %% &lt;Team&gt;" in html


def test_a_channel_title_tags_no_note_and_a_message_keeps_its_tags() -> None:
    """"# #launch · 2024-03-07" made every day note of a Slack channel a note tagged #launch, in
    Obsidian's tag pane and in the index; the title now shows "#launch" as text."""
    meta = SourceMeta("chat", "slack:acme/launch", "slack/acme/launch", "#launch · 2024-03-07")
    plain = Message("1", "Alice #1 fan", datetime(2024, 3, 7, 9, tzinfo=UTC), "Moved to Tuesday.")
    tagged = Message("2", "Bob", datetime(2024, 3, 7, 9, 5, tzinfo=UTC), "Noted in #planning.")
    assert parse_note("sources/chat/slack/acme/launch/2024-03-07.md", render_source_note(meta, [plain])).tags == ()
    text = render_source_note(meta, [plain, tagged])
    assert parse_note("sources/chat/slack/acme/launch/2024-03-07.md", text).tags == ("planning",)
    heading = next(line for line in text.split("\n") if line.startswith("# "))
    assert MarkdownIt("commonmark").render(heading) == "<h1>#launch · 2024-03-07</h1>\n"
    assert "[!message] Alice \\#1 fan ·" in text


def test_a_message_with_dollars_hides_nothing_after_it() -> None:
    """"$$$ that's pricey" opened a math block that never closed: the whole chat note after it
    lost its tags, links and block ids. Its "$$" is escaped (reading view shows it as written)
    and an unclosed "$$" is text anyway."""
    texts = ["$$$ that's pricey", "see #budget and [[Alice]]", "$$"]
    text = chat_note(texts)
    assert "> $\\$\\$ that's pricey" in text
    note = parse_note("sources/chat/test/tricky/x.md", text)
    assert [leaf.text for leaf in note.leaves] == texts
    assert note.tags == ("budget",) and [link.target for link in note.links] == ["Alice"]
    assert "$$$ that" in _html_of_message_lines(text)


def test_random_texts_round_trip_through_the_note() -> None:
    import random

    rng = random.Random(33)
    alphabet = ["%", "%%", "$", "$$", "<", "<b>", "\\", "^", "^id", " ", "\n", "`", "```", "~~~", "a", "x:y", "@", ">", "#", "vaultmind"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14))) for _ in range(400)]
    for start in range(0, len(texts), 50):
        batch = texts[start : start + 50]
        note = parse_note("sources/chat/test/tricky/x.md", chat_note(batch))
        assert [leaf.text for leaf in note.leaves] == batch


def test_email_note() -> None:
    meta = SourceMeta(
        "email",
        "mbox:alice/inbox",
        "mbox/alice",
        "Q3 budget thread",
        participants=("alice@example.com", "Bob <bob@example.com>"),
    )
    messages = [
        Message(
            "<CAF1@mail.example.com>",
            "alice@example.com",
            "2024-03-04T10:00:00+01:00",
            "Hi Bob,\n\nnumbers attached.",
            "mid:CAF1@mail.example.com",
            subject="Q3 budget",
        ),
        Message(
            "<CAF2@mail.example.com>",
            "Bob <bob@example.com>",
            "2024-03-04T09:30:00Z",
            "Thanks!",
            "mid:CAF2@mail.example.com",
            subject="Re: Q3 budget",
        ),
    ]
    text = render_source_note(meta, messages)
    assert "> [!email] alice@example.com · 2024-03-04 09:00\n" in text
    assert 'subject="Re: Q3 budget"' in text
    fm = split_frontmatter(text)
    assert fm.data["kind"] == "email"
    assert fm.data["subject"] == "Q3 budget"
    assert fm.data["participants"] == ["alice@example.com", "Bob <bob@example.com>"]
    assert (fm.data["time_start"], fm.data["time_end"]) == ("2024-03-04T09:00:00Z", "2024-03-04T09:30:00Z")
    note = parse_note("sources/email/mbox/alice/q3.md", text)
    assert [(leaf.message_id, leaf.author, leaf.timestamp, leaf.text) for leaf in note.leaves] == [
        (
            "<CAF1@mail.example.com>",
            "alice@example.com",
            "2024-03-04T09:00:00Z",
            "Hi Bob,\n\nnumbers attached.",
        ),
        ("<CAF2@mail.example.com>", "Bob <bob@example.com>", "2024-03-04T09:30:00Z", "Thanks!"),
    ]
    assert note.leaves[0].anchor == "^m-caf1-mail-example-com"
    assert note.leaves[0].id == message_leaf_id(
        "mbox:alice/inbox", "<CAF1@mail.example.com>", "Hi Bob,\n\nnumbers attached."
    )


def test_chat_callouts_are_not_read_from_email_notes_and_vice_versa() -> None:
    text = render_source_note(CHAT, MESSAGES).replace("kind: chat", "kind: email")
    assert parse_note(PATH, text).leaves == ()


def test_user_notes_with_message_callouts_are_chunked_as_sections() -> None:
    note = parse_note("Inbox/copy.md", render_source_note(CHAT, MESSAGES))
    assert {leaf.kind for leaf in note.leaves} == {"section"}


def test_edited_message_note_is_read_tolerantly() -> None:
    text = (
        "---\nvaultmind: source\nkind: chat\nsource_id: s\n---\n# T\n\n"
        "User comment outside the callouts.\n\n"
        "> [!message]+ Carol · 2024-01-01 10:00\n>no space after the marker\n> second\n\n^m-c1\n\n"
        "> [!note] a user callout\n> ignored\n"
    )
    (leaf,) = parse_note("sources/chat/x/y.md", text).leaves
    assert (leaf.text, leaf.author, leaf.message_id, leaf.timestamp, leaf.anchor) == (
        "no space after the marker\nsecond",
        "Carol",
        "m-c1",
        None,
        "^m-c1",
    )


def test_empty_conversation() -> None:
    text = render_source_note(CHAT, [])
    fm = split_frontmatter(text)
    assert fm.data["messages"] == 0 and "time_start" not in fm.data
    assert parse_note(PATH, text).leaves == ()


def test_participants_default_to_authors_in_order() -> None:
    fm = split_frontmatter(render_source_note(CHAT, [MESSAGES[1], MESSAGES[0], MESSAGES[1]]))
    assert fm.data["participants"] == ["Bob Stone", "Alice Chen"]


def test_render_rejects_document_kind() -> None:
    with pytest.raises(UsageError):
        render_source_note(SourceMeta("document", "d", "d", "D"), [])  # type: ignore[arg-type]


# --- block ids ------------------------------------------------------------------------------


def test_block_id_for() -> None:
    taken: set[str] = set()
    assert block_id_for("D1:3", taken) == "m-d1-3"
    assert block_id_for("1709542800.000100", taken) == "m-1709542800-000100"
    assert taken == {"m-d1-3", "m-1709542800-000100"}
    clash = block_id_for("d1-3", taken)  # same slug as "D1:3"
    assert clash == "m-" + hashlib.sha256(b"d1-3").hexdigest()[:12]
    long_id = "x" * 41
    assert block_id_for(long_id, taken) == "m-" + hashlib.sha256(long_id.encode()).hexdigest()[:12]
    assert block_id_for("日本語", taken) == "m-" + hashlib.sha256("日本語".encode()).hexdigest()[:12]
    assert block_id_for("d1-3", taken) == clash + "-2"


def test_block_ids_only_use_obsidian_characters() -> None:
    taken: set[str] = set()
    for message_id in ["<a.b@c>", "__x__", "A B C", "ñ", "", "--"]:
        bid = block_id_for(message_id, taken)
        assert bid and all(c.isascii() and (c.isalnum() or c == "-") for c in bid)
    assert len(taken) == 6


# --- codecs ---------------------------------------------------------------------------------


def test_meta_round_trip_with_escapes() -> None:
    attrs = [("id", 'a"b\\c'), ("author", "line\nbreak\ttab"), ("subject", "100%% done %%% x")]
    line = format_meta(attrs)
    assert "%%" not in line[2:-2]  # a value can never close the comment early
    assert parse_meta(line) == dict(attrs)
    assert parse_meta("not meta") is None
    assert parse_meta("%% vaultmind %%") == {}


def test_iso_utc() -> None:
    assert iso_utc("2024-03-04T10:00:00+01:00") == "2024-03-04T09:00:00Z"
    assert iso_utc("2024-03-04T09:00:00") == "2024-03-04T09:00:00Z"  # naive means UTC
    assert (
        iso_utc(datetime(2024, 3, 4, 9, 0, 0, 500, tzinfo=timezone(timedelta(hours=-5))))
        == "2024-03-04T14:00:00.000500Z"
    )
    with pytest.raises(UsageError):
        iso_utc("yesterday")


@pytest.mark.parametrize(
    "value",
    [
        "Alice Chen",
        "yes",
        "No",
        "null",
        "123",
        "1e5",
        "2024-03-04",
        "a: b",
        "#tag",
        "- x",
        "x #y",
        "",
        " pad ",
        "line\nbreak",
        'q"uote',
        "back\\slash",
        "日本語",
        "\u2028sep",
        "\x07bell",
        "[[Link]]",
        "{{date}}",
        "@at",
        "a'b",
    ],
)
def test_yaml_scalar_round_trips_through_yaml(value: str) -> None:
    assert yaml.safe_load(f"k: {yaml_scalar(value)}\n") == {"k": value}


def test_render_frontmatter_shapes() -> None:
    text = render_frontmatter(
        [
            ("a", None),
            ("b", True),
            ("c", 3),
            ("d", 1.5),
            ("e", []),
            ("f", ["x", "y z"]),
            ("g", {}),
            ("h", {"k": "v"}),
            ("i", Quoted("abc")),
        ]
    )
    assert text.startswith("---\n") and text.endswith("---\n")
    assert yaml.safe_load(text.strip("-\n")) == {
        "a": None,
        "b": True,
        "c": 3,
        "d": 1.5,
        "e": [],
        "f": ["x", "y z"],
        "g": {},
        "h": {"k": "v"},
        "i": "abc",
    }
    assert 'i: "abc"' in text


# --- docs/vault-format.md stays true --------------------------------------------------------

DOC = Path(__file__).resolve().parents[1] / "docs" / "vault-format.md"


def _doc_example(kind: str) -> str:
    match = re.search(
        rf"```markdown\n(---\nvaultmind: source\nkind: {kind}\n.*?)```", DOC.read_text("utf-8"), re.S
    )
    assert match is not None, f"no {kind} example in {DOC.name}"
    return match.group(1)


def _without_hash(text: str) -> str:
    return re.sub(r'vaultmind_body_sha256: "[0-9a-f]{64}"', 'vaultmind_body_sha256: "<sha256 hex>"', text)


def _doc_without_hash(text: str) -> str:
    return re.sub(r'vaultmind_body_sha256: "<[^">]*>"', 'vaultmind_body_sha256: "<sha256 hex>"', text)


def test_docs_chat_example_is_what_the_renderer_writes() -> None:
    assert _without_hash(render_source_note(CHAT, MESSAGES)) == _doc_without_hash(_doc_example("chat"))


def test_docs_email_example_is_what_the_renderer_writes() -> None:
    meta = SourceMeta(
        "email",
        "email:alice",
        "alice/q3-budget",
        "Q3 budget",
        participants=("alice@example.com", "Bob Stone <bob@example.com>"),
    )
    messages = [
        Message(
            "CAF1@mail.example.com",
            "alice@example.com",
            "2024-03-11T09:00:00Z",
            "Hi Bob,\n\nthe numbers are attached.",
            "mid:CAF1@mail.example.com",
            subject="Q3 budget",
        ),
        Message(
            "CAF2@mail.example.com",
            "Bob Stone <bob@example.com>",
            "2024-03-11T09:30:00Z",
            "Thanks!",
            "mid:CAF2@mail.example.com",
            subject="Re: Q3 budget",
        ),
    ]
    assert _without_hash(render_source_note(meta, messages)) == _doc_without_hash(_doc_example("email"))
