"""Per-source summary trees: buffers, the two-phase seal, summarizers, flush and re-seal.

- `settings`     the `[trees]` settings, read once from the config
- `note`         the summary note: ids, paths, rendering and reading its children links
- `deriver`      fills the `summaries` table from summary notes (runs inside every sync)
- `buffers`      which leaves and summaries are waiting to be folded, derived from the index
- `summarize`    the `Summarizer` protocol, its registry and the output budget
- `fallback`     the deterministic extractive summarizer
- `llm`          the Ollama summarizer (prompt, checks, retry, fallback)
- `engine`       seal_ready / flush / reseal_stale: the public API
- `refresh`      refresh_summaries: entity links and titles kept up to date, no summarizer
- `refresh_work` what a refresh depends on (its gate) and the work a stopped one left (jobs)
- `unsealed`     a removed stale summary's title and properties, kept until it is sealed again (jobs)
- `view`         what `vaultmind tree` shows, and `maintain` (seal, re-seal, flush, refresh)
"""
