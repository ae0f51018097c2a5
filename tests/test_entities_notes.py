"""Entity notes vaultmind creates once an entity has enough evidence."""

from __future__ import annotations

import errno
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vaultmind.config import load_config
from vaultmind.entities import notes
from vaultmind.entities.notes import create_entity_notes, planned_entity_notes
from vaultmind.markdown.frontmatter import body_sha256, split_frontmatter
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory
from vaultmind.tree.engine import seal_ready
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.vault import atomic

from .conftest import run_main, running_daemon, sealed_summaries, snapshot_files, write
from .treekit import tree_config
from .unprivileged import can_drop_privileges, run_unprivileged


def chat(name: str, messages: list[tuple[str, str]]) -> str:
    meta = SourceMeta("chat", f"slack:acme/{name}", f"slack/acme/{name}", name)
    return render_source_note(
        meta, [Message(f"m{i}", a, f"2024-03-04T09:{i:02d}:00Z", t) for i, (a, t) in enumerate(messages)]
    )


DANA = "Dana Whitfield <dana@harbor.example>"


@pytest.fixture
def mem(vault: Path) -> Iterator[Memory]:
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    write(
        vault,
        "sources/chat/venue.md",
        chat("venue", [(DANA, "the hall is free"), (DANA, "#launch ok"), ("@bob", "great")]),
    )
    write(
        vault,
        "sources/chat/other.md",
        chat("other", [(DANA, "invoice sent"), ("@bob", "thanks"), ("@bob", "paid")]),
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        yield memory


EXPECTED = """---
vaultmind: entity
id: "person:dana-whitfield"
kind: person
display_name: Dana Whitfield
aliases: []
emails:
  - dana@harbor.example
handles: []
vaultmind_body_sha256: "{sha}"
---
# Dana Whitfield
"""


def test_entities_with_enough_evidence_get_a_note(vault: Path, mem: Memory) -> None:
    created = create_entity_notes(mem).paths
    assert created == ["entities/person/dana-whitfield.md"]  # @bob is a handle: not a kind that gets notes
    text = (vault / created[0]).read_text(encoding="utf-8")
    assert text == EXPECTED.format(sha=body_sha256("# Dana Whitfield\n"))
    fm = split_frontmatter(text)
    assert fm.data["vaultmind_body_sha256"] == body_sha256(fm.body)
    row = mem.index.query(
        "SELECT note_path, emails, mentions FROM entities WHERE id = 'person:dana-whitfield'"
    )
    assert row == [("entities/person/dana-whitfield.md", ["dana@harbor.example"], 3)]
    assert create_entity_notes(mem).paths == []  # idempotent


def test_a_first_name_alone_gets_no_note(vault: Path, mem: Memory) -> None:
    write(vault, "sources/chat/more.md", chat("more", [("Marco", "a"), ("Marco", "b"), ("Marco", "c")]))
    mem.sync()
    assert mem.index.scalar("SELECT mentions FROM entities WHERE id = 'person:marco'") == 3
    assert [ident for ident, _, _ in planned_entity_notes(mem)] == ["person:dana-whitfield"]


def test_threshold_and_kinds_come_from_config(vault: Path, mem: Memory) -> None:
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\ncreate_threshold = 4\n')
    assert planned_entity_notes(Memory(load_config(vault, embed_provider="none"), mem.index, None)) == []
    write(
        vault,
        ".vaultmind/config.toml",
        '[entities]\nner_model = "off"\ncreate_threshold = 2\ncreate_kinds = ["handle", "topic"]\n',
    )
    planned = planned_entity_notes(Memory(load_config(vault, embed_provider="none"), mem.index, None))
    assert [(ident, path) for ident, path, _ in planned] == [("handle:bob", "entities/handle/bob.md")]


def test_a_file_differing_only_in_case_blocks_creation(vault: Path, mem: Memory) -> None:
    write(vault, "entities/person/Dana-Whitfield.md", "---\nvaultmind: readme\n---\nmine\n")
    mem.sync()
    assert [p for _, p, _ in planned_entity_notes(mem)] == ["entities/person/dana-whitfield.md"]
    before = snapshot_files(vault)
    assert create_entity_notes(mem).paths == []
    assert snapshot_files(vault) == before


def test_a_deleted_note_is_never_created_again(vault: Path, mem: Memory) -> None:
    (path,) = create_entity_notes(mem).paths
    (vault / path).unlink()
    mem.sync()
    assert create_entity_notes(mem).paths == []
    assert not (vault / path).exists()
    assert (vault / "entities/.created").read_text(encoding="utf-8") == "person:dana-whitfield\n"
    # the record is the vault's, not the derived state's: a vault without `.vaultmind/` (a
    # clone, the state deleted as it may be) still knows
    clone = vault.parent / "clone"
    shutil.copytree(vault, clone, ignore=shutil.ignore_patterns(".vaultmind"))
    write(clone, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    with Memory.open(load_config(clone, embed_provider="none")) as again:
        again.sync()
        assert create_entity_notes(again).paths == [] and not (clone / path).exists()


@pytest.mark.parametrize("record", [b"person:dana-whitfield\n\xff\xfe\n", None])  # not UTF-8; a folder
def test_a_record_that_cannot_be_read_creates_no_note(vault: Path, mem: Memory, record: bytes | None) -> None:
    """Which notes the person deleted is not known: none is written (one deleted would come
    back), the record is named as a problem, and `sync` ends well; once it reads, all is as before."""
    (vault / "entities").mkdir(exist_ok=True)
    if record is None:
        (vault / "entities/.created").mkdir()
    else:
        (vault / "entities/.created").write_bytes(record)
    written = create_entity_notes(mem)
    assert written.paths == [] and not (vault / "entities/person").exists()
    assert [(p.path, p.kind) for p in written.problems] == [("entities/.created", "entity_note_unwritten")]
    assert "could not read it" in written.problems[0].message
    assert "make it a readable UTF-8 file" in written.problems[0].message  # not "make that folder writable"
    assert [p["path"] for p in mem.status()["problems"]] == ["entities/.created"]
    mem.enrich()  # (the exception escaped it)
    if record is None:
        (vault / "entities/.created").rmdir()
    else:
        (vault / "entities/.created").write_text("person:bob\n", encoding="utf-8")
    assert create_entity_notes(mem).paths == ["entities/person/dana-whitfield.md"]
    assert mem.status()["problems"] == []


def test_a_note_whose_id_cannot_be_taken_back_out_of_the_record_is_written_at_the_next_sync(
    vault: Path, mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills up after the record is written: neither the note nor the record without
    its id can be written. The record said the note was created, so it was taken for one the
    person deleted and never written; now `status` names the note and why, and once there is
    room the next sync takes the id out and writes the note."""
    path = "entities/person/dana-whitfield.md"
    wrote: list[str] = []

    def full_after_the_first_write(target: str | Path, data: bytes, **options: Any) -> None:
        wrote.append(Path(target).name)
        if len(wrote) > 1:
            raise OSError(errno.ENOSPC, "No space left on device", str(target))
        atomic.write_atomic(target, data, **options)

    monkeypatch.setattr(notes, "write_atomic", full_after_the_first_write)
    written = create_entity_notes(mem)
    assert wrote == [".created", "dana-whitfield.md", ".created"]
    assert written.paths == [] and not (vault / path).exists()
    assert (vault / "entities/.created").read_text(encoding="utf-8") == "person:dana-whitfield\n"
    (problem,) = written.problems
    assert problem.path == path and "could not write it (No space left on device)" in problem.message
    assert "take `person:dana-whitfield` back out of entities/.created" in problem.message
    mem.sync()
    assert create_entity_notes(mem).paths == []  # still full: said again, nothing written
    assert [p["path"] for p in mem.status()["problems"]] == [path]
    monkeypatch.undo()  # room again
    mem.sync()
    assert create_entity_notes(mem).paths == [path]
    assert (vault / "entities/.created").read_text(encoding="utf-8") == "person:dana-whitfield\n"
    assert mem.status()["problems"] == []
    generation = mem.index.generation
    assert create_entity_notes(mem).paths == [] and mem.index.generation == generation


RECORD_UNWRITABLE_SCENARIO = """
import json
from vaultmind.config import load_config
from vaultmind.entities.notes import create_entity_notes
from vaultmind.memory import Memory

(vault / ".vaultmind").mkdir()
(vault / ".vaultmind" / "config.toml").write_text('[entities]\\nner_model = "off"\\n')
(vault / "sources" / "chat").mkdir(parents=True)
(vault / "sources" / "chat" / "venue.md").write_text(CHAT)
(vault / "entities" / "person").mkdir(parents=True)
with Memory.open(load_config(vault, embed_provider="none")) as memory:
    memory.sync()
    (vault / "entities").chmod(0o555)  # its record cannot be written; the person folder can
    written = create_entity_notes(memory)
    (vault / "entities").chmod(0o755)
    out = {
        "paths": written.paths,
        "problems": [p.path for p in written.problems],
        "on_disk": sorted(p.name for p in (vault / "entities" / "person").iterdir()),
    }
print(json.dumps(out))
"""


@pytest.mark.skipif(not can_drop_privileges(), reason="needs setpriv to drop root privileges")
def test_a_note_is_never_written_before_its_record() -> None:
    """The record (`entities/.created`) cannot be written: no note is, as one written without
    its record and deleted by the person would be created again."""
    venue = chat("venue", [(DANA, "the hall is free"), (DANA, "#launch ok"), (DANA, "invoice sent")])
    out = run_unprivileged(f"CHAT = {venue!r}\n" + RECORD_UNWRITABLE_SCENARIO)
    assert out == {"paths": [], "problems": ["entities/.created"], "on_disk": []}


def test_the_record_of_an_older_vaultmind_still_counts(vault: Path, mem: Memory) -> None:
    write(vault, ".vaultmind/entities-created.txt", "person:dana-whitfield\n")
    assert create_entity_notes(mem).paths == []


def test_an_existing_file_is_left_alone(vault: Path, mem: Memory) -> None:
    target = vault / "entities/person/dana-whitfield.md"
    write(
        vault, "entities/person/dana-whitfield.md", "---\nvaultmind: readme\n---\nnot an entity, but mine\n"
    )
    mem.sync()
    assert create_entity_notes(mem).paths == []
    assert target.read_text(encoding="utf-8") == "---\nvaultmind: readme\n---\nnot an entity, but mine\n"


def test_user_edits_to_a_created_note_are_honoured(vault: Path, mem: Memory) -> None:
    (path,) = create_entity_notes(mem).paths
    note = vault / path
    note.write_text(
        note.read_text(encoding="utf-8").replace("aliases: []", "aliases: [Dana, DW]")
        + "\nMet at the hall.\n",
        encoding="utf-8",
    )
    write(vault, "notes/a.md", "DW called; Dana will come.\n")
    mem.sync()
    assert mem.index.query("SELECT entity_id, surface FROM occurrences WHERE note_path = 'notes/a.md'") == [
        ("person:dana-whitfield", "DW")
    ]
    assert create_entity_notes(mem).paths == []
    assert "Met at the hall." in note.read_text(encoding="utf-8")



def test_a_summary_repeating_its_leaves_adds_no_evidence(vault: Path) -> None:
    def budget(count: int) -> None:
        line = "#budget the venue deposit number {} is paid in full today, the catering quote holds, and the band has the stage from eight until late."
        write(vault, "sources/chat/venue.md", chat("venue", [("@bob", line.format(i)) for i in range(count)]))

    budget(2)  # two leaves tagged #budget, and the summaries sealed over them repeat the tag
    config = tree_config(vault, **{"entities.create_threshold": 3, "entities.create_kinds": ["topic"],
                                   "trees.l0_tokens": 64})  # fmt: skip
    with Memory.open(config) as memory:
        memory.sync()
        seal_ready(memory, summarizer=FallbackSummarizer())
        memory.sync()
        assert memory.index.scalar("SELECT mentions FROM entities WHERE id = 'topic:budget'") >= 3
        assert planned_entity_notes(memory) == []  # two mentions, each counted once
        budget(3)  # a third leaf tagged #budget
        memory.sync()
        assert [ident for ident, _, _ in planned_entity_notes(memory)] == ["topic:budget"]


def test_a_titled_first_name_gets_no_note(vault: Path, mem: Memory) -> None:
    """"Dr. Dana" and "Auntie Lin" are one word of a name each (person:dana, person:lin): a note
    would claim "Dana" and "Lin" vault-wide, the "Thanks Dana" said to Dana Whitfield too."""
    for name in ("Dr. Dana", "Auntie Lin"):
        write(vault, f"sources/chat/{name[-4:]}.md", chat(name[-4:], [(name, "a"), (name, "b"), (name, "c")]))
    mem.sync()
    assert mem.index.scalar("SELECT mentions FROM entities WHERE id = 'person:dana'") == 3
    assert mem.index.scalar("SELECT mentions FROM entities WHERE id = 'person:lin'") == 3
    assert [ident for ident, _, _ in planned_entity_notes(mem)] == ["person:dana-whitfield"]


def _two_notes(vault: Path) -> None:
    """Dana Whitfield (a person) and #launch (a topic) each with enough evidence for a note."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\ncreate_threshold = 2\n')
    write(vault, "notes/tags.md", "#launch soon\n\n#launch now\n")
    write(vault, "notes/more.md", "#launch later\n")
    write(vault, "sources/chat/venue.md", chat("venue", [(DANA, "the hall"), (DANA, "is free"), (DANA, "ok")]))


def test_a_note_that_cannot_be_written_is_a_problem_and_the_others_are_written(vault: Path) -> None:
    """A file where the person folder should be: Dana's note cannot be written. The topic's
    still is, the problem names the path, and once the way is clear the note is written."""
    _two_notes(vault)
    write(vault, "entities/person", "in the way\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        written = create_entity_notes(memory)
        assert written.paths == ["entities/topic/launch.md"]
        (problem,) = written.problems
        assert problem.path == "entities/person/dana-whitfield.md"
        assert "(File exists: entities/person)" in problem.message and str(vault) not in problem.message
        problems = memory.status()["problems"]
        assert [(p["path"], p["kind"]) for p in problems] == [
            ("entities/person/dana-whitfield.md", "entity_note_unwritten")
        ]
        assert (vault / "entities/.created").read_text(encoding="utf-8") == "topic:launch\n"
        (vault / "entities/person").unlink()
        memory.sync()
        written = create_entity_notes(memory)
        assert written.paths == ["entities/person/dana-whitfield.md"] and written.problems == []
        assert memory.status()["problems"] == []
        generation = memory.index.generation
        assert create_entity_notes(memory).paths == []
        assert memory.index.generation == generation  # nothing to write, nothing to say: no commit


def test_sync_says_a_note_it_cannot_write_and_ends_well(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _two_notes(vault)
    write(vault, "entities/person", "in the way\n")
    code, out, err = run_main(capsys, "sync", "--vault", str(vault), "--json")
    assert code == 0, err
    assert out["enriched"]["entity_notes"] == ["entities/topic/launch.md"]
    assert [p["path"] for p in out["enriched"]["problems"]] == ["entities/person/dana-whitfield.md"]
    code, text, err = run_main(capsys, "sync", "--vault", str(vault))
    assert code == 0 and "entities/person/dana-whitfield.md: vaultmind could not write it" in text


@pytest.mark.slow
def test_the_daemon_seals_trees_when_an_entity_note_cannot_be_written(vault: Path) -> None:
    """The background upkeep writes entity notes, then seals trees: a note it cannot write is
    a problem `status` shows, and the summaries are sealed all the same."""
    write(vault, "entities/person", "in the way\n")
    config = load_config(
        vault,
        embed_provider="none",
        debounce_ms=50,
        step_ms=20,
        extra={
            "trees.l0_tokens": 64,
            "trees.summarizer": "fallback",
            "admission.llm": False,
            "entities.ner_model": "off",
        },
    )
    with running_daemon(config) as (memory, daemon):
        messages = [(DANA, f"Deploy step {i} of the lighthouse service finished without errors.") for i in range(12)]
        write(vault, "sources/chat/ops.md", chat("ops", messages))
        summaries = sealed_summaries(vault)
        assert summaries, f"no summary sealed (upkeep error: {daemon.trees.last_error})"
        assert daemon.trees.last_error is None
        problems = memory.status()["problems"]
        assert [(p["path"], p["kind"]) for p in problems] == [
            ("entities/person/dana-whitfield.md", "entity_note_unwritten")
        ]


def test_a_chinese_or_japanese_full_name_gets_a_note_and_a_korean_name_is_found_before_its_particle(
    vault: Path,
) -> None:
    """王小明 and 田中太郎 each write three messages: each is a full name, though written without
    spaces, and gets a note (a name in kana, "さくら", is a given name and gets none); the note
    "Kim Minsu" with the alias 김민수 is found in "김민수가 …" and "김민수를 …", as in "김민수 씨"."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    write(vault, "sources/chat/team.md", chat("team", [
        (who, text) for who in ("王小明", "田中太郎", "さくら") for text in ("The report is ready.", "Looks fine.", "Great.")
    ]))  # fmt: skip
    write(vault, "entities/person/kim-minsu.md", "---\nid: \"person:kim-minsu\"\nkind: person\ndisplay_name: Kim Minsu\naliases: [김민수]\n---\n# Kim Minsu\n")
    for name, text in (("ko1", "김민수 씨는 내일 떠난다."), ("ko2", "김민수가 회의에 왔다."), ("ko3", "오늘 김민수를 만났다.")):
        write(vault, f"Journal/{name}.md", text + "\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert sorted(create_entity_notes(memory).paths) == ["entities/person/王小明.md", "entities/person/田中太郎.md"]
        for name in ("ko1", "ko2", "ko3"):
            rows = memory.index.query("SELECT entity_id, surface FROM occurrences WHERE note_path = ?", [f"Journal/{name}.md"])
            assert [tuple(r) for r in rows] == [("person:kim-minsu", "김민수")], name
