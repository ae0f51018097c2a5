-- derived: summaries
-- One row per summary note (`vaultmind: summary`), filled by vaultmind/tree/deriver.py from the
-- note's front matter and the current leaves: children resolved to node ids (leaf ids at L1,
-- summary ids above), all descendant leaf ids, and whether the summary is stale.
CREATE TABLE summaries (
    id VARCHAR NOT NULL,
    tree VARCHAR NOT NULL,
    level INTEGER NOT NULL,
    note_path VARCHAR NOT NULL,
    children VARCHAR[] NOT NULL,
    leaf_ids VARCHAR[] NOT NULL,
    time_start TIMESTAMP,
    time_end TIMESTAMP,
    entities VARCHAR[] NOT NULL,
    summarizer VARCHAR NOT NULL,
    user_edited BOOLEAN NOT NULL,
    stale BOOLEAN NOT NULL
);
CREATE INDEX summaries_id ON summaries (id);
CREATE INDEX summaries_tree ON summaries (tree, level);
CREATE INDEX summaries_path ON summaries (note_path);
