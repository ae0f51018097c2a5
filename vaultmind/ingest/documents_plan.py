"""Documents: a document's note rendered, and the plan of its write: the note that already holds
the document (found by its `source_id`, kept when the title changes), a new version when its
content changed, and `<id>~2` when the note is another file's of the same id."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

from vaultmind.errors import VaultmindError
from vaultmind.ingest.document_names import half_moved, renamed_to_file_name
from vaultmind.ingest.errors import IngestError
from vaultmind.ingest.held import GENERATED_KEYS, Existing, carries, notes_below
from vaultmind.ingest.model import DocumentInput
from vaultmind.ingest.names import ascii_slug, readable_folder, readable_name, scope_folder, sibling_path
from vaultmind.ingest.plan import Plan, Write, say_wide
from vaultmind.markdown.frontmatter import body_sha256, with_user_keys
from vaultmind.markdown.render import iso_utc, note_text, render_note, title_heading
from vaultmind.markdown.yaml_out import Quoted
from vaultmind.vault.layout import SOURCES_DIR

_H1_RE = re.compile(r"#[ \t]+\S")


@lru_cache(maxsize=1)
def _text_and_heading(title: str, text: str) -> tuple[str, str]:
    """A document's text as its note holds it (line breaks as \\n, no control characters, no
    blank lines around), and the title to head it with ("" when it opens with a heading of its
    own or has none). Made once per document: a plan asks for its body and hashes again and
    again (a 5 MB file took ~0.2 s each time); the last one is kept, until an ingest ends
    (`forget_bodies`)."""
    body = note_text(text).strip("\n")
    first = next((line for line in body.split("\n") if line.strip()), "")
    title = " ".join(title.split())
    return body, title if title and not _H1_RE.match(first) else ""


def forget_bodies() -> None:
    """Let go of the last document's body `_text_and_heading` keeps (at the end of an ingest)."""
    _text_and_heading.cache_clear()


def doc_body(doc: DocumentInput, heading: Callable[[str], str] = title_heading) -> str:
    """The body a document's note holds: line breaks as \\n, no control characters (as the note
    is written, so an unchanged file compares equal: a form feed had made a new version each time),
    under its title's `heading` when it opens with none (escaped: "#ops notes" tags nothing)."""
    body, title = _text_and_heading(doc.title, doc.body)
    if title:
        body = f"{heading(title)}\n\n{body}" if body else heading(title)
    return body + "\n" if body else ""


def _unescaped_heading(title: str) -> str:
    return f"# {title}"


def content_hashes(doc: DocumentInput) -> frozenset[str]:
    """The body hashes of a note holding `doc`'s text: that of the body vaultmind writes, and of
    the one it wrote before a title's heading was escaped ("# #ops notes"): the same document,
    no new version (such a note is written again, escaped, under its version: `plan_document`)."""
    return frozenset({body_sha256(doc_body(doc)), body_sha256(doc_body(doc, _unescaped_heading))})


def _render_document(doc: DocumentInput, version: int, time_start: str | None, time_end: str | None) -> bytes:
    items: list[tuple[str, Any]] = [
        ("vaultmind", "source"),
        ("kind", "document"),
        ("source_id", doc.source_id),
        ("scope", doc.scope),
        ("version", version),
        ("title", " ".join(doc.title.split()) or doc.source_id),
    ]
    if time_start and time_end:
        items.append(("time_start", Quoted(time_start)))
        items.append(("time_end", Quoted(time_end)))
    if doc.source_ref:
        items.append(("source_ref", doc.source_ref))
    return render_note(items, doc_body(doc)).encode("utf-8")


def document_note_bytes(doc: DocumentInput) -> int:
    """About the size of the note a document is written as (a later version's number and times
    may add a few bytes)."""
    try:
        return len(_render_document(doc, 1, doc.modified, doc.modified)) + 64
    finally:
        forget_bodies()  # a document refused for its size is not kept


