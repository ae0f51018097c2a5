"""The index schema as named, append-only migrations.

Each migration runs once and is recorded in `migrations`. Never edit or reorder a shipped
migration: append a new one. An index whose recorded migrations are not a prefix of this list
(written by another version) is rebuilt from the vault, never patched by hand.

Hot tables carry no PRIMARY KEY/UNIQUE constraints: DuckDB checks them eagerly, which breaks
delete-then-reinsert of the same key inside one transaction. Uniqueness is kept by sync.
"""

from __future__ import annotations

SCHEMA_VERSION = 1

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_foundation",
        """
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
        """,
    ),
    (
        "0002_lookup_indexes",
        """
        CREATE INDEX notes_path ON notes (path);
        CREATE INDEX leaves_id ON leaves (id);
        CREATE INDEX leaves_note ON leaves (note_path);
        CREATE INDEX postings_term ON postings (term);
        CREATE INDEX embeddings_key ON embeddings (content_hash, model);
        """,
    ),
)

DERIVED_TABLES = ("notes", "leaves", "postings", "links", "tags", "problems")
"""Tables rebuilt from the vault by `reindex`; `embeddings` is a cache and is kept."""
