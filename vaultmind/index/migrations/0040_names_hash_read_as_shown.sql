-- rebuild: no
-- A summary or an entity note vaultmind wrote is read as Obsidian shows it: without the
-- backslash a name's `#` got so that it opens no tag ("Dana Whitfield \#ops said: …" is read,
-- searched and quoted as "Dana Whitfield #ops said: …"), and an entity note's heading without
-- its markup escapes too ("# Ke$\$ha Rose"), as a summary's text already was. The notes holding
-- a leaf with one of those backslashes are read again by the next sync (their stored hash
-- forgotten, as a sync does for dated notes when the notes' zone changed): a handful of notes,
-- where a rebuild would cut and store every note again (minutes at 50k notes). The rest of the
-- index keeps its rows; a note of yours and a document are read as before.
UPDATE notes SET sha256 = '', ino = NULL
WHERE path IN (
    SELECT l.note_path FROM leaves l JOIN notes n ON n.path = l.note_path
    WHERE (json_extract_string(n.frontmatter, '$.vaultmind') = 'summary' AND regexp_matches(l.text, '(^|\s)\\#[^\s#]'))
       OR (json_extract_string(n.frontmatter, '$.vaultmind') = 'entity' AND regexp_matches(l.text, '\\[#%$<^]'))
);
