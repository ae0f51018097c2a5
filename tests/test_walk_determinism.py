"""walk's answer depends on the index and the question alone: the same in two processes whatever
their hash seed, tied scores in the same order; and what a caller does with a hit it was given
changes no later answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval import signals

from .conftest import write, write_chat

REPO = Path(__file__).resolve().parents[1]
QUESTIONS = [
    "where is the harbour key?",
    "what did Dana say about the harbour key?",
    "who has the boathouse key?",
    "what happened on 7 March?",
]
ASK = """
import json, sys
from vaultmind.config import load_config
from vaultmind.memory import Memory
with Memory.open(load_config(sys.argv[1], embed_provider="none")) as memory:
    out = []
    for question in json.loads(sys.argv[2]):
        for mode in ("walk", "search"):
            args = {"query": question, "limit": 20}
            if mode == "walk":
                args["reference_time"] = "2024-03-12T10:00:00Z"
            found = memory.query(mode, args)
            out.append([[h["node_id"], h["score"], h["breakdown"]] for h in found["hits"]] + [found["total"]])
print(json.dumps(out, sort_keys=True))
"""


def _tied_vault(vault: Path) -> None:
    """Notes and messages that match the questions equally: the same words, one unmatched word
    apart, in as many words."""
    for colour in ("blue", "green", "red", "white", "black"):
        write(vault, f"notes/{colour}.md", f"# Keys\n\nThe harbour key is under the {colour} pot.\n")
    write_chat(
        vault,
        "2024-03-07",
        [("Dana Reyes", "The boathouse key is with Bob."), ("Bob Stone", "The boathouse key is with Eve."), ("Eve Park", "The boathouse key is with Ann.")],
    )


@pytest.mark.slow
def test_walk_and_search_answer_alike_in_processes_of_different_hash_seeds(vault: Path) -> None:
    _tied_vault(vault)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
    answers = []
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", ASK, str(vault), json.dumps(QUESTIONS)],
            cwd=REPO, env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True, timeout=300, check=True,
        )  # fmt: skip
        answers.append(json.loads(done.stdout))
    assert answers[0] == answers[1]
    walked = answers[0][0][:-1]  # "where is the harbour key?", walk
    scores = [score for _, score, _ in walked]
    assert len(walked) >= 5 and len(set(scores)) < len(scores), "the fixture ties scores"


def test_a_callers_edit_of_a_hits_breakdown_changes_no_later_ranking(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each hit's `breakdown.weights` was the module's own weights: a caller that edited it
    (a library user trying a weight) changed every walk after."""
    monkeypatch.setitem(signals.WEIGHTS, "lex", signals.WEIGHTS["lex"])  # put back after, whatever happens
    _tied_vault(vault)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        first = memory.walk("where is the harbour key?")
        weights = first["hits"][0]["breakdown"]["weights"]
        assert weights == signals.WEIGHTS
        weights["lex"] = 0.0
        assert signals.WEIGHTS["lex"] > 0
        again = memory.walk("where is the harbour key?")["hits"]
        assert [(h["node_id"], h["score"]) for h in again] == [(h["node_id"], h["score"]) for h in first["hits"]]
