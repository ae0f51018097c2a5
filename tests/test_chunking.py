from __future__ import annotations

import hashlib
import random
import re
import time

import pytest

from vaultmind.markdown.chunking import MIN_CHUNK_TOKENS, section_leaf_id, section_leaves
from vaultmind.markdown.note import parse_note
from vaultmind.markdown.tokens import count_tokens
from vaultmind.model import Leaf

# --- helpers --------------------------------------------------------------------------------


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def covers(body: str, leaves: list[Leaf]) -> bool:
    """Every non-space character of the body appears, in order, in the leaves' texts."""
    remaining = iter(squash("".join(leaf.text for leaf in leaves)))
    return all(ch in remaining for ch in squash(body))


WORDS = [
    "memory",
    "vault",
    "note",
    "leaf",
    "chunk",
    "budget",
    "summary",
    "entity",
    "记忆",
    "日本語",
    "Ünïcode",
    "café",
]


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + rng.choice([".", "!", "?", "。"])


def paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(sentence(rng, rng.randint(4, 18)) for _ in range(sentences))


def random_doc(seed: int) -> str:
    rng = random.Random(seed)
    parts = []
    if rng.random() < 0.5:
        parts.append(paragraph(rng, 2))
    for _ in range(rng.randint(1, 8)):
        parts.append("#" * rng.randint(1, 4) + " " + sentence(rng, 3)[:-1])
        for _ in range(rng.randint(0, 4)):
            r = rng.random()
            if r < 0.5:
                parts.append(paragraph(rng, rng.randint(1, 12)))
            elif r < 0.65:
                parts.append("\n".join(f"- {sentence(rng, 6)}" for _ in range(rng.randint(1, 30))))
            elif r < 0.8:
                lines = "\n".join(
                    f"    x{i} = compute({i}, '{rng.choice(WORDS)}')" for i in range(rng.randint(1, 80))
                )
                parts.append(f"```python\n{lines}\n```")
            elif r < 0.9:
                parts.append(
                    "| a | b |\n|---|---|\n" + "\n".join(f"| {i} | {rng.choice(WORDS)} |" for i in range(20))
                )
            else:
                parts.append(f"{sentence(rng, 5)} ^blk-{rng.randint(0, 999)}")
    return "\n\n".join(parts) + "\n"


# --- section leaves -------------------------------------------------------------------------


def test_empty_body_has_no_leaves() -> None:
    assert section_leaves("", note_key="n.md") == []
    assert section_leaves("  \n\n\t\n", note_key="n.md") == []


def test_small_note_is_one_leaf() -> None:
    body = "Some text before any heading.\n\n# Title\n\nHello.\n"
    leaves = section_leaves(body, note_key="n.md")
    assert [(leaf.text, leaf.anchor, leaf.heading_path) for leaf in leaves] == [
        ("Some text before any heading.", "", ()),
        ("# Title\n\nHello.", "#Title", ("Title",)),
    ]


def test_leaf_fields_and_ids() -> None:
    leaves = section_leaves("# A\n\nalpha\n", note_key="notes/a.md")
    (leaf,) = leaves
    assert leaf.kind == "section" and leaf.seq == 0
    assert leaf.content_hash == hashlib.sha256(leaf.text.encode()).hexdigest()
    assert leaf.id == hashlib.sha256(b"section\0notes/a.md\x000\0" + leaf.text.encode()).hexdigest()[:32]
    assert leaf.id == section_leaf_id("notes/a.md", 0, leaf.text)
    assert leaf.token_count == count_tokens(leaf.text)
    assert leaf.message_id is None and leaf.author is None


def test_ids_are_deterministic_and_keyed_by_note() -> None:
    body = random_doc(3)
    a = section_leaves(body, note_key="x.md", budget=120)
    b = section_leaves(body, note_key="x.md", budget=120)
    c = section_leaves(body, note_key="y.md", budget=120)
    assert [leaf.id for leaf in a] == [leaf.id for leaf in b]
    assert not {leaf.id for leaf in a} & {leaf.id for leaf in c}
    assert len({leaf.id for leaf in a}) == len(a)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("budget", [64, 150, 400])
