-- rebuild: no
-- DuckDB 1.5 keeps the ART nodes a write walks through in memory until a checkpoint, and a
-- checkpoint writes out every index of a changed table in full. Each save walks the indexes of
-- the leaves it deletes and inserts; at 50k notes (429k leaves) these three held 38 of the 67 MB
-- of index nodes that six saves left in a serving process (docs/benchmarks.md), and the NER
-- catch-up and every checkpoint paid for them too. What reads them is rare and off the save
-- path: the LLM stage's lookup of a gray leaf by hash (one per job, beside an LLM call),
-- `explain`, and semi-joins that scan anyway. No derived row changes: the index is not rebuilt.
DROP INDEX IF EXISTS admission_leaf;
DROP INDEX IF EXISTS admission_hash;
DROP INDEX IF EXISTS occurrences_leaf;
