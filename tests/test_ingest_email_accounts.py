"""A mailbox account's name (its tree id `email:<account>`, its folder under sources/email):
Latin letters in ASCII as ingest names spell them, other scripts kept apart by a hash, and the
name an earlier vaultmind gave an account kept by a vault that files its mail under it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.test_ingest_email import M1, M2, OTHER, _mbox_notes, write_mbox
from vaultmind.ingest.email import parse_email_paths
from vaultmind.ingest.writer import write_batches


def _accounts(tmp_path: Path, *names: str) -> list[str]:
    out = []
    for name in names:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "a.eml").write_text(M1, encoding="utf-8")
        out.append(parse_email_paths([folder])[0].meta.source_id)
    return out


def test_non_ascii_account_names_are_spelled_in_ascii(tmp_path: Path) -> None:
    names = ["jürgen@exämple.de", "strauß@straße.de", "łukasz@gdańsk.pl", "Ørsted", "björn.þór@øy.no"]
    assert _accounts(tmp_path, *names) == [
        "email:jurgen-example.de",
        "email:strauss-strasse.de",
        "email:lukasz-gdansk.pl",
        "email:orsted",
        "email:bjorn.thor-oy.no",
    ]
    mbox = write_mbox(tmp_path / "Straße.mbox", M1)
    assert parse_email_paths([mbox])[0].meta.scope == "strasse/q3-budget"
    assert parse_email_paths([mbox], account="Jürgen Groß")[0].meta.source_id == "email:jurgen-gross"


def test_accounts_of_other_scripts_keep_apart(tmp_path: Path) -> None:
    """Two addresses at one Japanese domain were both `email:jp`: one account of two."""
    first, second = _accounts(tmp_path, "会議@例え.jp", "営業@例え.jp")
    assert first != second and first.startswith("email:jp-") and second.startswith("email:jp-")
    (tmp_path / "again").mkdir()
    assert _accounts(tmp_path / "again", "会議@例え.jp") == [first]  # the same name each time


def test_an_account_filed_under_its_earlier_name_keeps_it(tmp_path: Path, vault: Path) -> None:
    """Mail of `Straße.mbox` an earlier vaultmind filed as `email:strae`: ingesting the mailbox
    again, with a new thread, adds to that account, not to a second one named `strasse`."""
    first = write_mbox(tmp_path / "Straße.mbox", M1)
    earlier = [
        replace(b, meta=replace(b.meta, source_id="email:strae", scope=b.meta.scope.replace("strasse/", "strae/")))
        for b in parse_email_paths([first])
    ]
    write_batches(vault, earlier)
    later = write_mbox(tmp_path / "Straße.mbox", M1, M2, OTHER)
    report = write_batches(vault, parse_email_paths([later]))
    assert report.messages_added == 2 and report.messages_known == 1
    assert _mbox_notes(vault) == {
        "sources/email/strae/offsite/2024-03-13-offsite.md": ["o1@example.com"],
        "sources/email/strae/q3-budget/2024-03-11-q3-budget.md": ["m1@example.com", "m2@example.com"],
    }


def test_a_new_account_takes_the_ascii_name(tmp_path: Path, vault: Path) -> None:
    mbox = write_mbox(tmp_path / "Straße.mbox", M1, OTHER)
    write_batches(vault, parse_email_paths([mbox]))
    assert sorted(_mbox_notes(vault)) == [
        "sources/email/strasse/offsite/2024-03-13-offsite.md",
        "sources/email/strasse/q3-budget/2024-03-11-q3-budget.md",
    ]
