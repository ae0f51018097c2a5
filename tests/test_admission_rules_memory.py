"""The gray band decided at once, by the rules, on a large vault: what it holds in memory."""

from __future__ import annotations

import tracemalloc

from vaultmind.admission.decide import Policy, decide
from vaultmind.admission.importance import decide_by_rules
from vaultmind.memory import Memory

from .test_admission import leaf

GRAY = 3000


def test_deciding_the_gray_band_by_rules_reads_no_breakdown(memory: Memory) -> None:
    """A daemon that starts with no Ollama decides every gray leaf by the rules at once (at 50k
    notes 44k rows). Each row's breakdown was read and parsed for it, though the decision passes
    it on unchanged and nothing writes it back: its Python objects lifted the daemon's memory
    by ~275 MB for seconds, its start-up's peak. Here 3,000 gray rows with a real breakdown:
    deciding them allocates well under what parsing their breakdowns alone would, and each row
    keeps its breakdown as it was."""
    policy = Policy.from_extra({}, "m")
    breakdown = decide(leaf("Met Jürgen Groß on 2024-03-08 about the Q3 plan; 12 items, see #Important"), policy)
    written = breakdown.signals_json()
    with memory.index.transaction() as con:
        con.execute(
            "INSERT INTO admission SELECT 'leaf' || i, 'n' || (i % 50) || '.md', 'h' || i, 'gray', 0.4 + (i % 3) / 10, "
            "'cheap says', 'cheap', ?, NULL, NULL FROM range(?) t(i)",
            [written, GRAY],
        )
    tracemalloc.start()
    try:
        with memory.index.transaction() as con:
            assert len(decide_by_rules(con, policy, "LLM not reachable")) == GRAY
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    parsed = GRAY * len(written) * 4  # far below what GRAY parsed breakdowns hold (dicts, keys, floats)
    assert peak < parsed, f"{peak:,} bytes allocated deciding {GRAY} rows (their breakdowns: {GRAY * len(written):,} bytes of JSON)"
    kept = memory.index.query("SELECT DISTINCT signals, decision FROM admission ORDER BY ALL")
    assert kept == [(written, "admitted"), (written, "dropped")], kept
