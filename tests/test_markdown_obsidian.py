from __future__ import annotations

from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

from vaultmind.markdown.anchors import heading_anchor
from vaultmind.markdown.blocks import FENCE, ICODE, MATH, scan_blocks
from vaultmind.markdown.obsidian import frontmatter_tags, parse_obsidian, parse_wikilink, raw_link_targets
from vaultmind.model import Link


def links(body: str) -> list[Link]:
    return list(parse_obsidian(body).links)


def targets(body: str) -> list[str]:
    return [link.target for link in parse_obsidian(body).links]


def tags(body: str) -> list[str]:
    return list(parse_obsidian(body).tags)


# --- links ----------------------------------------------------------------------------------


def test_wikilink_forms() -> None:
    body = "See [[Note A]], [[Folder/Note B#Section|the B]], [[Note C#^abc-123]] and [[#Local]].\n"
    assert links(body) == [
        Link("Note A", "wikilink", line=1),
        Link("Folder/Note B", "wikilink", heading="Section", alias="the B", line=1),
        Link("Note C", "wikilink", block="abc-123", line=1),
        Link("", "wikilink", heading="Local", line=1),
    ]


def test_nested_heading_link_keeps_last_heading() -> None:
    assert parse_wikilink("Note#Part 1#Detail") == Link("Note", "wikilink", heading="Detail")


def test_empty_wikilink_is_ignored() -> None:
    assert links("[[]] [[ ]] [[#]]") == []


def test_embeds_of_notes_images_and_pdfs() -> None:
    body = "![[Diagram.png|300]]\n\n![[Paper.pdf#page=3]]\n![[Other note#Intro]]\n"
    assert links(body) == [
        Link("Diagram.png", "embed", alias="300", line=1),
        Link("Paper.pdf", "embed", heading="page=3", line=3),
        Link("Other note", "embed", heading="Intro", line=4),
    ]


def test_markdown_links_to_local_notes_only() -> None:
    body = (
        "[a](Other%20Note.md) [b](<Some Folder/With Space.md#Head>) [c](https://example.com/x.md) "
        "[d](mailto:a@b.c) [e](obsidian://open?vault=v) [f](//cdn.example.com/x) [g](#Here) "
        '![img](pics/cat.png "title") [h](file:///tmp/x.md)\n'
    )
    assert links(body) == [
        Link("Other Note.md", "markdown", line=1),
        Link("Some Folder/With Space.md", "markdown", heading="Head", line=1),
        Link("", "markdown", heading="Here", line=1),
        Link("pics/cat.png", "embed", line=1),
    ]


def test_escaped_pipe_in_table_wikilink() -> None:
    assert links("| col | [[Target\\|shown]] |\n") == [Link("Target", "wikilink", alias="shown", line=1)]


def test_link_line_numbers_are_1_based_in_body() -> None:
    body = "first\n\nthird [[X]]\n```\n[[no]]\n```\nseventh [[Y]]\n"
    assert [(link.target, link.line) for link in links(body)] == [("X", 3), ("Y", 7)]


def test_links_in_order_of_appearance_on_a_line() -> None:
    assert targets("[m](m.md) then [[w]] then ![[e]]") == ["m.md", "w", "e"]


# --- masking: code, comments, math ------------------------------------------------------------


HIDDEN = """\
Inline `[[code link]] #codetag ^codeid` here, and ``double `tick` [[x]]`` too.
Comment %% [[hidden]] #hid %% after, math $[[m]] #math$ and $$[[mm]]$$ end.
%% a comment
over [[several]] lines #hid2
%% visible [[V1]]
<!-- [[html comment]] #hid3 -->
```python
[[fenced]] #fenced
  ^fencedid
```
~~~
[[tilde]]
~~~

    [[indented code]] #icode

$$
[[math block]] #mb
$$
> ```
> [[quoted fence]]
> ```
- item
    ```
    [[list fence]]
    ```
Last [[V2]] #visible
"""


def test_nothing_inside_code_comments_or_math_counts() -> None:
    syntax = parse_obsidian(HIDDEN)
    assert [link.target for link in syntax.links] == ["V1", "V2"]
    assert syntax.tags == ("visible",)
    assert list(scan_blocks(HIDDEN).block_ids.values()) == []


def test_money_is_not_math() -> None:
    assert targets("It costs $5 and [[Budget]] says $10 more.") == ["Budget"]
    assert tags("Paid $3 for #coffee and $4") == ["coffee"]


def test_unmatched_backtick_is_literal() -> None:
    assert targets("a ` stray backtick [[Real]]") == ["Real"]


def test_escaped_characters_do_not_open_code() -> None:
    assert targets("\\`not code [[Link]] \\`") == ["Link"]


def test_unclosed_comment_hides_the_rest() -> None:
    assert targets("[[Before]]\n%% open forever\n[[After]]\n") == ["Before"]


# --- tags -----------------------------------------------------------------------------------


