"""`status`: the counts it reads from the index are kept per index generation, and never
outlive a change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.tree import summarizers
from vaultmind.tree.fallback import FallbackSummarizer

from .conftest import run_main, running_daemon, until, write


def test_a_status_asked_again_reads_the_index_only_after_a_change(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A status bar polling a daemon every second: the second status of an unchanged index
    answers from the first's counts (no read of every leaf); a save, a note gone or the daemon
    leaving its start-up is counted by the very next status."""
    write(vault, "a.md", "# Alpha\n\nThe heron nests by the river.\n")
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        reads: list[str] = []  # the small-pool reads a status makes (a save makes its own)
        small_pool_read = memory.index.small_pool_read
        asking = False

        def counted(read: Any, limit: str) -> Any:
            if asking:
                reads.append(limit)
            return small_pool_read(read, limit)

        def status() -> dict[str, Any]:
            nonlocal asking
            asking = True
            try:
                return memory.status()
            finally:
                asking = False

        monkeypatch.setattr(memory.index, "small_pool_read", counted)
        first = status()
        again = status()
        assert len(reads) == 1, "the second status read the index again"
        assert again == first
        assert first["notes"]["total"] == 1 and first["embeddings"]["missing"] == 0

        write(vault, "b.md", "# Beta\n\nA kingfisher dives.\n\n## Later\n\nIt flies off.\n")
        memory.sync_paths(["b.md"])
        after_save = status()
        assert len(reads) == 2
        assert after_save["notes"]["total"] == 2 and after_save["leaves"] > first["leaves"]
        assert after_save["embeddings"]["embedded"] == after_save["leaves"]

        (vault / "a.md").unlink()
        memory.sync_paths(["a.md"])
        assert status()["notes"]["total"] == 1

        memory.loading = True  # a daemon's start-up leaves out the counts that hash every leaf
        assert status()["embeddings"]["missing"] is None
        assert len(reads) == 4
        memory.loading = False  # ready again, nothing changed: the counts of this generation
        assert status()["embeddings"]["missing"] == 0
        assert len(reads) == 4


