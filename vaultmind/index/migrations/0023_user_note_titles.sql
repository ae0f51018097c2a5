-- rebuild: no
-- A note of yours is found by its title (its file name, or its front matter `title`) even
-- when its text does not say it: the title's words are searched with its first leaf, unless
-- that leaf opens with the title as its heading. Only an index holding a note of yours whose
-- first leaf does not is rebuilt for it.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (
    SELECT 1 FROM notes n JOIN leaves l ON l.note_path = n.path AND l.seq = 0
    WHERE n.kind = 'user' AND (len(l.heading_path) = 0 OR l.heading_path[1] <> n.title)
)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
