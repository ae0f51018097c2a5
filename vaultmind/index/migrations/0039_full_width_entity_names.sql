-- rebuild: no
-- An entity found only in leaves is shown by its most frequent form with full-width and
-- half-width characters as their plain ones: "Ａｌｉｃｅ Ｃｈｅｎ" typed in full width counts as
-- "Alice Chen" and is shown so. An index holding such an entity shown in full-width or
-- half-width forms (U+FF00-U+FFEF) is rebuilt once; any other keeps its rows.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (
    SELECT 1 FROM entities
    WHERE note_path IS NULL AND regexp_matches(display_name, '[\x{FF00}-\x{FFEF}]')
)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
