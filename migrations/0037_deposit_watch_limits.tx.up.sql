-- What a watched account is to its wallet: the wallet's address (SOL),
-- its associated token account, a token account listed as the wallet's
-- (made by anyone: a stranger can make any number), or one the wallet's
-- money was seen moving into (followed). NULL: not known yet (rows from
-- before this migration); the watcher fills it in.
ALTER TABLE watched_accounts ADD COLUMN role text CHECK (role IN ('address', 'associated', 'listed', 'followed'));

--bun:split

UPDATE watched_accounts SET role = 'address' WHERE asset = 'sol';

--bun:split

-- A wallet whose reads failed is left alone until deposit_retry_at, one
-- whose token accounts could not be listed is listed again at
-- token_accounts_retry_at, each waiting longer after each failure in a
-- row; the other wallets go on.
ALTER TABLE wallets ADD COLUMN deposit_failures integer NOT NULL DEFAULT 0,
    ADD COLUMN deposit_retry_at timestamptz,
    ADD COLUMN token_accounts_failures integer NOT NULL DEFAULT 0,
    ADD COLUMN token_accounts_retry_at timestamptz;

--bun:split

-- Deposits below these amounts (base units: micro-USD of a USD
-- stablecoin, micro-EUR of a EUR one, lamports) are recorded but not
-- announced one by one. NULL: the default.
ALTER TABLE accounts ADD COLUMN deposit_min_usd bigint CHECK (deposit_min_usd >= 0),
    ADD COLUMN deposit_min_eur bigint CHECK (deposit_min_eur >= 0),
    ADD COLUMN deposit_min_sol bigint CHECK (deposit_min_sol >= 0);

--bun:split

ALTER TABLE deposits ADD COLUMN below_minimum boolean NOT NULL DEFAULT false;
