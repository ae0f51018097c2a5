-- rebuild: no
-- Search terms fold compatibility forms (NFKC): full-width Latin ("ｂｕｄｇｅｔ", as an East
-- Asian keyboard types it) is the ASCII word, a ligature ("ﬁle") its letters, a superscript
-- or circled digit the digit. A leaf holding any non-ASCII character may have other terms: an
-- index holding one is rebuilt once; an ASCII-only one keeps its rows.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (SELECT 1 FROM leaves WHERE regexp_matches(text, '[^\x00-\x7f]'))
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
