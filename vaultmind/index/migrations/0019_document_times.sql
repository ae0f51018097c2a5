-- rebuild: no
-- A document source note's leaves take its `time_end` (else `time_start`) as their time, so a
-- time window and `query source --since/--until` find documents too. Only an index that holds
-- document source notes is rebuilt for it (their leaves had no time); any other keeps its rows.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (SELECT 1 FROM notes WHERE kind = 'source' AND source_kind = 'document')
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
