-- rebuild: no
-- Token counts no longer under-count digits (a token each in tokenizers that split them),
-- hashes, base64 and UUIDs, capitals inside a word, CJK and emoji: every leaf's count changes,
-- and a note with many of them is cut into other leaves (their ids follow their text). An
-- index holding any leaf is rebuilt once; an empty one has nothing to recount.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (SELECT 1 FROM leaves)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
