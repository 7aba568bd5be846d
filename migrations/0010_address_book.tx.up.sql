-- The allowlist as an address book: an optional label per allowed address,
-- for the humans who read approvals and edit policies.
ALTER TABLE wallets ADD COLUMN allowlist_labels jsonb NOT NULL DEFAULT '{}';
