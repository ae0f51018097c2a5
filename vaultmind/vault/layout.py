"""Where things live in a vault, and what kind of note a path is.

The vault contract (docs/vault-format.md):
    sources/<kind>/<scope>/…/*.md   canonical sources written by vaultmind
    summaries/<tree>/L<n>/<id>.md   sealed summary notes
    entities/<kind>/<id>.md         entity notes
    <anything else>.md              the user's own notes
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from urllib.parse import quote

from vaultmind.model import NoteKind

SOURCES_DIR = "sources"
SUMMARIES_DIR = "summaries"
ENTITIES_DIR = "entities"
STATE_DIR = ".vaultmind"

NOTE_SUFFIX = ".md"


# the names Windows keeps for devices, whatever follows them after a dot ("CON.md", "nul.tar.gz")
_WINDOWS_DEVICES = frozenset(
    ("con", "prn", "aux", "nul", "conin$", "conout$", *(f"{port}{n}" for port in ("com", "lpt") for n in "0123456789¹²³"))
)


def windows_safe(name: str) -> str:
    """A file or folder name vaultmind makes, as Windows can hold it (vaults sync between
    machines): a name whose stem — what comes before its first dot, spaces before the dot
    aside — Windows keeps for a device gets `_` after the stem ("con" → "con_", "CON.md" →
    "CON_.md", "com1.tar.gz" → "com1_.tar.gz"); dots and spaces it ends in are taken off."""
    name = name.rstrip(". ")
    stem, dot, rest = name.partition(".")
    if stem.rstrip(" ").casefold() in _WINDOWS_DEVICES:
        return f"{stem.rstrip(' ')}_{dot}{rest}"
    return name


# Latin letters that no accent makes: NFKD leaves them whole, so an ASCII fold lost them
# ("Straße" was "strae", "Łódź" "odz"); spelled as ASCII writes them
_LETTERS = str.maketrans(
    {
        "ß": "ss", "ẞ": "SS", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ø": "o", "Ø": "O",
        "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th",
        "ı": "i", "ħ": "h", "Ħ": "H", "ŧ": "t", "Ŧ": "T", "ŋ": "ng", "Ŋ": "NG",
    }
)  # fmt: skip


def ascii_letters(text: str) -> str:
    """`text` with its Latin letters in ASCII: accents dropped (`Café` → `Cafe`), and the letters
    no accent makes spelled as ASCII writes them (`Straße` → `Strasse`, `Łódź` → `Lodz`,
    `Færøy` → `Faeroy`, `Þór` → `Thor`); every other character kept as it is."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_LETTERS))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def utf8_prefix(name: str, max_bytes: int) -> str:
    """`name` cut to at most `max_bytes` bytes of UTF-8, at a character (file systems count a
    file name's bytes, 255 at most: 80 emoji are 320)."""
    return name.encode("utf-8")[:max_bytes].decode("utf-8", "ignore")


def note_kind(path: str) -> NoteKind:
    """The kind of a vault-relative POSIX path, decided by its top folder."""
    top = path.split("/", 1)[0]
    if top == SOURCES_DIR:
        return "source"
    if top == SUMMARIES_DIR:
        return "summary"
    if top == ENTITIES_DIR:
        return "entity"
    return "user"


def is_note(path: str) -> bool:
    return path.lower().endswith(NOTE_SUFFIX)


def obsidian_link(vault_name: str, path: str, anchor: str = "") -> str:
    """An `obsidian://open` URI for a note, with an optional "#Heading" or "^block" anchor."""
    file = path[: -len(NOTE_SUFFIX)] if path.lower().endswith(NOTE_SUFFIX) else path
    # quoted in parts (each character is quoted on its own): the vault's and the notes' names
    # repeat from hit to hit, the anchors do not
    quoted = _quoted(file)
    if anchor:
        quoted += quote(anchor if anchor.startswith("#") else "#" + anchor, safe="")
    return f"obsidian://open?vault={_quoted(vault_name)}&file={quoted}"


@lru_cache(maxsize=4096)
def _quoted(text: str) -> str:
    return quote(text, safe="")


def wikilink(path: str, anchor: str = "", alias: str = "") -> str:
    """An Obsidian wikilink to a vault path ("[[folder/note#^block|alias]]")."""
    target = path[: -len(NOTE_SUFFIX)] if path.lower().endswith(NOTE_SUFFIX) else path
    if anchor:
        target += anchor if anchor.startswith("#") else "#" + anchor
    return f"[[{target}|{alias}]]" if alias else f"[[{target}]]"


_DIGITS = re.compile(r"(\d+)")


def name_order(path: str) -> tuple[tuple[str | int, ...], str]:
    """A sort key that puts paths in the order a reader expects: numbers in number order
    ("session-2" before "session-10"), the rest as text, the path itself breaking ties."""
    parts = _DIGITS.split(path)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts)), path


# The names sync tools give the copy they keep of a note two devices changed at once, the
# note's own name first: Syncthing `Trip.sync-conflict-20241201-123456-ABCDEFG.md`, Dropbox
# `Trip (conflicted copy 2024-12-01).md` / `Trip (Zoë's conflicted copy 2024-12-01).md`,
# Nextcloud `Trip (conflicted copy 2024-12-01 123456).md`, ownCloud `Trip_conflict-20241201-123456.md`.
_CONFLICT_COPY = re.compile(
    r"(?P<stem>.+?)(?:\.sync-conflict-\d{8}-\d{6}-[0-9A-Z]{7}"
    r"| \((?:[^()/]*'s )?conflicted copy \d{4}-\d{2}-\d{2}(?: \d{6})?\)(?: \(\d+\))?"
    r"|_conflict-\d{8}-\d{6})(?P<suffix>\.md)",
    re.IGNORECASE,
)


def conflict_original(path: str) -> str | None:
    """The note a sync tool's conflict copy at `path` is a copy of (by the copy's name), or None
    when the name is not one of a conflict copy."""
    folder, slash, name = path.rpartition("/")
    found = _CONFLICT_COPY.fullmatch(name)
    if found is None:
        return None
    return f"{folder}{slash}{found['stem']}{found['suffix']}"
