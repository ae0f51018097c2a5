"""`vaultmind eval locomo` on files that are wrong or runs that are stopped: every sample checked
before the first is ingested, `--out` kept as each conversation finishes, Ctrl-C and SIGTERM
said as what they are, sessions read from the list that holds a turn, the evidence's source said.

The files are small hand-made LoCoMo-shaped ones (`tests.test_locomo.SAMPLE`)."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.test_locomo import SAMPLE, write_fixture
from vaultmind.cli.eval import _sigterm_as_ctrl_c
from vaultmind.cli.main import main
from vaultmind.errors import CtrlC, by_ctrl_c
from vaultmind.eval.gold import sample_questions
from vaultmind.eval.locomo import EvalReport, run_locomo

BM25 = ["--mode", "bm25-baseline", "--embeddings", "none"]


def _sample(sample_id: str) -> dict[str, Any]:
    sample = copy.deepcopy(SAMPLE)
    sample["sample_id"] = sample_id
    return sample


def test_a_malformed_sample_late_in_the_file_stops_the_run_before_any_conversation_is_indexed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    late = _sample("conv-late")
    del late["conversation"]["session_2_date_time"]
    data = write_fixture(tmp_path, [_sample("conv-first"), late])
    out = tmp_path / "results.jsonl"
    assert main(["eval", "locomo", str(data), "--out", str(out), *BM25]) == 1
    err = capsys.readouterr().err
    assert "sample conv-late, session_2: no 'session_2_date_time'" in err
    assert "indexing" not in err, "no conversation is indexed before every sample is checked"
    assert not out.exists()


def test_a_file_with_no_question_to_score_is_an_error_not_a_table_of_zeros(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for qa in (None, [], [{"question": "Anything?", "evidence": ["D9:9"], "category": 4}]):
        sample = _sample("conv-quiet")
        if qa is None:
            del sample["qa"]
        else:
            sample["qa"] = qa
        data = write_fixture(tmp_path, [sample])
        assert main(["eval", "locomo", str(data), "--json", *BM25]) == 1
        error = json.loads(capsys.readouterr().out)["error"]
        assert "no question to score" in error["message"] and error["path"] == str(data)


@pytest.mark.parametrize("given", [True, False])
def test_a_qa_file_without_records_is_an_error_not_the_data_files_evidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: bool
) -> None:
    """An empty QA file, given with --qa or found next to the data file, stops the run before
    any work: it was read as no file at all, every question's evidence taken from the data file
    and the figures saying so only by the file they name."""
    data = write_fixture(tmp_path, [_sample("conv-qa")])
    qa = tmp_path / ("mine.jsonl" if given else "qa_flat_dev.jsonl")
    qa.write_text("\n", encoding="utf-8")
    assert main(["eval", "locomo", str(data), *(["--qa", str(qa)] if given else []), *BM25]) == 1
    err = capsys.readouterr().err
    assert f"{qa}: the QA file holds no question record" in err and "indexing" not in err, err


def test_a_repeated_sample_id_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_fixture(tmp_path, [_sample("conv-twin"), _sample("conv-other"), _sample("conv-twin")])
    assert main(["eval", "locomo", str(data), *BM25]) == 1
    assert "samples 0 and 2 have the same sample_id 'conv-twin'" in capsys.readouterr().err


def test_a_turns_session_is_the_list_that_holds_it_and_ids_of_any_shape_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = _sample("conv-odd")
    conversation = sample["conversation"]
    conversation["session_2"][1]["dia_id"] = "D1:9"  # a turn of session 2 whose id says session 1
    conversation["session_1"][0]["dia_id"] = "intro-a"  # an id not shaped D<n>:<m>
    sample["qa"][1]["evidence"] = ["D1:9"]
    sample["qa"][2]["evidence"] = ["D2:1; intro-a"]
    questions = sample_questions(sample, {}, qa_source="x.json").questions
    assert [(q.qa_id, q.gold_turns, q.gold_sessions) for q in questions] == [
        ("conv-odd:0", ("D1:3",), (1,)),
        ("conv-odd:1", ("D1:9",), (2,)),
        ("conv-odd:2", ("D2:1", "intro-a"), (1, 2)),
    ]
    data = write_fixture(tmp_path, [sample])
    out = tmp_path / "results.jsonl"
    assert main(["eval", "locomo", str(data), "--json", "--out", str(out), *BM25]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["n_questions"] == 3 and figures["skipped_no_evidence"] == 0
    lines = {json.loads(line)["qa_id"]: json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()}
    top = lines["conv-odd:1"]["items"][0]  # "graduate … obedience school": the misplaced turn
    assert top["dia_ids"] == ["D1:9"] and top["sessions"] == [2]
    assert figures["per_category"]["2"]["S@5"] == 1.0


def test_the_figures_say_where_the_gold_evidence_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = _sample("conv-ev")
    sample["qa"][0]["evidence"] = ["D1:3", "D8:1"]  # D8:1 names no turn
    data = write_fixture(tmp_path, [sample])
    assert main(["eval", "locomo", str(data), "--json", *BM25]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert (figures["evidence"], figures["evidence_from_data_file"], figures["dropped_evidence_ids"]) == (
        str(data),
        0,
        1,
    )
    flat = tmp_path / "qa_flat_dev.jsonl"
    record = {"sample_id": "conv-ev", "qa_index": 1, "question": SAMPLE["qa"][1]["question"], "evidence": ["D2:2"]}
    flat.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert main(["eval", "locomo", str(data), *BM25]) == 0
    said = capsys.readouterr().out
    assert f"gold evidence from {flat} (2 questions from the data file)" in said
    assert "1 evidence ids naming no turn dropped" in said


def test_each_conversation_is_kept_as_it_finishes(tmp_path: Path) -> None:
    data = write_fixture(tmp_path, [_sample("conv-1"), _sample("conv-2")])
    seen: list[tuple[int, int, int]] = []

    def checkpoint(report: EvalReport) -> None:
        seen.append((report.planned, len(report.samples), len(report.results)))

    report = run_locomo(data, mode="bm25-baseline", embed_provider="none", checkpoint=checkpoint)
    assert seen == [(2, 0, 0), (2, 1, 3), (2, 2, 6)]
    assert report.samples == ["conv-1", "conv-2"]


def test_sigterm_is_recorded_as_ctrl_c_and_its_handler_given_back() -> None:
    """A SIGTERM during the run is Ctrl-C for the rest of the command: an error DuckDB raises
    in its place with nothing chained (a catalog error, as for Ctrl-C) is read as the stop it
    is, not reported as a failure. The default handler is in place again after the run."""
    before = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    CtrlC.seen = False
    try:
        with pytest.raises(KeyboardInterrupt), _sigterm_as_ctrl_c():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(10)  # the handler runs at once, in this thread
        assert by_ctrl_c(RuntimeError("Catalog Error: Table with name batch does not exist!"))
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    finally:
        CtrlC.seen = False
        signal.signal(signal.SIGTERM, before)


def test_an_ignored_or_handled_sigterm_is_left_to_whoever_set_it() -> None:
    """The run takes SIGTERM over only from its default: one the caller ignores leaves the run
    going, and a program's own handler (a job runner calling `main`) keeps it."""

    def own(_signo: int, _frame: object) -> None:
        pass

    before = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with _sigterm_as_ctrl_c():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.2)  # nothing stops the run
            assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
        signal.signal(signal.SIGTERM, own)
        with _sigterm_as_ctrl_c():
            assert signal.getsignal(signal.SIGTERM) is own
        assert not CtrlC.seen
    finally:
        signal.signal(signal.SIGTERM, before)


