"""A leaf's Markdown as it reads cut out of its note (the evidence block, the query listing).

Some Markdown means something only in its note, and pasted elsewhere — into another note, an
agent's context — reads as noise or breaks: a table row (`| [[alice-chen\\|Alice]] | product |`)
loses its header and keeps the pipe escaped for the table, which no longer opens the link; a
callout's `> [!warning] Title` marker and a block id (`^launch-date`) say nothing there (the
citation already carries the block id). `standalone` renders each readably: a table's rows as
"Header: value; Header: value.", a callout's head as "Warning: Title.", quote markers and
block ids left out, and a wikilink's escaped pipe un-escaped. Code inside fences is kept as it is.
`one_line` sets it on one line, as the evidence block and the listing show a leaf, a heading
read as the start of what it heads ("Timeline: Plant in April"), not its `#` marks run into
the sentence before it.
"""

from __future__ import annotations

import re

from vaultmind.markdown.blocks import BLOCK_ID_RE, CALLOUT_RE, QUOTE_RE, atx_heading, fence_after

_ESCAPED_LINK_PIPE = re.compile(r"(\[\[[^\[\]\n]*?)\\\|([^\[\]\n]*?\]\])")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_TABLE_RULE = re.compile(r"\|?\s*:?-{1,}:?\s*(?:\|\s*:?-{1,}:?\s*)*\|?")


def standalone(text: str) -> str:
    """`text` (a leaf's Markdown) readable out of its note; its lines stay lines."""
    lines = text.split("\n")
    out: list[str] = []
    fence = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        toggled = fence_after(line, fence)
        if toggled is not None or fence:
            fence = fence if toggled is None else toggled
            out.append(line)
            i += 1
            continue
        quote = QUOTE_RE.match(line)
        line = line[quote.end() :] if quote else line
        callout = CALLOUT_RE.match(line.strip()) if quote else None
        if callout:
            kind, title = callout.group(1), (callout.group(3) or "").strip()
            out.append(_sentence(kind[:1].upper() + kind[1:].lower() + (f": {title}" if title else "")))
        elif _is_row(line) and i + 1 < len(lines) and _TABLE_RULE.fullmatch(lines[i + 1].strip()):
            header = _cells(line)
            i += 2
            while i < len(lines) and _is_row(lines[i]):
                out.append(_row(header, _cells(lines[i])))
                i += 1
            continue
        else:
            out.append(BLOCK_ID_RE.sub("", line.rstrip()))
        i += 1
    return _ESCAPED_LINK_PIPE.sub(r"\1|\2", "\n".join(out))


def one_line(text: str) -> str:
    """`text` (as `standalone` gives it) on one line, its headings read (`readable_headings`)."""
    return " ".join(readable_headings(text).split())


def one_line_but_code(text: str) -> str:
    """`text` as `one_line` gives it, but for its fenced code blocks, whose lines stay lines:
    joined, a command under a `# comment` line would read as part of the comment. The prose
    before a block, the block line by line (its fences included), the prose after it. A block
    left open (it runs to the note's end, as Obsidian shows it) is closed here, so what follows
    the text (an evidence item's citation, the next items) is not read as its code."""
    out: list[str] = []
    prose: list[str] = []
    fence = ""
    for line in text.split("\n"):
        toggled = fence_after(line, fence)
        if toggled is None and not fence:
            prose.append(line)
            continue
        if prose and (joined := one_line("\n".join(prose))):
            out.append(joined)
        prose = []
        fence = fence if toggled is None else toggled
        out.append(line.rstrip())
    if prose and (joined := one_line("\n".join(prose))):
        out.append(joined)
    if fence:
        out.append(fence)
    return "\n".join(out)


def readable_headings(text: str) -> str:
    """`text` with each heading outside code fences as the text it heads begins ("## Timeline"
    → "Timeline:"); its lines stay lines."""
    out: list[str] = []
    fence = ""
    for line in text.split("\n"):
        toggled = fence_after(line, fence)
        if toggled is not None or fence:
            fence = fence if toggled is None else toggled
            out.append(line)
            continue
        heading = atx_heading(line)
        out.append(line if heading is None else _headed(heading[1]))
    return "\n".join(out)


def _headed(text: str) -> str:
    return text if not text or text[-1] in ".!?:;" else f"{text}:"


def _is_row(line: str) -> bool:
    return line.strip().startswith("|")


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [cell.strip().replace("\\|", "|") for cell in _CELL_SPLIT.split(inner)]


def _row(header: list[str], cells: list[str]) -> str:
    """A table row as "Header: value; Header: value." (an empty cell left out)."""
    parts = [f"{name}: {value}" if name else value for name, value in zip(header, cells, strict=False) if value]
    parts.extend(value for value in cells[len(header) :] if value)
    return _sentence("; ".join(parts))


def _sentence(text: str) -> str:
    return text if not text or text[-1] in ".!?:;" else f"{text}."
