-- rebuild: no
-- A summary or an entity note vaultmind wrote is read as Obsidian shows it: without the
-- backslash a name's `#` got so that it opens no tag ("Dana Whitfield \#ops said: …" is read,
-- searched and quoted as "Dana Whitfield #ops said: …"), and an entity note's heading without
-- its markup escapes too ("# Ke$\$ha Rose"), as a summary's text already was. Only an index
-- holding a leaf of such a note with one of those backslashes is rebuilt for it; any other
-- keeps its rows (a note of yours and a document are read as before).
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (
    SELECT 1 FROM leaves l JOIN notes n ON n.path = l.note_path
    WHERE (json_extract_string(n.frontmatter, '$.vaultmind') = 'summary' AND regexp_matches(l.text, '(^|\s)\\#[^\s#]'))
       OR (json_extract_string(n.frontmatter, '$.vaultmind') = 'entity' AND regexp_matches(l.text, '\\[#%$<^]'))
)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
