ALTER TABLE watched_accounts DROP COLUMN explained_at;
