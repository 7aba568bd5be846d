-- When a change of the account was first explained by the service's own
-- payments (their ledger rows written without reading them) since its
-- history was last read: its cursor (last_signature) lags, and a history
-- read is due within the watcher's AuditEvery. NULL: the cursor is
-- current.
ALTER TABLE watched_accounts ADD COLUMN explained_at timestamptz;
