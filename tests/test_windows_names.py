"""Names vaultmind makes for notes and folders are names Windows can hold (a vault syncs to a
Windows machine): Windows keeps CON, PRN, AUX, NUL, COM0–9, LPT0–9 for devices whatever follows
their first dot ("CON.md", "nul.txt", "com1.tar.gz"), and drops a name's trailing dots and
spaces."""

from __future__ import annotations

from pathlib import Path

from vaultmind.entities.registry_store import slug_of
from vaultmind.ingest.document import parse_document_paths
from vaultmind.ingest.names import readable_name, scope_folder, slugify
from vaultmind.ingest.writer import write_documents

_DEVICES = {"con", "prn", "aux", "nul", *(f"{p}{n}" for p in ("com", "lpt") for n in "0123456789")}


def _windows_keeps(name: str) -> bool:
    return name.split(".", 1)[0].rstrip(" ").casefold() in _DEVICES or name != name.rstrip(". ")


def test_documents_named_as_windows_devices_get_names_windows_can_hold(tmp_path: Path, vault: Path) -> None:
    docs = tmp_path / "exports"
    docs.mkdir()
    for name in ("nul.txt", "aux.notes.md", "Com1.md", "lpt9 .md", "Console.md"):
        (docs / name).write_text(f"The text of {name}.\n", encoding="utf-8")
    written = write_documents(vault, parse_document_paths([docs])).written
    names = sorted(Path(path).name for path in written)
    assert len(names) == 5 and not [n for n in names if _windows_keeps(n)], names
    assert "Console.md" in names, "a name that only starts like one stays as it is"
    again = write_documents(vault, parse_document_paths([docs]))
    assert again.written == [] and sorted(again.unchanged) == sorted(written)


def test_every_name_maker_leaves_no_device_name() -> None:
    for text in ("CON", "nul.txt", "com1.tar.gz", "Aux . draft", "LPT1", "prn."):
        for name in (slugify(text), readable_name(text), scope_folder(text), slug_of(f"org:{text.lower()}")):
            assert not _windows_keeps(name), (text, name)
    assert slugify("Console") == "console" and readable_name("Nullarbor trip") == "Nullarbor trip"
