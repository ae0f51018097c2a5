-- Each note gets a number when its rows are written (`note_no`, one more than the largest in
-- the index), and its postings rows carry it. Postings are deleted by note number: rows are
-- stored in the order they were written, so DuckDB skips every row group outside the numbers'
-- range. Deleting by leaf id scanned all ~15M rows at 50k notes (leaf ids are hashes: a row
-- group's min and max span them all), ~100 ms and ~60 MB of blocks read on every save.
-- A note number is a place in the file, not an identity: rebuilding renumbers the notes.
-- The existing rows have none: applying this migration rebuilds the derived rows.
ALTER TABLE notes ADD COLUMN IF NOT EXISTS note_no BIGINT;
ALTER TABLE postings ADD COLUMN IF NOT EXISTS note_no BIGINT;