def test_random_documents_cover_all_text_within_budget(seed: int, budget: int) -> None:
    body = random_doc(seed)
    leaves = section_leaves(body, note_key="doc.md", budget=budget)
    assert leaves
    assert covers(body, leaves)
    assert [leaf.seq for leaf in leaves] == list(range(len(leaves)))
    for leaf in leaves:
        assert leaf.token_count <= budget, leaf.text
        assert leaf.text == leaf.text.strip("\n") and leaf.text.strip()
    # every non-blank body line appears whole in some leaf, unless it had to be split
    joined = "\n".join(leaf.text for leaf in leaves)
    for line in body.split("\n"):
        if line.strip() and count_tokens(line) <= budget // 3:
            assert line.strip() in joined


def test_top_level_sections_are_never_packed_together() -> None:
    body = "# One\n\nshort\n\n# Two\n\nshort\n"
    assert [leaf.heading_path for leaf in section_leaves(body, note_key="n")] == [("One",), ("Two",)]


def test_small_sibling_sections_are_packed_under_their_parent() -> None:
    rng = random.Random(1)
    body = (
        "# Doc\n\n" + paragraph(rng, 6) + "\n\n## Small A\n\nalpha\n\n## Small B\n\nbeta\n\n"
        "## Large\n\n" + paragraph(rng, 12) + "\n"
    )
    leaves = section_leaves(body, note_key="n", budget=150)
    texts = [leaf.text for leaf in leaves]
    assert any("## Small A" in t and "## Small B" in t for t in texts)
    assert all(not ("## Small B" in t and "## Large" in t) for t in texts)
    assert covers(body, leaves)


def test_continuation_chunks_repeat_their_heading() -> None:
    rng = random.Random(2)
    body = "# Top\n\n## Long section: part\n\n" + "\n\n".join(paragraph(rng, 3) for _ in range(8)) + "\n"
    leaves = section_leaves(body, note_key="n", budget=100)
    assert len(leaves) > 2
    for leaf in leaves:
        assert leaf.heading_path == ("Top", "Long section: part")
        assert leaf.anchor == "#Long section part"
    assert leaves[0].text.startswith("# Top\n\n## Long section: part\n\n")
    for leaf in leaves[1:]:
        assert leaf.text.startswith("## Long section: part\n\n")


def test_block_id_anchor_when_a_chunk_starts_with_it() -> None:
    rng = random.Random(4)
    body = (
        "## Notes\n\n"
        + paragraph(rng, 6)
        + "\n\n"
        + paragraph(rng, 6)
        + " ^key-point\n\n- a\n- b\n\n^list-1\n"
    )
    leaves = section_leaves(body, note_key="n", budget=110)
    anchors = [leaf.anchor for leaf in leaves]
    assert anchors[0] == "#Notes"
    assert "^key-point" in anchors
    assert covers(body, leaves)
    assert any(leaf.text.endswith("- a\n- b\n\n^list-1") for leaf in leaves)


def test_code_fence_is_not_split_when_it_fits() -> None:
    code = "\n".join(f"line_{i} = {i}" for i in range(20))
    body = "## Code\n\nIntro paragraph.\n\n```python\n" + code + "\n```\n\nOutro.\n"
    leaves = section_leaves(body, note_key="n", budget=200)
    fences = [leaf for leaf in leaves if "```python" in leaf.text]
    assert len(fences) == 1
    assert code in fences[0].text and fences[0].text.count("```") == 2


def test_oversized_code_fence_is_split_and_rewrapped() -> None:
    code = "\n".join(f"value_{i} = compute({i})" for i in range(200))
    body = "## Big code\n\n~~~~python\n" + code + "\n~~~~\n"
    leaves = section_leaves(body, note_key="n", budget=120)
    assert len(leaves) > 3
    for leaf in leaves:
        assert leaf.token_count <= 120
        lines = leaf.text.split("\n")
        assert lines[0] == "## Big code" and lines[2] == "~~~~python" and lines[-1] == "~~~~"
    inner = [line for leaf in leaves for line in leaf.text.split("\n")[3:-1]]
    assert inner == code.split("\n")


def test_oversized_paragraph_splits_at_sentences() -> None:
    sentences = [f"Sentence number {i} talks about the vault and memory." for i in range(40)]
    body = " ".join(sentences) + "\n"
    leaves = section_leaves(body, note_key="n", budget=100)
    assert len(leaves) > 1
    for leaf in leaves:
        assert leaf.text.startswith("Sentence number") and leaf.text.endswith("memory.")
    assert " ".join(leaf.text for leaf in leaves) == body.strip()


