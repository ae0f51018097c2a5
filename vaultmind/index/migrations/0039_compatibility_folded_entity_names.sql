-- rebuild: no
-- An entity found only in leaves is shown by its most frequent form in its compatibility form
-- (NFKC): "Ａｌｉｃｅ Ｃｈｅｎ" typed in full width counts as "Alice Chen" and is shown so. An
-- index holding such an entity shown in a compatibility form (full-width or half-width forms,
-- ligatures, enclosed or super- and subscript letters and digits, squared words) is rebuilt
-- once; any other keeps its rows.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (
    SELECT 1 FROM entities
    WHERE note_path IS NULL
      AND regexp_matches(display_name, '[\x{FF00}-\x{FFEF}\x{FB00}-\x{FB06}\x{2460}-\x{24FF}\x{2070}-\x{209F}\x{00B2}\x{00B3}\x{00B9}\x{3300}-\x{33FF}]')
)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
