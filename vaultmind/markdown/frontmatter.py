"""YAML front matter: split it from the body, tolerantly.

A note has front matter when its very first line is `---` (a UTF-8 BOM is ignored) and a later
line is `---` again. Everything after that closing line is the body. Invalid YAML never raises:
the note keeps its body, gets best-effort data from a line-by-line fallback, and a human
`error` message that `status` can show.

The data is always JSON-serialisable: YAML dates and timestamps stay the strings the user wrote
("2024-03-04", "2024-03-04T09:00:00Z"), keys are strings, sets become lists.

Line endings of the body are normalised to LF; `body_sha256` (the generated-note ownership
hash, see docs/vault-format.md) is computed over that normalised body.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, cast

import yaml

_BOM = "\ufeff"
_CLOSE_RE = re.compile(r"^---[ \t]*$", re.MULTILINE)
_OPEN_RE = re.compile(r"---[ \t]*\n")
# `key: [[Note]]` / `- [[Note]]`: valid YAML (a nested list), but meant as a wikilink.
_BARE_WIKILINK_RE = re.compile(
    r"^([ \t]*(?:-|[^\s#:\-\"'][^:\n]*:))[ \t]+(\[\[[^\[\]\n]+\]\])[ \t]*$", re.MULTILINE
)
_FALLBACK_KEY_RE = re.compile(r"([^\s#:\-\"'][^:\n]*|\"[^\"\n]*\"|'[^'\n]*'):(?:[ \t]+(.*)|[ \t]*)$")
_FALLBACK_ITEM_RE = re.compile(r"[ \t]*-(?:[ \t]+(.*)|[ \t]*)$")


def _timestamp_as_str(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return str(loader.construct_scalar(node))


def _make_loader() -> type[yaml.SafeLoader]:
    """The C SafeLoader when available, keeping timestamps as the strings they were written as."""
    base = cast("type[yaml.SafeLoader]", getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    loader = cast("type[yaml.SafeLoader]", type("VaultmindYamlLoader", (base,), {}))
    loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_str)
    return loader


_LOADER = _make_loader()


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """The result of `split_frontmatter`.

    `body_offset_lines` is the number of file lines before the body (0 without front matter):
    body line n is file line n + body_offset_lines.
    """

    data: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    error: str | None = None
    body_offset_lines: int = 0


def body_sha256(body: str) -> str:
    """sha256 hex of a note body (UTF-8), as stored in `vaultmind_body_sha256`."""
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


READ_AS_BODY = "; read as body"  # the end of the problem of front matter that is no front matter


def split_frontmatter(text: str) -> FrontMatter:
    """Split `text` into front matter data and body. Never raises on bad YAML."""
    if text.startswith(_BOM):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.startswith("---"):
        return FrontMatter({}, text, None, 0)
    opened = _OPEN_RE.match(text)
    if opened is None:
        # "---" followed by other text ("----", "--- x") or end of file: not front matter.
        return FrontMatter({}, text, None, 0)
    start = opened.end()
    close = _CLOSE_RE.search(text, start)
    if close is None:
        return FrontMatter({}, text, "front matter opened with '---' on line 1 is never closed" + READ_AS_BODY, 0)
    raw = text[start : close.start()]
    end = close.end()
    offset = text.count("\n", 0, end) + 1
    if end < len(text):
        end += 1  # the newline ending the closing line
    body = text[end:]
    data, error = parse_yaml_mapping(raw)
    if error is not None and error.endswith(READ_AS_BODY):
        # prose between a `---` rule and a later one: shown as text, so indexed as text
        return FrontMatter({}, text, error, 0)
    return FrontMatter(data, body, error, offset)


def parse_yaml_mapping(raw: str) -> tuple[dict[str, Any], str | None]:
    """Parse front matter YAML into a JSON-safe dict, with a best-effort fallback on errors."""
    if not raw.strip():
        return {}, None
    if "[[" in raw:
        raw = _BARE_WIKILINK_RE.sub(_quote_wikilink, raw)
    simple = simple_mapping(raw)
    if simple is not None:
        return simple, None
    return yaml_mapping(raw)


def yaml_mapping(raw: str) -> tuple[dict[str, Any], str | None]:
    """`parse_yaml_mapping` through PyYAML, for any front matter."""
    try:
        loaded = yaml.load(raw, Loader=_LOADER)
    except yaml.YAMLError as exc:
        return _fallback(raw), f"invalid YAML front matter ({_describe(exc)}); best-effort values used"
    except (ValueError, TypeError, RecursionError) as exc:  # odd constructors, deep nesting
        return _fallback(raw), f"invalid YAML front matter ({exc}); best-effort values used"
    if loaded is None:
        return {}, None
    if not isinstance(loaded, dict):
        return {}, f"front matter is a {_yaml_type(loaded)}, not a mapping of keys to values" + READ_AS_BODY
    budget = _Budget(EXPANDED_VALUES_PER_CHAR * len(raw) + EXPANDED_VALUES_EXTRA)
    try:
        return {_key(k, budget): jsonable(v, budget=budget) for k, v in loaded.items()}, None
    except _TooLarge:
        message = f"YAML aliases expand past {budget.left + budget.used:,} values"
        return _fallback(raw), f"invalid YAML front matter ({message}); best-effort values used"


# -- the common shape, read directly ----------------------------------------------------------
#
# Most front matter is flat: `key: value` lines, `- item` lists and `[a, b]` lists of single-line
# scalars. PyYAML takes ~0.1 ms for such a block (a few percent of indexing a note); read
# directly it takes about a third of that. Anything outside this subset (nesting, mappings in
# braces, comments, anchors, tags, multi-line or escaped strings, floats, ': ' or ' #' in a
# plain value, tabs, characters YAML does not print) goes to PyYAML: the two agree wherever the
# subset applies (tested by comparing them on generated front matter).

_SIMPLE_KEY_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*):(?: +(.*))?")
_SIMPLE_ITEM_RE = re.compile(r"( *)-(?: +(.*))?")
_DOUBLE_RE = re.compile(r'"([^"\\]*)" *')
_SINGLE_RE = re.compile(r"'((?:[^']|'')*)' *")
_PLAIN_RE = re.compile(r"[^\s\-?:,\[\]{}#&*!|>'\"%@`][^\t]*")
_FLOW_RE = re.compile(r"\[([^\[\]{}\"'#:]*)\] *")  # `[a, b]`: plain items only
_DECIMAL_RE = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
# what YAML does not print, a BOM, and the characters it reads as line breaks (NEL, LS, PS)
_UNPRINTABLE_RE = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_NO_VALUE = object()  # a scalar outside the subset


def simple_mapping(raw: str) -> dict[str, Any] | None:
    """The front matter read directly when it has the common flat shape (see above), else None."""
    if "\t" in raw or _UNPRINTABLE_RE.search(raw):
        return None
    data: dict[str, Any] = {}
    key: str | None = None  # the key whose value may still be a list
    items: list[Any] | None = None
    indent = -1
    for line in raw.split("\n"):
        if not line.strip(" "):
            continue
        if items is not None or key is not None:
            item = _SIMPLE_ITEM_RE.fullmatch(line)
            if item is not None:
                if items is None:
                    items, indent = [], len(item.group(1))
                    data[key] = items  # type: ignore[index]
                elif len(item.group(1)) != indent:
                    return None
                value = _scalar_value(item.group(2))
                if value is _NO_VALUE:
                    return None
                items.append(value)
                continue
        if line[0] == " ":
            return None
        m = _SIMPLE_KEY_RE.fullmatch(line.rstrip(" "))
        if m is None or _scalar_value(m.group(1)) != m.group(1):
            return None  # not `key: value`, or a key YAML reads as a bool, a number …
        key, items = m.group(1), None
        value = _scalar_value(m.group(2))
        if value is _NO_VALUE:
            return None
        data[key] = value
        if m.group(2):
            key = None  # only `key:` with nothing after it can hold a list
    return data


def _scalar_value(text: str | None) -> Any:
    """One single-line scalar as PyYAML's safe loader (timestamps kept as text) reads it, or
    `_NO_VALUE` when it is outside the subset."""
    if text is None:
        return None
    text = text.rstrip(" ")
    if not text:
        return None
    first = text[0]
    if first == '"':
        m = _DOUBLE_RE.fullmatch(text)
        return m.group(1) if m is not None else _NO_VALUE
    if first == "'":
        m = _SINGLE_RE.fullmatch(text)
        return m.group(1).replace("''", "'") if m is not None else _NO_VALUE
    if first == "[":
        m = _FLOW_RE.fullmatch(text)
        if m is None:
            return _NO_VALUE
        parts = [part.strip(" ") for part in m.group(1).split(",")]
        if parts[-1] == "":
            parts.pop()  # `[]`, or a trailing comma
        items = [_scalar_value(part) if part else _NO_VALUE for part in parts]
        return _NO_VALUE if any(item is _NO_VALUE for item in items) else items
    if _PLAIN_RE.fullmatch(text) is None or ": " in text or " #" in text or text[-1] == ":":
        return _NO_VALUE
    for tag, pattern in _LOADER.yaml_implicit_resolvers.get(first, ()):
        if pattern.match(text):
            kind = tag.rsplit(":", 1)[-1]
            if kind == "bool":
                return yaml.constructor.SafeConstructor.bool_values[text.lower()]
            if kind == "null":
                return None
            if kind == "timestamp":
                return text
            if kind == "int" and _DECIMAL_RE.fullmatch(text):
                return int(text)
            return _NO_VALUE  # floats, other integer forms, merge keys …
    return text


# A YAML alias (`*a`) repeats a value without writing it again: aliases of aliases grow a few
# hundred bytes into millions of values ("billion laughs"). Written out as JSON, front matter may
# hold at most this many values per character of its YAML (plus a few), which YAML without
# aliases never reaches (every value takes at least one character); past it, it is invalid.
EXPANDED_VALUES_PER_CHAR = 2
EXPANDED_VALUES_EXTRA = 10_000


class _TooLarge(Exception):
    """The values copied out of YAML data passed their `_Budget`."""


class _Budget:
    """How many more values `jsonable` may copy out."""

    __slots__ = ("left", "used")

    def __init__(self, left: int) -> None:
        self.left, self.used = left, 0

    def take(self) -> None:
        if self.left <= 0:
            raise _TooLarge
        self.left -= 1
        self.used += 1


def jsonable(value: Any, _open: frozenset[int] = frozenset(), *, budget: _Budget | None = None) -> Any:
    """Convert YAML-loaded data to JSON-serialisable data (recursively). A list or mapping
    that contains itself (`key: &a [*a]`, a YAML alias inside its own value) holds null where
    it repeats: YAML builds such values, JSON has no way to write them. With a `budget`, each
    value copied takes one from it (`_TooLarge` when none is left)."""
    if budget is not None:
        budget.take()
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, dict | list | tuple | set | frozenset):
        if id(value) in _open:
            return None
        inner = _open | {id(value)}
        if isinstance(value, dict):
            return {_key(k, budget): jsonable(v, inner, budget=budget) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [jsonable(v, inner, budget=budget) for v in value]
        return sorted((jsonable(v, inner, budget=budget) for v in value), key=str)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    isoformat = getattr(value, "isoformat", None)
    if callable(isoformat):
        return str(isoformat())
    return str(value)


def _key(key: Any, budget: _Budget | None = None) -> str:
    if isinstance(key, str):
        return key
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    converted = jsonable(key, budget=budget)
    return converted if isinstance(converted, str) else str(converted)


def _quote_wikilink(match: re.Match[str]) -> str:
    link = match.group(2).replace("\\", "\\\\").replace('"', '\\"')
    return f'{match.group(1)} "{link}"'


def _yaml_type(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def _describe(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is not None:
        return f"front matter line {mark.line + 1}: {problem}"
    return str(problem)


def _scalar(text: str | None) -> Any:
    """One fallback value: YAML if it parses to something sensible, else the raw string."""
    if text is None or text == "":
        return None
    try:
        value = yaml.load(text, Loader=_LOADER)
    except (yaml.YAMLError, ValueError, TypeError):
        value = None
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
            return text[1:-1]
        return text
    if isinstance(value, dict):  # "{{date}}" parses as a mapping with a mapping key: keep text
        return text
    return jsonable(value)


def _fallback(raw: str) -> dict[str, Any]:
    """Top-level `key: value` lines and `- item` lists, each value parsed on its own."""
    data: dict[str, Any] = {}
    current: str | None = None
    for line in raw.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] not in " \t-":
            m = _FALLBACK_KEY_RE.match(line)
            if m is None:
                current = None
                continue
            key = m.group(1).rstrip(" \t")
            if key[0] in "\"'":
                key = key[1:-1]
            current = key
            data[key] = _scalar((m.group(2) or "").strip(" \t"))
            continue
        item = _FALLBACK_ITEM_RE.match(line)
        if item is not None and current is not None:
            existing = data.get(current)
            if existing is None:
                existing = data[current] = []
            if isinstance(existing, list):
                existing.append(_scalar((item.group(1) or "").strip(" \t")))
    return data


# --- keys you added to a note vaultmind writes ----------------------------------------------

_TOP_KEY_RE = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#"'][^\n]*?)\s*:(?:\s|$)""")