def doc_folder(doc: DocumentInput, *, earlier: bool = False) -> str:
    """The folder of a document's notes: its folders as written, made safe (`readable_folder`:
    `sources/document/files/My Notes/Meeting Notes`), so links by path resolve in Obsidian; the
    slug of its scope (`files/my-notes/meeting-notes`) for a document given without them, and,
    `earlier`, where earlier versions put it."""
    if doc.folders and not earlier:
        return f"{SOURCES_DIR}/document/files/" + "/".join(readable_folder(part) for part in doc.folders)
    return f"{SOURCES_DIR}/document/{scope_folder(doc.scope)}"


def doc_notes(plan: Plan, folder: str) -> list[Existing]:
    """The document notes in `folder` (not below it)."""
    notes = [plan.existing(f"{folder}/{name}") for name in plan.listing(folder)]
    return [note for note in notes if note is not None and str(note.data.get("kind")) == "document"]


def _all_doc_notes(plan: Plan) -> list[Existing]:
    """Every document note under `sources/document/` (read once per ingest)."""
    if plan.all_documents is None:
        root = plan.vault / SOURCES_DIR / "document"
        rels = [p.relative_to(plan.vault).as_posix() for p in notes_below(root)]
        notes = [plan.existing(rel) for rel in rels if not any(part.startswith(".") for part in rel.split("/"))]
        plan.all_documents = [note for note in notes if note is not None and str(note.data.get("kind")) == "document"]
    return plan.all_documents


def _int(value: Any, default: int) -> int:
    try:
        return max(int(value), 1)
    except (TypeError, ValueError):
        return default


def plan_document(plan: Plan, doc: DocumentInput, folder_notes: list[Existing]) -> None:
    report = plan.report
    try:
        modified = iso_utc(doc.modified) if doc.modified else None
    except VaultmindError as exc:
        raise IngestError(f"document {doc.source_id!r}: modified {doc.modified!r} is not ISO 8601") from exc
    folder = doc_folder(doc)
    ident, mine = _holding(plan, doc, folder_notes)
    if ident != doc.source_id:
        if not mine and ident.startswith(doc.source_id + "~"):  # said once, when first written so
            report.warnings.append(
                f"document {doc.source_id!r}: that id holds another file; {doc.source_ref} is written as {ident!r}"
            )
        doc = replace(doc, source_id=ident)
    plan.documents[doc.source_id] = doc.source_ref
    new_body = doc_body(doc)
    hashes = content_hashes(doc)
    title = " ".join(doc.title.split()) or doc.source_id
    latest = max((_int(note.data.get("version"), 1) for note in mine), default=0)
    named = f"{folder}/{_note_name(doc, title)}.md" if doc.name else None  # its file's name
    earlier = doc_folder(doc, earlier=True)
    # a move to its file's name an ingest was killed in: written there, not yet removed here
    left = half_moved(plan, mine + _left_behind(plan, mine, earlier, named), earlier, named) if named else None
    if left is not None and named:
        plan.claimed.add(left.path)
        plan.left.append((left.path, left.raw, named))
        mine = [note for note in mine if note is not left]
    target = next((note for note in mine if note.owned and carries(note)), None)
    user_edited = [note for note in mine if not (note.owned and carries(note))]

    def same_as(note: Existing, body_hash: str) -> bool:
        """The same title and body; the same source, or the same file elsewhere (`_new_place`)."""
        ref = note.data.get("source_ref") or None
        return (
            body_hash in hashes
            and str(note.data.get("title") or "") == title
            and (ref == (doc.source_ref or None) or (file_ref(doc.source_ref) and (ref is None or file_ref(ref))))
        )

    if target is not None:
        plan.claimed.add(target.path)
        # named by an earlier vaultmind after its title's slug: its file's name, when safe
        dest = renamed_to_file_name(plan, target, earlier, named) if named else None
        if dest is not None:
            plan.claimed.add(dest)
            plan.folded.add(dest.casefold())

        def rewrite(data: bytes, replaced: int = 0) -> Write:
            moved_from = None if dest is None else target.path
            return Write(dest or target.path, data, target.raw, replaced=replaced, moved_from=moved_from)

        if same_as(target, target.body_hash):
            # moved (or written before its file was recorded): the file's new place, same version;
            # or written with its title's heading unescaped: escaped, same version
            if _new_place(target, doc.source_ref) or target.body_hash != body_sha256(new_body):
                version = _int(target.data.get("version"), 1)
                start, end = _opt_str(target.data.get("time_start")), _opt_str(target.data.get("time_end"))
                data = _render_document(doc, version, start or modified, end or modified)
                plan.writes.append(rewrite(with_user_keys(data, target.raw, GENERATED_KEYS)))
            elif dest is not None:  # the same bytes under its new name
                plan.writes.append(rewrite(target.raw))
            else:
                report.unchanged.append(target.path)
            return
        start = target.data.get("time_start")
        time_start = str(start) if start else modified
        data = _render_document(
            doc, latest + 1, time_start, modified or _opt_str(target.data.get("time_end"))
        )
        plan.writes.append(rewrite(with_user_keys(data, target.raw, GENERATED_KEYS), replaced=1))
        return
    if any(same_as(note, str(note.data.get("vaultmind_body_sha256") or "")) for note in user_edited):
        return  # the user edited vaultmind's version of this very content: nothing new
    if user_edited:  # a sibling of the user's note: <stem>.2.md, <stem>.3.md …
        plan.keep_user_edited([note.path for note in user_edited])
        base, name = user_edited[0].path, sibling_path
    else:  # a new document: <name>.md, or <name>-2.md … when another document has that name
        stem = _note_name(doc, title)
        base, name = f"{folder}/{stem}.md", _numbered_path
    n = 1
    while (path := name(base, n)) in plan.claimed or path.casefold() in plan.folded or plan.existing(path) is not None:
        n += 1
    plan.claimed.add(path)
    plan.folded.add(path.casefold())
    say_wide(plan, [note.path for note in user_edited], f"its next version is written to {path}")
    start = _opt_str(user_edited[0].data.get("time_start")) if user_edited else None
    data = _render_document(doc, latest + 1, start or modified, modified)
    plan.writes.append(Write(path, data, None, replaced=1 if user_edited else 0))


