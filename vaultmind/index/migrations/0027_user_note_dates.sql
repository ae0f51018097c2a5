-- rebuild: no
-- A note of yours with a date (front matter `date` or `created`, else a full date in its file
-- name: a daily note `2024-03-07.md`) gives its leaves that time, so a time window finds it.
-- Only an index holding a note of yours with leaves and such a property or file name is
-- rebuilt for it (its leaves had no time); any other keeps its rows.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (
    SELECT 1 FROM notes
    WHERE kind = 'user' AND leaf_count > 0 AND (
        coalesce(json_extract_string(frontmatter, '$.date'), json_extract_string(frontmatter, '$.created'), '') <> ''
        OR regexp_matches(regexp_extract(path, '[^/]*$'), '(^|[^0-9])[0-9]{4}-?[0-9]{2}-?[0-9]{2}([^0-9]|$)')
    )
)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
