-- rebuild: no
-- A `$$` that never closes and a `<!--` within a line are text (they had hidden the rest of
-- their note: its headings, tags, links and block ids); a link destination may hold balanced
-- parentheses (`[t](Note%20(1).md)`); indented code in a list item is code; front matter that
-- is no mapping (prose between two `---` rules) is read as body; text in a European 8-bit code
-- page (Windows-1251, KOI8-R …) is read in it, not with replacement characters. Only an index holding a leaf
-- whose text has `$$`, `<!--`, a `](` destination with a `(`, or a line indented six columns or
-- more after a blank line, a note whose front matter was no mapping, or a note read with
-- replacement characters (now perhaps read in its European 8-bit code page) is rebuilt for it;
-- any other keeps its rows.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE (
    EXISTS (
        SELECT 1 FROM leaves
        WHERE contains(text, '$$') OR contains(text, '<!-' || '-')  -- (a double dash opens an SQL comment)
           OR regexp_matches(text, '\]\([^)\s]*\(') OR regexp_matches(text, '\n[ \t]*\n( {6}|\t\t| {2,5}\t)')
    )
    OR EXISTS (SELECT 1 FROM notes WHERE contains(frontmatter_error, 'not a mapping of keys to values'))
    OR EXISTS (SELECT 1 FROM problems WHERE kind = 'not_utf8' AND starts_with(message, 'not valid UTF-8'))
)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
