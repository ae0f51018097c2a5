"""The entity graph kept incrementally equals a cold rebuild, whatever the sequence of edits.

Uses the real spaCy model when it is installed (NER degrades to regex + registry otherwise;
the invariant holds either way).
"""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from vaultmind.config import Config, load_config
from vaultmind.entities.backfill import backfill_ner, complete_ner, entity_deriver, ner_pending
from vaultmind.entities.graph import EntityDeriver
from vaultmind.entities.settings import EntitySettings
from vaultmind.index.store import Index
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory
from vaultmind.sync import Syncer

from .conftest import dump_index, write

ENTITY_QUERIES = {
    "entities": "SELECT * FROM entities ORDER BY ALL",
    "occurrences": "SELECT * FROM occurrences ORDER BY ALL",
    "edges": "SELECT * FROM edges ORDER BY ALL",
    "talks": "SELECT * FROM talks ORDER BY ALL",
}

PEOPLE = ["Alice Chen", "Bob Stone", "Dana Whitfield", "Marco Ruiz", "Priya Raman", "Alex"]
ORGS = ["Fernhill Labs", "Harbor Hall", "Google", "the Dublin Port Company"]
EXTRAS = [
    "#launch",
    "#budget",
    "@bob.stone",
    "dana@harbor.example",
    "https://example.com/plan",
    "+353 85 123 4567",
]
SENTENCES = [
    "{p} met {q} at {o} to talk about {x}.",
    "{p} wrote to {q} about the offsite with {o}.",
    "Notes: {x} and {p}; ask {o} again.",
    "nothing to see here, just lowercase chatter",
    "{q} and {p} signed the contract with {o} in Paris.",
]
ENTITY_NOTES = {
    "entities/person/alice-chen.md": ("person:alice-chen", "Alice Chen", ["Alice", "Ali", "AC", "Ally"]),
    "entities/person/bob-stone.md": ("person:bob-stone", "Bob Stone", ["Bob", "Bobby", "person:marco-ruiz"]),
    "entities/person/dana-whitfield.md": ("person:dana-whitfield", "Dana Whitfield", ["Dana", "Alex"]),
    "entities/person/alex-kim.md": ("person:alex-kim", "Alex Kim", ["Alex", "Bob Stone"]),
    "entities/org/fernhill-labs.md": ("org:fernhill-labs", "Fernhill Labs", ["Fernhill", "the studio"]),
}


def dump_entities(memory: Memory) -> dict[str, list[tuple[object, ...]]]:
    return {name: memory.index.query(sql) for name, sql in ENTITY_QUERIES.items()}


def cold_rebuild(config: Config) -> dict[str, list[tuple[object, ...]]]:
    with Memory(config, Index.open(None), None) as fresh:
        fresh.reindex()
        complete_ner(fresh)
        return dump_entities(fresh)