def test_tag_rules() -> None:
    body = (
        "#start #a/b-c_d #Mixed_Case #123 #y1984 #2024-03 #日本語 #émigré (#paren) x#glued\n"
        "url https://example.com/page#anchor and [[Note#Heading]] and [t](x.md#frag)\n"
        "#trailing/ \\#escaped #dot. #comma,\n"
    )
    assert tags(body) == [
        "start",
        "a/b-c_d",
        "mixed_case",
        "y1984",
        "日本語",
        "émigré",
        "trailing",
        "dot",
        "comma",
    ]


def test_heading_marks_are_not_tags_but_tags_in_headings_are() -> None:
    body = "# Heading\n## Another #real\n#notaheading\n"
    assert tags(body) == ["real", "notaheading"]


def test_tags_are_deduplicated_case_insensitively() -> None:
    assert tags("#Tag #tag #TAG") == ["tag"]


def test_frontmatter_tags_string_or_list() -> None:
    assert frontmatter_tags({"tags": ["#One", "two/sub", 42, "bad tag", None]}) == ["one", "two/sub"]
    assert frontmatter_tags({"tags": "a, #b c"}) == ["a", "b", "c"]
    assert frontmatter_tags({"tag": "legacy"}) == ["legacy"]
    assert frontmatter_tags({"tags": None}) == []


def test_frontmatter_tags_come_first_and_merge() -> None:
    syntax = parse_obsidian("body #b #c\n", {"tags": ["a", "b"]})
    assert syntax.tags == ("a", "b", "c")


def test_frontmatter_wikilinks_are_links_on_line_zero() -> None:
    syntax = parse_obsidian(
        "[[Body]]\n", {"up": "[[Home]]", "children": ["[[s/n#^m-1]]", "x"], "n": {"k": "[[Deep|d]]"}}
    )
    assert list(syntax.links) == [
        Link("Home", "wikilink", line=0),
        Link("s/n", "wikilink", block="m-1", line=0),
        Link("Deep", "wikilink", alias="d", line=0),
        Link("Body", "wikilink", line=1),
    ]


# --- block ids ------------------------------------------------------------------------------


def test_block_ids_end_of_line_and_own_line() -> None:
    body = "A paragraph ^para-1\n\n- item\n- item two ^item2\n\n> quote\n\n^quote-id\n\nx^notanid and [^1] footnote\n"
    assert list(scan_blocks(body).block_ids.values()) == ["para-1", "item2", "quote-id"]


def test_block_id_with_trailing_whitespace() -> None:
    assert list(scan_blocks("text ^abc   \n").block_ids.values()) == ["abc"]


# --- headings ------------------------------------------------------------------------


def test_headings_atx_and_setext() -> None:
    body = "# One #\n\nPara\n\n## Two: with [[link]]\nSetext title\n===\n\nSub\n---\n\n#not\n####### seven\n"
    syntax = parse_obsidian(body)
    assert [(h.level, h.text, h.line, h.end_line) for h in syntax.headings] == [
        (1, "One", 1, 1),
        (2, "Two: with [[link]]", 5, 5),
        (1, "Setext title", 6, 7),
        (2, "Sub", 9, 10),
    ]


def test_headings_inside_code_and_lists_do_not_count() -> None:
    body = "```\n# not\n```\n- # item heading\n> # quoted\n    # indented code\n# yes\n"
    assert [h.text for h in parse_obsidian(body).headings] == ["yes"]


def test_heading_anchor_matches_obsidian_link_text() -> None:
    assert heading_anchor("Two: with [[link]]") == "Two with link"
    assert heading_anchor("A | B # C ^ D") == "A B C D"
    assert heading_anchor("日本語の見出し") == "日本語の見出し"


# --- cross-check with markdown-it and speed -------------------------------------------------


ORACLE_DOCS = [
    "Title\n=====\n\nPara\n---\n\n- item\n---\n",
    "- a\n\n    continuation\n\n```\n# not heading\n```\n\n    code\n\n# H\n",
    "> ```\n> # x\n> ```\n# real\n",
    "~~~py\n```\n# x\n~~~\n## y\n",
    "# a\n```\n# b\n",
    "````\n```\n# in\n````\n# out\n",
    "   # three\n    # four\n",
    "## Foo ##\n# #tag heading\n#nospace\n",
    "para\n    still para\n# h\n",
    "- a\n\t- b\n\n\tcode?\n",
    "para\n\n---\n\n***\n# h\n",
    "``` a`b\n# h\n",
    "#\n# \n##  x  \n",
    "# 日本語\n\n中文段落。\n\n## Ünïcode\n",
    # a `$$` that never closes is text, not a math block hiding the rest of the note
    "# Budget\n\nWe spent $$$ on it.\n\n$$$ a lot\n\n# Travel\n\nFlights ^rome\n",
    "$$\nx\n\n# H\n",
    "> $$\n> math\n\n# After\n",
    "$$\nx\n\ny\n$$\n# H\n\n$$\n# in math\n$$\n",
    "- $$\n  x\n  $$\n# H\n",
    # indented code in a list item: four columns past the item's text, after a blank line
    "- item\n\n      code #codetag\n# H\n",
    "1. item\n\n       code\n\n   text\n\n10)  item\n\n         code\n        not\n",
    "- a\n  - b\n\n        code\n      para\n- c\n      lazy\n",
    # an unclosed `<!--` within a line is text; one opening a line starts an HTML block
    "# Notes\n\nWrite a <!-- to open a comment.\n\n# Later\n",
    "<!-- open\n# hidden\n-->\n# shown\n",
]