def test_a_status_during_the_ner_catch_up_reads_no_leaf_and_counts_right(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon's NER catch-up commits step by step: a status between two steps counts
    neither the notes nor the texts waiting for NER again (no query of `leaves`, no count of
    the pending texts), yet shows the pending count each step left; a save, even one committed
    while the model runs, is counted by the next status."""
    from vaultmind.entities import backfill
    from vaultmind.entities.ner_cache import count_pending

    write(vault, ".vaultmind/config.toml", "[entities]\nner_inline = 0\n")  # every text to the catch-up
    people = ["Dana Whitfield", "Marco Ruiz", "Priya Raman", "Alice Chen"]
    for k, person in enumerate(people):
        write(vault, f"notes/n{k}.md", f"# N{k}\n\n{person} flew to Lisbon on Tuesday.\n")
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        deriver = backfill.entity_deriver(memory)
        assert deriver is not None
        if not deriver.ner.available:
            pytest.skip(deriver.ner.status()["message"])
        model = deriver.ner.model_id
        assert model is not None
        memory.sync()
        first = memory.status()
        assert first["entities"]["ner_pending"] == 4

        in_status = False
        reads: list[str] = []  # what a status read: queries of `leaves`, counts of pending texts
        for method in ("query", "scalar"):
            real = getattr(memory.index, method)

            def counted(sql: str, params: Any = None, *, real: Any = real) -> Any:
                if in_status and "leaves" in sql:
                    reads.append(sql)
                return real(sql, params)

            monkeypatch.setattr(memory.index, method, counted)

        def counted_pending(con: Any, model: str) -> int:
            if in_status:
                reads.append("count_pending")
            return count_pending(con, model)

        monkeypatch.setattr(backfill, "count_pending", counted_pending)

        def status() -> dict[str, Any]:
            nonlocal in_status
            in_status = True
            try:
                return memory.status()
            finally:
                in_status = False

        seen: list[tuple[int, int, int]] = []  # (pending shown, pending counted, scans by the status)
        totals: list[int] = []  # notes shown

        def step(phase: str, done: int, total: int) -> None:
            if done:
                before = len(reads)
                shown = status()
                seen.append((shown["entities"]["ner_pending"], count_pending(memory.index.con, model), len(reads) - before))
                totals.append(shown["notes"]["total"])

        assert backfill.backfill_ner(memory.index, deriver, batch=1, progress=step) == 4
        assert seen == [(3, 3, 0), (2, 2, 0), (1, 1, 0), (0, 0, 0)]
        assert totals == [4] * 4
        assert status()["entities"]["known"] > first["entities"]["known"]

        write(vault, "notes/n9.md", "# N9\n\nTomas Lindqvist sailed to Oslo.\n\n## Later\n\nHe came back.\n")
        memory.sync_paths(["notes/n9.md"])
        before = len(reads)
        after_save = status()
        assert len(reads) > before  # counted again
        assert after_save["notes"]["total"] == first["notes"]["total"] + 1
        assert after_save["leaves"] > first["leaves"]
        assert after_save["embeddings"]["embedded"] == after_save["leaves"]
        waiting = after_save["entities"]["ner_pending"]
        assert waiting == count_pending(memory.index.con, model) > 0

        # a save committed while the model runs: the step after it does not carry the count
        analyze = deriver.ner.analyze

        def save_then_analyze(batch: list[str]) -> Any:
            if not (vault / "notes/n10.md").exists():
                write(vault, "notes/n10.md", "# N10\n\nAiko Tanaka met Dana Whitfield in Kyoto.\n")
                memory.sync_paths(["notes/n10.md"])
            return analyze(batch)

        monkeypatch.setattr(deriver.ner, "analyze", save_then_analyze)
        seen.clear()
        assert backfill.backfill_ner(memory.index, deriver, batch=1, max_texts=1, progress=step) == 1
        shown, counted, scans = seen[0]
        assert shown == counted > waiting - 1  # one was analysed, more were saved meanwhile
        assert scans > 0 and totals[-1] == 6  # the save is counted
        assert status()["notes"]["total"] == first["notes"]["total"] + 2


def test_a_backlog_of_changed_files_is_counted_in_words(memory: Memory) -> None:
    """The notice of a daemon catching up said "1 changed file(s)": one file, or files."""
    write(memory.config.vault, "a.md", "# A\n\nalpha words\n")
    memory.sync()
    for backlog, said in ((1, "1 changed file of a large change"), (2, "2 changed files of a large change")):
        memory.catching_up = backlog  # as the daemon sets it while it applies a large change in slices
        index = memory.status()["index"]
        assert index["health"] == "catching up" and index["notice"].startswith(said)


def test_status_names_a_sync_tools_conflict_copy_of_a_note_after_the_files_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A conflict copy (Syncthing's, Dropbox's, Nextcloud's name for it) is the user's note: it is
    indexed, and `status` names it with the note it copies, among the warnings listed after the
    files skipped; a copy whose note is gone is just a note."""
    vault = tmp_path / "v"
    (vault / ".vaultmind").mkdir(parents=True)  # a vault with the default settings
    write(vault, "Trip.md", "# Trip\n\nThe trip note mentions meadow.\n")
    write(vault, "Trip.sync-conflict-20241201-123456-ABCDEFG.md", "# Trip\n\nThe laptop's version.\n")
    write(vault, "Plans/Budget (Zoë's conflicted copy 2024-12-01).md", "# Budget\n\nDropbox's copy.\n")
    write(vault, "Plans/Budget.md", "# Budget\n\nThe budget.\n")
    write(vault, "Gone (conflicted copy 2024-12-01 123456).md", "# Gone\n\nIts note was deleted.\n")
    (vault / "zz-binary.md").write_bytes(b"\x00\x01\x02binary")
    assert run_main(capsys, "reindex", "--vault", str(vault))[0] == 0
    code, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert code == 0 and status["notes"]["user"] == 5
    copies = {p["path"]: p["message"] for p in status["problems"] if p["kind"] == "conflict_copy"}
    assert copies == {
        "Plans/Budget (Zoë's conflicted copy 2024-12-01).md": "a sync tool's conflict copy of Plans/Budget.md; both "
        "are indexed and answers show them twice — merge what differs into one and delete the other",
        "Trip.sync-conflict-20241201-123456-ABCDEFG.md": "a sync tool's conflict copy of Trip.md; both are indexed "
        "and answers show them twice — merge what differs into one and delete the other",
    }
    code, text, _ = run_main(capsys, "status", "--vault", str(vault))
    listed = [line for line in text.splitlines() if line.startswith("  ") and ": [" in line]
    assert [line.split(": [")[1].split("]")[0] for line in listed] == ["binary", "conflict_copy", "conflict_copy"]
    # the JSON says which are indexed all the same (the plugin's status bar splits them so)
    assert sorted((p["kind"], p["indexed"]) for p in status["problems"]) == [
        ("binary", False), ("conflict_copy", True), ("conflict_copy", True)
    ]


def test_status_names_a_note_with_a_merge_conflict_left_in_it_and_not_a_heading_underlined(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`<<<<<<<`, `=======`, `>>>>>>>` lines in that order (git's markers, CRLF too) make a
    `merge_conflict` warning; a setext heading's `=======` or a quoted `<<<<<<<` alone do not."""
    vault = tmp_path / "v"
    (vault / ".vaultmind").mkdir(parents=True)  # a vault with the default settings
    conflict = "# Trip\n\n<<<<<<< HEAD\nharbor\n=======\nriver\n>>>>>>> feature\n"
    write(vault, "Trip.md", conflict)
    (vault / "Windows.md").write_bytes(conflict.replace("\n", "\r\n").encode())
    write(vault, "Heading.md", "Title\n=======\n\n<<<<<<< a line that opens nothing\n")
    write(vault, "Ends.md", ">>>>>>> x\n=======\n<<<<<<< y\n")
    assert run_main(capsys, "reindex", "--vault", str(vault))[0] == 0
    status = run_main(capsys, "status", "--vault", str(vault), "--json")[1]
    assert sorted(p["path"] for p in status["problems"] if p["kind"] == "merge_conflict") == ["Trip.md", "Windows.md"]


def test_a_quarantine_notice_waits_for_the_users_status_whoever_polls_before(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The plugin's status bar (`GET /v1/status` every few seconds) and `doctor` see the notice of
    an index moved aside, but leave it: the user's `vaultmind status` says it, once."""
    from vaultmind.client import find_daemon
    from vaultmind.index.quarantine import keep_notice

    from .conftest import running_daemon

    write(vault, "a.md", "# Alpha\n\nThe heron nests by the river.\n")
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    (config.index_path.parent / "quarantine").mkdir(parents=True)
    keep_notice(config.index_path, "index was invalidated (moved aside)")
    with running_daemon(config):
        client = find_daemon(config)
        assert client is not None
        for _ in range(2):  # the status bar's polls
            assert client.call("GET", "/v1/status")["index"]["notice"].startswith("index was invalidated")
        _, checks, _ = run_main(capsys, "doctor", "--vault", str(vault), "--json")
        assert next(c for c in checks["checks"] if c["name"] == "index")["detail"].startswith("rebuilt")
        _, status, err = run_main(capsys, "status", "--vault", str(vault), "--json")
        assert status["index"]["notice"].startswith("index was invalidated"), err  # the user's status says it
        _, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
        assert status["index"]["health"] == "ok"  # once
    keep_notice(config.index_path, "index was invalidated again")
    run_main(capsys, "doctor", "--vault", str(vault), "--json")  # without a daemon: the same
    _, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert status["index"]["notice"].startswith("index was invalidated again")


def test_status_says_when_the_daemons_background_upkeep_failed(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failure was in `status --json` only; the human status said "running" and nothing more."""

    def broken(config: object) -> FallbackSummarizer:
        raise RuntimeError("the summarizer could not start")

    monkeypatch.setattr(summarizers, "_REGISTRY", {**summarizers._REGISTRY, "test-broken": broken})
    config = load_config(
        vault, embed_provider="none", debounce_ms=50, step_ms=20,
        extra={"trees.summarizer": "test-broken", "admission.llm": False, "entities.ner_model": "off"},
    )  # fmt: skip
    write(vault, "a.md", "# A\n\nSome words.\n")
    with running_daemon(config) as (_, runner):
        assert until(lambda: runner.trees.last_error is not None)
        code, out, _ = run_main(capsys, "status", "--vault", str(vault))
    assert code == 0
    assert "its background upkeep failed: trees: RuntimeError: the summarizer could not start" in out


def test_an_interrupted_rebuild_is_said_as_pending_not_as_nothing_indexed(
    cli_vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reindex empties the index's rows in a commit of its own before it loads them again: a
    Ctrl-C or a kill after that commit leaves an index without notes. Status says a rebuild is
    pending (not "nothing is indexed yet"), a query says why it waits, and a sync finishes it."""
    for i in range(5):
        write(cli_vault, f"n{i}.md", f"# Note {i}\n\nword{i} about the harbour.\n")
    code, _, _ = run_main(capsys, "reindex", "--vault", str(cli_vault))
    assert code == 0
    with Memory.open(load_config(cli_vault, embed_provider="none")) as memory:
        indexed = memory.status()["notes"]["total"]
        memory.index.empty_derived()  # the rebuild's first commit; interrupted right after it

    code, status, _ = run_main(capsys, "status", "--vault", str(cli_vault), "--json")
    assert status["notes"]["total"] == 0
    assert status["index"]["health"] == "rebuild pending"
    assert "a rebuild of the index was interrupted" in status["index"]["notice"]
    assert "vaultmind sync" in status["index"]["notice"]
    code, _, err = run_main(capsys, "query", "search", "word3", "--vault", str(cli_vault), "--json")
    assert code == 0 and "a rebuild of the index was interrupted; finishing it first" in err
    code, status, _ = run_main(capsys, "status", "--vault", str(cli_vault), "--json")
    assert status["index"]["health"] == "ok" and status["notes"]["total"] == indexed
