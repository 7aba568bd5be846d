ALTER TABLE wallets DROP COLUMN token_accounts_listed_at;

--bun:split

DROP TABLE watched_accounts;

--bun:split

DROP TABLE deposits;
