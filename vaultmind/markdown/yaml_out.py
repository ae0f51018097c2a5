"""YAML front matter written by hand, so a generated note's properties are the same bytes on
every run and read back by any YAML parser as written: a scalar stays plain only when nothing
could read it as another type (`yes`, `null`, a number) or as YAML syntax; anything else is
double-quoted with escapes for the characters YAML would not keep.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

_PLAIN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9 _./@+-]*[A-Za-z0-9_./@+-]|[A-Za-z_]")
_YAML_WORDS = frozenset(["yes", "no", "on", "off", "true", "false", "null", "y", "n"])
# the backslash escapes of a double-quoted YAML string, shared with the meta line's attribute values
ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


class Quoted(str):
    """A string `render_frontmatter` always double-quotes (hashes, ids that look like numbers)."""

    __slots__ = ()


def yaml_scalar(value: Any) -> str:
    """A YAML scalar: plain when unambiguous, else double-quoted with escapes."""
    if isinstance(value, Quoted):
        return '"' + "".join(_yaml_char(ch) for ch in value) + '"'
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    text = str(value)
    if _PLAIN_RE.fullmatch(text) and text.lower() not in _YAML_WORDS:
        return text
    return '"' + "".join(_yaml_char(ch) for ch in text) + '"'


def _yaml_char(ch: str) -> str:
    escaped = ESCAPES.get(ch)
    if escaped is not None:
        return escaped
    code = ord(ch)
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return f"\\x{code:02x}"
    if code in (0x2028, 0x2029, 0xFEFF) or 0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF):
        return f"\\u{code:04x}"
    return ch


def render_frontmatter(items: Sequence[tuple[str, Any]]) -> str:
    """`---` … `---` with the keys in the given order; values: scalars, lists of scalars,
    or mappings of scalars. Ends with a newline."""
    out = ["---"]
    for key, value in items:
        if isinstance(value, list | tuple):
            if not value:
                out.append(f"{key}: []")
            else:
                out.append(f"{key}:")
                out.extend(f"  - {yaml_scalar(item)}" for item in value)
        elif isinstance(value, Mapping):
            if not value:
                out.append(f"{key}: {{}}")
            else:
                out.append(f"{key}:")
                out.extend(f"  {yaml_scalar(k)}: {yaml_scalar(v)}" for k, v in value.items())
        else:
            out.append(f"{key}: {yaml_scalar(value)}")
    out.append("---")
    return "\n".join(out) + "\n"
