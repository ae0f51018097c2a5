"""Who talks with whom (`entities/talks.py`): replies in a chat and mails to their recipients
relate people that no leaf names together, kept equal to a cold rebuild."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from vaultmind.config import Config, load_config
from vaultmind.entities.read import neighbours
from vaultmind.entities.registry_store import load_registry
from vaultmind.entities.talks import insert_talks
from vaultmind.index.store import Index
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory

from .conftest import write

TALKS = "SELECT * FROM talks ORDER BY ALL"


def _chat(vault: Path, day: str, messages: list[tuple[str, str, str]]) -> None:
    """A group chat's day of `(author, HH:MM, text)` messages."""
    meta = SourceMeta(kind="chat", source_id="whatsapp:crew", scope="whatsapp/crew", title=f"crew {day}")
    msgs = [Message(f"{day}-{i}", who, f"{day}T{at}:00Z", text) for i, (who, at, text) in enumerate(messages)]
    write(vault, f"sources/chat/whatsapp/crew/{day}.md", render_source_note(meta, msgs))


def _mail(vault: Path, rel: str, sender: str, to: tuple[str, ...], text: str) -> None:
    meta = SourceMeta(kind="email", source_id="mbox:inbox", scope="mail/inbox", title="Budget")
    message = Message("<m1@x>", sender, "2024-05-02T12:00:00Z", text, subject="Budget", to=to)
    write(vault, rel, render_source_note(meta, [message]))


def _cold(config: Config) -> list[tuple[object, ...]]:
    with Memory(config, Index.open(None), None) as fresh:
        fresh.reindex()
        return fresh.index.query(TALKS)


def _week(vault: Path) -> None:
    _chat(vault, "2024-05-02", [
        ("Maya Patel", "09:00", "Morning all! Are we still on for Saturday?"),
        ("Luca Romano", "09:03", "Yes! Bring snacks."),
        ("Sean Obi", "09:10", "Count me in."),
        ("Maya Patel", "09:12", "Great, see you there."),
    ])  # fmt: skip
    _chat(vault, "2024-05-03", [
        ("Priya Shah", "18:00", "Sorry, just saw this. Sure, the dog comes along."),
        ("Sean Obi", "18:05", "Got the tickets."),
        ("Maya Patel", "18:07", "Perfect, thanks both."),
        ("Luca Romano", "23:30", "Late reply: all good."),
    ])  # fmt: skip
    for ident, name in (("maya-patel", "Maya Patel"), ("daniel-kim", "Daniel Kim")):
        write(vault, f"entities/person/{ident}.md", f'---\nvaultmind: entity\nid: "person:{ident}"\ndisplay_name: {name}\n---\n# {name}\n')
    write(vault, "notes/team.md", "# Team\n\nMaya Patel and Daniel Kim joined the design review.\n")


def test_the_people_of_a_chat_are_neighbours_by_their_replies(vault: Path) -> None:
    _week(vault)
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        found = neighbours(memory.index, "person:maya-patel")["neighbours"]
        luca = {n["id"] for n in neighbours(memory.index, "person:luca-romano")["neighbours"]}
    top = [(n["id"], n["weight"], n["talks"]) for n in found]
    assert [ident for ident, _, _ in top[:3]] == ["person:sean-obi", "person:luca-romano", "person:priya-shah"], top
    # Sean answers Maya at 09:10 (her message before last), she answers him at 09:12 and 18:07
    assert [talks for _, _, talks in top[:3]] == [3, 2, 1]
    assert ("person:daniel-kim", 1, 0) in top, "a leaf naming both still counts, and only that"
    assert "person:priya-shah" not in luca, "five hours later is no reply"


def test_a_mails_sender_and_recipients_are_neighbours(vault: Path) -> None:
    _mail(vault, "sources/email/inbox/budget.md", "Rachel Green <rachel@atlas.example>", ("Daniel Kim <dkim@atlas.example>",), "Please send the revised budget.")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        found = neighbours(memory.index, "person:rachel-green")["neighbours"]
    assert [(n["id"], n["weight"], n["talks"]) for n in found] == [("person:daniel-kim", 0, 1)]


def test_talks_follow_edits_deletions_renames_and_the_registry_as_a_cold_rebuild(vault: Path) -> None:
    _week(vault)
    _mail(vault, "sources/email/inbox/budget.md", "Bob Stone <bob@x.example>", ("Ally <ally@fernhill.example>",), "The budget is done.")
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        assert memory.index.query(TALKS) == _cold(config)
        edits = [
            lambda: _chat(vault, "2024-05-03", [  # a message deleted, one edited, the gap closed
                ("Priya Shah", "18:00", "Sorry, just saw this."),
                ("Maya Patel", "18:07", "Perfect, thanks Priya."),
                ("Luca Romano", "18:30", "All good."),
            ]),
            lambda: (vault / "sources/chat/whatsapp/crew/2024-05-02.md").rename(vault / "sources/chat/whatsapp/crew/moved.md"),
            lambda: write(  # the recipient "Ally" is now Alice Chen: the mail's leaf is not derived again
                vault,
                "entities/person/alice-chen.md",
                '---\nvaultmind: entity\nid: "person:alice-chen"\ndisplay_name: Alice Chen\naliases: ["Ally"]\n'
                'emails: ["ally@fernhill.example"]\n---\n# Alice Chen\n',
            ),
            lambda: (vault / "sources/chat/whatsapp/crew/2024-05-03.md").unlink(),
        ]
        for step, edit in enumerate(edits):
            edit()
            memory.sync()
            assert memory.index.query(TALKS) == _cold(config), f"step {step}"
        assert ("sources/email/inbox/budget.md", "person:alice-chen", "person:bob-stone", 1) in memory.index.query(TALKS)


