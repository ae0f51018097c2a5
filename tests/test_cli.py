"""The `vaultmind` command as a user runs it: real processes, real vault, JSON output."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from vaultmind.cli.main import build_parser, main
from vaultmind.cli.output import Progress
from vaultmind.config import load_config
from vaultmind.errors import ConfigError
from vaultmind.privacy import beyond_loopback

from .conftest import READY_S, end_process, run_main, snapshot_files, write

REPO = Path(__file__).resolve().parents[1]


def run_cli(*args: str, check: bool = True, tz: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "VAULTMIND_EMBED_PROVIDER": "none", **({"TZ": tz} if tz else {})}
    result = subprocess.run(
        [sys.executable, "-m", "vaultmind", *args], capture_output=True, text=True, env=env, timeout=120
    )
    if check:
        assert result.returncode == 0, result.stderr + result.stdout
    return result


def as_json(result: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(result.stdout)


def test_demo_vault_end_to_end(tmp_path: Path) -> None:
    vault = tmp_path / "demo"
    run_cli("init", "--demo", str(vault))
    before = snapshot_files(vault)
    stats = as_json(run_cli("reindex", "--vault", str(vault), "--json"))
    assert stats["notes"] >= 15 and stats["chunks"] > stats["notes"]
    assert stats["problems"] == []
    status = as_json(run_cli("status", "--vault", str(vault), "--json"))
    assert status["notes"]["source"] >= 6 and status["notes"]["entity"] >= 3
    assert status["index"]["health"] == "ok"
    result = as_json(run_cli("query", "search", "launch moved", "--vault", str(vault), "--json"))
    assert result["hits"], "the demo answers a question about its launch"
    hit = result["hits"][0]
    assert hit["link"].startswith("obsidian://open?vault=demo&file=")
    walked = as_json(run_cli("query", "walk", "launch moved", "--vault", str(vault), "--json"))
    assert set(hit) == set(walked["hits"][0]), "search answers in the hit shape of every mode"
    assert {"bm25_rank", "rrf"} <= set(hit["breakdown"]) and hit["score"] == hit["breakdown"]["rrf"]
    assert walked["query"]["unknown"] == []
    named = as_json(run_cli("query", "entities", "launch", "--vault", str(vault), "--json"))["hits"]
    assert [h["node_id"] for h in named] == ["topic:launch"], "“# Launch sync” names no person"
    asked = run_cli("query", "walk", "How much is the hotel?", "--vault", str(vault)).stdout
    # "how much" names the kind of answer: nothing is left to match but the hotel it never says
    assert asked.startswith("not in the memory: hotel\n"), "a word the memory never says is named above the hits"
    messages = [h for h in result["hits"] if h["note_path"].startswith("sources/chat/")]
    assert messages and all(h["anchor"].startswith("^m-") and h["source_refs"] for h in messages)
    after = snapshot_files(vault)
    assert {k: after[k] for k in before} == before, "nothing vaultmind did changed a file in the vault"
    created = sorted(set(after) - set(before))
    assert all(p.startswith(("entities/", "summaries/")) for p in created), created
    notes = [rel for rel in created if rel.endswith(".md")]
    assert set(created) - set(notes) == {"entities/.created"}, "besides notes, only the record of entity notes"
    for rel in notes:
        assert "vaultmind: " in (vault / rel).read_text(encoding="utf-8").split("---")[1], rel


def test_init_refuses_to_clobber(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "mine.md", "# mine\n")
    result = run_cli("init", str(vault), check=False)
    assert result.returncode != 0
    assert "--existing" in result.stderr and str(vault) in result.stderr
    assert sorted(p.name for p in vault.iterdir()) == ["mine.md"]
    run_cli("init", "--existing", str(vault))
    assert (vault / "mine.md").read_text() == "# mine\n"
    assert (vault / ".vaultmind" / "config.toml").is_file()


def test_errors_are_friendly_and_json(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    result = run_cli("status", "--vault", str(missing), check=False)
    assert result.returncode == 2
    assert "does not exist" in result.stderr and "Traceback" not in result.stderr
    a_file = write(tmp_path, "notes.md", "# not a vault\n")
    result = run_cli("status", "--vault", str(a_file), check=False)
    assert result.returncode == 2 and f"vault folder {a_file} is a file, not a folder" in result.stderr
    vault = tmp_path / "v"
    write(vault, "n.md", "# n\n")
    write(vault, ".vaultmind/config.toml", "[embeddings\nprovider = 1\n")
    result = run_cli("status", "--vault", str(vault), "--json", check=False)
    assert result.returncode == 1
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "config" and error["path"].endswith("config.toml")


def test_every_command_has_help() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, sp in sub.choices.items():  # type: ignore[attr-defined]
        assert sp.format_help().strip(), name
    assert "reindex" in run_cli("--help").stdout


def test_every_command_says_what_it_does_in_its_own_help(capsys: pytest.CaptureFixture[str]) -> None:
    """`vaultmind status --help` (or `reindex`, `watch`, a query mode…) had shown only its usage and
    options: what the command does was in the list of commands alone. It says it in words (`query
    source` had opened with "Query_source:", the api's name of the mode), every option and argument
    says what it is for (`--limit` of four query modes said nothing, not even its default; a query
    flag with a default says it), and an
    argument the text names is named so in the usage (`tree` spoke of TREE_ID, its usage of tree_id)."""

    def commands(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> dict[tuple[str, ...], argparse.ArgumentParser]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        found = {path: parser} if path else {}
        for sub in subs:
            for name, child in sub.choices.items():
                found.update(commands(child, (*path, name)))
        return found

    every = commands(build_parser(), ())
    assert {("status",), ("reindex",), ("watch",), ("query", "walk"), ("bench", "run")} <= set(every)
    for path, command in every.items():
        with pytest.raises(SystemExit) as done:
            main([*path, "--help"])
        out = capsys.readouterr().out
        assert done.value.code == 0
        usage, said = out.split("\n\n")[:2]  # the usage, and what follows it
        assert not said.startswith(("options:", "positional arguments:")), path
        assert "_" not in said.split()[0], f"{path}: {said.split()[0]}"
        lists = argparse._SubParsersAction  # (its list of commands, said one by one)
        silent = [a.option_strings or a.dest for a in command._actions if a.help is None and not isinstance(a, lists)]
        assert not silent, f"{path}: {silent} without a help text"
        for name in re.findall(r"\b[A-Z]+(?:_[A-Z]+)+\b", said):
            assert name in usage, f"{path}: its text names {name}, its usage does not"
        if path[0] == "query":  # (`query walk --budget` had not said its default)
            flags = [a for a in command._actions if a.option_strings and a.nargs != 0]
            unsaid = [a.option_strings for a in flags if a.default is not None and f"default {a.default}" not in (a.help or "")]
            assert not unsaid, f"{path}: {unsaid} do not say their default"
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    serve = capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["watch", "--help"])
    assert capsys.readouterr().out.split("\n", 1)[1] == serve.split("\n", 1)[1]  # one command, two names


def test_every_command_the_docs_show_exists_with_the_flags_they_give_it() -> None:
    """A command the README, docs/ or the vault's guides show (in a code block or span) is one the
    command line has — mode and sub-action included — and so is every flag shown with it (the
    docs spoke of `vaultmind stop`, which did not exist)."""

    def mentions(text: str) -> list[str]:
        spans = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
        spans += re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
        found = []
        for line in (line for span in spans for line in span.splitlines()):
            for part in re.split(r"&&|\||;", re.split(r"\s#\s", line)[0]):  # (a shell comment is prose)
                said = re.search(r"(?:^|\s)vaultmind\s+([a-z][a-z-]*\b(?!=).*)", part)  # (not `vaultmind id=…`)
                found += [said.group(1)] if said else []
        return found

    def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return dict(subs[0].choices) if subs else {}

    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "vault_template").rglob("*.md"))]
    wrong, seen = [], 0
    for doc in docs:
        for shown in mentions(doc.read_text(encoding="utf-8")):
            seen += 1
            words, parser, path = shown.split(), build_parser(), ["vaultmind"]
            while words and commands(parser) and not words[0].startswith("-"):
                if words[0] not in commands(parser):
                    wrong.append(f"{doc.name}: `{' '.join(path)} {words[0]}` is no command")
                    break
                path.append(words[0])
                parser = commands(parser)[words.pop(0)]
            else:
                flags = {flag for action in parser._actions for flag in action.option_strings}
                for word in words:
                    flag = re.match(r"\[?(--?[a-z][a-z-]*)", word)
                    if flag and flag.group(1) not in flags:
                        wrong.append(f"{doc.name}: `{' '.join(path)}` has no {flag.group(1)}")
    assert seen > 100, "the docs' commands are found"
    assert not wrong, "\n".join(wrong)


def test_readme_commands_match_ci() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0].strip() for b in readme.split("```bash\n")[1:]]
    setup, tests = blocks[0], blocks[1]
    assert "vaultmind init --demo" in setup and "pip install" in setup
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci, "CI runs the README's test command"


def _start_watcher(vault: Path, toml: str = "", **popen: Any) -> subprocess.Popen[str]:
    """`vaultmind watch` as a subprocess on a one-note vault with a short debounce (and `toml`)."""
    write(vault, "a.md", "# Alpha\n\nThe heron nests by the river.\n")
    write(vault, ".vaultmind/config.toml", "[watch]\ndebounce_ms = 50\n" + toml)
    env = {**os.environ, "VAULTMIND_EMBED_PROVIDER": "none", **popen.pop("env", {})}
    return subprocess.Popen(
        [sys.executable, "-m", "vaultmind", "watch", "--vault", str(vault)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        **popen,
    )


def _daemon_status(vault: Path, deadline: float) -> dict[str, Any]:
    """`status` once the daemon answers it with the note indexed and has started (a status
    asked during its start-up answers at once, `loading`), or the last answer at `deadline`."""
    status: dict[str, Any] = {}
    while time.monotonic() < deadline:
        result = run_cli("status", "--vault", str(vault), "--json", check=False)
        if result.returncode == 0:
            status = as_json(result)
            if status["daemon"]["running"] and status["notes"]["total"] == 1 and not status.get("loading"):
                break
        time.sleep(0.2)
    return status


def _stop(proc: subprocess.Popen[str], signo: int) -> str:
    """Send `signo` and wait for the daemon to end; its stderr."""
    proc.send_signal(signo)
    return proc.communicate(timeout=60)[1]


def _assert_stopped_cleanly(proc: subprocess.Popen[str], err: str, vault: Path) -> None:
    assert proc.returncode == 0, err
    assert not (vault / ".vaultmind" / "daemon.json").exists(), "the daemon cleans up after itself"


@pytest.mark.slow
def test_query_and_status_go_through_a_running_watcher(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    proc = _start_watcher(vault)
    try:
        status = _daemon_status(vault, time.monotonic() + READY_S)
        assert status.get("daemon", {}).get("running"), "status answered by the watcher"
        write(vault, "b.md", "# Beta\n\nA kingfisher dives.\n")
        hits: list[Any] = []
        deadline = time.monotonic() + READY_S  # its own: the start-up may have taken most of the first
        while time.monotonic() < deadline and not hits:
            hits = as_json(run_cli("query", "search", "kingfisher", "--vault", str(vault), "--json"))["hits"]
        assert hits and hits[0]["note_path"] == "b.md"
    finally:
        err = _stop(proc, signal.SIGINT)
    _assert_stopped_cleanly(proc, err, vault)


@pytest.mark.slow
def test_stop_ends_the_running_daemon_from_another_terminal(tmp_path: Path) -> None:
    """`vaultmind stop` (the command line had none: docs spoke of it, a user had to find the
    pid for `kill`) ends the vault's daemon as Ctrl-C would and returns once it has let go of
    the vault; asked again, it says no daemon runs."""
    vault = tmp_path / "v"
    proc = _start_watcher(vault)
    try:
        assert _daemon_status(vault, time.monotonic() + READY_S)["daemon"]["running"]
        stopped = run_cli("stop", "--vault", str(vault))
        assert stopped.stdout.strip() == f"vaultmind: stopped the daemon for {vault} (pid {proc.pid})"
        err = proc.communicate(timeout=60)[1]
    finally:
        end_process(proc)
    _assert_stopped_cleanly(proc, err, vault)
    assert f"vaultmind: stopped watching {vault}" in err, err
    again = as_json(run_cli("stop", "--vault", str(vault), "--json"))
    assert again == {"stopped": False, "pid": None}
    assert not as_json(run_cli("status", "--vault", str(vault), "--json"))["daemon"]["running"]


@pytest.mark.slow
def test_stop_ends_the_daemon_after_its_config_file_was_broken(tmp_path: Path) -> None:
    """A config.toml broken while the daemon runs (the daemon keeps its settings) must not keep
    `vaultmind stop` from ending it: stopping needs only the vault's state folder."""
    vault = tmp_path / "v"
    proc = _start_watcher(vault)
    try:
        assert _daemon_status(vault, time.monotonic() + READY_S)["daemon"]["running"]
        write(vault, ".vaultmind/config.toml", "[watch\ndebounce_ms = 50\n")
        stopped = run_cli("stop", "--vault", str(vault), check=False)
        assert stopped.returncode == 0, stopped.stderr
        assert stopped.stdout.strip() == f"vaultmind: stopped the daemon for {vault} (pid {proc.pid})"
        err = proc.communicate(timeout=60)[1]
    finally:
        end_process(proc)
    _assert_stopped_cleanly(proc, err, vault)


@pytest.mark.slow
def test_a_daemon_reachable_beyond_loopback_says_so_and_still_wants_its_token(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    proc = _start_watcher(vault, '[server]\nhost = "0.0.0.0"\n')
    try:
        status = _daemon_status(vault, time.monotonic() + READY_S)
        assert status.get("daemon", {}).get("running"), "the CLI reaches it"
        port = json.loads((vault / ".vaultmind" / "daemon.json").read_text(encoding="utf-8"))["port"]
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/status", timeout=5)
        refused.value.close()
        assert refused.value.code == 401
    finally:
        err = _stop(proc, signal.SIGINT)
    _assert_stopped_cleanly(proc, err, vault)
    assert "warning: [server] host = '0.0.0.0' lets other machines reach the API" in err


def test_only_loopback_hosts_count_as_loopback() -> None:
    assert not any(map(beyond_loopback, ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", "LOCALHOST"]))
    assert all(map(beyond_loopback, ["0.0.0.0", "::", "192.168.1.20", "myhost.lan"]))


@pytest.mark.slow
def test_a_daemon_reads_yesterday_on_the_askers_calendar(tmp_path: Path) -> None:
    """The daemon runs in UTC, the asker in Tokyo: "yesterday" is the asker's day, with the
    daemon as without it, for the default "now" and for an `--at` without an offset."""
    vault = tmp_path / "v"

    def windows() -> list[dict[str, Any]]:
        asks = [("query", "walk", "what happened yesterday?"), ("query", "walk", "yesterday", "--at", "2025-06-18T01:00")]
        return [
            as_json(run_cli(*ask, "--vault", str(vault), "--json", tz="Asia/Tokyo"))["query"]["time_window"]
            for ask in asks
        ]

    def tokyo_day() -> int:
        return (datetime.now(UTC) + timedelta(hours=9)).toordinal()  # Tokyo keeps no summer time

    day = tokyo_day()
    proc = _start_watcher(vault, env={"TZ": "UTC"})
    try:
        assert _daemon_status(vault, time.monotonic() + READY_S)["daemon"]["running"]
        served = windows()
    finally:
        err = _stop(proc, signal.SIGINT)
    _assert_stopped_cleanly(proc, err, vault)
    alone = windows()
    assert served[1] == alone[1]
    if tokyo_day() == day:  # (a run across Tokyo's midnight has two "yesterday"s)
        assert served[0] == alone[0]
    assert alone[1]["start"] == "2025-06-16T15:00:00Z", "17 June in Tokyo, 01:00 on 18 June being Tokyo time"
    assert alone[0]["start"].endswith("T15:00:00Z")


@pytest.mark.slow
@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM])
def test_the_daemon_stops_on_a_signal_even_when_its_parent_ignored_sigint(tmp_path: Path, signo: int) -> None:
    """A parent that ignores SIGINT passes that on; the daemon still stops cleanly on Ctrl-C or
    SIGTERM once it is up (its own handlers), removing its daemon.json."""
    vault = tmp_path / "v"
    proc = _start_watcher(vault, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        _daemon_status(vault, time.monotonic() + READY_S)
        assert (vault / ".vaultmind" / "daemon.json").exists(), "the daemon is up"
    finally:
        err = _stop(proc, signo)
    _assert_stopped_cleanly(proc, err, vault)



@pytest.mark.slow
def test_ctrl_c_as_the_daemon_starts_stops_it(tmp_path: Path) -> None:
    """Ctrl-C the moment the daemon publishes its address, before its first pass is done: it
    stops (the signal had reached watchfiles' wait, which took it for the end of one watch, and
    the loop watched again: the daemon went on, deaf to the Ctrl-C)."""
    vault = tmp_path / "v"
    proc = _start_watcher(vault)
    info = vault / ".vaultmind" / "daemon.json"
    try:
        deadline = time.monotonic() + READY_S
        while not info.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        assert info.exists(), "the daemon published its address"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            err = proc.communicate(timeout=60)[1]
        except subprocess.TimeoutExpired:
            end_process(proc)
            pytest.fail("the daemon did not stop on Ctrl-C during its start-up")
    assert proc.returncode in (0, 130), err
    assert "Traceback" not in err, err
    assert not info.exists(), "its daemon.json is removed"
    assert "WARNING" not in err and "KeyboardInterrupt" not in err, "no other library's log line: " + err

def test_every_package_ships() -> None:
    """A plain (non-editable) install must carry every subpackage: pyproject lists them."""
    import tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(REPO).parts)
        for p in (REPO / "vaultmind").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert found <= listed, f"add to pyproject [tool.setuptools] packages: {sorted(found - listed)}"


def test_unknown_setting_is_an_error_that_names_the_file(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, ".vaultmind/config.toml", "[trees]\nfanuot = 4\n")
    result = run_cli("status", "--vault", str(vault), "--json", check=False)
    error = json.loads(result.stdout)["error"]
    assert result.returncode == 1 and error["code"] == "config"
    assert "fanuot" in error["message"] and "fanout" in error["hint"] and error["path"].endswith("config.toml")


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[server]\nport = 99999\n", "[server] port = 99999 is no port"),
        ('[server]\nhost = "not a host"\n', "[server] host = 'not a host' is no host"),
        ("[trees]\nfanout = 1\n", "[trees] fanout = 1 must be at least 2"),
        ('[trees]\nsummarizer = "gpt"\n', "unknown summarizer 'gpt'"),
        ("[trees]\nflush_after_hours = 100000000.0\n", "[trees] flush_after_hours = 100000000.0 is out of range"),
        ("[queue]\nworkers = 0\n", "[queue] workers = 0"),
        ("[nosuch]\nx = 1\n", "unknown section [nosuch]"),
    ],
)
def test_a_bad_setting_stops_every_command_when_the_config_is_read(
    tmp_path: Path, toml: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Values the daemon would only trip over later (binding its port, sealing a tree) are
    refused when a command reads the file, naming the key."""
    vault = tmp_path / "v"
    write(vault, ".vaultmind/config.toml", toml)
    for command in ("status", "sync"):
        assert main([command, "--vault", str(vault), "--json"]) == 1
        error = json.loads(capsys.readouterr().out)["error"]
        assert error["code"] == "config" and message in error["message"], error
    assert main(["watch", "--vault", str(vault)]) == 1  # refused before it starts watching
    assert message in capsys.readouterr().err
    if "nosuch" in toml:
        assert "remove it or check the spelling" in (error["hint"] or "")
    if "[server]" in toml:
        with pytest.raises(ConfigError):
            load_config(vault)  # checked by the library too: nothing but config.py decides it


def test_progress_shows_long_runs_only_however_long_the_process_lives(capsys: pytest.CaptureFixture[str]) -> None:
    """A daemon's progress lives as long as the daemon: its one-note saves must stay quiet
    hours later, while a reindex's phases show once each has run for two seconds."""
    now = [0.0]
    progress = Progress(clock=lambda: now[0])
    now[0] = 3600.0  # an hour into the daemon's life
    for _ in range(3):
        progress("read", 1, 1)
        progress("embed", 1, 1)
        now[0] += 5.0
    assert capsys.readouterr().err == ""
    for i in range(1, 11):  # a long reindex: phases take turns, each run keeps its clock
        progress("read", 1000 * i, 10_000)
        progress("embed", 900 * i, 9_000)
        now[0] += 0.6
    err = capsys.readouterr().err
    assert "read 5,000/10,000" in err and "embed 9,000/9,000 (100%)" in err
    assert "read 1,000/10,000" not in err  # the first two seconds of the run stay quiet


def test_a_finished_phase_ends_its_progress_line(capsys: pytest.CaptureFixture[str]) -> None:
    """What is printed after a phase reached its total (the tip of a slow question, the next
    phase) starts on a line of its own; an unfinished line is ended once, on exit."""
    now = [0.0]
    with Progress(clock=lambda: now[0], terminal=True) as progress:
        progress("load leaves", 0, 100)
        now[0] = 3.0
        progress("load leaves", 50, 100)
        assert not capsys.readouterr().err.endswith("\n")
        now[0] = 4.0
        progress("load leaves", 100, 100)
        assert capsys.readouterr().err == "\rvaultmind: load leaves 100/100 (100%)   \n"
        progress("load postings", 0, 10)
        now[0] = 7.0
        progress("load postings", 5, 10)
        assert capsys.readouterr().err == "\rvaultmind: load postings 5/10 (50%)   "
    assert capsys.readouterr().err == "\n"


def test_progress_off_a_terminal_is_whole_lines_and_few(capsys: pytest.CaptureFixture[str]) -> None:
    """Progress written to a log or a pipe (a daemon's output, a CI job) had been carriage
    returns running every update into one long line; there it is whole lines: a phase's first,
    one per `LOG_EVERY_S` at most, and its last."""
    now = [0.0]
    with Progress(clock=lambda: now[0]) as progress:  # (capsys: stderr is no terminal)
        for i in range(0, 101):  # a 50 s phase, 100 updates
            progress("embed", i * 10, 1000)
            now[0] += 0.5
        progress("write", 1, 2)
        now[0] += 3
        progress("write", 2, 2)
    lines = capsys.readouterr().err.split("\n")
    assert "\r" not in "".join(lines) and lines[-1] == "", "whole lines"
    embed = [line for line in lines if "embed" in line]
    assert embed[0].startswith("vaultmind: embed ") and embed[-1] == "vaultmind: embed 1,000/1,000 (100%)"
    assert 4 <= len(embed) <= 6, embed  # 48 s shown: its first, one per 10 s, its last
    assert lines[-2:] == ["vaultmind: write 2/2 (100%)", ""], "its last line"


def test_progress_off_a_terminal_of_phases_taking_turns_is_few_lines(capsys: pytest.CaptureFixture[str]) -> None:
    """A reindex's phases take turns ("read", "embed", "read" …): off a terminal each phase
    writes one line per `LOG_EVERY_S` at most, not one at every change of phase."""
    now = [0.0]
    with Progress(clock=lambda: now[0]) as progress:
        for i in range(40):  # 24 s of two phases taking turns every 0.6 s
            progress("read" if i % 2 == 0 else "embed", i, 100)
            now[0] += 0.6
    lines = [line for line in capsys.readouterr().err.split("\n") if line]
    assert 2 <= len(lines) <= 8, lines  # each phase: its first, one per 10 s


def test_progress_off_a_terminal_ends_on_where_a_phase_got_to(capsys: pytest.CaptureFixture[str]) -> None:
    """A phase that stops short of its total (an interrupted run) held its latest count back
    within `LOG_EVERY_S` of its previous line: a log ended on an older count. The line's end
    writes it."""
    now = [0.0]
    with Progress(clock=lambda: now[0]) as progress:
        for i in range(0, 41):  # 12 s shown, stopped at 400 of 1,000
            progress("embed", i * 10, 1000)
            now[0] += 0.35
    lines = [line for line in capsys.readouterr().err.split("\n") if line]
    assert lines[-1] == "vaultmind: embed 400/1,000 (40%)", lines


def test_bench_progress_off_a_terminal_writes_each_steps_finished_state(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bench's progress dropped a phase's last count when it came within 0.5 s of the one
    before (a fast phase's end), and off a terminal never wrote it: a log tailed showed
    "write notes: 0/100 (0%)" for a step that had finished."""
    from vaultmind.cli import bench

    monkeypatch.setattr(bench, "PROGRESS_AFTER_S", 0.0)
    progress = bench.StderrProgress()
    try:
        progress.announce("generating the vault")
        for done in range(0, 101, 10):
            progress("write notes", done, 100)
        progress.announce("indexing")
    finally:
        progress.close()
    lines = [line for line in capsys.readouterr().err.split("\n") if line]
    assert "\r" not in "".join(lines)
    assert lines[0] == "vaultmind bench: generating the vault" and lines[-1] == "vaultmind bench: indexing", lines
    assert lines[-2].startswith("  write notes: 100/100 (100%), "), lines


def test_a_question_asked_without_a_daemon_says_what_its_wait_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A question the command line answers itself first loads the index into memory: past the
    progress threshold it says how long that took and that a running daemon keeps it loaded,
    on stderr; stdout stays the JSON answer."""
    from vaultmind.cli import query
    from vaultmind.cli.main import main

    vault = tmp_path / "v"
    run_cli("init", str(vault))
    write(vault, "otters.md", "# Otters\n\nOtters hold hands while they sleep on the river.\n")
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    assert main(["query", "search", "otters", "--vault", str(vault), "--json"]) == 0
    out = capsys.readouterr()
    assert "loading the index" not in out.err  # quicker than the threshold: nothing said
    monkeypatch.setattr(query, "PROGRESS_AFTER_S", 0.0)
    assert main(["query", "search", "otters", "--vault", str(vault), "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["hits"][0]["note_path"] == "otters.md"
    assert "went to loading the index into memory" in out.err and f"vaultmind serve --vault {vault}" in out.err


def test_status_lists_the_files_skipped_first_and_counts_the_rest(tmp_path: Path) -> None:
    """A large vault's warnings do not flood the terminal: `status` counts the problems by kind,
    lists the files it skipped before those indexed with a warning, stops after twenty, and
    points to `--json`, which lists every one. It names the index's last migration."""
    vault = tmp_path / "v"
    run_cli("init", str(vault))
    for i in range(25):
        write(vault, f"bad{i:02d}.md", f"---\ntitle: [unclosed\n---\n# Note {i}\n\nbody\n")
    (vault / "zz-binary.md").write_bytes(b"\x00\x01\x02binary")
    run_cli("reindex", "--vault", str(vault))
    text = run_cli("status", "--vault", str(vault)).stdout
    assert "26 files skipped or with warnings (binary 1, frontmatter 25):" in text
    listed = [line for line in text.splitlines() if line.startswith("  ") and ": [" in line]
    assert len(listed) == 20 and "zz-binary.md: [binary]" in listed[0]
    assert f"… and 6 more: `vaultmind status --vault {vault} --json` lists every one" in text
    status = as_json(run_cli("status", "--vault", str(vault), "--json"))
    assert len(status["problems"]) == 26
    index = status["index"]
    assert index["migration"].startswith(f"{index['migrations']:04d}_") and f"the last {index['migration']}" in text


def test_status_counts_vaultminds_guides_apart_from_the_notes_of_each_kind(tmp_path: Path) -> None:
    """A new vault holds vaultmind's guides (the welcome note, a README in each of its folders):
    `status` counts them apart, so an empty vault shows no summary and no entity."""
    vault = tmp_path / "v"
    run_cli("init", str(vault))
    write(vault, "Ideas.md", "# Ideas\n\nA garden shed.\n")
    run_cli("reindex", "--vault", str(vault))
    notes = as_json(run_cli("status", "--vault", str(vault), "--json"))["notes"]
    assert notes == {"total": 5, "source": 0, "summary": 0, "entity": 0, "user": 1, "readme": 4}
    assert "notes   5 (user 1, sources 0, summaries 0, entities 0; vaultmind's guides 4)" in run_cli(
        "status", "--vault", str(vault)
    ).stdout


def test_without_vault_a_command_finds_the_vault_its_folder_is_in_or_refuses(tmp_path: Path) -> None:
    """Run from a vault's subfolder, a command answers from the vault (not a new index of the
    subfolder); run from a folder in no vault, it says so and writes nothing there."""
    vault = tmp_path / "v"
    run_cli("init", "--demo", str(vault))
    run_cli("reindex", "--vault", str(vault))
    sub = vault / "sources"
    env = {**os.environ, "VAULTMIND_EMBED_PROVIDER": "none"}
    env.pop("VAULTMIND_VAULT", None)
    cmd = [sys.executable, "-m", "vaultmind"]
    inside = subprocess.run([*cmd, "status", "--json"], cwd=sub, capture_output=True, text=True, env=env, timeout=120)
    assert inside.returncode == 0, inside.stderr
    assert json.loads(inside.stdout)["vault"] == str(vault) and not (sub / ".vaultmind").exists()
    elsewhere = tmp_path / "notes"
    elsewhere.mkdir()
    (elsewhere / "n.md").write_text("# hello\n")
    outside = subprocess.run([*cmd, "query", "walk", "hello"], cwd=elsewhere, capture_output=True, text=True, env=env, timeout=120)
    assert outside.returncode != 0 and "is not in a vaultmind vault" in outside.stderr and "--vault" in outside.stderr
    assert sorted(p.name for p in elsewhere.iterdir()) == ["n.md"]
    for command in (["status"], ["reindex"], ["sync"], ["query", "walk", "hello"]):  # named, but no vault either
        named = run_cli(*command, "--vault", str(elsewhere), check=False)
        assert named.returncode == 2 and "is not a vaultmind vault" in named.stderr
        assert f"vaultmind init --existing {elsewhere}" in named.stderr
    assert sorted(p.name for p in elsewhere.iterdir()) == ["n.md"]  # no index, no entity notes written


def test_hits_reach_the_terminal_without_their_control_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A note's escape sequences and bells are shown as �, not sent to the terminal."""
    vault = tmp_path / "v"
    run_cli("init", str(vault))
    write(vault, "ctrl.md", "# Ctrl\n\nctrl\x1b[31mword\x07 ctrlword\n")
    run_cli("reindex", "--vault", str(vault))
    out = run_cli("query", "search", "ctrlword", "--vault", str(vault)).stdout
    assert "ctrlword" in out and "\x1b" not in out and "\x07" not in out and "ctrl\ufffd[31mword\ufffd" in out
    raw = as_json(run_cli("query", "search", "ctrlword", "--vault", str(vault), "--json"))
    assert "\x1b[31m" in raw["hits"][0]["content"]  # the JSON keeps the text as it is


def test_a_full_disk_is_an_error_a_person_can_act_on(tmp_path: Path) -> None:
    """The index's write-ahead log on a device with no space (/dev/full): `sync` says so in one
    line, or as a JSON error, not with DuckDB's traceback; once there is room, it catches up."""
    vault = tmp_path / "v"
    run_cli("init", str(vault))
    run_cli("reindex", "--vault", str(vault))
    wal = vault / ".vaultmind" / "index.duckdb.wal"
    wal.symlink_to("/dev/full")
    write(vault, "new.md", "# New\n\nA heron on the weir.\n")
    failed = run_cli("sync", "--vault", str(vault), "--json", check=False)
    error = json.loads(failed.stdout)["error"]
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert error["message"] == "no space left on the device that holds the index"
    text = run_cli("sync", "--vault", str(vault), check=False)
    # (a slow start may say "loading the entity model" first: the error is the line after)
    errors = [line for line in text.stderr.splitlines() if line.startswith("vaultmind: error:")]
    assert errors == ["vaultmind: error: no space left on the device that holds the index"], text.stderr
    wal.unlink()
    run_cli("sync", "--vault", str(vault))
    hits = as_json(run_cli("query", "search", "heron", "--vault", str(vault), "--json"))["hits"]
    assert hits and hits[0]["note_path"] == "new.md"


def test_sync_json_says_it_moved_a_broken_index_aside_and_status_says_it_again_once(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    run_cli("init", str(vault))
    (vault / ".vaultmind" / "index.duckdb").write_bytes(b"not a duckdb file" * 100)
    synced = as_json(run_cli("sync", "--vault", str(vault), "--json"))
    assert "could not be opened" in synced["notice"] and synced["notes"] > 0
    index = as_json(run_cli("status", "--vault", str(vault), "--json"))["index"]
    assert index["health"] == "rebuilt" and index["notice"].startswith("index could not be opened")
    assert as_json(run_cli("status", "--vault", str(vault), "--json"))["index"]["health"] == "ok"


def test_modes_that_do_not_score_show_no_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`query source`, `window`, `drill` and `leaves` list nodes in their own order (time, the
    tree, the ids given) and score none: each hit had said "(score 0.0000)", read as worthless.
    A ranked mode still shows its scores."""
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    vault = tmp_path / "v"
    run_cli("init", str(vault))
    write(vault, "a.md", "---\ndate: 2024-03-04\n---\n# Ferry\n\nThe ferry to Ischia leaves at nine.\n")
    write(vault, "b.md", "---\ndate: 2024-03-05\n---\n# Pier\n\nWe walked along the pier.\n")
    code, out, err = run_main(capsys, "query", "source", "--kind", "note", "--vault", str(vault))
    assert code == 0, err
    assert "a.md" in out and "b.md" in out and "score" not in out, out
    code, out, err = run_main(capsys, "query", "window", "2024-03-01", "2024-03-31", "--vault", str(vault))
    assert code == 0, err
    assert "a.md" in out and "score" not in out, out
    code, out, err = run_main(capsys, "query", "walk", "ferry to Ischia", "--vault", str(vault))
    assert code == 0, err
    assert re.search(r"1\. a\.md#.*\(score \d\.\d{4}", out), out


def test_a_sync_that_rebuilds_an_upgraded_index_says_rebuilt_not_added(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """After an upgrade asking for a rebuild, `sync` said "added 2" of notes already there."""
    from vaultmind.memory import Memory

    vault = tmp_path / "v"
    write(vault, "a.md", "# A\n\nThe kayak trip.\n")
    write(vault, "b.md", "# B\n\nThe canoe trip.\n")
    assert run_main(capsys, "init", "--existing", str(vault))[0] == 0
    code, data, _ = run_main(capsys, "reindex", "--vault", str(vault), "--json")
    assert code == 0 and data["notes"] >= 2
    with Memory.open(load_config(vault)) as memory:  # what a migration asking for a rebuild leaves
        memory.index.con.execute("INSERT INTO meta VALUES ('needs_rebuild', '1')")
    code, out, _ = run_main(capsys, "sync", "--vault", str(vault))
    assert code == 0 and f"rebuilt: {data['notes']} notes" in out and "added" not in out, out
    code, data, _ = run_main(capsys, "sync", "--vault", str(vault), "--json")
    assert code == 0 and data["rebuilt"] is False and data["added"] == 0, data
    write(vault, "c.md", "# C\n\nThe raft trip.\n")
    code, out, _ = run_main(capsys, "sync", "--vault", str(vault))
    assert code == 0 and "added 1" in out and "rebuilt" not in out, out


@pytest.mark.parametrize("command", ["reindex", "sync"])
def test_the_time_a_whole_vault_sync_reports_is_the_whole_commands(
    cli_vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """Entity recognition and entity notes run after the index's sync: their time is in the
    time reported, and each part is named. Before, "reindexed … in 0.98 s" left them out of a
    run that took ten."""
    import vaultmind.cli.main as cli_main

    write(cli_vault, "A.md", "# A\n\nSome words about the garden.\n")
    enrich = cli_main._enrich_if_small

    def slow_enrich(memory: Any) -> dict[str, Any]:
        time.sleep(1.0)
        return enrich(memory)

    monkeypatch.setattr(cli_main, "_enrich_if_small", slow_enrich)
    code, result, _ = run_main(capsys, command, "--vault", str(cli_vault), "--json")
    assert code == 0
    assert result["enriched"]["seconds"] >= 1.0
    assert result["seconds"] >= result["index_seconds"] + result["enriched"]["seconds"]
    code, out, _ = run_main(capsys, command, "--vault", str(cli_vault))
    head = re.search(r" in (\d+\.\d+) s \(indexing (\d+\.\d+) s, entities (\d+\.\d+) s\)", out)
    assert head is not None, out
    assert float(head.group(1)) >= 1.0 and float(head.group(3)) >= 1.0
