"""An entity note's heading is escaped as a source note's titles are, and an entity note written
before (its heading as the name is) is still vaultmind's.

Before, a chat name "Dana Whitfield #ops" wrote `# Dana Whitfield #ops`: Obsidian listed the
entity note under the tag #ops, and the index gave it that tag."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.entities.notes import create_entity_notes
from vaultmind.entities.registry_store import entity_note_from
from vaultmind.markdown.frontmatter import body_sha256, split_frontmatter
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory

from .conftest import write
from .test_sync import DOCUMENT, _indexed_before

NAME = "Dana Whitfield #ops"


def _chat(vault: Path) -> None:
    meta = SourceMeta("chat", "irc:team/ops", "irc/team/ops", "#ops")
    author = f"{NAME} <dana@harbor.example>"
    texts = ("the hall is free on Friday", "invoice sent to the caterer", "the sound check is at six")
    messages = [Message(f"m{i}", author, f"2024-03-04T09:0{i}:00Z", t) for i, t in enumerate(texts)]
    write(vault, "sources/chat/irc/team/ops/2024-03-04.md", render_source_note(meta, messages))


def test_an_entity_note_heading_opens_no_tag(vault: Path) -> None:
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    _chat(vault)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        (path,) = create_entity_notes(memory).paths
        memory.sync()
        body = split_frontmatter((vault / path).read_text(encoding="utf-8")).body
        assert body == "# Dana Whitfield \\#ops\n", body
        assert memory.index.query("SELECT tag FROM tags WHERE path = ?", [path]) == []
        fm = split_frontmatter((vault / path).read_text(encoding="utf-8")).data
        entry = entity_note_from(path, NAME, fm)
        assert entry is not None and entry.generated and entry.display_name == NAME
        (note,) = memory.index.query("SELECT title FROM notes WHERE path = ?", [path])
        leaves = memory.index.query("SELECT text FROM leaves WHERE note_path = ?", [path])
        assert note == (NAME,) and leaves == [(f"# {NAME}",)], "its heading read as it shows, not as escaped"


def test_an_entity_note_written_with_the_old_heading_is_still_vaultminds() -> None:
    """Notes already on disk keep their status: not taken for one you edited."""
    old = {
        "vaultmind": "entity",
        "id": "person:dana-whitfield-ops",
        "kind": "person",
        "display_name": NAME,
        "vaultmind_body_sha256": body_sha256(f"# {NAME}\n"),
    }
    entry = entity_note_from("entities/person/dana-whitfield-ops.md", NAME, old)
    assert entry is not None and entry.generated
    edited = {**old, "vaultmind_body_sha256": body_sha256(f"# {NAME}\nmy notes\n")}
    mine = entity_note_from("entities/person/dana-whitfield-ops.md", NAME, edited)
    assert mine is not None and not mine.generated


def _entity_note(vault: Path, path: str = "entities/person/dana-whitfield-ops.md") -> None:
    meta = f'vaultmind: entity\nid: "person:dana-whitfield-ops"\nkind: person\ndisplay_name: "{NAME}"'
    write(vault, path, f"---\n{meta}\n---\n# Dana Whitfield \\#ops\n")


def test_an_index_holding_an_escaped_name_reads_that_note_again_and_no_other(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 0040: an entity note's leaf indexed before kept the backslash of its heading.
    That note is read again by the next sync; the index is not rebuilt for it (at 50k notes a
    rebuild cuts and stores every note again, for minutes), and every other note keeps its rows."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    _entity_note(vault)
    write(vault, "notes/plan.md", "# Plan\n\nThe channel \\#ops is muted.\n")
    said = "Dana Whitfield \\#ops said: the hall is booked for Friday."
    write(vault, "summaries/party/L1/s-1.md", f"---\nvaultmind: summary\n---\n{said}\n")
    old = [
        "UPDATE leaves SET text = '# Dana Whitfield \\#ops' WHERE note_path LIKE 'entities/%'",
        f"UPDATE leaves SET text = '{said}' WHERE note_path LIKE 'summaries/%'",
    ]
    config = _indexed_before(vault, monkeypatch, "0040", then=old)
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") is None
        stats = memory.sync()
        assert not stats.rebuilt and stats.modified == 2, stats
        assert memory.index.query("SELECT text FROM leaves WHERE note_path LIKE 'entities/%'") == [(f"# {NAME}",)]
        assert memory.index.query("SELECT text FROM leaves WHERE note_path LIKE 'summaries/%'") == [(said.replace("\\", ""),)]
        assert memory.index.query("SELECT title FROM notes WHERE path LIKE 'entities/%'") == [(NAME,)]


def test_an_index_whose_notes_of_yours_hold_an_escaped_hash_is_not_rebuilt(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Your own note's Markdown is read as you wrote it, and so is a document's `\\#` (its
    author's, never vaultmind's) and an entity note you wrote: no reason to rebuild."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    write(vault, "notes/plan.md", "# Plan\n\nThe channel \\#ops is muted.\n")
    write(vault, "sources/documents/drive/runbook.md", DOCUMENT + "\nThe channel \\#ops is muted.\n")
    write(vault, "entities/person/erin.md", "---\nkind: person\n---\n# Erin\n\nRuns \\#ops.\n")
    with Memory.open(_indexed_before(vault, monkeypatch, "0040")) as memory:
        assert memory.index.get_meta("needs_rebuild") is None
        assert memory.index.query("SELECT count(*) FROM notes WHERE sha256 = ''") == [(0,)], "none read again"
        leaves = [str(text) for (text,) in memory.index.query("SELECT text FROM leaves")]
        assert sum("\\#ops" in text for text in leaves) == 3, leaves


def test_an_index_holding_an_entity_heading_with_a_markup_escape_is_read_again(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entity note was read as written before: "# Ke$\\$ha Rose" (its `$$` escaped so that it
    opens no math) was its leaf and its title. Now it reads as it shows, in an index built
    since and in one upgraded alike."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    meta = 'vaultmind: entity\nid: "person:kesha-rose"\nkind: person\ndisplay_name: "Ke$$ha Rose"'
    write(vault, "entities/person/kesha-rose.md", f"---\n{meta}\n---\n# Ke$\\$ha Rose\n")
    old = [
        "UPDATE leaves SET text = '# Ke$\\$ha Rose' WHERE note_path LIKE 'entities/%'",
        "UPDATE notes SET title = 'Ke$\\$ha Rose' WHERE path LIKE 'entities/%'",
    ]
    with Memory.open(_indexed_before(vault, monkeypatch, "0040", then=old)) as memory:
        stats = memory.sync()
        assert not stats.rebuilt and stats.modified == 1, stats
        assert memory.index.query("SELECT text FROM leaves WHERE note_path LIKE 'entities/%'") == [("# Ke$$ha Rose",)]
        assert memory.index.query("SELECT title FROM notes WHERE path LIKE 'entities/%'") == [("Ke$$ha Rose",)]


def _old_note(display: str, *, body: str | None = None, extra: str = "") -> str:
    """An entity note as vaultmind wrote it before headings were escaped (`extra`: front matter
    lines you added; `body`: a body you edited, its recorded hash still the old heading's)."""
    recorded = body_sha256(f"# {display}\n")
    return (
        f'---\nvaultmind: entity\nid: "person:{display.split()[0].lower()}-x"\nkind: person\n'
        f'display_name: "{display}"\naliases: []\n{extra}vaultmind_body_sha256: "{recorded}"\n---\n'
        + (body if body is not None else f"# {display}\n")
    )


def test_an_entity_note_with_the_old_heading_is_escaped_once_keeping_your_keys(vault: Path) -> None:
    """vaultmind's own untouched note gets the escaped heading at the next sync (no tag #ops any
    more); one whose body you edited, and one whose name needs no escape, keep every byte."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    old = "entities/person/dana-whitfield-ops.md"
    edited = "entities/person/erin-ops.md"
    plain = "entities/person/fay-stone.md"
    write(vault, old, _old_note(NAME, extra='team: "ops"\n'))
    write(vault, edited, _old_note("Erin #ops", body="# Erin #ops\n\nmy notes on Erin\n"))
    write(vault, plain, _old_note("Fay Stone"))
    kept = {p: (vault / p).read_bytes() for p in (edited, plain)}
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert memory.index.query("SELECT tag FROM tags WHERE path = ?", [old]) == [("ops",)]
        create_entity_notes(memory)
        text = (vault / old).read_text(encoding="utf-8")
        fm = split_frontmatter(text)
        assert fm.body == "# Dana Whitfield \\#ops\n", text
        assert fm.data["team"] == "ops" and fm.data["vaultmind_body_sha256"] == body_sha256(fm.body), text
        before = _old_note(NAME, extra='team: "ops"\n')
        now = before.replace(body_sha256(f"# {NAME}\n"), body_sha256(fm.body)).replace(f"# {NAME}\n", fm.body)
        assert text == now, "only the heading and its hash change"
        assert memory.index.query("SELECT tag FROM tags WHERE path = ?", [old]) == [], "synced: no tag #ops"
        entry = entity_note_from(old, NAME, fm.data)
        assert entry is not None and entry.generated, "still vaultmind's"
        assert {p: (vault / p).read_bytes() for p in (edited, plain)} == kept, "yours, or nothing to escape"
        written = (vault / old).read_bytes()
        create_entity_notes(memory)
        assert (vault / old).read_bytes() == written, "once"


def test_an_old_entity_note_with_windows_line_endings_is_escaped_keeping_them(vault: Path) -> None:
    """A vault checked out with Windows line endings (git's autocrlf) holds vaultmind's note as
    it wrote it, each line ending in CR LF: it is vaultmind's (its body reads the same), so it
    gets the escaped heading too, its line endings kept."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    old = "entities/person/dana-whitfield-ops.md"
    before = _old_note(NAME, extra='team: "ops"\n')
    (vault / "entities" / "person").mkdir(parents=True)
    (vault / old).write_bytes(before.replace("\n", "\r\n").encode("utf-8"))
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        create_entity_notes(memory)
        escaped = "# Dana Whitfield \\#ops\n"
        now = before.replace(body_sha256(f"# {NAME}\n"), body_sha256(escaped)).replace(f"# {NAME}\n", escaped)
        assert (vault / old).read_bytes() == now.replace("\n", "\r\n").encode("utf-8")
        assert memory.index.query("SELECT tag FROM tags WHERE path = ?", [old]) == [], "synced: no tag #ops"


@pytest.mark.parametrize(
    ("line", "yours"),
    [
        (f'display_name: "{NAME}"', 'display_name: "Dana W."'),  # you renamed it: the note is yours
        ("vaultmind: entity", "vaultmind: mine"),  # you took it over
    ],
)
def test_an_old_entity_note_changed_on_disk_since_the_sync_is_not_written(vault: Path, line: str, yours: str) -> None:
    """The index says what the note was at the last sync; the note on disk is what counts. A
    note whose front matter you changed since (the sync ran, then its entities were looked
    for, which can take long) is not written with the heading of the name it had."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    old = "entities/person/dana-whitfield-ops.md"
    write(vault, old, _old_note(NAME))
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        text = (vault / old).read_text(encoding="utf-8")
        assert line in text
        write(vault, old, text.replace(line, yours))
        held = (vault / old).read_bytes()
        create_entity_notes(memory)
        assert (vault / old).read_bytes() == held


def test_an_old_entity_note_that_is_a_link_to_a_file_outside_the_vault_stays_a_link(tmp_path: Path, vault: Path) -> None:
    """An entity note you linked in from elsewhere (`dana.md -> ~/people/dana.md`) is indexed
    under the link's path; writing it would put a file in place of your link, the file it leads
    to left as it was: it is left alone."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    outside = tmp_path / "people" / "dana.md"
    outside.parent.mkdir()
    outside.write_text(_old_note(NAME), encoding="utf-8")
    link = vault / "entities" / "person" / "dana-whitfield-ops.md"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert memory.index.query("SELECT count(*) FROM notes WHERE path LIKE 'entities/%'") == [(1,)]
        create_entity_notes(memory)
        assert link.is_symlink() and outside.read_text(encoding="utf-8") == _old_note(NAME)
