"""The listing of hits, as a person reads it: a summary's line names a few of the messages it
folds and says how to list the rest, instead of running on with every one's reference."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import run_main


def test_a_summary_hit_lists_two_refs_and_how_to_see_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    vault = tmp_path / "demo"
    run_main(capsys, "init", "--demo", str(vault))
    run_main(capsys, "reindex", "--vault", str(vault))
    code, report, err = run_main(capsys, "flush", "--all", "--vault", str(vault), "--json")
    assert code == 0, err
    sealed = next(s for s in report["sealed"] if s["children"] > 3)
    summary = Path(sealed["path"]).stem
    code, data, _ = run_main(capsys, "query", "leaves", summary, "--vault", str(vault), "--json")
    refs = data["hits"][0]["source_refs"]
    assert len(refs) == sealed["children"] > 3
    code, out, _ = run_main(capsys, "query", "leaves", summary, "--vault", str(vault))
    meta = out.splitlines()[1]
    assert meta.startswith(f"    id {summary} · "), out
    assert f"{refs[0]} · {refs[1]} · and {len(refs) - 2} more (`vaultmind query drill {summary} --vault {vault}`)" in meta, (
        meta
    )
    assert refs[2] not in out
