"""The LoCoMo adapter: a LoCoMo-shaped file → chat batches → source notes → message leaves."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from vaultmind.config import load_config
from vaultmind.errors import IngestError
from vaultmind.ingest.locomo import parse_locomo_paths, parse_session_time, session_of
from vaultmind.ingest.writer import write_batches
from vaultmind.memory import Memory

SAMPLE: dict[str, Any] = {
    "sample_id": "conv-t",
    "conversation": {
        "speaker_a": "Alice",
        "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {
                "speaker": "Alice",
                "dia_id": "D1:1",
                "text": "Hi Bob! I adopted a puppy named Biscuit last week.",
            },
            {"speaker": "Bob", "dia_id": "D1:2", "text": "Congrats Alice! What breed is Biscuit?"},
            {
                "speaker": "Alice",
                "dia_id": "D1:3",
                "text": "A golden retriever. Here is a photo.",
                "img_url": ["https://example.invalid/dog.jpg"],
                "blip_caption": "a photo of a golden dog on a sofa",
                "query": "golden retriever puppy",
            },
        ],
        "session_2_date_time": "12:09 am on 19 June, 2023",
        "session_2": [
            {"speaker": "Bob", "dia_id": "D2:1", "text": "I started learning the cello this month."},
            {
                "speaker": "Alice",
                "dia_id": "D2:2",
                "text": "Nice! Biscuit graduated from obedience school yesterday.",
            },
            {"speaker": "Bob", "dia_id": "D2:3", "text": "Tell Biscuit congratulations from me."},
        ],
    },
    "qa": [
        {
            "question": "What breed is Alice's puppy?",
            "answer": "golden retriever",
            "evidence": ["D1:3"],
            "category": 4,
        },
        {
            "question": "When did Biscuit graduate from obedience school?",
            "answer": "18 June 2023",
            "evidence": ["D2:2"],
            "category": 2,
        },
        {
            "question": "Which instrument is Bob learning, and what pet did Alice adopt?",
            "answer": "cello; a puppy",
            "evidence": ["D2:1; D:1:1"],
            "category": 1,
        },
        {
            "question": "What did Bob say about Alice's cello?",
            "adversarial_answer": "that it sounds lovely",
            "evidence": ["D2:1"],
            "category": 5,
        },
    ],
}


def write_fixture(folder: Path, data: Any = None, name: str = "locomo.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(SAMPLE if data is None else data, indent=1), encoding="utf-8")
    return path


def test_batches_one_per_session_with_turn_ids_times_and_captions(tmp_path: Path) -> None:
    batches = parse_locomo_paths([write_fixture(tmp_path, [SAMPLE])])
    assert [b.note_name for b in batches] == ["session-1", "session-2"]
    assert {b.bucket for b in batches} == {"whole"}
    meta = batches[0].meta
    assert (meta.kind, meta.source_id, meta.scope) == ("chat", "locomo:conv-t", "locomo/conv-t")
    assert meta.participants == ("Alice", "Bob")
    first = batches[0].messages
    assert [m.message_id for m in first] == ["D1:1", "D1:2", "D1:3"]
    assert [m.author for m in first] == ["Alice", "Bob", "Alice"]
    # session time, + 1 s per turn index
    assert [m.timestamp for m in first] == [datetime(2023, 5, 8, 13, 56, s, tzinfo=UTC) for s in (0, 1, 2)]
    assert first[2].text == "A golden retriever. Here is a photo.\n[image: a photo of a golden dog on a sofa]"
    assert first[0].text == SAMPLE["conversation"]["session_1"][0]["text"]
    assert first[2].source_ref == "locomo://conv-t/D1:3"
    assert batches[1].messages[0].timestamp == datetime(2023, 6, 19, 0, 9, 0, tzinfo=UTC)


def test_one_sample_object_is_accepted(tmp_path: Path) -> None:
    batches = parse_locomo_paths([write_fixture(tmp_path, SAMPLE)])
    assert sum(len(b.messages) for b in batches) == 6


def test_round_trip_through_writer_and_index(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    report = write_batches(vault, parse_locomo_paths([write_fixture(tmp_path)]))
    assert sorted(report.written) == [
        "sources/chat/locomo/conv-t/session-1.md",
        "sources/chat/locomo/conv-t/session-2.md",
    ]
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        rows = memory.index.query(
            "SELECT message_id, author, text, strftime(ts, '%Y-%m-%dT%H:%M:%S'), source_ref, kind "
            "FROM leaves ORDER BY ts, message_id"
        )
    assert [r[0] for r in rows] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D2:3"]
    assert {r[5] for r in rows} == {"message"}
    by_id = {r[0]: r for r in rows}
    assert by_id["D1:3"][2].endswith("\n[image: a photo of a golden dog on a sofa]")
    assert by_id["D1:3"][1] == "Alice"
    assert by_id["D1:3"][3] == "2023-05-08T13:56:02"
    assert by_id["D2:1"][3] == "2023-06-19T00:09:00"
    assert by_id["D2:2"][4] == "locomo://conv-t/D2:2"
    # the same ingest again changes nothing
    again = write_batches(vault, parse_locomo_paths([tmp_path / "locomo.json"]))
    assert again.written == [] and again.messages_added == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9, tzinfo=UTC)),
        ("12:30 pm on 1 Jan, 2022", datetime(2022, 1, 1, 12, 30, tzinfo=UTC)),
        (" 9:05 AM on 31 december 2021 ", datetime(2021, 12, 31, 9, 5, tzinfo=UTC)),
    ],
)
def test_session_times(text: str, expected: datetime) -> None:
    assert parse_session_time(text) == expected


@pytest.mark.parametrize(
    "text",
    ["yesterday", "13:10 pm on 8 May, 2023", "1:10 pm on 31 February, 2023", "1:10 pm on 8 Mayo, 2023"],
)
def test_bad_session_times(text: str) -> None:
    with pytest.raises(ValueError, match="date_time"):
        parse_session_time(text)


def test_session_of() -> None:
    assert session_of("D12:3") == 12
    assert session_of("D") is None


def _broken(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(SAMPLE)
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["conversation"].update(session_2_date_time="sometime"),
            "sample conv-t, session_2: date_time",
        ),
        (
            lambda d: d["conversation"].pop("session_1_date_time"),
            "sample conv-t, session_1: no 'session_1_date_time'",
        ),
        (
            lambda d: d["conversation"]["session_2"][1].pop("dia_id"),
            "sample conv-t, session_2, turn 1: no 'dia_id'",
        ),
        (
            lambda d: d["conversation"]["session_1"][0].pop("speaker"),
            r"session_1, turn 0 \(D1:1\): no 'speaker'",
        ),
        (
            lambda d: d["conversation"]["session_2"][0].update(dia_id="D1:2"),
            "dia_id 'D1:2' of session_2, turn 0 was already used",
        ),
        (lambda d: d["conversation"].update(session_1="nope"), "session_1: expected a list of turns"),
        (lambda d: d.pop("sample_id"), "sample 0 has no 'sample_id'"),
    ],
)
def test_errors_name_the_file_sample_and_turn(tmp_path: Path, change: Any, message: str) -> None:
    path = write_fixture(tmp_path, [_broken(change)])
    with pytest.raises(IngestError, match=message) as info:
        parse_locomo_paths([path])
    assert info.value.path == str(path)


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('[\n  {"sample_id": "x",\n  oops}\n]\n', encoding="utf-8")
    with pytest.raises(IngestError, match="line 3") as info:
        parse_locomo_paths([path])
    assert info.value.path == str(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no such file"):
        parse_locomo_paths([tmp_path / "missing.json"])


def test_writing_many_session_notes_reports_progress(tmp_path: Path) -> None:
    """Writing a hundred session notes took seconds with no progress shown: the write phase
    reports each note, as parsing does, and ends at its total."""
    from vaultmind.ingest.detect import ingest_paths

    sample = copy.deepcopy(SAMPLE)
    talk = sample["conversation"]
    for n in range(2, 13):
        talk[f"session_{n}_date_time"] = f"1:56 pm on {n} June, 2023"
        talk[f"session_{n}"] = [{"speaker": "Alice", "dia_id": f"D{n}:1", "text": f"Day {n} with Biscuit."}]
    calls: list[tuple[str, int, int]] = []
    vault = tmp_path / "vault"
    vault.mkdir()
    report = ingest_paths("chat", [write_fixture(tmp_path, [sample])], vault, fmt="locomo", progress=lambda *c: calls.append(c))
    writing = [(done, total) for phase, done, total in calls if phase == "writing"]
    assert len(report.written) > 11 and writing == [(i, len(report.written)) for i in range(len(report.written) + 1)]


def test_the_notes_written_are_listed_with_numbers_in_number_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ingest`'s summary listed session-1, session-10, session-11, session-2 …"""
    from tests.conftest import run_main

    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    sample = copy.deepcopy(SAMPLE)
    talk = sample["conversation"]
    for n in range(2, 12):
        talk[f"session_{n}_date_time"] = f"1:56 pm on {n} June, 2023"
        talk[f"session_{n}"] = [{"speaker": "Alice", "dia_id": f"D{n}:1", "text": f"Day {n} with Biscuit."}]
    vault = tmp_path / "vault"
    (vault / ".vaultmind").mkdir(parents=True)
    code, text, _ = run_main(capsys, "ingest", "chat", str(write_fixture(tmp_path, [sample])), "--vault", str(vault), "--format", "locomo")
    wrote = [line.rsplit("/", 1)[-1] for line in text.splitlines() if line.startswith("  wrote ")]
    assert code == 0 and wrote == [f"session-{n}.md" for n in range(1, 12)]
