"""HTML → readable text (Markdown-ish), with nothing but the standard library's `html.parser`.

Used for HTML-only email bodies (`ingest/mime.py`) and `.html` documents
(`ingest/document.py`); a link's address, a code span and a Markdown table are made in
`ingest/html_inline.py`. It keeps what a reader needs and drops the rest:

- paragraphs and headings are separated by a blank line; `<br>` and `<div>` break lines;
- headings become `#` … `######` lines; list items `- ` / `1. ` (nested lists indented);
- links read `text (url)` (just the url, or the address of a `mailto:`, when the text says
  the same); images keep their `alt` text;
- `<blockquote>` lines are prefixed with `> ` (so quoted replies look quoted);
- `<pre>` keeps its whitespace, fenced in a ``` block when `fences=True` (documents), and
  `<code>` outside it is then a backtick span (a fence of more backticks than it holds; a
  block tag, or the page's end, ends one left open);
- table cells on one row are joined with ` | `; with `fences=True` (documents) a table whose
  cells hold only text and inline markup is a Markdown (GFM) table: a separator row after the
  first, every row as wide as the widest, a `colspan` cell followed by empty ones, `|` in a
  cell written `\\|` and a `<br>` in it a space (a table that lays out paragraphs, lists or other tables stays lines); `<hr>` becomes `---`;
- `<script>`, `<style>`, `<head>` content, comments and conditional comments are dropped;
  non-breaking spaces become spaces and invisible marks (zero-width, direction marks) vanish.

Never raises on malformed markup: unclosed and stray tags are tolerated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from vaultmind.ingest.html_inline import (
    INLINE_TAGS,
    INVISIBLE_RE,
    Event,
    code_span,
    link_addition,
    table_rows,
)

MAX_HTML_CHARS = 4_000_000
"""Longer input is cut before conversion (a pathological HTML part must not stall an ingest)."""

_WS_RE = re.compile(r"[ \t\n\r\f\v]+")

_SKIP_TAGS = frozenset({"script", "style", "head", "title", "template", "noscript", "xml", "svg", "object"})
_PARAGRAPH_TAGS = frozenset(
    {"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "dl", "table", "pre", "blockquote",
     "figure", "address", "center", "form", "fieldset", "section", "article", "header",
     "footer", "aside", "nav", "main", "details", "hr"}
)  # fmt: skip
_LINE_TAGS = frozenset({"div", "li", "tr", "dt", "dd", "figcaption", "summary", "caption", "body", "html"})
_VOID_TAGS = frozenset({"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "wbr", "source"})


@dataclass(slots=True)
class _Line:
    depth: int  # blockquote depth
    text: str


@dataclass(slots=True)
class _Writer:
    """Accumulates output lines; a line starts with its quote/list prefix when text arrives."""

    lines: list[_Line] = field(default_factory=list)
    cur: list[str] = field(default_factory=list)
    cur_depth: int = 0
    cur_open: bool = False  # the current line has received text
    breaks: int = 0  # pending: 1 = end the line, 2 = end it and leave a blank line

    def request(self, n: int) -> None:
        if self.cur_open or self.lines:
            self.breaks = max(self.breaks, n)

    def hard_break(self, depth: int) -> None:
        """`<br>`: ends the current line, or adds an empty one (after a pending block break)."""
        if self.breaks and self.cur_open:
            self._finish()
            if self.breaks >= 2:
                self.lines.append(_Line(min(depth, self.cur_depth), ""))
        self.breaks = 0
        if self.cur_open:
            self._finish()
        else:
            self.lines.append(_Line(depth, ""))

    def _finish(self) -> None:
        self.lines.append(_Line(self.cur_depth, "".join(self.cur).rstrip()))
        self.cur = []
        self.cur_open = False

    def write(self, text: str, depth: int, prefix: str, *, raw: bool = False) -> None:
        if not text:
            return
        if self.breaks:
            if self.cur_open:
                self._finish()
            if self.breaks >= 2:
                self.lines.append(_Line(min(depth, self.cur_depth), ""))
            self.breaks = 0
        if not self.cur_open:
            if not raw:
                text = text.lstrip(" ")
                if not text:
                    return
            self.cur = [prefix]
            self.cur_depth = depth
            self.cur_open = True
        elif not raw and text.startswith(" ") and self.cur and self.cur[-1].endswith(" "):
            text = text.lstrip(" ")
        self.cur.append(text)

    def tail(self) -> str:
        """The text of the current line so far (for link bookkeeping)."""
        return "".join(self.cur) if self.cur_open else ""

    def result(self) -> list[_Line]:
        if self.cur_open:
            self._finish()
        return self.lines


@dataclass(slots=True)
class _Link:
    href: str
    line_count: int
    start: int  # offset in the current line when the link opened
    code_start: int | None = None  # offset in the open inline `<code>`'s text, when it opened in one


class _Converter(HTMLParser):
    def __init__(self, *, fences: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.fences = fences
        self.out = _Writer()
        self.skip = 0
        self.quote = 0
        self.pre = 0
        self.lists: list[list[int | str]] = []  # [kind, counter]
        self.pending_marker = ""
        self.cells = 0
        self.links: list[_Link] = []
        self.title: str | None = None
        self.in_title = False
        self.title_parts: list[str] = []
        self.first_h1: str | None = None
        self.h1_parts: list[str] | None = None
        self.code: list[str] | None = None  # the text of an inline `<code>` (documents), written at its end
        self.after_code: list[str] = []  # the addresses of links in that `<code>`, written after it
        self.table: list[Event] | None = None  # a table's events (documents), written at its end
        self.tables = 0  # tables open in the one recorded
        self.replaying = False  # a table's events played again as lines: none recorded

    # -- helpers --------------------------------------------------------------------------

    def _prefix(self) -> str:
        prefix = "> " * self.quote
        if self.lists:
            prefix += "  " * (len(self.lists) - 1)
        return prefix

    def _emit(self, text: str, *, raw: bool = False) -> None:
        if self.skip:
            return
        if self.code is not None and not raw:
            self.code.append(text)
            return
        if self.h1_parts is not None:
            self.h1_parts.append(text)
        if self.pending_marker and (raw or text.strip()):
            marker, self.pending_marker = self.pending_marker, ""
            self.out.write(marker, self.quote, self._prefix(), raw=True)
            text = text.lstrip(" ") if not raw else text
        self.out.write(text, self.quote, self._prefix(), raw=raw)

    # -- parser callbacks ------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        tag = tag.lower()
        if self._recorded("start", tag, attrs):
            return
        if tag == "title":
            self.in_title = True
        if tag in _SKIP_TAGS:
            if tag not in _VOID_TAGS:
                self.skip += 1
            return
        if self.skip:
            return
        attr = {k.lower(): (v or "") for k, v in attrs}
        if self.code is not None and tag in ("br", "wbr"):
            self.code.append(" " if tag == "br" else "")  # a span is one line
            return
        if self.code is not None and tag not in INLINE_TAGS:
            self._end_code()  # a block ends it, as a browser shows it: else it held the rest of the page
        if tag == "br":
            if self.pre:
                self._emit("\n", raw=True)
            else:
                self.out.hard_break(self.quote)
            return
        if tag == "hr":
            self.out.request(2)
            self._emit("---")
            self.out.request(2)
            return
        if tag == "img":
            alt = " ".join(attr.get("alt", "").split())
            if alt:
                self._emit(f" {alt} ")
            return
        nested_list = tag in ("ul", "ol") and bool(self.lists)
        if tag in _PARAGRAPH_TAGS and not nested_list:
            self.out.request(2)
        elif tag in _LINE_TAGS or nested_list:
            self.out.request(1)
        if tag == "blockquote":
            self.quote += 1
        elif tag in ("ul", "ol"):
            self.lists.append([tag, 0])
        elif tag == "li":
            if self.lists:
                entry = self.lists[-1]
                entry[1] = int(entry[1]) + 1
                self.pending_marker = f"{entry[1]}. " if entry[0] == "ol" else "- "
            else:
                self.pending_marker = "- "
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.pending_marker = "#" * int(tag[1]) + " "
            if tag == "h1" and self.first_h1 is None:
                self.h1_parts = []
        elif tag == "pre":
            self.pre += 1
            if self.fences and self.pre == 1:
                self._emit("```")
                self.out.request(1)
        elif tag == "tr":
            self.cells = 0
        elif tag in ("td", "th"):
            if self.cells and self.out.cur_open and self.out.tail().strip():
                self._emit(" | ", raw=True)
            self.cells += 1
        elif tag == "a":
            href = attr.get("href", "").strip()
            in_code = len("".join(self.code)) if self.code is not None else None
            self.links.append(_Link(href, len(self.out.lines), len(self.out.tail()), in_code))
        elif tag == "code" and self.fences and not self.pre and self.code is None:
            self.code = []

    def handle_endtag(self, tag: str) -> None:
        tag = tag.lower()
        if self._recorded("end", tag, []):
            return
        if tag == "title":
            self.in_title = False
        if tag in _SKIP_TAGS:
            if tag not in _VOID_TAGS and self.skip:
                self.skip -= 1
            return
        if self.skip:
            return
        if self.code is not None and (tag == "code" or tag not in INLINE_TAGS):
            self._end_code()
            if tag == "code":
                return
        if tag == "a" and self.links:
            self._close_link(self.links.pop())
            return
        nested_list = tag in ("ul", "ol") and len(self.lists) > 1
        if tag == "blockquote" and self.quote:
            self.out.request(2)
            self.quote -= 1
        elif tag in ("ul", "ol") and self.lists:
            self.lists.pop()
        elif tag == "pre" and self.pre:
            self.pre -= 1
            if self.fences and self.pre == 0:
                self.out.request(1)
                self._emit("```")
        elif tag == "h1" and self.h1_parts is not None:
            self.first_h1 = " ".join("".join(self.h1_parts).split()) or None
            self.h1_parts = None
        if tag in _PARAGRAPH_TAGS and not nested_list:
            self.out.request(2)
        elif tag in _LINE_TAGS or nested_list:
            self.out.request(1)
        if tag in ("li", "h1", "h2", "h3", "h4", "h5", "h6"):
            self.pending_marker = ""

    def handle_data(self, data: str) -> None:
        if self._recorded("data", data, []):
            return
        if self.in_title:
            self.title_parts.append(data)
        if self.skip:
            return
        data = INVISIBLE_RE.sub("", data.replace("\xa0", " "))
        if self.pre:
            for i, piece in enumerate(data.replace("\r\n", "\n").split("\n")):
                if i:
                    self.out.hard_break(self.quote)
                self._emit(piece, raw=True)
            return
        self._emit(_WS_RE.sub(" ", data))

    def _end_code(self) -> None:
        """Write the open inline `<code>` as a code span, and after it the addresses of the links
        in it; a link opened in it and still open reads the span as its text."""
        if self.code is None:
            return
        held, self.code = "".join(self.code), None
        after, self.after_code = "".join(self.after_code), []
        line, start = len(self.out.lines), len(self.out.tail())
        self.links = [
            _Link(link.href, line, start) if link.code_start is not None else link for link in self.links
        ]
        self._emit(code_span(held) + after)

    def _close_link(self, link: _Link) -> None:
        if link.code_start is not None and self.code is not None:  # its address goes after the span
            text = "".join(self.code)[link.code_start :].strip()
            added = link_addition(link.href, text, True)
            self.after_code.append(added if not added or added.startswith(" ") else f" {added}")
            return
        self._end_code()  # a link around a span: it ends there, the span is its text
        same_line = link.line_count == len(self.out.lines) and self.out.cur_open
        text = self.out.tail()[link.start :].strip() if same_line else ""
        added = link_addition(link.href, text, same_line)
        if added:
            self._emit(added, raw=added.startswith(" ") and not same_line)

    # -- tables (documents) ------------------------------------------------------------------

    def _recorded(self, kind: str, value: str, attrs: list[tuple[str, str | None]]) -> bool:
        """Whether the event goes to the table being recorded (ending it writes the table)."""
        if self.table is None:
            if kind != "start" or value != "table" or not self.fences or self.skip or self.pre or self.replaying:
                return False
            self.table, self.tables = [], 1
            return True
        if value == "table" and kind != "data":
            self.tables += 1 if kind == "start" else -1
            if self.tables == 0:
                events, self.table = self.table, None
                self._write_table(events)
                return True
        self.table.append((kind, value, attrs))
        return True

    def _write_table(self, events: list[Event]) -> None:
        """A recorded table as a Markdown table when its cells hold only text and inline markup,
        else as lines, the way any table is written (the events played again)."""
        rows = table_rows(events)
        if rows is None:
            self.replaying = True
            try:
                for kind, value, attrs in [("start", "table", []), *events, ("end", "table", [])]:
                    if kind == "start":
                        self.handle_starttag(value, attrs)
                    elif kind == "end":
                        self.handle_endtag(value)
                    else:
                        self.handle_data(value)
            finally:
                self.replaying = False
            return
        caption, cells = rows
        self.out.request(2)
        if caption:
            self._emit(caption)
            self.out.request(2)
        width = max(len(row) for row in cells)
        lines = [[*row, *[""] * (width - len(row))] for row in cells]
        lines.insert(1, ["---"] * width)
        for line in lines:
            self._emit("| " + " | ".join(line) + " |")
            self.out.request(1)
        self.out.request(2)

    def close_result(self) -> tuple[str | None, str]:
        self.close()
        if self.table is not None:  # a table never closed (a page cut short): written all the same
            events, self.table = self.table, None
            self._write_table(events)
        self._end_code()
        title = " ".join("".join(self.title_parts).split()) or None
        lines = self.out.result()
        return title, _join(lines)


def _join(lines: list[_Line]) -> str:
    out: list[str] = []
    blank = False
    pending_depth = 0
    for line in lines:
        text = line.text.rstrip()
        if not text.strip(" >"):
            if out:
                blank = True
                pending_depth = line.depth
            continue
        if blank:
            out.append((">" * pending_depth).replace(">", "> ").rstrip() if pending_depth else "")
            blank = False
        out.append(text)
    return "\n".join(out)


def html_document(html: str, *, fences: bool = True) -> tuple[str | None, str | None, str]:
    """`(title, first_h1, text)` of an HTML page: `<title>`, the first `<h1>`, and its text."""
    converter = _Converter(fences=fences)
    try:
        converter.feed(html[:MAX_HTML_CHARS])
        title, text = converter.close_result()
    except Exception:  # html.parser is lenient; this is a last line of defence, never expected
        text = _WS_RE.sub(" ", re.sub(r"<[^>]*>", " ", html[:MAX_HTML_CHARS])).strip()
        return None, None, text
    return title, converter.first_h1, text


def html_to_text(html: str, *, fences: bool = False) -> str:
    """Readable text of an HTML fragment or page (see the module docstring)."""
    return html_document(html, fences=fences)[2]
