-- rebuild: no
-- A section under a heading whose text an earlier heading of its note already has ("Notes"
-- under "Day 1" and under "Day 2") is anchored by the chain Obsidian resolves to it
-- ("#Day 2#Notes"); it used to be anchored by its own text, which opens the first of them. Only
-- an index holding a note with two sections whose headings end alike (letters and digits,
-- any case: "Notes" and "notes:" link alike) is rebuilt for it.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (
    SELECT 1 FROM leaves WHERE len(heading_path) > 0
    GROUP BY note_path, lower(regexp_replace(heading_path[-1], '[^[:alnum:]]+', '', 'g'))
    HAVING count(DISTINCT heading_path) > 1
)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
