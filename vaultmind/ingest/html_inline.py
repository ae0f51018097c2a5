"""The inline pieces of an HTML document's Markdown (`ingest/html.py`): a link's address, an
inline `<code>` as a code span, and a table of text and inline markup as a Markdown (GFM) table."""

from __future__ import annotations

import re

INVISIBLE_RE = re.compile("[\u200b\u200c\u200d\u200e\u200f\u2060\ufeff\u00ad]")
# inline markup: it neither ends an inline `<code>` nor keeps a table from being a Markdown table
INLINE_TAGS = frozenset(
    {"br", "wbr", "a", "b", "i", "strong", "em", "span", "code", "img", "small", "sup", "sub", "u", "s",
     "strike", "del", "ins", "mark", "abbr", "font", "time", "nobr", "kbd", "var", "samp", "cite", "q", "tt"}
)  # fmt: skip
# what a table written as a Markdown table may hold: its rows and cells, text and inline markup
TABLE_TAGS = INLINE_TAGS | {"tr", "td", "th", "thead", "tbody", "tfoot", "caption", "colgroup", "col"}
Event = tuple[str, str, list[tuple[str, str | None]]]  # ("start" | "end" | "data", tag or text, attributes)


def link_addition(href: str, text: str, same_line: bool) -> str:
    """What a link adds after its text: its address (`text (url)`), the address alone when it
    has no text, or nothing when the text says the address (or the link leads nowhere)."""
    if not href or href.startswith(("#", "javascript:", "data:", "cid:")):
        return ""
    shown = href[7:].split("?", 1)[0] if href.lower().startswith("mailto:") else href
    bare = re.sub(r"^[a-z]+://", "", shown.rstrip("/"), flags=re.IGNORECASE)
    if same_line and not text:
        return shown
    if text.rstrip("/") in (shown.rstrip("/"), bare) or not shown:
        return ""
    return f" ({shown})"


def table_rows(events: list[Event]) -> tuple[str, list[list[str]]] | None:
    """(caption, rows of cells) of a table's events, each cell's text on one line, `|` escaped;
    None when a cell holds more than text and inline markup (a table laying out a page).

    A cell ends at its `</td>`, or where HTML lets it end unwritten (the next cell or row, the
    row's or the table's end): else its text was lost. A cell of `colspan` n is followed by
    n - 1 empty ones, so that the cells after it stay under their own column's header."""
    if any(kind == "start" and tag not in TABLE_TAGS for kind, tag, _ in events):
        return None
    rows: list[list[str]] = []
    caption: list[str] = []
    cell: list[str] | None = None
    span = 1  # the open cell's colspan
    links: list[tuple[str, int]] = []  # (href, where its text starts in the cell)
    code: int | None = None  # where an open `<code>`'s text starts in the cell
    in_caption = False

    def end_cell() -> None:
        nonlocal cell, code
        if cell is not None:
            rows[-1] += [" ".join("".join(cell).split()).replace("|", "\\|"), *[""] * (span - 1)]
        cell, code = None, None
        links.clear()

    for kind, tag, attrs in events:
        held = "".join(cell) if cell is not None else ""
        if kind == "data":
            text = INVISIBLE_RE.sub("", tag.replace("\xa0", " "))
            if cell is not None:
                cell.append(text)
            elif in_caption:
                caption.append(text)
        elif kind == "start" and tag == "tr":
            end_cell()
            rows.append([])
        elif kind == "start" and tag in ("td", "th"):
            end_cell()
            if not rows:
                rows.append([])
            cell, span = [], _colspan(attrs)
        elif kind == "end" and tag in ("td", "th", "tr"):
            end_cell()
        elif kind == "start" and tag == "caption":
            in_caption = True
        elif kind == "end" and tag == "caption":
            in_caption = False
        elif cell is None:
            continue
        elif kind == "start" and tag in ("br", "wbr"):
            cell.append(" " if tag == "br" else "")
        elif kind == "start" and tag == "img":
            alt = " ".join((dict(attrs).get("alt") or "").split())
            cell.append(f" {alt} " if alt else "")
        elif kind == "start" and tag == "a":
            links.append(((dict(attrs).get("href") or "").strip(), len(held)))
        elif kind == "end" and tag == "a" and links:
            href, start = links.pop()
            cell.append(link_addition(href, held[start:].strip(), True))
        elif kind == "start" and tag == "code" and code is None:
            code = len(held)
        elif kind == "end" and tag == "code" and code is not None:
            cell[:] = [held[:code], code_span(held[code:])]
            code = None
    end_cell()
    filled = [row for row in rows if any(row)]
    if not filled:
        return None
    return " ".join("".join(caption).split()), filled


MAX_COLSPAN = 1000  # as HTML caps it: a page's `colspan="100000"` widens no table past it


def _colspan(attrs: list[tuple[str, str | None]]) -> int:
    """How many columns a cell spans (`colspan`; 1 when absent or not a number)."""
    given = re.match(r"\s*([0-9]+)", dict(attrs).get("colspan") or "")  # "2px" is 2, as a browser reads it
    return min(max(int(given[1]), 1), MAX_COLSPAN) if given else 1


def code_span(text: str) -> str:
    """`text` as a Markdown code span: fenced by one more backtick than its longest run, with a
    space inside the fence when it starts or ends with one; nothing when it is blank."""
    text = " ".join(text.split())
    if not text:
        return ""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