def test_cjk_paragraph_splits_at_cjk_sentence_ends() -> None:
    body = "".join(f"这是第{i}句关于记忆的话。" for i in range(60)) + "\n"
    leaves = section_leaves(body, note_key="n", budget=64)
    assert len(leaves) > 3
    assert all(leaf.text.endswith("。") and leaf.token_count <= 64 for leaf in leaves)
    assert "".join(leaf.text for leaf in leaves) == body.strip()


def test_unbreakable_text_is_hard_split_without_loss() -> None:
    blob = "".join(random.Random(5).choice("abcdef0123456789+/=") for _ in range(5000))
    leaves = section_leaves(blob, note_key="n", budget=100)
    assert len(leaves) > 10
    assert "".join(leaf.text for leaf in leaves) == blob
    assert all(leaf.token_count <= 100 for leaf in leaves)


def test_paragraph_without_sentence_ends_splits_at_whitespace() -> None:
    words = [f"word{i}" for i in range(3000)]
    body = " ".join(words) + "\n"
    start = time.thread_time()  # this thread's work, not the time other processes of a loaded host took
    leaves = section_leaves(body, note_key="n", budget=100)
    assert time.thread_time() - start < 1.0
    assert len(leaves) > 10
    assert all(leaf.token_count <= 100 for leaf in leaves)
    assert [w for leaf in leaves for w in leaf.text.split(" ")] == words


def test_long_list_splits_by_item() -> None:
    items = [f"- item {i} with a few words" for i in range(100)]
    body = "## List\n\n" + "\n".join(items) + "\n"
    leaves = section_leaves(body, note_key="n", budget=80)
    seen = [line for leaf in leaves for line in leaf.text.split("\n") if line.startswith("- ")]
    assert seen == items


def test_deep_nesting_keeps_heading_paths() -> None:
    rng = random.Random(6)
    body = (
        "# A\n\n## B\n\n### C\n\n"
        + paragraph(rng, 20)
        + "\n\n### D\n\ntiny\n\n## E\n\n"
        + paragraph(rng, 20)
        + "\n"
    )
    leaves = section_leaves(body, note_key="n", budget=100)
    paths = {leaf.heading_path for leaf in leaves}
    assert ("A", "B", "C") in paths and ("A", "E") in paths
    assert covers(body, leaves)


def test_paragraph_underlined_by_dashes_is_a_heading_but_never_repeated_whole() -> None:
    rng = random.Random(7)
    long_para = paragraph(rng, 12)  # a paragraph followed by `---`: a (huge) setext H2 in Obsidian
    body = "# Doc\n\n" + long_para + "\n---\n\n" + "\n\n".join(paragraph(rng, 4) for _ in range(6)) + "\n"
    leaves = section_leaves(body, note_key="n", budget=100)
    assert covers(body.replace("---", ""), leaves)
    assert all(leaf.token_count <= 100 for leaf in leaves)
    continuation = [
        leaf for leaf in leaves if leaf.text.startswith("## ") and "…" in leaf.text.split("\n")[0]
    ]
    assert continuation, "continuation chunks carry a shortened heading"
    assert all(count_tokens(leaf.text.split("\n")[0]) <= 25 for leaf in continuation)


def test_thematic_breaks_are_not_part_of_headings() -> None:
    leaves = section_leaves("***\nText\n---\n", note_key="n")
    assert [(leaf.text, leaf.heading_path) for leaf in leaves] == [("***", ()), ("Text\n---", ("Text",))]


def test_headings_inside_code_do_not_split_sections() -> None:
    body = "## Real\n\n```md\n# fake heading\n```\n"
    (leaf,) = section_leaves(body, note_key="n")
    assert leaf.heading_path == ("Real",)


# --- parse_note -----------------------------------------------------------------------------


def test_parse_note_user_note() -> None:
    text = "---\naliases: [Alias One, Alias One, '  Two ']\ntags: [project]\n---\n# Heading One\n\nBody with #idea and [[Link]].\n"
    note = parse_note("Projects/My Note.md", text)
    assert note.kind == "user"
    assert note.title == "Heading One"
    assert note.aliases == ("Alias One", "Two")
    assert note.tags == ("project", "idea")
    assert [link.target for link in note.links] == ["Link"]
    assert note.frontmatter_error is None
    assert note.body.startswith("# Heading One")
    assert [leaf.text for leaf in note.leaves] == ["# Heading One\n\nBody with #idea and [[Link]]."]
    assert note.leaves[0].id == section_leaf_id("Projects/My Note.md", 0, note.leaves[0].text)


