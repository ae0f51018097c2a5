"""The synthetic vault generator and the benchmark command (shape only, never timing targets)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vaultmind.bench.run import SERVE_S_PER_NOTE, TARGETS, check_targets
from vaultmind.bench.synth import MANIFEST, generate_vault, read_manifest
from vaultmind.bench.vocabulary import bench_queries
from vaultmind.cli.main import main
from vaultmind.config import load_config
from vaultmind.errors import UsageError
from vaultmind.memory import Memory


def _files(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    a = generate_vault(tmp_path / "a", 150, seed=7)
    generate_vault(tmp_path / "b", 150, seed=7)
    generate_vault(tmp_path / "c", 150, seed=8)
    files_a, files_b, files_c = _files(tmp_path / "a"), _files(tmp_path / "b"), _files(tmp_path / "c")
    assert files_a == files_b
    assert files_a != files_c
    notes = [p for p in files_a if p.endswith(".md") and not p.startswith((".trash/", ".obsidian/"))]
    assert len(notes) == a.notes == 150
    assert a.source_notes == 30 and a.user_notes == 120


@pytest.mark.slow
def test_worker_processes_write_the_same_bytes(tmp_path: Path) -> None:
    generate_vault(tmp_path / "one", 300, seed=3, workers=1)
    generate_vault(tmp_path / "two", 300, seed=3, workers=2)
    assert _files(tmp_path / "one") == _files(tmp_path / "two")


def test_generated_vault_has_the_shape_of_a_real_one(tmp_path: Path) -> None:
    stats = generate_vault(tmp_path / "v", 400, seed=1)
    files = _files(tmp_path / "v")
    text = "\n".join(data.decode("utf-8") for path, data in files.items() if path.endswith(".md"))
    for needle in ("[[", "|", "#^", "![[", "> [!", "```", "- [ ]", "| --- |", "{{date}}", "%% vaultmind "):
        assert needle in text, needle
    assert any(ord(ch) > 0x3000 for ch in text)  # CJK / emoji
    assert any(p.startswith(".obsidian/") for p in files)
    assert any(p.endswith(".png") and files[p].startswith(b"\x89PNG") for p in files)
    depths = {p.count("/") for p in files if p.endswith(".md") and not p.startswith(("sources/", "."))}
    assert max(depths) >= 3
    assert stats.largest_note_bytes > 50_000  # the long tail
    assert read_manifest(tmp_path / "v") == {"generator": "vaultmind.bench.synth", **{
        k: v for k, v in stats.to_dict().items() if k != "seconds"
    }}  # fmt: skip


def test_generated_vault_indexes_with_the_expected_counts(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    stats = generate_vault(vault, 300, seed=2)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.reindex()
        status = memory.status()
        message_leaves = memory.index.scalar("SELECT count(*) FROM leaves WHERE kind = 'message'")
        hits = memory.search(bench_queries(2, 5)[0])["hits"]
    assert status["notes"]["total"] == stats.notes == 300
    assert status["notes"]["source"] == stats.source_notes
    assert status["notes"]["user"] == stats.user_notes
    assert message_leaves == stats.messages
    assert status["links"] > 0 and status["tags"] > 10
    kinds = {p["kind"] for p in status["problems"]}
    assert kinds <= {"frontmatter"}
    assert sum(p["kind"] == "frontmatter" for p in status["problems"]) == stats.malformed_frontmatter
    assert hits


def test_generate_refuses_a_folder_with_files(tmp_path: Path) -> None:
    (tmp_path / "mine.md").write_text("my note\n", encoding="utf-8")
    with pytest.raises(UsageError):
        generate_vault(tmp_path, 10)
    assert _files(tmp_path) == {"mine.md": b"my note\n"}


def test_bench_generate_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "generate", str(tmp_path / "out"), "--notes", "40", "--seed", "4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["notes"] == 40 and data["seed"] == 4
    assert (tmp_path / "out" / MANIFEST).is_file()


def test_check_targets_compares_each_metric() -> None:
    results = {"rescan": {"files_per_s": 20_000.0}, "cold": {"notes_per_s": 100.0, "ratio_to_baseline": 3.0}}
    assert check_targets(results, 1000) == {
        "rescan.files_per_s": True,
        "cold.notes_per_s": False,
        "cold.ratio_to_baseline": True,
    }
    assert set(TARGETS) >= set(check_targets(results, 1000))


def test_a_target_is_checked_only_at_the_size_it_is_stated_for(capsys: pytest.CaptureFixture[str]) -> None:
    """`bench run --sizes 1000 --check` marked the memory targets (stated for 50k notes) and
    the walk's (100k leaves) met from figures of a 1,000-note vault: a ✓ that was no evidence
    for them. They are "n/a" there, in the JSON and the table, and no miss for --check."""
    from vaultmind.bench.targets import NA, missed
    from vaultmind.cli.bench import print_report

    small = {
        "rss": {"reindex_tree_pss_peak_mb": 260.0, "daemon_tree_pss_peak_mb": 900.0},
        "walk": {"p50_s": 0.030, "p95_s": 0.080, "leaves": 6_929},
        "save": {"p95_s": 0.5},
        "entities": {"p95_s": 0.004, "entities": 50_000},
    }
    checks = check_targets(small, 1000)
    assert checks == {
        "rss.reindex_tree_pss_peak_mb": NA,
        "rss.daemon_tree_pss_peak_mb": NA,
        "walk.p50_s": NA,
        "walk.p95_s": NA,
        "save.p95_s": True,
        "entities.p95_s": True,
    }
    assert not missed({"1000": checks}), "n/a is not a miss: --check exits 0"
    assert check_targets(small, 10_000)["save.p95_s"] == NA, "stated for 1k and 50k notes"
    large = {"rss": {"reindex_tree_pss_peak_mb": 545.0, "daemon_tree_pss_peak_mb": 480.0},
             "walk": {"p50_s": 0.014, "p95_s": 0.060, "leaves": 99_941}}  # fmt: skip
    at_size = check_targets(large, 50_000)
    assert at_size == {"rss.reindex_tree_pss_peak_mb": False, "rss.daemon_tree_pss_peak_mb": True,
                       "walk.p50_s": True, "walk.p95_s": False}  # fmt: skip
    assert missed({"50000": at_size})
    assert check_targets({"walk": {"error": "IndexBusy"}}, 14_300) == {"walk.p50_s": False, "walk.p95_s": False}
    report = {"machine": {"cpus": 2, "load_avg_1m": 1.0, "python": "3.11"}, "embeddings": "static",
              "sizes": {"1000": small}, "pass": {"1000": checks}}  # fmt: skip
    print_report(report)
    out = capsys.readouterr().out
    daemon = next(line for line in out.splitlines() if "daemon + NER, peak PSS" in line)
    assert "900 n/a" in daemon and "✓" not in daemon and "✗" not in daemon and "<= 500 at 50k notes" in daemon
    walk = next(line for line in out.splitlines() if line.startswith("walk p50"))
    assert "30.0 n/a" in walk and "<= 20 at 100k leaves" in walk


def test_the_table_s_cells_line_up_whatever_the_labels_length(capsys: pytest.CaptureFixture[str]) -> None:
    """Labels longer than the 32 characters the table padded to ("walk: dense recall@100 vs
    full scan") pushed their row's cells to the right of the others'."""
    from vaultmind.cli.bench import print_report

    sizes = {"1000": {"walk": {"p50_s": 0.01, "dense_recall_at_100": 0.9, "embed_p50_s": 0.0002}},
             "50000": {"walk": {"p50_s": 0.02, "dense_recall_at_100": 0.8, "embed_p50_s": 0.0003}}}  # fmt: skip
    report = {"machine": {"cpus": 2, "load_avg_1m": 1.0, "python": "3.11"}, "embeddings": "static",
              "sizes": sizes, "pass": {"1000": {}, "50000": {}}}  # fmt: skip
    print_report(report)
    lines = capsys.readouterr().out.splitlines()[1:]
    header, rows = lines[0], [line for line in lines[1:] if line.startswith(("walk p50", "walk: dense", "walk: question"))]
    assert len(rows) == 3
    ends = {len(line.split("   <=")[0].rstrip()) if "<=" in line else len(line.rstrip()) for line in rows}
    assert ends == {len(header.split("   target")[0])}, "each row's last cell ends under its size"


def _positive_numbers(value: object, where: str = "") -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _positive_numbers(item, f"{where}.{key}")
    elif isinstance(value, bool) or value is None or isinstance(value, str):
        return
    elif isinstance(value, int | float):
        assert value >= 0, where


@pytest.mark.slow
def test_bench_run_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "run", "--notes", "200", "--only", "rescan,cold,query", "--repeats", "2",
                 "--workdir", str(tmp_path), "--json"])  # fmt: skip
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) >= {"sizes", "targets", "pass", "machine"}
    size = report["sizes"]["200"]
    assert set(size) == {"vault", "rescan", "cold", "query"}
    assert size["rescan"]["files"] == 200 and size["rescan"]["files_per_s"] > 0
    assert size["rescan"]["changed"] == 0
    assert size["cold"]["notes"] == 200 and size["cold"]["notes_per_s"] > 0
    assert size["cold"]["baseline"]["files"] == 200 and size["cold"]["ratio_to_baseline"] > 0
    assert size["cold"]["seconds"]["runs"] == 2
    assert 0 < size["query"]["p50_s"] <= size["query"]["p95_s"] <= size["query"]["max_s"]
    assert size["query"]["queries_with_hits"] > 0
    _positive_numbers(report["sizes"])
    assert set(report["pass"]["200"]) == {"rescan.files_per_s", "cold.notes_per_s", "cold.ratio_to_baseline"}
    assert all(isinstance(ok, bool) for ok in report["pass"]["200"].values())
    assert report["targets"]["cold.notes_per_s"] == {"op": ">=", "bound": 500, "stated_for": "any size"}
    assert report["targets"]["rss.daemon_tree_pss_peak_mb"]["stated_for"] == "50k notes"