def test_an_out_file_holding_part_of_a_run_is_marked_partial_beside_it_until_the_run_ends(tmp_path: Path) -> None:
    """A run stopped (or killed) after some conversations left `--out` holding their questions
    and nothing saying so: a later reader computed figures over a subset unknowingly. While
    conversations are left, `results.jsonl.partial` stands beside it; the lines keep their form."""
    from vaultmind.cli.eval import _Kept
    from vaultmind.eval.locomo import partial_path

    data = write_fixture(tmp_path, [_sample("conv-1"), _sample("conv-2")])
    out = tmp_path / "results.jsonl"
    partial = partial_path(out)
    assert partial.name == "results.jsonl.partial"
    kept = _Kept(out)
    seen: list[tuple[dict[str, Any] | None, int]] = []

    def checkpoint(report: EvalReport) -> None:
        kept(report)
        marked = json.loads(partial.read_text(encoding="utf-8")) if partial.exists() else None
        lines = out.read_text(encoding="utf-8").splitlines() if out.exists() else []
        assert all(set(json.loads(line)) == {"qa_id", "items", "latency_ms"} for line in lines)
        seen.append((marked, len(lines)))

    run_locomo(data, mode="bm25-baseline", embed_provider="none", checkpoint=checkpoint)
    halfway = {
        "partial": True, "conversations_done": 1, "conversations_planned": 2, "questions": 3,
        "samples": ["conv-1"], "results": "results.jsonl",
    }  # fmt: skip
    assert seen == [(None, 0), (halfway, 3), (None, 6)]  # (nothing written before the first conversation)



