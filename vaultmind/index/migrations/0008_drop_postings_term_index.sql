-- Search reads postings from memory (`index/resident.py`), so the ART index on postings.term
-- only cost memory and insert time: at 50k notes it covers ~15M rows. Dropped; a lookup by
-- term (the eval's BM25 baseline) scans the table instead.
DROP INDEX IF EXISTS postings_term;
