"""A name's weight by how common it is in its conversation (`retrieval/name_weight.py`): in a
two-person chat where each calls the other by name, a call is no evidence of what a message is
about; a third person named once is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vaultmind.config import load_config
from vaultmind.index.resident import ChangeSet
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory
from vaultmind.retrieval.name_weight import distinctiveness

from .conftest import write, write_chat

CARO, MEL = "Lucinda Lind", "Melissa Ortiz"
SMALL = ("the weather is lovely", "the train was late", "I read a good book", "the garden looks green", "work was busy", "the cat slept")


def _person(vault: Path, slug: str, name: str, alias: str) -> None:
    write(
        vault,
        f"entities/person/{slug}.md",
        f'---\nvaultmind: entity\nid: "person:{slug}"\nkind: person\ndisplay_name: {name}\naliases:\n  - {alias}\n---\n# {name}\n',
    )


def _chat_walk(vault: Path, *questions: str) -> list[list[dict[str, Any]]]:
    """A week of chat between Lucinda and Melissa, who call each other "Luci" and "Mel" (in
    every message of hers, every other of Lucinda's); on the third day they talk of their
    families and of Bailey."""
    _person(vault, "melissa-ortiz", MEL, "Mel")
    _person(vault, "lucinda-lind", CARO, "Luci")
    _person(vault, "bailey-stone", "Bailey Stone", "Bailey")
    for day in range(1, 8):
        messages = []
        for i, said in enumerate(SMALL):
            messages += [(CARO, f"Hey Mel! Today {said}." if i % 2 else f"Today {said}."), (MEL, f"Nice, Luci! Here {SMALL[(i + day) % len(SMALL)]} too.")]
        if day == 3:
            messages += [
                (CARO, "Thanks, Mel! My family gives me strength, my family gives me a home."),
                (MEL, "My family gives me love and laughter, Luci."),
                (CARO, "Bailey Stone brought a cake to the pottery class."),
            ]
        write_chat(vault, f"2024-05-0{day}", messages)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        return [memory.walk(question)["hits"] for question in questions]


def test_the_weight_of_a_name_falls_with_its_share_of_the_conversation() -> None:
    assert distinctiveness(2, 2) == 1.0, "a short thread's names are no sign of a common name"
    assert distinctiveness(3, 400) == 1.0, "a third person named thrice in a long chat"
    assert 0.15 < distinctiveness(300, 400) < 0.2, "a speaker's name in three quarters of a chat"
    assert distinctiveness(200, 400) > distinctiveness(300, 400) > distinctiveness(400, 400) >= 0.0


def test_the_named_persons_own_message_outranks_the_other_speaker_calling_her(vault: Path) -> None:
    """"What does Melissa's family give her?": Lucinda's "Thanks, Mel! My family gives me
    strength…" holds more of the question's words, but "Mel" is in most messages of their
    chat: it tells of Lucinda's family (the other-author scaling holds), and Melissa's own
    answer leads."""
    (hits,) = _chat_walk(vault, "What does Melissa's family give her?")
    assert hits[0]["author"] == MEL and "love and laughter" in hits[0]["content"], [(h["author"], h["content"]) for h in hits[:3]]
    call = next(h for h in hits if h["content"].startswith("Thanks, Mel!"))
    assert call["breakdown"]["other_author"] and call["breakdown"]["entity"] < 0.25, call["breakdown"]


def test_a_rare_name_keeps_its_full_weight_and_the_partners_messages_little_proximity(vault: Path) -> None:
    """Bailey, named once, is a full match; Lucinda's messages that do not call Melissa earn
    little graph proximity from Lucinda being her strongest neighbour: Lucinda is in nearly
    every message of their chat, as author or called."""
    bailey, melissa = _chat_walk(vault, "What did Bailey bring?", "What did Melissa read?")
    assert bailey[0]["content"].startswith("Bailey Stone brought") and bailey[0]["breakdown"]["entity"] == 1.0
    partner = [h["breakdown"]["graph"] for h in melissa if h["author"] == CARO]
    assert partner and max(partner) < 0.25, partner


def test_a_message_belongs_to_the_conversation_of_its_notes_folder(vault: Path) -> None:
    """`ResidentLeaves.conversations`: a chat's days are one conversation, counted over its
    live messages; a document's section is in none."""
    write_chat(vault, "2024-05-01", [(CARO, "Morning."), (MEL, "Hi.")])
    write_chat(vault, "2024-05-02", [(CARO, "Evening.")])
    write(vault, "notes/plan.md", "# Plan\n\nThe garden plan for May.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        by_note = memory.leaves.of_notes(["sources/chat/two/2024-05-01.md", "sources/chat/two/2024-05-02.md", "notes/plan.md"])
        chat = by_note["sources/chat/two/2024-05-01.md"] + by_note["sources/chat/two/2024-05-02.md"]
        codes, sizes = memory.leaves.conversations(chat + by_note["notes/plan.md"])
    assert len(set(codes[:3].tolist())) == 1 and sizes[codes[0]] == 3, (codes, sizes)
    assert set(codes[3:].tolist()) == {-1}, codes


def test_a_conversations_messages_are_recounted_as_notes_come_and_go(vault: Path) -> None:
    """The counts follow the vault while it is served (the resident leaves updated, not
    reloaded): a day written into a chat's folder adds its messages to the chat's count, a day
    deleted takes them away, and a chat in a folder of its own is a conversation of its own."""
    for day in range(1, 9):
        write_chat(vault, f"2024-05-0{day}", [(CARO, f"Morning {day}."), (MEL, f"Hi {day}.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()

        def sizes() -> dict[str, int]:
            notes = sorted(p.relative_to(vault).as_posix() for p in (vault / "sources").rglob("*.md"))
            out: dict[str, int] = {}
            for note, leaf_ids in memory.leaves.of_notes(notes).items():
                codes, counts = memory.leaves.conversations(leaf_ids)
                assert len(set(codes.tolist())) == 1 and codes[0] >= 0, (note, codes)
                out[note.rpartition("/")[0]] = int(counts[codes[0]])
            return out

        assert sizes() == {"sources/chat/two": 16}
        write_chat(vault, "2024-05-09", [(CARO, "Evening."), (MEL, "Night."), (CARO, "Sleep well.")])
        memory.sync()
        assert sizes() == {"sources/chat/two": 19}
        (vault / "sources/chat/two/2024-05-01.md").unlink()
        memory.sync()
        assert sizes() == {"sources/chat/two": 17}
        meta = SourceMeta(kind="chat", source_id="chat:three", scope="chat/three", title="chat 2024-05-10")
        said = Message(message_id="m0", author=MEL, timestamp="2024-05-10T10:00:00Z", text="Hello.", source_ref="chat://three/m0")
        write(vault, "sources/chat/three/2024-05-10.md", render_source_note(meta, [said]))
        memory.sync()
        assert sizes() == {"sources/chat/two": 17, "sources/chat/three": 1}


def test_a_conversations_code_outlives_a_reload_of_the_leaves(vault: Path) -> None:
    """A walk reads a message's conversation, then its neighbours' (`name_weight._graph_weights`):
    a reload of the resident leaves in between (a rebuild, many leaves deleted) must not give
    the same chat another code. Here the chat whose rows a load meets first is rewritten, so
    that a reload meets the other's first."""
    write_chat(vault, "2024-05-01", [(CARO, "Morning."), (MEL, "Hi.")])
    meta = SourceMeta(kind="chat", source_id="chat:three", scope="chat/three", title="chat 2024-05-02")
    said = Message(message_id="m0", author=MEL, timestamp="2024-05-02T10:00:00Z", text="Hello.", source_ref="chat://three/m0")
    write(vault, "sources/chat/three/2024-05-02.md", render_source_note(meta, [said]))
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        notes = ["sources/chat/two/2024-05-01.md", "sources/chat/three/2024-05-02.md"]

        def codes() -> tuple[int, int]:
            by_note = memory.leaves.of_notes(notes)
            two, three = (int(memory.leaves.conversations(by_note[n][:1])[0][0]) for n in notes)
            return two, three

        before = codes()
        said = Message(message_id="m0", author=MEL, timestamp="2024-05-02T10:00:00Z", text="Hello again.", source_ref="chat://three/m0")
        write(vault, "sources/chat/three/2024-05-02.md", render_source_note(meta, [said]))
        memory.sync()
        memory.leaves.apply(ChangeSet(reset=True))
        assert codes() == before


def test_each_email_thread_of_a_mailbox_is_a_conversation_of_its_own(vault: Path) -> None:
    """A mailbox's threads are notes in folders of their own (`sources/email/<box>/<subject>/`):
    "Hi Helen" in every message of one thread with Helen makes her name common there, not in
    the mailbox's other threads."""
    for subject, day, messages in (("offsite", "2024-03-13", 3), ("budget", "2024-03-11", 2)):
        meta = SourceMeta(kind="email", source_id="email:inbox", scope=f"inbox/{subject}", title=subject, subject=subject)
        sent = [
            Message(message_id=f"{subject}-{i}", author="Helen Park <helen@example.com>", timestamp=f"{day}T1{i}:00:00Z", text=f"Hi Alex, about the {subject} ({i}).", source_ref=None)
            for i in range(messages)
        ]
        write(vault, f"sources/email/inbox/{subject}/{day}-{subject}.md", render_source_note(meta, sent))
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        notes = ["sources/email/inbox/offsite/2024-03-13-offsite.md", "sources/email/inbox/budget/2024-03-11-budget.md"]
        by_note = memory.leaves.of_notes(notes)
        offsite, budget = (memory.leaves.conversations(by_note[note]) for note in notes)
    assert len(set(offsite[0].tolist())) == 1 and len(set(budget[0].tolist())) == 1, (offsite, budget)
    assert offsite[0][0] >= 0 and budget[0][0] >= 0 and offsite[0][0] != budget[0][0]
    assert (offsite[1][offsite[0][0]], budget[1][budget[0][0]]) == (3, 2)