@pytest.mark.slow
def test_bench_rss_reports_the_daemon_s_memory_over_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "run", "--notes", "120", "--only", "rss", "--workdir", str(tmp_path), "--json"])
    assert code == 0
    rss = json.loads(capsys.readouterr().out)["sizes"]["120"]["rss"]
    assert "daemon_error" not in rss
    assert rss["reindex_peak_mb"] > 0 and 0 < rss["daemon_rss_mb"] <= rss["daemon_peak_mb"]
    # the targets' figures: each tree's PSS summed, no more than its RSS summed
    assert 0 < rss["reindex_tree_pss_peak_mb"] <= rss["reindex_tree_rss_peak_mb"] + 0.1
    assert 0 < rss["daemon_tree_pss_peak_mb"] <= rss["daemon_tree_peak_mb"] + 0.1
    timeline = rss["daemon_rss_timeline"]
    times = [t for t, _ in timeline]
    assert times == sorted(times) and times[0] < 1.0 and times[-1] >= rss["daemon_startup_s"] - 0.5
    assert all(mb > 0 for _, mb in timeline)
    # the samples sum the daemon and its NER child: none above the largest sum
    assert max(mb for _, mb in timeline) <= rss["daemon_tree_peak_mb"] + 0.1
    assert rss["daemon_largest_sample_at_s"] in times
    # the daemon's own samples, without its NER child, are part of each sum
    assert 0 < rss["daemon_own_largest_sample_mb"] <= max(mb for _, mb in timeline) + 0.1
    assert rss["daemon_own_largest_sample_at_s"] in times
    # it kept answering questions for a while after them, scaled to the vault's size
    assert 120 * SERVE_S_PER_NOTE <= rss["daemon_served_s"] < 120 * SERVE_S_PER_NOTE + 5
    assert times[-1] >= rss["daemon_startup_s"] + rss["daemon_served_s"] - 0.5


