-- rebuild: no
-- A section leaf's id hashes its note's key and its text with an occurrence number among the
-- leaves of the same text in its note, no longer its position (docs/vault-format.md), so an
-- edit elsewhere in a note keeps its other leaves' ids. The ids an index holds are renamed in
-- place, in every table that names a leaf: nothing is read from the vault again, nothing is
-- embedded or summarized again (summary notes link leaves by note and anchor and check their
-- text's hash, never their id). Only an index holding a section leaf whose id is neither the
-- one this renaming expects nor its new one (its note's key is not what the index recorded),
-- or one id that would take two names (two copies of a note that differ), is rebuilt for it.
-- The renamed leaves are deleted and inserted again rather than updated, with the index on
-- their id dropped meanwhile and created again as 0015 declares it: DuckDB's UPDATE of their
-- id was most of the time this took (docs/benchmarks.md); an index a crashed load left
-- suspended is created here as at any open. The postings' UPDATE is kept: no
-- rewrite of them measured faster.
CREATE TEMP TABLE _section_ids AS
SELECT l.id,
       substr(sha256('section' || chr(0) || k.key || chr(0) || l.seq::VARCHAR || chr(0) || l.text), 1, 32) AS by_position,
       substr(sha256('section' || chr(0) || k.key || chr(0)
                     || (row_number() OVER (PARTITION BY l.note_path, l.text ORDER BY l.seq) - 1)::VARCHAR
                     || chr(0) || l.text), 1, 32) AS by_text
FROM leaves l
JOIN (SELECT path, coalesce(nullif(CASE WHEN kind = 'source' THEN trim(source_id) END, ''), path) AS key FROM notes) k
  ON k.path = l.note_path
WHERE l.kind = 'section';

CREATE TEMP TABLE _section_renames AS
SELECT id AS old, min(by_text) AS new FROM _section_ids WHERE id = by_position AND id <> by_text
GROUP BY id HAVING count(DISTINCT by_text) = 1;

INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE (
    EXISTS (SELECT 1 FROM _section_ids WHERE id <> by_position AND id <> by_text)
    OR EXISTS (SELECT 1 FROM _section_ids WHERE id = by_position AND id <> by_text GROUP BY id HAVING count(DISTINCT by_text) > 1)
)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');

CREATE TEMP TABLE _renamed_leaves AS
SELECT l.* REPLACE (r.new AS id) FROM leaves l JOIN _section_renames r ON l.id = r.old ORDER BY l.rowid;
DROP INDEX IF EXISTS leaves_id;
DELETE FROM leaves WHERE id IN (SELECT old FROM _section_renames);
INSERT INTO leaves SELECT * FROM _renamed_leaves;
CREATE INDEX IF NOT EXISTS leaves_id ON leaves (id);
UPDATE postings SET leaf_id = r.new FROM _section_renames r WHERE postings.leaf_id = r.old;
UPDATE occurrences SET leaf_id = r.new FROM _section_renames r WHERE occurrences.leaf_id = r.old;
UPDATE admission SET leaf_id = r.new FROM _section_renames r WHERE admission.leaf_id = r.old;
CREATE TEMP TABLE _summary_lists AS
SELECT u.note_path, u.list,
       list(coalesce(r.new, u.id) ORDER BY u.i) AS ids, count(r.new) AS renamed
FROM (
    SELECT note_path, 'children' AS list, unnest(children) AS id, generate_subscripts(children, 1) AS i FROM summaries
    UNION ALL
    SELECT note_path, 'leaf_ids', unnest(leaf_ids), generate_subscripts(leaf_ids, 1) FROM summaries
) u
LEFT JOIN _section_renames r ON r.old = u.id
GROUP BY u.note_path, u.list;

UPDATE summaries SET children = c.ids FROM _summary_lists c
WHERE c.note_path = summaries.note_path AND c.list = 'children' AND c.renamed > 0;
UPDATE summaries SET leaf_ids = c.ids FROM _summary_lists c
WHERE c.note_path = summaries.note_path AND c.list = 'leaf_ids' AND c.renamed > 0;

DROP TABLE _summary_lists;
DROP TABLE _renamed_leaves;
DROP TABLE _section_renames;
DROP TABLE _section_ids;
