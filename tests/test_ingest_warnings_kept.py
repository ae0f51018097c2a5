"""What an ingest warned of is kept per kind of input, and `status` says it later: which copy
of a message was left out, which file was read with replaced bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.ingest.warnings_kept import FILE_NAME

from .conftest import run_main
from .test_ingest_email import CLEAN_COPY


def test_status_says_what_the_last_ingest_of_each_kind_warned_of(
    cli_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mails = tmp_path / "mails"
    mails.mkdir()
    (mails / "b-good.eml").write_bytes(CLEAN_COPY)
    (mails / "a-bad.eml").write_bytes(CLEAN_COPY.replace("caf\u00e9".encode(), b"caf\xff"))
    code, data, _ = run_main(capsys, "ingest", "email", str(mails), "--vault", str(cli_vault), "--json")
    assert code == 0 and data["warnings"]
    code, status, _ = run_main(capsys, "status", "--vault", str(cli_vault), "--json")
    (kept,) = status["ingest_warnings"]
    assert kept["kind"] == "email" and kept["paths"] == [str(mails)] and kept["warnings"] == data["warnings"]
    assert any("left out the one in" in w and "a-bad.eml" in w for w in kept["warnings"])
    code, text, _ = run_main(capsys, "status", "--vault", str(cli_vault))
    assert f"the last email ingest ({kept['at']}) warned of" in text and "a-bad.eml" in text

    # the next ingest of the kind replaces what it said: one without warnings empties it
    clean = tmp_path / "clean.eml"
    clean.write_bytes(CLEAN_COPY.replace(b"dup-2@", b"other@"))
    assert run_main(capsys, "ingest", "email", str(clean), "--vault", str(cli_vault), "--json")[1]["warnings"] == []
    assert run_main(capsys, "status", "--vault", str(cli_vault), "--json")[1]["ingest_warnings"] == []
    assert (cli_vault / ".vaultmind" / FILE_NAME).is_file()


def test_status_passes_over_a_kept_entry_it_cannot_read(cli_vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The file edited by hand (an entry without its time, a warning that is no text): status
    still answers, with the entries it can read."""
    import json

    (cli_vault / ".vaultmind" / FILE_NAME).write_text(
        json.dumps({
            "chat": {"warnings": ["a.txt: line 3 not read"]},
            "document": {"at": "2024-05-02T10:00:00+00:00", "paths": ["d"], "warnings": [{"bad": 1}]},
            "email": {"at": "2024-05-02T10:00:00+00:00", "paths": ["m"], "warnings": ["m: read with replaced bytes"]},
        }),
        encoding="utf-8",
    )
    code, text, _ = run_main(capsys, "status", "--vault", str(cli_vault))
    assert code == 0 and "the last email ingest (2024-05-02T10:00:00+00:00) warned of 1 thing:" in text
    assert "chat ingest" not in text and "document ingest" not in text
    code, status, _ = run_main(capsys, "status", "--vault", str(cli_vault), "--json")
    assert [kept["kind"] for kept in status["ingest_warnings"]] == ["email"]


def test_two_ingests_keeping_their_warnings_at_once_take_turns(tmp_path: Path) -> None:
    """The file is read, changed and written whole: an ingest keeping its warnings while
    another does (between its read and its write) waits for it, so neither's entry is lost."""
    import json
    import threading

    from vaultmind.ingest.warnings_kept import keep_warnings, kept_warnings
    from vaultmind.vault.atomic import folder_locked

    email = {"email": {"at": "2024-05-02T10:00:00+00:00", "paths": ["m"], "warnings": ["m: read with replaced bytes"]}}
    with folder_locked(tmp_path):  # the other ingest has read the file (none yet)
        chat = threading.Thread(target=keep_warnings, args=(tmp_path, "chat", ["c"], ["c: line 3 not read"]))
        chat.start()
        chat.join(0.5)
        assert chat.is_alive() and not (tmp_path / FILE_NAME).exists(), "it waits for the other"
        (tmp_path / FILE_NAME).write_text(json.dumps(email), encoding="utf-8")  # and writes what it read, with its own
    chat.join()
    assert [kept["kind"] for kept in kept_warnings(tmp_path)] == ["chat", "email"]


def test_the_kept_warnings_name_their_paths_in_full(
    cli_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ingest given a path relative to its shell's folder kept the warnings as said then
    ("../exports/a.txt: format not recognised"): `status` run from anywhere else, or the
    plugin's, named a file that was not there."""
    exports = tmp_path / "exports"
    exports.mkdir()
    (exports / "a.txt").write_text("not a chat export at all\n", encoding="utf-8")
    (tmp_path / "shell").mkdir()
    monkeypatch.chdir(tmp_path / "shell")
    code, data, _ = run_main(capsys, "ingest", "chat", "../exports", "--vault", str(cli_vault), "--json")
    assert code == 0 and data["warnings"] == ["../exports/a.txt: format not recognised; skipped"], data
    monkeypatch.chdir(tmp_path)
    code, status, _ = run_main(capsys, "status", "--vault", str(cli_vault), "--json")
    (kept,) = status["ingest_warnings"]
    assert kept["paths"] == [str(exports)] and kept["warnings"] == [f"{exports / 'a.txt'}: format not recognised; skipped"]


def test_a_warning_of_a_message_in_a_mailbox_names_the_mailbox_in_full(
    cli_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An email ingest's warnings name a message in its file ("../mail/inbox.mbox message 1:
    no sender"): kept as typed, as the path was not the whole of the warning's head."""
    (tmp_path / "mail").mkdir()
    (tmp_path / "mail" / "inbox.mbox").write_text(
        "From MAILER-DAEMON Mon Mar  4 10:00:00 2024\nTo: b@x.org\nSubject: Hi\n"
        "Date: Mon, 4 Mar 2024 10:00:00 +0000\nMessage-ID: <1@x.org>\n\nHello there.\n",
        encoding="utf-8",
    )
    (tmp_path / "shell").mkdir()
    monkeypatch.chdir(tmp_path / "shell")
    code, data, _ = run_main(capsys, "ingest", "email", "../mail/inbox.mbox", "--vault", str(cli_vault), "--json")
    no_sender = "message 1: no sender (From, Sender, Reply-To, Return-Path); author 'unknown'"
    assert code == 0 and data["warnings"] == [f"../mail/inbox.mbox {no_sender}"], data
    monkeypatch.chdir(tmp_path)
    code, status, _ = run_main(capsys, "status", "--vault", str(cli_vault), "--json")
    (kept,) = status["ingest_warnings"]
    assert kept["warnings"] == [f"{tmp_path / 'mail' / 'inbox.mbox'} {no_sender}"], kept
