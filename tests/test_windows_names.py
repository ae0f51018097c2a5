"""Names vaultmind makes for notes and folders are names Windows can hold (a vault syncs to a
Windows machine): Windows keeps CON, PRN, AUX, NUL, COM0–9, COM¹–³, LPT0–9 and LPT¹–³ (the
reserved names of Microsoft's "Naming Files, Paths, and Namespaces"), and the console's CONIN$
and CONOUT$ (`CreateFile`), for devices whatever follows their first dot ("CON.md", "nul.txt",
"com1.tar.gz"), and drops a name's trailing dots and spaces."""

from __future__ import annotations

from pathlib import Path

from vaultmind.entities.registry_store import slug_of
from vaultmind.ingest.document import parse_document_paths_with_report
from vaultmind.ingest.names import readable_name, scope_folder, slugify
from vaultmind.ingest.writer import write_documents
from vaultmind.vault.layout import windows_safe

_PORTS = (f"{port}{n}" for port in ("com", "lpt") for n in "0123456789¹²³")
_DEVICES = {"con", "prn", "aux", "nul", "conin$", "conout$", *_PORTS}


def _windows_keeps(name: str) -> bool:
    return name.split(".", 1)[0].rstrip(" ").casefold() in _DEVICES or name != name.rstrip(". ")


def test_documents_named_as_windows_devices_get_names_windows_can_hold(tmp_path: Path, vault: Path) -> None:
    docs = tmp_path / "exports"
    docs.mkdir()
    names = (
        "nul.txt",
        "aux.notes.md",
        "Com1.md",
        "lpt9 .md",
        "Console.md",
        "CONIN$.md",
        "conout$.txt",
        "COM¹.md",
        "lpt³ .md",
    )
    for name in names:
        (docs / name).write_text(f"The text of {name}.\n", encoding="utf-8")
    written = write_documents(vault, parse_document_paths_with_report([docs])[0]).written
    made = sorted(Path(path).name for path in written)
    assert len(made) == len(names) and not [n for n in made if _windows_keeps(n)], made
    assert "Console.md" in made, "a name that only starts like one stays as it is"
    again = write_documents(vault, parse_document_paths_with_report([docs])[0])
    assert again.written == [] and sorted(again.unchanged) == sorted(written)


def test_every_name_maker_leaves_no_device_name() -> None:
    texts = (
        "CON",
        "nul.txt",
        "com1.tar.gz",
        "Aux . draft",
        "LPT1",
        "prn.",
        "CONIN$",
        "conout$.md",
        "COM²",
        "Lpt¹.txt",
    )
    for text in texts:
        for name in (slugify(text), readable_name(text), scope_folder(text), slug_of(f"org:{text.lower()}")):
            assert not _windows_keeps(name), (text, name)
    assert slugify("Console") == "console" and readable_name("Nullarbor trip") == "Nullarbor trip"


def test_the_device_rule_is_microsofts_list_and_no_more() -> None:
    """Every name of the list, in any case and with any extension, gets `_`; names that only look
    like one (a port numbered 10 or ⁴, CONIN without its `$`) stay as they are."""
    for device in sorted(_DEVICES):
        for name in (device, device.upper(), f"{device.capitalize()}.tar.gz", f"{device} .md"):
            made = windows_safe(name)
            assert not _windows_keeps(made) and made.replace("_", "", 1).replace(" ", "") == name.replace(
                " ", ""
            ), (name, made)
    for name in ("COM10.md", "lpt⁴.md", "CONIN.md", "conout.txt", "com.md", "nul1.md", "Auxiliary.md"):
        assert windows_safe(name) == name
