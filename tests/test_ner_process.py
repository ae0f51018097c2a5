"""NER in a child process (the daemon's way), and questions read without any NER model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import vaultmind
from vaultmind.child import python_command, python_env
from vaultmind.config import load_config
from vaultmind.entities.backfill import entity_deriver, ner_pending
from vaultmind.entities.graph import query_entities
from vaultmind.entities.ner import NerEngine
from vaultmind.entities.ner_process import ModelProcess
from vaultmind.memory import Memory

from .conftest import until, write, write_chat

TEXTS = [
    "Angela Merkel spoke in Berlin.",
    "nothing to find here",
    "Tim Cook presented at Apple Park in May 2023.",
    "Zoë O'Brien met 李雷 in Zürich.",
]



def test_the_child_finds_what_the_model_finds_in_process(ner_model: str) -> None:
    here = NerEngine(ner_model, batch=2)
    there = NerEngine(ner_model, batch=2)
    there.isolate(ModelProcess(ner_model, 2, idle_s=30))
    try:
        assert there.analyze(TEXTS) == here.analyze(TEXTS)
        assert there.analyze(TEXTS[:1]) == [[(0, 13, "PERSON"), (23, 29, "GPE")]]
        assert there.process_id is not None
    finally:
        there.close()
    assert there.process_id is None


def test_the_child_imports_this_vaultmind_whatever_the_working_directory(
    ner_model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`python -m` puts the working directory first on the path: a daemon started next to a
    folder named `vaultmind` (a checkout, a vault) had its NER child import that one."""
    shadow = tmp_path / "vaultmind"
    shadow.mkdir()
    (shadow / "__init__.py").write_text('raise ImportError("the working directory\'s vaultmind")\n')
    monkeypatch.chdir(tmp_path)
    process = ModelProcess(ner_model, 8, idle_s=30)
    try:
        assert process.analyze(TEXTS[:1]) == [[(0, 13, "PERSON"), (23, 29, "GPE")]]
    finally:
        process.stop()
    found = subprocess.run(
        python_command("-c", "import vaultmind; print(vaultmind.__file__)"),
        env=python_env(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert Path(found.stdout.strip()) == Path(vaultmind.__file__).resolve()


def test_an_idle_child_is_stopped_and_a_new_one_started_on_the_next_texts(ner_model: str) -> None:
    process = ModelProcess(ner_model, 8, idle_s=0.5)
    try:
        first = process.analyze(TEXTS[:1])
        pid = process.pid
        assert pid is not None
        until(lambda: process.pid is None)
        assert process.pid is None, "the idle child was not stopped"
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped, not left a zombie
        assert process.analyze(TEXTS[:1]) == first
        assert process.started == 2
    finally:
        process.stop()


def test_a_child_that_dies_is_replaced(ner_model: str) -> None:
    process = ModelProcess(ner_model, 8, idle_s=30)
    try:
        first = process.analyze(TEXTS)
        pid = process.pid
        assert pid is not None
        os.kill(pid, 9)
        time.sleep(0.2)
        assert process.analyze(TEXTS) == first
        assert process.started == 2 and process.pid not in (None, pid)
    finally:
        process.stop()


def test_a_model_the_child_cannot_load_turns_ner_off_and_says_why(ner_model: str) -> None:
    engine = NerEngine(ner_model)
    engine.package = "vaultmind_no_such_model"
    engine.isolate(ModelProcess(engine.package, 8, idle_s=30))  # the child resolves this one itself
    try:
        assert engine.analyze(["Angela Merkel spoke in Berlin."]) is None
        assert engine.available is False
        assert "vaultmind_no_such_model" in engine.status()["message"]
        assert engine.process_id is None
    finally:
        engine.close()


def test_a_child_that_cannot_start_turns_ner_off_and_says_why(
    ner_model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = NerEngine(ner_model)
    engine.isolate(ModelProcess(ner_model, 8, idle_s=30))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python-here"))
    try:
        assert engine.analyze(["Angela Merkel spoke in Berlin."]) is None
        assert engine.available is False
        assert "cannot start the NER process" in engine.status()["message"]
    finally:
        monkeypatch.undo()
        from vaultmind.entities import ner

        ner._LOAD_FAILED.pop(ner_model, None)  # the model itself is fine: later tests use it
        engine.close()


def test_the_child_speaks_one_json_line_each_way(ner_model: str) -> None:
    reply = subprocess.run(
        [sys.executable, "-m", "vaultmind.entities.ner_process", ner_model, "4"],
        input=json.dumps(["Angela Merkel spoke in Berlin."]) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(reply.stdout) == {"spans": [[[0, 13, "PERSON"], [23, 29, "GPE"]]]}


def test_ctrl_c_in_the_terminal_leaves_the_child_to_the_daemon(ner_model: str) -> None:
    """Ctrl-C reaches the whole process group: the child neither dies of it nor prints a
    traceback; it answers on, and leaves when its stdin closes (as the daemon closes it)."""
    import signal

    child = subprocess.Popen(
        [sys.executable, "-m", "vaultmind.entities.ner_process", ner_model, "4"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(json.dumps(["Angela Merkel spoke in Berlin."]) + "\n")
    child.stdin.flush()
    assert "spans" in json.loads(child.stdout.readline())  # running, its handlers in place
    child.send_signal(signal.SIGINT)
    child.stdin.write(json.dumps(["Tim Cook visited Paris."]) + "\n")
    child.stdin.flush()
    assert "spans" in json.loads(child.stdout.readline())
    _, err = child.communicate(timeout=60)
    assert child.returncode == 0 and "Traceback" not in err and "KeyboardInterrupt" not in err


def test_a_serving_memory_never_loads_spacy_and_gets_its_entities_after_the_save(vault: Path, ner_model: str) -> None:
    """In a process of its own, so that no earlier test has imported spaCy: a serving `Memory`
    syncs, completes NER (through the child), answers a walk, and spaCy is never imported."""
    script = """
import json, sys
from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.entities.backfill import entity_deriver, ner_pending
with Memory.open(load_config(sys.argv[1], embed_provider="none")) as m:
    m.serve()
    m.sync()
    deriver = entity_deriver(m)
    pending = ner_pending(m.index, deriver)
    m.enrich()
    people = sorted(r[0] for r in m.index.query("SELECT DISTINCT entity_id FROM occurrences WHERE entity_id LIKE 'person:%'"))
    hits = m.walk("What did Ned say about Angela Merkel?")["hits"]
    engine = m.status()["entities"]["ner_engine"]
    print(json.dumps({"engine": engine,"pending": pending, "after": ner_pending(m.index, deriver), "people": people,
                      "top": hits[0]["content"] if hits else None, "spacy": "spacy" in sys.modules,
                      "children": deriver.ner._runner.started}))
"""
    write_chat(vault, "2024-03-04", [("Ned", "I read that Angela Merkel spoke in Berlin."), ("Ann", "Nice!")])
    write(vault, "notes/b.md", "Tim Cook presented at Apple Park.\n")
    out = subprocess.run(
        [sys.executable, "-c", script, str(vault)], capture_output=True, text=True, timeout=300, check=True
    )
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["pending"] >= 2  # the sync left its texts to the background
    assert found["after"] == 0
    assert {"person:angela-merkel", "person:tim-cook", "person:ned"} <= set(found["people"])
    assert "Angela Merkel" in found["top"]
    assert found["spacy"] is False
    assert found["children"] == 1
    assert found["engine"]["available"] is True and isinstance(found["engine"]["process"], int)


def test_questions_find_known_entities_without_a_model(vault: Path) -> None:
    """Names of three letters count when written as names; longer ones in any case."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    write_chat(vault, "2024-03-04", [("Ned", "The bakery opens Monday."), ("Dana Whitfield", "Great news, Ned")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        with memory.index.lock:
            con = memory.index.con
            assert query_entities(con, "What did Ned say about the bakery?") == [("person:ned", "Ned")]
            assert query_entities(con, "what did ned say about the bakery?") == []
            assert query_entities(con, "what did dana whitfield say?") == [
                ("person:dana-whitfield", "dana whitfield")
            ]
            # a first name written as a name names the one person whose name starts with it
            assert query_entities(con, "What did Dana say about the bakery?") == [("person:dana-whitfield", "Dana")]
            assert query_entities(con, "what did dana say about the bakery?") == []
        deriver = entity_deriver(memory)
        assert deriver is not None and ner_pending(memory.index, deriver) == 0  # NER is off


def test_a_first_name_shared_by_two_known_people_names_neither() -> None:
    from vaultmind.entities.query import _ngram_entities, first_names

    known = frozenset({"person:dana-whitfield", "person:dana-scully", "person:marco-ruiz", "place:jonas", "person:jonas-weber"})
    firsts = first_names(known)
    assert firsts == {"marco": "person:marco-ruiz", "jonas": "person:jonas-weber"}
    assert _ngram_entities(known, "Did Dana call?", [], firsts) == []
    assert _ngram_entities(known, "Where is Jonas?", [], firsts) == [("place:jonas", "Jonas"), ("person:jonas-weber", "Jonas")]


def test_a_surname_only_one_known_person_has_names_them() -> None:
    from vaultmind.entities.query import _ngram_entities, person_words

    known = frozenset({"person:helen-okafor", "person:alice-chen", "person:mei-chen", "person:ana-marco", "person:marco-ruiz"})
    words = person_words(known)
    assert words["okafor"] == "person:helen-okafor" and words["ruiz"] == "person:marco-ruiz"
    assert "chen" not in words, "two people's surname"
    assert words["marco"] == "person:marco-ruiz", "a first name before another's surname"
    assert _ngram_entities(known, "What did Okafor approve?", [], words) == [("person:helen-okafor", "Okafor")]
    assert _ngram_entities(known, "what did okafor approve?", [], words) == [], "written as a name"


def test_a_surname_names_its_person_under_every_kind_their_whole_name_is_known_by() -> None:
    """The NER model took "Helen Okafor" in a mail for a place: "Okafor" names that mention too,
    as "Helen Okafor" does."""
    from vaultmind.entities.query import _ngram_entities, person_words

    known = frozenset({"person:helen-okafor", "place:helen-okafor", "person:alice-chen"})
    words = person_words(known)
    assert _ngram_entities(known, "What is in Okafor's team?", [], words) == [
        ("person:helen-okafor", "Okafor"),
        ("place:helen-okafor", "Okafor"),
    ]
    assert _ngram_entities(known, "Where is Helen Okafor?", [], words) == [
        ("person:helen-okafor", "Helen Okafor"),
        ("place:helen-okafor", "Helen Okafor"),
    ]


def _slow_model(where: Path, model: str) -> str:
    """An installed spaCy model package (`where` on the path) that loads `model` only once the
    file `hold` beside it is gone, and says it has begun loading (the file `loading`): a model
    as slow to load as a busy host makes a real one."""
    name = "vaultmind_slow_ner_model"
    package = where / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        f"""import time
from pathlib import Path

from {model} import load as _load

HERE = Path(__file__).parent


def load(**overrides):
    (HERE / "loading").touch()
    deadline = time.monotonic() + 120
    while (HERE / "hold").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return _load(**overrides)
""",
        encoding="utf-8",
    )
    info = where / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    return name


def _daemon(vault: Path, path: Path, embed: str = "none") -> subprocess.Popen[str]:
    """`vaultmind watch` on `vault`, with `path` (a model package's folder) on the path."""
    env = {**os.environ, "VAULTMIND_EMBED_PROVIDER": embed}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(path), env.get("PYTHONPATH", "")) if p)
    return subprocess.Popen(
        [sys.executable, "-m", "vaultmind", "watch", "--vault", str(vault)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def _status(vault: Path) -> dict[str, Any] | None:
    out = subprocess.run(
        [sys.executable, "-m", "vaultmind", "status", "--vault", str(vault), "--json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return json.loads(out.stdout) if out.returncode == 0 else None


@pytest.mark.slow
@pytest.mark.parametrize("signo", ["SIGTERM", "SIGINT"])
def test_a_daemon_stopped_while_its_ner_model_loads_leaves_at_once_and_the_next_start_finishes(
    ner_model: str, tmp_path: Path, signo: str
) -> None:
    """Stopped (SIGTERM, or Ctrl-C) while the NER process is still loading its model, the
    daemon leaves within seconds: the child is stopped, not waited for. Nothing was
    stored for the texts in hand, and the next start runs NER on them."""
    import signal

    path = tmp_path / "site"
    name = _slow_model(path, ner_model)
    (path / name / "hold").touch()
    vault = tmp_path / "v"
    write(vault, "a.md", "# Alpha\n\nAngela Merkel spoke in Berlin.\n")
    write(vault, "b.md", "# Beta\n\nTim Cook presented at Apple Park.\n")
    write(vault, ".vaultmind/config.toml", f'[watch]\ndebounce_ms = 50\n[entities]\nner_model = "{name}"\n')
    proc = _daemon(vault, path)
    try:
        deadline = time.monotonic() + 120
        while not (path / name / "loading").exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert (path / name / "loading").exists(), "the NER process began loading the model"
        started = time.monotonic()
        proc.send_signal(getattr(signal, signo))
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    # well under 2 s on a quiet host (1.8–2.5 s on two cores at load 17); it waited for the
    # model's load before (20 s and more)
    assert took < 5.0, f"the daemon took {took:.1f} s to stop"
    assert not (vault / ".vaultmind" / "daemon.json").exists()
    assert "Traceback" not in err and "failed to load" not in err, err

    (path / name / "hold").unlink()
    proc = _daemon(vault, path)
    try:
        deadline = time.monotonic() + 180
        status: dict[str, Any] | None = None
        while time.monotonic() < deadline:
            status = _status(vault)
            if status and status["daemon"]["running"] and not status["loading"] and not status["entities"]["ner_pending"]:
                break
            time.sleep(0.3)
        assert status is not None and status["daemon"]["running"], status
        assert status["entities"]["ner_pending"] == 0, status["entities"]
        assert status["entities"]["ner_engine"]["available"], status["entities"]["ner_engine"]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        people = {r[0] for r in memory.index.query("SELECT DISTINCT entity_id FROM occurrences WHERE entity_id LIKE 'person:%'")}
    assert {"person:angela-merkel", "person:tim-cook"} <= people, people


@pytest.mark.slow
def test_a_ready_daemons_status_counts_what_waits_as_the_rows_say_through_copies_and_clashes(
    ner_model: str, tmp_path: Path
) -> None:
    """The counts of texts waiting for NER and for a vector (computed in parts of the hash
    space) agree with the index's rows, read apart, while a watched edit adds a conflict copy
    and a name that differs only in case and another removes them."""
    import signal

    path = tmp_path / "site"
    name = _slow_model(path, ner_model)
    (path / name / "hold").touch()  # the model never loads: every text keeps waiting for NER
    vault = tmp_path / "v"
    write_chat(vault, "2024-03-04", [("Ned", "Angela Merkel spoke in Berlin."), ("Ann", "Nice!"), ("Ned", "Yes.")])
    write(vault, "a.md", "# Alpha\n\nTim Cook presented at Apple Park.\n\n## More\n\nThe heron nests.\n")
    write(vault, ".vaultmind/config.toml", f'[watch]\ndebounce_ms = 50\n[entities]\nner_model = "{name}"\n')
    chat = next(p for p in vault.rglob("*.md") if "sources" in p.parts)
    copy = chat.with_name(chat.stem + " (conflict 2026-12-03).md")

    def settled(want: set[str]) -> dict[str, Any]:
        deadline = time.monotonic() + 120
        status: dict[str, Any] = {}
        while time.monotonic() < deadline:
            status = _status(vault) or {}
            kinds = {p["kind"] for p in status.get("problems", [])} & {"copy", "case_clash"}
            if status.get("daemon", {}).get("running") and not status.get("loading") and kinds == want:
                return status
            time.sleep(0.3)
        raise AssertionError(f"no status with {want}: {status}")

    proc = _daemon(vault, path, embed="static")
    try:
        before = settled(set())
        copy.write_bytes(chat.read_bytes())
        write(vault, "A.md", "# Alpha\n\nTim Cook presented at Apple Park.\n\n## More\n\nThe heron nests.\n")
        during = settled({"copy", "case_clash"})
        copy.unlink()
        (vault / "A.md").unlink()
        after = settled(set())
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        texts = {h for (h,) in memory.index.query("SELECT content_hash FROM leaves")}
        vectors = {h for (h,) in memory.index.query("SELECT content_hash FROM embeddings")}
        leaves = int(memory.index.scalar("SELECT count(*) FROM leaves"))
    assert len(texts) >= 4 and vectors >= texts
    for status in (before, during, after):
        assert status["entities"]["ner_pending"] == len(texts), status["entities"]  # the copies repeat texts
        assert status["embeddings"]["missing"] == 0
    assert before["leaves"] == after["leaves"] == leaves < during["leaves"]
    assert during["embeddings"]["embedded"] == during["leaves"]


def test_a_held_child_outlives_its_idle_time_and_leaves_after_the_hold(ner_model: str) -> None:
    process = ModelProcess(ner_model, 8, idle_s=0.5)
    try:
        with process.hold():
            first = process.analyze(TEXTS[:1])
            pid = process.pid
            time.sleep(1.5)
            assert process.pid == pid, "the child was stopped as idle while held"
            assert process.analyze(TEXTS[:1]) == first
        assert until(lambda: process.pid is None), "the child outlived its idle time after the hold"
        assert process.started == 1
    finally:
        process.stop()


def test_a_catch_up_that_pauses_for_saves_keeps_one_model_process(
    vault: Path, ner_model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon's NER catch-up waits for a pause in saves between its batches, up to
    `YIELD_TIMEOUT_S` (a minute) while the user keeps saving; the model's process was stopped
    as idle in every such wait (`IDLE_S`, also a minute) and spaCy loaded again for the next
    batch: a 2,000-note vault's catch-up restarted the model every minute or two."""
    import threading

    import vaultmind.entities.ner_process as ner_process
    import vaultmind.memory as memory_module

    monkeypatch.setattr(memory_module, "BACKGROUND_NER_BATCH", 1)
    monkeypatch.setattr(memory_module, "YIELD_TIMEOUT_S", 1.0)  # longer than the idle time below
    monkeypatch.setattr(ner_process, "IDLE_S", 0.5)
    for i, name in enumerate(["Angela Merkel", "Tim Cook", "Zoë O'Brien"]):
        write(vault, f"notes/n{i}.md", f"{name} spoke in Berlin about item {i}.\n")
    saving = threading.Event()
    with Memory.open(load_config(vault, embed_provider="none")) as m:
        m.serve()
        m.sync()
        deriver = entity_deriver(m)
        assert deriver is not None and ner_pending(m.index, deriver) >= 3

        def keep_saving() -> None:  # foreground work all along: every pause waits its full timeout
            with m.foreground():
                saving.wait(60)

        saver = threading.Thread(target=keep_saving)
        saver.start()
        try:
            m.enrich(background=True)
        finally:
            saving.set()
            saver.join()
        assert ner_pending(m.index, deriver) == 0
        assert deriver.ner._runner.started == 1
        assert until(lambda: deriver.ner.process_id is None), "the model's process was never stopped as idle"
