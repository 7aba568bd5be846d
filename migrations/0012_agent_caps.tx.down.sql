ALTER TABLE wallets DROP COLUMN created_by;