class Writer:
    def __init__(self, vault: Path, rng: random.Random):
        self.vault = vault
        self.rng = rng
        self.tick = 1_700_000_000_000_000_000

    def put(self, rel: str, text: str) -> None:
        path = write(self.vault, rel, text)
        self.tick += 1_000_000_000
        os.utime(path, ns=(self.tick, self.tick))

    def sentence(self) -> str:
        r = self.rng
        return r.choice(SENTENCES).format(
            p=r.choice(PEOPLE), q=r.choice(PEOPLE), o=r.choice(ORGS), x=r.choice(EXTRAS)
        )

    def user_note(self) -> str:
        sections = [
            " ".join(self.sentence() for _ in range(self.rng.randint(1, 2)))
            for _ in range(self.rng.randint(1, 3))
        ]
        return "\n\n".join(f"## Part {i}\n\n{text}" for i, text in enumerate(sections)) + "\n"

    def chat_note(self, scope: str) -> str:
        r = self.rng
        authors = [*PEOPLE, "Dana Whitfield <dana@harbor.example>", "@bob.stone", "alice@fernhill.example"]
        messages = [
            Message(f"m{i}", r.choice(authors), f"2024-03-0{r.randint(1, 9)}T09:{i:02d}:00Z", self.sentence())
            for i in range(r.randint(1, 4))
        ]
        return render_source_note(SourceMeta("chat", f"slack:{scope}", f"slack/{scope}", scope), messages)

    def mail_note(self, scope: str) -> str:
        """A thread of mails to people some entity notes' aliases name ("Ally", "Bobby"): who
        a recipient is moves with the registry."""
        r = self.rng
        people = ["Ally <ally@fernhill.example>", "Bobby <bobby@harbor.example>", "Dana Whitfield <dana@harbor.example>", "Marco Ruiz <marco@x.example>"]
        messages = [
            Message(
                f"<{scope}-{i}@x>", r.choice(people), f"2024-03-0{r.randint(1, 9)}T1{i}:00:00Z", self.sentence(),
                subject="Offsite", to=tuple(r.sample(people, r.randint(1, 2))), cc=tuple(r.sample(people, r.randint(0, 1))),
            )
            for i in range(r.randint(1, 3))
        ]
        return render_source_note(SourceMeta("email", f"mbox:{scope}", f"mail/{scope}", scope), messages)

    def entity_note(self, rel: str) -> str:
        ident, display, pool = ENTITY_NOTES[rel]
        aliases = [a for a in pool if self.rng.random() < 0.5]
        items = "[" + ", ".join(f'"{a}"' for a in aliases) + "]"
        body = "# " + display + "\n" + (f"\n{self.sentence()}\n" if self.rng.random() < 0.5 else "")
        return (
            f'---\nvaultmind: entity\nid: "{ident}"\ndisplay_name: {display}\naliases: {items}\n---\n{body}'
        )


def _existing(vault: Path) -> list[str]:
    return sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "targeted"), [(1, 1.0), (2, 1.0), (5, 0.5), (4, 0.0)])
def test_random_edits_equal_a_cold_rebuild(vault: Path, seed: int, targeted: float) -> None:
    """`targeted`: share of the leaves a registry change may re-derive before all are recomputed."""
    rng = random.Random(seed)
    w = Writer(vault, rng)
    config = load_config(vault, embed_provider="none")
    deriver = EntityDeriver(EntitySettings.from_config(config), targeted_max_share=targeted)
    modes: set[str] = set()
    with Index.open(config.index_path) as index:
        memory = Memory(config, index, None)
        syncer = Syncer(config, index, None, None, [deriver])
        for step in range(30):
            op = rng.random()
            changed: list[str] = []
            if op < 0.3:
                rel = f"notes/n{rng.randint(0, 5)}.md"
                w.put(rel, w.user_note())
                changed.append(rel)
            elif op < 0.42:
                rel = f"sources/chat/c{rng.randint(0, 2)}.md"
                w.put(rel, w.chat_note(f"team/c{rel[-4]}"))
                changed.append(rel)
            elif op < 0.5:
                rel = f"sources/email/m{rng.randint(0, 1)}.md"
                w.put(rel, w.mail_note(f"m{rel[-4]}"))
                changed.append(rel)
            elif op < 0.7:
                rel = rng.choice(sorted(ENTITY_NOTES))
                w.put(rel, w.entity_note(rel))
                changed.append(rel)
            elif op < 0.8:
                chats = [p for p in _existing(vault) if p.startswith("sources/")]
                if chats:  # a copy keeps the source_id: the same leaf ids in two notes
                    src = rng.choice(chats)
                    dst = f"sources/copies/{step}.md"
                    (vault / dst).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(vault / src, vault / dst)
                    changed.append(dst)
            elif op < 0.9:
                files = _existing(vault)
                if files:
                    victim = rng.choice(files)
                    (vault / victim).unlink()
                    changed.append(victim)
            else:
                files = [p for p in _existing(vault) if p.startswith(("notes/", "sources/"))]
                if files:
                    src = rng.choice(files)
                    dst = f"{src.split('/', 1)[0]}/moved-{step}.md"
                    (vault / src).rename(vault / dst)
                    changed.extend([src, dst])
            if rng.random() < 0.5:
                syncer.sync_all()
            else:
                syncer.sync_paths(changed)
            modes.add(deriver.last["mode"])
            if step % 10 == 9:
                backfill_ner(index, deriver)
                assert dump_entities(memory) == cold_rebuild(config), f"step {step}"
        backfill_ner(index, deriver)
        final = dump_entities(memory)
    assert final["occurrences"], "the random vault mentions entities"
    assert final["talks"], "its people talk with each other"
    assert final == cold_rebuild(config)
    assert "leaves" in modes and ("registry" in modes or targeted == 0), modes


