-- rebuild: no
-- DuckDB 1.5 looks rows up through an ART index of one column only: every lookup of
-- (content_hash, model) or (tree, level) scans the table whether these indexes exist or not
-- (measured: a point lookup on an indexed column took 0.8 ms instead of 38; on an indexed
-- pair of columns, 45 ms either way). They were only kept up to date, on every insert (the
-- NER catch-up writes `ner_cache` for every leaf text) and written out by every checkpoint.
-- `embeddings_key` stays, for now, for what it does without being read: DuckDB does not merge
-- the row groups of a table with an index, and merging those of `embeddings` (1 KB rows)
-- during a cold reindex at 50k notes raised its peak by ~100 MB (docs/benchmarks.md).
-- No derived row changes: the index is not rebuilt for this migration.
DROP INDEX IF EXISTS ner_cache_key;
DROP INDEX IF EXISTS llm_cache_key;
DROP INDEX IF EXISTS summaries_tree;
