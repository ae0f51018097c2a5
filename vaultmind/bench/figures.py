"""The figures a benchmark reports: progress callbacks, spreads of repeated runs, latency
percentiles, megabytes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

Progress = Callable[[str, int, int], None]
"""progress(phase, done, total), the same shape as `sync.Progress`."""


MB = 1_000_000


def no_progress(phase: str, done: int, total: int) -> None:
    return None


def spread(values: Sequence[float]) -> dict[str, float]:
    """min / median / max of repeated runs."""
    arr = np.asarray(values, dtype=np.float64)
    return {
        "min": float(arr.min()),
        "median": float(np.median(arr)),
        "max": float(arr.max()),
        "runs": len(values),
    }


def latency(values: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / max (and min, mean) of latency samples, in seconds."""
    arr = np.asarray(values, dtype=np.float64)
    return {
        "p50_s": float(np.percentile(arr, 50)),
        "p95_s": float(np.percentile(arr, 95)),
        "max_s": float(arr.max()),
        "min_s": float(arr.min()),
        "mean_s": float(arr.mean()),
        "samples": len(values),
    }
