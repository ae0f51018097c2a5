-- rebuild: no
-- What a leaf read a name as, when its kind is settled across the vault (`entities/kinds.py`):
-- "TestFlight" read as a work here and as an organization in most leaves is `org:testflight`
-- everywhere. The entity rows are derived again because the extractor version changed.
ALTER TABLE occurrences ADD COLUMN IF NOT EXISTS read_as VARCHAR;
