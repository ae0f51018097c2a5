-- rebuild: no
-- The postings' texts name their compression, as 0015 did for leaves: FSST for terms,
-- a dictionary for leaf ids (one id repeats over its leaf's postings). These are what DuckDB
-- chose for them anyway, but unnamed it tried every method on each row group it wrote, and
-- the postings are most of the rows a load writes: at 10k notes (3.1M postings) inserting them
-- took about a quarter less CPU named than unnamed, for an index of the same size
-- (docs/benchmarks.md). The table is created again and its rows copied as they are: nothing
-- is derived again.
ALTER TABLE postings RENAME TO postings_0028;
CREATE TABLE postings (
    term VARCHAR USING COMPRESSION fsst NOT NULL,
    leaf_id VARCHAR USING COMPRESSION dictionary NOT NULL,
    tf INTEGER NOT NULL,
    note_no BIGINT
);
INSERT INTO postings SELECT term, leaf_id, tf, note_no FROM postings_0028;
DROP TABLE postings_0028;
