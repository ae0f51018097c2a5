CREATE INDEX notes_path ON notes (path);
CREATE INDEX leaves_id ON leaves (id);
CREATE INDEX leaves_note ON leaves (note_path);
CREATE INDEX postings_term ON postings (term);
CREATE INDEX embeddings_key ON embeddings (content_hash, model);