def _left_behind(plan: Plan, mine: list[Existing], earlier: str, named: str) -> list[Existing]:
    """The notes of `earlier` (the folder earlier versions put the document in) of the id of the
    note at `named`, when `mine` holds that note but not them: a document found by the id its file
    gives itself is looked for in its folder first, so a move into the folder as written that an
    ingest was killed in would leave its old note unseen, and both notes stayed."""
    moved = next((note for note in mine if note.path == named), None)
    if moved is None or earlier == named.rpartition("/")[0]:
        return []
    return [note for note in doc_notes(plan, earlier) if note.source_id == moved.source_id and note not in mine]


def _holding(plan: Plan, doc: DocumentInput, folder_notes: list[Existing]) -> tuple[str, list[Existing]]:
    """The id `doc` is written under and the notes that hold it, looked for in its folder, else
    anywhere under `sources/document/` (a note moved in Obsidian):

    1. a note that holds this very file (`source_ref`), whatever its id (the file given alone
       after its folder was: another derived id), else one whose file is gone and whose text is
       this file's (the file moved or renamed);
    2. its own id, or its earlier one (`legacy_source_id`), unless their notes hold another file
       that still exists and another text: then it is another document of the same name
       (`notes/q3.md` of two folders called `work/meeting-notes` and `home/meeting-notes`),
       never replaced by this one — a copy of the same text is the same document;
    3. the first free `<id>~2`, `<id>~3` ….

    A `source_id` the file gives itself (front matter) is the document's, whichever file holds
    it: its note, as before."""
    if doc.id_given:  # the file names its document: whatever file holds that id, this is its next version
        mine = [note for note in folder_notes if note.source_id == doc.source_id]
        return doc.source_id, mine or [note for note in _all_doc_notes(plan) if note.source_id == doc.source_id]
    ids = [doc.source_id, *([doc.legacy_source_id] if doc.legacy_source_id else [])]
    body = content_hashes(doc)
    if file_ref(doc.source_ref):  # the file found again by its place, or, moved, by its text
        anywhere = _all_doc_notes(plan)
        same = [n for n in anywhere if n.data.get("source_ref") == doc.source_ref]
        if not same:  # a note whose file is gone and whose text is this one's: the file moved or was renamed
            same = [
                n
                for n in anywhere
                if file_ref(str(n.data.get("source_ref") or ""))
                and n.body_hash in body
                and not _file_path(str(n.data["source_ref"])).exists()
            ]
        if same:
            ident = min(same, key=lambda n: n.path).source_id
            return ident, [n for n in anywhere if n.source_id == ident]

    def family(notes: list[Existing]) -> list[Existing]:
        return [n for n in notes if n.source_id in ids or n.source_id.startswith(doc.source_id + "~")]

    pools = [folder_notes] if family(folder_notes) else [folder_notes, _all_doc_notes(plan)]
    if file_ref(doc.source_ref):
        for notes in pools:
            for note in family(notes):
                if note.data.get("source_ref") == doc.source_ref:
                    return note.source_id, [n for n in notes if n.source_id == note.source_id]
    taken = False
    for notes in pools:
        for ident in ids:
            mine = [note for note in notes if note.source_id == ident]
            if mine or ident in plan.documents:
                if _other_file(plan, ident, mine, doc.source_ref, body):
                    taken = taken or ident == doc.source_id  # a legacy id of another file is just not this one's
                    continue
                return ident, mine
    if not taken:
        return doc.source_id, []
    n = 2
    while True:
        ident = f"{doc.source_id}~{n}"
        mine = [note for note in folder_notes if note.source_id == ident] or [
            note for note in _all_doc_notes(plan) if note.source_id == ident
        ]
        if not _other_file(plan, ident, mine, doc.source_ref, body):
            return ident, mine
        n += 1