def test_a_reused_vault_drops_the_notes_an_earlier_run_wrote(tmp_path: Path) -> None:
    from vaultmind.bench.run import prepare_vault

    vault, first = prepare_vault(tmp_path, 30, 0)
    assert first["reused"] is False
    written = [vault / "summaries" / "chat" / "L0" / "x.md", vault / "entities" / "person" / "ann.md"]
    for path in written:  # as the save bench's daemon leaves them
        path.parent.mkdir(parents=True)
        path.write_text("---\nvaultmind: summary\n---\nmade by a daemon\n", encoding="utf-8")
    user_note = sorted(vault.rglob("*.md"))[0]
    before = user_note.read_bytes()
    again, second = prepare_vault(tmp_path, 30, 0)
    assert again == vault and second["reused"] is True, "kept, not regenerated"
    assert not any(path.exists() for path in written)
    assert user_note.read_bytes() == before


def test_a_deleted_index_leaves_nothing_a_later_load_would_find(tmp_path: Path) -> None:
    """A benchmark's cold run deletes the index: the resident postings' snapshot went with it
    only in part, and the next load (the daemon's start, the first query) read an earlier run's."""
    from vaultmind.bench.vaults import delete_index, vault_config

    vault = tmp_path / "vault"
    generate_vault(vault, 30, 0)
    config = vault_config(vault, "none")
    with Memory.open(config) as memory:
        memory.reindex()
        memory.serve()
        memory.warm()
    assert (config.state_dir / "resident-postings.bin").exists()
    delete_index(config)
    assert not [path.name for path in config.state_dir.iterdir() if path.name.startswith(("index", "resident"))]


