"""A source asked for with a kind it is not of says so, rather than answering nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.errors import UsageError
from vaultmind.memory import Memory

from .conftest import write_slack_day


def test_a_source_asked_with_a_contradicting_kind_is_a_usage_error(vault: Path) -> None:
    write_slack_day(vault, "2024-03-07", [("Alice Chen", "10:00", "Hall booked."), ("Bob Stone", "10:05", "Great.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert memory.query("query_source", {"source_id": "slack:acme/general", "kind": "chat"})["total"] == 2
        with pytest.raises(UsageError, match="slack:acme/general is of kind chat, not email") as caught:
            memory.query("query_source", {"source_id": "slack:acme/general", "kind": "email"})
        assert "drop --kind" in str(caught.value.hint)
        window = {"source_id": "slack:acme/general", "kind": "chat", "since": "2025-01-01T00:00:00"}
        assert memory.query("query_source", window)["total"] == 0  # of its kind, nothing then: empty
