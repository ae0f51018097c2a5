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
        return FrontMatter(
            {}, text, "front matter opened with '---' on line 1 is never closed; read as body", 0
        )
    raw = text[start : close.start()]
    end = close.end()
    offset = text.count("\n", 0, end) + 1
    if end < len(text):
        end += 1  # the newline ending the closing line
    body = text[end:]
    data, error = parse_yaml_mapping(raw)
    return FrontMatter(data, body, error, offset)


def parse_yaml_mapping(raw: str) -> tuple[dict[str, Any], str | None]:
    """Parse front matter YAML into a JSON-safe dict, with a best-effort fallback on errors."""
    if not raw.strip():
        return {}, None
    if "[[" in raw:
        raw = _BARE_WIKILINK_RE.sub(_quote_wikilink, raw)
    try:
        loaded = yaml.load(raw, Loader=_LOADER)
    except yaml.YAMLError as exc:
        return _fallback(raw), f"invalid YAML front matter ({_describe(exc)}); best-effort values used"
    except (ValueError, TypeError, RecursionError) as exc:  # odd constructors, deep nesting
        return _fallback(raw), f"invalid YAML front matter ({exc}); best-effort values used"
    if loaded is None:
        return {}, None
    if not isinstance(loaded, dict):
        return {}, f"front matter is a {_yaml_type(loaded)}, not a mapping of keys to values; ignored"
    return {_key(k): jsonable(v) for k, v in loaded.items()}, None


def jsonable(value: Any, _open: frozenset[int] = frozenset()) -> Any:
    """Convert YAML-loaded data to JSON-serialisable data (recursively). A list or mapping
    that contains itself (`key: &a [*a]`, a YAML alias inside its own value) holds null where
    it repeats: YAML builds such values, JSON has no way to write them."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, dict | list | tuple | set | frozenset):
        if id(value) in _open:
            return None
        inner = _open | {id(value)}
        if isinstance(value, dict):
            return {_key(k): jsonable(v, inner) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [jsonable(v, inner) for v in value]
        return sorted((jsonable(v, inner) for v in value), key=str)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    isoformat = getattr(value, "isoformat", None)
    if callable(isoformat):
        return str(isoformat())
    return str(value)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    converted = jsonable(key)
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
