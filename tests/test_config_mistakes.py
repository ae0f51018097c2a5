"""Settings a user gets wrong in `.vaultmind/config.toml`, and one they get right: every error
names the file by its full path and the setting; what the file documents is what happens."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.errors import ConfigError

from .conftest import run_main, write

EMBEDDINGS_OFF = '[embeddings]\nprovider = "none"\n'


def _vault(tmp_path: Path, capsys: pytest.CaptureFixture[str], toml: str) -> Path:
    vault = tmp_path / "v"
    run_main(capsys, "init", "--demo", str(vault))
    write(vault, ".vaultmind/config.toml", toml)
    return vault


def test_the_search_limit_of_the_config_is_the_number_of_hits_a_query_returns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`[search] limit`, documented as the default number of hits, is what `query walk` and
    `query search` return without `--limit`; `--limit` still overrides it."""
    vault = _vault(tmp_path, capsys, EMBEDDINGS_OFF + "[search]\nlimit = 3\n")
    for mode in ("walk", "search"):
        code, data, err = run_main(capsys, "query", mode, "launch", "--vault", str(vault), "--json")
        assert code == 0, err
        assert len(data["hits"]) == 3 and data["total"] > 3, (mode, data["total"])
    code, data, err = run_main(
        capsys, "query", "walk", "launch", "--limit", "5", "--vault", str(vault), "--json"
    )
    assert code == 0 and len(data["hits"]) == 5, err


@pytest.mark.parametrize(
    ("toml", "message", "hint"),
    [
        ("[search]\nlimit = 0\n", "[search] limit = 0 must be a positive integer", "such as 10"),
        ("[vaul]\n\n[vault]\nmax_file_mb = 5\n", "unknown section [vaul]", "remove it or check the spelling"),
        ("[queue]\nworkers = 0\n", "[queue] workers = 0 must be a positive integer", None),
        ("[admission]\nkeep = 2\n", "[admission] keep = 2 must be a number between 0 and 1", None),
        (
            '[embeddings]\nprovider = "olama"\n',
            "unknown embeddings provider 'olama'",
            "one of: e5, ollama, static",
        ),
        ("[embeddings]\nbatch = 0\n", "[embeddings] batch = 0 must be a positive integer", "such as 256"),
        ("[embeddings]\nbatch = -5\n", "[embeddings] batch = -5 must be a positive integer", "such as 256"),
        ("[ollama]\ntimeout_s = -1\n", "[ollama] timeout_s = -1 must be a positive number of seconds", "such as 30"),
        (
            '[ollama]\nhost = "http//127.0.0.1:11434"\n',
            "[ollama] host = 'http//127.0.0.1:11434' is no Ollama address",
            '"http://127.0.0.1:11434"',
        ),
        ('[ollama]\nhost = "not a url"\n', "[ollama] host = 'not a url' is no Ollama address", "http or https"),
        ('[ollama]\nhost = "ftp://127.0.0.1:11434"\n', "[ollama] host = 'ftp://127.0.0.1:11434' is no Ollama", None),
        ("[vault]\nignore = [1]\n", "[vault] ignore = [1] must be a list of strings", 'such as ignore = ["Archive/**"]'),
        ("[watch]\nstep_ms = -1\n", "[watch] step_ms = -1 must be a positive number of milliseconds", "such as 30"),
        ("[watch]\ndebounce_ms = -5\n", "[watch] debounce_ms = -5 must be 0 or more milliseconds", "such as 150"),
        (
            '[embeddings]\nprovider = "static"\nmodel = "nonexistent-model"\n',
            "[embeddings] model = 'nonexistent-model' is no static embedding model",
            "a bundled model's name (minilm-l6-static-256)",
        ),
    ],
)
def test_a_bad_setting_is_said_with_the_full_path_of_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], toml: str, message: str, hint: str | None
) -> None:
    """The error names the config file by its full path, wherever the command was run from
    (a path relative to the vault read as relative to the current folder), then the setting."""
    vault = _vault(tmp_path, capsys, toml)
    config = vault / ".vaultmind" / "config.toml"
    code, _, err = run_main(capsys, "status", "--vault", str(vault))
    assert code != 0
    assert f"vaultmind: error: {config}: {message}" in err, err
    if hint:
        assert hint in err, err
    code, data, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert code != 0 and data["error"]["path"] == str(config) and data["error"]["code"] == "config"


@pytest.mark.parametrize("command", [["queue"], ["retry"], ["queue", "--list"]])
def test_the_queue_commands_name_a_bad_queue_setting_with_the_full_path_of_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    vault = _vault(tmp_path, capsys, EMBEDDINGS_OFF + "[queue]\nllm_concurrency = 0\n")
    config = vault / ".vaultmind" / "config.toml"
    code, _, err = run_main(capsys, *command, "--vault", str(vault))
    assert code != 0
    assert f"vaultmind: error: {config}: [queue] llm_concurrency = 0 must be a positive integer" in err, err