def test_an_index_derived_before_talks_is_filled_by_the_next_sync(vault: Path) -> None:
    """An index from before `talks` (migration 0041 creates it empty) holds an older entity
    signature: the next sync re-derives the graph and fills it."""
    _week(vault)
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        memory.index.con.execute("DELETE FROM talks")
        memory.index.con.execute("UPDATE meta SET value = 'before talks' WHERE key = 'entities.signature'")
    with Memory.open(config) as memory:
        memory.sync()
        assert memory.index.query(TALKS) == _cold(config) != []


def test_talks_equal_a_cold_rebuild_when_a_message_by_no_one_known_goes_or_an_author_changes(vault: Path) -> None:
    """A message whose author names no one ("unknown", a phone number) has no occurrence, yet
    it stands between others: deleting it brings Luca's answer within reach of Maya's message.
    Also a message whose author is changed, a self-reply, and a mail copied to its sender."""
    day = "2024-05-04"
    _chat(vault, day, [
        ("Maya Patel", "09:00", "Who has the keys?"),
        ("unknown", "09:01", "Not me."),
        ("+1 555 0100", "09:02", "Nor me."),
        ("???", "09:03", "Ask Luca."),
        ("Luca Romano", "09:04", "I have them."),
        ("Luca Romano", "09:05", "And the map."),
    ])  # fmt: skip
    _mail(vault, "sources/email/inbox/budget.md", "Bob Stone <bob@x.example>", ("Bob Stone <bob@x.example>", "Daniel Kim <dkim@x.example>"), "The budget is done.")
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        assert memory.index.query(TALKS) == _cold(config)
        assert [r[1:] for r in memory.index.query(TALKS)] == [("person:bob-stone", "person:daniel-kim", 1)], "no self-talk"
        edits = [
            lambda: _chat(vault, day, [  # the unknown author's message goes; nothing else changes
                ("Maya Patel", "09:00", "Who has the keys?"),
                ("+1 555 0100", "09:02", "Nor me."),
                ("???", "09:03", "Ask Luca."),
                ("Luca Romano", "09:04", "I have them."),
                ("Luca Romano", "09:05", "And the map."),
            ]),
            lambda: _chat(vault, day, [  # an author changes
                ("Maya Patel", "09:00", "Who has the keys?"),
                ("+1 555 0100", "09:02", "Nor me."),
                ("Sean Obi", "09:03", "Ask Luca."),
                ("Luca Romano", "09:04", "I have them."),
                ("Luca Romano", "09:05", "And the map."),
            ]),
        ]
        for step, edit in enumerate(edits):
            edit()
            memory.sync()
            assert memory.index.query(TALKS) == _cold(config), f"step {step}"


@pytest.mark.slow
def test_computing_the_talks_of_many_notes_holds_a_bounded_share_of_their_messages(vault: Path) -> None:
    """A whole re-derivation computes the talks of thousands of notes in one step: their
    messages are read a batch at a time, so the memory it takes does not grow with them
    (it held every message of the slice: +34 MB of peak at 10k notes)."""
    people = ("Maya Patel", "Luca Romano", "Sean Obi", "Priya Shah")
    for n in range(16):  # 600 messages a day: what grows is what is read, not the pairs found
        _chat(vault, f"2024-05-{n + 1:02d}", [(people[(i * 3 + n) % 4], f"{8 + i // 60:02d}:{i % 60:02d}", f"Point {i} of the plan, day {n}.") for i in range(600)])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        con = memory.index.con
        registry = load_registry(con, fuzzy_threshold=90.0)
        notes = [str(r[0]) for r in con.execute("SELECT DISTINCT note_path FROM leaves WHERE kind = 'message' ORDER BY 1").fetchall()]

        def peak(some: list[str]) -> int:
            con.execute("BEGIN")
            tracemalloc.start()
            try:
                insert_talks(con, registry, some)
                return tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
                con.execute("ROLLBACK")

        assert len(notes) == 16
        quarter, whole = peak(notes[:4]), peak(notes)  # 2,400 and 9,600 messages
    assert whole < 2.5 * quarter, (quarter, whole)  # every message held: about 4 times
