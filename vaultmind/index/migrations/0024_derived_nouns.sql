-- rebuild: no
-- The noun of an act shares its verb's term (`index/lexical.py`, `DERIVED`): "what did we
-- decide…" meets "Decision: we move…", "when did they pay" meets "the payment". No table
-- changes; an index holding one of the nouns' old terms is rebuilt once for it, any other
-- keeps its rows.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (SELECT 1 FROM postings WHERE term IN (
    'admiss', 'advic', 'agreement', 'analys', 'analysi', 'belief', 'choic', 'closur',
    'competit', 'complaint', 'conclus', 'creation', 'death', 'decis', 'defens', 'deliveri',
    'departur', 'descript', 'destruct', 'discoveri', 'exclus', 'expans', 'explan', 'exposur',
    'extens', 'failur', 'flight', 'growth', 'guidanc', 'inclus', 'injuri', 'introduct',
    'judgment', 'loss', 'marriag', 'payment', 'permiss', 'proof', 'pursuit', 'recoveri',
    'reduct', 'registr', 'repetit', 'respons', 'solut', 'speech', 'submiss', 'subscript'
))
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