def test_stop_works_with_a_broken_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`stop` needs only the vault's state folder: a config.toml that does not parse must not
    keep it from saying (or doing) what it does."""
    vault = _vault(tmp_path, capsys, "[queue\nworkers = 2\n")
    code, _, err = run_main(capsys, "status", "--vault", str(vault))
    assert code != 0 and "cannot parse config" in err  # the file is broken indeed
    code, out, err = run_main(capsys, "stop", "--vault", str(vault))
    assert code == 0 and "no daemon runs" in out, err


@pytest.mark.parametrize("command", ["ingest", "explain"])
def test_ingest_and_explain_check_every_setting_first_and_name_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """`ingest` once wrote its notes, then failed on a bad [entities] setting (exit 1, notes
    written); `explain` named only `.vaultmind/config.toml`, not the vault's."""
    vault = _vault(tmp_path, capsys, EMBEDDINGS_OFF + "[entities]\ncreate_threshold = -1\n")
    config = vault / ".vaultmind" / "config.toml"
    doc = write(tmp_path, "in/Trip plan.md", "# Trip plan\n\nWe fly to Lisbon on 3 May.\n")
    before = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*"))
    argv = ["ingest", "document", str(doc)] if command == "ingest" else ["explain", "abcdef12"]
    code, _, err = run_main(capsys, *argv, "--vault", str(vault))
    assert code == 1, err
    assert f"vaultmind: error: {config}: [entities] create_threshold must be at least 1" in err, err
    assert sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*")) == before  # nothing written


def test_a_section_appended_twice_is_said_with_the_line_it_already_is_at(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The config file lists every section, its keys commented: a snippet appended at the end
    (`[embeddings]` and a key) declares the section twice. The hint names the line where it
    already is; before, only "fix the TOML syntax"."""
    vault = tmp_path / "v"
    run_main(capsys, "init", "--demo", str(vault))
    config = vault / ".vaultmind" / "config.toml"
    shipped = config.read_text(encoding="utf-8")
    at = shipped.splitlines().index("[embeddings]") + 1
    config.write_text(shipped + '\n[embeddings]\nprovider = "static"\n', encoding="utf-8")
    code, _, err = run_main(capsys, "status", "--vault", str(vault))
    assert code != 0
    assert f"{config}: cannot parse config" in err and f"[embeddings] is already in this file at line {at}" in err, err


def test_a_section_first_made_by_a_dotted_key_is_not_said_to_be_at_its_own_line(tmp_path: Path) -> None:
    """`embeddings.batch = 3` and later `[embeddings]` declare it twice too, but no header
    stands before the second: the hint does not send the user to the very line that repeats
    it (before: "[embeddings] is already in this file at line 2", the second one itself)."""
    vault = tmp_path / "v"
    (vault / ".vaultmind").mkdir(parents=True)
    (vault / ".vaultmind" / "config.toml").write_text('embeddings.batch = 3\n[embeddings]\nprovider = "static"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_config(vault)
    assert "Cannot declare" in str(exc.value) and exc.value.hint == "fix the TOML syntax"



def test_an_ollama_host_from_the_environment_is_checked_as_from_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """$VAULTMIND_OLLAMA_HOST is checked as `[ollama] host` is, and the error names it, not the file;
    the bare "host:port" Ollama's client takes is an address."""
    vault = _vault(tmp_path, capsys, EMBEDDINGS_OFF)
    monkeypatch.setenv("VAULTMIND_OLLAMA_HOST", "localhost:11434")
    assert load_config(vault).ollama_host == "localhost:11434"
    monkeypatch.setenv("VAULTMIND_OLLAMA_HOST", "http//localhost:11434")
    with pytest.raises(ConfigError) as exc:
        load_config(vault)
    assert exc.value.message.startswith("$VAULTMIND_OLLAMA_HOST = 'http//localhost:11434' is no Ollama address")
    assert exc.value.path is None


@pytest.mark.parametrize(
    ("toml", "hint"),
    [
        ("[search]\nlimit = 5\nlimit = 6\n", "`limit` is set twice in [search] (lines 2 and 3): keep one"),
        (
            EMBEDDINGS_OFF + "\n[trees]\n# fanout = 8\nfanout = 4\nuser_notes = true\n  fanout = 6\n",
            "`fanout` is set twice in [trees] (lines 6 and 8): keep one",
        ),
    ],
)
def test_a_key_set_twice_is_named_with_both_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], toml: str, hint: str
) -> None:
    """A key written twice was said as "Cannot overwrite a value (at line 3, column 10)" and "fix
    the TOML syntax": neither the key nor where it already was."""
    vault = _vault(tmp_path, capsys, toml)
    config = vault / ".vaultmind" / "config.toml"
    code, _, err = run_main(capsys, "status", "--vault", str(vault))
    assert code != 0 and f"vaultmind: error: {config}: cannot parse config" in err, err
    assert f"vaultmind: hint: {hint}" in err, err
    code, data, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert code != 0 and data["error"]["hint"] == hint
