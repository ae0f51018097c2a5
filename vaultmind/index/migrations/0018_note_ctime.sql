-- rebuild: no
-- Each note's inode change time beside its size and mtime: the stat shortcut of a sync compares
-- all three, so two notes of one size written in one clock tick (one mtime) that swap names are
-- read again (a rename sets the change time). Notes indexed before have none: the next sync
-- reads them once (their content hash unchanged, nothing is derived again) and keeps it.
ALTER TABLE notes ADD COLUMN IF NOT EXISTS ctime_ns BIGINT;
