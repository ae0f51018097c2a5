"""What a pass over the trees did (`SealReport`), and how it tells its progress (`Progress`).

Every phase of a pass (`engine.seal_ready`, `flush`, `reseal_stale`, the refresh of summary
notes) returns one; `view.maintain` merges them into the report `flush` prints and the daemon's
route answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Progress = Callable[[str, int, int], None]  # (phase, done, total)


@dataclass(slots=True)
class SealReport:
    """What one call did: summaries written, seals aborted, notes kept, stale ones removed."""

    sealed: list[dict[str, Any]] = field(default_factory=list)
    aborted: list[dict[str, Any]] = field(default_factory=list)
    kept: list[dict[str, Any]] = field(default_factory=list)
    unsealed: list[dict[str, Any]] = field(default_factory=list)
    flushed: list[str] = field(default_factory=list)
    refreshed: list[dict[str, Any]] = field(default_factory=list)  # entity links or title rewritten
    waiting: list[dict[str, Any]] = field(default_factory=list)  # stale, under notes still being written
    # what the pass this one waited for did (a flush asked for while the daemon sealed): sealed, calls
    waited_for: dict[str, Any] | None = None
    llm_calls: int = 0
    fallbacks: int = 0
    seconds: float = 0.0

    def merge(self, other: SealReport) -> None:
        self.sealed += other.sealed
        self.aborted += other.aborted
        self.kept += other.kept
        self.unsealed += other.unsealed
        self.flushed += other.flushed
        self.refreshed += other.refreshed
        self.waiting += other.waiting
        self.llm_calls += other.llm_calls
        self.fallbacks += other.fallbacks
        self.seconds += other.seconds

    def to_dict(self) -> dict[str, Any]:
        return {
            "sealed": self.sealed,
            "aborted": self.aborted,
            "kept": self.kept,
            "unsealed": self.unsealed,
            "flushed": self.flushed,
            "refreshed": self.refreshed,
            "waiting": self.waiting,
            **({"waited_for": self.waited_for} if self.waited_for is not None else {}),
            "llm_calls": self.llm_calls,
            "fallbacks": self.fallbacks,
            "seconds": round(self.seconds, 3),
        }
