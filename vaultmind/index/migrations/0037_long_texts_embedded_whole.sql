-- rebuild: no
-- A text longer than its model reads (the static model's 512 tokens, e5's 2,000 characters: a
-- long email is one leaf) was embedded from its start alone; it is now the mean of its
-- windows' vectors. The vectors stored for such texts are dropped, and the next sync embeds
-- them again; every other vector is kept (a text that fits is embedded as before). Texts are
-- picked by their counted tokens, with a margin, or their length (a text dropped that did fit
-- only gets its same vector again). Ollama's models are not concerned: their server reads a
-- text up to its own context, as before.
DELETE FROM embeddings
WHERE (model LIKE 'static:%' OR model LIKE 'e5-small:%')
  AND content_hash IN (SELECT content_hash FROM leaves WHERE token_count > 384 OR length(text) > 2000);
