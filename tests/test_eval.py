"""The retrieval metrics, hit → item mapping, gold evidence, and `vaultmind eval locomo` end to end."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.test_locomo import SAMPLE, write_fixture
from vaultmind.cli.main import main
from vaultmind.entities.ner import NerEngine
from vaultmind.errors import IngestError
from vaultmind.eval.gold import load_qa_file, reference_time, sample_questions
from vaultmind.eval.locomo import TurnLookup, hit_item
from vaultmind.eval.metrics import Item, budget_fit, item_tokens, percentile, score_question, summarize

# --- metrics on hand-made rankings --------------------------------------------------------------


def test_item_tokens_round_up() -> None:
    assert [item_tokens("a" * n) for n in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]


def test_scores_of_a_ranking() -> None:
    gold_turns, gold_sessions = ["D1:1", "D2:3"], [1, 2]
    items = [
        Item("x" * 2000, ("D3:1",), (3,)),  # 500 tokens, wrong session
        Item("y" * 1600, ("D1:1",), (1,)),  # 400 tokens → 900: first gold session at rank 2
        Item("z" * 404, ("D2:3",), (2,)),  # 101 tokens → 1001: overflows, does not count for T-B1k
        Item("w", ("D2:3",), (2,)),  # would fit, but the walk stopped at the overflowing item
    ]
    assert budget_fit(items) == 2
    assert score_question(items, gold_turns, gold_sessions) == {
        "S@5": 1.0,
        "S-MRR": 0.5,
        "T-R@5": 1.0,
        "T-B1k": 0.5,
    }


def test_session_found_only_below_top_five() -> None:
    items = [Item("a", (f"D9:{i}",), (9,)) for i in range(6)] + [Item("b", ("D4:2",), (4,))]
    scores = score_question(items, ["D4:2", "D4:5", "D5:1"], [4, 5])
    assert scores == {"S@5": 0.0, "S-MRR": pytest.approx(1 / 7), "T-R@5": 0.0, "T-B1k": pytest.approx(1 / 3)}


def test_s_mrr_stops_at_rank_ten_and_budget_edge_is_inclusive() -> None:
    items = [Item("a" * 400, (), (9,)) for _ in range(10)] + [Item("b", ("D1:1",), (1,))]
    assert score_question(items, ["D1:1"], [1]) == {"S@5": 0.0, "S-MRR": 0.0, "T-R@5": 0.0, "T-B1k": 0.0}
    exact = [Item("a" * 3996, (), (9,)), Item("b" * 4, ("D1:1",), (1,))]  # 999 + 1 = 1,000 tokens: fits
    assert score_question(exact, ["D1:1"], [1])["T-B1k"] == 1.0
    # a session-covering item that holds no gold turn's full text (a summary) finds the session only
    summary = [Item("Alice and Bob talk about pets", (), (1,))]
    assert score_question(summary, ["D1:1"], [1]) == {"S@5": 1.0, "S-MRR": 1.0, "T-R@5": 0.0, "T-B1k": 0.0}


def test_summary_means_and_latency_percentiles() -> None:
    scores = [
        {"S@5": 1.0, "S-MRR": 0.5, "T-R@5": 1.0, "T-B1k": 0.5},
        {"S@5": 0.0, "S-MRR": 0.25, "T-R@5": 0.0, "T-B1k": 1.0},
    ]
    assert summarize(scores, [10.0, 40.0]) == {
        "n": 2,
        "S@5": 0.5,
        "S-MRR": 0.375,
        "T-R@5": 0.5,
        "T-B1k": 0.75,
        "latency_ms": {"mean": 25.0, "p50": 25.0, "p95": 38.5},
    }
    assert percentile([10.0, 20.0, 30.0, 40.0], 95) == pytest.approx(38.5)
    assert percentile([], 50) == 0.0
    assert summarize([], [])["n"] == 0


# --- hits → items -------------------------------------------------------------------------------


LOOKUP = TurnLookup(
    leaf_message={"leaf-1": "D1:1", "leaf-2": "D2:1"},
    turn_text={"D1:1": "Hi Bob! I adopted a puppy.", "D2:1": "I started learning the cello."},
    turn_session={"D1:1": 1, "D2:1": 2},
)


def test_leaf_hits_of_every_shape() -> None:
    search_hit = {"leaf_id": "leaf-1", "text": "Hi Bob! I adopted a puppy."}
    walk_hit = {"node_id": "leaf-2", "content": "I started learning the cello.", "message_id": "D2:1"}
    assert hit_item(search_hit, LOOKUP) == Item("Hi Bob! I adopted a puppy.", ("D1:1",), (1,))
    assert hit_item(walk_hit, LOOKUP) == Item("I started learning the cello.", ("D2:1",), (2,))
    note_hit = {"leaf_id": "some-user-note-section", "text": "Welcome"}
    assert hit_item(note_hit, LOOKUP) == Item("Welcome", (), ())


def test_multi_turn_items_count_only_turns_whose_full_text_they_hold() -> None:
    window = {
        "node_id": "w",
        "content": "Hi Bob!  I adopted\na puppy.\nI started learning the cello.",
        "dia_ids": ["D1:1", "D2:1"],
    }
    assert hit_item(window, LOOKUP) == Item(window["content"], ("D1:1", "D2:1"), (1, 2))
    summary = {
        "node_id": "s",
        "content": "Alice adopted a puppy; Bob plays cello.",
        "child_ids": ["leaf-1", "leaf-2"],
    }
    assert hit_item(summary, LOOKUP) == Item(summary["content"], (), (1, 2))


# --- questions and gold evidence ------------------------------------------------------------------


def test_questions_skip_adversarial_and_repair_evidence() -> None:
    asked = sample_questions(SAMPLE, {}, qa_source="x.json")
    questions, skipped = asked.questions, asked.skipped
    assert [(q.qa_id, q.category) for q in questions] == [("conv-t:0", 4), ("conv-t:1", 2), ("conv-t:2", 1)]
    assert questions[2].gold_turns == ("D2:1", "D1:1")  # "D2:1; D:1:1" split and read leniently
    assert questions[2].gold_sessions == (1, 2)
    assert skipped == []


def test_flat_qa_evidence_wins_and_unknown_ids_are_dropped(tmp_path: Path) -> None:
    flat_path = tmp_path / "qa.jsonl"
    records = [
        {
            "sample_id": "conv-t",
            "qa_index": 0,
            "question": "What breed is Alice's puppy?",
            "evidence": ["D1:2", "D7:7"],
        },
        {"sample_id": "conv-t", "qa_index": 1, "question": SAMPLE["qa"][1]["question"], "evidence": ["D"]},
    ]
    flat_path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    asked = sample_questions(SAMPLE, load_qa_file(flat_path), qa_source=str(flat_path))
    assert asked.questions[0].gold_turns == ("D1:2",)
    assert asked.skipped == ["conv-t:1"]
    assert asked.dropped_evidence_ids == 2  # D7:7, and the bare "D" of conv-t:1
    assert asked.from_data_file == 1  # conv-t:2, which the QA file does not list
    records[0]["question"] = "Something else?"
    flat_path.write_text(json.dumps(records[0]) + "\n", encoding="utf-8")
    with pytest.raises(IngestError, match=r"question conv-t:0 differs"):
        sample_questions(SAMPLE, load_qa_file(flat_path), qa_source=str(flat_path))


def test_reference_time_is_the_last_message() -> None:
    assert reference_time(SAMPLE, path="x").isoformat() == "2023-06-19T00:09:02+00:00"


# --- end to end --------------------------------------------------------------------------------------


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    assert main(argv) == 0
    out = capsys.readouterr()
    assert "vaultmind eval: conv-t (1/1): 2 sessions, 6 turns (6 indexed)" in out.err
    result: dict[str, Any] = json.loads(out.out)
    return result


def test_eval_locomo_bm25_baseline_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_fixture(tmp_path)
    out = tmp_path / "results.jsonl"
    argv = [
        "eval",
        "locomo",
        str(data),
        "--json",
        "--out",
        str(out),
        "--mode",
        "bm25-baseline",
        "--embeddings",
        "none",
    ]
    result = _run(capsys, argv)
    assert result["mode"] == "bm25-baseline"
    assert result["n_questions"] == 3
    assert sorted(result["per_category"]) == ["1", "2", "4"]
    overall = result["overall"]
    assert set(overall) == {"n", "S@5", "S-MRR", "T-R@5", "T-B1k", "latency_ms"}
    assert set(overall["latency_ms"]) == {"mean", "p50", "p95"}
    assert all(isinstance(overall[k], float) for k in ("S@5", "S-MRR", "T-R@5", "T-B1k"))
    # "graduate … obedience school" matches only D2:2, the gold turn: found at rank 1
    temporal = result["per_category"]["2"]
    assert (temporal["name"], temporal["n"]) == ("temporal", 1)
    assert [temporal[k] for k in ("S@5", "S-MRR", "T-R@5", "T-B1k")] == [1.0, 1.0, 1.0, 1.0]
    # the breed is only in the image caption line, which the question does not share words with
    single = result["per_category"]["4"]
    assert single["S@5"] == 1.0 and single["T-B1k"] == 0.0

    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [line["qa_id"] for line in lines] == ["conv-t:0", "conv-t:1", "conv-t:2"]
    for line in lines:
        assert set(line) == {"qa_id", "items", "latency_ms"}
        assert line["latency_ms"] >= 0
        for item in line["items"]:
            assert set(item) == {"text", "dia_ids", "sessions"}
    top = lines[1]["items"][0]
    assert top == {
        "text": "Nice! Biscuit graduated from obedience school yesterday.",
        "dia_ids": ["D2:2"],
        "sessions": [2],
    }


@pytest.mark.parametrize("mode", ["walk", "search"])
def test_eval_locomo_read_path_modes(tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str) -> None:
    data = write_fixture(tmp_path)
    out = tmp_path / "results.jsonl"
    result = _run(capsys, ["eval", "locomo", str(data), "--json", "--out", str(out), "--mode", mode])
    assert result["mode"] == mode
    assert result["embeddings"] is not None and result["embeddings"].startswith("static:")
    assert result["n_questions"] == 3
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # with embeddings every leaf is a candidate: each question gets all 6 turns (the new vault's
    # own notes are `vaultmind: readme` notes, which hold no leaves)
    assert all(len(line["items"]) == 6 for line in lines)
    turns = [i for line in lines for i in line["items"] if i["dia_ids"]]
    assert all(len(i["dia_ids"]) == 1 and i["sessions"] == [int(i["dia_ids"][0][1])] for i in turns)


def test_eval_locomo_default_qa_file_next_to_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_fixture(tmp_path)
    flat = {
        "sample_id": "conv-t",
        "qa_index": 1,
        "question": SAMPLE["qa"][1]["question"],
        "evidence": ["D1:3"],
    }
    (tmp_path / "qa_flat_dev.jsonl").write_text(json.dumps(flat) + "\n", encoding="utf-8")
    result = _run(
        capsys, ["eval", "locomo", str(data), "--json", "--mode", "bm25-baseline", "--embeddings", "none"]
    )
    # gold moved to D1:3 (the photo turn): its session is found (by D1:1 / D1:2), the turn is not
    temporal = result["per_category"]["2"]
    assert (temporal["S@5"], temporal["T-R@5"], temporal["T-B1k"]) == (1.0, 0.0, 0.0)
    assert temporal["S-MRR"] < 1.0


def test_eval_locomo_human_output_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_fixture(tmp_path, [SAMPLE, {**copy.deepcopy(SAMPLE), "sample_id": "conv-u"}])
    assert (
        main(
            [
                "eval",
                "locomo",
                str(data),
                "--mode",
                "bm25-baseline",
                "--embeddings",
                "none",
                "--limit-samples",
                "1",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "mode bm25-baseline, 3 questions from 1 conversation" in out
    assert "overall" in out and "T-B1k" in out
    assert main(["eval", "locomo", str(tmp_path / "missing.json"), "--json"]) == 1
    assert "no such file" in json.loads(capsys.readouterr().out)["error"]["message"]
    assert main(["eval", "locomo", str(data), "--qa", str(tmp_path / "nope.jsonl")]) == 1  # as a missing FILE
    assert "no such QA file" in capsys.readouterr().err
    empty = write_fixture(tmp_path, [])
    assert main(["eval", "locomo", str(empty), "--json"]) == 1  # not a report of zeros
    assert "holds no samples" in json.loads(capsys.readouterr().out)["error"]["message"]


def test_eval_locomo_refuses_an_unknown_embedder_before_any_conversation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The flag is checked before the first conversation is ingested, and the hint names the
    flag's values, not a setting of the temporary vault (as `bench run` says it)."""
    data = write_fixture(tmp_path)
    assert main(["eval", "locomo", str(data), "--embeddings", "bogus"]) == 2
    err = capsys.readouterr().err
    assert "--embeddings: unknown embeddings provider 'bogus'\nvaultmind: hint: use one of:" in err
    assert "[embeddings]" not in err and "conv-t" not in err


