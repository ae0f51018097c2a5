-- rebuild: no
-- An email's recipients (To, Cc: the `to` and `cc` of its meta line) are kept on its leaf, shown
-- with its hits and searched with it, so "what did Bob send to Megan?" finds the mail. An index
-- holding email source notes is rebuilt once for it; any other keeps its rows.
ALTER TABLE leaves ADD COLUMN IF NOT EXISTS mail_to VARCHAR[];
ALTER TABLE leaves ADD COLUMN IF NOT EXISTS mail_cc VARCHAR[];
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (SELECT 1 FROM notes WHERE kind = 'source' AND source_kind = 'email')
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