def test_a_run_stopped_after_its_last_conversation_is_not_said_to_be_partial(tmp_path: Path) -> None:
    """A Ctrl-C landing after the last conversation's lines are written (its figures still to
    be said) said "a partial run, as results.jsonl.partial beside it says": that file had just
    been removed, and `--out` holds the whole run."""
    from vaultmind.cli.eval import _Kept
    from vaultmind.eval.locomo import partial_path

    data = write_fixture(tmp_path, [_sample("conv-1")])
    out = tmp_path / "results.jsonl"
    kept = _Kept(out)
    run_locomo(data, mode="bm25-baseline", embed_provider="none", checkpoint=kept)
    said = kept.interrupted()
    assert not partial_path(out).exists()
    assert "partial" not in said and f"after 1 of 1 conversations; the 3 questions answered are in {out}" in said, said


_CHILD = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job's parent may ignore it
from vaultmind.cli.eval import _sigterm_as_ctrl_c
from vaultmind.cli.main import main
from vaultmind.errors import CtrlC, by_ctrl_c
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM])
def test_a_stopped_run_removes_its_vault_keeps_what_was_answered_and_says_so(tmp_path: Path, signo: int) -> None:
    """Ctrl-C or SIGTERM once the first conversation is answered: exit 130, no temporary vault
    left, `--out` holds the questions of the conversations finished, and the message says that
    a new run starts over (not the general "run the same command again to finish")."""
    data = write_fixture(tmp_path, [_sample(f"conv-{n}") for n in range(8)])
    out = tmp_path / "results.jsonl"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    argv = ["eval", "locomo", str(data), "--out", str(out), *BM25]
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, *argv],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert child.stderr is not None
    lines: list[str] = []
    for line in child.stderr:
        lines.append(line)
        if line.startswith("vaultmind eval: conv-0: answered"):
            child.send_signal(signo)
            break
    _, rest = child.communicate(timeout=120)
    said = "".join(lines) + rest
    assert child.returncode == 130, said
    assert "interrupted after" in said and "running the command again starts over" in said, said
    assert "run the same command again to finish" not in said
    assert not any(scratch.iterdir()), ("the temporary vault is removed", sorted(str(p) for p in scratch.rglob("*"))[:20], said)
    kept = [json.loads(line)["qa_id"] for line in out.read_text(encoding="utf-8").splitlines()]
    finished = len(kept) // 3
    assert 1 <= finished < 8 and len(kept) == 3 * finished, kept
    assert f"after {finished} of 8 conversations; the {len(kept)} questions answered are in {out}" in said
    assert f"a partial run, as {out}.partial beside it says" in said
    marked = json.loads((tmp_path / "results.jsonl.partial").read_text(encoding="utf-8"))
    assert (marked["conversations_done"], marked["conversations_planned"], marked["questions"]) == (finished, 8, len(kept))
