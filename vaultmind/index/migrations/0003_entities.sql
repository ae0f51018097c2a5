-- derived: entities, occurrences, edges
-- Entities (from entity notes and extracted from leaves), their occurrences in leaves, and the
-- co-occurrence graph. Maintained by `vaultmind.entities.graph.EntityDeriver`.
CREATE TABLE entities (
    id VARCHAR NOT NULL,                -- canonical id: person:alice-chen, email:…, org:…, topic:…
    kind VARCHAR NOT NULL,
    display_name VARCHAR NOT NULL,
    note_path VARCHAR,                  -- its entity note, if any
    aliases VARCHAR[] NOT NULL,
    emails VARCHAR[] NOT NULL,
    handles VARCHAR[] NOT NULL,
    mentions INTEGER NOT NULL           -- distinct leaves mentioning it
);

CREATE TABLE occurrences (
    entity_id VARCHAR NOT NULL,
    leaf_id VARCHAR NOT NULL,
    note_path VARCHAR NOT NULL,
    surface VARCHAR NOT NULL,           -- the first surface form of the entity in the leaf
    ts TIMESTAMP                        -- the leaf's time (leaves.ts)
);

CREATE TABLE edges (
    a VARCHAR NOT NULL,                 -- a < b
    b VARCHAR NOT NULL,
    weight INTEGER NOT NULL             -- distinct leaves mentioning both
);

-- a cache, not derived: NER results by (content hash, model); survives reindex
CREATE TABLE ner_cache (
    content_hash VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    spans VARCHAR NOT NULL              -- JSON [[start, end, label], …]
);

CREATE INDEX occurrences_entity ON occurrences (entity_id);
CREATE INDEX occurrences_leaf ON occurrences (leaf_id);
CREATE INDEX edges_a ON edges (a);
CREATE INDEX edges_b ON edges (b);
CREATE INDEX entities_id ON entities (id);
CREATE INDEX ner_cache_key ON ner_cache (content_hash, model);
