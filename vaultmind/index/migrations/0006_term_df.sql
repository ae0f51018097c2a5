-- derived: term_df
-- Document frequency of each search term: the number of `postings` rows holding it, moved by
-- every sync with the postings (`index/lexical.py`). It replaces the index on postings(term),
-- whose upkeep was most of a cold index's write time and memory; a term's df is read here.
DROP INDEX postings_term;
CREATE TABLE term_df (
    term VARCHAR NOT NULL,
    df INTEGER NOT NULL                 -- postings rows (leaves) holding the term
);
CREATE INDEX term_df_term ON term_df (term);