def test_eval_locomo_names_the_flag_when_the_environment_names_the_same_unknown_provider(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`$VAULTMIND_EMBED_PROVIDER` set to the unknown name the flag gives: the error was the
    environment's ("set $VAULTMIND_EMBED_PROVIDER to one of"), not the flag's."""
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "bogus")
    data = write_fixture(tmp_path)
    assert main(["eval", "locomo", str(data), "--embeddings", "bogus"]) == 2
    err = capsys.readouterr().err
    assert "--embeddings: unknown embeddings provider 'bogus'\nvaultmind: hint: use one of:" in err
    assert "VAULTMIND_EMBED_PROVIDER" not in err


def test_eval_locomo_with_ollama_not_running_says_where_it_was_looked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing answers at the host the environment names: the run stops before any
    conversation, and the hint names the variable to set (the temporary vaults' settings file
    is nothing a person can edit)."""
    from tests.fakes import free_port

    host = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("VAULTMIND_OLLAMA_HOST", host)
    data = write_fixture(tmp_path)
    assert main(["eval", "locomo", str(data), "--embeddings", "ollama"]) == 2
    err = capsys.readouterr().err
    assert f"--embeddings ollama: cannot connect to Ollama at {host}" in err
    assert f"VAULTMIND_OLLAMA_HOST to where it runs (now {host})" in err
    assert "config.toml" not in err and "conv-t" not in err


def test_eval_locomo_with_ollama_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the fake Ollama at the variable's host the run embeds through it, and tells on
    stderr that a conversation is being indexed before its questions (stdout: the JSON alone)."""
    from tests.fakes import FakeOllama

    with FakeOllama(embed_models={"nomic-embed-text": 8}) as fake:
        monkeypatch.setenv("VAULTMIND_OLLAMA_HOST", fake.host)
        data = write_fixture(tmp_path)
        assert main(["eval", "locomo", str(data), "--embeddings", "ollama", "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["embeddings"] == "ollama:nomic-embed-text"
    assert out.err.index("vaultmind eval: conv-t (1/1): indexing 2 sessions") < out.err.index("asking 3 questions")


def test_the_bm25_baseline_takes_its_top_among_messages(tmp_path: Path) -> None:
    """Plain BM25 over message leaves: the top `limit` is taken among messages (before, among
    every leaf of the source notes, then the sections dropped: fewer than `limit`, or none)."""
    from tests.conftest import write_chat
    from vaultmind.config import load_config
    from vaultmind.eval.locomo import _retrieve_bm25
    from vaultmind.ingest.document import parse_document_paths_with_report
    from vaultmind.ingest.writer import write_documents
    from vaultmind.memory import Memory
    from vaultmind.vault.template import init_vault

    vault = tmp_path / "vault"
    init_vault(vault)
    write_chat(vault, "2024-03-04", [("@ann", "the zebra crossing"), ("@bob", "a zebra at the zoo"), ("@ann", "lunch")])
    docs = tmp_path / "docs"
    docs.mkdir()
    for k in range(3):
        (docs / f"z{k}.md").write_text(f"# Zebras {k}\n\nzebra zebra zebra zebra notes {k}\n", encoding="utf-8")
    write_documents(vault, parse_document_paths_with_report([docs])[0])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        kinds = dict(memory.index.query("SELECT kind, count(*) FROM leaves GROUP BY kind"))
        assert kinds["section"] >= 3 and kinds["message"] == 3
        ranked = _retrieve_bm25(memory, "zebra", 2, reference_time(SAMPLE, path=tmp_path))
        assert sorted(hit["text"] for hit in ranked) == ["a zebra at the zoo", "the zebra crossing"]


def test_eval_locomo_ner_runs_it_before_the_questions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A conversation of more turns than `[entities] ner_inline` leaves NER to a daemon's
    background work, which a fresh vault never gets to: `--ner` runs it (and writes the entity
    notes) before the questions, and the figures say how many texts it read."""
    if not NerEngine().available:
        pytest.skip(NerEngine().status()["message"])
    turns = [
        {"speaker": "Alice" if i % 2 == 0 else "Bob", "dia_id": f"D1:{i + 1}", "text": f"Day {i + 1}: I walked Biscuit through Paris with Dana Whitfield."}
        for i in range(70)
    ]
    sample = {**copy.deepcopy(SAMPLE), "conversation": {"speaker_a": "Alice", "speaker_b": "Bob", "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": turns}}
    sample["qa"] = [{"question": "Where did Alice walk Biscuit?", "answer": "Paris", "evidence": ["D1:1"], "category": 4}]
    data = write_fixture(tmp_path, [sample])
    argv = ["eval", "locomo", str(data), "--json", "--mode", "walk", "--embeddings", "none"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["ner_texts"] is None
    assert main([*argv, "--ner"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["ner_texts"] == 70
    assert main([a for a in argv if a != "--json"] + ["--ner"]) == 0
    assert "NER first (70 texts)" in capsys.readouterr().out
