-- rebuild: no
-- A Markdown link in a front matter value (`[C# tips › Setup](Notes/C%23%20tips.md#Setup)`: a
-- summary's child no wikilink can name) is a link of its note, its path decoded, as one in the
-- body: the summary is found again when that note changes. Only an index holding a summary
-- note whose front matter has such a link is rebuilt for it; any other keeps its rows (a note
-- of yours with one records it when it next changes).
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (
    SELECT 1 FROM notes WHERE starts_with(path, 'summaries/') AND regexp_matches(frontmatter, '\]\([^)\s]+\)')
)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
