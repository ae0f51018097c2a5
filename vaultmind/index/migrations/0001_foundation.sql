-- derived: notes, leaves, postings, links, tags, problems
CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);

CREATE TABLE notes (
    path VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,              -- source | summary | entity | user
    title VARCHAR NOT NULL,
    size BIGINT NOT NULL,
    mtime_ns BIGINT NOT NULL,
    sha256 VARCHAR NOT NULL,            -- of the file's bytes
    source_id VARCHAR,
    source_kind VARCHAR,                -- chat | email | document (source notes)
    frontmatter VARCHAR NOT NULL,       -- JSON, sorted keys
    frontmatter_error VARCHAR,
    aliases VARCHAR[] NOT NULL,
    leaf_count INTEGER NOT NULL
);

CREATE TABLE leaves (
    id VARCHAR NOT NULL,
    note_path VARCHAR NOT NULL,
    seq INTEGER NOT NULL,
    kind VARCHAR NOT NULL,              -- message | section
    text VARCHAR NOT NULL,
    content_hash VARCHAR NOT NULL,
    token_count INTEGER NOT NULL,
    term_count INTEGER NOT NULL,        -- BM25 document length
    anchor VARCHAR NOT NULL,
    heading_path VARCHAR[] NOT NULL,
    message_id VARCHAR,
    author VARCHAR,
    ts TIMESTAMP,                       -- UTC
    source_ref VARCHAR
);

CREATE TABLE postings (term VARCHAR NOT NULL, leaf_id VARCHAR NOT NULL, tf INTEGER NOT NULL);

CREATE TABLE links (
    src_path VARCHAR NOT NULL,
    target VARCHAR NOT NULL,            -- as written, without .md
    kind VARCHAR NOT NULL,              -- wikilink | embed | markdown
    heading VARCHAR,
    block VARCHAR,
    alias VARCHAR,
    line INTEGER NOT NULL
);

CREATE TABLE tags (path VARCHAR NOT NULL, tag VARCHAR NOT NULL);

CREATE TABLE problems (path VARCHAR NOT NULL, kind VARCHAR NOT NULL, message VARCHAR NOT NULL);

-- content-addressed cache: survives reindex; a rename or move never re-embeds
CREATE TABLE embeddings (
    content_hash VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL                   -- float32 little-endian, unit length
);