def _other_file(plan: Plan, ident: str, notes: list[Existing], ref: str | None, body: frozenset[str]) -> bool:
    """Whether `ident` holds a file other than `ref` (a `file:` URI) that still exists, with
    another text (not one of `body`, its hashes: `content_hashes`): written by this ingest, or
    by an earlier one (the `source_ref` of its notes)."""
    if not file_ref(ref):
        return False
    if ident in plan.documents:
        return plan.documents[ident] != ref
    if any(note.body_hash in body for note in notes):
        return False
    refs = {str(note.data.get("source_ref") or "") for note in notes}
    return ref not in refs and any(file_ref(other) and _file_path(other).exists() for other in refs)


def _new_place(note: Existing, ref: str | None) -> bool:
    """`ref`, a `file:` URI, is a new place for the file of `note`: it records none (written
    before documents recorded their file), or one that no longer exists (the file moved). A
    note whose file still exists elsewhere keeps it: this is a copy."""
    old = note.data.get("source_ref") or None
    if not file_ref(ref) or old == ref:
        return False
    return old is None or (file_ref(str(old)) and not _file_path(str(old)).exists())


def file_ref(ref: str | None) -> bool:
    return bool(ref) and str(ref).startswith("file:")


def _file_path(ref: str) -> Path:
    return Path(url2pathname(urlparse(ref).path))


def _note_name(doc: DocumentInput, title: str) -> str:
    """A new document note's file name (without `.md`): its file's name as written, made safe
    (`Note A.md` → `Note A`), so the links between documents ingested into one vault resolve in
    Obsidian, which finds `[[Note A]]` by file name only (not by title or alias). A document
    without a file name (given by an adapter, or an agent's) is named by the slug of its title,
    else its id, Latin letters in ASCII (`Straße` → `strasse`, `Łódź` → `lodz`: an earlier
    vaultmind left out the letters no accent makes; its notes keep their names)."""
    if doc.name:
        return readable_name(doc.name)
    return ascii_slug(title if title != doc.source_id else doc.source_id.rsplit("/", 1)[-1].split(":")[-1])


def _numbered_path(path: str, n: int) -> str:
    return path if n == 1 else f"{path[:-3]}-{n}.md"


def _opt_str(value: Any) -> str | None:
    return str(value) if value else None
