"""The gray band decided at once, by the rules, on a large vault: what it holds in memory."""

from __future__ import annotations

import tracemalloc

from vaultmind.admission.decide import Policy, decide
from vaultmind.admission.importance import UNREACHABLE, decide_by_rules, policy_of, store_answer
from vaultmind.admission.reask import repair
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


PROVISIONAL_ROWS = 20_000


def test_a_reconcile_pass_reads_out_only_the_provisional_contents_with_an_answer(memory: Memory) -> None:
    """Each reconcile pass lets the provisional decisions (the rules' for want of an Ollama)
    whose content has an answer cached take it. At 50k notes with no Ollama, 44k provisional
    contents were each read into Python and looked up again, every pass, none with an answer:
    a moment's peak beside a daemon's saves and NER catch-up. Here 20,000 provisional rows,
    three with an answer: only those three are read out (allocations well under the
    contents' own strings), and exactly they take their answers."""
    model = policy_of(memory.config).llm_model
    with memory.index.transaction() as con:
        con.execute(
            "INSERT INTO admission SELECT 'leaf' || i, 'n' || (i % 50) || '.md', sha256(i::VARCHAR), 'admitted', 0.5, "
            "? || ' at here: admission by rules', 'fallback', '{}', NULL, NULL FROM range(?) t(i)",
            [UNREACHABLE, PROVISIONAL_ROWS],
        )
        answered = [str(r[0]) for r in con.execute("SELECT sha256(i::VARCHAR) FROM range(3) t(i)").fetchall()]
        for content_hash in answered:
            store_answer(con, content_hash, model, {"importance": 0.05, "reason": "small talk"}, 1)
    tracemalloc.start()
    try:
        with memory.index.transaction() as con:
            changed = repair(con, memory.config)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    contents = PROVISIONAL_ROWS * 64  # the provisional contents' hashes alone, as bytes
    assert peak < contents / 2, f"{peak:,} bytes allocated repairing {PROVISIONAL_ROWS} provisional rows, 3 answered"
    assert changed == 3
    taken = memory.index.query("SELECT content_hash, decision, stage FROM admission WHERE stage <> 'fallback' ORDER BY 1")
    assert taken == [(h, "dropped", "llm") for h in sorted(answered)], taken
