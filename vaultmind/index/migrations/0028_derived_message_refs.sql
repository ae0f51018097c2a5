-- rebuild: no
-- Every message cites its original: one whose meta line names no `ref` (WhatsApp, Signal, an
-- email without a Message-ID, a generic chat export without one) gets the `source_ref` its
-- note's `source_id` and its id give (`chat://<platform>/<conversation>/<id>`,
-- `email://<account>/<id>`), derived when it is indexed; no note is rewritten for it. Only an
-- index holding such a message (a message leaf of a chat or email source note, without a
-- `source_ref`) is rebuilt for it.
INSERT INTO meta
SELECT 'needs_rebuild', '1'
WHERE EXISTS (
    SELECT 1 FROM leaves l JOIN notes n ON n.path = l.note_path
    WHERE l.kind = 'message' AND l.source_ref IS NULL
      AND n.kind = 'source' AND n.source_kind IN ('chat', 'email') AND contains(coalesce(n.source_id, ''), ':')
)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'needs_rebuild');
