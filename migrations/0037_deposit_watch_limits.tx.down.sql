ALTER TABLE deposits DROP COLUMN below_minimum;

--bun:split

ALTER TABLE accounts DROP COLUMN deposit_min_usd, DROP COLUMN deposit_min_eur, DROP COLUMN deposit_min_sol;

--bun:split

ALTER TABLE wallets DROP COLUMN deposit_failures, DROP COLUMN deposit_retry_at,
    DROP COLUMN token_accounts_failures, DROP COLUMN token_accounts_retry_at;

--bun:split

ALTER TABLE watched_accounts DROP COLUMN role;