@pytest.mark.parametrize("body", ORACLE_DOCS)
def test_headings_and_code_agree_with_markdown_it(body: str) -> None:
    tokens = MarkdownIt("commonmark").use(dollarmath_plugin).disable("inline").parse(body)
    lines = body.split("\n")
    expected_headings = []
    expected_code: set[int] = set()
    expected_math: set[int] = set()
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.level == 0 and tok.map:
            expected_headings.append((int(tok.tag[1]), tokens[i + 1].content.strip(), tok.map[0] + 1))
        if tok.type in ("fence", "code_block") and tok.map:
            expected_code.update(k for k in range(*tok.map) if k < len(lines) and lines[k].strip())
        if tok.type == "math_block" and tok.level == 0 and tok.map:
            expected_math.update(k for k in range(*tok.map) if lines[k].strip())
    scan = scan_blocks(body)
    assert [(h.level, h.text, h.line) for h in scan.headings] == expected_headings
    assert {i for i, k in enumerate(scan.kinds) if k in (FENCE, ICODE) and lines[i].strip()} == expected_code
    assert {i for i, k in enumerate(scan.kinds) if k == MATH and lines[i].strip()} == expected_math


def test_math_or_a_comment_left_open_hides_nothing_after_it() -> None:
    """A `$$` block opened in a callout ends with it; a `$$` that never closes and a `<!--`
    within a line are text: the tags, links and block ids after them count."""
    for body in (
        "> [!message] A\n> $$\n> math\n\n^m-1\n\nLater #tag [[Link]] ^bid\n",
        "Price:\n$$$ expensive\n\nLater #tag [[Link]] ^bid\n",
        "a <!-- b\n\nLater #tag [[Link]] ^bid\n",
    ):
        syntax = parse_obsidian(body)
        assert (syntax.tags, [link.target for link in syntax.links]) == (("tag",), ["Link"]), body
        assert "bid" in scan_blocks(body).block_ids.values(), body
    closed = parse_obsidian("> $$\n> #not [[Not]]\n> $$\n\n<!-- #hidden\n[[Hidden]] -->\nx #shown\n")
    assert (closed.tags, closed.links) == (("shown",), ())


@pytest.mark.parametrize(
    "line",
    [
        "See [the list](Folder/Note%20(1).md) and [b](<Folder/Note (2).md>).",
        "[esc](Note\\(3\\).md) [title](a.md \"t\") [paren title](b.md (t)) [x](c.md)(d)",
        "[angle](<e\\>f.md>) [nested](g(h(i)).md) [web](https://example.com/a_(b))",
    ],
)
def test_markdown_link_destinations_agree_with_markdown_it(line: str) -> None:
    """`[t](Folder/Note%20(1).md)` was no link: a destination may hold balanced parentheses,
    backslash escapes, or anything between `<` `>` (CommonMark); the quick read agrees. One
    level of parentheses is read (markdown-it reads any depth)."""
    tokens = MarkdownIt("commonmark").parseInline(line)[0].children or []
    hrefs = [unquote(tok.attrs["href"]) for tok in tokens if tok.type == "link_open"]
    expected = [h for h in hrefs if "://" not in h and h.count("(") <= 1]
    assert [link.target for link in parse_obsidian(line).links] == expected
    assert list(raw_link_targets(line)) == expected


def typical_note() -> str:
    parts = []
    for n in range(6):
        parts.append(f"## Section {n} #topic/{n}\n")
        parts.append(
            f"Paragraph with [[Note {n}]] and [a link](folder/n{n}.md), `inline code`, "
            f"a tag #tag{n} and some more words to make it realistic. Ünïcode 日本語. ^b{n}\n"
        )
        parts.append("- item one [[Item]]\n- item two #x\n")
        parts.append("```python\ndef f(x):\n    return x  # [[not]]\n```\n")
    body = "\n".join(parts)
    return (body * 3)[:3000]


def test_raw_link_targets_count_every_link_even_in_code() -> None:
    """The quick read of a note's links (is a note linked by this name?) counts those in front
    matter and code too: one too many keeps a note where it is, one too few would break a link."""
    text = (
        '---\nup: "[[Home]]"\n---\nSee [[Meeting Notes/Note C#Plan|c]], ![[pic.png]] and '
        "[d](Meeting%20Notes/Note%20D.md).\n\n```\n[[in code]]\n```\n[web](https://example.com) [[#Local]]\n"
    )
    assert list(raw_link_targets(text)) == ["Home", "Meeting Notes/Note C", "pic.png", "in code", "Meeting Notes/Note D.md"]
