-- rebuild: no
-- Each note's inode beside its size and times: renaming a folder sets neither time of the
-- files in it, so notes of one size written in one clock tick in two folders that swap names
-- kept each other's rows; the stat shortcut of a sync compares the inode too. Notes indexed
-- before have none: the next sync reads them once (their content hash unchanged, nothing is
-- derived again) and keeps it.
ALTER TABLE notes ADD COLUMN IF NOT EXISTS ino BIGINT;