def test_edges_count_distinct_leaves_even_when_a_leaf_is_in_two_notes(vault: Path) -> None:
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    meta = SourceMeta("chat", "slack:acme/general", "slack/acme/general", "general")
    text = render_source_note(
        meta,
        [
            Message("m1", "Alice <alice@example.com>", "2024-03-04T09:00:00Z", "ping @bob about #launch"),
            Message("m2", "@bob", "2024-03-04T09:05:00Z", "#launch is on, alice@example.com"),
        ],
    )
    write(vault, "sources/chat/a.md", text)
    write(vault, "sources/chat/copy-of-a.md", text)
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        edges = memory.index.query("SELECT a, b, weight FROM edges ORDER BY ALL")
        assert edges == [
            ("email:alice@example.com", "handle:bob", 1),
            ("email:alice@example.com", "topic:launch", 1),
            ("handle:bob", "person:alice", 1),
            ("handle:bob", "topic:launch", 2),
            ("person:alice", "topic:launch", 1),
        ]
        mentions = dict(memory.index.query("SELECT id, mentions FROM entities"))
        assert mentions == {
            "person:alice": 1,
            "handle:bob": 2,
            "topic:launch": 2,
            "email:alice@example.com": 1,
        }
        assert memory.index.scalar("SELECT count(*) FROM occurrences") == 12  # 6 per copy
        (vault / "sources/chat/copy-of-a.md").unlink()
        memory.sync()
        assert memory.index.query("SELECT a, b, weight FROM edges ORDER BY ALL") == edges
        assert dump_entities(memory) == cold_rebuild(config)


@contextmanager
def _ner_deferred(vault: Path, a: str, b: str) -> Iterator[tuple[Config, Memory, EntityDeriver]]:
    """notes/a.md and notes/b.md synced with NER left to `backfill_ner` (skipped without a model)."""
    write(vault, ".vaultmind/config.toml", "[entities]\nner_inline = 0\n")
    write(vault, "notes/a.md", a)
    write(vault, "notes/b.md", b)
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        deriver = entity_deriver(memory)
        assert deriver is not None
        if not deriver.ner.available:
            pytest.skip(deriver.ner.status()["message"])
        memory.sync()
        yield config, memory, deriver


def test_large_batches_defer_ner_and_backfill_completes_it(vault: Path) -> None:
    a, b = "Dana Whitfield met Marco Ruiz at Google in Paris.\n", "Marco Ruiz phoned Dana Whitfield. #launch\n"
    with _ner_deferred(vault, a, b) as (config, memory, deriver):
        assert ner_pending(memory.index, deriver) == 2
        assert {r[0] for r in memory.index.query("SELECT entity_id FROM occurrences")} == {"topic:launch"}
        assert complete_ner(memory) == 2
        assert ner_pending(memory.index, deriver) == 0
        found = {r[0] for r in memory.index.query("SELECT entity_id FROM occurrences")}
        assert {"person:dana-whitfield", "person:marco-ruiz", "topic:launch"} <= found
        assert dump_entities(memory) == cold_rebuild(config.with_(extra={}))


