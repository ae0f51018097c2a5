-- rebuild: no
-- An email thread's subject is searched with its first message (the subject's words are added to
-- that leaf's postings, its text is unchanged), so "the quarterly review email" finds it. Only an
-- index that holds email source notes is rebuilt for it; any other keeps its rows.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (SELECT 1 FROM notes WHERE kind = 'source' AND source_kind = 'email')
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