def test_a_benchmark_that_fails_fails_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --check too: a run whose every figure is missing ("–") does not exit 0."""
    from vaultmind.bench.run import prepare_vault

    vault, _ = prepare_vault(tmp_path, 30, 0)
    (vault / ".vaultmind").mkdir(exist_ok=True)
    (vault / ".vaultmind" / "config.toml").write_text('[watch]\ndebounce_ms = "fast"\n', encoding="utf-8")
    code = main(["bench", "run", "--notes", "30", "--only", "rescan", "--repeats", "1", "--workdir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 1
    assert "rescan, no change (files/s)" in out and "–" in out
    assert "vaultmind: error: 1 benchmark(s) failed: 30 notes: rescan (ConfigError: " in err
    (vault / ".vaultmind" / "config.toml").unlink()
    assert main(["bench", "run", "--notes", "30", "--only", "rescan", "--repeats", "1", "--workdir", str(tmp_path)]) == 0


def test_a_child_s_peak_memory_and_a_gone_process_s(tmp_path: Path) -> None:
    """The kernel's figures of a finished child (both ways of running one), the live figures
    of this process, and none of a process that has ended (psutil's NoSuchProcess escaped)."""
    import subprocess
    import sys

    from vaultmind.bench.processes import child_env, peak_rss, proc_rss, run_tree_measured

    # the block is written and held for a moment: the peak is sampled from /proc every 50 ms
    grow = [sys.executable, "-c", "import sys, time; block = b'x' * 80_000_000; time.sleep(0.4); sys.exit(3)"]
    run = run_tree_measured(grow, child_env(None), subprocess.DEVNULL)
    assert run.code == 3 and run.seconds > 0 and run.cpu_s > 0
    assert run.peak_max >= 80_000_000 and run.peak_sum >= run.peak_max
    hwm, rss = peak_rss(os.getpid())
    assert hwm is not None and rss is not None and 0 < rss <= hwm
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    assert peak_rss(ended.pid) == (None, None) and proc_rss(ended.pid) == (0, 0)


def test_a_process_tree_without_proc_is_its_root_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where there is no `/proc` (macOS) the rss benchmark's daemon tree is the daemon alone:
    reading `/proc` no longer ends the benchmark with FileNotFoundError."""
    import vaultmind.bench.processes as processes

    def no_proc(path: str) -> list[str]:
        raise FileNotFoundError(2, "No such file or directory", path)

    monkeypatch.setattr(processes.os, "listdir", no_proc)
    assert processes.descendants(os.getpid()) == [os.getpid()]


def test_a_child_s_peak_is_its_own_not_its_larger_parent_s() -> None:
    """A child started by vfork and exec (`subprocess`) inherits its parent's high-water mark
    in the kernel's `wait4` figure: an empty child of a process holding 300 MB measured 300 MB.
    Sampled from /proc, the child's peak is its own."""
    import subprocess
    import sys

    from vaultmind.bench.processes import child_env, run_tree_measured

    held = b"x" * 300_000_000
    run = run_tree_measured([sys.executable, "-c", "import time; time.sleep(0.3)"], child_env(None), subprocess.DEVNULL)
    assert len(held) and run.code == 0
    if Path("/proc/self/status").exists():
        assert 0 < run.peak_max < 100_000_000, run
        assert run.peak_sum < 100_000_000, run


# a process holding 100 MB of its own that starts a child holding 100 MB of its own, both alive
# together for a while
_TWO_HOLDERS = """
import subprocess, sys, time
held = b"x" * 100_000_000
if len(sys.argv) < 2:
    subprocess.run([sys.executable, sys.argv[0], "child"], check=True)
else:
    time.sleep(1.5)
"""


@pytest.mark.skipif(not Path("/proc/self/smaps_rollup").exists(), reason="PSS is read from Linux's /proc")
def test_a_process_tree_s_memory_is_its_processes_summed_shared_pages_once(tmp_path: Path) -> None:
    """The memory targets are of what vaultmind costs: the daemon with its NER process, a
    reindex with its workers. The figure checked before was one process of the tree, ~112 MB
    here where the tree holds 200 MB of its own; the tree's PSS counts both, and the pages the
    two share (the interpreter) once, so it stays below the RSS summed."""
    import subprocess
    import sys

    from vaultmind.bench.processes import child_env, run_tree_measured

    script = tmp_path / "holders.py"
    script.write_text(_TWO_HOLDERS, encoding="utf-8")
    run = run_tree_measured([sys.executable, str(script)], child_env(None), subprocess.DEVNULL, with_pss=True)
    assert run.code == 0
    assert run.peak_max >= 100_000_000, run  # the largest single process (~112 MB)
    # both processes' 100 MB, which no single process holds (the largest-process figure is no
    # bound here: the kernel's `wait4` figure of a child started by vfork and exec carries the
    # high-water mark of its parent, this test process, which may be the larger)
    assert run.peak_pss is not None and run.peak_pss >= 200_000_000, run
    assert run.peak_pss <= run.peak_sum, run  # pages shared by both counted once


@pytest.mark.slow
def test_the_entity_benchmarks_run_and_report(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m vaultmind.bench.entities` (docs/benchmarks.md), small: NER throughput, one
    note's update at N leaves (without and with NER), an entity note's alias edit."""
    from vaultmind.bench.entities import _human, main

    assert main(["--leaves", "600", "--repeats", "2", "--ner-texts", "5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    ner = report["ner"]
    assert not ner["available"] or (ner["texts"] == 5 and ner["texts_per_s"] > 0 and ner["entities_per_text"] > 0)
    for key in ("leaf_update", "leaf_update_with_ner"):
        update = report[key]
        assert update["leaves"] == 600 and update["rows"]["occurrences"] > 0 and update["rows"]["edges"] > 0
        assert update["update_ms"]["runs"] == 2 and 0 < update["update_ms"]["min"] <= update["update_ms"]["max"]
        edit = update["registry_edit_ms"]
        assert edit["runs"] == 3 and len(edit["leaves_rederived"]) == 3 and min(edit["leaves_rederived"]) > 0  # 3 at least
    assert report["leaf_update"]["ner"] is None
    text = _human(report)
    assert "leaf_update at 600 leaves" in text and "entity-note alias edit: median" in text


def test_a_vault_of_another_share_of_sources_is_not_reused(tmp_path: Path) -> None:
    """`bench generate --sources-share 0.5` into the folder a run would use: the run's vault
    is the standard one (a fifth chat sources), generated again, not that one."""
    from vaultmind.bench.run import prepare_vault

    vault = tmp_path / "vault-30-s0"
    generate_vault(vault, 30, 0, sources_share=0.5)
    again, figures = prepare_vault(tmp_path, 30, 0)
    assert again == vault and figures["reused"] is False
    assert (read_manifest(vault) or {}).get("sources_share") == 0.2
    assert len(list((vault / "sources" / "chat").rglob("*.md"))) == 6
    assert prepare_vault(tmp_path, 30, 0)[1]["reused"] is True


def test_bench_run_refuses_an_unknown_embedder_before_generating(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "work"
    assert main(["bench", "run", "--embeddings", "bogus", "--only", "walk", "--workdir", str(work)]) == 2
    err = capsys.readouterr().err
    assert "--embeddings: unknown embeddings provider 'bogus'\nvaultmind: hint: use one of:" in err and "[embeddings]" not in err
    assert not work.exists() or not any(work.iterdir())  # no vault generated for nothing
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    assert main(["bench", "run", "--only", "walk", "--workdir", str(a_file)]) == 2
    assert capsys.readouterr().err.startswith(f"vaultmind: error: cannot use --workdir {a_file}: File exists")


def test_a_reused_vault_loses_the_lines_a_killed_save_benchmark_appended(tmp_path: Path) -> None:
    """A save benchmark killed before it restored its notes left its lines at their ends: a
    run that reuses the vault takes them off (before, they stayed, and the vault measured was
    not the generated one)."""
    from vaultmind.bench.run import prepare_vault
    from vaultmind.bench.serving import SAVED_LINE
    from vaultmind.bench.vaults import note_paths

    vault, _ = prepare_vault(tmp_path, 30, 0)
    notes = [vault / rel for rel in note_paths(vault)]
    before = {path: path.read_bytes() for path in notes[:2]}
    first, second = notes[:2]
    with open(first, "a", encoding="utf-8") as fh:  # as two samples of a killed run left it
        fh.write(SAVED_LINE.format(nonce="vmnonceabcdef0001x") + SAVED_LINE.format(nonce="vmnonceabcdef0007x"))
    kept = second.read_text(encoding="utf-8") + "\nAdded vmnonce by hand while benchmarking.\n"
    second.write_text(kept, encoding="utf-8")  # not a sample's line: kept
    again, figures = prepare_vault(tmp_path, 30, 0)
    assert again == vault and figures["reused"] is True
    assert first.read_bytes() == before[first]
    assert second.read_text(encoding="utf-8") == kept


def test_the_walk_questions_ask_of_single_days_the_same_each_run() -> None:
    """The walk bench asks of short windows, so it pays for the leaves that name a window's
    days: a day by its date ("What happened on 6 April 2022?", within the generated notes'
    years) and "yesterday" beside "last week" — the same questions for a seed."""
    from datetime import datetime

    from vaultmind.bench.search import walk_questions
    from vaultmind.retrieval.day_mentions import window_days
    from vaultmind.retrieval.timeparse import parse_time_window

    asked = walk_questions(0, 40)
    assert asked == walk_questions(0, 40)
    windows = [w for q in asked if (w := parse_time_window(q, datetime(2026, 12, 7))) is not None]
    single = [w for w in windows if len(window_days(w)) == 1]
    assert len(single) >= 10, windows
    assert any("yesterday" in w.text for w in single) and any(2019 <= w.start.year <= 2025 for w in single), single
    assert any(len(window_days(w)) == 7 for w in windows), windows  # "last week"


@pytest.mark.slow
def test_the_walk_figures_leave_out_the_question_s_embedding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk target is the walk without its question's embedding, reported apart: with a
    model that takes 50 ms a question (e5 on a busy host, Ollama), the walk's figures held
    those 50 ms, and the bench timed (and measured recall with) the passage form of the
    question, which an asymmetric model's walk never uses. Here the static model answers
    questions through a 50 ms `embed_query`, as an asymmetric one would."""
    import time

    from vaultmind.bench.search import bench_walk
    from vaultmind.embed.static import StaticEmbedder

    vault = tmp_path / "vault"
    generate_vault(vault, 60, 0)
    asked: list[str] = []

    def slow_query(self: StaticEmbedder, text: str) -> object:
        time.sleep(0.05)
        asked.append(text)
        return self.embed([text])[0]

    monkeypatch.setattr(StaticEmbedder, "embed_query", slow_query, raising=False)
    walk = bench_walk(vault, repeats=1, count=8, embed_provider="static")
    assert len(asked) >= 8, "the walks embed their questions (a day alone has no words to)"
    assert walk["embed_p50_s"] >= 0.05
    assert walk["with_embedding"]["p50_s"] >= 0.05
    assert walk["p50_s"] <= walk["with_embedding"]["p50_s"] - 0.045
    assert walk["dense_recall_at_100"] is not None and 0 < walk["dense_recall_at_100"] <= 1


@pytest.mark.slow
def test_the_entity_benchmark_runs_once_per_run_and_shows_its_progress(tmp_path: Path) -> None:
    """Its 50,000 entities do not depend on the vault: a run of two sizes built them twice,
    row by row (over a minute each on a busy host) with no progress but "working". It is
    measured once, its figures given at each size, and says what it is doing."""
    from vaultmind.bench.run import run_benchmarks

    said: list[tuple[str, int, int]] = []
    report = run_benchmarks([20, 30], only=["entities"], workdir=tmp_path,
                            progress=lambda phase, done, total: said.append((phase, done, total)))  # fmt: skip
    first, second = report["sizes"]["20"]["entities"], report["sizes"]["30"]["entities"]
    assert first["entities"] == 50_000 and first["queries_with_hits"] > 0
    assert second == {**first, "measured_at_size": 20}
    assert ("entities: filling the table", 0, 50_000) in said and ("entities: filling the table", 50_000, 50_000) in said
    assert said.count(("entities: filling the table", 0, 50_000)) == 1
    assert ("entities: queries", 200, 200) in said
    assert report["pass"]["30"]["entities.p95_s"] in (True, False)


@pytest.mark.slow
def test_the_memory_targets_say_why_they_are_not_measured_without_smaps_rollup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no `/proc/PID/smaps_rollup` exists (macOS, older kernels) the memory targets'
    figures (PSS) cannot be measured: they were a bare "n/a", read as "not stated for this
    size". The JSON and the table say why."""
    import vaultmind.bench.processes as processes
    from vaultmind.bench.targets import missed
    from vaultmind.cli.bench import print_report

    monkeypatch.setattr(processes, "SMAPS_ROLLUP", str(tmp_path / "no-proc" / "{pid}" / "smaps_rollup"))
    code = main(["bench", "run", "--notes", "120", "--only", "rss", "--workdir", str(tmp_path / "work"), "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    why = "n/a (no /proc/PID/smaps_rollup on this system)"
    rss = report["sizes"]["120"]["rss"]
    assert rss["reindex_tree_pss_peak_mb"] is None and rss["daemon_tree_pss_peak_mb"] is None, rss
    assert rss["reindex_peak_mb"] > 0, "the figures read elsewhere stay"
    assert report["pass"]["120"] == {"rss.reindex_tree_pss_peak_mb": why, "rss.daemon_tree_pss_peak_mb": why}
    assert not missed(report["pass"]), "not measured is no miss"
    print_report(report)
    daemon = next(line for line in capsys.readouterr().out.splitlines() if "daemon + NER, peak PSS" in line)
    assert "– n/a" in daemon and daemon.endswith(f"<= 500 at 50k notes; {why}"), daemon


def test_the_ner_throughput_benchmark_measures_the_batch_vaultmind_uses() -> None:
    """`ner_batch`'s default became 16 (a smaller peak for the daemon's NER process): the NER
    benchmark still measured batches of 64, a figure of a setting vaultmind no longer runs.
    It measures the default, and says which batch it measured."""
    from vaultmind.bench.entities import bench_ner
    from vaultmind.entities.settings import EntitySettings

    result = bench_ner(20)
    if not result["available"]:
        pytest.skip(result["message"])
    assert result["batch"] == EntitySettings().ner_batch == 16, result
    assert bench_ner(20, batch=4)["batch"] == 4
