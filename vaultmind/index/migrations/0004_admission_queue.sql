-- derived: admission
-- Admission decisions (one row per leaf of a source or user note), the LLM answer cache and
-- the durable work queue. `admission` is rebuilt by reindex; `llm_cache` and `jobs` survive it
-- (the cache only saves time; jobs are re-derivable by reconcile from index state).

CREATE TABLE admission (
    leaf_id VARCHAR NOT NULL,
    note_path VARCHAR NOT NULL,
    content_hash VARCHAR NOT NULL,
    decision VARCHAR NOT NULL,          -- admitted | dropped | gray
    score DOUBLE NOT NULL,              -- cheap score in [0, 1]
    reason VARCHAR NOT NULL,
    stage VARCHAR NOT NULL,             -- user | cheap | llm | fallback
    signals VARCHAR NOT NULL,           -- JSON breakdown, sorted keys
    llm_importance DOUBLE,              -- the LLM's 0-1 importance, when it decided
    llm_model VARCHAR                   -- "ollama:<model>", when the LLM was asked
);
CREATE INDEX admission_leaf ON admission (leaf_id);
CREATE INDEX admission_hash ON admission (content_hash);

-- content-addressed LLM answers: survive reindex; a prompt or model change asks again
CREATE TABLE llm_cache (
    task VARCHAR NOT NULL,              -- importance | …
    content_hash VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    prompt_hash VARCHAR NOT NULL,
    answer VARCHAR NOT NULL,            -- JSON
    created_ms BIGINT NOT NULL
);
CREATE INDEX llm_cache_key ON llm_cache (content_hash, model, prompt_hash);

CREATE SEQUENCE jobs_id_seq START 1;
CREATE TABLE jobs (
    id BIGINT NOT NULL,
    kind VARCHAR NOT NULL,
    dedupe_key VARCHAR NOT NULL,
    payload VARCHAR NOT NULL,           -- JSON
    status VARCHAR NOT NULL,            -- ready | running | done | failed | cancelled
    attempts INTEGER NOT NULL,
    max_attempts INTEGER NOT NULL,
    defers INTEGER NOT NULL,            -- deferrals since the last attempt (backoff exponent)
    available_at BIGINT NOT NULL,       -- epoch ms: not claimed before
    lease_until BIGINT,                 -- epoch ms: a running job's lease
    lease_token VARCHAR,                -- settles only with this token
    last_error VARCHAR,
    failure_class VARCHAR,              -- lock_busy | transient_io | disk_full | corrupt_index | read_only_vault | llm_unreachable | transient | unrecoverable
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);
CREATE INDEX jobs_dedupe ON jobs (dedupe_key);
