-- rebuild: no
-- A note of yours whose body is empty but whose front matter holds properties (a book, a
-- person, a row of a base) has one leaf of its title and its properties' values, so it can be
-- found. Only an index holding such a note (of yours, without leaves, with front matter, not a
-- readme) is rebuilt for it.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (
    SELECT 1 FROM notes
    WHERE kind = 'user' AND leaf_count = 0 AND frontmatter IS NOT NULL AND frontmatter NOT IN ('', '{}')
      AND coalesce(json_extract_string(frontmatter, '$.vaultmind'), '') <> 'readme'
)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
