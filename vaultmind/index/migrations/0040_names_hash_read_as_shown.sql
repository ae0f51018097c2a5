-- rebuild: no
-- A note vaultmind wrote escaped (a summary, an entity note, a document) is read without the
-- backslash a name's `#` got so that it opens no tag: "Dana Whitfield \#ops said: …" is read,
-- searched and quoted as "Dana Whitfield #ops said: …", as Obsidian shows it. Only an index
-- holding a leaf of such a note with a backslash before a `#` that starts a word is rebuilt
-- for it; any other keeps its rows.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (
    SELECT 1 FROM leaves l JOIN notes n ON n.path = l.note_path
    WHERE regexp_matches(l.text, '(^|\s)\\#[^\s#]')
      AND (starts_with(n.path, 'summaries/') OR n.kind = 'entity'
           OR (n.kind = 'source' AND json_extract_string(n.frontmatter, '$.kind') = 'document'))
)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
