-- The key that created a wallet (NULL: a person in the dashboard, or a
-- wallet older than this column that no key's audit entry claims), so the
-- wallets agent keys created are counted against their own cap.
ALTER TABLE wallets ADD COLUMN created_by uuid REFERENCES api_keys (id);

--bun:split

UPDATE wallets AS w SET created_by = k.id
FROM audit_log AS a JOIN api_keys AS k ON a.actor = 'key_' || k.id::text
WHERE a.account_id = w.account_id AND a.action = 'wallet.created' AND a.target = 'wallet:' || w.id::text;

--bun:split

-- Counts an account's wallets by creator.
CREATE INDEX wallets_created_by ON wallets (account_id, created_by) WHERE created_by IS NOT NULL;
