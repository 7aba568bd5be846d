ALTER TABLE wallets DROP COLUMN allowlist_labels;
