-- rebuild: no
-- Token counts come closer to real tokenizers' on ALL-CAPS words (a capital after one, to a
-- word's 6th letter, is half a token after a space) and on Cyrillic (a Cyrillic character
-- after one is half a token), and no longer fall under them on Greek, Armenian, Hebrew or
-- Arabic (1.25 tokens a character, not one): such leaves count differently, and a note of them
-- is cut anew (their ids follow their text). An index holding any leaf is rebuilt once; an
-- empty one has nothing to recount.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (SELECT 1 FROM leaves)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
