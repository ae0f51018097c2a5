"""The commands vaultmind's messages name, pasted into a shell as they are, run on the vault
the user named — also when its path has spaces and letters beyond ASCII."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from vaultmind.cli.output import PROBLEMS_SHOWN
from vaultmind.config import load_config
from vaultmind.llm.ollama_chat import LlmUnrecoverable, OllamaChat
from vaultmind.memory import Memory
from vaultmind.queue.store import NewJob, claim, enqueue, fail, now_ms

from .conftest import run_main, write
from .fakes import FakeOllama

_NAMED = re.compile(r"`(vaultmind [^`]+)`|^next: (vaultmind .+)$", re.M)


def _named_commands(text: str) -> list[list[str]]:
    """Every vaultmind command line the text names, split as a POSIX shell splits it."""
    return [shlex.split(a or b)[1:] for a, b in _NAMED.findall(text)]


@pytest.fixture
def spaced(tmp_path: Path) -> Path:
    return tmp_path / "My Notes — Zürich" / "vault ü"


def test_the_next_step_init_names_runs_on_a_vault_whose_path_has_spaces(
    capsys: pytest.CaptureFixture[str], spaced: Path
) -> None:
    code, out, _ = run_main(capsys, "init", str(spaced))
    assert code == 0
    assert _named_commands(out) == [["reindex", "--vault", str(spaced)]]
    assert run_main(capsys, *_named_commands(out)[0])[0] == 0


def test_the_commands_status_and_sync_name_run_on_a_vault_whose_path_has_spaces(
    capsys: pytest.CaptureFixture[str], spaced: Path
) -> None:
    assert run_main(capsys, "init", str(spaced))[0] == 0
    code, out, _ = run_main(capsys, "status", "--vault", str(spaced))
    assert code == 0
    assert _named_commands(out) == [["reindex", "--vault", str(spaced)]]

    write(spaced, "Ideas/plan.md", "# Plan\n\nBuy a kayak.\n")
    (spaced / "Ideas" / "broken.md").write_bytes(b"# Broken\n\n\xff\xfe not UTF-8 \xc3\x28\n")
    code, out, _ = run_main(capsys, "sync", "--vault", str(spaced))
    assert code == 0 and "skipped or with warnings" in out, out
    assert _named_commands(out) == [["status", "--vault", str(spaced)]]
    code, out, _ = run_main(capsys, *_named_commands(out)[0])
    assert code == 0 and "broken.md" in out



def test_a_query_of_an_index_an_older_version_built_says_so_and_how_to_rebuild_it(
    capsys: pytest.CaptureFixture[str], spaced: Path
) -> None:
    """`status` said "rebuild pending"; a query answered from the old rows without a word."""
    write(spaced, "Ideas/plan.md", "# Plan\n\nBuy a kayak before the summer.\n")
    assert run_main(capsys, "init", "--existing", str(spaced))[0] == 0
    assert run_main(capsys, "reindex", "--vault", str(spaced))[0] == 0
    with Memory.open(load_config(spaced)) as memory:  # what a migration asking for a rebuild leaves
        memory.index.con.execute("INSERT INTO meta VALUES ('needs_rebuild', '1')")
    code, out, _ = run_main(capsys, "query", "search", "kayak", "--vault", str(spaced))
    assert code == 0 and "Ideas/plan.md" in out
    assert "note: this index was built by an older vaultmind" in out  # the answer's notice
    assert _named_commands(out) == [["sync", "--vault", str(spaced)], ["serve", "--vault", str(spaced)]]
    assert run_main(capsys, *_named_commands(out)[0])[0] == 0
    code, out, _ = run_main(capsys, "query", "search", "kayak", "--vault", str(spaced))
    assert code == 0 and "Ideas/plan.md" in out and "older vaultmind" not in out


def test_the_listing_status_names_for_more_problems_than_it_shows_runs_on_the_vault(
    capsys: pytest.CaptureFixture[str], spaced: Path
) -> None:
    assert run_main(capsys, "init", str(spaced))[0] == 0
    for n in range(PROBLEMS_SHOWN + 2):
        (spaced / f"broken {n}.md").write_bytes(b"# Broken\n\n\xff\xfe not UTF-8\n")
    assert run_main(capsys, "sync", "--vault", str(spaced))[0] == 0
    code, out, _ = run_main(capsys, "status", "--vault", str(spaced))
    assert code == 0 and "… and 2 more" in out
    (listing,) = _named_commands(out)
    assert listing == ["status", "--vault", str(spaced), "--json"]
    code, data, _ = run_main(capsys, *listing)
    assert code == 0 and len(data["problems"]) == PROBLEMS_SHOWN + 2


def test_the_commands_tree_names_run_on_a_vault_whose_path_has_spaces(
    capsys: pytest.CaptureFixture[str], spaced: Path
) -> None:
    """`tree` named `vaultmind flush` and `vaultmind tree` bare: pasted, they ran on the vault
    of the current folder, or on none."""
    assert run_main(capsys, "init", str(spaced))[0] == 0
    code, out, _ = run_main(capsys, "tree", "--vault", str(spaced))
    assert code == 0 and "no trees yet" in out
    assert _named_commands(out) == [["flush", "--vault", str(spaced)]]
    assert run_main(capsys, *_named_commands(out)[0])[0] == 0
    code, _, err = run_main(capsys, "tree", "Nowhere/none.md", "--vault", str(spaced))
    assert code != 0 and _named_commands(err) == [["tree", "--vault", str(spaced)]], err
    assert run_main(capsys, *_named_commands(err)[0])[0] == 0


def test_the_stop_queue_run_names_beside_a_running_daemon_is_for_the_vault(
    capsys: pytest.CaptureFixture[str], vault: Path, daemon: Memory
) -> None:
    code, _, err = run_main(capsys, "queue", "--run", "--vault", str(vault))
    assert code != 0 and "already runs the queue" in err
    assert _named_commands(err) == [["stop", "--vault", str(vault)]], err


@pytest.mark.parametrize("through", ["local", "daemon"])
def test_the_listing_a_retry_of_no_such_job_names_runs_on_the_vault(
    capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest, spaced: Path, through: str
) -> None:
    """`retry 999` named `vaultmind queue` bare, which lists no jobs, on the vault of the
    current folder."""
    if through == "daemon":  # the daemon's fixture serves its own vault
        request.getfixturevalue("daemon")
        spaced = request.getfixturevalue("vault")
    else:
        assert run_main(capsys, "init", str(spaced))[0] == 0
    code, _, err = run_main(capsys, "retry", "999", "--vault", str(spaced))
    assert code != 0 and "no job #999" in err
    assert _named_commands(err) == [["queue", "--list", "--vault", str(spaced)]], err
    assert run_main(capsys, *_named_commands(err)[0])[0] == 0


def test_the_commands_a_queue_waiting_for_ollama_names_run_on_the_vault(
    capsys: pytest.CaptureFixture[str], spaced: Path
) -> None:
    """The meaning of a job deferred while Ollama is down named a running `serve` bare."""
    assert run_main(capsys, "init", str(spaced))[0] == 0
    with Memory.open(load_config(spaced)) as memory:
        with memory.index.transaction() as con:
            enqueue(con, [NewJob("importance", "gray", {})], now=now_ms())
        job = claim(memory.index, now=now_ms())
        assert job is not None
        fail(memory.index, job, "llm_unreachable", "cannot connect to Ollama", now=now_ms())
    code, out, _ = run_main(capsys, "queue", "--vault", str(spaced))
    assert code == 0 and "Ollama is not reachable" in out, out
    assert _named_commands(out) == [["sync", "--vault", str(spaced)], ["serve", "--vault", str(spaced)]], out
    assert run_main(capsys, *_named_commands(out)[0])[0] == 0


def test_the_retry_a_missing_ollama_model_names_runs_on_the_vault(
    capsys: pytest.CaptureFixture[str], spaced: Path
) -> None:
    """The hint of a chat model Ollama does not have (the failed job's error) named
    `vaultmind retry` bare."""
    assert run_main(capsys, "init", str(spaced))[0] == 0
    with FakeOllama(chat_models=()) as fake:
        chat = OllamaChat.from_config(load_config(spaced, ollama_host=fake.host))
        try:
            with pytest.raises(LlmUnrecoverable) as raised:
                chat.chat([{"role": "user", "content": "hi"}])
        finally:
            chat.close()
    assert "ollama pull" in str(raised.value.hint)
    assert _named_commands(str(raised.value)) == [["retry", "--vault", str(spaced)]], raised.value
    assert run_main(capsys, *_named_commands(str(raised.value))[0])[0] == 0