def with_user_keys(data: bytes, old: bytes, generated: frozenset[str]) -> bytes:
    """`data` (a note vaultmind rendered) with the front matter keys of `old` (the note it
    replaces) that vaultmind does not write (not in `generated`), as they were written, before
    its body hash: tags, aliases, properties you added in Obsidian survive a rewrite."""
    blocks = user_blocks(old.decode("utf-8", errors="replace"), generated)
    if not blocks:
        return data
    text = data.decode("utf-8")
    at = text.find("\nvaultmind_body_sha256:")
    if at < 0:
        return data
    return (text[: at + 1] + "".join(blocks) + text[at + 1 :]).encode("utf-8")


def user_blocks(text: str, generated: frozenset[str]) -> list[str]:
    """The top-level front matter entries of `text` whose keys are not in `generated`, each
    with its lines (a list's items, a mapping's entries, a block scalar's lines, the comments
    before it), LF line ends; comments after the last entry too."""
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0].rstrip() != "---":
        return []
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "..."))
    except StopIteration:
        return []
    blocks: list[tuple[str | None, list[str]]] = []
    pending: list[str] = []  # comments at the margin, given to the next key
    for line in lines[1:end]:
        at_margin = line[:1] not in ("", " ", "\t")
        if at_margin and line.startswith("#"):
            pending.append(line)
        elif at_margin and line.startswith("? "):  # a complex key: the user's
            blocks.append((None, [*pending, line]))
            pending = []
        elif at_margin and not line.startswith("-") and (key := _TOP_KEY_RE.match(line)) is not None:
            name = key.group(1)
            if name[:1] in ("'", '"'):
                name = name[1:-1]
            blocks.append((name, [*pending, line]))
            pending = []
        elif blocks:  # a list item, a nested entry, a block scalar's line (blank or "#" too)
            blocks[-1][1].extend([*pending, line])
            pending = []
        else:
            pending.append(line)
    if any(line.strip() for line in pending):
        blocks.append((None, pending))
    return ["".join(f"{line}\n" for line in body) for key, body in blocks if key not in generated]