@pytest.mark.parametrize(("inline", "pending"), [(3, 5), (10, 0)])
def test_a_rebuild_runs_ner_on_all_its_new_texts_or_on_none(
    vault: Path, monkeypatch: pytest.MonkeyPatch, inline: int, pending: int
) -> None:
    """A first index rebuilds the entity rows in chunks. The inline budget holds for all of
    them at once: five new texts against a budget of three leave all five to `backfill_ner`,
    even when the last chunk (one text) would fit it; against a budget of ten all five run."""
    from vaultmind.entities import graph

    monkeypatch.setattr(graph, "REBUILD_CHUNK", 4)
    write(vault, ".vaultmind/config.toml", f"[entities]\nner_inline = {inline}\n")
    people = ["Dana Whitfield", "Marco Ruiz", "Priya Natarajan", "Tomas Lindqvist", "Aiko Tanaka"]
    for k, person in enumerate(people):
        write(vault, f"notes/n{k}.md", f"{person} flew to Lisbon on Tuesday.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        deriver = entity_deriver(memory)
        assert deriver is not None
        if not deriver.ner.available:
            pytest.skip(deriver.ner.status()["message"])
        ran: list[int] = []
        analyze = deriver.ner.analyze
        monkeypatch.setattr(deriver.ner, "analyze", lambda texts: ran.append(len(texts)) or analyze(texts))
        memory.sync()
        assert deriver.last["mode"] == "full"
        assert ner_pending(memory.index, deriver) == pending
        assert sum(ran) == len(people) - pending


def test_backfill_derives_with_the_rows_and_texts_it_fetched_without_reading_them_again(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step's texts are shared by many leaves at scale ("Thanks!"): reading them again by
    leaf id had DuckDB scan the whole text column (+80 MB at 50k notes), and looking the rows
    up by id loaded the `leaves_id` index (~20 MB)."""
    from vaultmind.entities import graph

    text = "Dana Whitfield met Marco Ruiz at Google in Paris.\n"
    with _ner_deferred(vault, text, text) as (config, memory, _deriver):  # two leaves, one text
        read: list[str] = []
        leaf_texts, leaf_rows = graph._leaf_texts, graph._leaf_rows

        def texts_counted(con: Any, keys: Any) -> Any:
            read.append("texts")
            return leaf_texts(con, keys)

        def rows_counted(con: Any, ids: Any) -> Any:
            read.append("rows")
            return leaf_rows(con, ids)

        monkeypatch.setattr(graph, "_leaf_texts", texts_counted)
        monkeypatch.setattr(graph, "_leaf_rows", rows_counted)
        assert complete_ner(memory) == 1
        assert read == []
        people = dict(memory.index.query(
            "SELECT l.note_path, count(*) FROM occurrences o JOIN leaves l ON l.id = o.leaf_id "
            "WHERE o.entity_id LIKE 'person:%' GROUP BY ALL"
        ))  # fmt: skip
        assert people == {"notes/a.md": 2, "notes/b.md": 2}
        monkeypatch.undo()
        assert dump_entities(memory) == cold_rebuild(config.with_(extra={}))


@pytest.mark.parametrize("fits", [True, False])
def test_ner_scans_run_under_a_small_pool_and_under_the_full_one_when_it_does_not_do(
    vault: Path, monkeypatch: pytest.MonkeyPatch, fits: bool
) -> None:
    """Finding the texts that wait for NER and the leaves holding them scans every leaf: on one
    thread under `FETCH_MEMORY_LIMIT`, so that the blocks met do not stay in DuckDB's pool; when
    no small pool will do, under the full one, and nothing is lost."""
    from vaultmind.entities import backfill
    from vaultmind.index import store

    def settings(index: Index) -> tuple[str, int]:
        return index.con.execute("SELECT current_setting('memory_limit'), current_setting('threads')").fetchone()

    a, b = "Dana Whitfield met Marco Ruiz at Google in Paris.\n", "Marco Ruiz phoned Dana Whitfield. #launch\n"
    with _ner_deferred(vault, a, b) as (config, memory, deriver):
        before = settings(memory.index)
        if not fits:  # a pool below DuckDB's pinned blocks, and no room above them either
            monkeypatch.setattr(backfill, "FETCH_MEMORY_LIMIT", "1KB")
            monkeypatch.setattr(store, "SMALL_POOL_HEADROOM", -(2**40))
        scans: list[tuple[str, int]] = []
        pending_texts, leaves_holding = backfill.pending_texts, backfill._leaves_holding

        def texts_seen(*args: Any) -> Any:
            scans.append(settings(memory.index))
            return pending_texts(*args)

        def holders_seen(*args: Any) -> Any:
            scans.append(settings(memory.index))
            return leaves_holding(*args)

        monkeypatch.setattr(backfill, "pending_texts", texts_seen)
        monkeypatch.setattr(backfill, "_leaves_holding", holders_seen)
        assert complete_ner(memory) == 2
        assert scans == [("30.5 MiB" if fits else before[0], 1)] * 2  # 32 MB, or the full pool
        assert settings(memory.index) == before
        assert ner_pending(memory.index, deriver) == 0
        monkeypatch.undo()
        assert dump_entities(memory) == cold_rebuild(config.with_(extra={}))


def test_a_copy_saved_while_ner_runs_gets_the_entities_of_its_text(vault: Path) -> None:
    """Background NER finds the leaves of each text once per fetch; a save committed while the
    model runs (here: copies of both texts) must not leave a new leaf without its entities."""
    texts = ["Dana Whitfield met Marco Ruiz at Google in Paris.\n", "Priya Raman phoned Alice Chen. #launch\n"]
    with _ner_deferred(vault, *texts) as (config, memory, deriver):
        analyze = deriver.ner.analyze

        def save_copies_then_analyze(batch: list[str]) -> Any:
            if not (vault / "notes/copy-a.md").exists():
                write(vault, "notes/copy-a.md", texts[0])
                write(vault, "notes/copy-b.md", texts[1])
                memory.sync()
            return analyze(batch)

        deriver.ner.analyze = save_copies_then_analyze  # type: ignore[method-assign]
        assert backfill_ner(memory.index, deriver, batch=1) == 2
        people = dict(memory.index.query(
            "SELECT l.note_path, count(*) FROM occurrences o JOIN leaves l ON l.id = o.leaf_id "
            "WHERE o.entity_id LIKE 'person:%' GROUP BY ALL"
        ))  # fmt: skip
        assert people == {"notes/a.md": 2, "notes/b.md": 2, "notes/copy-a.md": 2, "notes/copy-b.md": 2}
        assert dump_entities(memory) == cold_rebuild(config.with_(extra={}))


def test_registry_edits_rederive_only_the_leaves_they_can_affect(vault: Path) -> None:
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    w = Writer(vault, random.Random(7))
    note = "entities/person/juergen.md"

    def person(aliases: list[str], emails: list[str] = (), handles: list[str] = ()) -> str:  # type: ignore[assignment]
        def q(items: list[str]) -> str:
            return "[" + ", ".join(f'"{i}"' for i in items) + "]"

        return f"---\nid: person:juergen-gross\ndisplay_name: Jürgen Groß\naliases: {q(aliases)}\nemails: {q(list(emails))}\nhandles: {q(list(handles))}\n---\n# Jürgen\n"

    w.put(note, person([]))
    w.put("notes/de.md", "Treffen mit JÜRGEN GROSS und Jue in der Straße.\n")
    w.put("notes/mail.md", "Write to jg@example.com or @jgross, see [[juergen|him]].\n")
    w.put("notes/jp.md", "会議 with Jue 🙂\n")
    for i in range(12):
        w.put(f"notes/other-{i}.md", f"Nothing about anyone here, note {i}.\n")
    w.put("sources/chat/c.md", Writer(vault, random.Random(1)).chat_note("team/c"))
    config = load_config(vault, embed_provider="none")
    deriver = EntityDeriver(EntitySettings.from_config(config), targeted_max_share=1.0)
    with Index.open(config.index_path) as index:
        memory = Memory(config, index, None)
        syncer = Syncer(config, index, None, None, [deriver])
        syncer.sync_all()
        total = int(index.scalar("SELECT count(*) FROM leaves"))
        for aliases, emails, handles in (
            (["Jue"], [], []),
            (["Jue", "Jürgen Gross"], ["JG@example.com"], ["@jgross"]),
            (["Jürgen Gross"], ["jg@example.com"], []),
            ([], [], []),
        ):
            w.put(note, person(aliases, emails, handles))
            syncer.sync_paths([note])
            assert deriver.last["mode"] == "registry"
            assert deriver.last["leaves"] < total
            assert dump_entities(memory) == cold_rebuild(config)
        found = index.query("SELECT entity_id FROM occurrences WHERE note_path = 'notes/de.md'")
        assert found == [("person:juergen-gross",)]  # the display name, accents and ß folded
        (vault / note).rename(vault / "entities/person/juergen-gross.md")
        syncer.sync_all()
        assert dump_entities(memory) == cold_rebuild(config)


def test_entity_rows_follow_surface_and_address_changes(vault: Path) -> None:
    """Display names and addresses of found-only entities stay equal to a cold rebuild."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    w = Writer(vault, random.Random(3))
    config = load_config(vault, embed_provider="none")

    def chat(name: str, authors: list[str]) -> None:
        meta = SourceMeta("chat", f"slack:t/{name}", f"slack/t/{name}", name)
        messages = [
            Message(f"m{i}", a, f"2024-03-04T09:0{i}:00Z", f"hello {i}") for i, a in enumerate(authors)
        ]
        w.put(f"sources/chat/{name}.md", render_source_note(meta, messages))

    steps = [
        ("a", ["Dana Whitfield", "Dana Whitfield"]),
        ("b", ["Dana Whitfield <dana@hall.example>"]),  # a new address, same display name
        ("c", ["DANA WHITFIELD", "DANA WHITFIELD", "DANA WHITFIELD"]),  # another form takes over
        ("c", ["Dana Whitfield"]),
        ("b", ["Dana Whitfield"]),  # the address goes away
        ("a", []),
    ]
    with Memory.open(config) as memory:
        for name, authors in steps:
            chat(name, authors)
            memory.sync_paths([f"sources/chat/{name}.md"])
            assert dump_entities(memory) == cold_rebuild(config), (name, authors)
            row = memory.index.query(
                "SELECT display_name, emails FROM entities WHERE id = 'person:dana-whitfield'"
            )
            if name == "b" and "<" in authors[0]:
                assert row == [("Dana Whitfield", ["dana@hall.example"])]
            if name == "c" and len(authors) == 3:
                assert row == [("DANA WHITFIELD", ["dana@hall.example"])]


def _derived(memory: Memory) -> dict[str, list[tuple[object, ...]]]:
    rows = dump_entities(memory) | dump_index(memory)
    rows["admission"] = memory.index.query("SELECT * FROM admission ORDER BY ALL")
    return rows


@pytest.mark.slow
def test_entity_and_admission_work_done_in_parsing_workers_gives_the_same_rows(vault: Path, tmp_path: Path) -> None:
    """A large sync resolves entities and decides admission where notes are parsed (worker
    processes, a batch ahead); the rows equal those derived from the index alone, also when an
    entity note changes the registry under the batches already handed out."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    w = Writer(vault, random.Random(11))
    for rel in sorted(ENTITY_NOTES):
        w.put(rel, w.entity_note(rel))
    for i in range(8):
        w.put(f"notes/n{i}.md", w.user_note())
    for i in range(4):
        w.put(f"sources/chat/c{i}.md", w.chat_note(f"team/c{i}"))
    config = load_config(vault, embed_provider="none")

    def cold() -> dict[str, list[tuple[object, ...]]]:
        with Memory(config, Index.open(None), None) as fresh:
            fresh.syncer.workers = 0
            fresh.reindex()
            return _derived(fresh)

    with Memory(config, Index.open(tmp_path / "pool.duckdb"), None) as pooled:
        pooled.syncer.workers = 2
        pooled.syncer.pool_min_files = 1
        pooled.syncer.apply_batch = 3
        pooled.reindex()
        deriver = entity_deriver(pooled)
        assert deriver is not None and deriver.prepared_leaves > 0
        rows = _derived(pooled)
        assert rows["occurrences"] and rows["admission"]
        assert rows == cold()
        with pooled.index.transaction() as con:  # the same work from the index rows alone
            for other in pooled.syncer.derivers:
                if other.name in ("entities", "admission"):
                    other.apply(con, [], [], rebuild=True)
        assert _derived(pooled) == rows
        # the registry changes in the first batch: what was prepared with the old one is redone
        w.put("entities/person/priya-raman.md", '---\nvaultmind: entity\nid: "person:priya-raman"\n---\n# Priya\n')
        for i in range(6):
            w.put(f"notes/n{i}.md", w.user_note() + "\nPriya Raman and Priya were there.\n")
        used = deriver.prepared_leaves
        pooled.sync()
        assert deriver.prepared_leaves > used
        assert _derived(pooled) == cold()
