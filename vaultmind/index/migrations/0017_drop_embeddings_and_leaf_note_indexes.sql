-- rebuild: no
-- Two lookup indexes whose upkeep cost a serving process more than they saved it.
-- `embeddings_key` over (content_hash, model) served no lookup (DuckDB 1.5 looks rows up through
-- an index of one column only); it was kept because DuckDB does not merge the row groups of a
-- table with an index, which once raised a cold reindex's peak. With float16 vectors written in
-- a pass of their own that no longer shows: at 50k notes a cold reindex peaked at 461 / 458 MB
-- without it, 462 / 468 MB with an index on the hash, and took 186 / 169 s instead of 214 / 178.
-- `leaves_note` served no lookup either: every read by note path is a join, which scans that
-- column (~2 MB at 50k notes, as a lookup through the index costs).
-- Both were walked by every save and written out by every checkpoint: at 50k notes, after 30
-- saves, the index nodes held until a checkpoint 57 -> 36 MB and that checkpoint's own peak
-- +89 -> +64 MB (docs/benchmarks.md). No derived row changes: nothing is rebuilt.
DROP INDEX IF EXISTS embeddings_key;
DROP INDEX IF EXISTS leaves_note;