def test_parse_note_title_fallbacks() -> None:
    assert parse_note("a/b/Stem Name.md", "no heading").title == "Stem Name"
    assert parse_note("x.md", "---\ntitle: From FM\n---\n# H1\n").title == "From FM"
    assert parse_note("x.md", "## Only H2\n").title == "x"
    assert parse_note("x.md", "---\nalias: Single\n---\n").aliases == ("Single",)


def test_parse_note_empty_body_has_no_leaves() -> None:
    note = parse_note("entities/person/alice.md", "---\nvaultmind: entity\nid: person:alice\n---\n")
    assert note.kind == "entity"
    assert note.leaves == ()
    assert note.frontmatter["id"] == "person:alice"


def test_parse_note_document_source_uses_source_id_key() -> None:
    text = (
        '---\nvaultmind: source\nkind: document\nsource_id: "doc:report-q3"\nversion: 2\n---\n'
        "# Report\n\nQ3 numbers.\n"
    )
    note = parse_note("sources/document/reports/q3.md", text)
    assert note.kind == "source"
    (leaf,) = note.leaves
    assert leaf.kind == "section"
    assert leaf.id == section_leaf_id("doc:report-q3", 0, leaf.text)
    assert leaf.source_ref is None
    with_ref = text.replace("version: 2\n", 'version: 2\nsource_ref: "file:///docs/q3.pdf"\n')
    assert (
        parse_note("sources/document/reports/q3.md", with_ref).leaves[0].source_ref == "file:///docs/q3.pdf"
    )
    assert parse_note("notes/q3.md", with_ref).leaves[0].source_ref is None  # user notes carry none


def test_parse_note_bad_front_matter_still_chunks() -> None:
    note = parse_note("t.md", "---\ncreated: {{date}}\n---\n# T\n\ntext\n")
    assert note.frontmatter_error is not None
    assert note.frontmatter == {"created": "{{date}}"}
    assert [leaf.text for leaf in note.leaves] == ["# T\n\ntext"]


def test_parse_note_chunk_tokens_is_honoured() -> None:
    body = "\n\n".join(paragraph(random.Random(i), 4) for i in range(10))
    small = parse_note("n.md", body, chunk_tokens=70).leaves
    large = parse_note("n.md", body, chunk_tokens=2000).leaves
    assert len(large) == 1 and len(small) > 3
    assert all(leaf.token_count <= 70 for leaf in small)
    tiny = parse_note("n.md", body, chunk_tokens=5).leaves  # raised to MIN_CHUNK_TOKENS
    assert all(leaf.token_count <= MIN_CHUNK_TOKENS for leaf in tiny)


def test_parse_note_crlf_equals_lf() -> None:
    text = "---\ntitle: t\n---\n# A\n\nline one\nline two\n"
    assert parse_note("n.md", text) == parse_note("n.md", text.replace("\n", "\r\n"))


def test_every_leaf_counts_what_count_tokens_gives_its_text() -> None:
    """A leaf's count is derived from the body's running count (its span's difference, its
    opening alone or after its heading prefix), not counted again: it is exactly the count of
    its text, whether it is a whole section, a packed run of blocks, a sentence cut mid-line
    under a repeated heading, a code fence's part or a body's opening."""
    rng = random.Random(48)
    pieces = [
        "# Heading\n", "## A sub heading\n", "Setext\n===\n", "Word word. ", "x" * 40, "\n\n", "\n",
        "  indented line\n", "- item\n", "| a | b |\n", "```py\ncode()\n```\n", "```\nunclosed\n",
        "> quote\n", "1234 ", "é ", "日本 ", "🙂", "camelCase ", "ALL CAPS ", "ДОМ дом ", "Ωμέγα ",
        "a.b/c ", "\t", "^block-id\n", "Sentence one! Two? ", "\r\n",
    ]
    for _ in range(200):
        body = "".join(rng.choice(pieces) * rng.randint(1, 3) for _ in range(rng.randint(1, 200)))
        for budget in (64, 100):
            for leaf in section_leaves(body, note_key="n.md", budget=budget):
                assert leaf.token_count == count_tokens(leaf.text), leaf.text
