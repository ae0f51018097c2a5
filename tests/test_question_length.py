"""A question's length has one limit, named in the error whichever way it is asked (API, MCP,
command line), and a long one costs time in proportion to its words."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultmind.client import find_daemon
from vaultmind.config import load_config
from vaultmind.errors import UsageError
from vaultmind.mcp_server import McpServer
from vaultmind.memory import Memory
from vaultmind.retrieval.dispatch import MAX_QUESTION_CHARS
from vaultmind.retrieval.spelling import joined_words

from .conftest import run_main, write

_LONG = ("where did we buy the kayak " * 200)[: MAX_QUESTION_CHARS + 1]
_SAID = f"'query' is {MAX_QUESTION_CHARS + 1:,} characters; a question is at most {MAX_QUESTION_CHARS:,}"


def _vault(vault: Path) -> None:
    write(vault, ".vaultmind/config.toml", '[embeddings]\nprovider = "none"\n[entities]\nner_model = "off"\n')
    write(vault, "boat.md", "# Boat\n\nWe bought the red kayak from Harbor Sports on 3 May.\n")


def test_a_question_over_the_limit_is_refused_naming_it_on_every_surface(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _vault(vault)
    for mode in ("walk", "search"):
        code, _, err = run_main(capsys, "query", mode, _LONG, "--vault", str(vault))
        assert code == 2 and _SAID in err, err
    code, _, err = run_main(capsys, "query", "walk", _LONG[:MAX_QUESTION_CHARS], "--vault", str(vault))
    assert code == 0, err  # at the limit: answered
    config = load_config(vault)
    with Memory.open(config) as memory:
        server = McpServer(memory.query)
        call = {"name": "memory_tree", "arguments": {"mode": "search_entities", "query": _LONG}}
        answer = server.answer({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
        assert answer is not None and answer["result"]["isError"] is True
        assert _SAID in answer["result"]["content"][0]["text"]
    from .conftest import running_daemon

    with running_daemon(load_config(vault, debounce_ms=50, step_ms=20)):
        client = find_daemon(config)
        assert client is not None
        with pytest.raises(UsageError, match=_SAID):  # the API's 400
            client.call("POST", "/v1/query", {"mode": "walk", "args": {"query": _LONG}})


class _Searched(list[str]):
    """The searched terms, counting how often they are read whole."""

    reads = 0

    def __iter__(self) -> Iterator[str]:
        _Searched.reads += 1
        return super().__iter__()


def test_the_joined_words_of_a_long_question_read_its_terms_once(vault: Path) -> None:
    """Each neighbouring pair once built a set of all the question's terms: quadratic (a
    20,000-word question took 24 s)."""
    _vault(vault)
    with Memory.open(load_config(vault)) as memory:
        memory.sync()
        names = [f"kayak{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(50)]
        question = " ".join(f"red {names[i % 50]}" for i in range(2000))
        searched = _Searched(["red", *names])
        _Searched.reads = 0
        joined_words(memory.leaves, question, searched)
        assert _Searched.reads <= 1
        assert joined_words(memory.leaves, "the red kayak", ["red", "kayak"]) == {}  # (no leaf writes "redkayak")
        assert json.dumps(joined_words(memory.leaves, "the kay ak", ["kay", "ak"])) == '{"kay": ["kayak"], "ak": ["kayak"]}'
