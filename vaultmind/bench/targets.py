"""The performance targets and the vault size each is stated for: a figure is checked against
its bound only at that size (`check_targets`), elsewhere it is "n/a". A memory peak at 1,000
notes, or a walk over 7,000 leaves, says nothing of the target at 50,000 notes or 100,000
leaves, and a ✓ there read as the target met."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

NA = "n/a"
"""A target's check at a size it is not stated for (in the JSON's `pass` and the table); with
the reason after it, "n/a (no /proc/PID/smaps_rollup on this system)", when its figure cannot be
measured here (a benchmark's `not_measured`: figure → why)."""

WALK_LEAVES = 99_000
"""The walk target's "100k leaves", within 1 %: the generator cuts a vault by whole notes (the
14,300-note one into 99,941 leaves)."""

Applies = Callable[[int, dict[str, Any]], bool | None]
"""applies(notes, the benchmark's results): whether the target is stated for this size; None
when the figure that says so is missing (the benchmark failed)."""


def any_size(notes: int, results: dict[str, Any]) -> bool | None:
    return True


def notes_at_least(least: int) -> Applies:
    return lambda notes, results: notes >= least


def notes_in(*sizes: int) -> Applies:
    return lambda notes, results: notes in sizes


def figure_at_least(figure: str, least: int) -> Applies:
    """The benchmark's own count (`leaves`, `entities`) is at least `least`."""

    def applies(notes: int, results: dict[str, Any]) -> bool | None:
        value = results.get(figure)
        return value >= least if isinstance(value, int | float) else None

    return applies


@dataclass(frozen=True, slots=True)
class Target:
    op: str  # ">=" or "<="
    bound: float
    stated_for: str  # the size, in words ("" for any)
    applies: Applies = any_size

    def met(self, value: float) -> bool:
        return value >= self.bound if self.op == ">=" else value <= self.bound


TARGETS: dict[str, Target] = {
    "rescan.files_per_s": Target(">=", 10_000, ""),
    "cold.notes_per_s": Target(">=", 500, ""),
    "cold.ratio_to_baseline": Target("<=", 10, ""),
    "save.p95_s": Target("<=", 1.0, "1k and 50k notes", notes_in(1_000, 50_000)),
    "rss.reindex_tree_pss_peak_mb": Target("<=", 500, "50k notes", notes_at_least(50_000)),
    "rss.daemon_tree_pss_peak_mb": Target("<=", 500, "50k notes", notes_at_least(50_000)),
    "walk.p50_s": Target("<=", 0.020, "100k leaves", figure_at_least("leaves", WALK_LEAVES)),
    "walk.p95_s": Target("<=", 0.050, "100k leaves", figure_at_least("leaves", WALK_LEAVES)),
    "entities.p95_s": Target("<=", 0.010, "50k entities", figure_at_least("entities", 50_000)),
}
"""metric (`<benchmark>.<figure>`) → its target."""


def check_targets(results: dict[str, dict[str, Any]], notes: int) -> dict[str, bool | str]:
    """metric → met (True / False), or `NA` at a size the target is not stated for, for the
    targets whose benchmark is in one size's `results` (`notes` notes). A benchmark that did not
    finish misses its targets wherever they may apply."""
    out: dict[str, bool | str] = {}
    for key, target in TARGETS.items():
        bench, metric = key.split(".", 1)
        if bench not in results:
            continue
        result = results[bench]
        why = (result.get("not_measured") or {}).get(metric)
        if why and not isinstance(result.get(metric), int | float):
            out[key] = f"{NA} ({why})"
            continue
        applies = target.applies(notes, result)
        if applies is False:
            out[key] = NA
            continue
        value = result.get(metric)
        if isinstance(value, int | float) and applies:
            out[key] = target.met(value)
        elif "error" in result or (bench == "rss" and "daemon_error" in result):
            out[key] = False  # the benchmark did not finish
    return out


def missed(checks: dict[str, dict[str, bool | str]]) -> bool:
    """Whether a target was missed at some size (`NA`, with its reason or not, is not a miss)."""
    return any(ok is False for by_size in checks.values() for ok in by_size.values())


def describe(key: str) -> dict[str, Any]:
    """A target as the JSON report gives it."""
    target = TARGETS[key]
    return {"op": target.op, "bound": target.bound, "stated_for": target.stated_for or "any size"}
