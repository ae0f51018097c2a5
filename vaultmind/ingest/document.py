"""Document files (.md, .markdown, .txt, .html, .htm) → `DocumentInput`s, one per file.

- `.md` / `.markdown`: front matter is metadata (`title`, `source_id`, `source_ref` are used;
  the rest is left out of the note), the body is kept verbatim; without a `source_ref` of its
  own, a document's is its file as a `file:` URI (the writer tells two files of one id apart
  by it). A document that is front matter only (a trip's `start`, `end`, `loc`) has its other
  properties as its text, one `key: value` line each, as a note of yours has them as its
  properties leaf (`markdown.note.property_lines`);
- `.txt`: its text as written, with the markup escapes of message text (`render.escape_markup`:
  `%%`, `$$`, `<tag`, a trailing `^id`), so it shows in Obsidian as it reads in the file;
- text in UTF-8, UTF-16 or UTF-32 (told by a byte order mark, or by the NUL bytes of ASCII-heavy
  text without one: `vault.encoding`), else Windows-1252 (said); a binary file is skipped (said);
- `.html` / `.htm`: converted to Markdown-ish text (`ingest/html.py`: headings, lists, links
  as `text (url)`, code blocks fenced, inline code in backticks), its text escaped as a
  `.txt`'s: a page's `&lt;details&gt;` is the text `<details>`, not a widget folding the page.

Folders are walked recursively in name order; hidden files and folders are skipped, and so are
files of other types (reported by `parse_document_paths_with_report`).

Identity and place:

- `source_id` = `doc:<the scope's folders and the file name, each slugified, extension
  dropped>` (`doc:team-docs/notes/q3-report`; for a file given directly, its folder's name and
  its own: `doc:notes/q3-report`; for a symlink given directly, those of the file it links
  to), so two `README.md` of two folders are two documents. A
  `source_id` in the front matter wins. Two files of one ingest that would share an id (`a.md`
  and `a.txt`) keep their extension in it (`doc:d/a-md`, `doc:d/a-txt`). Before, the id was
  the path below the given folder alone (`doc:q3-report`): a note that has such an id keeps it
  (`legacy_source_id`), so documents ingested then are found again, not written twice.
- `scope` = `files/<folder>`: the given folder's name and the sub-folders down to the file
  (`files/docs/notes`); for a file given directly, its folder's name.
- `name`: the file's name without extension, as written: a new document's note is named after
  it, so that links between documents (`[[Note A]]`, `![[Note A#Heading]]`) resolve in Obsidian;
  `folders`: the scope's folders as written, its note's folders (`[[Meeting Notes/Note A]]`).
- `title`: front matter `title`, else the first `# ` heading (`<title>`, then the first
  `<h1>`, for HTML), else the file name without extension.
- `modified`: the file's modification time (UTC, ISO 8601). It is not part of the content:
  the writer bumps a document's version only when its title, body or `source_ref` change.

The same file always gives the same `DocumentInput` (apart from `modified`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from vaultmind.errors import IngestError
from vaultmind.ingest.html import html_document
from vaultmind.ingest.model import DocumentInput
from vaultmind.ingest.names import slugify
from vaultmind.ingest.walk import vault_note, vault_notes_skipped, walk_files
from vaultmind.markdown.blocks import atx_heading, fence_after
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.markdown.note import property_lines
from vaultmind.markdown.render import escape_markup
from vaultmind.model import Progress
from vaultmind.vault.encoding import decode_text

MAX_DOCUMENT_BYTES = 20 * 1024 * 1024
SUFFIXES = {".md": "md", ".markdown": "md", ".txt": "txt", ".html": "html", ".htm": "html"}
# the suffixes as a message says them: ".md, .markdown, .txt, .html or .htm"
DOCUMENT_KINDS = " or ".join(", ".join(SUFFIXES).rsplit(", ", 1))
_METADATA = ("title", "source_id", "source_ref")  # front matter a document's note has in its own



def _decode(data: bytes, path: Path, warnings: list[str]) -> str | None:
    """The file's text (`vault.encoding.decode_text`: UTF-8, UTF-16 or UTF-32 by their byte
    order mark or NUL bytes, a legacy East Asian code page, else Windows-1252), or None for a
    binary file (said)."""
    decoded = decode_text(data, fallback="cp1252")
    if decoded.text is None:
        warnings.append(f"{path}: looks like a binary file (NUL or control bytes), not text; skipped (if it is text, save it as UTF-8 to ingest it)")
        return None
    if decoded.encoding == "cp1252" or (decoded.legacy and decoded.bad_byte is None):
        warnings.append(f"{path}: not UTF-8; read as {decoded.name}")
    elif decoded.bad_byte is not None:
        name = decoded.name if decoded.legacy else decoded.encoding.upper()
        warnings.append(f"{path}: {name} text, but byte {decoded.bad_byte} is not {name}; read with replacement characters")
    return decoded.text.replace("\r\n", "\n").replace("\r", "\n")


def _first_h1(body: str) -> str | None:
    fence = ""
    for line in body.split("\n"):
        toggled = fence_after(line, fence)
        if toggled is not None:
            fence = toggled
            continue
        if fence:
            continue
        atx = atx_heading(line)
        if atx is not None and atx[0] == 1 and atx[1]:
            return " ".join(atx[1].split())
    return None


def _str(value: object) -> str | None:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        text = " ".join(str(value).split())
        return text or None
    return None


def _slug_path(parts: Sequence[str]) -> str:
    return "/".join(slugify(part) for part in parts if part)


def _modified(path: Path) -> str | None:
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None
    return datetime.fromtimestamp(int(mtime), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _one(
    path: Path, rel: Path, scope_parts: Sequence[str], warnings: list[str]
) -> tuple[DocumentInput, Path, bool] | None:
    kind = SUFFIXES[path.suffix.lower()]
    said_from = len(warnings)  # the warnings about this file, said again only when it changes
    try:
        size = path.stat().st_size
        if size > MAX_DOCUMENT_BYTES:  # said and left out: the folder's other files are ingested
            warnings.append(
                f"{path}: {size:,} bytes is over the {MAX_DOCUMENT_BYTES:,}-byte limit for a document; "
                "skipped (split the file to ingest it)"
            )
            return None
        text = _decode(path.read_bytes(), path, warnings)
    except OSError as exc:
        raise IngestError(f"cannot read the file ({exc.strerror or exc})", path=path) from exc
    if text is None:
        return None
    title: str | None = None
    source_id: str | None = None
    source_ref: str | None = None
    if kind == "md":
        fm = split_frontmatter(text)
        if fm.error:
            warnings.append(f"{path}: front matter: {fm.error}")
        if fm.data.get("vaultmind") is not None:  # a vault (or a copy of one) given as documents
            warnings.append(f"{path}: a note vaultmind wrote (`vaultmind: {fm.data['vaultmind']}`), not a document; skipped")
            return None
        title = _str(fm.data.get("title"))
        source_id = _str(fm.data.get("source_id"))
        source_ref = _str(fm.data.get("source_ref"))
        body = fm.body
        if not body.strip():  # all properties: they are what it records
            body = "\n".join(property_lines(fm.data, leave_out=_METADATA))
        title = title or _first_h1(body)
    elif kind == "html":
        page_title, h1, body = html_document(text, fences=True)
        title = page_title or h1
        body = escape_markup(body)
    else:
        body = escape_markup(text)
    doc = DocumentInput(
        source_id=source_id or f"doc:{_slug_path([*scope_parts, rel.stem])}",
        scope="files/" + (_slug_path(scope_parts) or "unknown"),
        title=title or rel.stem,
        body=body,
        modified=_modified(path),
        source_ref=source_ref or path.resolve().as_uri(),
        legacy_source_id=None if source_id else f"doc:{_slug_path([*rel.parent.parts, rel.stem])}",
        id_given=source_id is not None,
        name=rel.stem,
        folders=tuple(part for part in scope_parts if part),
        said=tuple(warnings[said_from:]),
    )
    return doc, path, source_id is None


_KINDS = ", ".join(SUFFIXES)  # as said: ".md, .markdown, .txt, .html, .htm"


def _files(root: Path, warnings: list[str]) -> list[Path]:
    out: list[Path] = []
    for entry in walk_files(root, warnings):
        if entry.suffix.lower() in SUFFIXES:
            out.append(entry)
        else:
            warnings.append(f"{entry}: not a document ({_KINDS}); skipped")
    return out


def parse_document_paths_with_report(
    paths: Sequence[Path], *, vault: Path | None = None, progress: Progress | None = None
) -> tuple[list[DocumentInput], list[str]]:
    """Documents (in path order) and warnings (skipped files, encoding and front matter issues).
    `vault`: the vault written to, whose own notes (`.md` files in it) are left out, said: they
    are indexed as they are, and a copy under `sources/document/` would be found twice.
    `progress("parsing", done, total)` as the files found are read."""
    warnings: list[str] = []
    found: list[tuple[DocumentInput, Path, bool]] = []  # (document, file, id derived from path)
    notes: list[Path] = []  # the vault's own notes given
    files: list[tuple[Path, Path, list[str]]] = []  # (file, its name below the path given, its folders)
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            root = path.resolve()
            for file in _files(path, warnings):
                if vault_note(file, vault):
                    notes.append(file)
                    continue
                rel = file.relative_to(path)
                files.append((file, rel, [root.name, *rel.parent.parts]))
        elif path.is_file() and vault_note(path, vault):
            notes.append(path)
        elif path.is_file():
            if path.suffix.lower() not in SUFFIXES:
                raise IngestError("not a document", path=path, hint=f"documents are {DOCUMENT_KINDS} files")
            # a symlink given alone is the file it links to: its folder's name and its own
            # (a link's name with its target's folder had named a document that is neither)
            real = path.resolve()
            files.append((path, Path(real.name), [real.parent.name]))
        else:
            raise IngestError("no such file or folder", path=path)
    for done, (file, rel, folders) in enumerate(files, 1):
        if (one := _one(file, rel, folders, warnings)) is not None:
            found.append(one)
        if progress is not None:
            progress("parsing", done, len(files))
    if notes:
        warnings.append(vault_notes_skipped(notes, "documents"))
    return _disambiguate(found, warnings), warnings


def _disambiguate(found: Sequence[tuple[DocumentInput, Path, bool]], warnings: list[str]) -> list[DocumentInput]:
    """Files that would share a derived `doc:` id and differ in extension keep it in the id
    (others, as `notes/a.md` of two folders called `notes`, are told apart by the writer). A file
    with no text (empty, blank, front matter without a property but the metadata) is left out,
    with a warning: its note would hold nothing but a title."""
    empty = {file for doc, file, _ in found if not doc.body.strip()}
    warnings.extend(f"{file}: no text; skipped" for file in sorted(empty))
    found = [item for item in found if item[1] not in empty]
    suffixes: dict[str, set[str]] = {}
    for doc, file, derived in found:
        if derived:
            suffixes.setdefault(doc.source_id, set()).add(file.suffix.lower())
    out: list[DocumentInput] = []
    for doc, file, derived in found:
        if derived and len(suffixes[doc.source_id]) > 1:
            suffix = "-" + file.suffix.lower().lstrip(".")
            doc = replace(doc, source_id=doc.source_id + suffix, legacy_source_id=f"{doc.legacy_source_id}{suffix}")
        out.append(doc)
    return out
