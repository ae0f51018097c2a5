-- rebuild: no
-- derived: talks
-- Who talks with whom (`entities/talks.py`): per note, the pairs of entities of which one
-- replies to the other or mails them, and how many of its messages do. The entity graph's
-- extractor version moves with it, so the next sync or NER run re-derives the entity rows
-- (from the stored leaves and cached NER results, in committed slices) and fills it.
CREATE TABLE IF NOT EXISTS talks (
    note_path VARCHAR NOT NULL,
    a VARCHAR NOT NULL,                 -- a < b
    b VARCHAR NOT NULL,
    weight INTEGER NOT NULL             -- the note's messages in which one talks to the other
);
CREATE INDEX IF NOT EXISTS talks_note ON talks (note_path);
