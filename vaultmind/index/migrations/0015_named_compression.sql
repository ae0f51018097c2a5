-- rebuild: no
-- Columns of distinct values name their compression: FSST for texts, ids and hashes, none for
-- vectors, which is what DuckDB chose for them anyway. Unnamed, DuckDB tried every method on
-- each row group it wrote (122,880 rows) before choosing, and its dictionary attempt copied the
-- row group's distinct values: at 50k notes a whole-vault load peaked ~60 MB higher, and the
-- vectors' load ~70 MB (docs/benchmarks.md). A column's compression is fixed when its table is
-- created, so the three tables are created again and their rows copied as they are: nothing
-- is derived again, no vector is computed again.
DROP INDEX IF EXISTS leaves_id;
DROP INDEX IF EXISTS leaves_note;
ALTER TABLE leaves RENAME TO leaves_0014;
CREATE TABLE leaves (
    id VARCHAR USING COMPRESSION fsst NOT NULL,
    note_path VARCHAR NOT NULL,
    seq INTEGER NOT NULL,
    kind VARCHAR NOT NULL,              -- message | section
    text VARCHAR USING COMPRESSION fsst NOT NULL,
    content_hash VARCHAR USING COMPRESSION fsst NOT NULL,
    token_count INTEGER NOT NULL,
    term_count INTEGER NOT NULL,        -- BM25 document length
    anchor VARCHAR NOT NULL,
    heading_path VARCHAR[] NOT NULL,
    message_id VARCHAR,
    author VARCHAR,
    ts TIMESTAMP,                       -- UTC
    source_ref VARCHAR
);
INSERT INTO leaves SELECT * FROM leaves_0014;
DROP TABLE leaves_0014;
CREATE INDEX IF NOT EXISTS leaves_id ON leaves (id);
CREATE INDEX IF NOT EXISTS leaves_note ON leaves (note_path);

DROP INDEX IF EXISTS admission_leaf;
DROP INDEX IF EXISTS admission_hash;
ALTER TABLE admission RENAME TO admission_0014;
CREATE TABLE admission (
    leaf_id VARCHAR USING COMPRESSION fsst NOT NULL,
    note_path VARCHAR NOT NULL,
    content_hash VARCHAR USING COMPRESSION fsst NOT NULL,
    decision VARCHAR NOT NULL,          -- admitted | dropped | gray
    score DOUBLE NOT NULL,              -- cheap score in [0, 1]
    reason VARCHAR NOT NULL,
    stage VARCHAR NOT NULL,             -- user | cheap | llm | fallback
    signals VARCHAR USING COMPRESSION fsst NOT NULL,  -- JSON breakdown, sorted keys
    llm_importance DOUBLE,              -- the LLM's 0-1 importance, when it decided
    llm_model VARCHAR                   -- "ollama:<model>", when the LLM was asked
);
INSERT INTO admission SELECT * FROM admission_0014;
DROP TABLE admission_0014;
CREATE INDEX IF NOT EXISTS admission_leaf ON admission (leaf_id);
CREATE INDEX IF NOT EXISTS admission_hash ON admission (content_hash);

DROP INDEX IF EXISTS embeddings_key;
ALTER TABLE embeddings RENAME TO embeddings_0014;
CREATE TABLE embeddings (
    content_hash VARCHAR USING COMPRESSION fsst NOT NULL,
    model VARCHAR NOT NULL,
    dim INTEGER NOT NULL,
    vec BLOB USING COMPRESSION uncompressed NOT NULL  -- float16 (float32 before 0013), unit length
);
INSERT INTO embeddings SELECT * FROM embeddings_0014;
DROP TABLE embeddings_0014;
CREATE INDEX IF NOT EXISTS embeddings_key ON embeddings (content_hash, model);
