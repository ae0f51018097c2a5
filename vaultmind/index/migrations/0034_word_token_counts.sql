-- rebuild: no
-- Token counts come close to real tokenizers' on ordinary words (a space before a word is
-- free, a word's first six letters are about one token; English counted about twice what
-- they give): every leaf's count changes, and a note of prose is cut into about half as many
-- leaves (their ids follow their text). "goes" is now the term "go" (it was "goe", meeting
-- nothing). An index holding any leaf is rebuilt once; an empty one has nothing to recount.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (SELECT 1 FROM leaves)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
