-- rebuild: no
-- `term_df` (each term's document frequency, kept beside the postings) has no reader left:
-- search counts document frequencies in memory (`index/resident.py`), and the SQL BM25 counts
-- them from the postings rows it scans anyway. Its upkeep cost every sync an UPDATE and an
-- INSERT, and a cold index a tenth of its main process's time. No derived row changes: the
-- index is not rebuilt for this migration.
DROP INDEX IF EXISTS term_df_term;
DROP TABLE IF EXISTS term_df;
